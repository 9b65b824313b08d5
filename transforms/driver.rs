//! Applying several optimizations in one run (optimizations.md §8).
//!
//! Each step: pick the next request, remove the annotation it consumes (the driver does this, the
//! same way for every optimization), check applicability and build the edit set (the
//! optimization's job), apply it, and re-parse, so every step works on the real output of the
//! previous one. In-source annotations are applied by kind in the registry's order (Alpinist's:
//! linearize → fuse → merge → prefetch → tile → unroll), within a kind in source order with inner
//! loops first. Command-line steps run in command-line order; their `--at` lines always refer to
//! the input file.

use super::params::{self, Raw, Spelling, StepError};
use super::registry::{self, Request};
use super::{run, Ctx, MethodPar, Opt, Params};
use analyze::names::NameGen;
use analyze::sites::{sites, Site, SiteKind};
use diag::{Diagnostic, SourceFile};
use edit::{removal_span, Edit, EditSet, Layout};
use front::ast::{Annotation, Program};
use front::dialect::{Dialect, DialectChoice};
use front::span::{LineIndex, Span};
use front::{parse, ParseOptions, Parsed};

mod round;
use round::{independent_batch, round};

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
                c.parse::<usize>().map_err(|_| format!("`{s}`: the column must be a number"))?,
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

/// One optimization request in a neutral form: what `--opt … --at …` with its flags, or one
/// step of a batch plan, asks for. Validated and built by [`build_step`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepSpec {
    pub opt: String,
    pub at: String,
    /// Parameters as the user named them (flags without dashes, or plan keys) with their values.
    pub params: Vec<(String, Raw)>,
}

/// Validate a step and build it for a file of `dialect` (expressions are parsed in it).
pub fn build_step(
    spec: &StepSpec,
    spelling: Spelling,
    dialect: Dialect,
) -> Result<CliStep, StepError> {
    let opt = registry::lookup(&spec.opt).ok_or_else(|| StepError::UnknownOpt(spec.opt.clone()))?;
    let at: At = spec.at.parse().map_err(|m: String| StepError::Invalid {
        field: "at".into(),
        message: format!("must be line:N or line:N:COL, not {m}"),
    })?;
    let params = params::build(opt, &spec.params, spelling, dialect)?;
    Ok(CliStep { params, at })
}

#[derive(Clone, Debug, Default)]
pub struct DriverOptions {
    pub parse: ParseOptions,
    pub timeout_ms: u32,
    /// Skip refused steps and apply the rest (the exit code is still 1).
    pub keep_going: bool,
    /// Command-line steps; empty means: apply the file's own annotations.
    pub steps: Vec<CliStep>,
    /// Parameters given without `--opt` (flag name without dashes, value): each applies to the
    /// in-source annotations whose optimization takes it and whose annotation cannot state it
    /// (see [`overrides_fit`]).
    pub overrides: Vec<(String, Raw)>,
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
    /// The exit status (the project's one rule): from the registered class of each error
    /// reported (a refusal 1, bad input 2, could not decide or a bug of ours 3), combined by
    /// [`diag::codes::combine`].
    pub fn exit_code(&self) -> u8 {
        let mut code = diag::codes::exit_code(self.diagnostics().map(|(_, d)| d));
        if self.bad_input {
            code = diag::codes::combine(code, 2);
        }
        if self.refused > 0 && code == 0 {
            code = 1;
        }
        code
    }

    pub fn diagnostics(&self) -> impl Iterator<Item = (&SourceFile, &Diagnostic)> {
        self.reports.iter().flat_map(|r| r.diagnostics.iter().map(move |d| (&r.file, d)))
    }
}

/// Parse and check the annotations; `Err` holds the diagnostics of bad input.
pub fn front(name: &str, src: &str, opts: &ParseOptions) -> Result<Parsed, Report> {
    let parsed = registry::parse(src, opts);
    if parsed.has_errors() {
        return Err(Report { file: SourceFile::new(name, src), diagnostics: parsed.diagnostics });
    }
    Ok(parsed)
}

/// For each override (flag, value) of `overrides`, whether some annotation of the file takes it:
/// its optimization has a parameter with that flag that is not an annotation operand. `Err` is
/// the message of a usage error for the first one that fits none.
pub fn overrides_fit(
    src: &str,
    parsed: &Parsed,
    overrides: &[(String, Raw)],
) -> Result<(), String> {
    let opts: Vec<Opt> = sites(&parsed.program)
        .iter()
        .flat_map(|s| registry::requests(src, parsed.dialect, s))
        .map(|r| r.opt())
        .collect();
    for (flag, raw) in overrides {
        let mut fits = false;
        for opt in &opts {
            let Some(p) = opt.meta().params.iter().find(|p| p.flag == flag.as_str()) else {
                continue;
            };
            if p.in_annotation {
                return Err(format!(
                    "--{flag} is stated by the file's `gpuopt {}` annotations; to set it, use --opt {} --at line:N",
                    opt.meta().keyword,
                    opt.meta().name
                ));
            }
            if let Err(e) = params::value(p, raw, flag, parsed.dialect) {
                return Err(e.message(opt.meta().name, |f| format!("--{f}")));
            }
            fits = true;
        }
        if !fits {
            let takers: Vec<&str> = registry::ALL
                .iter()
                .filter(|o| o.meta().params.iter().any(|p| p.flag == flag.as_str()))
                .map(|o| o.meta().name)
                .collect();
            return Err(format!(
                "--{flag} applies to no annotation of the file (it is a parameter of {}); use it with --opt {} --at line:N",
                takers.join(", "),
                takers.first().copied().unwrap_or("KIND")
            ));
        }
    }
    Ok(())
}

/// Run the optimizations on `src` (named `name` in diagnostics).
pub fn apply(name: &str, src: &str, opts: &DriverOptions) -> DriverResult {
    check::reset_solver();
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
    let warnings: Vec<Diagnostic> =
        parsed.diagnostics.iter().filter(|d| !d.is_error()).cloned().collect();
    if !warnings.is_empty() {
        res.reports.push(Report { file: SourceFile::new(name, src), diagnostics: warnings });
    }
    if !opts.overrides.is_empty() {
        if let Err(msg) = overrides_fit(src, &parsed, &opts.overrides) {
            res.reports.push(Report {
                file: SourceFile::new(name, src),
                diagnostics: vec![Diagnostic::error("A0000", msg)
                    .with_help("give parameter flags after the --opt they belong to")],
            });
            res.bad_input = true;
            return res;
        }
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

    fn timeout_ms(opts: &DriverOptions) -> u32 {
        if opts.timeout_ms == 0 {
            check::DEFAULT_TIMEOUT_MS
        } else {
            opts.timeout_ms
        }
    }
}

/// An annotation still to apply, at its site, with its optimization.
#[derive(Clone, Debug)]
struct Pending {
    site: Site,
    annotation: Annotation,
    opt: Opt,
}

/// The annotations still to apply, in application order. Only the optimization of each is
/// looked up here; the parameters are read for the steps about to run ([`request`]), since a
/// file with many annotations would otherwise read all of them again at every step.
fn pending(st: &State, skip: &[usize]) -> Result<Vec<Pending>, Report> {
    let mut v = Vec::new();
    for s in sites(&st.parsed.program) {
        for a in &s.annotations {
            if skip.contains(&a.span.start()) {
                continue;
            }
            let Some(opt) = registry::lookup(&a.keyword.name) else {
                return Err(unreadable(st, a, Vec::new()));
            };
            v.push(Pending { site: s.clone(), annotation: a.clone(), opt });
        }
    }
    v.sort_by_key(|p| {
        (registry::rank(p.opt), std::cmp::Reverse(p.site.depth), p.annotation.span.lo)
    });
    Ok(v)
}

/// A pending annotation's parameters, with the overrides applied; `Err` for an annotation that
/// no longer reads (an earlier step wrote it wrong: a bug of ours).
fn request(st: &State, p: &Pending, overrides: &[(String, Raw)]) -> Result<Request, Report> {
    let mut params = registry::read(&st.text, st.parsed.dialect, &p.annotation)
        .map_err(|diags| unreadable(st, &p.annotation, diags))?;
    apply_overrides(&mut params, overrides, st.parsed.dialect);
    Ok(Request { annotation: p.annotation.clone(), params })
}

fn unreadable(st: &State, a: &Annotation, diags: Vec<Diagnostic>) -> Report {
    let mut d = Diagnostic::internal("an earlier step left an annotation that does not read")
        .with_primary(a.span, "this annotation")
        .with_note("the file was left unchanged");
    for e in diags.iter().take(3) {
        d = d.with_note(e.message.clone());
    }
    Report { file: st.file(), diagnostics: vec![d] }
}

/// Set the overrides that `params`' optimization takes (checked by [`overrides_fit`]).
fn apply_overrides(params: &mut Params, overrides: &[(String, Raw)], dialect: Dialect) {
    for (flag, raw) in overrides {
        let meta = params.opt.meta();
        let Some(p) =
            meta.params.iter().find(|p| p.is_named(flag, Spelling::Flag) && !p.in_annotation)
        else {
            continue;
        };
        if let Ok(v) = params::value(p, raw, flag, dialect) {
            params.set(p.key, v);
        }
    }
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
        let pend = match pending(st, &refused) {
            Ok(p) => p,
            Err(report) => {
                res.refused += 1;
                res.reports.push(report);
                return;
            }
        };
        if rounds {
            let batch: Result<Vec<(Site, Request)>, Report> = independent_batch(&st.parsed, &pend)
                .into_iter()
                .map(|i| Ok((pend[i].site.clone(), request(st, &pend[i], &opts.overrides)?)))
                .collect();
            let batch = match batch {
                Ok(b) => b,
                Err(report) => {
                    res.refused += 1;
                    res.reports.push(report);
                    return;
                }
            };
            if batch.len() > 1 {
                if round(st, names, opts, &batch, res, &mut refused) {
                    continue;
                }
                // A round that cannot be completed (only an internal error does that) would
                // fail again: the rest of the run goes one step at a time, which reports it.
                rounds = false;
            }
        }
        let Some(next) = pend.into_iter().next() else {
            break;
        };
        let req = match request(st, &next, &opts.overrides) {
            Ok(r) => r,
            Err(report) => {
                res.refused += 1;
                res.reports.push(report);
                return;
            }
        };
        let site = next.site;
        let ann = &req.annotation;
        let removal = removal_span(&st.text, ann.span);
        match step(st, names, opts, &site, &req.params, Some((ann, removal)), &mut res.reports) {
            Ok(edits) => {
                // Map refused offsets into the new text.
                refused = refused.iter().filter_map(|&o| map_through(o, removal, &edits)).collect();
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

/// A note (A0030) for every generated name that needed a suffix in the step just run, labelled
/// at the construct the step rewrote.
fn suffix_notes(names: &mut NameGen, at: Span) -> Vec<Diagnostic> {
    names
        .take_suffixed()
        .into_iter()
        .map(|(base, name)| {
            Diagnostic::note(
                "A0030",
                format!("generated name `{name}`: `{base}` is already used in the file"),
            )
            .with_primary(at, "rewritten here")
            .with_help(format!("nothing to do; rename your `{base}` if you prefer the plain name"))
        })
        .collect()
}

/// Map every label span of `diags` with `f`.
fn relabel(mut diags: Vec<Diagnostic>, f: impl Fn(Span) -> Span) -> Vec<Diagnostic> {
    for d in &mut diags {
        for l in &mut d.labels {
            l.span = f(l.span);
        }
    }
    diags
}

/// A refusal, with the annotation that asked for the step labelled as the request.
fn requested_here(
    mut diags: Vec<Diagnostic>,
    params: &Params,
    ann: &Annotation,
) -> Vec<Diagnostic> {
    if diags.is_empty() {
        diags.push(Diagnostic::internal(format!(
            "the {} optimization refused without saying why",
            params.opt.meta().name
        )));
    }
    if let Some(first) = diags.first_mut() {
        if !first.labels.iter().any(|l| l.span.same_place(ann.span)) {
            first.labels.push(diag::Label {
                file: 0,
                span: ann.span,
                message: "requested here".into(),
                primary: false,
            });
        }
    }
    diags
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
            es.push(Edit::delete(removal));
            let text1 = es.apply(&st.text).map_err(|e| internal(&before_file, e.to_string()))?;
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
        timeout_ms: State::timeout_ms(opts),
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
            let out =
                applied.edits.apply(&text1).map_err(|e| internal(&before_file, e.to_string()))?;
            let reparsed = parse(&out, &st.reparse);
            if reparsed.has_errors() {
                if std::env::var_os("ALPINE_RS_DUMP_UNPARSABLE").is_some() {
                    eprintln!("{out}");
                }
                let mut d = Diagnostic::internal(format!(
                    "the {} optimization produced text that does not parse",
                    params.opt.meta().name
                ))
                .with_primary(unshift(site1.keyword), "while rewriting this construct")
                .with_note("the file was left unchanged");
                for e in reparsed.errors().take(3) {
                    d = d.with_note(e.message.clone());
                }
                return Err(Report { file: before_file, diagnostics: vec![d] });
            }
            names.add_written(&out, &applied.edits.written_ranges());
            let mut applied = applied;
            applied.diagnostics.extend(suffix_notes(names, site1.keyword));
            if !applied.diagnostics.is_empty() {
                // Warnings and notes are reported against the step's input text.
                warnings.push(Report {
                    file: before_file,
                    diagnostics: relabel(applied.diagnostics, unshift),
                });
            }
            st.step += 1;
            st.text = out;
            front::dispose(std::mem::replace(&mut st.parsed, reparsed));
            Ok(applied.edits)
        }
        Err(diags) => {
            // A refused step writes nothing: its names need no note.
            names.take_suffixed();
            let mut diags = relabel(diags, unshift);
            match annotation {
                Some((a, _)) => diags = requested_here(diags, params, a),
                None if diags.is_empty() => diags.push(Diagnostic::internal(format!(
                    "the {} optimization refused without saying why",
                    params.opt.meta().name
                ))),
                None => {}
            }
            Err(Report { file: before_file, diagnostics: diags })
        }
    }
}

fn internal(file: &SourceFile, msg: String) -> Report {
    Report {
        file: file.clone(),
        diagnostics: vec![Diagnostic::internal(msg).with_note("the file was left unchanged")],
    }
}

/// Resolve `--at line:N[:COL]` to a site the optimization accepts (optimizations.md §1.2).
///
/// For an optimization whose annotation on a method stands for a `par` block of the method
/// ([`MethodPar`]), `--at` always selects that block: the targets are par blocks.
pub fn resolve_at(src: &str, parsed: &Parsed, opt: Opt, at: &At) -> Result<Site, Diagnostic> {
    let lines = LineIndex::new(src);
    let all = sites(&parsed.program);
    let method_par = opt.meta().method_par;
    let kinds: Vec<SiteKind> = opt
        .meta()
        .sites
        .iter()
        .copied()
        .filter(|k| method_par == MethodPar::None || *k != SiteKind::Method)
        .collect();
    let line_of = |o: usize| lines.line(o);
    let col_of = |o: usize| lines.line_col(src, o).1;
    let what = kinds.iter().map(|k| registry::site_name(*k)).collect::<Vec<_>>().join(" or ");
    // 1. Header regions containing the line.
    let mut cands: Vec<&Site> = all
        .iter()
        .filter(|s| kinds.contains(&s.kind))
        .filter(|s| line_of(s.span.start()) <= at.line && at.line <= line_of(s.keyword.start()))
        .collect();
    // A CUDA kernel's threads are named by the opening brace on the kernel's own line: there a
    // method and the par block it holds are one request, for the par block.
    if cands.len() > 1 && at.col.is_none() {
        let pars: Vec<&Site> = cands.iter().copied().filter(|s| s.kind == SiteKind::Par).collect();
        if let [par] = pars[..] {
            if cands.iter().all(|s| {
                s.kind == SiteKind::Par || (s.kind == SiteKind::Method && s.span.contains(par.span))
            }) {
                cands = vec![par];
            }
        }
    }
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
        // 4. A `par` block of the method, for optimizations of par blocks.
        let pars: Vec<&Site> = all
            .iter()
            .filter(|p| {
                p.kind == SiteKind::Par
                    && p.method == s.method
                    && p.class == s.class
                    && p.depth == 0
            })
            .collect();
        match (method_par, pars.as_slice()) {
            (MethodPar::First, [first, ..]) | (MethodPar::Only, [first]) => {
                return Ok((*first).clone())
            }
            _ => {}
        }
    }
    let mut d = Diagnostic::error("A0005", format!("no {what} at line {}", at.line));
    let parallel_loop =
        analyze::sites::iteration_contract_loops(&parsed.program).into_iter().find(|sp| {
            line_of(sp.start()) <= at.line && at.line <= line_of(sp.end().saturating_sub(1))
        });
    if let Some(sp) = parallel_loop {
        return Err(d
            .with_secondary(sp, "this loop has an iteration contract: it is a parallel loop")
            .with_help("the optimizations do not rewrite C loops with iteration contracts yet; write the loop as a kernel, or optimize the PVL form of the program"));
    }
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
        match resolve_at(&st.text, &st.parsed, s.params.opt, &s.at) {
            Ok(site) => targets.push((site.keyword.start(), site.kind)),
            Err(d) => {
                res.reports.push(Report { file: st.file(), diagnostics: vec![d] });
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
                    format!("step {}: its target was rewritten by an earlier step", i + 1),
                )
                .with_help("apply this step in a separate run on the output")],
            });
            continue;
        };
        let params = &opts.steps[i].params;
        // An in-source annotation of the same kind on the construct is superseded (A0031).
        let superseded = superseded_annotation(&st.parsed.program, &site, params.opt);
        let before = st.file();
        let removal = superseded.as_ref().map(|a| (a, removal_span(&st.text, a.span)));
        match step(st, names, opts, &site, params, removal, &mut res.reports) {
            Ok(edits) => {
                res.applied += 1;
                if let Some(a) = &superseded {
                    res.reports.push(Report {
                        file: before,
                        diagnostics: vec![Diagnostic::note(
                            "A0031",
                            format!("in-source `{}` annotation superseded by --opt", params.opt.meta().keyword),
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
                    for l in report.diagnostics.iter_mut().flat_map(|d| d.labels.iter_mut()) {
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
/// A0031): one of the same optimization on the construct itself, or — for an optimization whose
/// annotation on a method means the method's only `par` block ([`MethodPar::Only`]) — on the
/// enclosing method when `site` is that block.
fn superseded_annotation(program: &Program, site: &Site, opt: Opt) -> Option<Annotation> {
    let same = |a: &&Annotation| registry::lookup(&a.keyword.name) == Some(opt);
    if let Some(a) = site.annotations.iter().find(same) {
        return Some(a.clone());
    }
    if opt.meta().method_par != MethodPar::Only || site.kind != SiteKind::Par {
        return None;
    }
    let all = sites(program);
    let same_method = |s: &&Site| s.method == site.method && s.class == site.class;
    let pars = all.iter().filter(same_method).filter(|s| s.kind == SiteKind::Par).count();
    if pars != 1 {
        return None;
    }
    all.iter()
        .filter(same_method)
        .find(|s| s.kind == SiteKind::Method)
        .and_then(|m| m.annotations.iter().find(same).cloned())
}

/// Apply command-line steps when given, else the file's own annotations.
pub fn apply_cli_or_annotations(name: &str, src: &str, opts: &DriverOptions) -> DriverResult {
    apply(name, src, opts)
}
