//! Executable semantics of the PVL GPU subset (design: `semantics.md`).
//!
//! * [`compile`] lowers the syntax tree (names → slots, statements → warp instructions);
//! * [`interp`] runs it: warps of 32 lanes in lock-step, barriers, exact fractional permissions,
//!   runtime checking of every contract; straight-line kernels launched from the host run
//!   in bulk instead, all threads column by column (`interp::bulk`, a fast path that gives up
//!   to the warps whenever anything is to be reported);
//! * [`value`] holds values, locations and exact permission amounts, [`perm`] the permission
//!   holders, [`heap`] the arrays and objects;
//! * [`race`] is the dynamic data-race detector;
//! * [`vector`] evaluates simple expressions for a whole warp at once (a fast path);
//! * [`inputs`] generates inputs (Z3 for sizes, a seeded PRNG for contents);
//! * [`validate`] compares two programs on the same inputs.
//!
//! Library entry points: [`run_program`] and [`validate::validate`].

// Refusals carry whole diagnostics in `Err` (the cold path); AST enums keep large variants
// inline. Boxing them would only add noise (the same allowance as every crate of the workspace).
#![allow(clippy::result_large_err, clippy::large_enum_variant)]

pub mod adapter;
pub mod compile;
pub mod cost;
pub mod heap;
pub mod help;
pub mod inputs;
pub mod interp;
pub mod matching;
pub mod memo;
pub mod perm;
pub mod race;
pub mod reject;
pub mod validate;
pub mod value;
pub mod vector;

pub use inputs::{InVal, Input, InputBound};
pub use interp::{Checks, Config, Schedule};
pub use validate::{validate, ValidateOptions, ValidateOutcome, Verdict};

use compile::CProgram;
use diag::{Diagnostic, SourceFile};
use front::{parse, ParseOptions};
use interp::{Interp, Stop};
use std::rc::Rc;
use std::sync::Arc;
use value::input_seed;

/// Errors that prevent running at all (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum SemError {
    #[error("the program does not parse")]
    Parse(Vec<Diagnostic>),
    #[error("the program cannot be run")]
    Compile(Vec<Diagnostic>),
    #[error("{0}")]
    Entry(String),
    #[error("bad input: {0}")]
    Input(String),
}

impl SemError {
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut ds = match self {
            SemError::Parse(d) | SemError::Compile(d) => d.clone(),
            SemError::Entry(m) | SemError::Input(m) => {
                vec![Diagnostic::error("R-USAGE", m.clone())]
            }
        };
        help::add_default_help(&mut ds);
        ds
    }
}

/// A parsed and lowered program.
#[derive(Clone)]
pub struct Loaded {
    pub prog: Rc<CProgram>,
    pub src: Rc<str>,
}

pub fn load(src: &str) -> Result<Loaded, SemError> {
    let mut parsed = parse(src, &ParseOptions::default());
    if parsed.has_errors() {
        return Err(SemError::Parse(parsed.errors().cloned().collect()));
    }
    // The files of a program (`--with`) are joined into `src`: a class declared in several of
    // them is one class, as `verify --program` has it (`front::merge`). Each declaration counts
    // as its own file here, since the joined text no longer says where the files meet.
    let starts: Vec<usize> = parsed.program.items.iter().map(|i| i.span().start()).collect();
    let conflicts = front::merge::merge_split_classes(&mut parsed.program, src, &starts);
    if !conflicts.is_empty() {
        return Err(SemError::Parse(conflicts));
    }
    // A VerCors 2 class contract's lock is shared by `commit`, which the interpreter's lock
    // model (shared at the end of the constructor) does not follow: refused, not misread.
    if let Some(c) = parsed.program.items.iter().find_map(|i| match i {
        front::ast::Item::Class(c) if !c.contract.is_empty() => Some(c),
        _ => None,
    }) {
        return Err(SemError::Parse(vec![Diagnostic::error(
            "R-UNSUPPORTED",
            format!("the class contract of `{}` (VerCors 2's lock invariant) is not run by the interpreter", c.name.name),
        )
        .with_primary(c.contract[0].span, "not supported by `alpine-rs run`")
        .with_help("state the lock invariant as a member, `resource lock_invariant() = …;`, established by every constructor")]));
    }
    // ADTs are uninterpreted functions constrained by axioms: nothing to execute.
    if let Some(a) = parsed.program.items.iter().find_map(|i| match i {
        front::ast::Item::Adt(a) => Some(a),
        _ => None,
    }) {
        return Err(SemError::Parse(vec![Diagnostic::error(
            "R-UNSUPPORTED",
            if a.is_enum {
                format!("the enum `{}` is not run by the interpreter", a.name.name)
            } else {
                format!(
                    "the `adt` `{}` (uninterpreted functions) is not run by the interpreter",
                    a.name.name
                )
            },
        )
        .with_primary(a.name.span, "not supported by `alpine-rs run`")]));
    }
    // v2 generics: run the instances, as `verify` encodes them.
    let mono = analyze::generics::monomorphise(&parsed.program).map_err(|ps| {
        SemError::Parse(
            ps.into_iter()
                .map(|(what, span)| {
                    Diagnostic::error(
                        "R-UNSUPPORTED",
                        format!("{what} is not run by the interpreter"),
                    )
                    .with_primary(span, "not supported by `alpine-rs run`")
                })
                .collect(),
        )
    })?;
    let program = mono.as_ref().unwrap_or(&parsed.program);
    // The verifier's resolution and types: an ill-typed program is bad input (exit 2), not a
    // program to run (`verify` refuses it the same way).
    let (ds, core) = analyze::typeck::check_members(program);
    if ds.iter().any(|d| d.is_error()) {
        return Err(SemError::Parse(ds.into_iter().filter(|d| d.is_error()).collect()));
    }
    // The value types' built-in members (`xs.head`, `m.keys`) in their core form.
    let program = core.as_ref().unwrap_or(program);
    let prog = compile::compile(program).map_err(SemError::Compile)?;
    Ok(Loaded { prog: Rc::new(prog), src: Rc::from(src) })
}

/// Outcome class of one run (semantics.md §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// A program or checker error.
    Error,
    /// Fuel, integer range, unbounded quantifier, unsupported construct, no valid input.
    Inconclusive,
    /// `assume false` reached.
    Infeasible,
    /// The (user-given) input violates the precondition.
    InvalidInput,
}

#[derive(Clone, Debug)]
pub struct RunResult {
    /// `Class.method`
    pub method: String,
    pub input_id: u64,
    /// Shared, not copied: inputs can be large arrays.
    pub input: Arc<Input>,
    pub status: Status,
    /// Errors (checker and semantic) and the inconclusive reason, in order of discovery.
    pub errors: Vec<Diagnostic>,
    pub ret: Option<InVal>,
    /// The return value is ghost state (a `seq`, say).
    pub ret_ghost: bool,
    /// Final values by access path (`a`, `this.f`).
    pub observables: Vec<Observable>,
    pub race: bool,
    /// Lane-statements executed.
    pub stmts: u64,
    /// Fuel the run used: statements, loop heads, calls and quantifier steps (`--fuel`).
    pub fuel_used: u64,
    pub launches: u32,
    /// Of `launches`, those run by the bulk fast path (for tests and benchmarks).
    pub bulk_launches: u32,
    /// For an input the entry precondition rejected: the span of the clause that rejected it.
    pub rejected_by: Option<front::Span>,
    /// The cost model's counts (semantics.md §9), when the configuration asked for them.
    pub cost: Option<cost::CostReport>,
}

/// A final value that `validate` compares (semantics.md §11.2).
#[derive(Clone, Debug, PartialEq)]
pub struct Observable {
    /// Access path: `a`, `this.f`.
    pub path: String,
    pub value: InVal,
    /// Ghost state (`given` parameters, `seq`/`set`/`bag` values): compared only with
    /// `--compare-ghost`.
    pub ghost: bool,
}

#[derive(Clone, Debug)]
pub struct RunOptions {
    /// `Class.method` or `method`; `None`: every non-pure method (or the unique kernel method).
    pub entry: Option<String>,
    /// User inputs; each is run once (after the generated ones).
    pub inputs: Vec<Input>,
    /// Number of generated inputs per entry method.
    pub random: usize,
    pub seed: u64,
    pub config: Config,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            entry: None,
            inputs: Vec::new(),
            random: 1,
            seed: 0,
            config: Config::default(),
        }
    }
}

/// Whether method `m` can be an entry: not pure, not a constructor or predicate, with a body.
pub fn runnable(prog: &CProgram, m: u32) -> bool {
    let m = &prog.methods[m as usize];
    !m.is_pure && !m.is_ctor && !m.is_predicate && matches!(m.body, compile::Body::Code(_))
}

/// Entry methods: the named one, else the unique non-pure method containing a `par`, else all
/// non-pure, non-constructor methods with a body.
pub fn entries(prog: &CProgram, entry: Option<&str>) -> Result<Vec<u32>, SemError> {
    let runnable = |i: &u32| runnable(prog, *i);
    if let Some(e) = entry {
        let v: Vec<u32> = prog.method_by_qualified(e).into_iter().filter(runnable).collect();
        return match v.len() {
            0 => Err(SemError::Entry(format!("no runnable method `{e}`"))),
            1 => Ok(v),
            _ => Err(SemError::Entry(format!("`{e}` is ambiguous; use Class.method"))),
        };
    }
    let all: Vec<u32> = (0..prog.methods.len() as u32).filter(runnable).collect();
    let kernels: Vec<u32> =
        all.iter().copied().filter(|&i| prog.methods[i as usize].contains_par).collect();
    if kernels.len() == 1 {
        return Ok(kernels);
    }
    if all.is_empty() {
        return Err(SemError::Entry("no runnable method".into()));
    }
    Ok(all)
}

/// Run one entry method on one concrete input.
pub fn run_one(
    l: &Loaded,
    method: u32,
    input: &Arc<Input>,
    input_id: u64,
    cfg: &Config,
) -> RunResult {
    let mut it = Interp::new(l.prog.clone(), l.src.clone(), cfg.clone());
    let md = &l.prog.methods[method as usize];
    let (this, args) = inputs::materialize(&mut it, md, input);
    let roots: Vec<(String, value::Value, bool)> = md
        .params
        .iter()
        .chain(&md.yields)
        .enumerate()
        .zip(&args)
        .map(|((i, p), v)| (p.1.clone(), v.clone(), i >= md.given_from || p.2.is_ghost()))
        .collect();
    if it.cost.is_some() {
        for (n, v, _) in &roots {
            it.cost_input_space(n, v);
        }
        if let value::Value::Ref(id) = &this {
            if let Some(heap::HObj::Object { class, fields }) = it.heap.objs.get(*id as usize) {
                let named: Vec<(String, value::Value)> = l.prog.classes[*class as usize]
                    .fields
                    .iter()
                    .zip(fields)
                    .map(|(f, v)| (f.1.clone(), v.clone()))
                    .collect();
                for (n, v) in &named {
                    it.cost_input_space(n, v);
                }
            }
        }
    }
    let out = it.run_entry(method, this.clone(), args);
    let mut errors = std::mem::take(&mut it.errors);
    if it.suppressed > 0 {
        errors.push(Diagnostic::note(
            "R-LIMIT",
            format!("{} further checker errors suppressed", it.suppressed),
        ));
    }
    let (status, ret) = match out {
        Ok(None) => (Status::InvalidInput, None),
        Ok(Some(v)) => {
            let st = if errors.iter().any(|d| d.is_error()) { Status::Error } else { Status::Ok };
            let ret = if md.ret == compile::Ty::Void {
                None
            } else {
                Some(inputs::read_back(&it.heap, &l.prog, &v))
            };
            (st, ret)
        }
        Err(Stop::Error(d)) => {
            errors.push(*d);
            (Status::Error, None)
        }
        Err(Stop::Inconclusive(d)) => {
            errors.push(*d);
            (Status::Inconclusive, None)
        }
        Err(Stop::Infeasible(_)) => (Status::Infeasible, None),
    };
    help::add_default_help(&mut errors);
    let mut observables = Vec::new();
    for (n, v, ghost) in &roots {
        if let value::Value::Ref(_) = v {
            observables.push(Observable {
                path: n.clone(),
                value: inputs::read_back(&it.heap, &l.prog, v),
                ghost: *ghost,
            });
        }
    }
    if let value::Value::Ref(id) = this {
        if let heap::HObj::Object { class, fields } = &it.heap.objs[id as usize] {
            let c = &l.prog.classes[*class as usize];
            for (f, v) in c.fields.iter().zip(fields) {
                observables.push(Observable {
                    path: format!("this.{}", f.1),
                    value: inputs::read_back(&it.heap, &l.prog, v),
                    ghost: f.2.is_ghost(),
                });
            }
        }
    }
    RunResult {
        method: l.prog.qualified(method),
        input_id,
        input: Arc::clone(input),
        status,
        errors,
        ret,
        ret_ghost: md.ret.is_ghost(),
        observables,
        race: it.race_found,
        stmts: it.stmts,
        fuel_used: cfg.fuel.saturating_sub(it.fuel),
        launches: it.launches,
        bulk_launches: it.bulk_launches,
        rejected_by: it.pre_rejected,
        cost: it.cost.as_ref().map(|c| c.report()),
    }
}

/// Generate input `index` for `method` and run it, redrawing candidates whose precondition
/// fails (up to 50, semantics.md §10.2 stage 3).
pub fn run_generated(l: &Loaded, method: u32, seed: u64, index: u64, cfg: &Config) -> RunResult {
    let s = input_seed(seed, index);
    let mut rej = reject::Rejections::default();
    for attempt in 0..50 {
        // Each candidate may cost Z3 its whole timeout (a nonlinear shape part): past the
        // deadline, stop drawing (50 candidates took 50 times the timeout; found by the fuzzer,
        // `fixtures/fuzz/`).
        if attempt > 0 && cfg.deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            let why = rej.reason(&l.src).unwrap_or_else(|| "no valid input found".into());
            let msg =
                format!("no valid input found in the time given ({attempt} candidates): {why}");
            return no_input(l, method, index, msg);
        }
        let input = match inputs::generate(
            &l.prog,
            method,
            s,
            attempt,
            index,
            inputs::Draw::of(cfg, false),
        ) {
            Ok(i) => Arc::new(i),
            Err(msg) => return no_input(l, method, index, msg),
        };
        let r = run_one(l, method, &input, index, cfg);
        if r.status != Status::InvalidInput {
            return r;
        }
        rej.add(&r);
    }
    let why = rej.reason(&l.src).unwrap_or_else(|| "no valid input found".into());
    no_input(l, method, index, format!("no valid input found after 50 candidates: {why}"))
}

fn no_input(l: &Loaded, method: u32, index: u64, msg: String) -> RunResult {
    RunResult {
        method: l.prog.qualified(method),
        input_id: index,
        input: Arc::default(),
        status: Status::Inconclusive,
        errors: vec![Diagnostic::error("R-NO-INPUT", msg)
            .with_primary(l.prog.methods[method as usize].span, "entry method")],
        ret: None,
        ret_ghost: false,
        observables: Vec::new(),
        race: false,
        stmts: 0,
        fuel_used: 0,
        launches: 0,
        bulk_launches: 0,
        rejected_by: None,
        cost: None,
    }
}

/// Run `f` on a thread with a large stack: pure functions recurse (up to 10 000 calls deep) and
/// the evaluator is recursive.
pub fn with_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        match std::thread::Builder::new().stack_size(1 << 29).spawn_scoped(s, f) {
            Ok(h) => match h.join() {
                Ok(v) => v,
                Err(p) => std::panic::resume_unwind(p),
            },
            Err(e) => panic!("cannot spawn the interpreter thread: {e}"),
        }
    })
}

/// Run a program: every entry method on `random` generated inputs plus the user inputs.
pub fn run_program(src: &str, opts: &RunOptions) -> Result<Vec<RunResult>, SemError> {
    with_big_stack(|| run_program_here(src, opts))
}

fn run_program_here(src: &str, opts: &RunOptions) -> Result<Vec<RunResult>, SemError> {
    let l = load(src)?;
    let ms = entries(&l.prog, opts.entry.as_deref())?;
    check_bounds(&l.prog, &ms, &opts.config.bounds)?;
    let mut out = Vec::new();
    for &m in &ms {
        for i in 0..opts.random as u64 {
            out.push(run_generated(&l, m, opts.seed, i, &opts.config));
        }
        for (k, input) in opts.inputs.iter().enumerate() {
            out.push(run_one(
                &l,
                m,
                &Arc::new(input.clone()),
                opts.random as u64 + k as u64,
                &opts.config,
            ));
        }
    }
    Ok(out)
}

/// Every `--set`/`--bound` names an input of some entry method (a parameter, a `given` or
/// `yields` variable, its `.length`, `|xs|`, a field `o.f` of an object input, or `this.f`): a
/// misspelt name would otherwise be ignored, and the run would use generated values the user
/// thinks fixed.
fn check_bounds(prog: &CProgram, ms: &[u32], bounds: &[InputBound]) -> Result<(), SemError> {
    let inputs: Vec<&str> = ms
        .iter()
        .flat_map(|&m| {
            let m = &prog.methods[m as usize];
            m.params.iter().chain(&m.yields).map(|p| p.1.as_str())
        })
        .collect();
    let names = |n: &str| {
        let base = n
            .strip_suffix(".length")
            .or_else(|| n.strip_prefix('|').and_then(|x| x.strip_suffix('|')))
            .unwrap_or(n);
        base.starts_with("this.")
            || inputs.contains(&base)
            || base.split_once('.').is_some_and(|(o, _)| inputs.contains(&o))
    };
    match bounds.iter().find(|b| !names(&b.name)) {
        Some(b) => {
            let mut known: Vec<&str> = inputs.clone();
            known.sort_unstable();
            known.dedup();
            Err(SemError::Input(format!(
                "`{}` is not an input of the method run (its inputs: {}); `--set` and `--bound` take a parameter, `a.length`, `|xs|`, `o.f` or `this.f`",
                b.name,
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            )))
        }
        None => Ok(()),
    }
}

/// Render a run's diagnostics (plain text).
pub fn render(name: &str, src: &str, diags: &[Diagnostic]) -> String {
    let f = SourceFile::new(name, src);
    diag::render_plain(&[&f], diags)
}

/// Parse a YAML/JSON input file (semantics.md §10.1).
pub fn parse_input(text: &str, seed: u64) -> Result<Input, SemError> {
    let v: serde_yaml::Value =
        serde_yaml::from_str(text).map_err(|e| SemError::Input(e.to_string()))?;
    let mut rng = value::Rng::new(v.get("seed").and_then(|s| s.as_u64()).unwrap_or(seed));
    let mut input = Input { seed, ..Input::default() };
    let conv = |x: &serde_yaml::Value, rng: &mut value::Rng| -> Result<InVal, SemError> {
        yaml_val(x, rng)
    };
    if let Some(serde_yaml::Value::Mapping(m)) = v.get("args") {
        for (k, x) in m {
            let name = k
                .as_str()
                .ok_or_else(|| SemError::Input("argument names must be strings".into()))?;
            input.args.push((name.to_string(), conv(x, &mut rng)?));
        }
    }
    if let Some(serde_yaml::Value::Mapping(m)) = v.get("this") {
        for (k, x) in m {
            let name =
                k.as_str().ok_or_else(|| SemError::Input("field names must be strings".into()))?;
            input.this_fields.push((name.to_string(), conv(x, &mut rng)?));
        }
    }
    Ok(input)
}

fn yaml_val(x: &serde_yaml::Value, rng: &mut value::Rng) -> Result<InVal, SemError> {
    use serde_yaml::Value as Y;
    Ok(match x {
        Y::Null => InVal::Null,
        Y::Bool(b) => InVal::Bool(*b),
        Y::Number(n) => {
            InVal::Int(n.as_i64().ok_or_else(|| SemError::Input(format!("not an integer: {n}")))?)
        }
        Y::Sequence(s) => {
            let v: Result<Vec<InVal>, SemError> = s.iter().map(|e| yaml_val(e, rng)).collect();
            let v = v?;
            let elem = match v.first() {
                Some(InVal::Bool(_)) => compile::Ty::Bool,
                Some(InVal::Array(t, _)) => compile::Ty::Array(Box::new(t.clone())),
                _ => compile::Ty::Int,
            };
            InVal::Array(elem, v)
        }
        Y::Mapping(m) => {
            let get = |k: &str| m.get(Y::String(k.into())).and_then(|v| v.as_i64());
            let fill = m
                .get(Y::String("fill".into()))
                .and_then(|v| v.as_str())
                .unwrap_or("zero")
                .to_string();
            let (lo, hi) = match m.get(Y::String("range".into())) {
                Some(Y::Sequence(r)) if r.len() == 2 => {
                    (r[0].as_i64().unwrap_or(-100), r[1].as_i64().unwrap_or(100))
                }
                _ => (-100, 100),
            };
            let cell = |rng: &mut value::Rng| match fill.as_str() {
                "random" => InVal::Int(rng.range(lo, hi)),
                _ => InVal::Int(0),
            };
            if let Some(len) = get("len") {
                let n =
                    usize::try_from(len).map_err(|_| SemError::Input("negative length".into()))?;
                InVal::Array(compile::Ty::Int, (0..n).map(|_| cell(rng)).collect())
            } else if let (Some(r), Some(c)) = (get("rows"), get("cols")) {
                let (r, c) = (
                    usize::try_from(r).map_err(|_| SemError::Input("negative rows".into()))?,
                    usize::try_from(c).map_err(|_| SemError::Input("negative cols".into()))?,
                );
                InVal::Array(
                    compile::Ty::Array(Box::new(compile::Ty::Int)),
                    (0..r)
                        .map(|_| {
                            InVal::Array(compile::Ty::Int, (0..c).map(|_| cell(rng)).collect())
                        })
                        .collect(),
                )
            } else if m.keys().any(|k| matches!(k.as_str(), Some("fill" | "range"))) {
                return Err(SemError::Input("array spec needs `len` or `rows`/`cols`".into()));
            } else {
                // Any other map is an object: field names to values.
                let mut fields = Vec::new();
                for (k, x) in m {
                    let name = k
                        .as_str()
                        .ok_or_else(|| SemError::Input("field names must be strings".into()))?;
                    fields.push((name.to_string(), yaml_val(x, rng)?));
                }
                InVal::Object(String::new(), fields)
            }
        }
        // A rational (`"1/2"`, `"1\\2"`) or an integer too large for a YAML number.
        Y::String(t) => match rational_text(t) {
            Some(v) => v,
            None => return Err(SemError::Input(format!("not a number or fraction: {t:?}"))),
        },
        other => return Err(SemError::Input(format!("unsupported input value {other:?}"))),
    })
}

/// `n/d` or `n\d` as a rational input, a lone integer as an integer of any size.
fn rational_text(t: &str) -> Option<InVal> {
    use num_bigint::BigInt;
    let num = |s: &str| s.trim().parse::<BigInt>().ok();
    match t.split_once(['/', '\\']) {
        Some((n, d)) => {
            let (n, d) = (num(n)?, num(d)?);
            (d != BigInt::from(0)).then(|| InVal::Rat(num_rational::BigRational::new(n, d), 0))
        }
        None => {
            let n = num(t)?;
            Some(match i64::try_from(&n) {
                Ok(i) => InVal::Int(i),
                Err(_) => InVal::Big(n),
            })
        }
    }
}
