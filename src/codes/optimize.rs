//! Codes of this area: see [`super`].

use super::{Code, ExitClass};
use crate::diag::Severity;

pub static CODES: &[Code] = &[
    // ---- unroll (and the loop analysis shared with merge) ----
    Code {
        code: "A101",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot infer the iteration variable of the loop",
        explanation: r#"
Unrolling and merging need the loop's iteration variable. An annotation names it; with `--opt`
and no `--var` (or a batch step without `var`) it is inferred as the unique variable of the guard
that has exactly one update in the loop. Here `i` and `j` both qualify:

```pvl
void f(int n) {
  int i = 0;
  int j = n;
  while (i < j) { i = i + 1; j = j - 1; }
}
```

    alpine-rs apply --opt unroll --at line:4 --factor 1 f.pvl

Name the variable with `--var`; the help line lists the candidates.
"#,
        reserved: false,
    },
    Code {
        code: "A102",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "the named iteration variable is never updated in the loop",
        explanation: r#"
The variable named by the annotation (or `--var`) has no assignment in the loop body or in the
`for` update, so the loop does not advance it and the copies cannot be predicted from it. Often
a typo:

```pvl
requires n >= 2;
void f(int n) {
  int i = 0;
  gpuopt loop_unroll k 1;
  loop_invariant 0 <= i && i <= n;
  while (i < n) { i = i + 1; }
}
```

Name the variable that the loop actually advances (here `i`).
"#,
        reserved: false,
    },
    Code {
        code: "A103",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "unsupported update of the iteration variable",
        explanation: r#"
Peeling and merging compute the value of `i` after j updates, so the update must be `i = i + c`,
`c + i`, `i - c`, `i * c`, `c * i`, `i / c`, `i++`, `i--` or `i op= c`, or any `i = e` where
`e - i` simplifies to a term without `i`; `c` must not be assigned in the loop.

```pvl
requires n >= 2;
void f(int n) {
  int i = 0;
  gpuopt loop_unroll i 1;
  loop_invariant 0 <= i && i <= n;
  while (i < n) { i = 2 * i + 1; }
}
```

Rewrite the update in one of these forms, or do not optimize this loop.
"#,
        reserved: false,
    },
    Code {
        code: "A104",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "the iteration variable has several updates, or a conditional one",
        explanation: r#"
Exactly one assignment to the iteration variable may occur in the loop, unconditionally: a
top-level statement of the body, or the `for` header's update. Otherwise the value after j
iterations is not determined by the step. Every update is labelled.

```pvl
requires n >= 2;
void f(int n, boolean fast) {
  int i = 0;
  gpuopt loop_unroll i 1;
  loop_invariant 0 <= i && i <= n + 1;
  while (i < n) { if (fast) { i = i + 2; } else { i = i + 1; } }
}
```

Advance the variable by one unconditional statement per iteration.
"#,
        reserved: false,
    },
    Code {
        code: "A105",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "the step is not loop-invariant, or not provably at least 1 (2 for `*`, `/`)",
        explanation: r#"
The step `c` of the update must not be assigned in the loop, and Z3 must prove from the facts at
loop entry that it is at least 1 for `+` and `-`, at least 2 for `*` and `/`; otherwise the loop
need not progress. A counterexample is shown when there is one.

```pvl
requires n >= 2;
void f(int n, int s) {
  int i = 0;
  gpuopt loop_unroll i 1;
  loop_invariant 0 <= i;
  while (i < n) { i = i + s; }
}
```

Add a fact about the step, e.g. `requires s >= 1;`, or use a step the loop does not assign.
"#,
        reserved: false,
    },
    Code {
        code: "A106",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "unsupported guard",
        explanation: r#"
The loop has no guard, its guard does not mention the iteration variable, or the guard reads a
variable or an array that the loop changes. The guard is evaluated at the predicted values of the
iteration variable, which is sound only if nothing else in it changes.

```pvl
void f(int n) {
  int i = 0;
  int m = n;
  gpuopt loop_unroll i 1;
  loop_invariant 0 <= i;
  while (i < m) { i = i + 1; m = m - 1; }
}
```

Make the iteration variable the only thing in the guard that the loop changes.
"#,
        reserved: false,
    },
    Code {
        code: "A107",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot unroll: the guard may be false within the first K iterations",
        explanation: r#"
Peeling K iterations is sound only if the loop runs at least K times in every state allowed by
the facts at loop entry (contract, code before the loop, the loop's invariants). Z3 could not
prove the guard for the first K values; the notes give a counterexample and the largest K proven.

```pvl
requires n >= 1;
void f(int n) {
  int i = 0;
  gpuopt loop_unroll i 2;
  loop_invariant 0 <= i && i <= n;
  while (i < n) { i = i + 1; }
}
```

Add a fact that guarantees K iterations (here `requires n >= 2;`), or lower the factor.
"#,
        reserved: false,
    },
    Code {
        code: "A108",
        severity: Severity::Warning,
        exit: ExitClass::None,
        title: "no bound invariant of the iteration variable to tighten",
        explanation: r#"
After peeling, the residual loop's bound conjuncts are tightened (`0 <= i` becomes `2 <= i`): a
lower bound `L <= i` for an increasing loop, an upper bound `i <= U` for a decreasing one. The
loop has no such conjunct, so its invariants stay as they are. The result is still correct.

```pvl
requires n >= 2;
void f(int n) {
  int i = 0;
  gpuopt loop_unroll i 1;
  while (i < n) { i = i + 1; }
}
```

Add a bound such as `loop_invariant 0 <= i && i <= n;` if the tighter invariant is wanted.
"#,
        reserved: false,
    },
    Code {
        code: "A109",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot unroll: the factor must be at least 1",
        explanation: r#"
Peeling 0 iterations would not change the loop, so the factor K of `loop_unroll` (or
`--factor`) must be at least 1. The value is checked before anything else, and the loop is left
untouched.

```pvl
requires n >= 2;
void f(int n) {
  int i = 0;
  gpuopt loop_unroll i 0;
  loop_invariant 0 <= i && i <= n;
  while (i < n) { i = i + 1; }
}
```

Use a factor of at least 1, or remove the annotation.
"#,
        reserved: false,
    },
    // ---- merge ----
    Code {
        code: "A201",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot merge: the factor must be at least 2",
        explanation: r#"
Merging by M runs M iterations per pass of the merged body; M = 0 or 1 would not change the
loop, so the factor of `iter_merge` (or `--factor`) must be at least 2. The loop is left untouched.

```pvl
requires n >= 2;
void f(int n) {
  int i = 0;
  gpuopt iter_merge i 1;
  loop_invariant 0 <= i && i <= n;
  while (i < n) { i = i + 1; }
}
```

Use a factor of at least 2, or remove the annotation.
"#,
        reserved: false,
    },
    Code {
        code: "A202",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "exact merging needs a constant trip count",
        explanation: r#"
`--mode exact` (a batch step's `mode: exact`) asks for the form without a remainder loop, which
needs a trip count fixed by the facts: Z3 must prove that the entry value, the step and every part
of the guard without the iteration variable are constants. The note says which is not fixed.

```pvl
void f(int n) {
  int i = 0;
  loop_invariant 0 <= i && i <= n;
  while (i < n) { i = i + 1; }
}
```

    alpine-rs apply --opt merge --at line:4 --factor 2 --mode exact f.pvl

Add facts that fix the bounds, or use `--mode remainder` (or `auto`, which falls back to it).
"#,
        reserved: false,
    },
    Code {
        code: "A203",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot merge: the loop runs fewer than M times",
        explanation: r#"
The facts fix the trip count I (in `exact` mode, or in `auto` mode when it finds the count
constant), and I is smaller than the factor M: the merged body would never run. The message
states I.

```pvl
void f() {
  int i = 0;
  gpuopt iter_merge i 4;
  loop_invariant 0 <= i && i <= 3;
  while (i < 3) { i = i + 1; }
}
```

Use a factor between 2 and I, or remove the annotation.
"#,
        reserved: false,
    },
    Code {
        code: "A204",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot merge: the trip count simulation exceeds its limit",
        explanation: r#"
With a constant trip count, merging simulates the loop to find it, up to 1 000 000 iterations.
A longer loop is refused in `exact` mode and in `auto` mode (which in-source annotations use).

```pvl
void f() {
  int i = 0;
  gpuopt iter_merge i 2;
  loop_invariant 0 <= i && i <= 2000000;
  while (i < 2000000) { i = i + 1; }
}
```

Use the remainder form, which works for any count: `alpine-rs apply --mode remainder f.pvl`
(a parameter flag without `--opt` applies to the file's own annotations).
"#,
        reserved: false,
    },
    Code {
        code: "A205",
        severity: Severity::Warning,
        exit: ExitClass::None,
        title: "the merged loop can never run",
        explanation: r#"
In the remainder form, the merged loop runs while M more iterations are due, then the original
loop does the rest. The quantifier-free facts at loop entry prove that M iterations are never
due, so only the remainder loop will run. The output is correct, but the merge gains nothing.

```pvl
requires 0 <= n && n <= 1;
void f(int n) {
  int i = 0;
  gpuopt iter_merge i 2;
  loop_invariant 0 <= i && i <= n;
  while (i < n) { i = i + 1; }
}
```

Check the factor against the loop's real trip count, or do not merge this loop.
"#,
        reserved: false,
    },
    Code {
        code: "A206",
        severity: Severity::Note,
        exit: ExitClass::None,
        title: "merged guard not simplified: every instance is tested",
        explanation: r#"
In the remainder form the merged loop's guard is the guard's last instance (`i + 1 < n` for
M = 2) when Z3 proves, with the facts at the loop head, that it implies the others. Here it does
not, so the guard is the conjunction of all M instances. The output is correct.

```pvl
requires n >= 0;
void f(int n) {
  int i = 0;
  gpuopt iter_merge i 2;
  loop_invariant 0 <= i;
  while (i < n && i != 7) { i = i + 1; }
}
```

Nothing to fix; a stronger invariant may allow the shorter guard.
"#,
        reserved: false,
    },
    // ---- prefetch ----
    Code {
        code: "A301",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot prefetch: not a one-dimensional array, or reassigned in the block",
        explanation: r#"
A register stands for one cell of one array, so the prefetched array must be a name (or
`this.f`) of type `T[]`: a parameter, field or local of the method. The `par` block must not
assign the array variable itself.

```pvl
context_everywhere m != null && m.length == n;
void f(int n, int[][] m) {
  gpuopt glob_to_reg m tid;
  par lanes (int tid = 0 .. n) { }
}
```

Prefetch a one-dimensional array; linearize a matrix first (a `matrix_lin` annotation of the
same file runs before prefetching).
"#,
        reserved: false,
    },
    Code {
        code: "A302",
        severity: Severity::Warning,
        exit: ExitClass::None,
        title: "prefetched location is never used",
        explanation: r#"
No access in the block matches the location, so nothing is generated for it. Matching is
semantic (Z3 proves the indices equal: `1 + tid` matches `tid + 1`), so the location is
probably not the one meant.

```pvl
context_everywhere a != null && a.length == n + 1 && b != null && b.length == n;
void f(int n, int[] a, int[] b) {
  gpuopt glob_to_reg a tid + 1;
  par lanes (int tid = 0 .. n)
    context Perm(a[tid], 1\2) ** Perm(b[tid], write);
  { b[tid] = a[tid] + a[tid]; }
}
```

Check the index expression of the location, or drop it.
"#,
        reserved: false,
    },
    Code {
        code: "A303",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot prefetch: no permission for the location in the segment precondition",
        explanation: r#"
The register is loaded at the start of each segment, so the segment's precondition (the `par`
contract, or the previous barrier's `ensures`) must give permission for the cell: `c ==> Perm(…)`
gives a guarded load; a `\forall*` counts only with an index `c * k + d` in its variable `k`.

```pvl
context_everywhere a != null && a.length == n + 1 && b != null && b.length == n;
void f(int n, int[] a, int[] b) {
  gpuopt glob_to_reg a tid + 1;
  par lanes (int tid = 0 .. n)
    context Perm(a[tid], 1\2) ** Perm(b[tid], write);
  { b[tid] = a[tid + 1] + a[tid + 1]; }
}
```

Add a (conditional) `Perm(a[tid + 1], …)` to the segment precondition.
"#,
        reserved: false,
    },
    Code {
        code: "A304",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot prefetch: the location depends on a variable assigned in the segment",
        explanation: r#"
One register stands for one cell for the whole segment, so the location's index must not use a
variable or array that the segment assigns (checked where the segment accesses the array).

```pvl
context_everywhere a != null && a.length == n && b != null && b.length == n;
void f(int n, int[] a, int[] b) {
  gpuopt glob_to_reg a j;
  par lanes (int tid = 0 .. n)
    context Perm(a[tid], 1\2) ** Perm(b[tid], write);
  { int j = tid; b[tid] = a[j] + a[j]; }
}
```

Prefetch a location whose index is fixed for the whole segment (here `tid`).
"#,
        reserved: false,
    },
    Code {
        code: "A305",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot prefetch: the permission may leave the thread within the segment",
        explanation: r#"
The register is loaded at the start of the segment and written back at its end, so the thread
must keep the cell's permission throughout. An `exhale`, a call, an `invariant` or an `atomic`
block in the segment that mentions the array might give it away.

```pvl
context_everywhere a != null && a.length == n;
void f(int n, int[] a) {
  gpuopt glob_to_reg a tid;
  par lanes (int tid = 0 .. n)
    requires Perm(a[tid], write);
  { a[tid] = a[tid] + 1; exhale Perm(a[tid], write); }
}
```

Move the statement out of the segment (e.g. behind a barrier), or do not prefetch this location.
"#,
        reserved: false,
    },
    Code {
        code: "A306",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot prefetch: barrier not at the top level of the par body",
        explanation: r#"
The body is split into segments at its top-level barriers, and each segment gets its own load
and write-back. A barrier nested in an `if` or a loop has no place in that split.

```pvl
context_everywhere a != null && a.length == n;
void f(int n, int[] a, boolean b) {
  gpuopt glob_to_reg a tid;
  par lanes (int tid = 0 .. n)
    context Perm(a[tid], write);
  { a[tid] = a[tid] + 1; if (b) { barrier(lanes) { context Perm(a[tid], write); } } }
}
```

Move the barrier to the top level of the `par` body, or do not prefetch in this block.
"#,
        reserved: false,
    },
    Code {
        code: "A307",
        severity: Severity::Warning,
        exit: ExitClass::None,
        title: "prefetched location is read only once",
        explanation: r#"
The location is read once and never written in the block, so a register saves no access to
global memory. It is prefetched anyway, and the output is equivalent.

```pvl
context_everywhere a != null && a.length == n && b != null && b.length == n;
void f(int n, int[] a, int[] b) {
  gpuopt glob_to_reg a tid;
  par lanes (int tid = 0 .. n)
    context Perm(a[tid], 1\2) ** Perm(b[tid], write);
  { b[tid] = a[tid]; }
}
```

Leave the location out of the request to keep the single direct read.
"#,
        reserved: false,
    },
    Code {
        code: "A308",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot prefetch: an access may alias the location, and one of them is written",
        explanation: r#"
An access whose index Z3 proves neither equal nor different from the location (or two requested
locations in one segment) may hit the same cell, and one of them is a write: the register would
go stale, or overwrite the other write. The note gives a model where the indices coincide.

```pvl
context_everywhere a != null && a.length == n;
void f(int n, int[] a, int j) {
  gpuopt glob_to_reg a tid;
  par lanes (int tid = 0 .. n)
    context (\forall* int k; 0 <= k && k < n; Perm(a[k], write));
  { a[tid] = a[tid] + a[j]; }
}
```

Make the index provably equal to or different from the location, or do not prefetch it.
"#,
        reserved: false,
    },
    Code {
        code: "A309",
        severity: Severity::Warning,
        exit: ExitClass::None,
        title: "the location's permission comes only from a quantified permission",
        explanation: r#"
The permission for the location was found only in a `\forall*`, so the load guard is the
quantifier's domain instantiated at the location. The prefetch is applied; the warning asks to
check that this is the permission meant.

```pvl
context_everywhere a != null && a.length == n && b != null && b.length == n;
void f(int n, int[] a, int[] b) {
  gpuopt glob_to_reg a tid;
  par lanes (int tid = 0 .. n)
    context (\forall* int k; 0 <= k && k < n; Perm(a[k], 1\2)) ** Perm(b[tid], write);
  { b[tid] = a[tid] * a[tid]; }
}
```

State `Perm(a[tid], …)` in the per-thread contract to make the register's permission explicit.
"#,
        reserved: false,
    },
    // ---- linearize ----
    Code {
        code: "A401",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot linearize: not a 2-D array parameter or local of the method",
        explanation: r#"
`matrix_lin g …` names a matrix of the annotated method: a parameter or local of type `T[][]`.
The name is not declared there, or its type is not two-dimensional. (For a matrix reached
through a call, the same problem is reported as A404.)

```pvl
gpuopt matrix_lin a R 2 4;
context_everywhere a != null && a.length == 8;
void f(int[] a) { }
```

Name a 2-D array parameter or local of the method.
"#,
        reserved: false,
    },
    Code {
        code: "A402",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot linearize: the extents do not match the program's facts",
        explanation: r#"
The index arithmetic uses the given extents E1 x E2, so Z3 must prove them at the method's entry:
`g.length == E1 * E2`, or `g.length == E1` with every row of length E2 (`\matrix(g, E1, E2)` or
row facts); for a local, `new T[x][y]` with `x == E1` and `y == E2`. The extents must not use
a variable the method assigns. The program's extent facts are labelled.

```pvl
gpuopt matrix_lin g R 4 8;
context_everywhere g != null && g.length == 16;
context Perm(g[0][0], write);
void f(int[][] g) { g[0][0] = 1; }
```

Give the extents the program uses (here 2 x 8), or add the fact the help line suggests.
"#,
        reserved: false,
    },
    Code {
        code: "A403",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot linearize: the matrix or a row is used as a value",
        explanation: r#"
After linearization the matrix is one array and has no rows, so it may only be used as
`g[r][c]`, `g.length`, `g[r].length`, in `\matrix(g, …)`, in row-level facts, compared with
`null`, or passed whole to a method of this file (which is then linearized too). Every other use
is labelled, as is a call to a method outside the file.

```pvl
gpuopt matrix_lin g R 2 8;
context_everywhere g != null && g.length == 16;
void f(int[][] g) { int[] row = g[0]; }
```

Access the matrix only through cells (`g[r][c]`) and lengths.
"#,
        reserved: false,
    },
    Code {
        code: "A404",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot linearize consistently across a call",
        explanation: r#"
A linearized matrix passed to or from another method of the file makes that method's matrix
linearized too, with the same layout and matching extents. The call is refused when it passes
something other than a 2-D parameter or local, a layout conflicts with another annotation, the
extents cannot be written in the other method's variables, or Z3 cannot prove them equal.

```pvl
gpuopt matrix_lin g R 2 8;
context_everywhere g != null && g.length == 16;
context Perm(g[0][0], write);
void f(int[][] g) { g[0][0] = 1; }
void host(int[][] p, int[][] q, boolean b) { f(b ? p : q); }
```

Pass a plain matrix variable, or give both methods matching `matrix_lin` annotations.
"#,
        reserved: false,
    },
    Code {
        code: "A405",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot linearize: the rows may alias",
        explanation: r#"
With rows of their own (`g.length == E1`), a matrix parameter whose rows may be the same array
would become separate ranges of cells after linearization, and writes through one row would no
longer show in the other. The rows must be provably distinct: a `\matrix` fact, a fact that the
rows differ, or write permission to every cell.

```pvl
gpuopt matrix_lin g R 2 4;
context_everywhere g != null && g.length == 2;
context_everywhere (\forall int r; 0 <= r && r < 2; g[r] != null && g[r].length == 4);
context (\forall* int r; 0 <= r && r < 2; Perm(g[r][0], 1\2));
void f(int[][] g) { int x = g[1][0]; }
```

Add `context_everywhere \matrix(g, 2, 4);` or one of the other facts.
"#,
        reserved: false,
    },
    Code {
        code: "A406",
        severity: Severity::Note,
        exit: ExitClass::None,
        title: "row-level facts removed",
        explanation: r#"
A linearized matrix has no rows, so conjuncts about rows (row permissions, row null tests, row
lengths, row distinctness, and their quantified or guarded forms) are deleted from the contracts
of every rewritten method. The note labels each removed conjunct.

```pvl
gpuopt matrix_lin g R 2 4;
context_everywhere g != null && g.length == 2;
context_everywhere (\forall int r; 0 <= r && r < 2; g[r] != null && g[r].length == 4);
context (\forall* int r; 0 <= r && r < 2; (\forall* int c; 0 <= c && c < 4; Perm(g[r][c], write)));
void f(int[][] g) { g[1][0] = 7; }
```

Nothing to fix; the cell-level facts carry over.
"#,
        reserved: false,
    },
    Code {
        code: "A407",
        severity: Severity::Note,
        exit: ExitClass::None,
        title: "other methods rewritten with the matrix",
        explanation: r#"
The requested matrix is passed to or from other methods of the file, so their matrices are
linearized in the same step with the same layout (the note names the method, its matrices and
the calls that brought them in). Calls keep their text.

```pvl
gpuopt matrix_lin g R 2 8;
context_everywhere g != null && g.length == 16;
context Perm(g[0][0], write);
void f(int[][] g) { g[0][0] = 1; }
context_everywhere h != null && h.length == 16;
context Perm(h[0][0], write);
void host(int[][] h) { f(h); }
```

Nothing to fix; check that the other methods are meant to change too.
"#,
        reserved: false,
    },
    // ---- tile ----
    Code {
        code: "A501",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot tile: not exactly one par block, or not a single-iterator par block",
        explanation: r#"
Tiling rewrites one `par` block with exactly one iterator, no `and` arms and no wait list. An
annotation before the method contract stands for the method's only `par` block, so the method
must contain exactly one.

```pvl
gpuopt tile inter 16;
context_everywhere a != null && a.length == n && n > 64;
context (\forall* int k; 0 <= k && k < n; Perm(a[k], write));
void f(int n, int[] a) {
  par one (int t = 0 .. n) context Perm(a[t], write); { a[t] = 0; }
  par two (int t = 0 .. n) context Perm(a[t], write); { a[t] = 1; }
}
```

Place `gpuopt tile …;` right before the intended `par` block.
"#,
        reserved: false,
    },
    Code {
        code: "A502",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot tile: the thread range does not provably start at 0",
        explanation: r#"
The tiled threads cover the cells `0 .. T` in tiles of N, so the iterator's lower bound must be
provably 0 under the facts at the `par` statement.

```pvl
context_everywhere a != null && a.length == n && n > 64;
context (\forall* int k; 0 <= k && k < n; Perm(a[k], write));
void f(int n, int[] a) {
  gpuopt tile inter 16;
  par lanes (int t = 1 .. n) context Perm(a[t], write); { a[t] = 0; }
}
```

Rewrite the block as `par (int t = 0 .. …)`, shifting the index in the body and contract.
"#,
        reserved: false,
    },
    Code {
        code: "A503",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot tile: `2 <= N < T` is not provable",
        explanation: r#"
A tile size N below 2 gives no tiling, and one of at least the thread count T gives one tile.
Z3 must prove `2 <= N` and `N < T` under the facts at the `par` statement; symbolic sizes and
counts are fine when the facts bound them. A counterexample is shown when there is one.

```pvl
context_everywhere a != null && a.length == n && n > 0;
context (\forall* int k; 0 <= k && k < n; Perm(a[k], write));
void f(int n, int[] a) {
  gpuopt tile inter 16;
  par lanes (int t = 0 .. n) context Perm(a[t], write); { a[t] = 0; }
}
```

Add a fact bounding the thread count (here `context_everywhere n > 16;`), or change the size.
"#,
        reserved: false,
    },
    Code {
        code: "A504",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot tile: barrier or `return` in the par body",
        explanation: r#"
Tiling runs the work of several threads one after another in a loop of one thread. A barrier
would then wait for threads that run later in the same loop, and a `return` would skip the
remaining cells, so the body must have neither.

```pvl
context_everywhere a != null && a.length == n && n > 64;
context (\forall* int k; 0 <= k && k < n; Perm(a[k], write));
void f(int n, int[] a) {
  gpuopt tile intra 16;
  par lanes (int t = 0 .. n) context Perm(a[t], write);
  { a[t] = 0; barrier(lanes) { context Perm(a[t], write); } }
}
```

Tile barrier-free kernels; split the kernel at the barrier first.
"#,
        reserved: false,
    },
    Code {
        code: "A505",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot tile: the tile size depends on the thread variable",
        explanation: r#"
The tile size fixes the number of threads and the cells each one handles, so it must be the
same for every thread: it cannot mention the iterator of the `par` block.

```pvl
context_everywhere a != null && a.length == n && n > 64;
context (\forall* int k; 0 <= k && k < n; Perm(a[k], write));
void f(int n, int[] a) {
  gpuopt tile inter (t + 2);
  par lanes (int t = 0 .. n) context Perm(a[t], write); { a[t] = 0; }
}
```

Use a tile size that does not mention the thread variable.
"#,
        reserved: false,
    },
    Code {
        code: "A506",
        severity: Severity::Note,
        exit: ExitClass::None,
        title: "method contract kept, or its quantifiers nested to match the tiles",
        explanation: r#"
Method-contract quantifiers over the threads' range `[0, T)` are nested (outer: the new threads,
inner: each thread's cells), and the note counts them; if the method has callers in the file, the
contract is kept and the note labels the calls. `--keep-method-contract` keeps it silently.

```pvl
context_everywhere a != null && a.length == n && n > 64;
context (\forall* int k; 0 <= k && k < n; Perm(a[k], write));
ensures (\forall int k; 0 <= k && k < n; a[k] == 0);
void f(int n, int[] a) {
  gpuopt tile intra 16;
  par lanes (int t = 0 .. n) context Perm(a[t], write); ensures a[t] == 0; { a[t] = 0; }
}
```

Nothing to fix.
"#,
        reserved: false,
    },
    // ---- fuse ----
    Code {
        code: "A601",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot fuse: fewer than F consecutive par blocks",
        explanation: r#"
`fuse F` fuses the annotated `par` block with the F - 1 `par` blocks right after it at the top
level of the method body. Fewer start there; the help says how many were found.

```pvl
context_everywhere a != null && a.length == n;
void f(int n, int[] a) {
  gpuopt fuse 2 1;
  par one (int t = 0 .. n) context Perm(a[t], write); { a[t] = 0; }
}
```

Lower F to the number of consecutive kernels, or annotate the first block of a longer group.
"#,
        reserved: false,
    },
    Code {
        code: "A602",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot fuse: a statement lies between the kernels",
        explanation: r#"
Only consecutive `par` blocks can be fused: a statement between two kernels would have to run
between them, which a fused kernel cannot express. The statement is labelled.

```pvl
context_everywhere a != null && a.length == n;
void f(int n, int[] a) {
  gpuopt fuse 2 1;
  par one (int t = 0 .. n) context Perm(a[t], write); { a[t] = 0; }
  int x = 1;
  par two (int t = 0 .. n) context Perm(a[t], write); { a[t] = a[t] + x; }
}
```

Move the statement before or after the group of kernels.
"#,
        reserved: false,
    },
    Code {
        code: "A603",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot fuse: the thread ranges are not provably equal",
        explanation: r#"
A fused kernel runs every kernel's body in the same thread, so each iterator of every kernel
must run over the same range as kernel 1's. Z3 compares the ranges under the facts before the
first kernel (semantically: `0 .. n` equals `0 .. 1 + (n - 1)`) and shows a counterexample.

```pvl
context_everywhere n > 1 && a != null && a.length == n;
void f(int n, int[] a) {
  gpuopt fuse 2 1;
  par one (int t = 0 .. n) context Perm(a[t], write); { a[t] = 0; }
  par two (int t = 0 .. n - 1) context Perm(a[t], write); { a[t] = 1; }
}
```

Fuse only kernels over the same thread range, or add facts that make the ranges provably equal.
"#,
        reserved: false,
    },
    Code {
        code: "A604",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot fuse: a permission cannot be analysed",
        explanation: r#"
Fusion computes the permissions of the fused kernel cell by cell, so it needs permissions of
the form `Perm(a[i], π)` with a literal positive fraction (`write`, `1\2`), each giving every
cell to at most one thread. `read`, `Value` and symbolic fractions, a non-injective index, an
opaque resource on an array both kernels use, or a pattern the solver cannot encode are refused.

```pvl
context_everywhere a != null && a.length == n;
void f(int n, int[] a) {
  gpuopt fuse 2 1;
  par one (int t = 0 .. n) context Perm(a[t], read); { int x = a[t]; }
  par two (int t = 0 .. n) context Perm(a[t], write); { a[t] = 1; }
}
```

Write the permissions as per-thread `Perm(a[i], π)` atoms with literal fractions.
"#,
        reserved: false,
    },
    Code {
        code: "A605",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot fuse: fractions differ within one kernel",
        explanation: r#"
The fusion algorithms (as in the paper) assume that, within one kernel, all permissions of an
array in the precondition (and in the postcondition) carry one fraction. Both atoms are labelled.

```pvl
context_everywhere a != null && a.length == 2 * n;
void f(int n, int[] a) {
  gpuopt fuse 2 1;
  par one (int t = 0 .. n) context Perm(a[2 * t], write) ** Perm(a[2 * t + 1], write);
  { a[2 * t] = 0; }
  par two (int t = 0 .. n) context Perm(a[2 * t], 1\2) ** Perm(a[2 * t + 1], 1\4);
  { int v = a[2 * t]; }
}
```

Use one fraction per array in each kernel's pre- and postcondition (for reads, any read fraction).
"#,
        reserved: false,
    },
    Code {
        code: "A606",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot fuse: a kernel does not return the permission it takes",
        explanation: r#"
The fusion algorithms (as in the paper) assume that a kernel's threads together give back, on
every cell of every array, exactly the permission they take. Here kernel 2 keeps half of each
cell. The note names a cell and both totals; the kernel and its atoms are labelled.

```pvl
context_everywhere a != null && a.length == n;
requires (\forall* int k; 0 <= k && k < n; Perm(a[k], write));
void f(int n, int[] a) {
  gpuopt fuse 2 1;
  par one (int t = 0 .. n) context Perm(a[t], write); { a[t] = t; }
  par two (int t = 0 .. n) requires Perm(a[t], 1\2); { int v = a[t]; }
}
```

Make each kernel's postcondition return every permission its precondition takes.
"#,
        reserved: false,
    },
    Code {
        code: "A607",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot fuse: a dependency crosses thread blocks",
        explanation: r#"
With several thread blocks (`fuse F B`, B > 1), a barrier synchronises only one block: a cell
written in kernel 1 and used in kernel 2 by threads of different blocks cannot be handed over.
An error for the first pair; after a partial fusion a warning, and the fused part is output.

```pvl
context_everywhere n > 1 && x != null && x.length == n && z != null && z.length == n;
void f(int n, int[] x, int[] z) {
  gpuopt fuse 2 2;
  par fill (int t = 0 .. n) context Perm(x[t], write); { x[t] = t; }
  par pick (int t = 0 .. n) context Perm(x[n - 1 - t], 1\2) ** Perm(z[t], write);
  { z[t] = x[n - 1 - t]; }
}
```

Fuse as one thread block (`gpuopt fuse 2 1;`), or use a larger block size.
"#,
        reserved: false,
    },
    Code {
        code: "A608",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot fuse: the self-check of the fused contract failed",
        explanation: r#"
Before emitting, the fused contract is checked cell by cell (no more than the kernels asked,
nothing lost, every body and barrier holds what it needs). A failure, an unprintable per-cell
guard, or read shares to halve under an inner barrier is a refusal, never an unverifiable output.

```pvl
context_everywhere w != null && w.length == n + 1;
void f(int n, int[] w) {
  gpuopt fuse 2 1;
  par one (int t = 0 .. n) context Perm(w[t], 1\2); { int x = w[t]; }
  par two (int t = 0 .. n) context Perm(w[t], 1\2) ** Perm(w[t + 1], 1\2);
  { barrier(two) { context Perm(w[t], 1\2) ** Perm(w[t + 1], 1\2); } }
}
```

Fuse fewer kernels, or restate their contracts in simpler patterns.
"#,
        reserved: false,
    },
    Code {
        code: "A609",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot fuse: unsupported kernel shape",
        explanation: r#"
Fusion takes single-arm `par` blocks at the top level of a method body, with thread iterators,
no wait list, no v1 region contract, a block body, the same number of iterators in every kernel,
and ranges that mention no other iterator and can be encoded for the solver. Anything else is
refused, with the offending part labelled.

```pvl
context_everywhere a != null && a.length == n;
void f(int n, int[] a) {
  gpuopt fuse 2 1;
  par one (int t = 0 .. n) context Perm(a[t], write); { a[t] = 0; }
  par two (int t = 0 .. n) context Perm(a[t], write); { a[t] = 1; } and three (int u = 0 .. n) { }
}
```

Split `and` arms into consecutive `par` blocks, and move region contracts into the per-thread one.
"#,
        reserved: false,
    },
    Code {
        code: "A610",
        severity: Severity::Error,
        exit: ExitClass::No,
        title: "cannot fuse: several thread blocks with multi-dimensional kernels",
        explanation: r#"
The check for dependencies across thread blocks (A607) handles one-dimensional kernels only, so
kernels with several iterators can be fused only as a single thread block.

```pvl
context_everywhere a != null && a.length == 64;
void f(int[] a) {
  gpuopt fuse 2 2;
  par one (int i = 0 .. 8, int j = 0 .. 8) context Perm(a[8 * i + j], write); { a[8 * i + j] = 0; }
  par two (int i = 0 .. 8, int j = 0 .. 8) context Perm(a[8 * i + j], write); { a[8 * i + j] = 1; }
}
```

Fuse as one thread block (`gpuopt fuse 2 1;`, or `--opt fuse` without `--blocks`/`--block-size`).
"#,
        reserved: false,
    },
];
