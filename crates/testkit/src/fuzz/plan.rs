//! `apply` requests for one input: every registered optimization at the line of every site
//! (and at random lines), with random parameters drawn from each parameter's kind in the
//! registry — counts of 0, 1, 2^31, 2^63, 2^64 and negative ones, names of the program and
//! unknown ones, expressions with edge-case numbers — and the file's own annotations with
//! random overrides.

use super::gen::{names, Rng, NUMBERS};
use super::targets::ApplyRequest;
use alpine_rs::analyze::sites::sites;
use alpine_rs::cli::apply::StepSpec;
use alpine_rs::diag::SourceFile;
use alpine_rs::front::ParseOptions;
use alpine_rs::transforms::params::{Kind, Param, Raw};
use alpine_rs::transforms::{registry, Opt};

const COUNTS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "4",
    "7",
    "-1",
    "-2147483648",
    "2147483648",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "x",
    "",
];

const EXPRS: &[&str] = &["n / 2", "-n", "n * n", "a[0]", "tid + 1", "(", "", "N - 1", "1 \\ 2"];

/// A random expression: a number (often an edge case), a name of the program, or a form.
fn expr(rng: &mut Rng, names: &[String]) -> String {
    match rng.below(3) {
        0 => rng.pick(NUMBERS).to_string(),
        1 if !names.is_empty() => rng.pick(names).clone(),
        _ => rng.pick(EXPRS).to_string(),
    }
}

/// A random value for `p`, or `None` to leave it out.
fn value(rng: &mut Rng, p: &Param, names: &[String]) -> Option<Raw> {
    let keep = if p.required { 12 } else { 5 };
    if rng.below(14) >= keep {
        return None;
    }
    let name = |rng: &mut Rng| {
        if names.is_empty() || rng.below(8) == 0 {
            "zz".to_string()
        } else {
            rng.pick(names).clone()
        }
    };
    Some(match p.kind {
        Kind::Switch => Raw::Switch(true),
        Kind::Count => Raw::Text(rng.pick(COUNTS).to_string()),
        Kind::Name => Raw::Text(name(rng)),
        Kind::Choice(cs) => Raw::Text(match rng.below(5) {
            0 => "Q".into(),
            1 => cs[rng.below(cs.len())].word.into(),
            _ => cs[rng.below(cs.len())].value.into(),
        }),
        Kind::Expr | Kind::Size => Raw::Text(expr(rng, names)),
        Kind::Path => Raw::Text(name(rng)),
        Kind::List { .. } => {
            let items: Vec<String> = (0..1 + rng.below(3)).map(|_| expr(rng, names)).collect();
            Raw::Text(items.join("; "))
        }
        Kind::Pair { .. } => Raw::Text(format!("{}, {}", expr(rng, names), expr(rng, names))),
    })
}

/// `opt` at `at` with random parameters.
fn step(rng: &mut Rng, opt: Opt, at: String, names: &[String]) -> StepSpec {
    let params = opt
        .meta()
        .params
        .iter()
        .filter_map(|p| value(rng, p, names).map(|v| (p.flag.to_string(), v)))
        .collect();
    StepSpec { opt: opt.meta().name.to_string(), at, params }
}

/// The `apply` requests for `src`: each optimization at the line of each site (sometimes with
/// the keyword's column), `random_lines` random lines for a random optimization, and the
/// file's own annotations (sometimes with overrides, sometimes with `--keep-going`). At most
/// `max` requests (the site requests first, in source order).
pub fn apply_requests(
    rng: &mut Rng,
    src: &str,
    random_lines: usize,
    max: usize,
) -> Vec<ApplyRequest> {
    let parsed = registry::parse(src, &ParseOptions::default());
    let names = names(src);
    let file = SourceFile::new("input.pvl", src);
    let mut out = Vec::new();
    let one = |s: StepSpec| ApplyRequest { steps: vec![s], ..ApplyRequest::default() };
    if !parsed.has_errors() {
        for site in sites(&parsed.program) {
            let (line, col) = file.line_col(site.keyword.start());
            for &opt in registry::ALL {
                let at = if rng.below(4) == 0 {
                    format!("line:{line}:{col}")
                } else {
                    format!("line:{line}")
                };
                out.push(one(step(rng, opt, at, &names)));
            }
        }
    }
    let lines = src.lines().count();
    for _ in 0..random_lines {
        let opt = *rng.pick(registry::ALL);
        let at = match rng.below(8) {
            0 => "line:0".to_string(),
            1 => format!("line:{}", lines + 1 + rng.below(3)),
            2 => "line:18446744073709551616".to_string(),
            3 => format!("line:{}:{}", 1 + rng.below(lines.max(1)), rng.below(200)),
            _ => format!("line:{}", 1 + rng.below(lines.max(1))),
        };
        out.push(one(step(rng, opt, at, &names)));
    }
    // Two steps in one run: the second's line refers to the input, not to the first's output.
    if out.len() >= 2 && rng.below(2) == 0 {
        let a = out[rng.below(out.len())].steps[0].clone();
        let b = out[rng.below(out.len())].steps[0].clone();
        out.push(ApplyRequest {
            steps: vec![a, b],
            keep_going: rng.below(2) == 0,
            ..ApplyRequest::default()
        });
    }
    // The file's own annotations, with an override of a parameter the annotation cannot state.
    let mut own = ApplyRequest { keep_going: rng.below(2) == 0, ..ApplyRequest::default() };
    if rng.below(3) == 0 {
        let opt = *rng.pick(registry::ALL);
        if let Some(p) = opt.meta().params.iter().find(|p| !p.in_annotation) {
            if let Some(v) = value(rng, &Param { required: true, ..*p }, &names) {
                own.overrides.push((p.flag.to_string(), v));
            }
        }
    }
    out.push(own);
    if out.len() > max {
        // Keep the annotation request (last) and the first `max - 1` others.
        let last = out.pop().expect("non-empty");
        out.truncate(max.saturating_sub(1));
        out.push(last);
    }
    out
}
