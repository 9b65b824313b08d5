//! The memory allocator of the `alpine-rs` binary and of the benches.
//!
//! Parsing and rewriting allocate one small node per token and free whole trees at a time;
//! mimalloc serves that pattern faster than glibc's allocator: the loops bench (benches/loops.rs)
//! runs 15% faster with it, measured alternately in one session.

/// The allocator type; a binary declares `#[global_allocator] static A: Allocator = Allocator;`.
pub use mimalloc::MiMalloc as Allocator;
