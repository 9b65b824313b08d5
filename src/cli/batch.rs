//! `alpine-rs batch PLAN.yaml`: run optimization jobs over many files.
//!
//! ```yaml
//! jobs:
//!   - name: kernels                  # optional, for the summary
//!     files: ["kernels/**/*.pvl", "extra/one.pvl"]
//!     steps:                         # optional: without steps, each file's own annotations
//!       - { opt: unroll, at: "line:12", factor: 2 }
//!     output: out/                   # or: in_place: true; neither: report only
//!     verify: false
//!     validate: false
//! ```
//!
//! Paths are relative to the plan file. `output: DIR` mirrors the input tree: each file goes to
//! `DIR/<its path below the deepest directory that holds every pattern's fixed prefix>`.
//! The plan is checked completely before anything runs (exit 2, with diagnostics pointing into
//! the YAML). Then files are optimized in parallel (`--jobs N`); the verifier then checks every
//! input/output pair of the `verify` jobs in one JVM, the interpreter compares the pairs of the
//! `validate` jobs (in parallel again), and only then are outputs written, atomically, and only
//! those whose checks passed. A failing file or job never stops the others.
//!
//! Exit codes: 0 every job succeeded; 1 a job failed (a refusal, an error, a failed check);
//! 2 the plan is invalid; 3 nothing failed but a check could not decide.

use super::apply::{
    build_step, validate_code, validate_json, validate_pair, verify_json, worst, write_atomic,
    StepSpec, VerifyPair,
};
use super::common::{json_diags, Format};
use crate::diag::{self, Diagnostic, SourceFile};
use crate::front::span::Span;
use crate::front::{Dialect, DialectChoice, ParseOptions};
use crate::transforms::driver::{apply as drive, CliStep, DriverOptions, Report};
use crate::transforms::params::{Raw, Spelling, StepError};
use crate::transforms::registry;
use crate::viper::{self, Verdict, VerifyOptions, VerifyReport};
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::io::IsTerminal;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
pub struct BatchArgs {
    /// The plan (YAML).
    pub plan: PathBuf,
    /// Files optimized at the same time (default: the number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Per-query Z3 timeout in milliseconds.
    #[arg(long = "z3-timeout", default_value_t = crate::check::DEFAULT_TIMEOUT_MS)]
    pub z3_timeout: u32,
    /// Silicon timeout per program for `verify` jobs, in seconds (0: none).
    #[arg(long = "verify-timeout", default_value_t = 0, value_name = "S")]
    pub verify_timeout: u64,
    /// text: diagnostics on stderr and a summary table; json: one JSON object per job per line.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

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
// Locating nodes in the YAML text
//
// serde_yaml keeps no positions in its values, but it attaches the position of the event being
// deserialized to every error a visitor raises. A probe that walks to a node and fails there
// therefore learns where the real YAML parser saw that node, for any YAML layout.

#[derive(Clone, Copy, Debug)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

const FOUND: &str = "\u{0}alpine-rs-probe-found";

struct Probe<'a> {
    path: &'a [Seg<'a>],
    /// At the last key: the key itself rather than its value.
    want_key: bool,
}

impl<'de> DeserializeSeed<'de> for Probe<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Probe<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.leaf()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.leaf()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.leaf()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.leaf()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.leaf()
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.leaf()
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        match self.path.split_first() {
            None => Err(de::Error::custom(FOUND)),
            Some((Seg::Index(i), rest)) => {
                for _ in 0..*i {
                    if seq.next_element::<IgnoredAny>()?.is_none() {
                        return Ok(());
                    }
                }
                seq.next_element_seed(Probe {
                    path: rest,
                    want_key: self.want_key,
                })?;
                Ok(())
            }
            Some(_) => Ok(()),
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        match self.path.split_first() {
            None => Err(de::Error::custom(FOUND)),
            Some((Seg::Key(k), rest)) => {
                let at_key = rest.is_empty() && self.want_key;
                while let Some(hit) = map.next_key_seed(KeyProbe {
                    target: k,
                    fail: at_key,
                })? {
                    if hit {
                        map.next_value_seed(Probe {
                            path: rest,
                            want_key: self.want_key,
                        })?;
                        return Ok(());
                    }
                    map.next_value::<IgnoredAny>()?;
                }
                Ok(())
            }
            Some(_) => Ok(()),
        }
    }
}

impl Probe<'_> {
    fn leaf<E: de::Error>(&self) -> Result<(), E> {
        if self.path.is_empty() {
            Err(E::custom(FOUND))
        } else {
            Ok(())
        }
    }
}

struct KeyProbe<'a> {
    target: &'a str,
    fail: bool,
}

impl<'de> DeserializeSeed<'de> for KeyProbe<'_> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeyProbe<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        if v == self.target && self.fail {
            Err(E::custom(FOUND))
        } else {
            Ok(v == self.target)
        }
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
}

/// Byte offset of a 1-based line and column (in characters).
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let mut off = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return off
                + l.char_indices()
                    .nth(column.saturating_sub(1))
                    .map_or(l.len(), |(b, _)| b);
        }
        off += l.len();
    }
    text.len()
}

/// The end of the YAML token starting at `start`: a quoted scalar, a bracketed flow collection,
/// a key (up to its colon) or a plain scalar (up to a comment, the line end, or, inside a flow
/// collection, a separator).
fn token_end(text: &str, start: usize, key: bool) -> usize {
    let rest = &text[start..];
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let in_flow = text[line_start..start].chars().fold(0i32, |d, c| match c {
        '[' | '{' => d + 1,
        ']' | '}' => d - 1,
        _ => d,
    }) > 0;
    let mut chars = rest.char_indices().peekable();
    match rest.chars().next() {
        Some(q @ ('"' | '\'')) => {
            chars.next();
            while let Some((i, c)) = chars.next() {
                if c == '\\' && q == '"' {
                    chars.next();
                } else if c == q {
                    return start + i + 1;
                }
            }
            start + rest.len()
        }
        Some('[' | '{') => {
            let mut depth = 0;
            for (i, c) in rest.char_indices() {
                match c {
                    '[' | '{' => depth += 1,
                    ']' | '}' => {
                        depth -= 1;
                        if depth == 0 {
                            return start + i + 1;
                        }
                    }
                    _ => {}
                }
            }
            start + rest.len()
        }
        _ => {
            let mut end = rest.len();
            for (i, c) in rest.char_indices() {
                let next = rest[i + c.len_utf8()..].chars().next();
                let stop = c == '\n'
                    || (c == '#' && i > 0 && rest[..i].ends_with(' '))
                    || (key && c == ':' && next.is_none_or(|n| n.is_whitespace()))
                    || (in_flow && matches!(c, ',' | ']' | '}'));
                if stop {
                    end = i;
                    break;
                }
            }
            start + rest[..end].trim_end().len()
        }
    }
}

/// The span of the node at `path` (the key itself with `want_key`), if it exists.
fn locate(text: &str, path: &[Seg], want_key: bool) -> Option<Span> {
    let de = serde_yaml::Deserializer::from_str(text);
    let err = match (Probe { path, want_key }).deserialize(de) {
        Err(e) if e.to_string().contains(FOUND) => e,
        _ => return None,
    };
    let loc = err.location()?;
    let start = offset_of(text, loc.line(), loc.column());
    Some(Span::new(start, token_end(text, start, want_key)))
}

/// The best span for a key of a node: the key, else the node, else the file start.
fn key_span(text: &str, node: &[Seg], key: &str) -> Span {
    let mut p = node.to_vec();
    p.push(Seg::Key(key));
    locate(text, &p, true)
        .or_else(|| locate(text, node, false))
        .unwrap_or(Span::new(0, 0))
}

fn value_span(text: &str, node: &[Seg], key: &str) -> Span {
    let mut p = node.to_vec();
    p.push(Seg::Key(key));
    locate(text, &p, false).unwrap_or_else(|| key_span(text, node, key))
}

// ---------------------------------------------------------------------------------------------
// The checked plan

#[derive(Debug)]
struct Job {
    name: String,
    files: Vec<Input>,
    steps: Vec<StepSpec>,
    output: Option<PathBuf>,
    in_place: bool,
    verify: bool,
    validate: bool,
    entry: Option<String>,
    keep_going: bool,
    dialect: DialectChoice,
}

#[derive(Debug, Clone)]
struct Input {
    /// Where it is read from.
    path: PathBuf,
    /// How it is shown: relative to the plan directory when it lies there.
    shown: String,
    /// Where its output goes, if anywhere.
    target: Option<PathBuf>,
}

/// Lexical normalization (`a/./b/../c` → `a/c`); paths need not exist.
fn normalize(p: &Path) -> PathBuf {
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
fn pattern_base(pattern: &Path) -> PathBuf {
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

fn common_ancestor(paths: &[PathBuf]) -> PathBuf {
    let mut it = paths.iter();
    let Some(first) = it.next() else {
        return PathBuf::new();
    };
    let mut common: Vec<Component> = first.components().collect();
    for p in it {
        let n = common
            .iter()
            .zip(p.components())
            .take_while(|(a, b)| *a == b)
            .count();
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
        self.diags.push(
            Diagnostic::error(code, msg)
                .with_primary(span, label)
                .with_help(help),
        );
    }
}

/// Read and check the plan; `Err` holds its diagnostics (all of them, not just the first).
fn load_plan(plan_path: &Path, text: &str) -> Result<Vec<Job>, Vec<Diagnostic>> {
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
            return Err(vec![Diagnostic::error(
                "A0701",
                format!("invalid plan: {msg}"),
            )
            .with_primary(span, "here")
            .with_help(
                "a plan is `jobs:` with a list of jobs; each job has `files` and optionally \
                     `name`, `steps`, `output` or `in_place`, `verify`, `validate`, `entry`, \
                     `keep_going`, `dialect`",
            )]);
        }
    };
    let dir = plan_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut ck = PlanCheck {
        text,
        diags: Vec::new(),
    };
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
            let snode = [
                Seg::Key("jobs"),
                Seg::Index(ji),
                Seg::Key("steps"),
                Seg::Index(si),
            ];
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
            let pnode = [
                Seg::Key("jobs"),
                Seg::Index(ji),
                Seg::Key("files"),
                Seg::Index(pi),
            ];
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
            let full = if Path::new(pat).is_absolute() {
                PathBuf::from(pat)
            } else {
                dir.join(pat)
            };
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
                    &format!(
                        "patterns are relative to the plan's directory `{}`",
                        dir.display()
                    ),
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
                Input {
                    path,
                    shown,
                    target,
                }
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
    ck.diags
        .sort_by_key(|d| d.primary_span().map_or(0, |s| s.start()));
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
        let takes = meta
            .params
            .iter()
            .map(|p| format!("`{}`", p.key))
            .collect::<Vec<_>>()
            .join(", ");
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
                &format!(
                    "a step has `opt`, `at` and parameters; {} takes: {takes}",
                    meta.name
                ),
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
    let inputs: BTreeSet<&Path> = jobs
        .iter()
        .flat_map(|j| j.files.iter().map(|f| f.path.as_path()))
        .collect();
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
                    format!(
                        "{}: the output `{}` is an input of the plan",
                        j.name,
                        t.display()
                    ),
                    "would overwrite an input",
                    "write elsewhere, or use `in_place: true` to rewrite inputs on purpose",
                );
                break;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Running

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
enum Outcome {
    Applied,
    Unchanged,
    Refused,
    Error,
}

impl Outcome {
    fn name(self) -> &'static str {
        match self {
            Outcome::Applied => "applied",
            Outcome::Unchanged => "unchanged",
            Outcome::Refused => "refused",
            Outcome::Error => "error",
        }
    }
}

struct FileRun {
    input: SourceFile,
    output: Option<String>,
    outcome: Outcome,
    applied: usize,
    refused: usize,
    reports: Vec<Report>,
    time: Duration,
    verify: Option<VerifyPair>,
    validate: Option<crate::sem::ValidateOutcome>,
    written: Option<PathBuf>,
}

impl FileRun {
    fn failed(input: SourceFile, d: Diagnostic, time: Duration) -> FileRun {
        FileRun {
            reports: vec![Report {
                file: input.clone(),
                diagnostics: vec![d],
            }],
            input,
            output: None,
            outcome: Outcome::Error,
            applied: 0,
            refused: 0,
            time,
            verify: None,
            validate: None,
            written: None,
        }
    }

    /// The file's exit status by the project's one rule: the registered class of its errors (1
    /// a refusal, 2 bad input such as a file that does not parse, 3 a bug of ours or no
    /// decision), combined with the checks' verdicts.
    fn code(&self) -> u8 {
        let mut c = crate::codes::exit_code(self.reports.iter().flat_map(|r| &r.diagnostics));
        if c == 0 && matches!(self.outcome, Outcome::Refused | Outcome::Error) {
            c = 1;
        }
        if let Some(v) = &self.verify {
            c = worst(c, v.exit_code());
        }
        if let Some(v) = &self.validate {
            c = worst(c, validate_code(v.verdict));
        }
        c
    }
}

/// Optimize one file (the parallel part).
fn optimize(job: &Job, input: &Input, z3_timeout: u32) -> FileRun {
    let t0 = Instant::now();
    let text = match std::fs::read(&input.path).map(String::from_utf8) {
        Ok(Ok(t)) => t,
        Ok(Err(_)) => {
            return FileRun::failed(
                SourceFile::new(&input.shown, ""),
                Diagnostic::error("A0001", format!("`{}` is not valid UTF-8", input.shown))
                    .with_help("PVL files are UTF-8 text"),
                t0.elapsed(),
            )
        }
        Err(e) => {
            return FileRun::failed(
                SourceFile::new(&input.shown, ""),
                Diagnostic::error("A0000", format!("cannot read `{}`: {e}", input.shown))
                    .with_help("check the path and its permissions"),
                t0.elapsed(),
            )
        }
    };
    let file = SourceFile::new(&input.shown, text);
    let popts = ParseOptions {
        dialect: job.dialect,
    };
    let dialect = crate::front::parse(&file.text, &popts).dialect;
    let steps: Result<Vec<CliStep>, String> = job
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            build_step(s, Spelling::Key, dialect).map_err(|e| {
                format!(
                    "step {}: {}",
                    i + 1,
                    e.message(&s.opt, |f| format!("`{f}`"))
                )
            })
        })
        .collect();
    let steps = match steps {
        Ok(s) => s,
        Err(m) => {
            return FileRun::failed(
                file,
                Diagnostic::error("A0703", m).with_help(format!(
                    "the file is read as PVL {}; expressions in steps must parse in it",
                    dialect.name()
                )),
                t0.elapsed(),
            )
        }
    };
    let opts = DriverOptions {
        parse: popts,
        timeout_ms: z3_timeout,
        keep_going: job.keep_going,
        steps,
        overrides: Vec::new(),
    };
    let res = drive(&file.name, &file.text, &opts);
    let outcome = if res.bad_input {
        Outcome::Error
    } else if res.refused > 0 {
        Outcome::Refused
    } else if res.output == file.text {
        Outcome::Unchanged
    } else {
        Outcome::Applied
    };
    let emit = !res.bad_input && (res.refused == 0 || job.keep_going);
    FileRun {
        output: emit.then(|| res.output.clone()),
        outcome,
        applied: res.applied,
        refused: res.refused,
        reports: res.reports,
        time: t0.elapsed(),
        input: file,
        verify: None,
        validate: None,
        written: None,
    }
}

/// Stack of the thread that handles one item: the transformations and the Z3 translation recurse
/// over the syntax tree, as they do on the main thread of `apply`.
const ITEM_STACK: usize = 64 << 20;

/// Run `f` on every index below `n`, `workers` at a time; results in index order.
///
/// Each item runs on a fresh thread. Z3's context is per thread and keeps the history of every
/// query made in it, which steers the models it returns; a fresh thread gives each file the same
/// fresh context that `alpine-rs apply` would, so results (counterexamples included) do not depend
/// on the number of workers or on which worker picked the file. A panic in one item becomes that
/// item's `on_panic` result instead of taking the others down.
fn pool<T: Send>(
    n: usize,
    workers: usize,
    f: impl Fn(usize) -> T + Sync,
    on_panic: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..workers.clamp(1, n.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = std::thread::scope(|item| {
                    std::thread::Builder::new()
                        .name(format!("alpine-batch-{i}"))
                        .stack_size(ITEM_STACK)
                        .spawn_scoped(item, || f(i))
                        .ok()
                        .and_then(|h| h.join().ok())
                })
                .unwrap_or_else(|| on_panic(i));
                if let Ok(mut v) = slots.lock() {
                    v[i] = Some(r);
                }
            });
        }
    });
    slots
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, r)| r.unwrap_or_else(|| on_panic(i)))
        .collect()
}

fn internal_error(input: &Input) -> FileRun {
    FileRun::failed(
        SourceFile::new(&input.shown, ""),
        Diagnostic::internal(format!("a panic while processing `{}`", input.shown))
            .with_note("no output was written for this file"),
        Duration::ZERO,
    )
}

fn run_jobs(jobs: &[Job], args: &BatchArgs, workers: usize) -> Vec<Vec<FileRun>> {
    let units: Vec<(usize, usize)> = jobs
        .iter()
        .enumerate()
        .flat_map(|(ji, j)| (0..j.files.len()).map(move |fi| (ji, fi)))
        .collect();
    let mut runs: Vec<FileRun> = pool(
        units.len(),
        workers,
        |i| {
            let (ji, fi) = units[i];
            optimize(&jobs[ji], &jobs[ji].files[fi], args.z3_timeout)
        },
        |i| internal_error(&jobs[units[i].0].files[units[i].1]),
    );
    // Verification: every pair of the verify jobs through one JVM.
    let to_verify: Vec<usize> = (0..units.len())
        .filter(|&i| jobs[units[i].0].verify && runs[i].output.is_some())
        .collect();
    if !to_verify.is_empty() {
        let mut srcs = Vec::new();
        for &i in &to_verify {
            let r = &runs[i];
            srcs.push(r.input.clone());
            srcs.push(SourceFile::new(
                format!("{} (optimized)", r.input.name),
                r.output.clone().unwrap_or_default(),
            ));
        }
        let opts = VerifyOptions {
            timeout_s: args.verify_timeout,
            ..VerifyOptions::default()
        };
        let mut reports = viper::verify_each(&srcs, &opts).into_iter();
        let mut next = || {
            reports.next().unwrap_or(VerifyReport {
                verdict: Verdict::Crash,
                diagnostics: vec![Diagnostic::error("E-BACKEND", "no verdict came back")],
                time: Duration::ZERO,
            })
        };
        for &i in &to_verify {
            let (input, output) = (next(), next());
            runs[i].verify = Some(VerifyPair { input, output });
        }
    }
    // Validation, in parallel.
    let to_validate: Vec<usize> = (0..units.len())
        .filter(|&i| jobs[units[i].0].validate && runs[i].output.is_some())
        .collect();
    let outcomes = pool(
        to_validate.len(),
        workers,
        |k| {
            let i = to_validate[k];
            let r = &runs[i];
            Some(validate_pair(
                &r.input.text,
                r.output.as_deref().unwrap_or_default(),
                jobs[units[i].0].entry.as_deref(),
            ))
        },
        |_| None,
    );
    for (k, o) in outcomes.into_iter().enumerate() {
        let i = to_validate[k];
        match o {
            Some(o) => runs[i].validate = Some(o),
            None => {
                runs[i].outcome = Outcome::Error;
                let file = runs[i].input.clone();
                runs[i].reports.push(Report {
                    file,
                    diagnostics: vec![Diagnostic::internal("a panic while validating")
                        .with_note("no output was written for this file")],
                });
            }
        }
    }
    // Writing: only outputs whose checks passed.
    for (i, r) in runs.iter_mut().enumerate() {
        let (ji, fi) = units[i];
        let Some(target) = &jobs[ji].files[fi].target else {
            continue;
        };
        let Some(out) = &r.output else { continue };
        if r.code() != 0 && r.outcome != Outcome::Refused {
            r.reports.push(Report {
                file: r.input.clone(),
                diagnostics: vec![Diagnostic::note(
                    "A0709",
                    format!(
                        "`{}` was not written because a check did not pass",
                        target.display()
                    ),
                )],
            });
            continue;
        }
        if jobs[ji].in_place && r.outcome == Outcome::Unchanged {
            continue;
        }
        let res = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => std::fs::create_dir_all(p),
            _ => Ok(()),
        }
        .and_then(|_| write_atomic(target, out));
        match res {
            Ok(()) => r.written = Some(target.clone()),
            Err(e) => {
                r.outcome = Outcome::Error;
                r.reports.push(Report {
                    file: r.input.clone(),
                    diagnostics: vec![Diagnostic::error(
                        "A0000",
                        format!("cannot write `{}`: {e}", target.display()),
                    )
                    .with_help("nothing was written for this file (writes are atomic)")],
                });
            }
        }
    }
    let mut by_job: Vec<Vec<FileRun>> = jobs.iter().map(|_| Vec::new()).collect();
    for (r, (ji, _)) in runs.into_iter().zip(units) {
        by_job[ji].push(r);
    }
    by_job
}

// ---------------------------------------------------------------------------------------------
// Reporting

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Verified => "verified",
        Verdict::Failed => "FAILED",
        Verdict::Unsupported => "unsupported",
        Verdict::BackendMissing => "no-backend",
        Verdict::Timeout => "timeout",
        Verdict::Crash => "crash",
    }
}

fn validate_word(v: crate::sem::Verdict) -> &'static str {
    match v {
        crate::sem::Verdict::Same => "same",
        crate::sem::Verdict::Different => "DIFFERENT",
        crate::sem::Verdict::BadInput => "not-run",
        crate::sem::Verdict::Inconclusive => "inconclusive",
    }
}

fn file_json(r: &FileRun) -> serde_json::Value {
    let out_file = SourceFile::new(
        format!("{} (optimized)", r.input.name),
        r.output.clone().unwrap_or_default(),
    );
    let mut diags = Vec::new();
    for rep in &r.reports {
        diags.extend(json_diags(&rep.file, &rep.diagnostics));
    }
    serde_json::json!({
        "file": r.input.name,
        "result": r.outcome,
        "applied": r.applied,
        "refused": r.refused,
        "changed": r.output.as_ref().is_some_and(|o| *o != r.input.text),
        "written": r.written.as_ref().map(|p| p.display().to_string()),
        "time_ms": r.time.as_millis() as u64,
        "verify": r.verify.as_ref().map(|v| serde_json::json!({
            "input": verify_json(&r.input, &v.input),
            "output": verify_json(&out_file, &v.output),
        })),
        "validate": r.validate.as_ref().map(|v| validate_json([&r.input, &out_file], v)),
        "exit": r.code(),
        "diagnostics": diags,
    })
}

fn print_table(jobs: &[Job], runs: &[Vec<FileRun>]) {
    let mut rows = vec![[
        "job".to_string(),
        "file".to_string(),
        "result".to_string(),
        "verify (in/out)".to_string(),
        "validate".to_string(),
        "time".to_string(),
    ]];
    for (j, rs) in jobs.iter().zip(runs) {
        for r in rs {
            let verify = r.verify.as_ref().map_or("-".to_string(), |v| {
                format!(
                    "{}/{}",
                    verdict_word(v.input.verdict),
                    verdict_word(v.output.verdict)
                )
            });
            let validate = r
                .validate
                .as_ref()
                .map_or("-", |v| validate_word(v.verdict))
                .to_string();
            let mut result = r.outcome.name().to_string();
            if r.written.is_some() {
                result.push('*');
            }
            rows.push([
                j.name.clone(),
                r.input.name.clone(),
                result,
                verify,
                validate,
                format!("{:.2}s", r.time.as_secs_f64()),
            ]);
        }
    }
    let widths: Vec<usize> = (0..6)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for row in &rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c == 5 {
                line.push_str(&format!("{cell:>w$}", w = widths[c]));
            } else {
                line.push_str(&format!("{cell:<w$}  ", w = widths[c]));
            }
        }
        println!("{}", line.trim_end());
    }
}

pub fn main(args: BatchArgs) -> u8 {
    let workers = match args.jobs {
        Some(0) => {
            eprintln!("error[A0000]: --jobs must be at least 1");
            return 2;
        }
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let plan = match super::common::read_source(&args.plan) {
        Ok(f) => f,
        Err(e) => {
            let json = serde_json::json!({ "plan": e.file.name, "exit": 2 });
            e.report(args.format, json, false);
            return 2;
        }
    };
    let json = args.format == Format::Json;
    let jobs = match load_plan(&args.plan, &plan.text) {
        Ok(j) => j,
        Err(diags) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({
                        "plan": plan.name,
                        "exit": 2,
                        "diagnostics": json_diags(&plan, &diags),
                    })
                );
            } else {
                let choice = if std::io::stderr().is_terminal() {
                    ColorChoice::Auto
                } else {
                    ColorChoice::Never
                };
                diag::render(&mut StandardStream::stderr(choice), &[&plan], &diags);
            }
            return 2;
        }
    };
    let runs = run_jobs(&jobs, &args, workers);
    let mut code = 0u8;
    let mut failed_jobs = 0;
    for (j, rs) in jobs.iter().zip(&runs) {
        let jc = rs.iter().fold(0, |c, r| worst(c, r.code()));
        if jc == 1 {
            failed_jobs += 1;
        }
        code = worst(code, jc);
        if json {
            println!(
                "{}",
                serde_json::json!({
                    "job": j.name,
                    "output": j.output.as_ref().map(|p| p.display().to_string()),
                    "in_place": j.in_place,
                    "ok": jc == 0,
                    "exit": jc,
                    "files": rs.iter().map(file_json).collect::<Vec<_>>(),
                })
            );
        }
    }
    if !json {
        let choice = if std::io::stderr().is_terminal() {
            ColorChoice::Auto
        } else {
            ColorChoice::Never
        };
        let mut err = StandardStream::stderr(choice);
        for r in runs.iter().flatten() {
            for rep in &r.reports {
                diag::render(&mut err, &[&rep.file], &rep.diagnostics);
            }
            if let Some(v) = &r.verify {
                let out_file = SourceFile::new(
                    format!("{} (optimized)", r.input.name),
                    r.output.clone().unwrap_or_default(),
                );
                diag::render(&mut err, &[&out_file], &v.output.diagnostics);
            }
            if let Some(v) = &r.validate {
                if v.verdict != crate::sem::Verdict::Same {
                    eprintln!("{}: {}", r.input.name, v.summary);
                }
            }
        }
        print_table(&jobs, &runs);
        let all: Vec<&FileRun> = runs.iter().flatten().collect();
        let count = |o: Outcome| all.iter().filter(|r| r.outcome == o).count();
        println!(
            "{} job{}, {failed_jobs} failed; {} file{}: {} applied, {} unchanged, {} refused, {} error{}; {} written (*)",
            jobs.len(),
            if jobs.len() == 1 { "" } else { "s" },
            all.len(),
            if all.len() == 1 { "" } else { "s" },
            count(Outcome::Applied),
            count(Outcome::Unchanged),
            count(Outcome::Refused),
            count(Outcome::Error),
            if count(Outcome::Error) == 1 { "" } else { "s" },
            all.iter().filter(|r| r.written.is_some()).count(),
        );
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = "\
# a comment
jobs:
  - name: first
    files: [\"a/*.pvl\", 'b/one.pvl']
    steps:
      - { opt: unroll, at: \"line:12\", factor: 2 }
      - opt: fuse
        at: line:30
        kernels: 2
";

    fn text_of(path: &[Seg], key: bool) -> String {
        locate(PLAN, path, key)
            .map(|s| PLAN[s.range()].to_string())
            .unwrap_or_default()
    }

    #[test]
    fn locates_keys_and_values_in_block_and_flow_style() {
        use Seg::{Index as I, Key as K};
        let in_job = |rest: &[Seg<'static>]| [&[K("jobs"), I(0)], rest].concat();
        let cases = [
            (in_job(&[K("name")]), true, "name"),
            (in_job(&[K("name")]), false, "first"),
            (in_job(&[K("files")]), false, "[\"a/*.pvl\", 'b/one.pvl']"),
            (in_job(&[K("files"), I(1)]), false, "'b/one.pvl'"),
            (in_job(&[K("steps"), I(0), K("factor")]), false, "2"),
            (in_job(&[K("steps"), I(0), K("at")]), false, "\"line:12\""),
            (in_job(&[K("steps"), I(1), K("kernels")]), true, "kernels"),
            (in_job(&[K("steps"), I(1), K("at")]), false, "line:30"),
            // Missing nodes are not found.
            (vec![K("jobs"), I(3)], false, ""),
            (in_job(&[K("output")]), true, ""),
        ];
        for (path, key, want) in cases {
            assert_eq!(text_of(&path, key), want, "{path:?} (key: {key})");
        }
    }

    #[test]
    fn pattern_bases_and_mirroring_root() {
        assert_eq!(
            pattern_base(Path::new("/p/kernels/**/*.pvl")),
            PathBuf::from("/p/kernels")
        );
        assert_eq!(
            pattern_base(Path::new("/p/extra/one.pvl")),
            PathBuf::from("/p/extra")
        );
        assert_eq!(
            common_ancestor(&[PathBuf::from("/p/kernels"), PathBuf::from("/p/extra")]),
            PathBuf::from("/p")
        );
        assert_eq!(
            normalize(Path::new("/p/q/../r/./s.pvl")),
            PathBuf::from("/p/r/s.pvl")
        );
        assert_eq!(
            normalize(Path::new("./../../w/x/../y.pvl")),
            PathBuf::from("../../w/y.pvl")
        );
        assert_eq!(normalize(Path::new("/../a")), PathBuf::from("/a"));
    }

    #[test]
    fn plan_errors_point_into_the_yaml() {
        let dir = std::env::temp_dir().join(format!("alpine-rs-plan-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("k.pvl"), "class A { }\n").unwrap();
        let plan = dir.join("plan.yaml");
        let check = |text: &str| -> Vec<(String, String)> {
            match load_plan(&plan, text) {
                Ok(_) => Vec::new(),
                Err(ds) => ds
                    .iter()
                    .map(|d| {
                        let sp = d.primary_span().unwrap_or(Span::new(0, 0));
                        (d.code.clone(), text[sp.range()].to_string())
                    })
                    .collect(),
            }
        };
        assert_eq!(check("jobs:\n  - files: [k.pvl]\n"), vec![]);
        assert_eq!(
            check("jobs:\n  - files: [k.pvl]\n    steps:\n      - { opt: vectorize, at: 3 }\n"),
            vec![("A0702".to_string(), "vectorize".to_string())]
        );
        assert_eq!(
            check("jobs:\n  - files: [k.pvl, \"nothing/*.pvl\"]\n"),
            vec![("A0704".to_string(), "\"nothing/*.pvl\"".to_string())]
        );
        let unknown = check(
            "jobs:\n  - files: [k.pvl]\n    steps:\n      - { opt: unroll, at: 3, factr: 2 }\n",
        );
        assert_eq!(unknown.len(), 1);
        assert_eq!(unknown[0].0, "A0701");
        assert!(unknown[0].1.starts_with("factr"), "{unknown:?}");
        assert_eq!(
            check("jobs:\n  - files: [k.pvl]\n    steps:\n      - { opt: tile, at: 3, mode: inter, tile_size: 4, factor: 2 }\n"),
            vec![("A0703".to_string(), "factor".to_string())]
        );
        assert_eq!(
            check("jobs:\n  - files: [k.pvl]\n    steps:\n      - { opt: merge, at: 3, factor: 2, mode: fast }\n"),
            vec![("A0703".to_string(), "fast".to_string())]
        );
        assert_eq!(
            check("jobs:\n  - files: k.pvl\n    output: out\n    in_place: true\n"),
            vec![("A0706".to_string(), "in_place".to_string())]
        );
        assert_eq!(
            check("jobs:\n  - files: k.pvl\n    output: .\n"),
            vec![("A0707".to_string(), "output".to_string())]
        );
        assert_eq!(
            check("jobs:\n  - files: k.pvl\n    output: o\n  - files: k.pvl\n    output: o\n"),
            vec![("A0707".to_string(), "output".to_string())]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
