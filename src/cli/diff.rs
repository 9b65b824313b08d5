//! `alpine-rs diff ORIG OPT`: review what an optimization did to the proof.
//!
//! Shows the hunks of the unified diff whose changed lines hold annotation text (contracts, loop
//! invariants, par and barrier contracts, assertions, ghost code, `gpuopt` lines) on either side,
//! classified from both files' syntax trees (`crate::review`); `--all` shows the code hunks too.
//! Exit codes follow `diff(1)`: 0 nothing to show (no hunk of the shown kind), 1 hunks shown,
//! 2 bad input (a file cannot be read or does not parse).

use super::common::{emit, json_diags, json_hunks, read_source, write_diff, ColorArg, Format};
use crate::front::{DialectChoice, ParseOptions};
use crate::review::review_texts;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// The original program.
    pub orig: PathBuf,
    /// The optimized program.
    pub opt: PathBuf,
    /// Show every hunk, not only those that change annotations.
    #[arg(long)]
    pub all: bool,
    /// Lines of context around each change.
    #[arg(short = 'U', long, default_value_t = 3)]
    pub context: usize,
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorArg,
    #[arg(long, default_value = "auto")]
    pub dialect: DialectChoice,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

pub fn main(args: DiffArgs) -> u8 {
    let mut files = Vec::with_capacity(2);
    for p in [&args.orig, &args.opt] {
        match read_source(p) {
            Ok(f) => files.push(f),
            Err(e) => {
                let json = serde_json::json!({
                    "orig": args.orig.display().to_string(),
                    "opt": args.opt.display().to_string(),
                    "exit": 2,
                    "hunks": [],
                });
                e.report(args.format, json, false);
                return 2;
            }
        }
    }
    let popts = ParseOptions { dialect: args.dialect };
    let hunks = match review_texts(&files[0].text, &files[1].text, &popts, args.context) {
        Ok(h) => h,
        Err((side, diags)) => {
            if args.format == Format::Json {
                println!(
                    "{}",
                    serde_json::json!({
                        "orig": files[0].name,
                        "opt": files[1].name,
                        "exit": 2,
                        "hunks": [],
                        "diagnostics": json_diags(&files[side], &diags),
                    })
                );
            } else {
                emit(&files[side], &diags);
            }
            return 2;
        }
    };
    let total = hunks.len();
    let shown: Vec<_> = hunks.into_iter().filter(|h| args.all || h.is_annotation()).collect();
    let code = u8::from(!shown.is_empty());
    match args.format {
        Format::Json => println!(
            "{}",
            serde_json::json!({
                "orig": files[0].name,
                "opt": files[1].name,
                "exit": code,
                "hunks_total": total,
                "hunks": json_hunks(&shown),
                "diagnostics": [],
            })
        ),
        Format::Text => {
            let mut out = args.color.stdout();
            if let Err(e) = write_diff(&mut out, &files[0].name, &files[1].name, &shown) {
                // A closed pipe (`| head`) is not an error of the diff.
                if e.kind() != std::io::ErrorKind::BrokenPipe {
                    eprintln!("error[A0000]: cannot write the diff: {e}");
                    return 2;
                }
            }
            if !args.all && total > shown.len() {
                eprintln!(
                    "note: {} of {total} hunks change only code (shown with --all)",
                    total - shown.len()
                );
            }
        }
    }
    code
}
