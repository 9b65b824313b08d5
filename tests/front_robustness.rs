//! Robustness of the front end on malformed input.
//!
//! More than 10 000 inputs, generated deterministically (fixed seeds, a small PRNG):
//! token deletions, duplications, swaps, replacements and insertions in corpus and fixture
//! files, truncations, random bytes, random token soup, and deeply nested or very long
//! constructs. For each input `parse`:
//! * must not panic (each input runs under `catch_unwind`; the failure shows the input);
//! * must finish within 100 ms (timed per input, debug build included);
//! * must leave an AST the printer can print and diagnostics the renderer can render;
//! * and when it reports no error, the canonical print must parse back to the same AST
//!   (the R-canon property on inputs nobody wrote by hand).
//!
//! `parse_expr_text` gets the same treatment with expression-shaped inputs.
//! Failing inputs are also written to `$CARGO_TARGET_TMPDIR/robustness/` for reproduction.
//! The generators are shared with the fuzz suites (`tests/common/fuzz/gen.rs`).

mod common;
use testkit::fuzz;

use alpine_rs::diag::{render_plain, SourceFile};
use alpine_rs::front::parser::parse_expr_text;
use alpine_rs::front::printer::{print_expr, print_program};
use alpine_rs::front::{parse, Dialect, DialectChoice, ParseOptions};
use fuzz::gen::{mutate, panic_text, random_bytes, show, token_soup, Rng};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_millis(100);
const MAX_REPORTED: usize = 10;

fn sources() -> Vec<(String, String)> {
    let root = common::root();
    let mut files = common::files(&common::corpus_dir(), "pvl");
    files.extend(common::files(&root.join("fixtures/syntax"), "pvl"));
    assert!(files.len() >= 90, "corpus or fixtures missing");
    files
        .into_iter()
        .map(|p| {
            let name = p.strip_prefix(root).unwrap().display().to_string();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// Run `f` and time it. A run over the limit is repeated (up to five more times, spread over
/// about a second) and the fastest time counts: the machine is shared, and a descheduled
/// thread is not a slow parser. A parser that is really slow on an input is slow every time.
fn timed<T>(mut f: impl FnMut() -> T) -> (T, Duration) {
    let start = Instant::now();
    let mut r = f();
    let mut best = start.elapsed();
    for attempt in 0..5 {
        if best <= LIMIT {
            break;
        }
        std::thread::sleep(Duration::from_millis(20 << attempt));
        let start = Instant::now();
        r = f();
        best = best.min(start.elapsed());
    }
    (r, best)
}

#[derive(Default)]
struct Harness {
    inputs: usize,
    /// Inputs without errors, whose canonical print was checked to parse back.
    round_trips: usize,
    failures: Vec<String>,
    slowest: Duration,
}

impl Harness {
    fn fail(&mut self, what: &str, label: &str, input: &str) {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("robustness");
        let file = dir.join(format!("{}-{}.pvl", label.replace(['/', ' '], "_"), self.inputs));
        let saved = std::fs::create_dir_all(&dir)
            .and_then(|_| std::fs::write(&file, input))
            .map_or(String::new(), |_| format!("\n  saved as {}", file.display()));
        if self.failures.len() < MAX_REPORTED {
            self.failures.push(format!("{what}\n  input ({label}): {}{saved}", show(input)));
        } else if self.failures.len() == MAX_REPORTED {
            self.failures.push("… (further failures not shown)".into());
        }
    }

    /// The outcome of a guarded step: its result, or `None` once its panic is recorded as a
    /// failure (`what` names the step).
    fn unless_panicked<T>(
        &mut self,
        (what, label, input): (&str, &str, &str),
        r: std::thread::Result<T>,
    ) -> Option<T> {
        r.map_err(|e| self.fail(&format!("{what} panicked: {}", panic_text(&*e)), label, input))
            .ok()
    }

    /// `f()` under `catch_unwind` (see [`Harness::unless_panicked`]).
    fn guarded<T>(&mut self, step: (&str, &str, &str), f: impl FnOnce() -> T) -> Option<T> {
        let r = catch_unwind(AssertUnwindSafe(f));
        self.unless_panicked(step, r)
    }

    /// A parse `f()` of `input`, guarded and timed: a parse over the limit is a failure too.
    fn parse_timed<T>(&mut self, step: (&str, &str, &str), f: impl Fn() -> T) -> Option<T> {
        self.inputs += 1;
        let (parsed, took) = timed(|| catch_unwind(AssertUnwindSafe(&f)));
        self.slowest = self.slowest.max(took);
        let parsed = self.unless_panicked(step, parsed)?;
        let (what, label, input) = step;
        if took > LIMIT {
            self.fail(&format!("{what} took {took:?} (limit {LIMIT:?})"), label, input);
        }
        Some(parsed)
    }

    /// Parse one program text and check everything we can about the outcome.
    fn program(&mut self, label: &str, input: &str, choice: DialectChoice) {
        let opts = ParseOptions { dialect: choice };
        let Some(parsed) = self.parse_timed(("parse", label, input), || parse(input, &opts)) else {
            return;
        };
        let file = SourceFile::new("input.pvl", input);
        let rendering = || render_plain(&[&file], &parsed.diagnostics);
        if self.guarded(("rendering", label, input), rendering).is_none() {
            return;
        }
        let printing = || print_program(&parsed.program, parsed.dialect);
        let Some(printed) = self.guarded(("printing", label, input), printing) else {
            return;
        };
        if parsed.has_errors() {
            return;
        }
        // R-canon on an input that happens to be valid.
        self.round_trips += 1;
        let again_opts = ParseOptions {
            dialect: match parsed.dialect {
                Dialect::V1 => DialectChoice::V1,
                Dialect::V2 => DialectChoice::V2,
            },
        };
        let again = parse(&printed, &again_opts);
        if again.has_errors() || again.program != parsed.program {
            let why = if again.has_errors() {
                let f = SourceFile::new("print", printed.as_str());
                render_plain(&[&f], &again.diagnostics)
            } else {
                "another AST".to_string()
            };
            self.fail(
                &format!("the canonical print does not round-trip ({why}):\n{printed}"),
                label,
                input,
            );
        }
    }

    fn expression(&mut self, label: &str, input: &str, dialect: Dialect) {
        let parsing = || parse_expr_text(input, dialect);
        let Some(parsed) = self.parse_timed(("parse_expr_text", label, input), parsing) else {
            return;
        };
        if let Ok(e) = parsed {
            let printing = || print_expr(&e, dialect);
            let Some(printed) = self.guarded(("printing", label, input), printing) else {
                return;
            };
            self.round_trips += 1;
            match parse_expr_text(&printed, dialect) {
                Ok(e2) if e2 == e => {}
                _ => self.fail(
                    &format!("expression print {printed:?} does not round-trip"),
                    label,
                    input,
                ),
            }
        }
    }

    fn finish(self, group: &str, min_inputs: usize) {
        eprintln!(
            "{group}: {} inputs, {} valid ones round-tripped, slowest {:?}",
            self.inputs, self.round_trips, self.slowest
        );
        assert!(
            self.failures.is_empty(),
            "{group}: {} failure(s):\n\n{}",
            self.failures.len(),
            self.failures.join("\n\n")
        );
        assert!(self.inputs >= min_inputs, "{group}: only {} inputs", self.inputs);
    }
}

fn choice(rng: &mut Rng) -> DialectChoice {
    *rng.pick(&[DialectChoice::Auto, DialectChoice::V1, DialectChoice::V2])
}

/// 7 000 inputs: one to three random edits of every corpus and fixture file in turn.
#[test]
fn mutated_corpus_files() {
    let mut rng = Rng(0x5eed_0001);
    let mut h = Harness::default();
    let srcs = sources();
    let mut i = 0;
    while h.inputs < 7000 {
        let (name, src) = &srcs[i % srcs.len()];
        i += 1;
        let mut m = mutate(&mut rng, src);
        for _ in 0..rng.below(3) {
            m = mutate(&mut rng, &m);
        }
        let c = choice(&mut rng);
        h.program(&format!("mutation of {name}"), &m, c);
    }
    // Many mutations keep the program valid (a swapped `+`, a duplicated `!`, …); those test
    // the printer too.
    assert!(h.round_trips > 500, "only {} valid mutants", h.round_trips);
    h.finish("mutated corpus files", 7000);
}

/// 3 000 inputs: random bytes and random token soup.
#[test]
fn random_bytes_and_token_soup() {
    let mut rng = Rng(0x5eed_0002);
    let mut h = Harness::default();
    for _ in 0..1500 {
        let s = random_bytes(&mut rng, 400);
        let c = choice(&mut rng);
        h.program("random bytes", &s, c);
    }
    for _ in 0..1500 {
        let s = token_soup(&mut rng, 300);
        let c = choice(&mut rng);
        h.program("token soup", &s, c);
    }
    h.finish("random bytes and token soup", 3000);
}

/// Deep nesting and long chains of every recursive construct, far past the parser's depth
/// limit, in statement, member, type and expression position.
#[test]
fn deep_and_long_constructs() {
    let mut h = Harness::default();
    // 1.5 times the parser's depth limit (200): deep enough, small enough to time.
    let n = 300;
    let in_clause = |e: String| format!("class A {{ requires {e}; void m(); }}");
    let in_body = |s: String| format!("class A {{ void m() {{ {s} }} }}");
    let in_field = |t: String| format!("class A {{ {t} f; }}");
    // `open` n times, `mid`, `close` n times.
    let nest =
        |open: &str, mid: &str, close: &str| format!("{}{mid}{}", open.repeat(n), close.repeat(n));
    let cases: Vec<(&str, String)> = vec![
        ("parentheses", in_clause(nest("(", "x", ")"))),
        ("open parentheses", in_clause("(".repeat(n))),
        ("brackets", in_clause("[".repeat(n))),
        ("negations", in_clause(nest("!", "x", ""))),
        ("minus signs", in_clause(nest("- ", "x", ""))),
        ("sum", in_clause(nest("x + ", "x", ""))),
        ("conjunction", in_clause(nest("a && ", "x", ""))),
        ("implications", in_clause(nest("a ==> ", "x", ""))),
        ("cons", in_clause(nest("x :: ", "s", ""))),
        ("ternaries", in_clause(nest("a ? b : ", "x", ""))),
        ("ternary conditions", in_clause(nest("a ? ", "x", ""))),
        ("labels", in_clause(nest("L: ", "x", ""))),
        ("unfolding", in_clause(nest("unfolding p in ", "x", ""))),
        ("old", in_clause(nest("\\old(", "x", ")"))),
        ("calls", in_clause(nest("f(", "x", ")"))),
        ("indices", in_clause(format!("a{}", "[0]".repeat(n)))),
        ("fields", in_clause(format!("a{}", ".f".repeat(n)))),
        ("nested index", in_clause(nest("a[", "0", "]"))),
        ("quantifiers", in_clause("(\\forall int k; true; ".repeat(n))),
        ("lengths", in_clause(nest("|", "s", "|"))),
        ("sets", in_clause(nest("{", "1", "}"))),
        ("scales", in_clause(nest("[1\\2]", "Perm(x, 1)", ""))),
        ("new arrays", in_clause(nest("new int[", "1", "]"))),
        ("blocks", in_body(nest("{", "", "}"))),
        ("open blocks", "{".repeat(n)),
        ("ifs", in_body(nest("if (a) ", "x = 1;", ""))),
        ("else ifs", in_body(format!("if (a) x = 1;{}", " else if (a) x = 1;".repeat(n)))),
        ("whiles", in_body(nest("while (a) ", "x = 1;", ""))),
        ("loops with invariants", in_body(nest("loop_invariant a; while (a) ", "x = 1;", ""))),
        ("ghosts", in_body(nest("ghost ", "x = 1;", ""))),
        ("pars", in_body(nest("par (int t = 0 .. n) {", "", "}"))),
        ("par arms", in_body(format!("par {{ }}{}", " and { }".repeat(n)))),
        ("region contracts", in_body("requires x; par { }".repeat(n))),
        ("barriers", in_body("barrier(b) { requires x; }".repeat(n))),
        ("annotations", in_body("gpuopt loop_unroll i 2;".repeat(n))),
        (
            "prefetch array",
            format!("class A {{ gpuopt glob_to_reg a{} t; void m(); }}", "[0]".repeat(n)),
        ),
        (
            "prefetch locations",
            format!("class A {{ gpuopt glob_to_reg a{}; void m(); }}", " t".repeat(n)),
        ),
        ("generic types", in_field(nest("seq<", "int", ">"))),
        ("open generic types", in_field("map<int, ".repeat(n))),
        ("class type arguments", in_field(nest("Foo<", "int", ""))),
        ("array types", in_field(format!("int{}", "[]".repeat(n)))),
        ("sized array types", in_body(format!("int{} a;", "[1]".repeat(n)))),
        ("classes", "class A { ".repeat(n)),
        ("comments", "/* */ // x\n".repeat(n)),
        ("unterminated comment", format!("class A {{ {}", "/* ".repeat(n))),
        ("tex comments", "# a # ".repeat(n)),
        ("unterminated literal", format!("\"{}", "\\".repeat(n))),
        ("backticks", "`".repeat(n)),
        ("errors", in_body("x = ;".repeat(n))),
        ("stray braces", "}".repeat(n)),
        ("semicolons", ";".repeat(n)),
        ("long identifier", "a".repeat(100 * n)),
        ("long number", "9".repeat(100 * n)),
        ("for headers", in_body(format!("for ({}; ; ) x = 1;", "i = 1, ".repeat(n)))),
        ("ranged for detection", in_body(format!("for ({} .. 1) x = 1;", "(".repeat(n)))),
    ];
    for (label, src) in &cases {
        for c in [DialectChoice::Auto, DialectChoice::V2] {
            h.program(label, src, c);
        }
    }
    h.finish("deep and long constructs", 2 * cases.len());
}

/// 2 500 inputs for `parse_expr_text`: clause expressions of the corpus, mutated, and
/// expression-shaped token soup.
#[test]
fn expression_text() {
    let mut rng = Rng(0x5eed_0003);
    let mut h = Harness::default();
    // Expression texts: everything after a clause keyword up to its `;`, from every source.
    let mut exprs = Vec::new();
    for (_, src) in sources() {
        for line in src.lines() {
            let t = line.trim();
            for kw in ["requires ", "ensures ", "context ", "loop_invariant ", "assert "] {
                if let Some(rest) = t.strip_prefix(kw) {
                    if let Some(e) = rest.strip_suffix(';') {
                        exprs.push(e.to_string());
                    }
                }
            }
        }
    }
    assert!(exprs.len() > 200, "too few clause expressions: {}", exprs.len());
    for (i, e) in exprs.iter().enumerate() {
        let d = if i % 2 == 0 { Dialect::V1 } else { Dialect::V2 };
        h.expression("clause expression", e, d);
    }
    while h.inputs < 2500 {
        let d = if rng.below(2) == 0 { Dialect::V1 } else { Dialect::V2 };
        if rng.below(3) == 0 {
            let s = token_soup(&mut rng, 30);
            h.expression("expression soup", &s, d);
        } else {
            let e = rng.pick(&exprs).clone();
            let m = mutate(&mut rng, &e);
            h.expression("mutated expression", &m, d);
        }
    }
    assert!(h.round_trips > 500, "only {} valid expressions", h.round_trips);
    h.finish("expression text", 2500);
}

/// The parser runs on its own large stack, so even a caller with a small stack (here 256 KiB,
/// an eighth of a test thread's) can parse inputs at the nesting limit.
#[test]
fn parse_does_not_depend_on_the_callers_stack() {
    let blocks = format!("class A {{ void m() {{ {}{} }} }}", "{".repeat(300), "}".repeat(300));
    let whiles = format!("class A {{ void m() {{ {}x = 1; }} }}", "while (a) ".repeat(300));
    let parens =
        format!("class A {{ requires {}x{}; void m(); }}", "(".repeat(300), ")".repeat(300));
    let h = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            [blocks, whiles, parens]
                .iter()
                .map(|src| parse(src, &ParseOptions::default()).has_errors())
                .collect::<Vec<_>>()
        })
        .unwrap();
    // Each input is nested past the limit: refused with "nesting too deep", not a crash.
    assert_eq!(h.join().unwrap(), vec![true, true, true]);
}
