//! `alpine-rs list FILE`: one line per optimization site.

use super::common::{emit, json_diags, read_source, Format};
use crate::analyze::sites::{sites, SiteKind};
use crate::front::{parse, DialectChoice, ParseOptions};
use crate::transforms::registry::check_annotations;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct ListArgs {
    pub file: PathBuf,
    #[arg(long, default_value = "auto")]
    pub dialect: DialectChoice,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

pub fn main(args: ListArgs) -> u8 {
    let file = match read_source(&args.file) {
        Ok(f) => f,
        Err(e) => {
            let json = serde_json::json!({ "file": e.file.name, "sites": [] });
            e.report(args.format, json, false);
            return 2;
        }
    };
    let parsed = parse(&file.text, &ParseOptions { dialect: args.dialect });
    let mut diags = parsed.diagnostics.clone();
    diags.extend(check_annotations(&file.text, &parsed));
    diags.sort_by_key(|d| (d.primary_span().map_or(0, |s| s.lo), !d.is_error()));
    let failed = diags.iter().any(|d| d.is_error());
    let mut rows = Vec::new();
    if !parsed.has_errors() {
        for s in sites(&parsed.program) {
            let (line, col) = file.line_col(s.keyword.start());
            let kind = match s.kind {
                SiteKind::Loop => s.name.clone(),
                SiteKind::Par => "par".to_string(),
                SiteKind::Method => "method".to_string(),
            };
            let name = match s.kind {
                SiteKind::Loop => format!("{}.{}", s.class.clone().unwrap_or_default(), s.method),
                SiteKind::Par => s.name.clone(),
                SiteKind::Method => match &s.class {
                    Some(c) => format!("{c}.{}", s.method),
                    None => s.method.clone(),
                },
            };
            let anns: Vec<String> =
                s.annotations.iter().map(|a| a.span.text(&file.text).to_string()).collect();
            rows.push((line, col, kind, name, anns));
        }
    }
    if args.format == Format::Json {
        let sites: Vec<serde_json::Value> = rows
            .iter()
            .map(|(l, c, k, n, a)| serde_json::json!({"line": l, "column": c, "kind": k, "name": n, "annotations": a}))
            .collect();
        println!(
            "{}",
            serde_json::json!({"file": file.name, "sites": sites, "diagnostics": json_diags(&file, &diags)})
        );
    } else {
        emit(&file, &diags);
        for (l, c, k, n, a) in &rows {
            if a.is_empty() {
                println!("{l}:{c} {k} {n}");
            } else {
                println!("{l}:{c} {k} {n} {}", a.join(" "));
            }
        }
    }
    if failed {
        2
    } else {
        0
    }
}
