//! The `alpine-rs` command line.

// See `alpine_rs::allocator`; the benches use the same, to measure the tool.
#[global_allocator]
static ALLOCATOR: alpine_rs::allocator::Allocator = alpine_rs::allocator::Allocator;

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(alpine_rs::cli::main())
}
