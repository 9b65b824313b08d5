//! The PVL syntax tree.
//!
//! An ordinary owned tree. Every node carries the [`Span`] of the text it was parsed from; nodes
//! built by a transformation carry [`Span::DUMMY`]. The tree is *not* lossless by itself: the
//! original text is, and edits are span replacements on it (see `crate::edit`). Comments are
//! therefore never stored here.
//!
//! Derived equality is structural because `Span` compares equal to every span.

pub use super::ast_comp::{Comprehension, Generator};
pub use super::ast_ops::{
    BinOp, Binding, Builtin, CollKind, CompoundOp, QuantKind, SpecKind, TriggerTag, UnOp,
};
use super::span::Span;
use num_bigint::BigInt;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

impl Ident {
    pub fn new(name: impl Into<String>, span: Span) -> Ident {
        Ident { name: name.into(), span }
    }
    pub fn synth(name: impl Into<String>) -> Ident {
        Ident::new(name, Span::DUMMY)
    }
    pub fn as_str(&self) -> &str {
        &self.name
    }
}

// ---------------------------------------------------------------------------------------------
// Program structure
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub items: Vec<Item>,
    /// v1 allows a trailing main block after the declarations.
    pub main: Option<Block>,
    pub span: Span,
    /// Derived data that analyses compute once per parse (see [`Memo`]).
    pub memo: Memo,
}

impl Program {
    /// Every method of the program in source order, with its class (`None` at the top level).
    pub fn methods(&self) -> impl Iterator<Item = (Option<&Class>, &Method)> {
        self.items.iter().flat_map(|item| {
            let (class, members, top): (_, &[Member], _) = match item {
                Item::Class(c) => (Some(c), &c.members, None),
                Item::Method(m) => (None, &[], Some(m)),
                Item::Field(_) | Item::Adt(_) | Item::Opaque(_) => (None, &[], None),
            };
            let own = members.iter().filter_map(|m| match m {
                Member::Method(m) => Some(m),
                Member::Field(_) => None,
            });
            own.chain(top).map(move |m| (class, m))
        })
    }
}

/// A value computed at most once from the node that holds it and never changed afterwards.
/// It is not part of the node's identity: clones start empty and recompute on demand, and it
/// never makes two nodes unequal. Holding it in the AST ties its lifetime to the parse it was
/// computed from, so it cannot go stale when the text is edited and parsed again.
///
/// The slot is type-erased so that the front end does not name the analyses that fill it (the
/// front end depends on nothing above it in the pipeline).
#[derive(Default)]
pub struct Memo(std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>);

impl Memo {
    /// The memoised value, computed by `f` on first use. `None` only if the slot already holds
    /// a value of another type (one memo serves one analysis).
    pub fn get_or_init<T: std::any::Any + Send + Sync>(&self, f: impl FnOnce() -> T) -> Option<&T> {
        self.0.get_or_init(|| Box::new(f())).downcast_ref::<T>()
    }
}

impl Clone for Memo {
    fn clone(&self) -> Self {
        Memo::default()
    }
}

impl PartialEq for Memo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Memo")
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Class(Class),
    Method(Method),
    Field(Field),
    /// v2 `adt Name { … }`: an algebraic data type (a Viper domain).
    Adt(Adt),
    /// `kernel`, `enum`, VeyMont declarations: kept as text, never analysed.
    Opaque(Opaque),
}

/// v2 `adt Name<T…> { pure R f(params); axiom e; … }`: uninterpreted functions over a new type,
/// constrained by axioms. Printed from its source text (it is never rewritten).
#[derive(Clone, Debug, PartialEq)]
pub struct Adt {
    pub name: Ident,
    pub type_params: Vec<Ident>,
    pub functions: Vec<AdtFunction>,
    pub axioms: Vec<Expr>,
    /// v2 `enum E { A, B }`: an ADT whose functions are its constants (`E.A`), pairwise distinct
    /// and the only values.
    pub is_enum: bool,
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AdtFunction {
    pub ret: Type,
    pub name: Ident,
    pub params: Vec<Param>,
    pub span: Span,
}

impl Item {
    pub fn span(&self) -> Span {
        match self {
            Item::Class(c) => c.span,
            Item::Method(m) => m.span,
            Item::Field(f) => f.span,
            Item::Adt(a) => a.span,
            Item::Opaque(o) => o.span,
        }
    }
}

/// The keyword of an [`Opaque`] statement that calls a function the (C/CUDA) file does not
/// declare; its text is the call.
pub const UNDECLARED_CALL: &str = "undeclared call";

/// The called name of an [`UNDECLARED_CALL`] opaque statement.
pub fn undeclared_callee(o: &Opaque) -> &str {
    o.text.split('(').next().unwrap_or_default().trim()
}

/// A construct recognised only far enough to find its end (pvl.md §7).
#[derive(Clone, Debug, PartialEq)]
pub struct Opaque {
    /// The keyword that introduced it, e.g. `kernel`, `lock`, `create`.
    pub keyword: String,
    /// The exact source text (compared structurally).
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Class {
    /// VerCors 2's class contract, written before `class` (`lock_invariant R;`).
    pub contract: Vec<Clause>,
    pub name: Ident,
    pub type_params: Vec<Ident>,
    pub members: Vec<Member>,
    pub span: Span,
}

impl Class {
    /// The lock invariant of a VerCors 2 class contract (its `lock_invariant` clauses, in
    /// order), whose lock is shared by `commit` rather than at the end of a constructor.
    pub fn contract_lock_invariant(&self) -> Vec<&Expr> {
        self.contract
            .iter()
            .filter(|c| c.kind == ClauseKind::LockInvariant)
            .filter_map(Clause::expr)
            .collect()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Member {
    Field(Field),
    Method(Method),
}

impl Member {
    pub fn span(&self) -> Span {
        match self {
            Member::Field(f) => f.span,
            Member::Method(m) => m.span,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub is_final: bool,
    pub ty: Type,
    pub names: Vec<Ident>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Modifier {
    Static,
    Pure,
    Inline,
    ThreadLocal,
    /// v2 `bip_annotation` (JavaBIP); the encoder refuses it.
    BipAnnotation,
}

impl Modifier {
    pub fn as_str(self) -> &'static str {
        match self {
            Modifier::Static => "static",
            Modifier::Pure => "pure",
            Modifier::Inline => "inline",
            Modifier::ThreadLocal => "thread_local",
            Modifier::BipAnnotation => "bip_annotation",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodKind {
    Method,
    /// v1 constructor: `Name(params) { … }` with Name the class name.
    CtorV1,
    /// v2 constructor: `constructor(params) { … }`.
    CtorV2,
    /// v2 thread body `run { … }`: the method `void run()` of a thread class.
    Run,
}

impl MethodKind {
    pub fn is_ctor(self) -> bool {
        matches!(self, MethodKind::CtorV1 | MethodKind::CtorV2)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Method {
    /// Annotations and contract clauses before the method (they may interleave).
    pub prefix: Prefix,
    pub modifiers: Vec<Modifier>,
    pub kind: MethodKind,
    /// `void` for constructors.
    pub ret: Type,
    pub name: Ident,
    pub type_params: Vec<Ident>,
    pub params: Vec<Param>,
    pub body: MethodBody,
    pub span: Span,
}

impl Method {
    pub fn has_modifier(&self, m: Modifier) -> bool {
        self.modifiers.contains(&m)
    }
    pub fn is_pure(&self) -> bool {
        self.has_modifier(Modifier::Pure)
    }
    /// A function: `pure`, or (VerCors 1) a method defined by an expression, `int f(int n) =
    /// e;`, which VerCors reads as a pure function with or without `pure`.
    pub fn is_function(&self) -> bool {
        !self.is_predicate()
            && (self.is_pure()
                || (matches!(self.body, MethodBody::Expr(_))
                    && !matches!(self.ret.kind, TypeKind::Void)))
    }
    /// A v2 operator method (`+`, `right+`).
    pub fn is_operator(&self) -> bool {
        self.name.name.ends_with('+')
    }
    pub fn is_predicate(&self) -> bool {
        matches!(self.ret.kind, TypeKind::Resource)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub ty: Type,
    pub name: Ident,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum MethodBody {
    Block(Block),
    /// `;`: abstract method or predicate.
    Abstract,
    /// `= expr;`: pure function or predicate body.
    Expr(Expr),
}

/// Annotations and contract clauses in front of a construct, in source order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Prefix {
    pub annotations: Vec<Annotation>,
    pub clauses: Vec<Clause>,
    /// Covers the whole prefix; empty (at the construct start) when there is no prefix.
    pub span: Span,
}

impl Prefix {
    pub fn is_empty(&self) -> bool {
        self.annotations.is_empty() && self.clauses.is_empty()
    }
    pub fn clauses_of(&self, kind: ClauseKind) -> impl Iterator<Item = &Clause> {
        self.clauses.iter().filter(move |c| c.kind == kind)
    }
}

// ---------------------------------------------------------------------------------------------
// Contracts
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClauseKind {
    Requires,
    Ensures,
    Context,
    ContextEverywhere,
    LoopInvariant,
    KernelInvariant,
    LockInvariant,
    /// `given T x;` ghost input parameter.
    Given,
    /// `yields T x;` ghost output parameter.
    Yields,
    Modifies,
    Accessible,
    Signals,
    Decreases,
}

impl ClauseKind {
    pub fn keyword(self) -> &'static str {
        match self {
            ClauseKind::Requires => "requires",
            ClauseKind::Ensures => "ensures",
            ClauseKind::Context => "context",
            ClauseKind::ContextEverywhere => "context_everywhere",
            ClauseKind::LoopInvariant => "loop_invariant",
            ClauseKind::KernelInvariant => "kernel_invariant",
            ClauseKind::LockInvariant => "lock_invariant",
            ClauseKind::Given => "given",
            ClauseKind::Yields => "yields",
            ClauseKind::Modifies => "modifies",
            ClauseKind::Accessible => "accessible",
            ClauseKind::Signals => "signals",
            ClauseKind::Decreases => "decreases",
        }
    }

    pub fn from_keyword(s: &str) -> Option<ClauseKind> {
        Some(match s {
            "requires" => ClauseKind::Requires,
            "ensures" => ClauseKind::Ensures,
            "context" => ClauseKind::Context,
            "context_everywhere" => ClauseKind::ContextEverywhere,
            "loop_invariant" => ClauseKind::LoopInvariant,
            "kernel_invariant" => ClauseKind::KernelInvariant,
            "lock_invariant" => ClauseKind::LockInvariant,
            "given" => ClauseKind::Given,
            "yields" => ClauseKind::Yields,
            "modifies" => ClauseKind::Modifies,
            "accessible" => ClauseKind::Accessible,
            "signals" => ClauseKind::Signals,
            "decreases" => ClauseKind::Decreases,
            _ => return None,
        })
    }

    /// Is this clause part of the precondition (`requires`, `context`, `context_everywhere`)?
    pub fn is_pre(self) -> bool {
        matches!(self, ClauseKind::Requires | ClauseKind::Context | ClauseKind::ContextEverywhere)
    }

    /// Is this clause part of the postcondition (`ensures`, `context`, `context_everywhere`)?
    pub fn is_post(self) -> bool {
        matches!(self, ClauseKind::Ensures | ClauseKind::Context | ClauseKind::ContextEverywhere)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Clause {
    pub kind: ClauseKind,
    pub body: ClauseBody,
    /// From the keyword to the `;` inclusive.
    pub span: Span,
}

impl Clause {
    /// The expression of an expression clause.
    pub fn expr(&self) -> Option<&Expr> {
        match &self.body {
            ClauseBody::Expr(e) => Some(e),
            ClauseBody::Signals(_, _, e) => Some(e),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ClauseBody {
    /// requires / ensures / context / context_everywhere / loop_invariant / kernel_invariant /
    /// lock_invariant.
    Expr(Expr),
    /// given / yields.
    Decl(Type, Ident),
    /// modifies / accessible / decreases (empty list: `decreases;`).
    List(Vec<Expr>),
    /// `decreases assume;`
    DecreasesAssume,
    /// `signals (T x) e;`
    Signals(Type, Ident, Expr),
}

// ---------------------------------------------------------------------------------------------
// gpuopt annotations
// ---------------------------------------------------------------------------------------------

/// A `gpuopt` annotation: `gpuopt WORD OPERAND… ;` (pvl.md §3.5).
///
/// The front end knows the shape of the form but not the optimizations: it keeps the operands
/// as tokens, and the optimization named by `keyword` reads them with its parameter schema
/// (transforms/registry.rs) through [`crate::OperandReader`].
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    /// The optimization word as written (`loop_unroll` or `unroll`, …). Empty when `gpuopt` is
    /// followed directly by the end of the annotation.
    pub keyword: Ident,
    /// The operand tokens, from after the word up to the end of the annotation.
    pub operands: Vec<AnnotToken>,
    /// The token that ends the operands: the `;` when `terminated`, else the token that stopped
    /// them (a keyword, a closing brace, the end of the file), which is not part of the
    /// annotation.
    pub end: Span,
    pub terminated: bool,
    /// From `gpuopt` to the `;` inclusive (to the last token when unterminated).
    pub span: Span,
}

/// One token of a `gpuopt` operand list.
#[derive(Clone, Debug, PartialEq)]
pub struct AnnotToken {
    pub text: String,
    pub span: Span,
    /// Whitespace or a comment precedes the token (a `(` after whitespace starts a new operand).
    pub spaced: bool,
}

impl Annotation {
    /// The span of the operands (empty, at the end token, when there are none).
    pub fn operands_span(&self) -> Span {
        match (self.operands.first(), self.operands.last()) {
            (Some(f), Some(l)) => f.span.to(l.span),
            _ => Span::new(self.end.start(), self.end.start()),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct Type {
    pub kind: TypeKind,
    pub span: Span,
}

impl Type {
    pub fn new(kind: TypeKind) -> Type {
        Type { kind, span: Span::DUMMY }
    }
    pub fn int() -> Type {
        Type::new(TypeKind::Int)
    }
    pub fn boolean() -> Type {
        Type::new(TypeKind::Boolean)
    }
    /// Number of array dimensions (`int[][]` → 2).
    pub fn array_dims(&self) -> usize {
        match &self.kind {
            TypeKind::Array(inner, _) => 1 + inner.array_dims(),
            _ => 0,
        }
    }
    /// The element type after stripping all array dimensions.
    pub fn base(&self) -> &Type {
        match &self.kind {
            TypeKind::Array(inner, _) => inner.base(),
            _ => self,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    Int,
    Boolean,
    /// v1's alias `bool`.
    Bool,
    Void,
    String,
    Resource,
    Process,
    Frac,
    ZFrac,
    Rational,
    Float32,
    Float64,
    Char,
    /// `seq<T>`, `set<T>`, `bag<T>`, `option<T>`, `loc<T>`, `pointer<T>`.
    Generic1(Generic1, Box<Type>),
    Map(Box<Type>, Box<Type>),
    Tuple(Box<Type>, Box<Type>),
    /// v2 `vector<T, N>` (the size is absent in a literal's type, `vector<T>{…}`).
    Vector(Box<Type>, Option<BigInt>),
    /// A class type, optionally with type arguments.
    Class(Ident, Vec<Type>),
    /// `T[]` or a sized `T[E]` (parameters and locals; the extent is a fact).
    Array(Box<Type>, Option<Box<Expr>>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Generic1 {
    Seq,
    Set,
    Bag,
    Option,
    Loc,
    Pointer,
}

impl Generic1 {
    pub fn as_str(self) -> &'static str {
        match self {
            Generic1::Seq => "seq",
            Generic1::Set => "set",
            Generic1::Bag => "bag",
            Generic1::Option => "option",
            Generic1::Loc => "loc",
            Generic1::Pointer => "pointer",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    /// From `{` to `}` inclusive.
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    /// For statements with a prefix (loops, par), the span starts at the prefix.
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Declarator {
    pub name: Ident,
    pub init: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    Block(Block),
    /// `T x = e, y;`
    Decl {
        ty: Type,
        vars: Vec<Declarator>,
    },
    /// `target = value;`
    Assign {
        target: Expr,
        value: Expr,
    },
    /// `x += e;` (v2)
    CompoundAssign {
        target: Expr,
        op: CompoundOp,
        value: Expr,
    },
    /// `x++;` / `x--;`
    IncDec {
        target: Expr,
        inc: bool,
    },
    /// An expression evaluated for its effect (a call).
    Expr(Expr),
    If {
        cond: Expr,
        then: Box<Stmt>,
        els: Option<Box<Stmt>>,
    },
    While(Loop),
    For(Loop),
    /// v2 `for (int i = lo .. hi) body`.
    RangedFor {
        prefix: Prefix,
        /// The `for` keyword.
        keyword: Span,
        ty: Type,
        var: Ident,
        lo: Expr,
        hi: Expr,
        body: Box<Stmt>,
    },
    Par(Par),
    /// v2 `parallel { … }` / `sequential { … }`.
    Parallel {
        sequential: bool,
        body: Vec<Stmt>,
    },
    Barrier(Barrier),
    /// `invariant name(res) { … }`
    Invariant {
        name: Ident,
        resource: Expr,
        body: Block,
    },
    /// `atomic(names) { … }`
    Atomic {
        names: Vec<Ident>,
        body: Block,
    },
    /// v1 vector block `vec (int j = lo .. hi) { … }`: the body runs for every `j` in lock step.
    Vec {
        iter: Iter,
        body: Block,
    },
    Return(Option<Expr>),
    Spec {
        kind: SpecKind,
        expr: Expr,
    },
    /// `ghost S`
    Ghost(Box<Stmt>),
    /// A `gpuopt` annotation in statement position that is not attached to a construct; the
    /// front checks report it (A0002). Attached annotations live in the construct's prefix.
    Annotation(Annotation),
    /// Recognised but opaque statement (pvl.md §7).
    Opaque(Opaque),
}

/// `while` and classic `for` loops.
#[derive(Clone, Debug, PartialEq)]
pub struct Loop {
    /// Annotations and loop invariants (v2: any clause) before the loop keyword.
    pub prefix: Prefix,
    /// `for` initialisers (empty for `while`).
    pub init: Vec<Stmt>,
    /// The guard; `None` for `for (;;)`.
    pub cond: Option<Expr>,
    /// `for` updates (empty for `while`).
    pub update: Vec<Stmt>,
    pub body: Box<Stmt>,
    /// Span of the `while`/`for` keyword.
    pub keyword: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Par {
    /// Annotations and the v1 region contract before `par`.
    pub prefix: Prefix,
    /// One arm, or several joined with `and`.
    pub arms: Vec<ParArm>,
    /// Span of the first `par` keyword.
    pub keyword: Span,
    /// A C loop with an iteration contract (`front::cuda::iteration`): its text is a `for` loop,
    /// which the span-based rewrites cannot treat as a `par`, so it is no optimization site.
    pub loop_form: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ParArm {
    pub label: Option<Ident>,
    pub iters: Vec<Iter>,
    /// A v1 wait list after `;` in the header, kept as text.
    pub wait: Option<Opaque>,
    /// The per-thread contract.
    pub contract: Vec<Clause>,
    pub body: Box<Stmt>,
    pub span: Span,
}

/// `int t = lo .. hi`
#[derive(Clone, Debug, PartialEq)]
pub struct Iter {
    pub ty: Type,
    pub name: Ident,
    pub lo: Expr,
    pub hi: Expr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Barrier {
    pub label: Ident,
    pub tags: Vec<Ident>,
    pub contract: Vec<Clause>,
    /// `true` for `barrier(L) { clauses }`; `false` for `barrier(L) clauses { body }`.
    pub contract_in_braces: bool,
    /// The block after the contract in the second form (usually empty).
    pub body: Option<Block>,
    pub keyword: Span,
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

/// What a call or `new` carries besides its arguments: v2 type arguments and ghost arguments.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct GhostArgs {
    /// v2 explicit type arguments, `f<int>(…)`, `new Box<int>(…)`.
    pub type_args: Vec<Type>,
    /// v1 `with { … }` block.
    pub with: Option<Block>,
    /// v1 `then { … }` block.
    pub then: Option<Block>,
    /// v2 `given { x = e, … }`.
    pub given: Vec<(Ident, Expr)>,
    /// v2 `yields { y = x, … }`.
    pub yields: Vec<(Ident, Ident)>,
}

impl GhostArgs {
    /// No ghost arguments (type arguments are not ghost arguments).
    pub fn is_empty(&self) -> bool {
        self.with.is_none()
            && self.then.is_none()
            && self.given.is_empty()
            && self.yields.is_empty()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Int(BigInt),
    Bool(bool),
    Null,
    This,
    /// `write`: permission 1.
    Write,
    /// `read`: an unspecified positive fraction.
    Read,
    /// `none`: permission 0.
    NoPerm,
    /// `empty` (v1 process algebra).
    Empty,
    /// `None` (option).
    NoneOpt,
    /// `*` as a wildcard value.
    Wildcard,
    /// `\result`
    Result,
    /// `current_thread`, `\current_thread`, `\ltid`, `\gtid`: kept by spelling.
    ThreadId(String),
    Name(Ident),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `e.name` (also `a.length`).
    Field(Box<Expr>, Ident),
    /// `e[i]`
    Index(Box<Expr>, Box<Expr>),
    /// `s[lo..hi]`, `s[..hi]`, `s[lo..]`
    Slice(Box<Expr>, Option<Box<Expr>>, Option<Box<Expr>>),
    /// `s[i -> v]`
    SeqUpdate(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A method or function call `f(x)`, `o.m(x)`; `null_safe` for v1 `o->m(x)` / v2 `o?.m(x)`.
    Call {
        recv: Option<Box<Expr>>,
        name: Ident,
        args: Vec<Expr>,
        ghost: Box<GhostArgs>,
        null_safe: bool,
    },
    Builtin(Builtin, Vec<Expr>),
    /// `\old(e)` or v2 `\old[label](e)`.
    Old(Box<Expr>, Option<Ident>),
    /// `|e|`
    Length(Box<Expr>),
    /// `(\forall T x; cond; body)`; with a ranged binding and no condition in the two-part form.
    Quant {
        kind: QuantKind,
        bindings: Vec<Binding>,
        cond: Option<Box<Expr>>,
        body: Box<Expr>,
    },
    /// `(\let T x = e; body)`
    Let {
        ty: Type,
        name: Ident,
        value: Box<Expr>,
        body: Box<Expr>,
    },
    /// `(\sum T x; cond; body)`
    Sum {
        ty: Type,
        name: Ident,
        cond: Box<Expr>,
        body: Box<Expr>,
    },
    /// `new C(args)`
    /// `new C(args)`, with v1 `with {…} then {…}` / v2 `given {…} yields {…}` ghost arguments.
    NewObject(Ident, Vec<Expr>, Box<GhostArgs>),
    /// `new T[e1][e2]…`
    NewArray(Type, Vec<Expr>),
    /// `seq<T>{…}`, `set<T>{…}`, `bag<T>{…}` (typed) or `[…]`, `{…}`, `b{…}` (untyped).
    Collection {
        kind: CollKind,
        elem_ty: Option<Type>,
        elems: Vec<Expr>,
    },
    /// `[t: T]`, `{t: T}`, `b{t: T}`: empty collection of a type.
    EmptyCollection(CollKind, Type),
    SetComprehension(Box<Comprehension>),
    /// `map<K,V>{k1 -> v1, …}`: a map literal (`map<K,V>{}` is the empty map); a later entry
    /// overrides an earlier one with the same key.
    MapLit {
        key_ty: Type,
        val_ty: Type,
        entries: Vec<(Expr, Expr)>,
    },
    /// `(a, b, …)`: a tuple (a map update `m ++ (k, v)`), two elements or more.
    Tuple(Vec<Expr>),
    /// v2 `tuple<A, B>{a, b}`: a typed pair (the type is `TypeKind::Tuple`).
    TupleLit(Type, Box<Expr>, Box<Expr>),
    /// `{lo .. hi}` (set) or v2 `[lo .. hi]` (seq).
    Range(CollKind, Box<Expr>, Box<Expr>),
    /// `{: e :}`, v2 `{:<<2: e :}`: a pattern for the quantifier it stands in.
    Trigger(TriggerTag, Box<Expr>),
    /// `unfolding p in e` / `\unfolding p \in e`
    Unfolding(Box<Expr>, Box<Expr>),
    /// `[π]R`
    Scale(Box<Expr>, Box<Expr>),
    /// v1 labelled expression `L: e`.
    Labelled(Ident, Box<Expr>),
    /// Anything kept as text (tuple literals, `?x`, rare backslash words, …).
    Opaque(Opaque),
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }

    /// A synthesised node (no source span).
    pub fn synth(kind: ExprKind) -> Expr {
        Expr { kind, span: Span::DUMMY }
    }

    pub fn int(v: i64) -> Expr {
        Expr::synth(ExprKind::Int(BigInt::from(v)))
    }

    pub fn name(n: &str) -> Expr {
        Expr::synth(ExprKind::Name(Ident::synth(n)))
    }

    pub fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr::synth(ExprKind::Binary(op, Box::new(l), Box::new(r)))
    }

    #[allow(clippy::should_implement_trait)] // a constructor, not an operator on self
    pub fn not(e: Expr) -> Expr {
        Expr::synth(ExprKind::Unary(UnOp::Not, Box::new(e)))
    }

    pub fn index(a: Expr, i: Expr) -> Expr {
        Expr::synth(ExprKind::Index(Box::new(a), Box::new(i)))
    }

    pub fn as_name(&self) -> Option<&str> {
        match &self.kind {
            ExprKind::Name(id) => Some(&id.name),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<&BigInt> {
        match &self.kind {
            ExprKind::Int(v) => Some(v),
            _ => None,
        }
    }

    /// Split at top-level `&&` and `**` into conjuncts (left to right).
    pub fn conjuncts(&self) -> Vec<&Expr> {
        let mut out = Vec::new();
        fn go<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
            match &e.kind {
                ExprKind::Binary(BinOp::And | BinOp::Star, l, r) => {
                    go(l, out);
                    go(r, out);
                }
                _ => out.push(e),
            }
        }
        go(self, &mut out);
        out
    }
}
