//! The plan: the document as written (YAML, deserialized with serde) and its checks, which turn
//! it into the jobs to run or into diagnostics (A07xx) that point into the YAML.

use super::locate::{key_span, locate, offset_of, token_end, value_span, Seg};

use crate::cli::apply::{build_step, StepSpec};
use crate::diag::Diagnostic;
use crate::front::span::Span;
use crate::front::{Dialect, DialectChoice};
use crate::transforms::params::{Raw, Spelling, StepError};
use crate::transforms::registry;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

// ---------------------------------------------------------------------------------------------
// The plan as written

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct PlanDoc {
    jobs: Vec<JobDoc>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct JobDoc {
    #[serde(default)]
    name: Option<String>,
    files: OneOrMany<String>,
    #[serde(default)]
    steps: Vec<StepDoc>,
    #[serde(default)]
    output: Option<String>,
    #[serde(default)]
    in_place: bool,
    #[serde(default)]
    verify: bool,
    #[serde(default)]
    validate: bool,
    /// Entry method for `validate` (`method`, `Class.method`, `ORIG:OPT`).
    #[serde(default)]
    entry: Option<String>,
    /// Apply the steps that are not refused, and write that.
    #[serde(default)]
    keep_going: bool,
    #[serde(default)]
    dialect: Option<String>,
}

#[derive(Deserialize, Debug)]
struct StepDoc {
    opt: String,
    at: Scalar,
    /// The parameters, by plan key (checked against the optimization's schema).
    #[serde(flatten)]
    params: BTreeMap<String, ParamDoc>,
}

/// A parameter value as written in a plan.
#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
enum ParamDoc {
    Switch(bool),
    One(Scalar),
    Many(Vec<Scalar>),
}

/// A scalar written as a number or a string (`tile_size: 32` or `tile_size: "n / 4"`).
#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
enum Scalar {
    Int(i64),
    Str(String),
}

impl Scalar {
    fn text(&self) -> String {
        match self {
            Scalar::Int(i) => i.to_string(),
            Scalar::Str(s) => s.clone(),
        }
    }
}

#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T: Clone> OneOrMany<T> {
    fn to_vec(&self) -> Vec<T> {
        match self {
            OneOrMany::One(x) => vec![x.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

impl StepDoc {
    fn spec(&self) -> StepSpec {
        StepSpec {
            opt: self.opt.clone(),
            at: match &self.at {
                Scalar::Int(n) => format!("line:{n}"),
                Scalar::Str(s) => s.clone(),
            },
            params: self
                .params
                .iter()
                .map(|(k, v)| {
                    let raw = match v {
                        ParamDoc::Switch(b) => Raw::Switch(*b),
                        ParamDoc::One(x) => Raw::Text(x.text()),
                        ParamDoc::Many(xs) => Raw::List(xs.iter().map(Scalar::text).collect()),
                    };
                    (k.clone(), raw)
                })
                .collect(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The checked plan

#[derive(Debug)]
pub(super) struct Job {
    pub(super) name: String,
    pub(super) files: Vec<Input>,
    pub(super) steps: Vec<StepSpec>,
    pub(super) output: Option<PathBuf>,
    pub(super) in_place: bool,
    pub(super) verify: bool,
    pub(super) validate: bool,
    pub(super) entry: Option<String>,
    pub(super) keep_going: bool,
    pub(super) dialect: DialectChoice,
}

#[derive(Debug, Clone)]
pub(super) struct Input {
    /// Where it is read from.
    pub(super) path: PathBuf,
    /// How it is shown: relative to the plan directory when it lies there.
    pub(super) shown: String,
    /// Where its output goes, if anywhere.
    pub(super) target: Option<PathBuf>,
}

/// Lexical normalization (`a/./b/../c` → `a/c`); paths need not exist.
pub(super) fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                // `/..` is `/`; a leading `..` stays.
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            c => out.push(c.as_os_str()),
        }
    }
    out
}

fn has_glob_meta(s: &str) -> bool {
    s.contains(['*', '?', '[', '{'])
}

/// The fixed directory prefix of a pattern: the components before the first wildcard, without
/// the file name of a literal path.
pub(super) fn pattern_base(pattern: &Path) -> PathBuf {
    let mut base = PathBuf::new();
    let comps: Vec<Component> = pattern.components().collect();
    for (i, c) in comps.iter().enumerate() {
        let s = c.as_os_str().to_string_lossy();
        if has_glob_meta(&s) || i + 1 == comps.len() {
            break;
        }
        base.push(c.as_os_str());
    }
    base
}

pub(super) fn common_ancestor(paths: &[PathBuf]) -> PathBuf {
    let mut it = paths.iter();
    let Some(first) = it.next() else {
        return PathBuf::new();
    };
    let mut common: Vec<Component> = first.components().collect();
    for p in it {
        let n = common.iter().zip(p.components()).take_while(|(a, b)| *a == b).count();
        common.truncate(n);
    }
    common.iter().map(|c| c.as_os_str()).collect()
}

struct PlanCheck<'a> {
    text: &'a str,
    diags: Vec<Diagnostic>,
}

impl PlanCheck<'_> {
    fn error(&mut self, code: &str, span: Span, msg: String, label: &str, help: &str) {
        self.diags.push(Diagnostic::error(code, msg).with_primary(span, label).with_help(help));
    }
}

/// Read and check the plan; `Err` holds its diagnostics (all of them, not just the first).
pub(super) fn load_plan(plan_path: &Path, text: &str) -> Result<Vec<Job>, Vec<Diagnostic>> {
    let doc: PlanDoc = match serde_yaml::from_str(text) {
        Ok(d) => d,
        Err(e) => {
            let msg = e.to_string();
            let msg = match msg.rfind(" at line ") {
                Some(i) => msg[..i].to_string(),
                None => msg,
            };
            let span = e
                .location()
                .map(|l| {
                    let s = offset_of(text, l.line(), l.column());
                    Span::new(s, token_end(text, s, true).max(s))
                })
                .unwrap_or(Span::new(0, 0));
            return Err(vec![Diagnostic::error("A0701", format!("invalid plan: {msg}"))
                .with_primary(span, "here")
                .with_help(
                    "a plan is `jobs:` with a list of jobs; each job has `files` and optionally \
                     `name`, `steps`, `output` or `in_place`, `verify`, `validate`, `entry`, \
                     `keep_going`, `dialect`",
                )]);
        }
    };
    let dir = plan_path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut ck = PlanCheck { text, diags: Vec::new() };
    if doc.jobs.is_empty() {
        let sp = key_span(text, &[], "jobs");
        ck.error(
            "A0708",
            sp,
            "the plan has no jobs".into(),
            "empty",
            "add a job: `- files: [\"*.pvl\"]`",
        );
    }
    let mut jobs = Vec::new();
    for (ji, jd) in doc.jobs.iter().enumerate() {
        let node = [Seg::Key("jobs"), Seg::Index(ji)];
        let name = jd.name.clone().unwrap_or_else(|| format!("job {}", ji + 1));
        let dialect = match jd.dialect.as_deref().map(str::parse::<DialectChoice>) {
            None => DialectChoice::Auto,
            Some(Ok(d)) => d,
            Some(Err(m)) => {
                let sp = value_span(ck.text, &node, "dialect");
                ck.error("A0703", sp, m, "unknown dialect", "use auto, v1 or v2");
                DialectChoice::Auto
            }
        };
        if jd.output.is_some() && jd.in_place {
            let sp = key_span(ck.text, &node, "in_place");
            ck.error(
                "A0706",
                sp,
                format!("{name}: `output` and `in_place` exclude each other"),
                "conflicts with `output`",
                "keep one of them",
            );
        }
        // Steps.
        let mut steps = Vec::new();
        for (si, sd) in jd.steps.iter().enumerate() {
            let snode = [Seg::Key("jobs"), Seg::Index(ji), Seg::Key("steps"), Seg::Index(si)];
            let spec = sd.spec();
            check_step(&mut ck, &snode, &spec);
            steps.push(spec);
        }
        // Files.
        let patterns = jd.files.to_vec();
        if patterns.is_empty() {
            let sp = value_span(ck.text, &node, "files");
            ck.error(
                "A0704",
                sp,
                format!("{name}: `files` is empty"),
                "no pattern",
                "list files or glob patterns, e.g. [\"kernels/**/*.pvl\"]",
            );
        }
        let mut bases = Vec::new();
        let mut found: BTreeMap<PathBuf, String> = BTreeMap::new();
        for (pi, pat) in patterns.iter().enumerate() {
            let pnode = [Seg::Key("jobs"), Seg::Index(ji), Seg::Key("files"), Seg::Index(pi)];
            let span = || {
                locate(ck.text, &pnode, false)
                    .or_else(|| {
                        locate(
                            ck.text,
                            &[Seg::Key("jobs"), Seg::Index(ji), Seg::Key("files")],
                            false,
                        )
                    })
                    .unwrap_or(Span::new(0, 0))
            };
            let full =
                if Path::new(pat).is_absolute() { PathBuf::from(pat) } else { dir.join(pat) };
            bases.push(normalize(&pattern_base(&full)));
            let glob_text = if Path::new(pat).is_absolute() {
                pat.clone()
            } else {
                format!("{}/{pat}", glob::Pattern::escape(&dir.to_string_lossy()))
            };
            let opts = glob::MatchOptions {
                case_sensitive: true,
                require_literal_separator: true,
                require_literal_leading_dot: true,
            };
            let paths = match glob::glob_with(&glob_text, opts) {
                Ok(p) => p,
                Err(e) => {
                    let sp = span();
                    ck.error(
                        "A0705",
                        sp,
                        format!("`{pat}` is not a valid glob pattern: {}", e.msg),
                        "bad pattern",
                        "patterns use *, ** (any directories), ? and [abc]",
                    );
                    continue;
                }
            };
            let mut n = 0;
            for p in paths.flatten() {
                if !p.is_file() {
                    continue;
                }
                n += 1;
                let shown = p
                    .strip_prefix(dir)
                    .map(|r| r.display().to_string())
                    .unwrap_or_else(|_| p.display().to_string());
                found.entry(normalize(&p)).or_insert(shown);
            }
            if n == 0 {
                let sp = span();
                ck.error(
                    "A0704",
                    sp,
                    format!("`{pat}` matches no file"),
                    "matches nothing",
                    &format!("patterns are relative to the plan's directory `{}`", dir.display()),
                );
            }
        }
        let root = common_ancestor(&bases);
        let out_dir = jd.output.as_ref().map(|o| normalize(&dir.join(o)));
        let files = found
            .into_iter()
            .map(|(path, shown)| {
                let target = match (&out_dir, jd.in_place) {
                    (Some(o), _) => Some(o.join(path.strip_prefix(&root).unwrap_or(&path))),
                    (None, true) => Some(path.clone()),
                    (None, false) => None,
                };
                Input { path, shown, target }
            })
            .collect();
        jobs.push(Job {
            name,
            files,
            steps,
            output: out_dir,
            in_place: jd.in_place,
            verify: jd.verify,
            validate: jd.validate,
            entry: jd.entry.clone(),
            keep_going: jd.keep_going,
            dialect,
        });
    }
    check_targets(&mut ck, &jobs);
    // In the order of the plan text, whatever order the checks ran in.
    ck.diags.sort_by_key(|d| d.primary_span().map_or(0, |s| s.start()));
    if ck.diags.is_empty() {
        Ok(jobs)
    } else {
        Err(ck.diags)
    }
}

/// Step checks that need no file: the optimization, the parameters it takes, and values that are
/// wrong in every dialect (expressions are parsed again in each file's own dialect later).
fn check_step(ck: &mut PlanCheck, snode: &[Seg], spec: &StepSpec) {
    let Some(opt) = registry::lookup(&spec.opt) else {
        let sp = value_span(ck.text, snode, "opt");
        ck.error(
            "A0702",
            sp,
            format!("unknown optimization `{}`", spec.opt),
            "unknown",
            &format!("known: {}", registry::known_names()),
        );
        return;
    };
    let meta = opt.meta();
    let mut applicable = true;
    for (key, _) in &spec.params {
        if meta.params.iter().any(|p| p.is_named(key, Spelling::Key)) {
            continue;
        }
        applicable = false;
        let sp = key_span(ck.text, snode, key);
        let takes =
            meta.params.iter().map(|p| format!("`{}`", p.key)).collect::<Vec<_>>().join(", ");
        let anywhere = registry::ALL
            .iter()
            .flat_map(|o| o.meta().params)
            .any(|p| p.is_named(key, Spelling::Key));
        if anywhere {
            ck.error(
                "A0703",
                sp,
                format!("`{key}` does not apply to {}", meta.name),
                "not a parameter of this optimization",
                &format!("{} takes: {takes}", meta.name),
            );
        } else {
            ck.error(
                "A0701",
                sp,
                format!("invalid plan: unknown step key `{key}`"),
                "unknown key",
                &format!("a step has `opt`, `at` and parameters; {} takes: {takes}", meta.name),
            );
        }
    }
    for p in meta.params {
        let keys: Vec<&String> = spec
            .params
            .iter()
            .filter(|(k, _)| p.is_named(k, Spelling::Key))
            .map(|(k, _)| k)
            .collect();
        if let [first, second, ..] = keys.as_slice() {
            let sp = key_span(ck.text, snode, second);
            ck.error(
                "A0703",
                sp,
                format!("`{first}` and `{second}` are the same parameter"),
                "given twice",
                &format!("keep `{}`", p.key),
            );
            applicable = false;
        }
    }
    if !applicable {
        return;
    }
    let (e1, e2) = (
        build_step(spec, Spelling::Key, Dialect::V1).err(),
        build_step(spec, Spelling::Key, Dialect::V2).err(),
    );
    if let (Some(e), Some(_)) = (e1, e2) {
        let field = e.field().to_string();
        let sp = match e {
            StepError::Missing { .. } => {
                // Point at the step itself: the key is not there.
                locate(ck.text, snode, false).unwrap_or(Span::new(0, 0))
            }
            _ => value_span(ck.text, snode, &field),
        };
        let msg = e.message(meta.name, |f| format!("`{f}`"));
        ck.error(
            "A0703",
            sp,
            msg,
            "in this step",
            "see `alpine-rs apply --help` for the parameters",
        );
    }
}

/// Two files must not be written to one place, and no job may overwrite another job's input.
fn check_targets(ck: &mut PlanCheck, jobs: &[Job]) {
    let inputs: BTreeSet<&Path> =
        jobs.iter().flat_map(|j| j.files.iter().map(|f| f.path.as_path())).collect();
    let mut seen: BTreeMap<&Path, (usize, &str)> = BTreeMap::new();
    for (ji, j) in jobs.iter().enumerate() {
        let node = [Seg::Key("jobs"), Seg::Index(ji)];
        let key = if j.in_place { "in_place" } else { "output" };
        for f in &j.files {
            let Some(t) = &f.target else { continue };
            if let Some((other, shown)) = seen.insert(t.as_path(), (ji, &f.shown)) {
                let sp = key_span(ck.text, &node, key);
                let msg = format!(
                    "`{}` would be written twice (from `{shown}` in {}, and from `{}` in {})",
                    t.display(),
                    jobs[other].name,
                    f.shown,
                    j.name
                );
                ck.error(
                    "A0707",
                    sp,
                    msg,
                    "second writer",
                    "give the jobs different output directories, or let one job do both",
                );
                break;
            }
            if !j.in_place && inputs.contains(t.as_path()) {
                let sp = key_span(ck.text, &node, key);
                ck.error(
                    "A0707",
                    sp,
                    format!("{}: the output `{}` is an input of the plan", j.name, t.display()),
                    "would overwrite an input",
                    "write elsewhere, or use `in_place: true` to rewrite inputs on purpose",
                );
                break;
            }
        }
    }
}
