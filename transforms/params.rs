//! The parameter schema: one declaration per parameter of an optimization drives the reading of
//! its in-source annotation, its `apply` flags (`--opt KIND … --factor K`), its keys in batch
//! plans, the syntax lines of diagnostics and the generated help.
//!
//! An optimization lists its [`Param`]s in [`super::Meta::params`]. Those with `in_annotation`
//! are the operands of `gpuopt WORD …;`, in order; the others exist on the command line and in
//! plans only. Values are kept in a [`Params`] by key; each optimization reads its own keys.

use super::Opt;
use diag::Diagnostic;
use front::ast::{Annotation, Expr, Ident};
use front::parser::parse_expr_text;
use front::{Dialect, OperandReader, Span};

/// What a parameter holds, and how it is written.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// An unsigned integer; in an annotation, an integer literal.
    Count,
    /// A name.
    Name,
    /// One of a few words.
    Choice(&'static [Choice]),
    /// One expression (an annotation operand).
    Expr,
    /// A size: in an annotation an integer literal, a name or a parenthesised expression
    /// (pvl.md §3.5 `SizeArg`); any expression on the command line.
    Size,
    /// An access path `a`, `s.a`, `m[i]`, never a call; any expression on the command line.
    Path,
    /// One or more expressions: the remaining operands of an annotation (optionally separated
    /// by commas), or a text split at top-level `sep` on the command line.
    List {
        sep: char,
        /// One element, for messages ("location").
        item: &'static str,
        /// What precedes the list in the annotation, for messages ("the array").
        after: &'static str,
        /// Label of a missing element ("a location (an index expression)").
        label: &'static str,
        /// Operands of a complete annotation, for the help line ("a tid").
        example: &'static str,
    },
    /// Exactly two expressions: two operands, or a text split at a top-level `,`.
    Pair {
        /// What each one is, for messages.
        first: &'static str,
        second: &'static str,
        /// The two, for the message about a wrong number ("rows, row length").
        both: &'static str,
    },
    /// On or off (command line and plans only).
    Switch,
}

/// One word of a [`Kind::Choice`].
#[derive(Clone, Copy, Debug)]
pub struct Choice {
    /// The value the optimization reads, and its command-line spelling.
    pub value: &'static str,
    /// The spelling in an annotation.
    pub word: &'static str,
    /// What it means, for messages (empty: nothing to add).
    pub meaning: &'static str,
}

/// One parameter of an optimization.
#[derive(Clone, Copy, Debug)]
pub struct Param {
    /// Its key in batch plans and JSON (`tile_size`).
    pub key: &'static str,
    /// Other keys accepted in plans (`tile_mode`).
    pub plan_aliases: &'static [&'static str],
    /// Its command-line flag without the dashes (`tile-size`).
    pub flag: &'static str,
    pub kind: Kind,
    /// An operand of the in-source annotation (always required there).
    pub in_annotation: bool,
    /// Required with `--opt` and in plan steps (unless it has a default).
    pub required: bool,
    /// The value used when it is not given (command-line text).
    pub default: Option<&'static str>,
    /// What it is, for messages ("the loop variable", "the tiling mode").
    pub what: &'static str,
    /// Its place in the syntax line (`<var>`, `R|C`, `<loc> <loc>…`).
    pub syntax: &'static str,
    /// One line for `--help`.
    pub doc: &'static str,
}

impl Choice {
    /// A word spelled the same everywhere, with nothing to add.
    pub const fn plain(word: &'static str) -> Choice {
        Choice { value: word, word, meaning: "" }
    }
}

impl Param {
    /// An operand of the in-source annotation, also a flag and a plan key; required with
    /// `--opt` and in plans unless [`Param::optional`] or [`Param::or`] says otherwise.
    pub const fn operand(
        key: &'static str,
        flag: &'static str,
        kind: Kind,
        what: &'static str,
        syntax: &'static str,
        doc: &'static str,
    ) -> Param {
        Param {
            key,
            plan_aliases: &[],
            flag,
            kind,
            in_annotation: true,
            required: true,
            default: None,
            what,
            syntax,
            doc,
        }
    }

    /// A parameter of the command line and plans only (the annotation cannot state it);
    /// optional.
    pub const fn option(
        key: &'static str,
        flag: &'static str,
        kind: Kind,
        what: &'static str,
        doc: &'static str,
    ) -> Param {
        Param {
            in_annotation: false,
            required: false,
            syntax: "",
            ..Param::operand(key, flag, kind, what, "", doc)
        }
    }

    /// Not required with `--opt` or in plans.
    pub const fn optional(self) -> Param {
        Param { required: false, ..self }
    }

    /// The value taken when it is not given.
    pub const fn or(self, default: &'static str) -> Param {
        Param { default: Some(default), ..self }
    }

    /// Other plan keys for it.
    pub const fn aliases(self, plan_aliases: &'static [&'static str]) -> Param {
        Param { plan_aliases, ..self }
    }

    /// The annotation symbol of a count (`K` of `<K>`).
    fn symbol(&self) -> &'static str {
        self.syntax.trim_start_matches('<').trim_end_matches('>')
    }

    /// Whether it is a switch (a flag without a value).
    pub fn is_switch(&self) -> bool {
        matches!(self.kind, Kind::Switch)
    }

    /// Whether its value is one or more expressions over program variables.
    pub fn is_expression(&self) -> bool {
        matches!(
            self.kind,
            Kind::Expr | Kind::Size | Kind::Path | Kind::List { .. } | Kind::Pair { .. }
        )
    }
}

/// A parameter value.
#[derive(Clone, Debug)]
pub enum Value {
    /// With the span of the literal when it came from an annotation.
    Count(u64, Option<Span>),
    Name(Ident),
    /// A [`Choice::value`].
    Word(&'static str),
    Expr(Expr),
    /// A list or a pair.
    Exprs(Vec<Expr>),
    Switch(bool),
}

/// The parameters of one optimization request.
#[derive(Clone, Debug)]
pub struct Params {
    pub opt: Opt,
    values: Vec<(&'static str, Value)>,
}

impl Params {
    pub fn new(opt: Opt) -> Params {
        Params { opt, values: Vec::new() }
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.values.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    pub fn set(&mut self, key: &'static str, v: Value) {
        match self.values.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = v,
            None => self.values.push((key, v)),
        }
    }

    /// A count; 0 when absent (the schema fills required and defaulted ones).
    pub fn count(&self, key: &str) -> u64 {
        self.count_opt(key).unwrap_or(0)
    }

    pub fn count_opt(&self, key: &str) -> Option<u64> {
        match self.get(key) {
            Some(Value::Count(n, _)) => Some(*n),
            _ => None,
        }
    }

    /// The span of a count written in an annotation.
    pub fn count_span(&self, key: &str) -> Option<Span> {
        match self.get(key) {
            Some(Value::Count(_, sp)) => *sp,
            _ => None,
        }
    }

    pub fn name(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            Some(Value::Name(id)) => Some(&id.name),
            _ => None,
        }
    }

    /// A choice's value; empty when absent.
    pub fn word(&self, key: &str) -> &'static str {
        match self.get(key) {
            Some(Value::Word(w)) => w,
            _ => "",
        }
    }

    pub fn expr(&self, key: &str) -> Option<&Expr> {
        match self.get(key) {
            Some(Value::Expr(e)) => Some(e),
            _ => None,
        }
    }

    /// A list or pair; empty when absent.
    pub fn exprs(&self, key: &str) -> &[Expr] {
        match self.get(key) {
            Some(Value::Exprs(v)) => v,
            _ => &[],
        }
    }

    pub fn switch(&self, key: &str) -> bool {
        matches!(self.get(key), Some(Value::Switch(true)))
    }

    /// Every expression among the values, in schema order (what a rewrite of the program's
    /// variables must also rewrite in a pending annotation).
    pub fn expressions(&self) -> Vec<&Expr> {
        let mut out = Vec::new();
        for p in self.opt.meta().params {
            match self.get(p.key) {
                Some(Value::Expr(e)) => out.push(e),
                Some(Value::Exprs(v)) => out.extend(v),
                _ => {}
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------------------------
// Annotations
// ---------------------------------------------------------------------------------------------

/// The syntax line of `opt`'s annotation as spelled with `word`: `gpuopt loop_unroll <var> <K>;`.
pub fn syntax(opt: Opt, word: &str) -> String {
    let mut s = format!("gpuopt {word}");
    for p in opt.meta().params.iter().filter(|p| p.in_annotation) {
        s.push(' ');
        s.push_str(p.syntax);
    }
    s.push(';');
    s
}

/// Read `ann` (an annotation of `opt`) from `src`, the text it was parsed from.
pub fn read_annotation(
    opt: Opt,
    src: &str,
    dialect: Dialect,
    ann: &Annotation,
) -> Result<Params, Vec<Diagnostic>> {
    let word = ann.keyword.name.as_str();
    let syntax = syntax(opt, word);
    let help = format!("syntax: {syntax}");
    let mut r = OperandReader::new(src, dialect, ann);
    let mut params = Params::new(opt);
    let mut prev: Option<&Param> = None;
    for p in opt.meta().params.iter().filter(|p| p.in_annotation) {
        let v = read_operand(&mut r, p, prev, word, &help)?;
        params.set(p.key, v);
        prev = Some(p);
    }
    if !r.at_semicolon() {
        return Err(vec![Diagnostic::error(
            "A0003",
            format!("unexpected {} in a `gpuopt {word}` annotation", r.found()),
        )
        .with_primary(r.span(), "expected `;` to end the annotation")
        .with_help(help)]);
    }
    fill_defaults(&mut params, Dialect::V1).map_err(|e| {
        vec![Diagnostic::internal(format!("a default parameter does not read: {e:?}"))]
    })?;
    Ok(params)
}

fn read_operand(
    r: &mut OperandReader,
    p: &Param,
    prev: Option<&Param>,
    word: &str,
    help: &str,
) -> Result<Value, Vec<Diagnostic>> {
    let err = |msg: String, span: Span, label: String| {
        vec![Diagnostic::error("A0003", msg).with_primary(span, label).with_help(help.to_string())]
    };
    match p.kind {
        Kind::Name => match r.name() {
            Some(id) => Ok(Value::Name(id)),
            None => Err(err(
                format!("`gpuopt {word}` needs {}, found {}", p.what, r.found()),
                r.span(),
                format!("expected {}", p.what),
            )),
        },
        Kind::Count => {
            if let Some((n, sp)) = r.int() {
                return Ok(Value::Count(n, Some(sp)));
            }
            let sym = p.symbol();
            if let Some((digits, sp)) = r.negative_int() {
                return Err(err(
                    format!("the factor of {word} must be an unsigned number, not `-{digits}`"),
                    sp,
                    "negative factor".into(),
                ));
            }
            if r.at_semicolon() {
                let after = prev.map(|q| format!(" after {}", q.syntax)).unwrap_or_default();
                return Err(err(
                    format!("`gpuopt {word}` lacks the number {sym}{after}"),
                    Span::new(r.prev_end(), r.span().end()),
                    format!("expected the number {sym} here"),
                ));
            }
            Err(err(
                format!("`gpuopt {word}` needs the number {sym}, found {}", r.found()),
                r.span(),
                format!("expected an unsigned integer {sym}"),
            ))
        }
        Kind::Choice(choices) => {
            if let Some(c) = choices.iter().find(|c| r.at_word(c.word)) {
                r.bump();
                return Ok(Value::Word(c.value));
            }
            let words: Vec<String> = choices
                .iter()
                .map(|c| {
                    if c.meaning.is_empty() {
                        c.word.to_string()
                    } else {
                        format!("{} ({})", c.word, c.meaning)
                    }
                })
                .collect();
            let plain: Vec<&str> = choices.iter().map(|c| c.word).collect();
            Err(err(
                format!(
                    "{} must be {}, not {}",
                    p.what.replace("{word}", word),
                    or_list(&words),
                    r.found()
                ),
                r.span(),
                format!("expected {}", or_list(&plain)),
            ))
        }
        Kind::Size => {
            if r.at_int() || r.at_name() || r.at_punct("(") {
                r.operand().map(Value::Expr)
            } else {
                Err(err(
                    format!("`gpuopt {word}` lacks {}", p.what),
                    r.span(),
                    format!("expected {}", p.what),
                ))
            }
        }
        Kind::Expr => operand(r, word, p.what, help).map(Value::Expr),
        Kind::Pair { first, second, .. } => {
            let a = operand(r, word, first, help)?;
            let b = operand(r, word, second, help)?;
            Ok(Value::Exprs(vec![a, b]))
        }
        Kind::Path => match r.path() {
            Some(e) => e.map(Value::Expr),
            None => Err(err(
                format!("`gpuopt {word}` needs {}, found {}", p.what, r.found()),
                r.span(),
                format!("expected {}", p.what),
            )),
        },
        Kind::List { item, after, label, example, .. } => {
            let mut items = Vec::new();
            while !r.at_end() {
                r.eat_comma();
                items.push(operand(r, word, &format!("a {item}"), help)?);
            }
            if items.is_empty() {
                return Err(vec![Diagnostic::error(
                    "A0003",
                    format!("`gpuopt {word}` needs at least one {item} after {after}"),
                )
                .with_primary(r.span(), format!("expected {label}"))
                .with_help(format!("{help} e.g. `gpuopt {word} {example};`"))]);
            }
            Ok(Value::Exprs(items))
        }
        // A switch is never an annotation operand.
        Kind::Switch => Ok(Value::Switch(false)),
    }
}

/// One operand expression, or "lacks {what}" at the end of the annotation.
fn operand(
    r: &mut OperandReader,
    word: &str,
    what: &str,
    help: &str,
) -> Result<Expr, Vec<Diagnostic>> {
    if r.at_end() {
        return Err(vec![Diagnostic::error("A0003", format!("`gpuopt {word}` lacks {what}"))
            .with_primary(r.span(), format!("expected {what}"))
            .with_help(help.to_string())]);
    }
    r.operand()
}

/// `a`, `a or b`, `a, b or c`.
fn or_list<S: AsRef<str>>(items: &[S]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_string(),
        [init @ .., last] => format!(
            "{} or {}",
            init.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join(", "),
            last.as_ref()
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// Command line and plans
// ---------------------------------------------------------------------------------------------

/// A parameter value as written on the command line or in a plan, before it is read.
#[derive(Clone, Debug, PartialEq)]
pub enum Raw {
    Text(String),
    /// Several texts (a YAML list, or a repeated flag).
    List(Vec<String>),
    Switch(bool),
}

impl Raw {
    fn texts(&self) -> Vec<String> {
        match self {
            Raw::Text(t) => vec![t.clone()],
            Raw::List(v) => v.clone(),
            Raw::Switch(b) => vec![b.to_string()],
        }
    }
}

/// How the user names parameters where a [`StepError`] is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spelling {
    /// `--tile-size`.
    Flag,
    /// `tile_size` (a plan key).
    Key,
}

impl Param {
    /// Whether `name` names this parameter in `spelling`.
    pub fn is_named(&self, name: &str, spelling: Spelling) -> bool {
        match spelling {
            Spelling::Flag => self.flag == name,
            Spelling::Key => self.key == name || self.plan_aliases.contains(&name),
        }
    }

    pub fn name_in(&self, spelling: Spelling) -> &'static str {
        match spelling {
            Spelling::Flag => self.flag,
            Spelling::Key => self.key,
        }
    }
}

/// Why a set of raw parameters is not a valid request; `field` is the parameter as the user
/// names it (flag without dashes, or plan key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepError {
    UnknownOpt(String),
    /// A parameter the optimization needs is missing.
    Missing {
        field: String,
    },
    /// A parameter has a bad value; the message reads after the parameter's name.
    Invalid {
        field: String,
        message: String,
    },
    /// A parameter that the optimization does not take.
    NotApplicable {
        field: String,
    },
}

impl StepError {
    pub fn field(&self) -> &str {
        match self {
            StepError::UnknownOpt(_) => "opt",
            StepError::Missing { field }
            | StepError::Invalid { field, .. }
            | StepError::NotApplicable { field } => field,
        }
    }

    /// The message with parameter names spelt by `name` (e.g. `--tile-size` or `` `tile_size` ``).
    pub fn message(&self, opt: &str, name: impl Fn(&str) -> String) -> String {
        match self {
            StepError::UnknownOpt(o) => {
                format!("unknown optimization `{o}` (known: {})", super::registry::known_names())
            }
            StepError::Missing { field } => format!("{opt} needs {}", name(field)),
            StepError::Invalid { field, message } => format!("{} {message}", name(field)),
            StepError::NotApplicable { field } => {
                format!("{} does not apply to {opt}", name(field))
            }
        }
    }
}

/// Build `opt`'s parameters from raw values named in `spelling`; expressions are parsed in
/// `dialect`. Missing parameters take their defaults.
pub fn build(
    opt: Opt,
    raw: &[(String, Raw)],
    spelling: Spelling,
    dialect: Dialect,
) -> Result<Params, StepError> {
    let meta = opt.meta();
    let mut params = Params::new(opt);
    for (name, v) in raw {
        let Some(p) = meta.params.iter().find(|p| p.is_named(name, spelling)) else {
            return Err(StepError::NotApplicable { field: name.clone() });
        };
        params.set(p.key, value(p, v, name, dialect)?);
    }
    for p in meta.params {
        if params.get(p.key).is_none() && p.required && p.default.is_none() {
            return Err(StepError::Missing { field: p.name_in(spelling).to_string() });
        }
    }
    fill_defaults(&mut params, dialect)?;
    Ok(params)
}

/// Defaults of the parameters not given, and `false` for switches.
fn fill_defaults(params: &mut Params, dialect: Dialect) -> Result<(), StepError> {
    for p in params.opt.meta().params {
        if params.get(p.key).is_some() {
            continue;
        }
        if let Some(d) = p.default {
            let v = value(p, &Raw::Text(d.to_string()), p.key, dialect)?;
            params.set(p.key, v);
        } else if p.is_switch() {
            params.set(p.key, Value::Switch(false));
        }
    }
    Ok(())
}

/// Read one raw value of `p` (named `name` by the user).
pub fn value(p: &Param, raw: &Raw, name: &str, dialect: Dialect) -> Result<Value, StepError> {
    let invalid = |message: String| StepError::Invalid { field: name.to_string(), message };
    let texts = raw.texts();
    let one = || -> Result<String, StepError> {
        match texts.as_slice() {
            [t] => Ok(t.clone()),
            _ => Err(invalid("takes one value".into())),
        }
    };
    let expr = |s: &str| {
        parse_expr_text(s, dialect).map_err(|_| invalid(format!("`{s}` is not a PVL expression")))
    };
    Ok(match p.kind {
        Kind::Switch => match raw {
            Raw::Switch(b) => Value::Switch(*b),
            _ => match one()?.as_str() {
                "true" => Value::Switch(true),
                "false" => Value::Switch(false),
                t => return Err(invalid(format!("must be true or false, not `{t}`"))),
            },
        },
        Kind::Count => {
            let t = one()?;
            match t.trim().parse::<u64>() {
                Ok(n) => Value::Count(n, None),
                Err(_) => return Err(invalid(format!("must be an unsigned integer, not `{t}`"))),
            }
        }
        Kind::Name => Value::Name(Ident::new(one()?, Span::default())),
        Kind::Choice(choices) => {
            let t = one()?;
            match choices.iter().find(|c| c.value == t || c.word == t) {
                Some(c) => Value::Word(c.value),
                None => {
                    let names: Vec<&str> = choices.iter().map(|c| c.value).collect();
                    return Err(invalid(format!("must be {}, not `{t}`", or_list(&names))));
                }
            }
        }
        Kind::Expr | Kind::Size | Kind::Path => Value::Expr(expr(&one()?)?),
        Kind::List { sep, .. } => {
            let items = texts
                .iter()
                .flat_map(|t| split_top(t, sep))
                .filter(|t| !t.is_empty())
                .map(|t| expr(&t))
                .collect::<Result<Vec<_>, _>>()?;
            if items.is_empty() {
                return Err(StepError::Missing { field: name.to_string() });
            }
            Value::Exprs(items)
        }
        Kind::Pair { both, .. } => {
            let parts: Vec<String> = match texts.as_slice() {
                [] => return Err(StepError::Missing { field: name.to_string() }),
                [one] => split_top(one, ','),
                many => many.to_vec(),
            };
            if parts.len() != 2 {
                return Err(invalid(format!(
                    "needs two expressions ({both}), got `{}`",
                    texts.join(", ")
                )));
            }
            Value::Exprs(vec![expr(&parts[0])?, expr(&parts[1])?])
        }
    })
}

/// Split at top-level occurrences of `sep` (outside brackets), trimming each part.
pub fn split_top(s: &str, sep: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        if ch == sep && depth == 0 {
            out.push(cur.trim().to_string());
            cur.clear();
        } else {
            cur.push(ch);
        }
    }
    out.push(cur.trim().to_string());
    out
}
