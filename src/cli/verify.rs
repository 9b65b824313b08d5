//! `alpine-rs verify FILE…`: encode PVL into Viper, run Silicon, report on the PVL text.

use crate::analyze::genperms::GenPerms;
use crate::diag::{render, to_json, Diagnostic, SourceFile};
use crate::front::ast;
use crate::viper::{self, Verdict, VerifyOptions};
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use std::collections::HashSet;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(clap::Args, Debug, Clone)]
pub struct VerifyArgs {
    /// PVL files to verify (each on its own, unless --program).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The files form one program, as VerCors treats its inputs: a class of one file may use
    /// the classes of the others. One verdict for all of them.
    #[arg(long, short = 'p')]
    pub program: bool,
    /// Silicon time limit per file, in seconds (0: none); past it the result is inconclusive
    /// (exit 3).
    #[arg(long, default_value_t = crate::viper::DEFAULT_TIMEOUT_S, value_name = "S")]
    pub timeout: u64,
    /// Write the generated .vpr files and their position maps to DIR.
    #[arg(long, value_name = "DIR")]
    pub keep_vpr: Option<PathBuf>,
    /// Do not use the verification result cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Do not check that every method's precondition is satisfiable (as VerCors'
    /// `--disable-sat`); a precondition that is literally `false` is never checked.
    #[arg(long)]
    pub disable_sat: bool,
    /// Verify with generated permissions, as VeyMont does for its global programs: write
    /// permission to all that each method's object reaches (read in functions), and for each
    /// `par` arm what it touches. By default this is done only for a program that states no
    /// permission, takes no lock, starts no thread, and has a global program's shape (roles
    /// built in a constructor, run by `void run()`).
    #[arg(long, conflicts_with = "no_generate_permissions")]
    pub generate_permissions: bool,
    /// Never generate permissions: verify the program exactly as written.
    #[arg(long)]
    pub no_generate_permissions: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// PVL dialect: auto (per file), v1 (VerCors 1.4) or v2 (VerCors 2).
    #[arg(long, default_value = "auto")]
    pub dialect: crate::front::DialectChoice,
    /// Files verified at once, all in one Silicon JVM (default: the number of cores). Output and
    /// exit code do not depend on it: reports come in the order of the arguments.
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
}

/// Run the command; returns the process exit code (0 verified, 1 verification failure,
/// 2 unsupported or bad input, 3 backend missing, crash or timeout).
pub fn main(args: VerifyArgs) -> u8 {
    let jobs = match super::pool::workers(args.jobs) {
        Ok(n) => n,
        Err(code) => return code,
    };
    let opts = VerifyOptions {
        timeout_s: args.timeout,
        keep_vpr: args.keep_vpr.clone(),
        no_cache: args.no_cache,
        no_sat: args.disable_sat,
        dialect: args.dialect,
        jobs,
        gen_perms: match (args.generate_permissions, args.no_generate_permissions) {
            (true, _) => GenPerms::Always,
            (_, true) => GenPerms::Never,
            _ => GenPerms::Auto,
        },
        cancel: None,
    };
    if args.program {
        return main_program(&args, &opts);
    }
    let mut code = 0u8;
    let mut json = Vec::new();
    let declared: Vec<(String, HashSet<String>)> = if args.files.len() > 1 {
        args.files
            .iter()
            .map(|f| {
                let text = std::fs::read_to_string(f).unwrap_or_default();
                (f.display().to_string(), declared_names(&text))
            })
            .collect()
    } else {
        Vec::new()
    };
    // One JVM for all the files (started at the first file that reaches Silicon).
    let session = viper::Session::for_requests(&opts, args.files.len());
    session.verify_files(&args.files, |_, src, mut report| {
        point_to_program(&src.name, &declared, &mut report.diagnostics);
        code = crate::codes::combine(code, report.verdict.exit_code());
        match args.format {
            Format::Text => print_text(&src, report.verdict, &report.diagnostics, report.time),
            Format::Json => json.push(serde_json::json!({
                "file": src.name,
                "verdict": report.verdict,
                "time_ms": report.time.as_millis() as u64,
                "diagnostics": report.diagnostics.iter().map(|d| to_json(&[&src], d)).collect::<Vec<_>>(),
            })),
        }
    });
    drop(session);
    if args.format == Format::Json {
        println!("{}", serde_json::to_string_pretty(&json).unwrap_or_else(|_| "[]".into()));
    }
    code
}

/// `--program`: all files as one program, one verdict.
fn main_program(args: &VerifyArgs, opts: &VerifyOptions) -> u8 {
    let mut srcs = Vec::new();
    let mut io = Vec::new();
    for f in &args.files {
        match std::fs::read_to_string(f) {
            Ok(text) => srcs.push(SourceFile::new(f.display().to_string(), text)),
            Err(e) => io.push(
                Diagnostic::error("E-IO", format!("cannot read {}: {e}", f.display()))
                    .with_help("check the path and the file's permissions; sources must be UTF-8"),
            ),
        }
    }
    let report = if io.is_empty() {
        viper::verify_program(&srcs, opts)
    } else {
        viper::VerifyReport {
            verdict: Verdict::Unsupported,
            diagnostics: io,
            time: std::time::Duration::ZERO,
        }
    };
    let files: Vec<&SourceFile> = srcs.iter().collect();
    let names = files.iter().map(|s| s.name.as_str()).collect::<Vec<_>>();
    match args.format {
        Format::Text => {
            let label = names.join(" + ");
            print_report(&files, &label, report.verdict, &report.diagnostics, report.time)
        }
        Format::Json => {
            let j = serde_json::json!([{
                "files": names,
                "verdict": report.verdict,
                "time_ms": report.time.as_millis() as u64,
                "diagnostics": report.diagnostics.iter().map(|d| to_json(&files, d)).collect::<Vec<_>>(),
            }]);
            println!("{}", serde_json::to_string_pretty(&j).unwrap_or_else(|_| "[]".into()));
        }
    }
    report.verdict.exit_code()
}

/// The names a file declares: classes, their fields and methods, and top-level methods.
fn declared_names(text: &str) -> HashSet<String> {
    let parsed = crate::front::parse(text, &Default::default());
    let mut out = HashSet::new();
    for item in &parsed.program.items {
        match item {
            ast::Item::Class(c) => {
                out.insert(c.name.name.clone());
                for m in &c.members {
                    match m {
                        ast::Member::Field(f) => out.extend(f.names.iter().map(|n| n.name.clone())),
                        ast::Member::Method(m) => {
                            out.insert(m.name.name.clone());
                        }
                    }
                }
            }
            ast::Item::Method(m) => {
                out.insert(m.name.name.clone());
            }
            _ => {}
        }
    }
    out
}

/// An "unknown class/method/field/name `x`" of a file verified on its own, where another file
/// of the command line declares `x`: the user probably meant the files as one program.
fn point_to_program(file: &str, declared: &[(String, HashSet<String>)], ds: &mut [Diagnostic]) {
    for d in ds.iter_mut().filter(|d| d.message.starts_with("unknown ")) {
        let Some(name) = d.message.split('`').nth(1) else { continue };
        let Some((other, _)) = declared.iter().find(|(f, ns)| f != file && ns.contains(name))
        else {
            continue;
        };
        d.help = Some(format!(
            "`{name}` is declared in {other}: to verify the files as one program, as VerCors \
             does, pass `--program` (`alpine-rs verify --program FILE…`)"
        ));
    }
}

fn print_text(src: &SourceFile, verdict: Verdict, diags: &[Diagnostic], time: std::time::Duration) {
    print_report(&[src], &src.name, verdict, diags, time)
}

fn print_report(
    files: &[&SourceFile],
    label: &str,
    verdict: Verdict,
    diags: &[Diagnostic],
    time: std::time::Duration,
) {
    // Colour only on a terminal: piped output and logs stay plain.
    let choice = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        ColorChoice::Auto
    } else {
        ColorChoice::Never
    };
    let mut err = StandardStream::stderr(choice);
    render(&mut err, files, diags);
    let what = match verdict {
        Verdict::Verified => "verified",
        Verdict::Failed => "verification failed",
        Verdict::Unsupported => "not verified (unsupported or invalid input)",
        Verdict::BackendMissing => "not verified (backend missing)",
        Verdict::Timeout => "inconclusive (timeout)",
        Verdict::Crash => "not verified (backend or encoder error)",
    };
    eprintln!("{label}: {what} in {:.1}s", time.as_secs_f64());
    if verdict == Verdict::Failed {
        eprintln!(
            "note: Silicon reports only the first failure on each path; fixing one may reveal more"
        );
    }
}
