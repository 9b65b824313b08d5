//! Command-line front ends of the subcommands.

pub mod verify;
