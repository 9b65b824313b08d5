//! `alpine-rs backend install|doctor`: provisioning of the Viper/Silicon verifier.

use crate::verify::backend::{self, BackendConfig, InstallOptions};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct BackendArgs {
    #[command(subcommand)]
    pub action: BackendAction,
    /// Cache directory (default: $ALPINE_RS_CACHE, $XDG_CACHE_HOME/alpine-rs or ~/.cache/alpine-rs).
    #[arg(long = "cache-dir", global = true)]
    pub cache_dir: Option<PathBuf>,
}

#[derive(clap::Subcommand, Debug)]
pub enum BackendAction {
    /// Download Silicon (from the nagini wheel) and, if needed, a z3 binary into the cache.
    Install {
        /// nagini wheel version holding silicon.jar.
        #[arg(long, default_value = "1.2.0")]
        nagini: String,
        /// z3-solver wheel version, used only when no z3 ≥ 4.8 is found.
        #[arg(long, default_value = "4.8.7.0")]
        z3: String,
        /// Use a nagini wheel downloaded elsewhere.
        #[arg(long = "from-wheel")]
        from_wheel: Option<PathBuf>,
    },
    /// Show each component (path, version, hash) and verify a trivial file end to end.
    Doctor,
}

pub fn main(args: BackendArgs) -> u8 {
    match args.action {
        BackendAction::Install {
            nagini,
            z3,
            from_wheel,
        } => {
            let opts = InstallOptions {
                cache_dir: args.cache_dir,
                nagini_version: nagini,
                z3_version: z3,
                from_wheel,
                ..InstallOptions::default()
            };
            let mut progress = |m: &str| eprintln!("{m}");
            match backend::install(&opts, &mut progress) {
                Ok(_) => {
                    eprintln!("backend installed");
                    0
                }
                Err(e) => {
                    eprintln!("error[E-BACKEND]: {e}");
                    3
                }
            }
        }
        BackendAction::Doctor => {
            let cfg = BackendConfig {
                cache_dir: args.cache_dir,
                ..BackendConfig::default()
            };
            let report = backend::doctor(&cfg);
            print!("{report}");
            if report.ok() {
                0
            } else {
                3
            }
        }
    }
}
