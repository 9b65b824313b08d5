//! The registry and its one list per optimization: the constructs an annotation may annotate are
//! the constructs `--at` selects; every optimization's module documentation shows an example
//! that the tool reproduces; the application order comes from the registry alone.

mod common;

use alpine_rs::analyze::sites::{sites, SiteKind};
use alpine_rs::front::ParseOptions;
use alpine_rs::transforms::driver::{apply, resolve_at, At, DriverOptions};
use alpine_rs::transforms::params::Kind;
use alpine_rs::transforms::registry::{self, ALL};
use alpine_rs::transforms::{MethodPar, Opt};
use common::root;

/// Operands that read for every parameter of `opt`'s annotation (whatever they would mean).
fn operands(opt: Opt) -> String {
    let mut out = Vec::new();
    for p in opt.meta().params.iter().filter(|p| p.in_annotation) {
        out.push(match p.kind {
            Kind::Count => "2".to_string(),
            Kind::Name => "i".to_string(),
            Kind::Choice(c) => c[0].word.to_string(),
            Kind::Expr | Kind::Size => "2".to_string(),
            Kind::Path => "a".to_string(),
            Kind::List { .. } => "tid".to_string(),
            Kind::Pair { .. } => "n n".to_string(),
            Kind::Switch => continue,
        });
    }
    out.join(" ")
}

/// A method with one `par` block holding one loop, the annotation `ann` on the construct `at`.
fn program(ann: &str, at: SiteKind) -> (String, usize) {
    let slot = |k: SiteKind| if k == at { ann } else { "" };
    let text = format!(
        "class C {{\n  {}\n  requires n > 0;\n  void m(int n, int[] a) {{\n    {}\n    par lanes (int tid = 0 .. n)\n    {{\n      int i = 0;\n      {}\n      loop_invariant 0 <= i;\n      while (i < 2) {{ i = i + 1; }}\n    }}\n  }}\n}}\n",
        slot(SiteKind::Method),
        slot(SiteKind::Par),
        slot(SiteKind::Loop),
    );
    // The line of the construct's keyword (1-based).
    let keyword = match at {
        SiteKind::Method => "void m(",
        SiteKind::Par => "par lanes",
        SiteKind::Loop => "while (",
    };
    let line = text.lines().position(|l| l.contains(keyword)).expect("keyword") + 1;
    (text, line)
}

/// One list of site kinds per optimization: an annotation on a construct is accepted exactly
/// when the construct's kind is listed, and `--at` on a listed construct selects that construct
/// (or, for an optimization whose method annotation means the method's `par` block, that
/// block); `--at` never selects a construct of a kind that is not listed.
#[test]
fn annotation_placement_and_at_agree() {
    let kinds = [SiteKind::Method, SiteKind::Par, SiteKind::Loop];
    for opt in ALL.iter().copied() {
        let meta = opt.meta();
        for kind in kinds {
            let ann = format!("gpuopt {} {};", meta.keyword, operands(opt));
            let (text, line) = program(&ann, kind);
            let parsed = registry::parse(&text, &ParseOptions::default());
            let placed = !parsed.diagnostics.iter().any(|d| d.code == "A0004");
            let listed = meta.sites.contains(&kind);
            assert!(
                !parsed.has_errors() || !placed,
                "{}: {ann} on a {kind:?} does not read:\n{:?}",
                meta.name,
                parsed.diagnostics
            );
            assert_eq!(placed, listed, "{}: annotation on a {kind:?}", meta.name);
            let (plain, _) = program("", kind);
            let parsed = registry::parse(&plain, &ParseOptions::default());
            let resolved = resolve_at(&plain, &parsed, opt, &At { line, col: None });
            let by_par = kind == SiteKind::Method && meta.method_par != MethodPar::None;
            match resolved {
                Ok(site) if listed => {
                    let expected = if by_par { SiteKind::Par } else { kind };
                    assert_eq!(site.kind, expected, "{}: --at on a {kind:?}", meta.name);
                }
                Ok(site) => {
                    assert_ne!(site.kind, kind, "{}: --at on a {kind:?}", meta.name);
                    assert!(meta.sites.contains(&site.kind), "{}", meta.name);
                }
                Err(d) if listed => panic!("{}: --at on a {kind:?}: {d:?}", meta.name),
                Err(d) => assert_eq!(d.code, "A0005"),
            }
        }
    }
}

/// The application order is the registry's: on a file with one annotation of every kind, the
/// driver consumes them in `ALL`'s order (each step's diagnostics name the file after it).
#[test]
fn names_and_order_come_from_the_registry() {
    // Alpinist's six keep the paper's order; an optimization added later may stand anywhere.
    let six = ["linearize", "fuse", "merge", "prefetch", "tile", "unroll"];
    let names: Vec<&str> = ALL.iter().map(|o| o.meta().name).filter(|n| six.contains(n)).collect();
    assert_eq!(names, six);
    for (i, opt) in ALL.iter().enumerate() {
        assert_eq!(registry::rank(*opt), i);
        assert_eq!(registry::lookup(opt.meta().name), Some(*opt));
        assert_eq!(registry::lookup(opt.meta().keyword), Some(*opt));
        // Each annotation operand has its place in the syntax line.
        for p in opt.meta().params.iter().filter(|p| p.in_annotation) {
            assert!(!p.syntax.is_empty(), "{}: {}", opt.meta().name, p.key);
        }
    }
    assert_eq!(registry::lookup("vectorize"), None);
}

/// The code blocks after `Before:` and ``After `alpine-rs apply`:`` in the module documentation.
fn doc_example(module: &str) -> (String, String) {
    let text = std::fs::read_to_string(module).expect("module file");
    let doc: Vec<&str> = text
        .lines()
        .take_while(|l| l.starts_with("//!"))
        .map(|l| l.strip_prefix("//! ").unwrap_or(l.trim_start_matches("//!")))
        .collect();
    let block = |after: &str| -> String {
        let start = doc
            .iter()
            .position(|l| l.starts_with(after))
            .unwrap_or_else(|| panic!("{module}: no `{after}` example"));
        let body: Vec<&str> =
            doc[start + 2..].iter().take_while(|l| !l.starts_with("```")).copied().collect();
        format!("{}\n", body.join("\n"))
    };
    (block("Before:"), block("After `alpine-rs apply`:"))
}

/// Every optimization's documentation opens with an example the tool reproduces.
#[test]
fn module_examples_are_what_apply_does() {
    for opt in ALL.iter().copied() {
        let module = root().join(format!("transforms/{}/mod.rs", opt.meta().name));
        let (before, after) = doc_example(module.to_str().unwrap());
        let parsed = registry::parse(&before, &ParseOptions::default());
        let all = sites(&parsed.program);
        let kinds: Vec<&str> =
            all.iter().flat_map(|s| &s.annotations).map(|a| a.keyword.name.as_str()).collect();
        assert_eq!(
            kinds.iter().filter_map(|k| registry::lookup(k)).collect::<Vec<_>>(),
            vec![opt],
            "{}: the example must carry one annotation of its optimization",
            opt.meta().name
        );
        let res = apply("example.pvl", &before, &DriverOptions::default());
        assert_eq!(res.exit_code(), 0, "{}: {:?}", opt.meta().name, res.reports);
        assert_eq!(res.output, after, "{}: the documented output is stale", opt.meta().name);
    }
}

/// The list of batch step keys in docs/commands/batch.md is the registry's parameter keys (plus
/// `opt` and `at`).
#[test]
fn documented_step_keys_are_the_schema_keys() {
    let doc = std::fs::read_to_string(root().join("docs/commands/batch.md")).expect("batch docs");
    let start = doc
        .find("Step keys are apply's flags (")
        .expect("the step keys sentence in docs/commands/batch.md");
    let list = &doc[start..];
    let list = &list[list.find('(').unwrap() + 1..list.find(')').unwrap()];
    let mut documented: Vec<String> =
        list.split(',').map(|k| k.trim().trim_matches('`').to_string()).collect();
    documented.sort();
    let mut keys: Vec<String> = ["opt", "at"].iter().map(|k| k.to_string()).collect();
    for opt in ALL {
        for p in opt.meta().params {
            if !keys.iter().any(|k| k == p.key) {
                keys.push(p.key.to_string());
            }
        }
    }
    keys.sort();
    assert_eq!(documented, keys);
}

/// Each optimization's code range (`Meta::codes`) holds registered codes, and every registered
/// optimization code (`A100`–`A999`) lies in the range of exactly one optimization.
#[test]
fn code_ranges_are_the_registry_s() {
    // Optimization codes have three digits (A107); general ones four (A0001, batch's A0701).
    let number =
        |c: &str| c.strip_prefix('A').filter(|n| n.len() == 3).and_then(|n| n.parse::<u16>().ok());
    let registered: Vec<u16> = alpine_rs::codes::all()
        .filter_map(|c| number(c.code))
        .filter(|n| (100..1000).contains(n))
        .collect();
    for opt in ALL {
        let base = opt.meta().codes;
        assert!(
            registered.iter().any(|n| n / 100 * 100 == base),
            "{}: no code registered in A{}..A{}",
            opt.meta().name,
            base + 1,
            base + 99
        );
    }
    for n in &registered {
        let owners: Vec<&str> =
            ALL.iter().filter(|o| n / 100 * 100 == o.meta().codes).map(|o| o.meta().name).collect();
        assert_eq!(owners.len(), 1, "A{n} belongs to {owners:?}");
    }
}
