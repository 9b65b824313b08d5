//! `alpine-rs parse FILE...`

use super::common::{emit, json_diags, read_source, Format};
use crate::front::{DialectChoice, ParseOptions};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Emit {
    /// Nothing but diagnostics.
    None,
    /// The syntax tree (debug form).
    Ast,
    /// The canonical PVL printing of the tree.
    Pvl,
}

#[derive(clap::Args, Debug)]
pub struct ParseArgs {
    /// PVL files to parse.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// What to print for each file that parses.
    #[arg(long, value_enum, default_value = "none")]
    pub emit: Emit,
    /// PVL dialect: auto, v1 (VerCors 1.4) or v2 (VerCors 2).
    #[arg(long, default_value = "auto")]
    pub dialect: DialectChoice,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

pub fn main(args: ParseArgs) -> u8 {
    let opts = ParseOptions { dialect: args.dialect };
    let mut code = 0;
    let mut json = Vec::new();
    for path in &args.files {
        let file = match read_source(path) {
            Ok(f) => f,
            Err(e) => {
                code = 2;
                // In JSON mode the file joins the array of per-file results.
                if args.format == Format::Json {
                    json.push(serde_json::json!({
                        "file": e.file.name,
                        "ok": false,
                        "diagnostics": e.json_diags(),
                    }));
                } else {
                    e.report(Format::Text, serde_json::Value::Null, false);
                }
                continue;
            }
        };
        let parsed = crate::transforms::registry::parse(&file.text, &opts);
        let diags = parsed.diagnostics.clone();
        let failed = diags.iter().any(|d| d.is_error());
        if failed {
            code = 2;
        }
        if args.format == Format::Json {
            json.push(serde_json::json!({
                "file": file.name,
                "ok": !failed,
                "dialect": parsed.dialect.name(),
                "diagnostics": json_diags(&file, &diags),
            }));
            continue;
        }
        emit(&file, &diags);
        if !failed {
            match args.emit {
                Emit::None => {}
                Emit::Ast => println!("{:#?}", parsed.program),
                Emit::Pvl => print!(
                    "{}",
                    crate::front::printer::print_program(&parsed.program, parsed.dialect)
                ),
            }
        }
    }
    if args.format == Format::Json {
        println!("{}", serde_json::Value::Array(json));
    }
    code
}
