//! Mapping Silicon's errors back to PVL diagnostics (`verification.md` §4.2).

use super::ast::{MethodKind, Role};
use super::print::{Pos, PosMap};
use diag::Diagnostic;
use front::span::Span;

/// One error reported by Silicon.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiliconError {
    /// `assignment.failed:insufficient.permission` (batch driver), when known.
    pub full_id: Option<String>,
    pub message: String,
    pub start: Pos,
    pub end: Pos,
    /// Position of the reason node (batch driver only).
    pub reason: Option<(Pos, Pos)>,
}

/// Outcome of one Silicon run as parsed from its output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SiliconOutcome {
    Verified,
    Failed(Vec<SiliconError>),
    /// No verdict line: the backend crashed or was killed; carries the tail of its output.
    Crashed(String),
}

fn parse_pos(s: &str) -> Option<Pos> {
    let (l, c) = s.split_once('.')?;
    Some((l.trim().parse().ok()?, c.trim().parse().ok()?))
}

/// Parse one `  [3] Message. (file.vpr@12.3--12.40)` line.
pub fn parse_error_line(line: &str) -> Option<SiliconError> {
    let t = line.trim();
    let rest = t.strip_prefix('[')?;
    let (num, rest) = rest.split_once("] ")?;
    num.trim().parse::<u32>().ok()?;
    let rest = rest.strip_suffix(')')?;
    let open = rest.rfind(" (")?;
    let (msg, loc) = (&rest[..open], &rest[open + 2..]);
    let (_, pos) = loc.rsplit_once('@')?;
    let (start, end) = match pos.split_once("--") {
        Some((a, b)) => (parse_pos(a)?, parse_pos(b)?),
        None => {
            let p = parse_pos(pos)?;
            (p, p)
        }
    };
    Some(SiliconError { full_id: None, message: msg.to_string(), start, end, reason: None })
}

/// Parse the text output of `silicon.jar FILE` (per-file mode).
pub fn parse_output(out: &str) -> SiliconOutcome {
    let mut errors = Vec::new();
    let mut verdict = None;
    for line in out.lines() {
        if line.starts_with("Silicon finished verification successfully") {
            verdict = Some(true);
        } else if line.starts_with("Silicon found") {
            verdict = Some(false);
        } else if let Some(e) = parse_error_line(line) {
            errors.push(e);
        }
    }
    match verdict {
        Some(true) if errors.is_empty() => SiliconOutcome::Verified,
        Some(_) => SiliconOutcome::Failed(errors),
        None if !errors.is_empty() => SiliconOutcome::Failed(errors),
        None => {
            let tail: Vec<&str> = out.lines().rev().take(20).collect();
            SiliconOutcome::Crashed(tail.into_iter().rev().collect::<Vec<_>>().join("\n"))
        }
    }
}

/// The error class, from the full id or from the message's first sentence.
pub fn error_kind(e: &SiliconError) -> &'static str {
    if let Some(id) = &e.full_id {
        let head = id.split(':').next().unwrap_or("");
        for k in KINDS {
            if k.0 == head {
                return k.0;
            }
        }
    }
    let m = e.message.as_str();
    // Rejections of the file itself come first: their messages can contain any other wording.
    for (k, prefix) in KINDS.iter().rev() {
        if prefix.iter().any(|p| m.starts_with(p) || m.contains(p)) {
            return k;
        }
    }
    // Anything that is not a known verification error means Silicon rejected the file
    // (duplicate or ambiguous identifiers, type errors, …).
    "internal"
}

const KINDS: &[(&str, &[&str])] = &[
    ("postcondition.violated", &["Postcondition of"]),
    ("assignment.failed", &["Assignment might fail"]),
    ("exhale.failed", &["Exhale might fail"]),
    ("inhale.failed", &["Inhale might fail"]),
    ("assert.failed", &["Assert might fail"]),
    ("call.precondition", &["The precondition of method"]),
    ("application.precondition", &["Precondition of function"]),
    ("invariant.not.established", &["might not hold on entry"]),
    ("invariant.not.preserved", &["might not be preserved"]),
    ("not.wellformed", &["Contract might not be well-formed", "might not be well-formed"]),
    ("fold.failed", &["Folding"]),
    ("package.failed", &["Packaging wand might fail"]),
    ("apply.failed", &["Applying wand might fail"]),
    ("unfold.failed", &["Unfolding"]),
    ("call.failed", &["Method call might fail"]),
    ("while.failed", &["While statement might fail"]),
    ("if.failed", &["Conditional statement might fail"]),
    ("termination.failed", &["might not terminate"]),
    (
        "internal",
        &[
            "Parse error",
            "is not a valid Trigger",
            "Type error",
            "type error",
            "Internal error",
            "not defined",
            "undeclared identifier",
            "incompatible type",
            "Consistency error",
            "expected",
        ],
    ),
];

fn reason_kind(e: &SiliconError) -> &'static str {
    if assumed_injectivity(&e.message) {
        return "qp.not.injective";
    }
    // "Index i into s might exceed sequence length" / "might be negative": a sequence (or an
    // option, which the encoding keeps as a sequence of at most one value) read out of range.
    if e.message.contains("might exceed sequence length")
        || (e.message.contains("Index ") && e.message.contains("might be negative"))
    {
        return "seq.index";
    }
    if let Some(id) = &e.full_id {
        if let Some((_, r)) = id.split_once(':') {
            return match r {
                "insufficient.permission" => "insufficient.permission",
                "assertion.false" => "assertion.false",
                "division.by.zero" => "division.by.zero",
                "receiver.not.injective" | "qp.not.injective" => "qp.not.injective",
                "negative.permission" | "permission.not.positive" => "negative.permission",
                _ => "other",
            };
        }
    }
    let m = &e.message;
    if m.contains("insufficient permission") {
        "insufficient.permission"
    } else if m.contains("might be zero") {
        "division.by.zero"
    } else if m.contains("injective") {
        "qp.not.injective"
    } else if m.contains("negative") {
        "negative.permission"
    } else if m.contains("might not hold") {
        "assertion.false"
    } else {
        "other"
    }
}

/// The check `!(inj) ==> false` that gives away a quantified permission whose receivers are
/// references (`encode/inject.rs`): the receivers may not be distinct.
fn assumed_injectivity(m: &str) -> bool {
    m.contains("Assertion !(forall ") && m.contains(") ==> false might not hold")
}

/// A mapped diagnostic plus the encoded unit it belongs to (batch files).
pub struct Mapped {
    pub unit: usize,
    pub diagnostic: Diagnostic,
}

/// Map one Silicon error through the position map.
pub fn map_error(map: &PosMap, e: &SiliconError, vpr_path: Option<&str>) -> Mapped {
    let kind = error_kind(e);
    let member = map.member_at(e.start.0);
    let unit = member.map_or(0, |m| m.unit);
    if kind == "internal" || member.is_none() {
        let mut d = Diagnostic::error(
            "E-INTERNAL",
            format!("the Viper encoding was rejected by Silicon: {}", e.message),
        )
        .with_note(format!("at Viper position {}.{}", e.start.0, e.start.1));
        if let Some(p) = vpr_path {
            d = d.with_note(format!("the generated Viper file is kept at {p}"));
        }
        return Mapped { unit, diagnostic: d };
    }
    let member = member.expect("checked above");
    // The node Silicon blames: an exact statement or conjunct, else the innermost one.
    let exact = map.exact(e.start, e.end);
    let stmt = exact.iter().find(|x| x.is_stmt).copied().or_else(|| map.stmt_at(e.start));
    let expr = exact.iter().find(|x| !x.is_stmt).copied();
    let role = stmt.and_then(|s| s.role).unwrap_or(Role::Code);
    let clause = stmt.and_then(|s| s.clause);
    // A node the encoder built with no text of its own (a contract lifted from a kernel's threads
    // to the whole kernel) carries the empty span at the start of the file: blame its clause
    // (or the member) instead of line 1.
    let real = |s: Option<Span>| s.filter(|s| !s.is_dummy());
    let span = real(stmt.and_then(|s| s.span))
        .or_else(|| real(expr.and_then(|x| x.span)))
        .or(real(clause))
        .or(real(member.span));
    let label = stmt.and_then(|s| s.label.clone());
    let reason = reason_kind(e);
    let msg_reason = e
        .message
        .split_once(". ")
        .map(|(_, r)| r.trim_end_matches('.').to_string())
        .unwrap_or_default();
    let msg_reason = if assumed_injectivity(&e.message) {
        "the objects these locations belong to may not be distinct".to_string()
    } else {
        demangle(&map.names, &msg_reason)
    };
    let approx = exact.is_empty();

    let (code, text): (&str, String) = match kind {
        "postcondition.violated" => match member.kind {
            MethodKind::BarrierConsistency if role == Role::BarrierReach => (
                "V-BAR-DIVERGENT",
                "some threads of the block may not reach this barrier (it is under a condition \
                 or after a jump that may differ between threads)"
                    .to_string(),
            ),
            MethodKind::Thread => (
                "V-PAR-POST",
                format!(
                    "the postcondition of par block {} may not hold",
                    label.clone().unwrap_or_default()
                ),
            ),
            MethodKind::BarrierConsistency => (
                "V-BAR-INCONSISTENT",
                if reason == "insufficient.permission" {
                    "the barrier's postconditions claim more permission than the preconditions of all threads provide".to_string()
                } else {
                    "this barrier postcondition does not follow from the barrier preconditions of all threads".to_string()
                },
            ),
            _ => ("V-POST", "the postcondition may not hold".to_string()),
        },
        // The location Silicon blames starts the statement when it is the target (`x.f := …`);
        // anywhere else it is a location the right-hand side reads.
        "assignment.failed"
            if reason == "insufficient.permission"
                && e.reason.is_some_and(|(at, _)| at != e.start) =>
        {
            ("V-PERM-READ", "insufficient permission to read a location this assignment reads".to_string())
        }
        "assignment.failed" if reason == "insufficient.permission" => {
            ("V-PERM-WRITE", "insufficient permission for this assignment".to_string())
        }
        "application.precondition" if e.message.contains("function vct_sum") => {
            // The precondition of a `\sum`'s function is what its terms need (`encode::sum`).
            if reason == "insufficient.permission" {
                (
                    "V-PERM-READ",
                    "the terms of this `\\sum` may read a location without permission".to_string(),
                )
            } else if e.message.contains("anull()") {
                ("V-NULL", "an array the terms of this `\\sum` read may be null".to_string())
            } else if e.message.contains("!= 0") {
                ("V-DIV0", "a divisor in the terms of this `\\sum` may be zero".to_string())
            } else {
                ("V-OOB", "an index in the terms of this `\\sum` may be out of bounds".to_string())
            }
        }
        "application.precondition"
            if e.message.contains("function vct_c_div") || e.message.contains("function vct_c_mod") =>
        {
            // C's `/` and `%` (`encode::coerce::truncated`): their precondition is `b != 0`.
            ("V-DIV0", "the divisor may be zero".to_string())
        }
        "application.precondition" => {
            if e.message.contains("function aloc") {
                if e.message.contains("anull()") {
                    ("V-NULL", "the array may be null".to_string())
                } else if e.message.contains("alen(") {
                    ("V-OOB", "the index may exceed the length".to_string())
                } else {
                    ("V-OOB", "the index may be negative".to_string())
                }
            } else {
                ("V-PRE", "the precondition of this function may not hold".to_string())
            }
        }
        "exhale.failed" | "assert.failed" | "inhale.failed" if reason == "division.by.zero" => {
            ("V-DIV0", "the divisor may be zero".to_string())
        }
        "exhale.failed" | "assert.failed" => match role {
            Role::ParPre => (
                "V-PAR-PRE",
                format!(
                    "the precondition of par block {} may not hold for all threads",
                    label.clone().unwrap_or_default()
                ),
            ),
            Role::BarrierPre => {
                ("V-BAR-PRE", "the barrier's precondition may not hold".to_string())
            }
            Role::UserAssert => ("V-ASSERT", "the assertion may not hold".to_string()),
            Role::InvariantExhale => {
                ("V-INVARIANT", "the resource invariant may not hold".to_string())
            }
            Role::LockInvariant => ("V-LOCK-INV", "the lock invariant may not hold".to_string()),
            Role::Token => ("V-SYNC", token_text(label.as_deref())),
            _ => ("V-EXHALE", "this may not hold".to_string()),
        },
        "call.precondition" => match label.as_deref() {
            Some("fork") => (
                "V-PRE",
                "the precondition of `run` may not hold, or the thread may not be idle".to_string(),
            ),
            Some("join") => ("V-SYNC", token_text(Some("running"))),
            Some("launch") => (
                "V-PRE",
                "the kernel's precondition may not hold at this launch (its grid and block must \
                 not be empty either)"
                    .to_string(),
            ),
            _ => ("V-PRE", "the precondition of the called method may not hold".to_string()),
        },
        "invariant.not.established" => {
            ("V-INV-ENTRY", "the loop invariant may not hold on entry".to_string())
        }
        "invariant.not.preserved" => {
            ("V-INV-KEEP", "the loop invariant may not be preserved".to_string())
        }
        "not.wellformed" => {
            if reason == "insufficient.permission" {
                (
                    "V-UNFRAMED",
                    "the contract reads a location without holding permission for it".to_string(),
                )
            } else {
                ("V-WELLFORMED", "the contract may not be well-formed".to_string())
            }
        }
        "termination.failed" => (
            "V-TERMINATION",
            "the termination measure may not decrease, or may not be bounded".to_string(),
        ),
        "fold.failed" => ("V-FOLD", "folding the predicate may fail".to_string()),
        "unfold.failed" => ("V-UNFOLD", "unfolding the predicate may fail".to_string()),
        "package.failed" => (
            "V-WAND",
            "the magic wand may not be created: its right side may not follow from its left side and what the proof keeps".to_string(),
        ),
        "apply.failed" => (
            "V-WAND",
            "the magic wand may not be applied: the wand or its left side may not be held".to_string(),
        ),
        _ => match reason {
            "insufficient.permission" => {
                ("V-PERM-READ", "insufficient permission to read a location".to_string())
            }
            "division.by.zero" => ("V-DIV0", "the divisor may be zero".to_string()),
            _ => ("V-FAIL", "verification failed here".to_string()),
        },
    };
    let (code, text) = match (code, reason) {
        (c, "qp.not.injective") if c != "V-OOB" => (
            "V-NOT-INJECTIVE",
            "two values of the quantified variable (or two threads) may denote the same location"
                .to_string(),
        ),
        ("V-EXHALE", "insufficient.permission") => {
            ("V-PERM-READ", "insufficient permission".to_string())
        }
        (_, "seq.index") => (
            "V-OOB",
            "the index may be outside the sequence (it needs 0 <= i < |s|), or the option may be \
             None"
                .to_string(),
        ),
        _ => (code, text),
    };
    let mut d = Diagnostic::error(code, text);
    if let Some(s) = span {
        d = d.with_primary(
            s,
            if msg_reason.is_empty() { e.message.clone() } else { msg_reason.clone() },
        );
    }
    if let Some(c) = clause {
        if span.is_none_or(|s| !s.same_place(c)) {
            d = d.with_secondary(c, "in this clause");
        }
    }
    if role == Role::ParPre && reason == "insufficient.permission" {
        d = d.with_note("the enclosing context may not hold enough permission");
    }
    if approx {
        d = d.with_note("the position is approximate");
    }
    d = d.with_note(format!("Silicon: {}", e.message));
    Mapped { unit, diagnostic: d }
}

/// Silicon's text with each Viper identifier that stands for a PVL name replaced by it
/// (`this.C_sum` → `this.sum`); other words stay as they are.
pub fn demangle(names: &[(String, String)], text: &str) -> String {
    if names.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match names.iter().find(|(v, _)| v == word) {
            Some((_, p)) => out.push_str(p),
            None => out.push_str(word),
        }
        word.clear();
    };
    for ch in text.chars() {
        if ch.is_ascii_alphanumeric() || ch == '_' || ch == '$' {
            word.push(ch);
        } else {
            flush(&mut word, &mut out);
            out.push(ch);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// What a missing lock or thread token means.
fn token_text(token: Option<&str>) -> String {
    match token {
        Some("held") => "the lock may not be held here".into(),
        Some("idle") => "the thread may not be idle (already forked and not joined)".into(),
        Some("running") => "the thread may not be running (not forked, or already joined)".into(),
        _ => "a lock or thread token may be missing".into(),
    }
}

/// Sort key for deterministic diagnostic order.
pub fn sort_key(d: &Diagnostic) -> (usize, String, String) {
    (d.primary_span().map_or(usize::MAX, Span::start), d.code.clone(), d.message.clone())
}

/// The help line of a verification diagnostic, by code. Mapped Silicon errors say *what* may
/// fail; this says what usually fixes it, so every verify diagnostic carries a help line.
pub fn help_for(code: &str) -> Option<&'static str> {
    Some(match code {
        "V-POST" => "strengthen the loop invariants or intermediate assertions that lead to this postcondition, or weaken it",
        "V-PAR-POST" => "the body must establish it from the par block's precondition; add the missing facts to the per-thread contract",
        "V-PAR-PRE" => "make the state before the par block provide this for every thread (method contract or invariants)",
        "V-PRE" => "establish the callee's precondition before the call",
        "V-ASSERT" => "add the facts the assertion needs (an invariant, a contract clause or an earlier assertion)",
        "V-INV-ENTRY" => "make the invariant hold before the loop (initialise the variables it mentions)",
        "V-INV-KEEP" => "strengthen the invariant so that one iteration of the body re-establishes it",
        "V-INVARIANT" => "make the atomic block re-establish the resource invariant",
        "V-LOCK-INV" => "establish the class's lock_invariant before `unlock`/`wait` and at the end of every constructor",
        "V-SYNC" => "`lock` before `unlock`/`wait`/`notify`; `fork` a thread once before `join`, and `join` it before forking it again",
        "V-EXHALE" => "establish this before the point where it is given away",
        "V-BAR-PRE" => "the threads must reach the barrier holding what its precondition asks for",
        "V-BAR-DIVERGENT" => "a barrier must be reached by every thread of its block: move it out of the thread-dependent branch or loop, or make the condition the same for all threads",
        "V-BAR-INCONSISTENT" => "a barrier may only redistribute what all threads hand in: check its permission amounts and the facts it passes on",
        "V-PERM-WRITE" => "hold a write permission (Perm(…, write)) for the location here",
        "V-PERM-READ" => "hold a permission for the location here (Perm(…, read) or a fraction)",
        "V-UNFRAMED" => "state the permission for the location before the clause that reads it (in the same contract, or earlier)",
        "V-WELLFORMED" => "make every expression of the clause defined: indices in bounds, non-null arrays, non-zero divisors",
        "V-NULL" => "state that the array is not null (e.g. `a != null` in the contract)",
        "V-OOB" => "state the bounds of the index and the array length (e.g. `a.length == n` and `0 <= i && i < n`)",
        "V-DIV0" => "state that the divisor is not zero",
        "V-NOT-INJECTIVE" => "make the quantified locations distinct per value (or per thread), e.g. an index that is injective in the variable",
        "V-FOLD" | "V-UNFOLD" => "hold the predicate's body (fold) or the predicate itself (unfold) at this point",
        "V-WAND" => "for `create`, make the proof script establish the right side from the left side (and `use` the facts it needs); for `apply`, hold the wand and its left side",
        "V-FAIL" => "see Silicon's message in the note",
        "V-TIMEOUT" => "raise the time limit (`verify --timeout S`, `--verify-timeout S` of apply and batch; 0 for none), or help the prover: non-linear index arithmetic (i * n + j) is a common cause",
        "E-BACKEND" => "run `alpine-rs backend install`, or `alpine-rs backend doctor` to see what is missing",
        "E-INTERNAL" => "this is a bug in alpine-rs; please report it with this input (`--keep-vpr DIR` keeps the Viper encoding)",
        "E-IO" => "check the path and the permissions",
        "V-UNSAT-PRE" => "correct the precondition; write `requires false;` for a method that is meant to be unreachable, or pass --disable-sat to switch the check off",
        "V-TERMINATION" => "make the measure decrease (and stay non-negative) at every recursive call or loop iteration, or state `decreases assume;` to assume termination",
        "V-UNSUPPORTED" => "`alpine-rs verify` cannot check this construct; verify the file with VerCors instead",
        "V-BAD-INPUT" => "fix the program (name and type errors are reported before verification)",
        _ => return None,
    })
}

/// Give every diagnostic without a help line the default one of its code.
pub fn add_default_help(ds: &mut [Diagnostic]) {
    diag::add_default_help(ds, help_for);
}

#[cfg(test)]
mod help_tests {
    use super::*;

    /// Every code the verifier emits has a help line (the codes are listed by hand: a new code
    /// without one fails here once it is added to the list below).
    #[test]
    fn every_verify_code_has_a_help_line() {
        for code in [
            "V-POST",
            "V-PAR-POST",
            "V-PAR-PRE",
            "V-PRE",
            "V-ASSERT",
            "V-INV-ENTRY",
            "V-INV-KEEP",
            "V-INVARIANT",
            "V-LOCK-INV",
            "V-SYNC",
            "V-EXHALE",
            "V-BAR-PRE",
            "V-BAR-DIVERGENT",
            "V-BAR-INCONSISTENT",
            "V-PERM-WRITE",
            "V-PERM-READ",
            "V-UNFRAMED",
            "V-WELLFORMED",
            "V-NULL",
            "V-OOB",
            "V-DIV0",
            "V-NOT-INJECTIVE",
            "V-FOLD",
            "V-UNFOLD",
            "V-WAND",
            "V-FAIL",
            "V-TIMEOUT",
            "E-BACKEND",
            "E-INTERNAL",
            "E-IO",
            "V-UNSUPPORTED",
            "V-BAD-INPUT",
        ] {
            assert!(help_for(code).is_some_and(|h| !h.is_empty()), "{code}");
        }
        assert_eq!(help_for("A0001"), None);
    }

    #[test]
    fn default_help_keeps_a_specific_one() {
        let mut ds = vec![
            Diagnostic::error("V-TIMEOUT", "timed out"),
            Diagnostic::error("V-POST", "post").with_help("specific"),
        ];
        add_default_help(&mut ds);
        assert_eq!(ds[0].help.as_deref(), help_for("V-TIMEOUT"));
        assert_eq!(ds[1].help.as_deref(), Some("specific"));
    }
}

#[cfg(test)]
mod demangle_tests {
    use super::demangle;

    #[test]
    fn viper_identifiers_become_the_pvl_names_they_stand_for() {
        let names = vec![("C_sum".to_string(), "sum".to_string()), ("x_1".into(), "x".into())];
        assert_eq!(
            demangle(&names, "access this.C_sum and x_1 + x_10 (C_sum_1)"),
            "access this.sum and x + x_10 (C_sum_1)"
        );
        assert_eq!(demangle(&[], "this.C_sum"), "this.C_sum");
    }
}
