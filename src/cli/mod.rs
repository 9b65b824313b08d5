//! Command-line interface: one module per subcommand. Exit codes everywhere: 0 success; 1 the
//! tool worked but the answer is no; 2 bad input or usage; 3 could not decide.

pub mod apply;
pub mod backend;
pub mod batch;
pub mod common;
pub mod cost;
pub mod diff;
pub mod explain;
pub mod list;
pub mod lsp;
pub mod paramflags;
pub mod parse;
pub(crate) mod pool;
pub mod run;
pub mod suggest;
pub mod sweep;
pub mod validate;
pub mod verify;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "alpine-rs",
    version,
    about = "Annotation-aware optimization of verified GPU kernels (PVL)",
    long_about = "alpine-rs applies the six Alpinist optimizations (loop unrolling, iteration merging, \
data prefetching, matrix linearization, tiling, kernel fusion) to PVL programs, rewriting the code \
and its VerCors annotations so that the result still verifies. Applicability is checked with Z3 \
from the program's own annotations."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Parse files and report syntax errors (exit 0 if all parse, 2 otherwise).
    Parse(parse::ParseArgs),
    /// List the optimization sites of a file (loops, par blocks, methods) with their annotations.
    List(list::ListArgs),
    /// Apply optimizations: the file's own `gpuopt` annotations, or `--opt KIND --at line:N`.
    Apply(apply::ApplyArgs),
    /// Show the hunks of ORIG → OPT that change annotations (exit 0 none, 1 shown, 2 bad input).
    Diff(diff::DiffArgs),
    /// Run the optimization jobs of a YAML plan over many files, in parallel.
    Batch(batch::BatchArgs),
    /// Provision or inspect the Viper/Silicon verifier backend.
    Backend(backend::BackendArgs),
    /// Run a program with runtime checks of every annotation, races and divergence.
    Run(run::RunArgs),
    /// Run two programs on the same generated inputs and compare their final states.
    Validate(validate::ValidateArgs),
    /// Count the cost model's metrics of two programs on the same inputs and say whether the
    /// optimized one is cheaper (improved / regressed / trade-off / unchanged).
    Cost(cost::CostCmdArgs),
    /// Verify PVL files with the built-in Viper/Silicon backend.
    Verify(verify::VerifyArgs),
    /// Try every optimization at every site of the files and report what applied, what was
    /// refused and what broke (`--oracles`: verify and validate every output).
    Sweep(sweep::SweepArgs),
    /// Rank every optimization that applies at a site of a file by its measured cost change
    /// (the cost model on generated inputs), each with the `apply` command that performs it.
    Suggest(suggest::SuggestArgs),
    /// Explain a diagnostic code (`explain A603`), or list them all (`explain --list`).
    Explain(explain::ExplainArgs),
    /// Serve the Language Server Protocol over stdio: diagnostics as you type, optimizations as
    /// code actions, verification on save (docs/editors.md).
    Lsp(lsp::LspArgs),
}

pub fn main() -> u8 {
    quiet_on_closed_stdout();
    // The whole command runs on the parser's large-stack thread, so that its parses (a hundred
    // short expressions per `apply`) run in place instead of a round trip each.
    crate::front::worker::run(main_here)
}

/// `alpine-rs run F | head -1`: when the reader of our output goes away, `print!` panics with
/// "failed printing to stdout". That is no bug of ours: end quietly, as Unix tools do (141 is
/// the shell's status for a process ended by SIGPIPE). SIGPIPE itself stays ignored, so that a
/// backend process that dies shows as an error on its pipe, which the driver handles.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let text = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if text.starts_with("failed printing to stdout") && text.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}

fn main_here() -> u8 {
    check::report_missing_solver();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // clap prints help/version on stdout with exit 0, usage errors on stderr.
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    match cli.command {
        Command::Parse(a) => parse::main(a),
        Command::List(a) => list::main(a),
        Command::Apply(a) => apply::main(a),
        Command::Backend(a) => backend::main(a),
        Command::Batch(a) => batch::main(a),
        Command::Diff(a) => diff::main(a),
        Command::Run(a) => run::main(a),
        Command::Validate(a) => validate::main(a),
        Command::Cost(a) => cost::main(a),
        Command::Verify(a) => verify::main(a),
        Command::Sweep(a) => sweep::main(a),
        Command::Suggest(a) => suggest::main(a),
        Command::Explain(a) => explain::main(a),
        Command::Lsp(a) => lsp::main(a),
    }
}
