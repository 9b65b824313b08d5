//! Lowering of the PVL syntax tree to the interpreter's form (semantics.md §4.5).
//!
//! Names are resolved to frame slots once, method calls to method ids, and statements become a
//! flat instruction list per method with explicit join points, so that a warp can stop at a
//! barrier and resume later without an interpreter stack to save. Expressions stay trees (`CE`)
//! but never refer back to the AST.

use super::value::Amt;
use crate::diag::Diagnostic;
use crate::front::ast::*;
use crate::front::Span;
use num_traits::ToPrimitive;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Static type, as far as the interpreter needs it (defaults, allocation, input generation).
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Int,
    Bool,
    Array(Box<Ty>),
    Seq(Box<Ty>),
    /// `set<T>` or `bag<T>`: ghost values the interpreter does not compute with.
    Coll(Box<Ty>),
    Class(String),
    Void,
    Other(String),
}

impl Ty {
    /// Values of this type are ghost state (semantics.md §4.2): they cannot exist on a GPU.
    pub fn is_ghost(&self) -> bool {
        matches!(self, Ty::Seq(_) | Ty::Coll(_))
    }

    pub fn from_ast(t: &Type) -> Ty {
        match &t.kind {
            TypeKind::Int => Ty::Int,
            TypeKind::Boolean | TypeKind::Bool => Ty::Bool,
            TypeKind::Void => Ty::Void,
            TypeKind::Array(inner, _) => Ty::Array(Box::new(Ty::from_ast(inner))),
            TypeKind::Generic1(Generic1::Seq, inner) => Ty::Seq(Box::new(Ty::from_ast(inner))),
            TypeKind::Generic1(Generic1::Set | Generic1::Bag, inner) => {
                Ty::Coll(Box::new(Ty::from_ast(inner)))
            }
            TypeKind::Class(id, _) => Ty::Class(id.name.clone()),
            other => Ty::Other(format!("{other:?}")),
        }
    }
}

/// Compiled expression.
#[derive(Clone, Debug)]
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
    MatrixShape(Box<CE>, Box<CE>, Box<CE>),
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
    Unsupported(String, Span),
}

#[derive(Clone, Debug)]
pub struct Binder {
    pub slot: u32,
    pub name: String,
    pub lows: Vec<CE>,
    pub highs: Vec<CE>,
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
    /// End of a `par` body: the lanes are finished.
    EndThread,
    /// End of a method body.
    EndMethod,
    Unsupported(String, Span),
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
}

impl CClass {
    pub fn field_slot(&self, name_id: u32) -> Option<u32> {
        self.fields
            .iter()
            .position(|f| f.0 == name_id)
            .map(|i| i as u32)
    }
}

#[derive(Clone, Debug, Default)]
pub struct CProgram {
    pub classes: Vec<CClass>,
    pub methods: Vec<CMethod>,
    pub field_names: Vec<String>,
    pub nbarriers: u32,
    pub ninvariants: u32,
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

// ---------------------------------------------------------------------------------------------

struct Scope {
    names: Vec<(String, u32, Ty)>,
    marks: Vec<usize>,
    next: u32,
    max: u32,
}

impl Scope {
    fn new() -> Scope {
        Scope {
            names: Vec::new(),
            marks: Vec::new(),
            next: 0,
            max: 0,
        }
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
        self.names
            .iter()
            .rev()
            .find(|n| n.0 == name)
            .map(|n| (n.1, &n.2))
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
    everywhere: Vec<CClause>,
    cur_contains_par: bool,
    cur_calls: Vec<u32>,
    inv_names: Vec<(String, u32)>,
    /// The syntax tree of each method, by method id.
    asts: Vec<&'a Method>,
    /// Inline predicates being expanded (a recursive one is left a token).
    expanding: Vec<u32>,
}

/// Lower a parsed program. Unsupported constructs are compiled to `Unsupported` nodes and only
/// fail when executed, so that other methods of the file still run; structural errors (unknown
/// names, misplaced barriers) are returned.
pub fn compile(prog: &Program) -> Result<CProgram, Vec<Diagnostic>> {
    let mut c = Compiler {
        prog,
        out: CProgram::default(),
        errors: Vec::new(),
        cur_class: 0,
        scope: Scope::new(),
        code: Vec::new(),
        par_labels: Vec::new(),
        par_iters: Vec::new(),
        everywhere: Vec::new(),
        cur_contains_par: false,
        cur_calls: Vec::new(),
        inv_names: Vec::new(),
        asts: Vec::new(),
        expanding: Vec::new(),
    };
    c.declare_all();
    c.compile_all();
    if c.errors.is_empty() {
        // Transitive `contains_par` for entry selection.
        let n = c.out.methods.len();
        loop {
            let mut changed = false;
            for i in 0..n {
                if !c.out.methods[i].contains_par {
                    let calls = c.out.methods[i].calls.clone();
                    if calls
                        .iter()
                        .any(|&k| c.out.methods[k as usize].contains_par)
                    {
                        c.out.methods[i].contains_par = true;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        Ok(c.out)
    } else {
        Err(c.errors)
    }
}

fn class_items(prog: &Program) -> Vec<(&Ident, Vec<&Member>)> {
    let mut v = Vec::new();
    for it in &prog.items {
        if let Item::Class(c) = it {
            v.push((&c.name, c.members.iter().collect()));
        }
    }
    v
}

impl<'a> Compiler<'a> {
    fn field_id(&mut self, name: &str) -> u32 {
        if let Some(i) = self.out.field_names.iter().position(|n| n == name) {
            return i as u32;
        }
        self.out.field_names.push(name.to_string());
        (self.out.field_names.len() - 1) as u32
    }

    /// The values a call `e` of method `m` passes for `m`'s `given` parameters, in their
    /// order: from v2 `given { x = e }` or v1 `with { x = e; }`; `null` for one not passed.
    fn given_args(&mut self, m: u32, e: &Expr, pre: &mut Option<&mut Vec<Instr>>) -> Vec<CE> {
        let Some(md) = self.asts.get(m as usize).copied() else {
            return Vec::new();
        };
        let ExprKind::Call { ghost, .. } = &e.kind else {
            return Vec::new();
        };
        let mut passed: Vec<(&str, &Expr)> = ghost
            .given
            .iter()
            .map(|(id, x)| (id.name.as_str(), x))
            .collect();
        if let Some(b) = &ghost.with {
            for st in &b.stmts {
                if let StmtKind::Assign { target, value } = &st.kind {
                    if let ExprKind::Name(id) = &target.kind {
                        passed.push((id.name.as_str(), value));
                    }
                }
            }
        }
        let mut out = Vec::new();
        for c in &md.prefix.clauses {
            if let (ClauseKind::Given, ClauseBody::Decl(_, n)) = (c.kind, &c.body) {
                // The last assignment to a name wins, as in a `with` block.
                match passed.iter().rev().find(|(k, _)| *k == n.name) {
                    Some((_, x)) => out.push(self.expr(x, pre)),
                    None => out.push(CE::Null),
                }
            }
        }
        out
    }

    /// For a call `e` of `m`: which caller local receives which of `m`'s `yields` variables,
    /// from v1 `then { x = y; }` or v2 `yields { x = y }`. The callee's slots are known from
    /// its declaration: parameters, then `given` ones, then `yields` ones, in order (see
    /// `method`). Names that resolve to nothing are left out (reported where they are used).
    fn yield_bindings(&self, m: u32, e: &Expr) -> Vec<(u32, u32)> {
        let (Some(md), ExprKind::Call { ghost, .. }) = (self.asts.get(m as usize), &e.kind) else {
            return Vec::new();
        };
        let decl = |k: ClauseKind| {
            md.prefix
                .clauses
                .iter()
                .filter_map(move |c| match (&c.body, c.kind == k) {
                    (ClauseBody::Decl(_, n), true) => Some(n.name.as_str()),
                    _ => None,
                })
        };
        let base = md.params.len() + decl(ClauseKind::Given).count();
        let callee_slot = |name: &str| {
            decl(ClauseKind::Yields)
                .position(|n| n == name)
                .map(|k| (base + k) as u32)
        };
        let mut pairs: Vec<(&str, &str)> = ghost
            .yields
            .iter()
            .map(|(x, y)| (x.name.as_str(), y.name.as_str()))
            .collect();
        if let Some(b) = &ghost.then {
            for st in &b.stmts {
                if let StmtKind::Assign { target, value } = &st.kind {
                    if let (ExprKind::Name(x), ExprKind::Name(y)) = (&target.kind, &value.kind) {
                        pairs.push((x.name.as_str(), y.name.as_str()));
                    }
                }
            }
        }
        pairs
            .into_iter()
            .filter_map(|(x, y)| Some((self.scope.lookup(x)?.0, callee_slot(y)?)))
            .collect()
    }

    /// The body of the `inline` predicate `m` applied to `args` (on the current receiver),
    /// as `let`s binding fresh slots to the arguments around the body: VerCors expands an
    /// inline predicate where it is used, so its permissions move like written-out ones.
    /// `None` for a predicate that is not inline, has no body, or is being expanded already.
    fn inline_predicate(&mut self, m: u32, args: &[CE]) -> Option<CE> {
        let md = *self.asts.get(m as usize)?;
        let MethodBody::Expr(body) = &md.body else {
            return None;
        };
        if !md.has_modifier(Modifier::Inline)
            || self.expanding.contains(&m)
            || md.params.len() != args.len()
        {
            return None;
        }
        self.expanding.push(m);
        self.scope.push();
        let slots: Vec<u32> = md
            .params
            .iter()
            .map(|p| self.scope.declare(&p.name.name, Ty::from_ast(&p.ty)))
            .collect();
        let inner = self.expr(body, &mut None);
        self.scope.pop();
        self.expanding.pop();
        let mut e = inner;
        for (slot, arg) in slots.into_iter().zip(args.iter()).rev() {
            e = CE::Let(slot, Box::new(arg.clone()), Box::new(e));
        }
        Some(e)
    }

    fn declare_all(&mut self) {
        let prog = self.prog;
        let mut toplevel: Vec<&Method> = Vec::new();
        for it in &prog.items {
            if let Item::Method(m) = it {
                toplevel.push(m);
            }
        }
        let classes = class_items(prog);
        for (ci, (name, members)) in classes.iter().enumerate() {
            let mut fields = Vec::new();
            let mut methods = BTreeMap::new();
            let mut ctor = None;
            for m in members.iter() {
                match m {
                    Member::Field(f) => {
                        for n in &f.names {
                            let id = self.field_id(&n.name);
                            fields.push((id, n.name.clone(), Ty::from_ast(&f.ty)));
                        }
                    }
                    Member::Method(md) => {
                        let mid = self.out.methods.len() as u32;
                        let is_ctor = md.kind != MethodKind::Method;
                        if is_ctor {
                            ctor = Some(mid);
                        }
                        methods.insert(md.name.name.clone(), mid);
                        self.out.methods.push(self.stub(md, ci as u32, is_ctor));
                        self.asts.push(md);
                    }
                }
            }
            self.out.classes.push(CClass {
                name: name.name.clone(),
                fields,
                methods,
                ctor,
            });
        }
        if !toplevel.is_empty() {
            let ci = self.out.classes.len() as u32;
            let mut methods = BTreeMap::new();
            for md in &toplevel {
                let mid = self.out.methods.len() as u32;
                methods.insert(md.name.name.clone(), mid);
                self.out.methods.push(self.stub(md, ci, false));
                self.asts.push(md);
            }
            self.out.classes.push(CClass {
                name: "$Main".into(),
                fields: Vec::new(),
                methods,
                ctor: None,
            });
        }
    }

    fn stub(&self, md: &Method, class: u32, is_ctor: bool) -> CMethod {
        CMethod {
            name: md.name.name.clone(),
            class,
            is_static: md.has_modifier(Modifier::Static),
            is_pure: md.is_pure(),
            is_ctor,
            is_predicate: md.is_predicate(),
            params: Vec::new(),
            given_from: 0,
            ret: Ty::from_ast(&md.ret),
            nslots: 0,
            pre: Vec::new(),
            post: Vec::new(),
            everywhere: Vec::new(),
            body: Body::Abstract,
            contains_par: false,
            calls: Vec::new(),
            span: md.span,
        }
    }

    fn compile_all(&mut self) {
        let prog = self.prog;
        let mut list: Vec<(u32, &Method)> = Vec::new();
        let mut ci = 0u32;
        for it in &prog.items {
            if let Item::Class(c) = it {
                for m in &c.members {
                    if let Member::Method(md) = m {
                        list.push((ci, md));
                    }
                }
                ci += 1;
            }
        }
        for it in &prog.items {
            if let Item::Method(md) = it {
                list.push((ci, md));
            }
        }
        for (i, (ci, md)) in list.into_iter().enumerate() {
            self.cur_class = ci;
            self.compile_method(i as u32, md);
        }
    }

    fn compile_method(&mut self, id: u32, md: &Method) {
        self.scope = Scope::new();
        self.code = Vec::new();
        self.par_labels.clear();
        self.cur_contains_par = false;
        self.cur_calls.clear();
        let mut params = Vec::new();
        for p in &md.params {
            let ty = Ty::from_ast(&p.ty);
            let s = self.scope.declare(&p.name.name, ty.clone());
            params.push((s, p.name.name.clone(), ty));
        }
        let given_from = params.len();
        // given/yields ghost parameters: given ones become extra (ghost) parameters; yields
        // ones are locals of the body (what it yields is not passed back to the caller).
        for c in &md.prefix.clauses {
            if let (ClauseKind::Given, ClauseBody::Decl(t, n)) = (c.kind, &c.body) {
                let ty = Ty::from_ast(t);
                let s = self.scope.declare(&n.name, ty.clone());
                params.push((s, n.name.clone(), ty));
            }
        }
        for c in &md.prefix.clauses {
            if let (ClauseKind::Yields, ClauseBody::Decl(t, n)) = (c.kind, &c.body) {
                self.scope.declare(&n.name, Ty::from_ast(t));
            }
        }
        let mut everywhere = Vec::new();
        let contract = md.prefix.clauses.iter().filter(|c| {
            matches!(
                c.kind,
                ClauseKind::Requires
                    | ClauseKind::Ensures
                    | ClauseKind::Context
                    | ClauseKind::ContextEverywhere
            )
        });
        let (pre, post) = self.pre_post(contract, |_, c, cl| {
            if c.kind == ClauseKind::ContextEverywhere {
                everywhere.extend(cl.iter().cloned());
            }
        });
        self.everywhere = everywhere.clone();
        let body = match &md.body {
            MethodBody::Abstract => Body::Abstract,
            MethodBody::Expr(e) => Body::Expr(self.expr(e, &mut None)),
            MethodBody::Block(b) => {
                self.block(b, false);
                self.code.push(Instr::EndMethod);
                mark_simple(&mut self.code);
                Body::Code(std::mem::take(&mut self.code))
            }
        };
        let m = &mut self.out.methods[id as usize];
        m.params = params;
        m.given_from = given_from;
        m.pre = pre;
        m.post = post;
        m.everywhere = everywhere;
        m.body = body;
        m.nslots = self.scope.max;
        m.contains_par = self.cur_contains_par;
        m.calls = std::mem::take(&mut self.cur_calls);
    }

    /// The compiled pre- and postcondition clauses of `contract` (`context` ones are both);
    /// `each` sees every clause with an expression and its compiled conjuncts first.
    fn pre_post<'c>(
        &mut self,
        contract: impl IntoIterator<Item = &'c Clause>,
        mut each: impl FnMut(&mut Self, &'c Clause, &[CClause]),
    ) -> (Vec<CClause>, Vec<CClause>) {
        let (mut pre, mut post) = (Vec::new(), Vec::new());
        for c in contract {
            let Some(e) = c.expr() else { continue };
            let cl = self.clauses(e);
            each(self, c, &cl);
            if c.kind.is_pre() {
                pre.extend(cl.iter().cloned());
            }
            if c.kind.is_post() {
                post.extend(cl);
            }
        }
        (pre, post)
    }

    /// Split an assertion at top-level `&&`/`**` into conjuncts.
    fn clauses(&mut self, e: &Expr) -> Vec<CClause> {
        e.conjuncts()
            .into_iter()
            .map(|c| {
                let ce = self.expr(c, &mut None);
                let pure = !has_resource(&ce);
                CClause {
                    pure,
                    simple: pure && is_simple(&ce),
                    leaf: PermLeaf::of(&ce),
                    e: ce,
                    span: c.span,
                }
            })
            .collect()
    }

    fn block(&mut self, b: &Block, ghost: bool) {
        self.scope.push();
        for s in &b.stmts {
            self.stmt(s, ghost);
        }
        self.scope.pop();
    }

    fn pc(&self) -> usize {
        self.code.len()
    }

    fn target(&mut self, e: &Expr, pre: &mut Option<&mut Vec<Instr>>) -> Option<Target> {
        match &e.kind {
            ExprKind::Name(id) => {
                if let Some((s, _)) = self.scope.lookup(&id.name) {
                    return Some(Target::Local(s));
                }
                let fid = self.field_id(&id.name);
                Some(Target::Field(CE::This, fid))
            }
            ExprKind::Field(obj, f) => {
                let o = self.expr(obj, pre);
                let fid = self.field_id(&f.name);
                Some(Target::Field(o, fid))
            }
            ExprKind::Index(a, i) => {
                let a = self.expr(a, pre);
                let i = self.expr(i, pre);
                Some(Target::Index(a, i))
            }
            _ => None,
        }
    }

    fn target_read(t: &Target, span: Span) -> CE {
        match t {
            Target::Local(s) => CE::Local(*s),
            Target::Field(o, f) => CE::Field(Box::new(o.clone()), *f, span),
            Target::Index(a, i) => CE::Index(Box::new(a.clone()), Box::new(i.clone()), span),
        }
    }

    /// `es` compiled in order, the instructions their calls need emitted first.
    fn hoisted_exprs(&mut self, es: &[Expr]) -> Vec<CE> {
        let mut pre = Vec::new();
        let out = es
            .iter()
            .map(|e| self.expr(e, &mut Some(&mut pre)))
            .collect();
        self.code.extend(pre);
        out
    }

    /// Assignment of `value` (an AST expression) to `target`, with calls and allocations as
    /// their own instructions.
    fn assign(&mut self, target: Target, value: &Expr, span: Span, ghost: bool) {
        match &value.kind {
            ExprKind::NewArray(t, dims) => {
                let d = self.hoisted_exprs(dims);
                self.code.push(Instr::Alloc {
                    target,
                    elem: Ty::from_ast(t),
                    dims: d,
                    span,
                });
            }
            ExprKind::NewObject(c, args) => {
                let a = self.hoisted_exprs(args);
                match self.out.classes.iter().position(|k| k.name == c.name) {
                    Some(ci) => {
                        let ctor = self.out.classes[ci].ctor;
                        if let Some(k) = ctor {
                            self.cur_calls.push(k);
                        }
                        self.code.push(Instr::NewObj {
                            target,
                            class: ci as u32,
                            ctor,
                            args: a,
                            span,
                        });
                    }
                    None => self.code.push(Instr::Unsupported(
                        format!("unknown class `{}`", c.name),
                        span,
                    )),
                }
            }
            ExprKind::Call { .. } if self.nonpure_call(value).is_some() => {
                self.call_stmt(Some(target), value, span);
            }
            _ => {
                let mut pre = Vec::new();
                let v = self.expr(value, &mut Some(&mut pre));
                self.code.extend(pre);
                self.code.push(Instr::Assign {
                    simple: false,
                    target,
                    value: v,
                    span,
                    ghost,
                });
            }
        }
    }

    fn resolve_method(&self, recv: Option<&Expr>, name: &str) -> Option<u32> {
        let local = || {
            self.out.classes[self.cur_class as usize]
                .methods
                .get(name)
                .copied()
        };
        match recv.map(|r| &r.kind) {
            None | Some(ExprKind::This) => local().or_else(|| self.global_method(name)),
            Some(ExprKind::Name(id)) => {
                if let Some((_, Ty::Class(c))) = self.scope.lookup(&id.name) {
                    if let Some(k) = self.out.classes.iter().find(|k| &k.name == c) {
                        return k.methods.get(name).copied();
                    }
                }
                if let Some(k) = self.out.classes.iter().find(|k| k.name == id.name) {
                    return k.methods.get(name).copied();
                }
                self.global_method(name)
            }
            _ => self.global_method(name),
        }
    }

    fn global_method(&self, name: &str) -> Option<u32> {
        let v: Vec<u32> = self
            .out
            .methods
            .iter()
            .enumerate()
            .filter(|(_, m)| m.name == name)
            .map(|(i, _)| i as u32)
            .collect();
        if v.len() == 1 {
            Some(v[0])
        } else {
            None
        }
    }

    fn nonpure_call(&self, e: &Expr) -> Option<u32> {
        if let ExprKind::Call { recv, name, .. } = &e.kind {
            let m = self.resolve_method(recv.as_deref(), &name.name)?;
            let md = &self.out.methods[m as usize];
            if !md.is_pure && !md.is_predicate {
                return Some(m);
            }
        }
        None
    }

    fn call_stmt(&mut self, target: Option<Target>, e: &Expr, span: Span) {
        let ExprKind::Call {
            recv, name, args, ..
        } = &e.kind
        else {
            return;
        };
        let Some(m) = self.resolve_method(recv.as_deref(), &name.name) else {
            self.code.push(Instr::Unsupported(
                format!("unknown method `{}`", name.name),
                span,
            ));
            return;
        };
        let mut pre = Vec::new();
        let r = match recv.as_deref() {
            Some(r) if !self.is_class_name(r) => Some(self.expr(r, &mut Some(&mut pre))),
            _ => None,
        };
        let mut a: Vec<CE> = args
            .iter()
            .map(|x| self.expr(x, &mut Some(&mut pre)))
            .collect();
        a.extend(self.given_args(m, e, &mut Some(&mut pre)));
        let yields = self.yield_bindings(m, e);
        self.code.extend(pre);
        self.cur_calls.push(m);
        self.code.push(Instr::Call {
            target,
            method: m,
            recv: r,
            args: a,
            yields,
            span,
        });
    }

    fn is_class_name(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Name(id) => {
                self.scope.lookup(&id.name).is_none()
                    && self.out.classes.iter().any(|k| k.name == id.name)
            }
            _ => false,
        }
    }

    fn loop_invariants(&mut self, prefix: &Prefix) -> Rc<Vec<CClause>> {
        let mut v = Vec::new();
        for c in &prefix.clauses {
            if matches!(c.kind, ClauseKind::LoopInvariant | ClauseKind::Context) {
                if let Some(e) = c.expr() {
                    v.extend(self.clauses(e));
                }
            }
        }
        v.extend(self.propagated_everywhere());
        Rc::new(v)
    }

    /// `context_everywhere` as added to loop invariants and barrier contracts: everything at
    /// host level, only the pure part inside a kernel (the threads hold scaled permissions).
    fn propagated_everywhere(&self) -> Vec<CClause> {
        let in_kernel = !self.par_labels.is_empty();
        self.everywhere
            .iter()
            .filter(|c| c.pure || !in_kernel)
            .cloned()
            .collect()
    }

    fn stmt(&mut self, s: &Stmt, ghost: bool) {
        let span = s.span;
        match &s.kind {
            StmtKind::Block(b) => self.block(b, ghost),
            StmtKind::Decl { ty, vars } => {
                let t = Ty::from_ast(ty);
                for d in vars {
                    let slot = self.scope.declare(&d.name.name, t.clone());
                    match &d.init {
                        Some(init) => self.assign(Target::Local(slot), init, d.span, ghost),
                        None => {
                            let v = default_value(&t);
                            self.code.push(Instr::Assign {
                                simple: false,
                                target: Target::Local(slot),
                                value: v,
                                span: d.span,
                                ghost: true,
                            });
                        }
                    }
                }
            }
            StmtKind::Assign { target, value } => {
                let mut pre = Vec::new();
                match self.target(target, &mut Some(&mut pre)) {
                    Some(t) => {
                        self.code.extend(pre);
                        self.assign(t, value, span, ghost)
                    }
                    None => self
                        .code
                        .push(Instr::Unsupported("assignment target".into(), target.span)),
                }
            }
            StmtKind::CompoundAssign { target, op, value } => {
                let mut pre = Vec::new();
                let Some(t) = self.target(target, &mut Some(&mut pre)) else {
                    self.code
                        .push(Instr::Unsupported("assignment target".into(), target.span));
                    return;
                };
                let v = self.expr(value, &mut Some(&mut pre));
                self.code.extend(pre);
                let cur = Self::target_read(&t, target.span);
                self.code.push(Instr::Assign {
                    simple: false,
                    target: t,
                    value: CE::Bin(op.bin_op(), Box::new(cur), Box::new(v), span),
                    span,
                    ghost,
                });
            }
            StmtKind::IncDec { target, inc } => {
                let mut pre = Vec::new();
                let Some(t) = self.target(target, &mut Some(&mut pre)) else {
                    self.code
                        .push(Instr::Unsupported("increment target".into(), target.span));
                    return;
                };
                self.code.extend(pre);
                let cur = Self::target_read(&t, target.span);
                let op = if *inc { BinOp::Add } else { BinOp::Sub };
                self.code.push(Instr::Assign {
                    simple: false,
                    target: t,
                    value: CE::Bin(op, Box::new(cur), Box::new(CE::Int(1)), span),
                    span,
                    ghost,
                });
            }
            StmtKind::Expr(e) => {
                if self.nonpure_call(e).is_some() {
                    self.call_stmt(None, e, span);
                } else if let ExprKind::NewObject(..) = &e.kind {
                    let t = self.scope.temp();
                    self.assign(Target::Local(t), e, span, ghost);
                } else {
                    // A pure expression statement: evaluate for its checks only.
                    let t = self.scope.temp();
                    self.assign(Target::Local(t), e, span, true);
                }
            }
            StmtKind::If { cond, then, els } => {
                let mut pre = Vec::new();
                let c = self.expr(cond, &mut Some(&mut pre));
                self.code.extend(pre);
                let if_pc = self.pc();
                self.code.push(Instr::If {
                    simple: false,
                    cond: c,
                    else_pc: 0,
                    span: cond.span,
                });
                self.scope.push();
                self.stmt(then, ghost);
                self.scope.pop();
                let else_instr = self.pc();
                self.code.push(Instr::Else { end_pc: 0 });
                let else_pc = self.pc();
                if let Some(e) = els {
                    self.scope.push();
                    self.stmt(e, ghost);
                    self.scope.pop();
                }
                let end = self.pc();
                self.code.push(Instr::EndIf);
                if let Instr::If { else_pc: ep, .. } = &mut self.code[if_pc] {
                    *ep = else_pc;
                }
                if let Instr::Else { end_pc } = &mut self.code[else_instr] {
                    *end_pc = end;
                }
            }
            StmtKind::While(l) | StmtKind::For(l) => {
                self.scope.push();
                for i in &l.init {
                    self.stmt(i, ghost);
                }
                let inv = self.loop_invariants(&l.prefix);
                let cond = l.cond.as_ref().map(|c| self.expr(c, &mut None));
                self.emit_loop(inv, cond, l.keyword, |me| {
                    me.scope.push();
                    me.stmt(&l.body, ghost);
                    me.scope.pop();
                    for u in &l.update {
                        me.stmt(u, ghost);
                    }
                });
                self.scope.pop();
            }
            StmtKind::RangedFor {
                prefix,
                ty,
                var,
                lo,
                hi,
                body,
                ..
            } => {
                self.scope.push();
                let slot = self.scope.declare(&var.name, Ty::from_ast(ty));
                let lo_c = self.expr(lo, &mut None);
                self.code.push(Instr::Assign {
                    simple: false,
                    target: Target::Local(slot),
                    value: lo_c,
                    span: var.span,
                    ghost,
                });
                let hi_c = self.expr(hi, &mut None);
                let inv = self.loop_invariants(prefix);
                let cond = CE::Bin(
                    BinOp::Lt,
                    Box::new(CE::Local(slot)),
                    Box::new(hi_c),
                    var.span,
                );
                self.emit_loop(inv, Some(cond), var.span, |me| {
                    me.scope.push();
                    me.stmt(body, ghost);
                    me.scope.pop();
                    me.code.push(Instr::Assign {
                        simple: false,
                        target: Target::Local(slot),
                        value: CE::Bin(
                            BinOp::Add,
                            Box::new(CE::Local(slot)),
                            Box::new(CE::Int(1)),
                            var.span,
                        ),
                        span: var.span,
                        ghost,
                    });
                });
                self.scope.pop();
            }
            StmtKind::Par(p) => self.par(p, span),
            StmtKind::Parallel { sequential, body } => {
                if *sequential {
                    for s in body {
                        self.stmt(s, ghost);
                    }
                } else {
                    // A v2 `parallel { par…; par…; }` is one `and`-launch.
                    let mut arms = Vec::new();
                    for s in body {
                        if let StmtKind::Par(p) = &s.kind {
                            arms.extend(p.arms.iter().cloned());
                        }
                    }
                    let p = Par {
                        prefix: Prefix::default(),
                        arms,
                        keyword: span,
                    };
                    self.par(&p, span);
                }
            }
            StmtKind::Barrier(b) => self.barrier(b),
            StmtKind::Return(v) => {
                let mut pre = Vec::new();
                let val = v.as_ref().map(|e| {
                    if self.nonpure_call(e).is_some() {
                        let t = self.scope.temp();
                        self.call_stmt(Some(Target::Local(t)), e, e.span);
                        CE::Local(t)
                    } else {
                        self.expr(e, &mut Some(&mut pre))
                    }
                });
                self.code.extend(pre);
                self.code.push(Instr::Return { value: val, span });
            }
            StmtKind::Spec { kind, expr } => match kind {
                SpecKind::Assert | SpecKind::Assume | SpecKind::Inhale | SpecKind::Exhale => {
                    let c = self.clauses(expr);
                    self.code.push(match kind {
                        SpecKind::Assert => Instr::Assert(c),
                        SpecKind::Assume => Instr::Assume(c),
                        SpecKind::Inhale => Instr::Inhale(c),
                        _ => Instr::Exhale(c),
                    });
                }
                SpecKind::Fold | SpecKind::Unfold => {
                    let e = self.expr(expr, &mut None);
                    self.code.push(if *kind == SpecKind::Fold {
                        Instr::Fold(e, span)
                    } else {
                        Instr::Unfold(e, span)
                    });
                }
                SpecKind::Witness => {}
                other => self
                    .code
                    .push(Instr::Unsupported(format!("`{}`", other.keyword()), span)),
            },
            StmtKind::Ghost(inner) => self.stmt(inner, true),
            StmtKind::Annotation(_) => {}
            StmtKind::Invariant {
                name,
                resource,
                body,
            } => {
                let id = self.out.ninvariants;
                self.out.ninvariants += 1;
                let res = Rc::new(self.clauses(resource));
                self.code.push(Instr::InvEnter {
                    id,
                    res,
                    span: name.span,
                });
                self.inv_names.push((name.name.clone(), id));
                self.block(body, ghost);
                self.inv_names.pop();
                self.code.push(Instr::InvExit {
                    id,
                    span: name.span,
                });
            }
            StmtKind::Atomic { names, body } => {
                let inv = names.first().and_then(|n| {
                    self.inv_names
                        .iter()
                        .rev()
                        .find(|(k, _)| *k == n.name)
                        .map(|(_, id)| *id)
                });
                let begin = self.pc();
                self.code.push(Instr::AtomicBegin {
                    inv,
                    end_pc: 0,
                    span,
                });
                self.block(body, ghost);
                let end = self.pc();
                self.code.push(Instr::AtomicEnd);
                if let Instr::AtomicBegin { end_pc, .. } = &mut self.code[begin] {
                    *end_pc = end;
                }
            }
            StmtKind::Opaque(o) => {
                if o.keyword == "label" {
                    return;
                }
                self.code.push(Instr::Unsupported(
                    format!("`{}` statement", o.keyword),
                    span,
                ))
            }
        }
    }

    fn emit_loop(
        &mut self,
        inv: Rc<Vec<CClause>>,
        cond: Option<CE>,
        span: Span,
        body: impl FnOnce(&mut Self),
    ) {
        self.code.push(Instr::LoopEnter {
            inv: inv.clone(),
            span,
        });
        let head = self.pc();
        self.code.push(Instr::LoopHead {
            simple: false,
            cond,
            exit_pc: 0,
            span,
        });
        body(self);
        self.code.push(Instr::LoopBack {
            head_pc: head,
            inv,
            span,
        });
        let exit = self.pc();
        if let Instr::LoopHead { exit_pc, .. } = &mut self.code[head] {
            *exit_pc = exit;
        }
    }

    fn par(&mut self, p: &Par, span: Span) {
        self.cur_contains_par = true;
        let (region_pre, region_post) = self.pre_post(&p.prefix.clauses, |_, _, _| {});
        let par_pc = self.pc();
        self.code.push(Instr::EndThread); // placeholder, replaced below
        let mut arms = Vec::new();
        for a in &p.arms {
            self.scope.push();
            let mut iters = Vec::new();
            for it in &a.iters {
                let lo = self.expr(&it.lo, &mut None);
                let hi = self.expr(&it.hi, &mut None);
                let s = self.scope.declare(&it.name.name, Ty::Int);
                iters.push((s, it.name.name.clone(), lo, hi));
            }
            let (pre, post) = self.pre_post(&a.contract, |_, _, _| {});
            self.par_labels
                .push(a.label.as_ref().map(|l| l.name.clone()));
            let iters_base = self.par_iters.len();
            self.par_iters.extend(iters.iter().map(|it| it.0));
            let body_pc = self.pc();
            self.scope.push();
            self.stmt(&a.body, false);
            self.scope.pop();
            self.code.push(Instr::EndThread);
            self.par_iters.truncate(iters_base);
            self.par_labels.pop();
            self.scope.pop();
            let iter_slots: Vec<u32> = iters.iter().map(|it| it.0).collect();
            let mut assigned = iter_slots.clone();
            assigned_slots(&self.code[body_pc..], &mut assigned);
            let uniform = |cl: &[CClause], avoid: &[u32]| -> Vec<bool> {
                cl.iter()
                    .map(|c| c.simple && avoid.iter().all(|&s| !mentions(&c.e, s)))
                    .collect()
            };
            let everywhere = self.everywhere.clone();
            arms.push(ArmC {
                label: a.label.as_ref().map(|l| l.name.clone()),
                iters,
                pre_uniform: uniform(&pre, &iter_slots),
                ev_uniform_pre: uniform(&everywhere, &iter_slots),
                post_uniform: uniform(&post, &assigned),
                ev_uniform_post: uniform(&everywhere, &assigned),
                pre,
                post,
                body_pc,
                span: a.span,
            });
        }
        let next_pc = self.pc();
        self.code[par_pc] = Instr::Par(Rc::new(ParC {
            arms,
            region_pre,
            region_post,
            everywhere: self.everywhere.clone(),
            next_pc,
            span: p.keyword.to(span),
        }));
    }

    fn barrier(&mut self, b: &Barrier) {
        match self.par_labels.last() {
            None => {
                self.errors.push(
                    Diagnostic::error("R-BARRIER-SCOPE", "barrier outside of any `par` block")
                        .with_primary(b.keyword, "this barrier"),
                );
                return;
            }
            Some(Some(l)) if *l != b.label.name => {
                self.errors.push(
                    Diagnostic::error(
                        "R-BARRIER-SCOPE",
                        format!(
                            "barrier label `{}` does not name the innermost par block `{l}`",
                            b.label.name
                        ),
                    )
                    .with_primary(b.label.span, "this label"),
                );
                return;
            }
            _ => {}
        }
        let mut shared = Vec::new();
        let (mut pre, mut post) = self.pre_post(&b.contract, |me, c, _| {
            if let Some(e) = c.expr() {
                me.shared_locals(e, &mut shared);
            }
        });
        let ev = self.propagated_everywhere();
        pre.extend(ev.iter().cloned());
        post.extend(ev);
        let id = self.out.nbarriers;
        self.out.nbarriers += 1;
        self.code.push(Instr::Barrier(Rc::new(BarrierC {
            id,
            label: b.label.name.clone(),
            pre,
            post,
            span: b.keyword,
            shared,
        })));
        if let Some(body) = &b.body {
            self.block(body, false);
        }
    }

    /// Add to `out` the locals of the current scope that `e` mentions, other than `par`
    /// iterators, with the span of their first mention. Names that a quantifier, `\let` or
    /// `\sum` inside `e` binds are left out wherever they occur: such a name may shadow a local,
    /// and a binder's values differ by design.
    fn shared_locals(&self, e: &Expr, out: &mut Vec<SharedLocal>) {
        let mut bound: Vec<&str> = Vec::new();
        crate::front::visit::walk_expr(e, &mut |x| match &x.kind {
            ExprKind::Quant { bindings, .. } => {
                bound.extend(bindings.iter().map(|b| b.name.name.as_str()))
            }
            ExprKind::Let { name, .. } | ExprKind::Sum { name, .. } => bound.push(&name.name),
            _ => {}
        });
        crate::front::visit::walk_expr(e, &mut |x| {
            let ExprKind::Name(id) = &x.kind else { return };
            if bound.contains(&id.name.as_str()) {
                return;
            }
            let Some((slot, _)) = self.scope.lookup(&id.name) else {
                return;
            };
            if self.par_iters.contains(&slot) || out.iter().any(|s| s.slot == slot) {
                return;
            }
            out.push(SharedLocal {
                slot,
                name: id.name.clone(),
                span: x.span,
            });
        });
    }

    // -----------------------------------------------------------------------------------------
    // Expressions
    // -----------------------------------------------------------------------------------------

    fn bx(&mut self, e: &Expr, pre: &mut Option<&mut Vec<Instr>>) -> Box<CE> {
        Box::new(self.expr(e, pre))
    }

    /// Lower an expression. `pre` receives hoisted non-pure calls (statement context); in
    /// specifications it is `None` and such calls are unsupported.
    fn expr(&mut self, e: &Expr, pre: &mut Option<&mut Vec<Instr>>) -> CE {
        let span = e.span;
        match &e.kind {
            ExprKind::Int(v) => match v.to_i64() {
                Some(i) => CE::Int(i),
                None => CE::Unsupported("integer literal out of range".into(), span),
            },
            ExprKind::Bool(b) => CE::Bool(*b),
            ExprKind::Null => CE::Null,
            ExprKind::This => CE::This,
            ExprKind::Write => CE::Write,
            ExprKind::Read => CE::Read,
            ExprKind::NoPerm => CE::NoPerm,
            ExprKind::Result => CE::Result,
            ExprKind::Name(id) => {
                if let Some((s, _)) = self.scope.lookup(&id.name) {
                    return CE::Local(s);
                }
                let cls = &self.out.classes[self.cur_class as usize];
                if cls.fields.iter().any(|f| f.1 == id.name) {
                    let fid = self.field_id(&id.name);
                    return CE::Field(Box::new(CE::This), fid, span);
                }
                self.errors.push(
                    Diagnostic::error("R-NAME", format!("unknown name `{}`", id.name))
                        .with_primary(span, "not a local, parameter or field"),
                );
                CE::Unsupported(format!("unknown name `{}`", id.name), span)
            }
            ExprKind::Unary(UnOp::Not, x) => CE::Not(self.bx(x, pre)),
            ExprKind::Unary(UnOp::Neg, x) => CE::Neg(self.bx(x, pre), span),
            ExprKind::Binary(op, l, r) => {
                let (l, r) = (self.bx(l, pre), self.bx(r, pre));
                match op {
                    BinOp::Wand | BinOp::Pow => {
                        CE::Unsupported(format!("operator `{}`", op.symbol()), span)
                    }
                    _ => CE::Bin(*op, l, r, span),
                }
            }
            ExprKind::Cond(c, a, b) => CE::Cond(self.bx(c, pre), self.bx(a, pre), self.bx(b, pre)),
            ExprKind::Field(obj, f) => {
                let o = self.bx(obj, pre);
                if f.name == "length" {
                    CE::Length(o, span)
                } else {
                    let fid = self.field_id(&f.name);
                    CE::Field(o, fid, span)
                }
            }
            ExprKind::Index(a, i) => CE::Index(self.bx(a, pre), self.bx(i, pre), span),
            ExprKind::Slice(s, lo, hi) => {
                let s = self.bx(s, pre);
                let lo = lo.as_ref().map(|x| self.bx(x, pre));
                let hi = hi.as_ref().map(|x| self.bx(x, pre));
                CE::Slice(s, lo, hi, span)
            }
            ExprKind::SeqUpdate(s, i, v) => {
                CE::SeqUpdate(self.bx(s, pre), self.bx(i, pre), self.bx(v, pre), span)
            }
            ExprKind::Length(x) => CE::Length(self.bx(x, pre), span),
            ExprKind::Old(x, None) => CE::Old(self.bx(x, pre)),
            ExprKind::Call {
                recv, name, args, ..
            } => {
                let Some(m) = self.resolve_method(recv.as_deref(), &name.name) else {
                    self.errors.push(
                        Diagnostic::error("R-NAME", format!("unknown method `{}`", name.name))
                            .with_primary(name.span, "no such method"),
                    );
                    return CE::Unsupported(format!("unknown method `{}`", name.name), span);
                };
                let md = &self.out.methods[m as usize];
                let (is_pure, is_pred) = (md.is_pure, md.is_predicate);
                if !is_pure && !is_pred {
                    return match pre {
                        Some(p) => {
                            let t = self.scope.temp();
                            let mut inner = Vec::new();
                            let saved = std::mem::take(&mut self.code);
                            self.call_stmt(Some(Target::Local(t)), e, span);
                            inner.extend(std::mem::replace(&mut self.code, saved));
                            p.extend(inner);
                            CE::Local(t)
                        }
                        None => CE::Unsupported(
                            format!("call of non-pure method `{}` in a specification", name.name),
                            span,
                        ),
                    };
                }
                let r = match recv.as_deref() {
                    Some(r) if !self.is_class_name(r) => Some(self.bx(r, pre)),
                    _ => None,
                };
                let mut a: Vec<CE> = args.iter().map(|x| self.expr(x, pre)).collect();
                if !is_pred {
                    a.extend(self.given_args(m, e, pre));
                }
                if is_pred && r.is_none() {
                    if let Some(e) = self.inline_predicate(m, &a) {
                        return e;
                    }
                }
                if is_pred {
                    CE::Pred {
                        pred: m,
                        recv: r,
                        args: a,
                        span,
                    }
                } else {
                    CE::CallPure {
                        method: m,
                        recv: r,
                        args: a,
                        span,
                    }
                }
            }
            ExprKind::Builtin(b, args) => {
                let mut a: Vec<CE> = args.iter().map(|x| self.expr(x, pre)).collect();
                match (b, a.len()) {
                    (Builtin::Perm, 2) => {
                        let p = a.pop().unwrap_or(CE::NoPerm);
                        let l = a.pop().unwrap_or(CE::Null);
                        CE::Perm(Box::new(l), Box::new(p), span)
                    }
                    (Builtin::PointsTo, 3) => {
                        let v = a.pop().unwrap_or(CE::Null);
                        let p = a.pop().unwrap_or(CE::NoPerm);
                        let l = a.pop().unwrap_or(CE::Null);
                        CE::PointsTo(Box::new(l), Box::new(p), Box::new(v), span)
                    }
                    (Builtin::Value, 1) => {
                        let l = a.pop().unwrap_or(CE::Null);
                        CE::Perm(Box::new(l), Box::new(CE::Read), span)
                    }
                    (Builtin::Array, 2) => {
                        let n = a.pop().unwrap_or(CE::Null);
                        let x = a.pop().unwrap_or(CE::Null);
                        CE::ArrayShape(Box::new(x), Box::new(n))
                    }
                    (Builtin::Matrix, 3) => {
                        let c = a.pop().unwrap_or(CE::Null);
                        let r = a.pop().unwrap_or(CE::Null);
                        let m = a.pop().unwrap_or(CE::Null);
                        CE::MatrixShape(Box::new(m), Box::new(r), Box::new(c))
                    }
                    (Builtin::LengthFn, 1) => CE::Length(Box::new(a.remove(0)), span),
                    (Builtin::Head, 1) => CE::Head(Box::new(a.remove(0)), span),
                    (Builtin::Tail, 1) => CE::Tail(Box::new(a.remove(0)), span),
                    _ => CE::Unsupported(format!("built-in `{}`", b.name()), span),
                }
            }
            ExprKind::Quant {
                kind,
                bindings,
                cond,
                body,
            } => {
                self.scope.push();
                let mut binders = Vec::new();
                for b in bindings {
                    let s = self.scope.declare(&b.name.name, Ty::from_ast(&b.ty));
                    let mut binder = Binder {
                        slot: s,
                        name: b.name.name.clone(),
                        lows: Vec::new(),
                        highs: Vec::new(),
                    };
                    if let Some((lo, hi)) = &b.range {
                        binder.lows.push(self.expr(lo, &mut None));
                        binder.highs.push(self.expr(hi, &mut None));
                    }
                    binders.push(binder);
                }
                let c = cond.as_ref().map(|c| self.expr(c, &mut None));
                let implied = match &c {
                    Some(c) => extract_bounds(c, &mut binders),
                    None => true,
                };
                let body = self.expr(body, &mut None);
                self.scope.pop();
                CE::Quant {
                    kind: *kind,
                    binders,
                    implied,
                    cond: c.map(Box::new),
                    body: Box::new(body),
                    span,
                }
            }
            ExprKind::Sum {
                ty,
                name,
                cond,
                body,
            } => {
                self.scope.push();
                let s = self.scope.declare(&name.name, Ty::from_ast(ty));
                let mut binders = vec![Binder {
                    slot: s,
                    name: name.name.clone(),
                    lows: Vec::new(),
                    highs: Vec::new(),
                }];
                let c = self.expr(cond, &mut None);
                let implied = extract_bounds(&c, &mut binders);
                let b = self.expr(body, &mut None);
                self.scope.pop();
                let binder = binders.remove(0);
                CE::Sum {
                    binder,
                    implied,
                    cond: Box::new(c),
                    body: Box::new(b),
                    span,
                }
            }
            ExprKind::Let {
                ty,
                name,
                value,
                body,
            } => {
                let v = self.bx(value, pre);
                self.scope.push();
                let s = self.scope.declare(&name.name, Ty::from_ast(ty));
                let b = self.bx(body, pre);
                self.scope.pop();
                CE::Let(s, v, b)
            }
            ExprKind::Collection {
                kind: CollKind::Seq,
                elems,
                ..
            } => CE::SeqLit(elems.iter().map(|x| self.expr(x, pre)).collect()),
            ExprKind::EmptyCollection(CollKind::Seq, _) => CE::SeqLit(Vec::new()),
            ExprKind::Range(CollKind::Seq, lo, hi) => {
                CE::SeqRange(self.bx(lo, pre), self.bx(hi, pre))
            }
            ExprKind::Unfolding(p, x) => CE::Unfolding(self.bx(p, pre), self.bx(x, pre)),
            ExprKind::Trigger(x) => self.expr(x, pre),
            ExprKind::Labelled(_, x) => self.expr(x, pre),
            ExprKind::NewArray(..) | ExprKind::NewObject(..) => {
                CE::Unsupported("allocation inside an expression".into(), span)
            }
            ExprKind::ThreadId(s) => CE::Unsupported(format!("`{s}`"), span),
            other => CE::Unsupported(format!("expression {}", short_kind(other)), span),
        }
    }
}

fn short_kind(k: &ExprKind) -> String {
    let s = format!("{k:?}");
    s.split(['(', ' ', '{']).next().unwrap_or("?").to_string()
}

fn default_value(t: &Ty) -> CE {
    match t {
        Ty::Int => CE::Int(0),
        Ty::Bool => CE::Bool(false),
        Ty::Seq(_) => CE::SeqLit(Vec::new()),
        _ => CE::Null,
    }
}

/// Is `e` a function of the store alone, without side effects? Literals, locals, `this`,
/// operators, conditionals, lengths and `\array` shapes (array lengths never change), but no
/// heap contents, calls, quantifiers or `\old`. Such expressions read no location, so they need
/// no permission and take no part in race detection.
pub fn is_simple(e: &CE) -> bool {
    match e {
        CE::Int(_) | CE::Bool(_) | CE::Null | CE::Local(_) | CE::This => true,
        CE::Not(x) | CE::Neg(x, _) | CE::Length(x, _) => is_simple(x),
        CE::Bin(op, l, r, _) => {
            !matches!(op, BinOp::Frac | BinOp::Wand | BinOp::Pow) && is_simple(l) && is_simple(r)
        }
        CE::Cond(c, a, b) => is_simple(c) && is_simple(a) && is_simple(b),
        CE::ArrayShape(a, n) => is_simple(a) && is_simple(n),
        _ => false,
    }
}

/// Mark the instructions whose expression is simple (see [`is_simple`]).
fn mark_simple(code: &mut [Instr]) {
    for i in code {
        match i {
            Instr::Assign { simple, value, .. } => *simple = is_simple(value),
            Instr::If { simple, cond, .. } => *simple = is_simple(cond),
            Instr::LoopHead {
                simple,
                cond: Some(c),
                ..
            } => *simple = is_simple(c),
            _ => {}
        }
    }
}

/// The local slots that `code` may assign (in the frame it runs in).
fn assigned_slots(code: &[Instr], out: &mut Vec<u32>) {
    for i in code {
        let t = match i {
            Instr::Assign { target, .. }
            | Instr::Alloc { target, .. }
            | Instr::NewObj { target, .. } => Some(target),
            Instr::Call { target, .. } => target.as_ref(),
            _ => None,
        };
        if let Some(Target::Local(s)) = t {
            if !out.contains(s) {
                out.push(*s);
            }
        }
    }
}

/// Does a compiled assertion carry permissions (and so must be transferred, not just checked)?
pub fn has_resource(e: &CE) -> bool {
    match e {
        CE::Perm(..) | CE::PointsTo(..) | CE::Pred { .. } => true,
        CE::Bin(_, l, r, _) => has_resource(l) || has_resource(r),
        CE::Cond(c, a, b) => has_resource(c) || has_resource(a) || has_resource(b),
        CE::Quant { body, .. } => has_resource(body),
        CE::Let(_, v, b) => has_resource(v) || has_resource(b),
        _ => false,
    }
}

fn mentions(e: &CE, slot: u32) -> bool {
    match e {
        CE::Local(s) => *s == slot,
        CE::Int(_) | CE::Bool(_) | CE::Null | CE::This | CE::Result => false,
        CE::Field(x, _, _) | CE::Length(x, _) | CE::Not(x) | CE::Neg(x, _) | CE::Old(x) => {
            mentions(x, slot)
        }
        CE::Head(x, _) | CE::Tail(x, _) => mentions(x, slot),
        CE::Index(a, b, _) | CE::Bin(_, a, b, _) => mentions(a, slot) || mentions(b, slot),
        CE::Cond(a, b, c) => mentions(a, slot) || mentions(b, slot) || mentions(c, slot),
        CE::ArrayShape(a, n) => mentions(a, slot) || mentions(n, slot),
        CE::CallPure { recv, args, .. } => {
            recv.as_ref().is_some_and(|r| mentions(r, slot))
                || args.iter().any(|a| mentions(a, slot))
        }
        CE::SeqLit(v) => v.iter().any(|a| mentions(a, slot)),
        CE::Write | CE::Read | CE::NoPerm => false,
        // Conservative: anything else may mention it.
        _ => true,
    }
}

/// Quantifier bound extraction (semantics.md §5.4): bounds of each binder from the top-level
/// `&&` conjuncts of the condition, not mentioning the binder itself or a later binder.
/// Returns whether every conjunct became a bound with a simple expression: then the condition
/// holds for every enumerated tuple (the bound is evaluated in the same state, and a simple
/// expression has no side effect that skipping its second evaluation could lose).
fn extract_bounds(cond: &CE, binders: &mut [Binder]) -> bool {
    let mut conj = Vec::new();
    fn split<'c>(e: &'c CE, out: &mut Vec<&'c CE>) {
        if let CE::Bin(BinOp::And, l, r, _) = e {
            split(l, out);
            split(r, out);
        } else {
            out.push(e);
        }
    }
    split(cond, &mut conj);
    let mut used = vec![false; conj.len()];
    let slots: Vec<u32> = binders.iter().map(|b| b.slot).collect();
    for (bi, b) in binders.iter_mut().enumerate() {
        let later = &slots[bi..];
        let ok = |e: &CE| later.iter().all(|&s| !mentions(e, s));
        let is_x = |e: &CE| matches!(e, CE::Local(s) if *s == b.slot);
        let plus1 = |e: &CE| {
            CE::Bin(
                BinOp::Add,
                Box::new(e.clone()),
                Box::new(CE::Int(1)),
                Span::DUMMY,
            )
        };
        for (ci, c) in conj.iter().enumerate() {
            if let CE::Bin(op, l, r, _) = c {
                let bound = match op {
                    BinOp::Le if is_x(r) && ok(l) => Some((&mut b.lows, (**l).clone())),
                    BinOp::Ge if is_x(l) && ok(r) => Some((&mut b.lows, (**r).clone())),
                    BinOp::Lt if is_x(r) && ok(l) => Some((&mut b.lows, plus1(l))),
                    BinOp::Gt if is_x(l) && ok(r) => Some((&mut b.lows, plus1(r))),
                    BinOp::Lt if is_x(l) && ok(r) => Some((&mut b.highs, (**r).clone())),
                    BinOp::Gt if is_x(r) && ok(l) => Some((&mut b.highs, (**l).clone())),
                    BinOp::Le if is_x(l) && ok(r) => Some((&mut b.highs, plus1(r))),
                    BinOp::Ge if is_x(r) && ok(l) => Some((&mut b.highs, plus1(l))),
                    _ => None,
                };
                if let Some((list, e)) = bound {
                    used[ci] |= is_simple(&e);
                    list.push(e);
                }
            }
        }
    }
    used.iter().all(|u| *u)
}
