//! The `alpine-rs` command line.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(alpine_rs::cli::main())
}
