//! The memory allocator of the `alpine-rs` binary and of the benches.
//!
//! Parsing and rewriting allocate one small node per token and free whole trees at a time;
//! mimalloc serves that pattern faster than glibc's allocator: the loops bench (benches/loops.rs)
//! runs 15% faster with it, measured alternately in one session.
//!
//! With the `override` feature mimalloc also serves `malloc` for the whole process, Z3 included.
//! Creating a Z3 context zero-fills two tables of about 8.5 MB from glibc's `malloc`, one page
//! fault per 4 KiB (4,437 faults, about 20 ms on the 2-core VMs we run on, measured with a C
//! program that only creates a context); from mimalloc's arena, which asks for transparent huge
//! pages, the same `apply` takes about 450 faults. `apply` on the corpus: median 34.7 → 19.1 ms,
//! maximum 85.7 → 44.5 ms, outputs identical (one session, interleaved runs).

/// The allocator type; a binary declares `#[global_allocator] static A: Allocator = Allocator;`.
pub use mimalloc::MiMalloc as Allocator;
