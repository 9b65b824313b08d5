//! A small Viper AST: just what the PVL encoding produces.
//!
//! Every expression may carry the PVL span it was translated from, and every statement and
//! contract clause carries an [`Origin`]: the printer turns both into the position map (§4.1 of
//! `verification.md`) that error mapping reads.

use front::span::Span;
use num_bigint::BigInt;

/// Why a Viper node exists; decides how a Silicon error on it is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Role {
    /// Plain translation of PVL code or a PVL expression.
    Code,
    /// A method `requires` clause.
    Pre,
    /// A method `ensures` clause.
    Post,
    /// A thread method's `requires` (the par block's per-thread precondition).
    ThreadPre,
    /// A thread method's `ensures` (the par block's per-thread postcondition).
    ThreadPost,
    /// Call-site assert/exhale of a par block's precondition.
    ParPre,
    /// Call-site inhale of a par block's postcondition.
    ParPost,
    /// Barrier enactment: assert/exhale of the barrier's preconditions.
    BarrierPre,
    /// Barrier enactment: inhale of the barrier's postconditions.
    BarrierPost,
    /// Barrier enactment: every thread of the block reaches the barrier (the conditions on the
    /// way to it hold in all threads).
    BarrierReach,
    /// `requires` of a barrier-consistency method.
    BarrierConsPre,
    /// `ensures` of a barrier-consistency method.
    BarrierConsPost,
    /// A loop invariant.
    Invariant,
    /// One component of a termination measure (`decreases e, …` of a method, function or
    /// loop); kept among its owner's preconditions or invariants and printed as one clause.
    Decreases,
    /// A PVL `assert`.
    UserAssert,
    /// A PVL method call.
    Call,
    /// A write to a heap location.
    HeapWrite,
    /// Exhale of a shared-resource invariant (`invariant` block entry, `atomic` exit).
    InvariantExhale,
    /// Exhale of a class's `lock_invariant` (at `unlock`, `wait`, the end of a constructor).
    LockInvariant,
    /// A lock or thread token (`held`, `idle`, `running`; the origin's label names it).
    Token,
    /// Something the encoder generated that has no PVL counterpart.
    Synthetic,
}

/// Where a Viper node comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct Origin {
    /// The PVL construct responsible.
    pub span: Option<Span>,
    pub role: Role,
    /// The PVL contract clause, for contract-derived nodes.
    pub clause: Option<Span>,
    /// The par block or barrier label, when the node belongs to one.
    pub label: Option<String>,
}

impl Origin {
    pub fn new(role: Role, span: Option<Span>) -> Origin {
        Origin { span, role, clause: None, label: None }
    }
    pub fn synthetic() -> Origin {
        Origin::new(Role::Synthetic, None)
    }
    pub fn with_clause(mut self, clause: Span) -> Origin {
        self.clause = Some(clause);
        self
    }
    pub fn with_label(mut self, label: impl Into<String>) -> Origin {
        self.label = Some(label.into());
        self
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Int,
    Bool,
    Ref,
    Perm,
    Arr,
    Seq(Box<Ty>),
    Set(Box<Ty>),
    Multiset(Box<Ty>),
    /// `Map[K, V]`
    Map(Box<Ty>, Box<Ty>),
    /// A domain type of the program's own (an ADT).
    Domain(String),
}

impl std::fmt::Display for Ty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ty::Int => write!(f, "Int"),
            Ty::Bool => write!(f, "Bool"),
            Ty::Ref => write!(f, "Ref"),
            Ty::Perm => write!(f, "Perm"),
            Ty::Arr => write!(f, "Arr"),
            Ty::Seq(t) => write!(f, "Seq[{t}]"),
            Ty::Set(t) => write!(f, "Set[{t}]"),
            Ty::Multiset(t) => write!(f, "Multiset[{t}]"),
            Ty::Map(k, v) => write!(f, "Map[{k}, {v}]"),
            Ty::Domain(d) => write!(f, "{d}"),
        }
    }
}

/// The operator of a magic wand `A --* B` (a [`ExpKind::Binary`]).
pub const WAND: &str = "--*";

#[derive(Clone, Debug, PartialEq)]
pub struct Exp {
    pub kind: ExpKind,
    /// The PVL expression this node translates, if any.
    pub span: Option<Span>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExpKind {
    Int(BigInt),
    Bool(bool),
    Null,
    Var(String),
    Result,
    Write,
    NoPerm,
    Wildcard,
    /// Prefix operator: `!`, `-`.
    Unary(&'static str, Box<Exp>),
    /// Infix operator, printed verbatim: `+`, `\`, `/` (permission division), `==>`, `++`, `in`, …
    Binary(&'static str, Box<Exp>, Box<Exp>),
    Cond(Box<Exp>, Box<Exp>, Box<Exp>),
    /// `e.f`
    Field(Box<Exp>, String),
    /// Function or domain function application (also predicate instances inside `acc`/`fold`).
    App(String, Vec<Exp>),
    /// `acc(loc, perm)`; `loc` is a field access or a predicate instance.
    Acc(Box<Exp>, Box<Exp>),
    /// `perm(loc)`
    PermOf(Box<Exp>),
    Forall(Vec<(String, Ty)>, Vec<Vec<Exp>>, Box<Exp>),
    Exists(Vec<(String, Ty)>, Vec<Vec<Exp>>, Box<Exp>),
    Old(Option<String>, Box<Exp>),
    Let(String, Box<Exp>, Box<Exp>),
    Unfolding(Box<Exp>, Box<Exp>),
    /// `Seq[T]()` or `Seq(a, b)`; the type is needed for the empty literal.
    SeqLit(Ty, Vec<Exp>),
    SetLit(Ty, Vec<Exp>),
    MultisetLit(Ty, Vec<Exp>),
    /// `Map[K, V]()`: the empty map of key type `K` and value type `V`.
    EmptyMap(Ty, Ty),
    /// `|s|`
    Len(Box<Exp>),
    /// `s[i]`
    SeqIndex(Box<Exp>, Box<Exp>),
    /// `s[lo..hi]`, `s[..hi]`, `s[lo..]`
    SeqSlice(Box<Exp>, Option<Box<Exp>>, Option<Box<Exp>>),
    /// `s[i := v]`
    SeqUpdate(Box<Exp>, Box<Exp>, Box<Exp>),
    /// `[lo..hi)`
    Range(Box<Exp>, Box<Exp>),
}

impl Exp {
    pub fn new(kind: ExpKind, span: Option<Span>) -> Exp {
        Exp { kind, span }
    }
    pub fn synth(kind: ExpKind) -> Exp {
        Exp { kind, span: None }
    }
    pub fn int(v: i64) -> Exp {
        Exp::synth(ExpKind::Int(BigInt::from(v)))
    }
    pub fn bool(b: bool) -> Exp {
        Exp::synth(ExpKind::Bool(b))
    }
    pub fn var(n: impl Into<String>) -> Exp {
        Exp::synth(ExpKind::Var(n.into()))
    }
    pub fn bin(op: &'static str, l: Exp, r: Exp) -> Exp {
        Exp::synth(ExpKind::Binary(op, Box::new(l), Box::new(r)))
    }
    pub fn and(l: Exp, r: Exp) -> Exp {
        if matches!(l.kind, ExpKind::Bool(true)) {
            return r;
        }
        if matches!(r.kind, ExpKind::Bool(true)) {
            return l;
        }
        Exp::bin("&&", l, r)
    }
    pub fn and_all(es: impl IntoIterator<Item = Exp>) -> Exp {
        es.into_iter().fold(Exp::bool(true), Exp::and)
    }
    pub fn implies(l: Exp, r: Exp) -> Exp {
        if matches!(l.kind, ExpKind::Bool(true)) {
            return r;
        }
        Exp::bin("==>", l, r)
    }
    pub fn negate(e: Exp) -> Exp {
        Exp::synth(ExpKind::Unary("!", Box::new(e)))
    }
    pub fn app(f: impl Into<String>, args: Vec<Exp>) -> Exp {
        Exp::synth(ExpKind::App(f.into(), args))
    }
    pub fn field(e: Exp, f: impl Into<String>) -> Exp {
        Exp::synth(ExpKind::Field(Box::new(e), f.into()))
    }
    pub fn acc(loc: Exp, p: Exp) -> Exp {
        Exp::synth(ExpKind::Acc(Box::new(loc), Box::new(p)))
    }
    pub fn with_span(mut self, s: Option<Span>) -> Exp {
        self.span = s;
        self
    }

    /// Does the expression contain an accessibility predicate (is it a resource)?
    pub fn has_acc(&self) -> bool {
        self.any_acc(|_| true)
    }

    /// Does the expression hold an accessibility predicate with an amount other than
    /// `wildcard`? Wildcard amounts can be shared by any number of threads.
    pub fn has_counted_acc(&self) -> bool {
        self.any_acc(|p| !matches!(p.kind, ExpKind::Wildcard))
    }

    /// Does an accessibility predicate whose amount satisfies `amount` occur?
    fn any_acc(&self, amount: impl Fn(&Exp) -> bool) -> bool {
        let mut found = false;
        self.visit(&mut |e| match &e.kind {
            ExpKind::Acc(_, p) => found |= amount(p),
            // A magic wand is a resource held once, as a full permission is.
            ExpKind::Binary(op, ..) if *op == WAND => found |= amount(&Exp::synth(ExpKind::Write)),
            _ => {}
        });
        found
    }

    /// Does the expression read the heap (field access or `perm`), outside of `acc` locations?
    pub fn reads_heap(&self) -> bool {
        let mut found = false;
        self.visit(&mut |e| {
            if matches!(e.kind, ExpKind::Field(..) | ExpKind::PermOf(..) | ExpKind::Unfolding(..)) {
                found = true;
            }
        });
        found
    }

    pub fn mentions_var(&self, v: &str) -> bool {
        let mut found = false;
        self.visit(&mut |e| {
            if let ExpKind::Var(n) = &e.kind {
                if n == v {
                    found = true;
                }
            }
        });
        found
    }

    /// Pre-order visit of every sub-expression (including triggers).
    pub fn visit(&self, f: &mut dyn FnMut(&Exp)) {
        f(self);
        self.for_each_child(true, &mut |c| c.visit(f));
    }

    /// Each direct sub-expression, left to right; with `triggers`, a quantifier's trigger terms
    /// too (before its body).
    pub fn for_each_child<'a>(&'a self, triggers: bool, f: &mut dyn FnMut(&'a Exp)) {
        match &self.kind {
            ExpKind::Int(_)
            | ExpKind::Bool(_)
            | ExpKind::Null
            | ExpKind::Var(_)
            | ExpKind::Result
            | ExpKind::Write
            | ExpKind::NoPerm
            | ExpKind::EmptyMap(..)
            | ExpKind::Wildcard => {}
            ExpKind::Unary(_, a)
            | ExpKind::Field(a, _)
            | ExpKind::PermOf(a)
            | ExpKind::Old(_, a)
            | ExpKind::Len(a) => f(a),
            ExpKind::Binary(_, a, b)
            | ExpKind::Acc(a, b)
            | ExpKind::Let(_, a, b)
            | ExpKind::Unfolding(a, b)
            | ExpKind::SeqIndex(a, b)
            | ExpKind::Range(a, b) => {
                f(a);
                f(b);
            }
            ExpKind::Cond(a, b, c) | ExpKind::SeqUpdate(a, b, c) => {
                f(a);
                f(b);
                f(c);
            }
            ExpKind::App(_, args)
            | ExpKind::SeqLit(_, args)
            | ExpKind::SetLit(_, args)
            | ExpKind::MultisetLit(_, args) => args.iter().for_each(f),
            ExpKind::Forall(_, trs, b) | ExpKind::Exists(_, trs, b) => {
                if triggers {
                    trs.iter().flatten().for_each(&mut *f);
                }
                f(b);
            }
            ExpKind::SeqSlice(s, lo, hi) => {
                f(s);
                lo.iter().chain(hi).for_each(|e| f(e));
            }
        }
    }

    /// Bottom-up rewrite of every sub-expression.
    pub fn map(self, f: &mut dyn FnMut(Exp) -> Exp) -> Exp {
        let span = self.span;
        let bx = |e: Box<Exp>, f: &mut dyn FnMut(Exp) -> Exp| Box::new(e.map(f));
        let list = |es: Vec<Exp>, f: &mut dyn FnMut(Exp) -> Exp| -> Vec<Exp> {
            es.into_iter().map(|e| e.map(f)).collect()
        };
        let kind = match self.kind {
            k @ (ExpKind::Int(_)
            | ExpKind::Bool(_)
            | ExpKind::Null
            | ExpKind::Var(_)
            | ExpKind::Result
            | ExpKind::Write
            | ExpKind::NoPerm
            | ExpKind::EmptyMap(..)
            | ExpKind::Wildcard) => k,
            ExpKind::Unary(o, a) => ExpKind::Unary(o, bx(a, f)),
            ExpKind::Field(a, n) => ExpKind::Field(bx(a, f), n),
            ExpKind::PermOf(a) => ExpKind::PermOf(bx(a, f)),
            ExpKind::Old(l, a) => ExpKind::Old(l, bx(a, f)),
            ExpKind::Len(a) => ExpKind::Len(bx(a, f)),
            ExpKind::Binary(o, a, b) => ExpKind::Binary(o, bx(a, f), bx(b, f)),
            ExpKind::Acc(a, b) => ExpKind::Acc(bx(a, f), bx(b, f)),
            ExpKind::Let(n, a, b) => ExpKind::Let(n, bx(a, f), bx(b, f)),
            ExpKind::Unfolding(a, b) => ExpKind::Unfolding(bx(a, f), bx(b, f)),
            ExpKind::SeqIndex(a, b) => ExpKind::SeqIndex(bx(a, f), bx(b, f)),
            ExpKind::Range(a, b) => ExpKind::Range(bx(a, f), bx(b, f)),
            ExpKind::Cond(a, b, c) => ExpKind::Cond(bx(a, f), bx(b, f), bx(c, f)),
            ExpKind::SeqUpdate(a, b, c) => ExpKind::SeqUpdate(bx(a, f), bx(b, f), bx(c, f)),
            ExpKind::App(n, args) => ExpKind::App(n, list(args, f)),
            ExpKind::SeqLit(t, args) => ExpKind::SeqLit(t, list(args, f)),
            ExpKind::SetLit(t, args) => ExpKind::SetLit(t, list(args, f)),
            ExpKind::MultisetLit(t, args) => ExpKind::MultisetLit(t, list(args, f)),
            ExpKind::Forall(vs, trs, b) => {
                let trs = trs.into_iter().map(|t| list(t, f)).collect();
                ExpKind::Forall(vs, trs, bx(b, f))
            }
            ExpKind::Exists(vs, trs, b) => {
                let trs = trs.into_iter().map(|t| list(t, f)).collect();
                ExpKind::Exists(vs, trs, bx(b, f))
            }
            ExpKind::SeqSlice(s, lo, hi) => {
                ExpKind::SeqSlice(bx(s, f), lo.map(|e| bx(e, f)), hi.map(|e| bx(e, f)))
            }
        };
        f(Exp { kind, span })
    }

    /// Capture-naive substitution of variables (bound names are always fresh in the encoder).
    pub fn subst(self, var: &str, by: &Exp) -> Exp {
        self.map(&mut |e| match &e.kind {
            ExpKind::Var(n) if n == var => by.clone(),
            _ => e,
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub origin: Origin,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    VarDecl(String, Ty),
    Assign(Exp, Exp),
    /// `targets := m(args)`
    Call(Vec<String>, String, Vec<Exp>),
    /// `x := new(fields)`
    New(String, Vec<String>),
    Inhale(Exp),
    Exhale(Exp),
    Assert(Exp),
    Assume(Exp),
    Fold(Exp),
    Unfold(Exp),
    /// `package A --* B { proof }`
    Package(Exp, Vec<Stmt>),
    /// `apply A --* B`
    Apply(Exp),
    If(Exp, Vec<Stmt>, Vec<Stmt>),
    While(Exp, Vec<Contract>, Vec<Stmt>),
    Label(String),
    Goto(String),
    Comment(String),
}

impl Stmt {
    pub fn new(kind: StmtKind, origin: Origin) -> Stmt {
        Stmt { kind, origin }
    }
}

/// One contract conjunct (requires / ensures / invariant) with its origin.
#[derive(Clone, Debug, PartialEq)]
pub struct Contract {
    pub exp: Exp,
    pub origin: Origin,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Method {
    pub name: String,
    pub params: Vec<(String, Ty)>,
    pub returns: Vec<(String, Ty)>,
    pub pres: Vec<Contract>,
    pub posts: Vec<Contract>,
    pub body: Option<Vec<Stmt>>,
    /// What the method encodes (host method, thread of a par block, barrier consistency).
    pub kind: MethodKind,
    /// The PVL construct (method, par arm, barrier).
    pub span: Option<Span>,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum MethodKind {
    Pvl,
    Thread,
    BarrierConsistency,
    /// Assumes a PVL method's precondition and asserts `false` (`encode::sat`).
    SatCheck,
    Prelude,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    pub params: Vec<(String, Ty)>,
    pub ret: Ty,
    pub pres: Vec<Contract>,
    pub posts: Vec<Contract>,
    pub body: Option<Exp>,
    pub span: Option<Span>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Predicate {
    pub name: String,
    pub params: Vec<(String, Ty)>,
    pub body: Option<Exp>,
    pub span: Option<Span>,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Program {
    /// Verbatim Viper text emitted first (domain and prelude).
    pub prelude: String,
    pub fields: Vec<(String, Ty)>,
    pub functions: Vec<Function>,
    pub predicates: Vec<Predicate>,
    pub methods: Vec<Method>,
    /// Verbatim Viper domains this program declares on demand (maps' `maps.rs`), printed after
    /// the prelude.
    pub domains: Vec<String>,
    /// Viper identifier → the PVL name it stands for, where they differ (mangled fields,
    /// members and locals), so that Silicon's messages can name the user's identifiers.
    pub names: Vec<(String, String)>,
    /// Where the program first computes with floats, encoded as reals (`encode/floats.rs`): its
    /// report says that rounding is not modelled.
    pub reals: Option<front::span::Span>,
}

impl Program {
    /// Every expression of the program (contracts, bodies and statements of its functions,
    /// predicates and methods), given to `f` to change in place.
    pub fn exps_mut(&mut self, f: &mut dyn FnMut(&mut Exp)) {
        for func in &mut self.functions {
            func.pres.iter_mut().chain(func.posts.iter_mut()).for_each(|c| f(&mut c.exp));
            if let Some(b) = &mut func.body {
                f(b);
            }
        }
        for p in &mut self.predicates {
            if let Some(b) = &mut p.body {
                f(b);
            }
        }
        for m in &mut self.methods {
            m.pres.iter_mut().chain(m.posts.iter_mut()).for_each(|c| f(&mut c.exp));
            if let Some(body) = &mut m.body {
                stmt_exps_mut(body, f);
            }
        }
    }
}

/// Every expression of `body`, nested statements included, given to `f` to change in place.
pub fn stmt_exps_mut(body: &mut [Stmt], f: &mut dyn FnMut(&mut Exp)) {
    for s in body {
        match &mut s.kind {
            StmtKind::Assign(a, b) => {
                f(a);
                f(b);
            }
            StmtKind::Call(_, _, args) => args.iter_mut().for_each(&mut *f),
            StmtKind::Inhale(e)
            | StmtKind::Exhale(e)
            | StmtKind::Assert(e)
            | StmtKind::Assume(e)
            | StmtKind::Fold(e)
            | StmtKind::Unfold(e)
            | StmtKind::Apply(e) => f(e),
            StmtKind::Package(e, proof) => {
                f(e);
                stmt_exps_mut(proof, f);
            }
            StmtKind::If(c, then, els) => {
                f(c);
                stmt_exps_mut(then, f);
                stmt_exps_mut(els, f);
            }
            StmtKind::While(c, invs, b) => {
                f(c);
                invs.iter_mut().for_each(|i| f(&mut i.exp));
                stmt_exps_mut(b, f);
            }
            StmtKind::VarDecl(..)
            | StmtKind::New(..)
            | StmtKind::Label(_)
            | StmtKind::Goto(_)
            | StmtKind::Comment(_) => {}
        }
    }
}
