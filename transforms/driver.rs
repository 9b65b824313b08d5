//! Applying several optimizations in one run (optimizations.md §8).
//!
//! Each step: pick the next request, check applicability and build the edit set (the
//! optimization's job), apply it, and re-parse, so every step works on the real output of the
//! previous one. In-source annotations are applied by kind in Alpinist's order (linearize → fuse
//! → merge → prefetch → tile → unroll), within a kind in source order with inner loops first; the
//! consumed annotation is removed before the optimization runs. Command-line steps run in
//! command-line order; their `--at` lines always refer to the input file.

use super::{run, Ctx, Params};
use crate::analyze::names::NameGen;
use crate::analyze::sites::{check_annotations, sites, Site, SiteKind};
use crate::diag::{Diagnostic, SourceFile};
use crate::edit::{removal_span, EditSet, Layout};
use crate::front::ast::{Annotation, OptKind, Program};
use crate::front::dialect::{Dialect, DialectChoice};
use crate::front::span::{LineIndex, Span};
use crate::front::{parse, ParseOptions, Parsed};

/// Where a command-line step applies.
#[derive(Clone, Debug)]
pub struct At {
    pub line: usize,
    pub col: Option<usize>,
}

impl std::str::FromStr for At {
    type Err = String;
    fn from_str(s: &str) -> Result<At, String> {
        let rest = s
            .strip_prefix("line:")
            .ok_or_else(|| format!("`{s}`: expected line:N or line:N:COL"))?;
        let mut parts = rest.split(':');
        let line = parts
            .next()
            .and_then(|p| p.parse::<usize>().ok())
            .filter(|l| *l > 0)
            .ok_or_else(|| format!("`{s}`: the line must be a positive number"))?;
        let col = match parts.next() {
            Some(c) => Some(
                c.parse::<usize>()
                    .map_err(|_| format!("`{s}`: the column must be a number"))?,
            ),
            None => None,
        };
        if parts.next().is_some() {
            return Err(format!("`{s}`: expected line:N or line:N:COL"));
        }
        Ok(At { line, col })
    }
}

/// One command-line optimization request.
#[derive(Clone, Debug)]
pub struct CliStep {
    pub params: Params,
    pub at: At,
}

#[derive(Clone, Debug, Default)]
pub struct DriverOptions {
    pub parse: ParseOptions,
    pub timeout_ms: u32,
    /// Skip refused steps and apply the rest (the exit code is still 1).
    pub keep_going: bool,
    /// Command-line steps; empty means: apply the file's own annotations.
    pub steps: Vec<CliStep>,
}

/// Diagnostics together with the text their spans refer to.
#[derive(Clone, Debug)]
pub struct Report {
    pub file: SourceFile,
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Clone, Debug)]
pub struct DriverResult {
    /// The optimized text (the input unchanged if nothing applied, or if a step was refused
    /// without `--keep-going`).
    pub output: String,
    pub reports: Vec<Report>,
    pub applied: usize,
    pub refused: usize,
    /// Bad input (parse error, misplaced annotation, bad `--at`): exit 2.
    pub bad_input: bool,
}

impl DriverResult {
    pub fn exit_code(&self) -> u8 {
        if self.bad_input {
            2
        } else if self.refused > 0 {
            1
        } else {
            0
        }
    }

    pub fn diagnostics(&self) -> impl Iterator<Item = (&SourceFile, &Diagnostic)> {
        self.reports
            .iter()
            .flat_map(|r| r.diagnostics.iter().map(move |d| (&r.file, d)))
    }
}

fn kind_rank(k: OptKind) -> usize {
    match k {
        OptKind::Linearize => 0,
        OptKind::Fuse => 1,
        OptKind::Merge => 2,
        OptKind::Prefetch => 3,
        OptKind::Tile => 4,
        OptKind::Unroll => 5,
    }
}

/// Parse and run the front checks; `Err` holds the diagnostics of bad input.
pub fn front(name: &str, src: &str, opts: &ParseOptions) -> Result<Parsed, Report> {
    let parsed = parse(src, opts);
    let mut diags = parsed.diagnostics.clone();
    if !parsed.has_errors() {
        diags.extend(check_annotations(&parsed.program));
    }
    if diags.iter().any(|d| d.is_error()) {
        return Err(Report {
            file: SourceFile::new(name, src),
            diagnostics: diags,
        });
    }
    Ok(parsed)
}

/// Run the optimizations on `src` (named `name` in diagnostics).
pub fn apply(name: &str, src: &str, opts: &DriverOptions) -> DriverResult {
    let mut res = DriverResult {
        output: src.to_string(),
        reports: Vec::new(),
        applied: 0,
        refused: 0,
        bad_input: false,
    };
    let parsed = match front(name, src, &opts.parse) {
        Ok(p) => p,
        Err(r) => {
            res.reports.push(r);
            res.bad_input = true;
            return res;
        }
    };
    let warnings: Vec<Diagnostic> = parsed
        .diagnostics
        .iter()
        .filter(|d| !d.is_error())
        .cloned()
        .collect();
    if !warnings.is_empty() {
        res.reports.push(Report {
            file: SourceFile::new(name, src),
            diagnostics: warnings,
        });
    }
    let mut names = NameGen::for_text(src);
    // Outputs are written in the input's dialect, so they are read back in it (which also
    // spares the dialect scan of every intermediate text).
    let reparse = ParseOptions {
        dialect: match parsed.dialect {
            Dialect::V1 => DialectChoice::V1,
            Dialect::V2 => DialectChoice::V2,
        },
    };
    let mut state = State {
        name: name.to_string(),
        original: src.to_string(),
        text: src.to_string(),
        parsed,
        reparse,
        step: 0,
    };
    if opts.steps.is_empty() {
        apply_annotations(&mut state, &mut names, opts, &mut res);
    } else {
        apply_cli_steps(&mut state, &mut names, opts, &mut res);
    }
    if res.refused == 0 || opts.keep_going {
        res.output = state.text;
    }
    res
}

struct State {
    name: String,
    original: String,
    text: String,
    parsed: Parsed,
    /// Options for parsing intermediate texts.
    reparse: ParseOptions,
    step: usize,
}

impl State {
    fn file(&self) -> SourceFile {
        let name = if self.text == self.original || self.step == 0 {
            self.name.clone()
        } else {
            format!("{} (after step {})", self.name, self.step)
        };
        SourceFile::new(name, self.text.clone())
    }
}

/// The annotations still to apply, in application order.
fn pending(parsed: &Parsed, skip: &[usize]) -> Vec<(Site, Annotation)> {
    let mut v: Vec<(Site, Annotation)> = sites(&parsed.program)
        .into_iter()
        .flat_map(|s| {
            s.annotations
                .clone()
                .into_iter()
                .map(move |a| (s.clone(), a))
        })
        .filter(|(_, a)| !skip.contains(&a.span.start()))
        .collect();
    v.sort_by_key(|(s, a)| {
        (
            kind_rank(a.kind.opt()),
            std::cmp::Reverse(s.depth),
            a.span.lo,
        )
    });
    v
}

fn apply_annotations(
    st: &mut State,
    names: &mut NameGen,
    opts: &DriverOptions,
    res: &mut DriverResult,
) {
    // Offsets (in the current text) of annotations that were refused: they stay in place.
    let mut refused: Vec<usize> = Vec::new();
    let mut rounds = true;
    // Each step consumes or skips one annotation; the bound guards against a step that would
    // re-create annotations forever.
    for _ in 0..10_000 {
        let pend = pending(&st.parsed, &refused);
        let batch: Vec<(Site, Annotation)> = if rounds {
            independent_batch(&st.text, &st.parsed, &pend)
                .into_iter()
                .map(|i| pend[i].clone())
                .collect()
        } else {
            Vec::new()
        };
        if batch.len() > 1 {
            if round(st, names, opts, &batch, res, &mut refused) {
                continue;
            }
            // A round that cannot be completed (only an internal error does that) would fail
            // again: the rest of the run goes one step at a time, which reports the error.
            rounds = false;
        }
        let Some((site, ann)) = pend.into_iter().next() else {
            break;
        };
        let params = Params::from_annotation(&ann);
        let removal = removal_span(&st.text, ann.span);
        match step(
            st,
            names,
            opts,
            &site,
            &params,
            Some((&ann, removal)),
            &mut res.reports,
        ) {
            Ok(edits) => {
                // Map refused offsets into the new text.
                refused = refused
                    .iter()
                    .filter_map(|&o| map_through(o, removal, &edits))
                    .collect();
                res.applied += 1;
            }
            Err(report) => {
                res.refused += 1;
                res.reports.push(report);
                refused.push(ann.span.start());
                // Either way the remaining steps are still checked, so every problem shows in
                // one run; without --keep-going nothing is written (see `apply`).
            }
        }
    }
}

/// The next pending annotations (indices into `pend`) that can be applied as one round on one
/// parse, with the same output as one step each.
///
/// Re-parsing the whole file twice per step dominates the cost of a file with many annotated
/// loops. Unrolling and merging edit only the loop they are applied to, and what they read of
/// the rest of the program (callee contracts, pure functions) they never change; so steps in
/// different methods do not see each other, and running them on the same text gives what running
/// them one after the other gives. A round takes at most one step per method (a later step in
/// the same method must see the earlier one's output), and only steps of the kind that comes
/// next:
/// * unrolling allocates no names, so its round takes the first pending unroll of every method,
///   wherever it sits in the order (the order of independent steps changes nothing but the
///   order of their diagnostics);
/// * merging allocates fresh names in application order, so its round is a prefix of the order;
///   it also ends after a loop whose body carries merge annotations (the copies become new
///   steps, which may come next in the order).
fn independent_batch(text: &str, parsed: &Parsed, pend: &[(Site, Annotation)]) -> Vec<usize> {
    let Some(kind) = pend.first().map(|(_, a)| a.kind.opt()) else {
        return Vec::new();
    };
    if !matches!(kind, OptKind::Unroll | OptKind::Merge) {
        return Vec::new();
    }
    let all = sites(&parsed.program);
    let mut methods: Vec<(Option<&str>, &str)> = Vec::new();
    let mut out = Vec::new();
    for (i, (site, ann)) in pend.iter().enumerate() {
        let key = (site.class.as_deref(), site.method.as_str());
        let seen = methods.contains(&key);
        let fits = removable_in_place(text, ann);
        if ann.kind.opt() != kind || (kind == OptKind::Merge && (seen || !fits)) {
            break;
        }
        if seen || !fits {
            methods.push(key);
            continue;
        }
        methods.push(key);
        out.push(i);
        let carries = all.iter().any(|s| {
            site.span.contains(s.span)
                && !s.keyword.same_place(site.keyword)
                && s.annotations.iter().any(|a| a.kind.opt() == kind)
        });
        if carries && kind == OptKind::Merge {
            break;
        }
    }
    out
}

/// Whether the rewrite of a loop in a round removes its annotation exactly as a single step does
/// (`removal_span`): in place when it shares its line, else the whole line, which the
/// rewrite reproduces by joining the next line up when that line has the same indentation.
fn removable_in_place(src: &str, ann: &Annotation) -> bool {
    if !crate::edit::alone_on_line(src, ann.span) {
        return true;
    }
    let r = removal_span(src, ann.span);
    let indent = crate::edit::indent_at(src, ann.span.start());
    let rest = &src[r.end()..];
    let next = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    &rest[..next] == indent && !rest[next..].starts_with(['\n', '\r']) && !rest[next..].is_empty()
}

/// Apply `batch` (from [`independent_batch`]) as one round: every step runs on the current text
/// and parse, all edits are applied together, and the result is parsed once. The annotations
/// stay in the text the steps read: unrolling and merging drop their own annotation with the
/// loop they rewrite (so no intermediate text needs a parse), and a refused step leaves its
/// annotation where it is. `false` if the round could not be completed (the state is then
/// unchanged and the caller falls back to single steps).
fn round(
    st: &mut State,
    names: &mut NameGen,
    opts: &DriverOptions,
    batch: &[(Site, Annotation)],
    res: &mut DriverResult,
    refused: &mut Vec<usize>,
) -> bool {
    let before_file = st.file();
    let layout = Layout::detect(&st.text);
    // The single-step fallback must allocate the same fresh names.
    let names_before = names.clone();
    let mut all = EditSet::new();
    let mut reports = Vec::new();
    let mut newly_refused = Vec::new();
    let mut applied = 0;
    for (site, ann) in batch {
        let params = Params::from_annotation(ann);
        let mut ctx = Ctx {
            src: &st.text,
            parsed: &st.parsed,
            layout: layout.clone(),
            names: &mut *names,
            timeout_ms: if opts.timeout_ms == 0 {
                crate::check::DEFAULT_TIMEOUT_MS
            } else {
                opts.timeout_ms
            },
            annotation_text: Some(ann.span.text(&st.text).to_string()),
        };
        match run(&mut ctx, site, &params) {
            Ok(a) => {
                // The step must have rewritten the loop with its annotation in it.
                let covered = a
                    .edits
                    .edits()
                    .iter()
                    .any(|e| e.lo <= ann.span.start() && ann.span.end() <= e.hi);
                if !covered {
                    *names = names_before;
                    return false;
                }
                applied += 1;
                // The step dropped the annotation with its loop. When the annotation ends a line
                // after other text, a single step also drops the spaces before it; they lie
                // outside the loop when the annotation starts it.
                let r = removal_span(&st.text, ann.span);
                let spaces = Span::new(r.start(), ann.span.start());
                let dropped = a
                    .edits
                    .edits()
                    .iter()
                    .any(|e| e.lo <= spaces.start() && spaces.start() < e.hi);
                all.extend(a.edits);
                if !spaces.is_empty() && !crate::edit::alone_on_line(&st.text, ann.span) && !dropped
                {
                    all.replace(spaces, "");
                }
                if !a.diagnostics.is_empty() {
                    reports.push((false, a.diagnostics));
                }
            }
            Err(mut diags) => {
                if diags.is_empty() {
                    diags.push(Diagnostic::error(
                        "A0004",
                        format!("the {} optimization was refused", params.opt().cli_name()),
                    ));
                }
                if let Some(first) = diags.first_mut() {
                    if !first.labels.iter().any(|l| l.span.same_place(ann.span)) {
                        first.labels.push(crate::diag::Label {
                            file: 0,
                            span: ann.span,
                            message: "requested here".into(),
                            primary: false,
                        });
                    }
                }
                reports.push((true, diags));
                newly_refused.push(ann.span.start());
            }
        }
    }
    let Ok(out) = all.apply(&st.text) else {
        *names = names_before;
        return false;
    };
    // Only refusals: the text stays, and so does its parse.
    let reparsed = if applied == 0 {
        None
    } else {
        let p = parse(&out, &st.reparse);
        if p.has_errors() {
            // Which step produced it is unknown here: the single-step path finds and reports it.
            *names = names_before;
            return false;
        }
        Some(p)
    };
    for (is_refusal, diags) in reports {
        if is_refusal {
            res.refused += 1;
        }
        res.reports.push(Report {
            file: before_file.clone(),
            diagnostics: diags,
        });
    }
    *refused = refused
        .iter()
        .chain(&newly_refused)
        .filter_map(|&o| all.map_offset(o))
        .collect();
    if let Some(p) = reparsed {
        names.add_written(&out, &all.written_ranges());
        res.applied += applied;
        st.step += applied;
        st.text = out;
        // Freed on the parser's thread while the next steps run.
        crate::front::dispose(std::mem::replace(&mut st.parsed, p));
    }
    true
}

/// Map an offset of the text before a step (annotation removal, then `edits` over the reduced
/// text) into the text after it. `None` if it lay inside a rewritten region.
fn map_through(off: usize, removal: Span, edits: &EditSet) -> Option<usize> {
    let off = if off >= removal.end() {
        off - removal.len()
    } else if off >= removal.start() {
        return None;
    } else {
        off
    };
    edits.map_offset(off)
}

/// One step at `site`. On success the state holds the new text; returns the edits (over the
/// text with the annotation removed).
fn step(
    st: &mut State,
    names: &mut NameGen,
    opts: &DriverOptions,
    site: &Site,
    params: &Params,
    annotation: Option<(&Annotation, Span)>,
    warnings: &mut Vec<Report>,
) -> Result<EditSet, Report> {
    let before_file = st.file();
    // Remove the consumed annotation first; the optimization never sees it.
    let (text1, parsed1, site1) = match annotation {
        Some((_, removal)) => {
            let mut es = EditSet::new();
            es.push(crate::edit::Edit::delete(removal));
            let text1 = es
                .apply(&st.text)
                .map_err(|e| internal(&before_file, e.to_string()))?;
            let parsed1 = parse(&text1, &st.reparse);
            let key = if site.keyword.start() >= removal.end() {
                site.keyword.start() - removal.len()
            } else {
                site.keyword.start()
            };
            let site1 = sites(&parsed1.program)
                .into_iter()
                .find(|s| s.keyword.start() == key && s.kind == site.kind)
                .ok_or_else(|| {
                    internal(&before_file, "lost track of the annotated construct".into())
                })?;
            (text1, parsed1, site1)
        }
        None => (st.text.clone(), st.parsed.clone(), site.clone()),
    };
    let mut ctx = Ctx {
        src: &text1,
        parsed: &parsed1,
        layout: Layout::detect(&text1),
        names,
        timeout_ms: if opts.timeout_ms == 0 {
            crate::check::DEFAULT_TIMEOUT_MS
        } else {
            opts.timeout_ms
        },
        annotation_text: annotation.map(|(a, _)| a.span.text(&st.text).to_string()),
    };
    let outcome = run(&mut ctx, &site1, params);
    let unshift = |sp: Span| -> Span {
        match annotation {
            Some((_, r)) => {
                let f = |o: usize| if o >= r.start() { o + r.len() } else { o };
                Span::new(f(sp.start()), f(sp.end()))
            }
            None => sp,
        }
    };
    match outcome {
        Ok(applied) => {
            let out = applied
                .edits
                .apply(&text1)
                .map_err(|e| internal(&before_file, e.to_string()))?;
            let reparsed = parse(&out, &st.reparse);
            if reparsed.has_errors() {
                let mut d = Diagnostic::error(
                    "A0099",
                    format!(
                        "internal error: the {} optimization produced text that does not parse",
                        params.opt().cli_name()
                    ),
                )
                .with_primary(unshift(site1.keyword), "while rewriting this construct")
                .with_help("please report this; the file was left unchanged");
                for e in reparsed.errors().take(3) {
                    d = d.with_note(e.message.clone());
                }
                return Err(Report {
                    file: before_file,
                    diagnostics: vec![d],
                });
            }
            names.add_written(&out, &applied.edits.written_ranges());
            if !applied.diagnostics.is_empty() {
                let mut diags = applied.diagnostics;
                for d in &mut diags {
                    for l in &mut d.labels {
                        l.span = unshift(l.span);
                    }
                }
                // Warnings and notes are reported against the step's input text.
                warnings.push(Report {
                    file: before_file,
                    diagnostics: diags,
                });
            }
            st.step += 1;
            st.text = out;
            crate::front::dispose(std::mem::replace(&mut st.parsed, reparsed));
            Ok(applied.edits)
        }
        Err(mut diags) => {
            if diags.is_empty() {
                diags.push(Diagnostic::error(
                    "A0004",
                    format!("the {} optimization was refused", params.opt().cli_name()),
                ));
            }
            for d in &mut diags {
                for l in &mut d.labels {
                    l.span = unshift(l.span);
                }
            }
            if let Some((a, _)) = annotation {
                if let Some(first) = diags.first_mut() {
                    if !first.labels.iter().any(|l| l.span.same_place(a.span)) {
                        first.labels.push(crate::diag::Label {
                            file: 0,
                            span: a.span,
                            message: "requested here".into(),
                            primary: false,
                        });
                    }
                }
            }
            Err(Report {
                file: before_file,
                diagnostics: diags,
            })
        }
    }
}

fn internal(file: &SourceFile, msg: String) -> Report {
    Report {
        file: file.clone(),
        diagnostics: vec![Diagnostic::error("A0099", format!("internal error: {msg}"))
            .with_help("please report this; the file was left unchanged")],
    }
}

fn target_kinds(opt: OptKind) -> &'static [SiteKind] {
    match opt {
        OptKind::Unroll | OptKind::Merge => &[SiteKind::Loop],
        OptKind::Tile | OptKind::Fuse => &[SiteKind::Par],
        OptKind::Linearize => &[SiteKind::Method],
        OptKind::Prefetch => &[SiteKind::Par, SiteKind::Method],
    }
}

/// Resolve `--at line:N[:COL]` to a site of the right kind (optimizations.md §1.2).
pub fn resolve_at(src: &str, parsed: &Parsed, opt: OptKind, at: &At) -> Result<Site, Diagnostic> {
    let lines = LineIndex::new(src);
    let all = sites(&parsed.program);
    let kinds = target_kinds(opt);
    let line_of = |o: usize| lines.line(o);
    let col_of = |o: usize| lines.line_col(src, o).1;
    let what = match opt {
        OptKind::Unroll | OptKind::Merge => "loop",
        OptKind::Tile | OptKind::Fuse => "par block",
        OptKind::Linearize => "method",
        OptKind::Prefetch => "par block or method",
    };
    // 1. Header regions containing the line.
    let mut cands: Vec<&Site> = all
        .iter()
        .filter(|s| kinds.contains(&s.kind))
        .filter(|s| line_of(s.span.start()) <= at.line && at.line <= line_of(s.keyword.start()))
        .collect();
    if cands.len() > 1 {
        if let Some(c) = at.col {
            cands.retain(|s| {
                line_of(s.keyword.start()) != at.line || col_of(s.keyword.start()) >= c
            });
            cands.truncate(1);
        } else {
            let mut d =
                Diagnostic::error("A0005", format!("line {} holds several {what}s", at.line));
            for s in &cands {
                let (l, c) = lines.line_col(src, s.keyword.start());
                d = d.with_secondary(s.keyword, format!("candidate at line:{l}:{c}"));
            }
            return Err(d.with_help("add the column of the keyword: --at line:N:COL"));
        }
    }
    if let Some(s) = cands.first() {
        return Ok((*s).clone());
    }
    // 3. The innermost construct of the kind containing the line.
    let inner = all
        .iter()
        .filter(|s| {
            line_of(s.span.start()) <= at.line && at.line <= line_of(s.span.end().saturating_sub(1))
        })
        .filter(|s| kinds.contains(&s.kind) || s.kind == SiteKind::Method)
        .min_by_key(|s| s.span.len());
    if let Some(s) = inner {
        if kinds.contains(&s.kind) {
            return Ok(s.clone());
        }
        // 4. tile/fuse on a method with exactly one (top-level) par block.
        if matches!(opt, OptKind::Tile | OptKind::Fuse) {
            let pars: Vec<&Site> = all
                .iter()
                .filter(|p| {
                    p.kind == SiteKind::Par
                        && p.method == s.method
                        && p.class == s.class
                        && p.depth == 0
                })
                .collect();
            if opt == OptKind::Fuse {
                if let Some(first) = pars.first() {
                    return Ok((*first).clone());
                }
            } else if pars.len() == 1 {
                return Ok(pars[0].clone());
            }
        }
    }
    let mut d = Diagnostic::error("A0005", format!("no {what} at line {}", at.line));
    if let Some(near) = all
        .iter()
        .filter(|s| kinds.contains(&s.kind))
        .min_by_key(|s| (line_of(s.keyword.start()) as i64 - at.line as i64).abs())
    {
        let (l, _) = lines.line_col(src, near.keyword.start());
        d = d
            .with_secondary(near.keyword, format!("nearest {what}, at line {l}"))
            .with_help(format!("use --at line:{l}"));
    } else {
        d = d.with_help(format!("the file has no {what}"));
    }
    Err(d)
}

fn apply_cli_steps(
    st: &mut State,
    names: &mut NameGen,
    opts: &DriverOptions,
    res: &mut DriverResult,
) {
    // Resolve every step against the input file first (line numbers refer to it).
    let mut targets: Vec<(usize, SiteKind)> = Vec::new();
    for s in &opts.steps {
        match resolve_at(&st.text, &st.parsed, s.params.opt(), &s.at) {
            Ok(site) => targets.push((site.keyword.start(), site.kind)),
            Err(d) => {
                res.reports.push(Report {
                    file: st.file(),
                    diagnostics: vec![d],
                });
                res.bad_input = true;
                return;
            }
        }
    }
    for i in 0..opts.steps.len() {
        let (key, kind) = targets[i];
        let Some(site) = sites(&st.parsed.program)
            .into_iter()
            .find(|s| s.keyword.start() == key && s.kind == kind)
        else {
            res.refused += 1;
            res.reports.push(Report {
                file: st.file(),
                diagnostics: vec![Diagnostic::error(
                    "A0005",
                    format!(
                        "step {}: its target was rewritten by an earlier step",
                        i + 1
                    ),
                )
                .with_help("apply this step in a separate run on the output")],
            });
            continue;
        };
        let params = &opts.steps[i].params;
        // An in-source annotation of the same kind on the construct is superseded (A0031).
        let superseded = superseded_annotation(&st.parsed.program, &site, params.opt());
        let before = st.file();
        let removal = superseded
            .as_ref()
            .map(|a| (a, removal_span(&st.text, a.span)));
        match step(st, names, opts, &site, params, removal, &mut res.reports) {
            Ok(edits) => {
                res.applied += 1;
                if let Some(a) = &superseded {
                    res.reports.push(Report {
                        file: before,
                        diagnostics: vec![Diagnostic::note(
                            "A0031",
                            format!("in-source `{}` annotation superseded by --opt", params.opt().alpinist_name()),
                        )
                        .with_primary(a.span, "superseded and removed")
                        .with_help("with --opt only the command-line parameters are used; drop --opt to apply the file's own annotation")],
                    });
                }
                let rem = removal.map(|(_, r)| r).unwrap_or(Span::new(0, 0));
                for t in targets.iter_mut().skip(i + 1) {
                    t.0 = map_through(t.0, rem, &edits).unwrap_or(usize::MAX);
                }
            }
            Err(mut report) => {
                res.refused += 1;
                // `step` labels the annotation it removed as the request; here the request is
                // the command line, and the annotation stays in the (unchanged) file.
                if let Some(a) = &superseded {
                    for l in report
                        .diagnostics
                        .iter_mut()
                        .flat_map(|d| d.labels.iter_mut())
                    {
                        if l.span.same_place(a.span) && l.message == "requested here" {
                            l.message = "in-source annotation, superseded by --opt".into();
                        }
                    }
                }
                res.reports.push(report);
            }
        }
    }
}

/// The in-source annotation a command-line step at `site` supersedes (optimizations.md §1.2,
/// A0031): one of the same kind on the construct itself, or — for tiling, whose annotation may sit
/// on the method when the method has exactly one `par` block — on the enclosing method.
fn superseded_annotation(program: &Program, site: &Site, opt: OptKind) -> Option<Annotation> {
    if let Some(a) = site.annotations.iter().find(|a| a.kind.opt() == opt) {
        return Some(a.clone());
    }
    if opt != OptKind::Tile || site.kind != SiteKind::Par {
        return None;
    }
    let all = sites(program);
    let same_method = |s: &&Site| s.method == site.method && s.class == site.class;
    let pars = all
        .iter()
        .filter(same_method)
        .filter(|s| s.kind == SiteKind::Par)
        .count();
    if pars != 1 {
        return None;
    }
    all.iter()
        .filter(same_method)
        .find(|s| s.kind == SiteKind::Method)
        .and_then(|m| m.annotations.iter().find(|a| a.kind.opt() == opt).cloned())
}

/// Apply command-line steps when given, else the file's own annotations.
pub fn apply_cli_or_annotations(name: &str, src: &str, opts: &DriverOptions) -> DriverResult {
    apply(name, src, opts)
}
