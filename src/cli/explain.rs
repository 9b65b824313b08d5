//! `alpine-rs explain CODE`: the explanation of a diagnostic code, from the registry
//! ([`crate::codes`]), like `rustc --explain`. `explain --list` prints every code with its title.

use super::common::Format;
use crate::codes::{self, Code};
use crate::diag::{Diagnostic, SourceFile};

#[derive(clap::Args, Debug)]
pub struct ExplainArgs {
    /// The code, e.g. A0003, A603, V-POST (case does not matter).
    #[arg(required_unless_present = "list")]
    pub code: Option<String>,
    /// List every registered code with its title.
    #[arg(long, conflicts_with = "code")]
    pub list: bool,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

fn json(c: &Code) -> serde_json::Value {
    serde_json::json!({
        "code": c.code,
        "severity": c.severity,
        "exit": c.exit,
        "title": c.title,
        "explanation": c.explanation,
        "reserved": c.reserved,
    })
}

/// The text of one code's explanation.
pub fn render(c: &Code) -> String {
    let mut out = format!("{}: {}\n\n", c.code, c.title);
    out.push_str(c.explanation.trim());
    out.push('\n');
    if c.reserved {
        out.push_str("\n(Reserved: documented, not emitted by this version.)\n");
    }
    out
}

pub fn main(args: ExplainArgs) -> u8 {
    if args.list {
        match args.format {
            Format::Json => {
                let all: Vec<serde_json::Value> = codes::all().map(json).collect();
                println!("{}", serde_json::Value::Array(all));
            }
            Format::Text => {
                for area in codes::tables() {
                    println!("{}:", area.name);
                    for c in &area.codes {
                        println!("  {:<20} {}", c.code, c.title);
                    }
                }
            }
        }
        return 0;
    }
    let asked = args.code.unwrap_or_default();
    match codes::lookup(&asked.to_uppercase()) {
        Some(c) => {
            match args.format {
                Format::Json => println!("{}", json(c)),
                Format::Text => print!("{}", render(c)),
            }
            0
        }
        None => {
            let d = Diagnostic::error(
                "A0000",
                format!("`{asked}` is not a diagnostic code of alpine-rs"),
            )
            .with_help("`alpine-rs explain --list` lists every code");
            super::common::report_one(
                &SourceFile::new("explain", String::new()),
                &d,
                args.format,
                serde_json::json!({ "code": asked }),
                true,
            );
            2
        }
    }
}
