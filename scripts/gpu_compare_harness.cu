// Example harness for scripts/gpu_compare.py, for the kernels of fixtures/cuda/ptx_smoke.cu:
//   scripts/gpu_compare.py fixtures/cuda/ptx_smoke.cu OPT.cu scripts/gpu_compare_harness.cu
// The script defines KERNEL_FILE as the quoted path of the original or the optimized file.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include KERNEL_FILE

#ifndef N
#define N (1 << 20)  // elements; a multiple of BLOCK (256, from the kernel file)
#endif
#define REPS 20

#define CHECK(call)                                                              \
  do {                                                                           \
    cudaError_t e_ = (call);                                                     \
    if (e_ != cudaSuccess) {                                                     \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

int main() {
  // Deterministic inputs: a formula, identical in both builds.
  std::vector<int> a(N), b(N), c(N);
  for (int i = 0; i < N; i++) {
    a[i] = (i * 7) % 1000;
    b[i] = (i * 13) % 997;
  }
  int *da, *db, *dc, *dtotal;
  CHECK(cudaMalloc(&da, N * sizeof(int)));
  CHECK(cudaMalloc(&db, N * sizeof(int)));
  CHECK(cudaMalloc(&dc, N * sizeof(int)));
  CHECK(cudaMalloc(&dtotal, sizeof(int)));
  CHECK(cudaMemcpy(da, a.data(), N * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), N * sizeof(int), cudaMemcpyHostToDevice));

  // Warm-up (module load, clocks), then the timed launches.
  vector_add<<<N / BLOCK, BLOCK>>>(da, db, dc);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  for (int r = 0; r < REPS; r++) {
    vector_add<<<N / BLOCK, BLOCK>>>(da, db, dc);
    CHECK(cudaMemset(dtotal, 0, sizeof(int)));
    block_sum<<<N / BLOCK, BLOCK>>>(dc, dtotal);
  }
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  CHECK(cudaGetLastError());
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  printf("alpine-time-ms: %f\n", ms / REPS);

  // The outputs: every element of c (checks the vector add) and the sum.
  int total = 0;
  CHECK(cudaMemcpy(c.data(), dc, N * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&total, dtotal, sizeof(int), cudaMemcpyDeviceToHost));
  printf("%d\n", total);
  for (int i = 0; i < N; i++) printf("%d\n", c[i]);
  return 0;
}
