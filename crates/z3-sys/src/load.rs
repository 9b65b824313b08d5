//! Finding and opening libz3, once per process, the first time a Z3 function is called.
//!
//! Where the library is looked for, in order:
//! 1. `ALPINE_RS_LIBZ3`, a path to the library (when set, nothing else is tried, so that a test
//!    or a user can pin one);
//! 2. the system's loader path: `libz3.so.4`, then `libz3.so` (Debian's `libz3-4` package);
//! 3. alpine-rs's backend caches, `backend/z3/libz3.so` under `ALPINE_RS_CACHE`, then
//!    `$XDG_CACHE_HOME/alpine-rs`, then `~/.cache/alpine-rs` (`alpine-rs backend install`).

use std::ffi::c_void;
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, OnceLock};

use libloading::Library;

/// Why libz3 could not be opened: every place tried, with the loader's reason for each.
#[derive(Debug, Clone)]
pub struct LoadError {
    pub tried: Vec<(String, String)>,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the Z3 library (libz3) could not be loaded")?;
        for (place, why) in &self.tried {
            write!(f, "\n  {place}: {why}")?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadError {}

/// The library and the candidate it was opened from.
static LIBRARY: OnceLock<Result<(Library, String), LoadError>> = OnceLock::new();

/// What to do when a Z3 function is called and the library cannot be opened: the command line
/// prints its diagnostic and exits with "could not decide" (3); the language server panics
/// instead, which its handlers catch, so that the session goes on without Z3.
static MISSING: Mutex<Option<fn(&LoadError) -> !>> = Mutex::new(None);

/// Sets the handler for a call into Z3 when the library is missing (the last setting wins).
pub fn set_missing_handler(handler: fn(&LoadError) -> !) {
    if let Ok(mut h) = MISSING.lock() {
        *h = Some(handler);
    }
}

/// The candidates in the order they are tried.
pub fn candidates() -> Vec<PathBuf> {
    if let Some(p) = std::env::var_os("ALPINE_RS_LIBZ3") {
        return vec![PathBuf::from(p)];
    }
    let mut out = vec![PathBuf::from("libz3.so.4"), PathBuf::from("libz3.so")];
    // Every cache alpine-rs may use, the chosen one first: a command run with another cache
    // (a test's empty one, a per-project `ALPINE_RS_CACHE`) still finds the library that
    // `backend install` put in the default one.
    let caches = [
        std::env::var_os("ALPINE_RS_CACHE").map(PathBuf::from),
        std::env::var_os("XDG_CACHE_HOME").map(|p| PathBuf::from(p).join("alpine-rs")),
        std::env::var_os("HOME").map(|p| PathBuf::from(p).join(".cache/alpine-rs")),
    ];
    for cache in caches.into_iter().flatten() {
        let lib = cache.join("backend/z3/libz3.so");
        if !out.contains(&lib) {
            out.push(lib);
        }
    }
    out
}

fn open() -> Result<(Library, String), LoadError> {
    let mut tried = Vec::new();
    for path in candidates() {
        // SAFETY: libz3's initialisers only set up its own globals.
        match unsafe { Library::new(&path) } {
            Ok(lib) => return Ok((lib, path.display().to_string())),
            Err(e) => tried.push((path.display().to_string(), e.to_string())),
        }
    }
    Err(LoadError { tried })
}

/// The opened library, opening it on the first call.
pub fn library() -> Result<&'static Library, &'static LoadError> {
    LIBRARY.get_or_init(open).as_ref().map(|(lib, _)| lib)
}

/// The candidate the library was opened from (`libz3.so.4` for the system's), opening it if
/// no call has yet.
pub fn origin() -> Result<&'static str, &'static LoadError> {
    LIBRARY.get_or_init(open).as_ref().map(|(_, from)| from.as_str())
}

fn missing(err: &LoadError) -> ! {
    let handler = MISSING.lock().ok().and_then(|h| *h);
    match handler {
        Some(handler) => handler(err),
        None => {
            eprintln!("error: {err}");
            std::process::exit(3)
        }
    }
}

/// The address of `name` (NUL-terminated), looked up once and kept in `slot`.
#[inline]
pub(crate) fn resolve(slot: &AtomicPtr<c_void>, name: &str) -> *mut c_void {
    let p = slot.load(Ordering::Acquire);
    if !p.is_null() {
        return p;
    }
    let lib = library().unwrap_or_else(|e| missing(e));
    // SAFETY: the type is fixed by the declaration in api.rs, generated from Z3's header.
    let found = unsafe { lib.get::<*mut c_void>(name.as_bytes()) };
    match found {
        Ok(sym) if !sym.is_null() => {
            slot.store(*sym, Ordering::Release);
            *sym
        }
        _ => missing(&LoadError {
            tried: vec![(
                "libz3".to_string(),
                format!("it has no function {} (too old a Z3?)", name.trim_end_matches('\0')),
            )],
        }),
    }
}
