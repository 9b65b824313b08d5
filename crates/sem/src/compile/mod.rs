//! Lowering of the PVL syntax tree to the interpreter's form (semantics.md §4.5).
//!
//! Names are resolved to frame slots once, method calls to method ids, and statements become a
//! flat instruction list per method with explicit join points, so that a warp can stop at a
//! barrier and resume later without an interpreter stack to save. Expressions stay trees (`CE`)
//! but never refer back to the AST.
//!
//! This file holds the compiled form (what the interpreter runs: [`CProgram`], its methods,
//! instructions and expressions) and the compiler's state; the lowering itself is split by
//! what it lowers: `program` (declarations, methods, contracts, method resolution), `stmt`
//! (statements to instructions) and `expr` (expressions).

use super::value::{Amt, Value};
use diag::Diagnostic;
use front::ast::*;
use front::Span;
use num_traits::ToPrimitive;
use std::collections::BTreeMap;
use std::rc::Rc;

mod domain;
mod expr;
mod jumps;
mod program;
mod stmt;
mod sync;

use expr::mentions;
pub use expr::{has_resource, is_simple};
pub use program::compile;
use stmt::mark_simple;

/// Static type, as far as the interpreter needs it (defaults, allocation, input generation).
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Int,
    Bool,
    Array(Box<Ty>),
    Seq(Box<Ty>),
    Set(Box<Ty>),
    Bag(Box<Ty>),
    Option(Box<Ty>),
    Map(Box<Ty>, Box<Ty>),
    Tuple(Vec<Ty>),
    /// `frac`: a rational in (0, 1].
    Frac,
    /// `zfrac`: a rational in [0, 1].
    ZFrac,
    /// `rational`.
    Rational,
    Class(String),
    Void,
    Other(String),
}

impl Ty {
    /// Values of this type are ghost state (semantics.md §4.2): they cannot exist on a GPU.
    pub fn is_ghost(&self) -> bool {
        matches!(
            self,
            Ty::Seq(_) | Ty::Set(_) | Ty::Bag(_) | Ty::Option(_) | Ty::Map(..) | Ty::Tuple(_)
        )
    }

    /// `frac`, `zfrac` or `rational`: its values are [`super::value::Value::Perm`]s.
    pub fn is_rational(&self) -> bool {
        matches!(self, Ty::Frac | Ty::ZFrac | Ty::Rational)
    }

    pub fn from_ast(t: &Type) -> Ty {
        let b = |t: &Type| Box::new(Ty::from_ast(t));
        match &t.kind {
            TypeKind::Int => Ty::Int,
            TypeKind::Boolean | TypeKind::Bool => Ty::Bool,
            TypeKind::Void => Ty::Void,
            TypeKind::Frac => Ty::Frac,
            TypeKind::ZFrac => Ty::ZFrac,
            // Floats are exact rationals, as `verify` reads them (V-FLOAT-REAL).
            TypeKind::Rational | TypeKind::Float32 | TypeKind::Float64 => Ty::Rational,
            TypeKind::Array(inner, _) => Ty::Array(b(inner)),
            TypeKind::Generic1(Generic1::Seq, inner) => Ty::Seq(b(inner)),
            TypeKind::Generic1(Generic1::Set, inner) => Ty::Set(b(inner)),
            TypeKind::Generic1(Generic1::Bag, inner) => Ty::Bag(b(inner)),
            TypeKind::Generic1(Generic1::Option, inner) => Ty::Option(b(inner)),
            TypeKind::Map(k, v) => Ty::Map(b(k), b(v)),
            TypeKind::Tuple(a, c) => Ty::Tuple(vec![Ty::from_ast(a), Ty::from_ast(c)]),
            TypeKind::Class(id, _) => Ty::Class(id.name.clone()),
            other => Ty::Other(format!("{other:?}")),
        }
    }
}

/// Operations on the value kinds beyond integers, booleans, references and sequences
/// (evaluated in `interp/coll.rs`); each takes the [`CE::Ghost`] node's operands in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GOp {
    /// `set<T>{e, …}` / `{e, …}`.
    SetLit,
    /// `bag<T>{e, …}`.
    BagLit,
    /// `{lo .. hi}`: the integers from `lo` up to `hi - 1`.
    SetRange,
    /// `map<K,V>{k -> v, …}`: operands `dflt, k1, v1, k2, v2, …` (`dflt`: see
    /// [`super::value::MapVal`]).
    MapLit,
    /// `(a, b, …)`, `tuple<A,B>{a, b}`.
    Tuple,
    /// `t.fst`, `t.snd` of a tuple.
    Fst,
    Snd,
    /// `Some(e)`.
    Some,
    /// `getOption(o)`: the value of a `Some`; `None` is an error.
    GetOption,
    /// `getOrElseOption(o, d)`.
    GetOrElse,
    /// `getFromMap(m, k)`, `m[k]`.
    MapGet,
    /// `buildMap(m, k, v)`.
    MapBuild,
    /// `removeFromMap(m, k)`.
    MapRemove,
    /// `keysMap(m)`.
    Keys,
    /// `valuesMap(m)`.
    Values,
    /// `itemsMap(m)`: the set of `(k, v)` tuples.
    Items,
    /// `\values(a, lo, hi)`: the cells `lo .. hi` of an array as a sequence, each read (with
    /// its permission check).
    ArrayValues,
    /// `disjointMap(a, b)`: no key in both.
    Disjoint,
    /// The value of an expression of type `frac`, `zfrac` or `rational` (a variable, a field,
    /// a function result): an integer becomes the amount it equals, so that the operators
    /// treat it as a rational.
    ToRat,
    /// A number as an integer: a rational truncated toward zero (C's conversion of a float
    /// assigned to an integer), an integer as it is.
    Trunc,
}

impl GOp {
    pub fn name(self) -> &'static str {
        match self {
            GOp::SetLit => "set literal",
            GOp::BagLit => "bag literal",
            GOp::SetRange => "set range",
            GOp::MapLit => "map literal",
            GOp::Tuple => "tuple",
            GOp::Fst => "fst",
            GOp::Snd => "snd",
            GOp::Some => "Some",
            GOp::GetOption => "getOption",
            GOp::GetOrElse => "getOrElseOption",
            GOp::MapGet => "getFromMap",
            GOp::MapBuild => "buildMap",
            GOp::MapRemove => "removeFromMap",
            GOp::Keys => "keysMap",
            GOp::Values => "valuesMap",
            GOp::Items => "itemsMap",
            GOp::ArrayValues => "\\values",
            GOp::Disjoint => "disjointMap",
            GOp::ToRat => "rational",
            GOp::Trunc => "truncation",
        }
    }
}

/// One generator of a set comprehension: the binder and, for `T x <- s`, the collection it
/// ranges over (else its bounds come from the condition, as a quantifier's).
#[derive(Clone, Debug, PartialEq)]
pub struct CompGen {
    pub binder: Binder,
    pub source: Option<CE>,
}

/// Compiled expression. Equality is structural (spans compare equal wherever they are).
#[derive(Clone, Debug, PartialEq)]
pub enum CE {
    Int(i64),
    Bool(bool),
    Null,
    Local(u32),
    This,
    Result,
    /// `obj.f` (a bare field name is `this.f`); the u32 is a global field-name id.
    Field(Box<CE>, u32, Span),
    /// `a.length` or `|s|`.
    Length(Box<CE>, Span),
    Index(Box<CE>, Box<CE>, Span),
    Not(Box<CE>),
    Neg(Box<CE>, Span),
    Bin(BinOp, Box<CE>, Box<CE>, Span),
    Cond(Box<CE>, Box<CE>, Box<CE>),
    CallPure {
        method: u32,
        recv: Option<Box<CE>>,
        args: Vec<CE>,
        span: Span,
    },
    Old(Box<CE>),
    Quant {
        kind: QuantKind,
        binders: Vec<Binder>,
        cond: Option<Box<CE>>,
        /// Every conjunct of `cond` became a simple binder bound, so `cond` holds for every
        /// enumerated value and need not be evaluated again.
        implied: bool,
        body: Box<CE>,
        span: Span,
    },
    Sum {
        binder: Binder,
        cond: Box<CE>,
        implied: bool,
        body: Box<CE>,
        span: Span,
    },
    Let(u32, Box<CE>, Box<CE>),
    Perm(Box<CE>, Box<CE>, Span),
    PointsTo(Box<CE>, Box<CE>, Box<CE>, Span),
    ArrayShape(Box<CE>, Box<CE>),
    /// `\matrix(m, rows, cols)`; no `cols` for the implied shape of a `T[x][] m` parameter.
    MatrixShape(Box<CE>, Box<CE>, Option<Box<CE>>),
    /// Permission literals.
    Write,
    Read,
    NoPerm,
    SeqLit(Vec<CE>),
    SeqRange(Box<CE>, Box<CE>),
    Slice(Box<CE>, Option<Box<CE>>, Option<Box<CE>>, Span),
    SeqUpdate(Box<CE>, Box<CE>, Box<CE>, Span),
    Head(Box<CE>, Span),
    Tail(Box<CE>, Span),
    /// A call of a predicate (`inv()`): a resource token.
    Pred {
        pred: u32,
        recv: Option<Box<CE>>,
        args: Vec<CE>,
        span: Span,
    },
    /// `unfolding p in e`.
    Unfolding(Box<CE>, Box<CE>),
    /// `[p]R`: the resource `R` with its permissions scaled by the amount `p`.
    Scale(Box<CE>, Box<CE>),
    /// A constant value (an integer literal outside `i64`, `None`, an empty collection).
    Const(Value),
    /// An operation on sets, bags, maps, options, tuples or rationals (see [`GOp`]).
    Ghost(GOp, Vec<CE>, Span),
    /// `set<T>{body | gens; cond}`.
    Comp {
        gens: Vec<CompGen>,
        cond: Option<Box<CE>>,
        body: Box<CE>,
        span: Span,
    },
    /// `perm(loc)`: the amount the evaluating holder has of a location.
    PermOf(Box<CE>, Span),
    Unsupported(String, Span),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Binder {
    pub slot: u32,
    pub name: String,
    pub lows: Vec<CE>,
    pub highs: Vec<CE>,
    /// Collections the binder is a member of (`x in xs`, `k in keysMap(m)`): a domain for a
    /// binder without integer bounds, or of a type other than `int`.
    pub members: Vec<CE>,
}

/// One top-level conjunct of a contract clause.
#[derive(Clone, Debug)]
pub struct CClause {
    pub e: CE,
    pub span: Span,
    /// No permissions inside: evaluated, never transferred.
    pub pure: bool,
    /// Pure and [`is_simple`]: its value depends on the store only, so it can be evaluated for
    /// many lanes at once, or once for threads that share the locals it reads.
    pub simple: bool,
    /// The clause is one `Perm(a[e], p)` of the shape [`PermLeaf`] describes.
    pub leaf: Option<PermLeaf>,
}

/// `Perm(a[e], p)` with `a` a local, `e` [`is_simple`] and `p` a literal, non-negative amount:
/// its location depends on the store only and its amount on nothing, so the interpreter can
/// compute the locations of many threads before it moves any permission (bulk transfers at
/// `par` entry and exit).
#[derive(Clone, Debug)]
pub struct PermLeaf {
    pub array: u32,
    pub index: CE,
    /// The span of `a[e]` (bounds and null errors point there).
    pub index_span: Span,
    pub amt: Amt,
    /// The span of the `Perm`.
    pub span: Span,
}

impl PermLeaf {
    pub fn of(e: &CE) -> Option<PermLeaf> {
        let CE::Perm(loc, p, span) = e else {
            return None;
        };
        let CE::Index(a, i, index_span) = &**loc else {
            return None;
        };
        let CE::Local(array) = &**a else {
            return None;
        };
        if !is_simple(i) {
            return None;
        }
        let amt = literal_amount(p)?;
        if amt.is_negative() {
            return None;
        }
        Some(PermLeaf {
            array: *array,
            index: (**i).clone(),
            index_span: *index_span,
            amt,
            span: *span,
        })
    }
}

/// A permission amount written as a literal: `write`, `read`, `none` or `n\d` with `d != 0`.
pub fn literal_amount(p: &CE) -> Option<Amt> {
    Some(match p {
        CE::Write => Amt::write(),
        CE::Read => Amt::read(),
        CE::NoPerm => Amt::none(),
        CE::Bin(BinOp::Frac, n, d, _) => match (&**n, &**d) {
            (CE::Int(n), CE::Int(d)) if *d != 0 => Amt::frac(*n, *d),
            _ => return None,
        },
        _ => return None,
    })
}

#[derive(Clone, Debug)]
pub enum Target {
    Local(u32),
    Field(CE, u32),
    Index(CE, CE),
}

#[derive(Clone, Debug)]
pub enum Instr {
    Assign {
        /// `value` is [`is_simple`]: the warp may evaluate it for all lanes at once.
        simple: bool,
        target: Target,
        value: CE,
        span: Span,
        ghost: bool,
    },
    Alloc {
        target: Target,
        elem: Ty,
        dims: Vec<CE>,
        span: Span,
    },
    NewObj {
        target: Target,
        class: u32,
        ctor: Option<u32>,
        args: Vec<CE>,
        span: Span,
    },
    Call {
        target: Option<Target>,
        method: u32,
        recv: Option<CE>,
        args: Vec<CE>,
        /// `then { x = y; }` / `yields { x = y }`: after the call, caller slot `.0` gets the
        /// value of the callee's `yields` variable in slot `.1`.
        yields: Vec<(u32, u32)>,
        span: Span,
    },
    If {
        simple: bool,
        cond: CE,
        else_pc: usize,
        span: Span,
    },
    /// End of a then-branch: continue with the else lanes, or jump to the join.
    Else {
        end_pc: usize,
    },
    EndIf,
    LoopEnter {
        inv: Rc<Vec<CClause>>,
        span: Span,
    },
    LoopHead {
        simple: bool,
        cond: Option<CE>,
        exit_pc: usize,
        span: Span,
    },
    LoopBack {
        head_pc: usize,
        inv: Rc<Vec<CClause>>,
        span: Span,
    },
    Barrier(Rc<BarrierC>),
    Return {
        value: Option<CE>,
        span: Span,
    },
    Par(Rc<ParC>),
    Assert(Vec<CClause>),
    Assume(Vec<CClause>),
    Inhale(Vec<CClause>),
    Exhale(Vec<CClause>),
    Fold(CE, Span),
    Unfold(CE, Span),
    InvEnter {
        id: u32,
        res: Rc<Vec<CClause>>,
        span: Span,
    },
    InvExit {
        id: u32,
        span: Span,
    },
    AtomicBegin {
        inv: Option<u32>,
        end_pc: usize,
        span: Span,
    },
    AtomicEnd,
    /// `lock`, `unlock`, `wait`, `notify`, `fork` or `join` of the object `obj` (outside a
    /// lock region).
    Sync {
        op: SyncOp,
        obj: CE,
        span: Span,
    },
    /// `lock obj; … unlock obj;` in one block: the lanes run the region one at a time (as an
    /// `atomic` block), each holding the lock from here to `end_pc` (a [`Instr::LockEnd`]).
    LockBegin {
        obj: CE,
        end_pc: usize,
        span: Span,
    },
    /// The `unlock` that ends a lock region (the region's lanes release the lock there).
    LockEnd {
        span: Span,
    },
    /// `goto L`: leave the constructs `exits` (innermost first) and continue at `pc`.
    Goto {
        pc: usize,
        exits: Vec<Exit>,
        span: Span,
    },
    /// `vec (int j = lo .. hi) { … }`.
    Vec(Rc<VecC>),
    /// End of a `par` body: the lanes are finished.
    EndThread,
    /// End of a method body.
    EndMethod,
    Unsupported(String, Span),
}

/// The statements on locks and threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncOp {
    Lock,
    Unlock,
    Wait,
    Notify,
    Fork,
    Join,
}

impl SyncOp {
    pub fn keyword(self) -> &'static str {
        match self {
            SyncOp::Lock => "lock",
            SyncOp::Unlock => "unlock",
            SyncOp::Wait => "wait",
            SyncOp::Notify => "notify",
            SyncOp::Fork => "fork",
            SyncOp::Join => "join",
        }
    }
}

/// A construct that a `goto` leaves, with the state the warp keeps for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// A branch of an `if` (a join point on the reconvergence stack).
    If,
    /// A loop body (a loop entry on the reconvergence stack and a loop holder per lane).
    Loop,
}

/// A vector block `vec (int j = lo .. hi) { … }`: the body runs for every `j` in lock step,
/// as the threads of one block that share the permissions of the lane that runs the statement.
#[derive(Clone, Debug)]
pub struct VecC {
    pub slot: u32,
    pub name: String,
    pub lo: CE,
    pub hi: CE,
    pub body_pc: usize,
    pub next_pc: usize,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct BarrierC {
    pub id: u32,
    pub label: String,
    pub pre: Vec<CClause>,
    pub post: Vec<CClause>,
    pub span: Span,
    /// The locals other than `par` iterators that the barrier's own contract mentions, each
    /// with its first occurrence: the Viper encoding assumes they have one value in all threads
    /// of the group, which the `uniformity` lint checks (semantics.md §5.8).
    pub shared: Vec<SharedLocal>,
    /// The barrier's body, `[start, end)` in the method's code: run once, by one thread, when
    /// all have arrived, with the pooled preconditions and the resources of `invariants`.
    pub body: Option<(usize, usize)>,
    /// The `invariant` blocks the barrier names after `;` (their ids).
    pub invariants: Vec<u32>,
}

/// A local mentioned by a barrier contract (see [`BarrierC::shared`]).
#[derive(Clone, Debug)]
pub struct SharedLocal {
    pub slot: u32,
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct ArmC {
    pub label: Option<String>,
    pub iters: Vec<(u32, String, CE, CE)>,
    pub pre: Vec<CClause>,
    pub post: Vec<CClause>,
    pub body_pc: usize,
    pub span: Span,
    /// Per clause of `pre` / of the `par`'s `everywhere`: simple and reads no iterator, so it
    /// has the same value in every thread at entry (each thread's store is a copy of the
    /// parent's plus its iterators).
    pub pre_uniform: Vec<bool>,
    pub ev_uniform_pre: Vec<bool>,
    /// The same at exit for `post` / `everywhere`: additionally reads no local that the body
    /// assigns.
    pub post_uniform: Vec<bool>,
    pub ev_uniform_post: Vec<bool>,
}

#[derive(Clone, Debug)]
pub struct ParC {
    pub arms: Vec<ArmC>,
    pub region_pre: Vec<CClause>,
    pub region_post: Vec<CClause>,
    /// The enclosing method's `context_everywhere`, scaled into the thread contracts.
    pub everywhere: Vec<CClause>,
    pub next_pc: usize,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum Body {
    Code(Vec<Instr>),
    Expr(CE),
    Abstract,
}

#[derive(Clone, Debug)]
pub struct CMethod {
    pub name: String,
    pub class: u32,
    pub is_static: bool,
    pub is_pure: bool,
    pub is_ctor: bool,
    pub is_predicate: bool,
    pub params: Vec<(u32, String, Ty)>,
    /// `params[given_from..]` are the `given` (ghost) parameters.
    pub given_from: usize,
    /// The `yields` variables (slot, name, type): locals of the body; as an entry method's
    /// they are inputs too (VerCors leaves their initial values unconstrained, and contracts
    /// may state them), after the parameters.
    pub yields: Vec<(u32, String, Ty)>,
    pub ret: Ty,
    pub nslots: u32,
    pub pre: Vec<CClause>,
    pub post: Vec<CClause>,
    pub everywhere: Vec<CClause>,
    pub body: Body,
    pub contains_par: bool,
    pub calls: Vec<u32>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct CClass {
    pub name: String,
    /// (field-name id, name, type), in declaration order; the index is the field slot.
    pub fields: Vec<(u32, String, Ty)>,
    pub methods: BTreeMap<String, u32>,
    pub ctor: Option<u32>,
    /// `resource lock_invariant() = R;`: the predicate's id and `R`'s conjuncts.
    pub lock_inv: Option<(u32, Rc<Vec<CClause>>)>,
    /// The thread method `void run()`, for `fork` and `join`.
    pub run: Option<u32>,
}

impl CClass {
    pub fn field_slot(&self, name_id: u32) -> Option<u32> {
        self.fields.iter().position(|f| f.0 == name_id).map(|i| i as u32)
    }
}

#[derive(Clone, Debug, Default)]
pub struct CProgram {
    pub classes: Vec<CClass>,
    pub methods: Vec<CMethod>,
    pub field_names: Vec<String>,
    pub nbarriers: u32,
    pub ninvariants: u32,
    /// The token predicates `held`, `idle` and `running` (bodiless predicates of one object,
    /// declared by the compiler), when the program has a class.
    pub tokens: Option<Tokens>,
}

/// The ids of the token predicates (see [`CProgram::tokens`]).
#[derive(Clone, Copy, Debug)]
pub struct Tokens {
    pub held: u32,
    pub idle: u32,
    pub running: u32,
}

impl CProgram {
    pub fn method_by_qualified(&self, q: &str) -> Vec<u32> {
        let (cls, name) = match q.rsplit_once('.') {
            Some((c, n)) => (Some(c), n),
            None => (None, q),
        };
        self.methods
            .iter()
            .enumerate()
            .filter(|(_, m)| {
                m.name == name && cls.is_none_or(|c| self.classes[m.class as usize].name == c)
            })
            .map(|(i, _)| i as u32)
            .collect()
    }
    pub fn qualified(&self, m: u32) -> String {
        let m = &self.methods[m as usize];
        format!("{}.{}", self.classes[m.class as usize].name, m.name)
    }
}

struct Scope {
    names: Vec<(String, u32, Ty)>,
    marks: Vec<usize>,
    next: u32,
    max: u32,
}

impl Scope {
    fn new() -> Scope {
        Scope { names: Vec::new(), marks: Vec::new(), next: 0, max: 0 }
    }
    fn push(&mut self) {
        self.marks.push(self.names.len());
    }
    fn pop(&mut self) {
        // Slots are not reused: par bodies copy the parent store, and a reused slot could alias a
        // captured variable.
        if let Some(m) = self.marks.pop() {
            self.names.truncate(m);
        }
    }
    fn declare(&mut self, name: &str, ty: Ty) -> u32 {
        let s = self.next;
        self.next += 1;
        self.max = self.max.max(self.next);
        self.names.push((name.to_string(), s, ty));
        s
    }
    fn temp(&mut self) -> u32 {
        self.declare("$tmp", Ty::Other("tmp".into()))
    }
    fn lookup(&self, name: &str) -> Option<(u32, &Ty)> {
        self.names.iter().rev().find(|n| n.0 == name).map(|n| (n.1, &n.2))
    }
}

pub struct Compiler<'a> {
    prog: &'a Program,
    out: CProgram,
    errors: Vec<Diagnostic>,
    cur_class: u32,
    scope: Scope,
    code: Vec<Instr>,
    /// Labels of the enclosing `par` blocks (innermost last) and whether we are in a kernel.
    par_labels: Vec<Option<String>>,
    /// Slots of the iterators of the enclosing `par` arms.
    par_iters: Vec<u32>,
    /// The uniformity of each enclosing `par` arm's body, with its iterators' names: a barrier
    /// contract's local defined over the iterators is read through its definition by `verify`,
    /// so the uniformity lint leaves it alone.
    par_uniform: Vec<(Rc<analyze::uniform::Uniformity>, Vec<String>)>,
    everywhere: Vec<CClause>,
    /// The source conjunct of each `everywhere` clause (none for a shape a type implies).
    everywhere_ast: Vec<Option<Expr>>,
    cur_contains_par: bool,
    cur_calls: Vec<u32>,
    inv_names: Vec<(String, u32)>,
    /// The syntax tree of each method, by method id.
    asts: Vec<&'a Method>,
    /// Inline predicates being expanded (a recursive one is left a token).
    expanding: Vec<u32>,
    /// Labels, `goto`s and the constructs around the statement being compiled.
    jumps: jumps::Jumps,
}

impl CE {
    /// Call `f` on each direct sub-expression, in order.
    /// The conjuncts of `self` at `&&`/`**`, appended to `out` in order.
    pub fn conjuncts<'e>(&'e self, out: &mut Vec<&'e CE>) {
        match self {
            CE::Bin(BinOp::And | BinOp::Star, l, r, _) => {
                l.conjuncts(out);
                r.conjuncts(out);
            }
            _ => out.push(self),
        }
    }

    /// Does `self` read local slot `s`? (Conservative: through every sub-expression.)
    pub fn reads_local(&self, s: u32) -> bool {
        if let CE::Local(x) = self {
            return *x == s;
        }
        let mut found = false;
        self.for_each_sub(&mut |x| found |= x.reads_local(s));
        found
    }

    pub fn for_each_sub(&self, f: &mut dyn FnMut(&CE)) {
        match self {
            CE::Field(a, ..)
            | CE::Length(a, _)
            | CE::Not(a)
            | CE::Neg(a, _)
            | CE::Old(a)
            | CE::Head(a, _)
            | CE::Tail(a, _)
            | CE::PermOf(a, _) => f(a),
            CE::Ghost(_, v, _) => v.iter().for_each(f),
            CE::Comp { gens, cond, body, .. } => {
                for g in gens {
                    g.binder.lows.iter().chain(&g.binder.highs).for_each(&mut *f);
                    if let Some(s) = &g.source {
                        f(s);
                    }
                }
                if let Some(c) = cond {
                    f(c);
                }
                f(body);
            }
            CE::Index(a, b, _)
            | CE::Bin(_, a, b, _)
            | CE::Perm(a, b, _)
            | CE::ArrayShape(a, b)
            | CE::SeqRange(a, b)
            | CE::Let(_, a, b)
            | CE::Unfolding(a, b)
            | CE::Scale(a, b) => {
                f(a);
                f(b);
            }
            CE::Cond(a, b, c) | CE::PointsTo(a, b, c, _) | CE::SeqUpdate(a, b, c, _) => {
                f(a);
                f(b);
                f(c);
            }
            CE::MatrixShape(a, b, c) => {
                f(a);
                f(b);
                if let Some(c) = c {
                    f(c);
                }
            }
            CE::CallPure { recv, args, .. } | CE::Pred { recv, args, .. } => {
                if let Some(r) = recv {
                    f(r);
                }
                args.iter().for_each(f);
            }
            CE::Quant { cond, body, .. } => {
                if let Some(c) = cond {
                    f(c);
                }
                f(body);
            }
            CE::Sum { cond, body, .. } => {
                f(cond);
                f(body);
            }
            CE::SeqLit(v) => v.iter().for_each(f),
            CE::Slice(a, b, c, _) => {
                f(a);
                if let Some(b) = b {
                    f(b);
                }
                if let Some(c) = c {
                    f(c);
                }
            }
            CE::Int(_)
            | CE::Bool(_)
            | CE::Null
            | CE::Local(_)
            | CE::This
            | CE::Result
            | CE::Write
            | CE::Read
            | CE::NoPerm
            | CE::Const(_)
            | CE::Unsupported(..) => {}
        }
    }
}
