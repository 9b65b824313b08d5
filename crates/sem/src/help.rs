//! Help lines for the interpreter's diagnostics, by code: the checker says what failed at run
//! time; the help line says what usually makes it pass, so that every `run` and `validate`
//! diagnostic carries one (a diagnostic built with its own help line keeps it).

use diag::Diagnostic;

/// The default help line of an `R-` code.
pub fn help_for(code: &str) -> Option<&'static str> {
    Some(match code {
        "R-PRE" => "the caller must establish the precondition for the values it passes; for an entry method, give inputs that satisfy it (`--input`) or let `run` generate them",
        "R-POST" => "the method body does not establish its postcondition for this input: fix the body or weaken the `ensures` clause",
        "R-PAR-PRE" => "the par block's precondition must follow from what holds before it, for every thread",
        "R-PAR-POST" => "each thread must establish the par block's postcondition from its own body",
        "R-BAR-PRE" | "R-BAR-POST" => "make the barrier contract hold for every thread of the block at the barrier",
        "R-BAR-INCONSISTENT" => "the barrier hands out more permission than the threads give up: make its `ensures` permissions match its `requires` ones",
        "R-INVARIANT" | "R-INV-ENTRY" => "the loop invariant must hold before the loop: strengthen the code before it or the invariant's premise",
        "R-INV-KEEP" => "the loop body does not preserve the invariant: the message names the iteration where it first fails",
        "R-ASSERT" => "the asserted property is false for this input; the input is printed with the run",
        "R-ASSUME" => "an `assume` was false for this input, so the run says nothing about it",
        "R-PERM-TRANSFER" => "the contract asks for a permission the holder does not have: add it to the caller's or the thread's contract",
        "R-PERM-READ" => "add a read permission (e.g. `Perm(a[i], read)` or a fraction) for this location to the contract that covers the read",
        "R-PERM-WRITE" => "writing needs the whole permission: give this thread `Perm(x, write)` for the location it writes",
        "R-PERM-OVERFLOW" => "a location's permissions add up to more than 1: two holders claim the same write permission",
        "R-RACE" => "separate the two accesses with a barrier, give them disjoint locations, or make them atomic",
        "R-DIVERGENCE" => "every thread of the block must reach the same barrier in the same iteration: move the barrier out of thread-dependent control flow",
        "R-DEADLOCK" => "some threads finished while others wait at a barrier: make the barrier unconditional in the block",
        "R-BARRIER-SCOPE" => "a barrier belongs directly inside a par block; move it there",
        "R-OOB" => "the index is outside the array for this input: check the bounds in the code or require them in the contract",
        "R-NULL" => "require the reference to be non-null in the contract (e.g. `a != null`)",
        "R-DIV0" => "require the divisor to be non-zero, or guard the division",
        "R-OPTION-NONE" => "`getOption` needs a `Some`: test the option against `None` first, or use `getOrElseOption`",
        "R-NEG-SIZE" => "array sizes must be non-negative: require it in the contract",
        "R-INT-RANGE" => "the value left the 64-bit range the interpreter computes with; use smaller inputs",
        "R-FUEL" => "the run executed more statements than `--fuel` allows: raise it, or use smaller inputs",
        "R-QUANT-UNBOUNDED" => "give the quantifier explicit bounds on its variable (`lo <= i && i < hi`) so it can be enumerated",
        "R-QUANT-LIMIT" => "the quantifier ranges over too many values to enumerate: use smaller inputs",
        "R-UNSUPPORTED" => "the interpreter does not run this construct; the other oracle, `verify`, still checks it",
        "R-TYPE" => "a value of the wrong kind reached this place; check the types in the program",
        "R-NAME" => "declare the name, or fix its spelling",
        "R-NO-INPUT" => "give an input that satisfies the precondition with `--input`, or widen the precondition",
        "R-SCHEDULE" => "the result depends on the order of the warps: look for a race the detector did not see (e.g. through atomics)",
        "R-USAGE" => "see `alpine-rs run --help` and `alpine-rs validate --help`",
        "R-ABSTRACT" => "give the abstract method a body, or a postcondition that names its result (`\\result == e`)",
        "R-LOCK" => "take a lock once, and release only the locks this thread holds",
        "R-LOCK-INV" => "re-establish the lock invariant before `unlock` (or `wait`), and at the end of the constructor",
        "R-THREAD" => "fork a thread once before joining it, and join only a running thread",
        _ => return None,
    })
}

/// Give every diagnostic without a help line the default one of its code.
pub fn add_default_help(ds: &mut [Diagnostic]) {
    diag::add_default_help(ds, help_for);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_code_the_interpreter_emits_has_a_help_line() {
        // Every `"R-…"` literal in the interpreter's sources that names a complete code.
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
        let mut missing = Vec::new();
        let mut files = Vec::new();
        let mut dirs = vec![std::path::PathBuf::from(dir)];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).expect("crates/sem/src") {
                let p = e.expect("entry").path();
                if p.is_dir() {
                    dirs.push(p);
                } else {
                    files.push(p);
                }
            }
        }
        for p in files {
            let src = std::fs::read_to_string(&p).expect("source");
            for part in src.split("\"R-").skip(1) {
                let code: String =
                    part.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
                // Prefixes used to build codes (`"R-BAR-"`) and the note code are not codes.
                if code.is_empty() || code.ends_with('-') || code == "LIMIT" {
                    continue;
                }
                if !part[code.len()..].starts_with('"') {
                    continue;
                }
                let full = format!("R-{code}");
                if help_for(&full).is_none() && !missing.contains(&full) {
                    missing.push(full);
                }
            }
        }
        assert!(missing.is_empty(), "no help line for {missing:?}");
    }

    #[test]
    fn a_specific_help_line_is_kept() {
        let mut ds = vec![
            Diagnostic::error("R-RACE", "race"),
            Diagnostic::error("R-OOB", "oob").with_help("specific"),
        ];
        add_default_help(&mut ds);
        assert_eq!(ds[0].help.as_deref(), help_for("R-RACE"));
        assert_eq!(ds[1].help.as_deref(), Some("specific"));
    }
}
