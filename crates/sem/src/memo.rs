//! ORIG's runs kept across validations (`ValidateOptions::memo`): `suggest` measures every
//! candidate against the same file on the same generated inputs, and without it drew each
//! input (a Z3 query) and ran ORIG on it once per candidate, about half of its time (the
//! RaCUDA reduction kernel: 25 runs of ORIG where 5 give the same results).
//!
//! A run is kept by everything it depends on: ORIG's text, the method, the seed, the input's
//! number, whether it was drawn small, and the configuration but its deadline. Runs that did
//! not finish (out of time or fuel) are not kept: another validation may have more time.

use super::{Config, RunResult, Status};
use crate::inputs::Input;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

/// A kept run: ORIG's result on the input it was drawn for.
type Kept = (RunResult, Arc<Input>);

/// The memo; share one (`Arc`) among the validations of one file.
#[derive(Default)]
pub struct RunMemo {
    runs: Mutex<HashMap<(u64, String), Kept>>,
}

impl std::fmt::Debug for RunMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.runs.lock().map_or(0, |m| m.len());
        write!(f, "RunMemo({n} runs)")
    }
}

/// What a drawn input and ORIG's run on it depend on.
pub(crate) struct Key<'a> {
    pub src: &'a str,
    pub method: u32,
    pub seed: u64,
    pub id: u64,
    pub small: bool,
    pub cfg: &'a Config,
}

impl Key<'_> {
    fn flat(&self) -> (u64, String) {
        let mut h = DefaultHasher::new();
        self.src.hash(&mut h);
        let cfg = Config { deadline: None, ..self.cfg.clone() };
        let rest = format!("{}|{}|{}|{}|{cfg:?}", self.method, self.seed, self.id, self.small);
        (h.finish(), rest)
    }
}

impl RunMemo {
    pub(crate) fn get(&self, key: &Key) -> Option<Kept> {
        self.runs.lock().ok()?.get(&key.flat()).cloned()
    }

    pub(crate) fn put(&self, key: &Key, run: &RunResult, input: &Arc<Input>) {
        if run.status == Status::Inconclusive {
            return;
        }
        if let Ok(mut m) = self.runs.lock() {
            m.insert(key.flat(), (run.clone(), Arc::clone(input)));
        }
    }
}
