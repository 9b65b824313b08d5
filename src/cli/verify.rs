//! `alpine-rs verify FILE…`: encode PVL into Viper, run Silicon, report on the PVL text.

use crate::diag::{render, to_json, Diagnostic, SourceFile};
use crate::viper::{self, Verdict, VerifyOptions};
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(clap::Args, Debug, Clone)]
pub struct VerifyArgs {
    /// PVL files to verify.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Silicon timeout per file, in seconds (0: none).
    #[arg(long, default_value_t = 0, value_name = "S")]
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
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Run the command; returns the process exit code (0 verified, 1 verification failure,
/// 2 unsupported or bad input, 3 backend missing, crash or timeout).
pub fn main(args: VerifyArgs) -> u8 {
    let opts = VerifyOptions {
        timeout_s: args.timeout,
        keep_vpr: args.keep_vpr.clone(),
        no_cache: args.no_cache,
        no_sat: args.disable_sat,
    };
    let mut code = 0u8;
    let mut json = Vec::new();
    for f in &args.files {
        let (src, report) = viper::verify_file(f, &opts);
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
    }
    if args.format == Format::Json {
        println!("{}", serde_json::to_string_pretty(&json).unwrap_or_else(|_| "[]".into()));
    }
    code
}

fn print_text(src: &SourceFile, verdict: Verdict, diags: &[Diagnostic], time: std::time::Duration) {
    // Colour only on a terminal: piped output and logs stay plain.
    let choice = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        ColorChoice::Auto
    } else {
        ColorChoice::Never
    };
    let mut err = StandardStream::stderr(choice);
    render(&mut err, &[src], diags);
    let what = match verdict {
        Verdict::Verified => "verified",
        Verdict::Failed => "verification failed",
        Verdict::Unsupported => "not verified (unsupported or invalid input)",
        Verdict::BackendMissing => "not verified (backend missing)",
        Verdict::Timeout => "inconclusive (timeout)",
        Verdict::Crash => "not verified (backend or encoder error)",
    };
    eprintln!("{}: {what} in {:.1}s", src.name, time.as_secs_f64());
    if verdict == Verdict::Failed {
        eprintln!(
            "note: Silicon reports only the first failure on each path; fixing one may reveal more"
        );
    }
}
