//! `alpine-rs apply`: run optimizations and emit the result (stdout, -o, --in-place, --diff,
//! --check).

use super::common::{json_diags, read_source, Format};
use crate::diag::{self, SourceFile};
use crate::front::ast::{Layout as MatLayout, OptKind, TileMode};
use crate::front::parser::parse_expr_text;
use crate::front::{Dialect, DialectChoice, ParseOptions};
use crate::transforms::driver::{apply_cli_or_annotations, At, CliStep, DriverOptions};
use crate::transforms::{MergeMode, Params};
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct ApplyArgs {
    /// The PVL file to optimize.
    pub file: PathBuf,
    /// Optimization to apply (repeatable; each `--opt` starts a group with its own flags):
    /// unroll, merge, prefetch, linearize, tile, fuse (or the Alpinist names).
    #[arg(long = "opt")]
    pub opt: Vec<String>,
    /// Where the optimization applies: line:N or line:N:COL of the input file (one per --opt).
    #[arg(long = "at")]
    pub at: Vec<String>,
    /// unroll: iterations to peel; merge: iterations per merged body (one per unroll/merge group).
    #[arg(long)]
    pub factor: Vec<u64>,
    /// unroll, merge: the iteration variable (inferred when omitted).
    #[arg(long)]
    pub var: Vec<String>,
    /// merge: code shape.
    #[arg(long, default_value = "auto")]
    pub mode: String,
    /// prefetch, linearize: the array or matrix.
    #[arg(long)]
    pub array: Vec<String>,
    /// prefetch: locations separated by `;`, e.g. "tid; tid+1".
    #[arg(long)]
    pub locations: Vec<String>,
    /// linearize: row or col.
    #[arg(long)]
    pub layout: Vec<String>,
    /// linearize: E1,E2 (rows, row length).
    #[arg(long)]
    pub dims: Vec<String>,
    /// linearize: use an index helper function.
    #[arg(long)]
    pub index_fn: bool,
    /// tile: inter or intra.
    #[arg(long = "tile-mode")]
    pub tile_mode: Vec<String>,
    /// tile: tile size (literal or expression).
    #[arg(long = "tile-size")]
    pub tile_size: Vec<String>,
    /// tile: do not rewrite method-level quantifiers.
    #[arg(long)]
    pub keep_method_contract: bool,
    /// fuse: number of consecutive par blocks (default 2).
    #[arg(long)]
    pub kernels: Vec<u64>,
    /// fuse: number of thread blocks.
    #[arg(long)]
    pub blocks: Option<u64>,
    /// fuse: threads per block, for the cross-block dependency check.
    #[arg(long = "block-size")]
    pub block_size: Option<String>,
    /// Write the output to FILE.
    #[arg(short = 'o', long = "output", conflicts_with_all = ["in_place", "check"])]
    pub output: Option<PathBuf>,
    /// Rewrite the input file (atomically).
    #[arg(long = "in-place", conflicts_with = "check")]
    pub in_place: bool,
    /// Print a unified diff of input and output instead of the output.
    #[arg(long)]
    pub diff: bool,
    /// Exit 1 and print the diff when the file would change.
    #[arg(long)]
    pub check: bool,
    /// Skip refused steps and apply the rest (exit code still 1).
    #[arg(long)]
    pub keep_going: bool,
    /// Per-query Z3 timeout in milliseconds.
    #[arg(long = "z3-timeout", default_value_t = crate::check::DEFAULT_TIMEOUT_MS)]
    pub z3_timeout: u32,
    #[arg(long, default_value = "auto")]
    pub dialect: DialectChoice,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

fn usage(msg: impl std::fmt::Display) -> u8 {
    eprintln!("error[A0000]: {msg}");
    2
}

fn parse_opt(s: &str) -> Option<OptKind> {
    OptKind::from_word(s)
}

/// Build the command-line steps; `Err` is a usage message.
fn steps(args: &ApplyArgs, dialect: Dialect) -> Result<Vec<CliStep>, String> {
    if args.opt.len() != args.at.len() {
        return Err(format!(
            "every --opt needs its own --at line:N ({} --opt, {} --at)",
            args.opt.len(),
            args.at.len()
        ));
    }
    let expr = |s: &str, what: &str| -> Result<crate::front::ast::Expr, String> {
        parse_expr_text(s, dialect).map_err(|_| format!("{what}: `{s}` is not a PVL expression"))
    };
    let (mut fi, mut vi, mut ai, mut li, mut lay, mut di, mut tm, mut ts, mut ki) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0);
    let mut out = Vec::new();
    for (o, at) in args.opt.iter().zip(&args.at) {
        let kind = parse_opt(o).ok_or_else(|| {
            format!("unknown optimization `{o}` (known: unroll, merge, prefetch, linearize, tile, fuse)")
        })?;
        let at: At = at.parse()?;
        let params = match kind {
            OptKind::Unroll | OptKind::Merge => {
                let factor = *args
                    .factor
                    .get(fi)
                    .ok_or_else(|| format!("--opt {o} needs --factor"))?;
                fi += 1;
                let var = args.var.get(vi).cloned();
                if var.is_some() {
                    vi += 1;
                }
                if kind == OptKind::Unroll {
                    Params::Unroll { var, factor }
                } else {
                    let mode = match args.mode.as_str() {
                        "auto" => MergeMode::Auto,
                        "exact" => MergeMode::Exact,
                        "remainder" => MergeMode::Remainder,
                        m => {
                            return Err(format!(
                                "--mode must be auto, exact or remainder, not `{m}`"
                            ))
                        }
                    };
                    Params::Merge { var, factor, mode }
                }
            }
            OptKind::Prefetch => {
                let array = args.array.get(ai).ok_or("--opt prefetch needs --array")?;
                ai += 1;
                let locs = args
                    .locations
                    .get(li)
                    .ok_or("--opt prefetch needs --locations")?;
                li += 1;
                let locations = locs
                    .split(';')
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| expr(l.trim(), "--locations"))
                    .collect::<Result<Vec<_>, _>>()?;
                if locations.is_empty() {
                    return Err("--locations needs at least one location".into());
                }
                Params::Prefetch {
                    array: expr(array, "--array")?,
                    locations,
                }
            }
            OptKind::Linearize => {
                let matrix = args
                    .array
                    .get(ai)
                    .ok_or("--opt linearize needs --array")?
                    .clone();
                ai += 1;
                let layout = match args.layout.get(lay).map(String::as_str) {
                    Some("row") | Some("R") => MatLayout::Row,
                    Some("col") | Some("C") => MatLayout::Col,
                    Some(l) => return Err(format!("--layout must be row or col, not `{l}`")),
                    None => return Err("--opt linearize needs --layout row|col".into()),
                };
                lay += 1;
                let dims = args
                    .dims
                    .get(di)
                    .ok_or("--opt linearize needs --dims E1,E2")?;
                di += 1;
                let parts = split_top(dims, ',');
                if parts.len() != 2 {
                    return Err(format!(
                        "--dims needs two expressions separated by a comma, got `{dims}`"
                    ));
                }
                Params::Linearize {
                    matrix,
                    layout,
                    dims: (expr(&parts[0], "--dims")?, expr(&parts[1], "--dims")?),
                    index_fn: args.index_fn,
                }
            }
            OptKind::Tile => {
                let mode = match args.tile_mode.get(tm).map(String::as_str) {
                    Some("inter") => TileMode::Inter,
                    Some("intra") => TileMode::Intra,
                    Some(m) => {
                        return Err(format!("--tile-mode must be inter or intra, not `{m}`"))
                    }
                    None => return Err("--opt tile needs --tile-mode inter|intra".into()),
                };
                tm += 1;
                let size = args
                    .tile_size
                    .get(ts)
                    .ok_or("--opt tile needs --tile-size N")?;
                ts += 1;
                Params::Tile {
                    mode,
                    size: expr(size, "--tile-size")?,
                    keep_method_contract: args.keep_method_contract,
                }
            }
            OptKind::Fuse => {
                let kernels = args.kernels.get(ki).copied().unwrap_or(2);
                if args.kernels.get(ki).is_some() {
                    ki += 1;
                }
                let block_size = match &args.block_size {
                    Some(b) => Some(expr(b, "--block-size")?),
                    None => None,
                };
                Params::Fuse {
                    kernels,
                    blocks: args.blocks,
                    block_size,
                }
            }
        };
        out.push(CliStep { params, at });
    }
    Ok(out)
}

/// Split at top-level occurrences of `sep` (outside brackets).
fn split_top(s: &str, sep: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        if ch == sep && depth == 0 {
            out.push(cur.trim().to_string());
            cur.clear();
        } else {
            cur.push(ch);
        }
    }
    out.push(cur.trim().to_string());
    out
}

/// A unified diff of `a` and `b`, or the empty string when equal.
pub fn unified_diff(name: &str, a: &str, b: &str) -> String {
    if a == b {
        return String::new();
    }
    similar::TextDiff::from_lines(a, b)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string()
}

/// Write `text` to `path` atomically: a temporary file beside it, then a rename. On any error
/// the original file is untouched.
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let fname = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{fname}.alpine-rs.tmp"));
    let res = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

pub fn main(args: ApplyArgs) -> u8 {
    let file = match read_source(&args.file) {
        Ok(f) => f,
        Err(msg) => {
            eprintln!("{msg}");
            return 2;
        }
    };
    let popts = ParseOptions {
        dialect: args.dialect,
    };
    let dialect = crate::front::parse(&file.text, &popts).dialect;
    let steps = match steps(&args, dialect) {
        Ok(s) => s,
        Err(m) => return usage(m),
    };
    let opts = DriverOptions {
        parse: popts,
        timeout_ms: args.z3_timeout,
        keep_going: args.keep_going,
        steps,
    };
    let res = apply_cli_or_annotations(&file.name, &file.text, &opts);
    let mut code = res.exit_code();
    // Diagnostics.
    if args.format == Format::Json {
        let mut all = Vec::new();
        for r in &res.reports {
            all.extend(json_diags(&r.file, &r.diagnostics));
        }
        let v = serde_json::json!({
            "file": file.name,
            "applied": res.applied,
            "refused": res.refused,
            "changed": res.output != file.text,
            "exit": code,
            "diagnostics": all,
        });
        eprintln!("{v}");
    } else {
        let choice = if std::io::stderr().is_terminal() {
            ColorChoice::Auto
        } else {
            ColorChoice::Never
        };
        let mut err = StandardStream::stderr(choice);
        for r in &res.reports {
            diag::render(&mut err, &[&r.file], &r.diagnostics);
        }
    }
    if res.bad_input {
        return code;
    }
    let changed = res.output != file.text;
    let name = args.file.display().to_string();
    if args.check {
        if changed {
            print!("{}", unified_diff(&name, &file.text, &res.output));
            return 1;
        }
        return code;
    }
    if args.diff {
        print!("{}", unified_diff(&name, &file.text, &res.output));
    } else if let Some(out) = &args.output {
        if code == 0 || args.keep_going {
            if let Err(e) = write_atomic(out, &res.output) {
                eprintln!("error[A0000]: cannot write `{}`: {e}", out.display());
                code = 2;
            }
        }
    } else if args.in_place {
        if changed && (code == 0 || args.keep_going) {
            if let Err(e) = write_atomic(&args.file, &res.output) {
                eprintln!(
                    "error[A0000]: cannot write `{}`: {e}; the file is unchanged",
                    args.file.display()
                );
                code = 2;
            }
        }
    } else if code == 0 || args.keep_going {
        print!("{}", res.output);
    }
    let _ = SourceFile::new("", "");
    code
}
