//! Resolution and type checking before verification (`alpine-rs verify`, exit 2).
//!
//! VerCors rejects ill-typed programs before it verifies anything; so do we, with diagnostics
//! that point at the PVL (a Viper type error would be our bug, E-INTERNAL). The pass reports
//! duplicate declarations (V-DUPLICATE), constructors not named after their class
//! (V-CONSTRUCTOR-NAME), undeclared names, fields and methods (V-UNDECLARED), wrong
//! argument counts (V-ARITY), assignments to what cannot be assigned (V-NOT-ASSIGNABLE) and type
//! mismatches: conditions that are not boolean, resources where a boolean is needed, operands,
//! assignments, arguments and returns of the wrong type (V-TYPE).
//!
//! It is deliberately permissive: a construct it does not understand has the type `Unknown`,
//! which fits everywhere, so that new constructs (and files it cannot fully resolve) are never
//! rejected by it; only definite mismatches are errors. `env` collects the declarations,
//! `exprs` types expressions, `stmts` walks statements, contracts and members.

mod env;
mod exprs;
mod stmts;

use diag::Diagnostic;
use env::Env;
use front::ast::{self, Type, TypeKind};
use front::span::Span;
use std::collections::HashMap;

/// Check a parsed program; the errors found (empty: nothing to report).
pub fn check(prog: &ast::Program) -> Vec<Diagnostic> {
    check_members(prog).0
}

/// Check a parsed program, and resolve its uses of the value types' built-in members
/// (`xs.head`, `m.keys`, …; `analyze::builtins`): the errors found, and the program with those
/// uses in their core form where it has any. Generic code is checked through its instances,
/// and then the instances are what is returned.
pub fn check_members(prog: &ast::Program) -> (Vec<Diagnostic>, Option<ast::Program>) {
    // Generic code is checked through its instances (what both oracles run). Generic code the
    // instantiation refuses is refused by both oracles before they type-check (V-UNSUPPORTED,
    // R-UNSUPPORTED), and its types mention parameters this checker does not model.
    match crate::generics::monomorphise(prog) {
        Ok(Some(mono)) => {
            let (ds, core) = check_members(&mono);
            return (ds, Some(core.unwrap_or(mono)));
        }
        Err(_) => return (Vec::new(), None),
        Ok(None) => {}
    }
    let env = Env::collect(prog);
    let mut ck = Checker {
        diags: env.diags.clone(),
        env,
        class: None,
        scopes: Vec::new(),
        ret: Ty::Unknown,
        lenient: false,
        members: Default::default(),
    };
    ck.program(prog);
    let core = crate::builtins::desugar(prog, &ck.members);
    (ck.diags, core)
}

/// The types the checker tells apart. `Unknown` fits everywhere (see the module doc).
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Int,
    Bool,
    /// `frac`, `zfrac`, `rational` and permission amounts.
    Frac,
    /// `float32`, `float64` (C's `float`, `double`): numbers, never booleans nor permissions.
    Float,
    Resource,
    Null,
    Void,
    Class(String),
    Array(Box<Ty>),
    Seq(Box<Ty>),
    Set(Box<Ty>),
    Bag(Box<Ty>),
    /// `map<K,V>`
    Map(Box<Ty>, Box<Ty>),
    /// `option<T>`: only its declared uses and `getOption`/`getOrElseOption` (the values
    /// `None` and `Some(e)` stay unknown). Without it, `getOption(o)` of an `option<int>` was
    /// unknown and so fit a boolean: `assert b ==> getOption(o);` reached Silicon as an
    /// ill-typed program (found by the fuzzer, `fixtures/fuzz/`).
    Option(Box<Ty>),
    /// `tuple<A, B>`: only `.fst`/`.snd` and equality. Without it, `t / u` of two tuples was
    /// unknown and fit arithmetic: it reached Silicon as an ill-typed program (found by the
    /// encoder fuzzer with Silicon).
    Tuple(Box<Ty>, Box<Ty>),
    Unknown,
}

impl Ty {
    pub fn of(t: &Type) -> Ty {
        match &t.kind {
            TypeKind::Int => Ty::Int,
            TypeKind::Boolean | TypeKind::Bool => Ty::Bool,
            TypeKind::Frac | TypeKind::ZFrac | TypeKind::Rational => Ty::Frac,
            TypeKind::Float32 | TypeKind::Float64 => Ty::Float,
            TypeKind::Resource => Ty::Resource,
            TypeKind::Void => Ty::Void,
            TypeKind::Class(c, args) if args.is_empty() => Ty::Class(c.name.clone()),
            TypeKind::Array(e, _) => Ty::Array(Box::new(Ty::of(e))),
            TypeKind::Generic1(ast::Generic1::Seq, e) => Ty::Seq(Box::new(Ty::of(e))),
            TypeKind::Generic1(ast::Generic1::Set, e) => Ty::Set(Box::new(Ty::of(e))),
            TypeKind::Generic1(ast::Generic1::Bag, e) => Ty::Bag(Box::new(Ty::of(e))),
            TypeKind::Map(k, v) => Ty::Map(Box::new(Ty::of(k)), Box::new(Ty::of(v))),
            TypeKind::Generic1(ast::Generic1::Option, e) => Ty::Option(Box::new(Ty::of(e))),
            TypeKind::Tuple(a, b) => Ty::Tuple(Box::new(Ty::of(a)), Box::new(Ty::of(b))),
            _ => Ty::Unknown,
        }
    }

    fn numeric(&self) -> bool {
        matches!(self, Ty::Int | Ty::Frac | Ty::Float | Ty::Unknown)
    }

    /// Definitely not a boolean (nor something that may be one).
    fn not_bool(&self) -> bool {
        !matches!(self, Ty::Bool | Ty::Unknown)
    }

    /// Definitely not usable as a resource (booleans are resources).
    fn not_resource(&self) -> bool {
        !matches!(self, Ty::Bool | Ty::Resource | Ty::Unknown)
    }

    fn collection(&self) -> bool {
        matches!(self, Ty::Seq(_) | Ty::Set(_) | Ty::Bag(_))
    }

    fn name(&self) -> String {
        match self {
            Ty::Int => "int".into(),
            Ty::Bool => "boolean".into(),
            Ty::Frac => "frac".into(),
            Ty::Float => "float".into(),
            Ty::Resource => "resource".into(),
            Ty::Null => "null".into(),
            Ty::Void => "void".into(),
            Ty::Class(c) => c.clone(),
            Ty::Array(e) => format!("{}[]", e.name()),
            Ty::Seq(e) => format!("seq<{}>", e.name()),
            Ty::Set(e) => format!("set<{}>", e.name()),
            Ty::Bag(e) => format!("bag<{}>", e.name()),
            Ty::Map(k, v) => format!("map<{}, {}>", k.name(), v.name()),
            Ty::Option(e) => format!("option<{}>", e.name()),
            Ty::Tuple(a, b) => format!("tuple<{}, {}>", a.name(), b.name()),
            Ty::Unknown => "?".into(),
        }
    }
}

/// A declared name in a scope.
#[derive(Clone, Debug)]
pub struct Var {
    pub ty: Ty,
    pub span: Span,
    /// Parameters and locals can be assigned; quantified and `par` iteration variables cannot.
    pub assignable: bool,
}

pub struct Checker {
    pub env: Env,
    pub diags: Vec<Diagnostic>,
    pub class: Option<String>,
    pub scopes: Vec<HashMap<String, Var>>,
    /// The return type of the member being checked (`\result`).
    pub ret: Ty,
    /// The member has a statement the checker does not model (it may declare names):
    /// unresolved names are not reported in it.
    pub lenient: bool,
    /// The built-in member uses resolved so far (`analyze::builtins`).
    pub members: crate::builtins::Uses,
}

impl Checker {
    /// Whether a value of type `from` may be used where `to` is expected.
    pub fn fits(&self, to: &Ty, from: &Ty) -> bool {
        match (to, from) {
            (Ty::Unknown, _) | (_, Ty::Unknown) => true,
            (a, b) if a == b => true,
            (Ty::Frac, Ty::Int) | (Ty::Resource, Ty::Bool) => true,
            // C converts between integers and floats implicitly (a float into an integer is
            // truncated, `viper/encode/floats.rs`).
            (Ty::Float, Ty::Int) | (Ty::Int, Ty::Float) => true,
            (Ty::Class(_) | Ty::Array(_), Ty::Null) => true,
            (Ty::Array(a), Ty::Array(b))
            | (Ty::Seq(a), Ty::Seq(b))
            | (Ty::Set(a), Ty::Set(b))
            | (Ty::Bag(a), Ty::Bag(b))
            | (Ty::Option(a), Ty::Option(b)) => self.fits(a, b) || self.fits(b, a),
            (Ty::Tuple(a, b), Ty::Tuple(a2, b2)) => self.fits(a, a2) && self.fits(b, b2),
            (Ty::Map(k, v), Ty::Map(k2, v2)) => {
                (self.fits(k, k2) || self.fits(k2, k)) && (self.fits(v, v2) || self.fits(v2, v))
            }
            // A class we do not know (declared elsewhere, generic) may be anything.
            (Ty::Class(a), Ty::Class(b)) => {
                !self.env.classes.contains_key(a) || !self.env.classes.contains_key(b)
            }
            _ => false,
        }
    }

    pub fn mismatch(&mut self, span: Span, msg: String, label: String, help: &str) {
        self.diags.push(
            Diagnostic::error("V-TYPE", msg).with_primary(span, label).with_help(help.to_string()),
        );
    }

    /// `to` expected, `from` found at `span`: a V-TYPE error unless it fits.
    pub fn expect(&mut self, span: Span, to: &Ty, from: &Ty, what: &str) {
        if !self.fits(to, from) {
            self.mismatch(
                span,
                format!("{what}: expected `{}`, found `{}`", to.name(), from.name()),
                format!("this has type `{}`", from.name()),
                "change the expression or the declared type so that the types agree",
            );
        }
    }

    pub fn lookup(&self, name: &str) -> Option<&Var> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    /// Declare `name` in the innermost scope; a second declaration in the same scope is an
    /// error (VerCors rejects it, and the encoder would silently let the second one win).
    pub fn declare(&mut self, name: &ast::Ident, ty: Ty, assignable: bool) {
        let Some(scope) = self.scopes.last_mut() else { return };
        if let Some(first) = scope.get(&name.name) {
            let first = first.span;
            self.diags.push(
                Diagnostic::error("V-DUPLICATE", format!("`{}` is declared twice", name.name))
                    .with_primary(name.span, "declared again here")
                    .with_secondary(first, "first declared here")
                    .with_help("rename one of the two declarations"),
            );
            return;
        }
        scope.insert(name.name.clone(), Var { ty, span: name.span, assignable });
    }

    pub fn undeclared(&mut self, span: Span, msg: String, help: &str) {
        if self.env.open || self.lenient {
            return;
        }
        self.diags.push(
            Diagnostic::error("V-UNDECLARED", msg.clone())
                .with_primary(span, "not declared")
                .with_help(help.to_string()),
        );
    }
}
