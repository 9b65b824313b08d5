//! The kernel form of a `__global__` function: what VerCors means by a CUDA kernel, written
//! with PVL's `par` blocks so that the verifier, the interpreter and the optimizations see the
//! same structure as in a PVL kernel.
//!
//! ```text
//! /*@ context_everywhere CE; kernel_invariant KI; requires P; ensures Q; @*/
//! __global__ void k(params) { body }
//! ```
//! becomes
//! ```text
//! context_everywhere CE;  context KI;
//! requires (\forall* int blockIdx.x = 0 .. gridDim.x; (\forall* int threadIdx.x = 0 .. blockDim.x; P));
//! ensures  (the same over Q);
//! void k(params, int gridDim.x, int blockDim.x) {
//!   par (int blockIdx.x = 0 .. gridDim.x)  requires (\forall* threads P); ensures (… Q);
//!   { par cuda_block(int threadIdx.x = 0 .. blockDim.x)  requires P; ensures Q;  { body } }
//! }
//! ```
//! `__syncthreads()` is `barrier(cuda_block)`: a barrier of the threads of one block. In
//! annotations, `\ltid` is `threadIdx.x`, `\gtid` is `blockIdx.x * blockDim.x + threadIdx.x`,
//! `opencl_gsize` is `blockDim.x` and `opencl_gcount` is `gridDim.x`; `\pointer(a, n, π)` and
//! `\pointer_index(a, i, π)` are spelled out as array permissions (`a` non-null, long enough,
//! and `Perm` on the cells).

pub(super) use super::sizes::work_item;
use super::sizes::{fix_sizes, unit_dimensions, work_item_call};
use super::{BLOCK_LABEL, SHARED_ALLOC};
use crate::ast::*;
use crate::span::Span;
use crate::visit::{map_clause, map_expr, map_stmt};
use diag::Diagnostic;

pub(super) fn name(n: &str, span: Span) -> Expr {
    Expr::new(ExprKind::Name(Ident::new(n, span)), span)
}

pub(super) fn bin(op: BinOp, l: Expr, r: Expr, span: Span) -> Expr {
    Expr::new(ExprKind::Binary(op, Box::new(l), Box::new(r)), span)
}

/// `blockIdx.x * blockDim.x + threadIdx.x`.
pub(super) fn gtid(span: Span) -> Expr {
    bin(
        BinOp::Add,
        bin(BinOp::Mul, name("blockIdx.x", span), name("blockDim.x", span), span),
        name("threadIdx.x", span),
        span,
    )
}

fn int_ty() -> Type {
    Type::int()
}

/// Thread identifiers and pointer permissions in their kernel-form spelling (host code).
fn kernel_spelling(e: &mut Expr) -> bool {
    spelling(e, true)
}

/// The same in a kernel, where `a != null` is stated once for the whole kernel instead (see
/// [`kernel`]): inside a clause that the verifier quantifies over threads it would be a fact
/// about every thread, which a permission's well-definedness cannot use.
fn kernel_spelling_no_null(e: &mut Expr) -> bool {
    spelling(e, false)
}

fn spelling(e: &mut Expr, null: bool) -> bool {
    let span = e.span;
    let new = match &mut e.kind {
        ExprKind::ThreadId(t) if t == "\\ltid" => name("threadIdx.x", span),
        ExprKind::ThreadId(t) if t == "\\gtid" => gtid(span),
        ExprKind::Name(n) if n.name == "opencl_gsize" => name("blockDim.x", span),
        ExprKind::Name(n) if n.name == "opencl_gcount" => name("gridDim.x", span),
        // `\pointer_length(a)` of a pointer read as an array: its length.
        // `\shared_mem_size(buf)`: the launch parameter that sizes dynamic shared memory.
        ExprKind::Opaque(o) if o.keyword == "\\shared_mem_size" => {
            let Some(a) = builtin_operand(&o.text, "\\shared_mem_size") else { return false };
            super::shared::dynamic_size(a, span)
        }
        ExprKind::Opaque(o) if o.keyword == "\\pointer_length" => {
            let Some(a) = builtin_operand(&o.text, "\\pointer_length") else { return false };
            Expr::new(ExprKind::Field(Box::new(name(a, span)), Ident::new("length", span)), span)
        }
        // `Perm(p + i, π)`: the cell `i` places past pointer `p` (C's pointer arithmetic in a
        // location, as `&p[i]`).
        ExprKind::Builtin(Builtin::Perm | Builtin::PointsTo | Builtin::Value, args)
            if args.first().and_then(pointer_offset).is_some() =>
        {
            if let Some((p, i)) = args.first().and_then(pointer_offset) {
                args[0] = Expr::new(ExprKind::Index(Box::new(p), Box::new(i)), args[0].span);
            }
            let mut e = e.clone();
            if let ExprKind::Builtin(_, args) = &mut e.kind {
                args.iter_mut().for_each(|a| map_expr(a, &mut |x| spelling(x, null)));
            }
            e
        }
        ExprKind::Builtin(Builtin::PointerIndex, args) if args.len() == 3 => {
            args.iter_mut().for_each(|a| map_expr(a, &mut |x| spelling(x, null)));
            let (a, i, p) = (args[0].clone(), args[1].clone(), args[2].clone());
            let len =
                Expr::new(ExprKind::Field(Box::new(a.clone()), Ident::new("length", span)), span);
            let cell = Expr::new(ExprKind::Index(Box::new(a.clone()), Box::new(i.clone())), span);
            let perm = Expr::new(ExprKind::Builtin(Builtin::Perm, vec![cell, p]), span);
            let bounds = bin(
                BinOp::And,
                bin(BinOp::Le, Expr::int(0), i.clone(), span),
                bin(BinOp::Lt, i, len, span),
                span,
            );
            // The permission is guarded by the bounds it comes with: under a quantifier the
            // verifier checks a cell's well-definedness with the permission's own guard only
            // (`(\forall* int j; …; \pointer_index(a, t + j * N, p))`, a tiled kernel).
            let perm = bin(BinOp::Implies, bounds.clone(), perm, span);
            let facts = if null {
                bin(
                    BinOp::And,
                    bin(BinOp::Ne, a, Expr::new(ExprKind::Null, span), span),
                    bounds,
                    span,
                )
            } else {
                bounds
            };
            bin(BinOp::Star, facts, perm, span)
        }
        ExprKind::Builtin(Builtin::Pointer, args) if args.len() == 3 => {
            args.iter_mut().for_each(|a| map_expr(a, &mut |x| spelling(x, null)));
            let (a, n, p) = (args[0].clone(), args[1].clone(), args[2].clone());
            let len =
                Expr::new(ExprKind::Field(Box::new(a.clone()), Ident::new("length", span)), span);
            let k = name("cuda_k", span);
            let cell = Expr::new(ExprKind::Index(Box::new(a.clone()), Box::new(k.clone())), span);
            let perm = Expr::new(ExprKind::Builtin(Builtin::Perm, vec![cell, p]), span);
            let range = bin(
                BinOp::And,
                bin(BinOp::Le, Expr::int(0), k.clone(), span),
                bin(BinOp::Lt, k, n.clone(), span),
                span,
            );
            let all = Expr::new(
                ExprKind::Quant {
                    kind: QuantKind::ForallStar,
                    bindings: vec![Binding {
                        ty: int_ty(),
                        name: Ident::new("cuda_k", span),
                        range: None,
                        span,
                    }],
                    cond: Some(Box::new(range)),
                    body: Box::new(perm),
                },
                span,
            );
            let fits = bin(BinOp::Le, n, len, span);
            let facts = if null {
                bin(
                    BinOp::And,
                    bin(BinOp::Ne, a, Expr::new(ExprKind::Null, span), span),
                    fits,
                    span,
                )
            } else {
                fits
            };
            bin(BinOp::Star, facts, all, span)
        }
        _ => return false,
    };
    *e = new;
    true
}

/// `p + i` (also `p + i + j`, read as `p + (i + j)`) for a pointer name `p`: `(p, i)`.
fn pointer_offset(e: &Expr) -> Option<(Expr, Expr)> {
    let ExprKind::Binary(BinOp::Add, l, r) = &e.kind else { return None };
    match &l.kind {
        ExprKind::Name(_) => Some(((**l).clone(), (**r).clone())),
        _ => {
            let (p, i) = pointer_offset(l)?;
            Some((p, bin(BinOp::Add, i, (**r).clone(), e.span)))
        }
    }
}

/// The operand `a` of `\pointer_length(a)` or `\shared_mem_size(a)` (a name only).
fn builtin_operand<'t>(text: &'t str, builtin: &str) -> Option<&'t str> {
    let inner = text.strip_prefix(builtin)?.trim();
    let a = inner.strip_prefix('(')?.strip_suffix(')')?.trim();
    let ident = a.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && a.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    ident.then_some(a)
}

/// The size a thread or block index ranges below: `threadIdx.y` → `blockDim.y`, `blockIdx.x` →
/// `gridDim.x`.
pub(super) fn size_of(v: &str) -> &'static str {
    match v {
        "threadIdx.x" => "blockDim.x",
        "threadIdx.y" => "blockDim.y",
        "threadIdx.z" => "blockDim.z",
        "blockIdx.x" => "gridDim.x",
        "blockIdx.y" => "gridDim.y",
        _ => "gridDim.z",
    }
}

/// The global thread index of the verifier's flat kernel form (see [`flat_ids`]): a name no C
/// or PVL identifier can have.
const GID: &str = "gid.x";

/// The number of values an index ranges over, as an expression: `gid.x` ranges below
/// `gridDim.x * blockDim.x`.
fn size(v: &str, span: Span) -> Expr {
    if v == GID {
        return bin(BinOp::Mul, name("gridDim.x", span), name("blockDim.x", span), span);
    }
    name(size_of(v), span)
}

/// Every thread and block index (what a conjunct depends on to be about one thread).
pub(super) const INDICES: &[&str] =
    &["threadIdx.x", "threadIdx.y", "threadIdx.z", "blockIdx.x", "blockIdx.y", "blockIdx.z", GID];

/// The flat spelling of a one-dimensional kernel's indices: `blockIdx.x * blockDim.x +
/// threadIdx.x` (in any order of its operands) is `gid.x`, `blockIdx.x` is `gid.x / blockDim.x`
/// and `threadIdx.x` is `gid.x % blockDim.x`. For `0 <= gid.x < gridDim.x * blockDim.x` that is a
/// bijection onto the pairs of block and thread indices (the grid is empty when `blockDim.x` is
/// 0), so the flat kernel has the same threads; its global index is linear where the two-level
/// one multiplies two unknowns, which Silicon's arithmetic does not reason about.
fn flat_ids(e: &mut Expr) -> bool {
    let span = e.span;
    let is = |x: &Expr, n: &str| matches!(&x.kind, ExprKind::Name(i) if i.name == n);
    let product = |x: &Expr| match &x.kind {
        ExprKind::Binary(BinOp::Mul, a, b) => {
            (is(a, "blockIdx.x") && is(b, "blockDim.x"))
                || (is(a, "blockDim.x") && is(b, "blockIdx.x"))
        }
        _ => false,
    };
    let new = match &e.kind {
        ExprKind::Binary(BinOp::Add, a, b)
            if (product(a) && is(b, "threadIdx.x")) || (is(a, "threadIdx.x") && product(b)) =>
        {
            name(GID, span)
        }
        ExprKind::Name(n) if n.name == "blockIdx.x" => {
            bin(BinOp::Div, name(GID, span), name("blockDim.x", span), span)
        }
        ExprKind::Name(n) if n.name == "threadIdx.x" => {
            bin(BinOp::Mod, name(GID, span), name("blockDim.x", span), span)
        }
        _ => return false,
    };
    *e = new;
    true
}

fn has_old(e: &Expr) -> bool {
    let mut found = false;
    crate::visit::walk_expr(e, &mut |x| found |= matches!(x.kind, ExprKind::Old(..)));
    found
}

/// Whether `e` reads an array cell or a field (not a length): a fact stated for the whole
/// kernel cannot, since no thread's permission frames it there.
fn reads_heap(e: &Expr) -> bool {
    let mut found = false;
    crate::visit::walk_expr(e, &mut |x| match &x.kind {
        ExprKind::Index(..) => found = true,
        ExprKind::Field(_, f) if f.name != "length" => found = true,
        _ => {}
    });
    found
}

fn has_resource(e: &Expr) -> bool {
    let mut found = false;
    crate::visit::walk_expr(e, &mut |x| {
        if matches!(&x.kind, ExprKind::Builtin(b, _) if b.is_resource())
            || matches!(x.kind, ExprKind::Scale(..))
        {
            found = true;
        }
    });
    found
}

fn mentions(e: &Expr, vars: &[&str]) -> bool {
    crate::visit::any_expr(e, &mut |x| x.as_name().is_some_and(|n| vars.contains(&n)))
}

/// The first and the last thread's instances of thread facts, guarded by the grid being
/// non-empty: consequences of `\forall threads; facts` that the prover can use without
/// instantiating it (a pure quantifier over arithmetic has no trigger). For an index growing
/// with the thread, they bound every thread's index.
fn instances(facts: &[Expr], vars: &[&str], span: Span) -> Vec<Expr> {
    let mut out = Vec::new();
    if facts.is_empty() {
        return out;
    }
    for last in [false, true] {
        let mut inst = join(facts.to_vec(), span);
        let mut nonempty = Vec::new();
        for v in vars {
            let at = if last {
                bin(BinOp::Sub, size(v, span), Expr::int(1), span)
            } else {
                Expr::int(0)
            };
            map_expr(&mut inst, &mut |x| {
                if matches!(&x.kind, ExprKind::Name(n) if n.name == *v) {
                    *x = at.clone();
                    return true;
                }
                false
            });
            nonempty.push(bin(BinOp::Lt, Expr::int(0), size(v, span), span));
        }
        let guard = nonempty
            .into_iter()
            .reduce(|a, b| bin(BinOp::And, a, b, span))
            .unwrap_or_else(|| Expr::new(ExprKind::Bool(true), span));
        out.push(bin(BinOp::Implies, guard, inst, span));
    }
    out
}

fn join(parts: Vec<Expr>, span: Span) -> Expr {
    parts
        .into_iter()
        .reduce(|a, b| bin(BinOp::Star, a, b, span))
        .unwrap_or_else(|| Expr::new(ExprKind::Bool(true), span))
}

/// A thread's clause `e` for all threads (`vars`, outermost first): conjuncts that do not
/// depend on the thread stay outside; facts about the thread are one `\forall`; permissions are
/// one `\forall*` whose condition includes those facts (so that an index is known to be in
/// bounds where its cell is named). Together they are exactly `\forall* threads; e`.
fn quantified(e: &Expr, vars: &[&str], span: Span) -> Expr {
    let (mut outside, mut facts, mut res) = (Vec::new(), Vec::new(), Vec::new());
    // Facts that read cells are framed by the permissions: quantified after them, and neither
    // a condition of theirs nor instantiated.
    let mut reads = Vec::new();
    for c in e.conjuncts() {
        // A permission without an index is held by every thread: quantified below, it is
        // scaled by the number of holders.
        if !mentions(c, INDICES) && !has_resource(c) {
            outside.push(c.clone());
        } else if has_resource(c) {
            res.push(c.clone());
        } else if reads_heap(c) {
            reads.push(c.clone());
        } else {
            facts.push(c.clone());
        }
    }
    let nest = |kind: QuantKind, vars: &[&str], cond: Option<Expr>, body: Expr| {
        let mut q = body;
        for (k, v) in vars.iter().enumerate().rev() {
            let innermost = k + 1 == vars.len();
            q = Expr::new(
                ExprKind::Quant {
                    kind,
                    bindings: vec![Binding {
                        ty: int_ty(),
                        name: Ident::new(*v, span),
                        range: Some((Box::new(Expr::int(0)), Box::new(size(v, span)))),
                        span,
                    }],
                    cond: if innermost { cond.clone().map(Box::new) } else { None },
                    body: Box::new(q),
                },
                span,
            );
        }
        q
    };
    let mut parts = outside;
    if !facts.is_empty() {
        for f in &facts {
            // Over the variables the fact depends on only: a quantified variable that no
            // term mentions leaves the quantifier without a trigger.
            let (on, off): (Vec<&str>, Vec<&str>) = vars.iter().partition(|v| mentions(f, &[**v]));
            let mut q = nest(QuantKind::Forall, &on, None, f.clone());
            for v in off {
                q = bin(BinOp::Implies, bin(BinOp::Lt, Expr::int(0), size(v, span), span), q, span);
            }
            parts.push(q);
        }
        parts.extend(instances(&facts, vars, span));
    }
    for r in res {
        // A permission the same in every block (or thread) is held that many times over: a
        // quantifier over a variable the location does not depend on would not be injective.
        let (on, off): (Vec<&str>, Vec<&str>) = vars.iter().partition(|v| mentions(&r, &[**v]));
        let usable: Vec<Expr> =
            facts.iter().filter(|f| !off.iter().any(|v| mentions(f, &[*v]))).cloned().collect();
        let cond = usable.into_iter().reduce(|a, b| bin(BinOp::And, a, b, span));
        let mut q = if on.is_empty() { r } else { nest(QuantKind::ForallStar, &on, cond, r) };
        // A `read` (wildcard) amount is shared by any number of holders: nothing to scale.
        let mut wildcard = false;
        crate::visit::walk_expr(&q, &mut |x| wildcard |= matches!(x.kind, ExprKind::Read));
        for v in off.into_iter().filter(|_| !wildcard) {
            q = Expr::new(ExprKind::Scale(Box::new(size(v, span)), Box::new(q)), span);
        }
        parts.push(q);
    }
    for f in reads {
        let (on, off): (Vec<&str>, Vec<&str>) = vars.iter().partition(|v| mentions(&f, &[**v]));
        let mut q = nest(QuantKind::Forall, &on, None, f);
        for v in off {
            q = bin(BinOp::Implies, bin(BinOp::Lt, Expr::int(0), size(v, span), span), q, span);
        }
        parts.push(q);
    }
    join(parts, span)
}

/// A clause the kernel form derives from the user's clause at `span` (a quantified copy, a fact
/// it implies). Its expression has no text of its own: its nodes carry no span, so that an
/// optimization rewrites the user's clause once (the form is derived again from the output),
/// while a failure of the derived clause is still reported at the user's clause.
fn clause(kind: ClauseKind, mut e: Expr, span: Span) -> Clause {
    map_expr(&mut e, &mut |x| {
        x.span = Span::DUMMY;
        match &mut x.kind {
            ExprKind::Name(n) | ExprKind::Field(_, n) | ExprKind::Call { name: n, .. } => {
                n.span = Span::DUMMY
            }
            ExprKind::Quant { bindings, .. } => bindings.iter_mut().for_each(|b| {
                b.span = Span::DUMMY;
                b.name.span = Span::DUMMY;
            }),
            _ => {}
        }
        false
    });
    Clause { kind, body: ClauseBody::Expr(e), span }
}

/// How many dimensions the kernel uses: 3 if any `.z` index or size appears (in its code or its
/// contract), else 2 for `.y`, else 1.
fn dimensions(m: &Method) -> usize {
    let mut dims = 1;
    let mut check = |e: &Expr| {
        if let ExprKind::Name(n) = &e.kind {
            let b = n.name.split_once('.').map(|(b, _)| b);
            if b.is_some_and(|b| super::CUDA_BUILTINS.contains(&b)) {
                if n.name.ends_with(".z") {
                    dims = 3;
                } else if n.name.ends_with(".y") {
                    dims = dims.max(2);
                }
            }
        }
    };
    walk_kernel(m, &mut check);
    dims
}

/// Every expression of a kernel: its contract, its code, and the contracts of its loops and
/// barriers.
pub(super) fn walk_kernel(m: &Method, f: &mut dyn FnMut(&Expr)) {
    let clause = |c: &Clause, f: &mut dyn FnMut(&Expr)| {
        if let Some(e) = c.expr() {
            crate::visit::walk_expr(e, f);
        }
    };
    for c in &m.prefix.clauses {
        clause(c, f);
    }
    let MethodBody::Block(b) = &m.body else { return };
    for s in &b.stmts {
        crate::visit::walk_stmts(s, &mut |s| {
            crate::visit::stmt_exprs(s, &mut |e| crate::visit::walk_expr(e, f));
            let clauses: &[Clause] = match &s.kind {
                StmtKind::For(l) | StmtKind::While(l) => &l.prefix.clauses,
                StmtKind::Barrier(b) => &b.contract,
                _ => &[],
            };
            for c in clauses {
                clause(c, f);
            }
        });
    }
}

/// Rewrite every expression of a kernel's contract and code with `f` (`map_clause`, `map_stmt`:
/// loop and barrier contracts included).
pub(super) fn map_kernel(m: &mut Method, f: &mut dyn FnMut(&mut Expr) -> bool) {
    for c in &mut m.prefix.clauses {
        map_clause(c, f);
    }
    if let MethodBody::Block(b) = &mut m.body {
        b.stmts.iter_mut().for_each(|s| map_stmt(s, f));
    }
}

/// The name a `__shared__` declaration allocates, if `s` is one (`T[] buf = cuda_shared_T(N);`).
pub(super) fn shared_name(s: &Stmt) -> Option<&str> {
    let StmtKind::Decl { vars, .. } = &s.kind else { return None };
    let [v] = vars.as_slice() else { return None };
    match &v.init.as_ref()?.kind {
        ExprKind::Call { recv: None, name, .. } if name.name.starts_with(SHARED_ALLOC) => {
            Some(&v.name.name)
        }
        _ => None,
    }
}

/// Declare the allocator of every element type a `__shared__` array of the program uses:
/// `T[] cuda_shared_T(int n)` gives a fresh array of length `n` with write permission to every
/// cell and nothing known of its contents (shared memory starts uninitialised).
pub(super) fn shared_allocators(items: &mut Vec<Item>) {
    let used: Vec<String> = super::called(items)
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| n.starts_with(SHARED_ALLOC))
        .collect();
    items.extend(used.into_iter().map(|f| Item::Method(fresh_block(f))));
}

/// `T[] f(int n)`, abstract: a fresh array of length `n` with write permission to every cell
/// and nothing known of its contents (`T` is `boolean`, `float` or `double` when `f` ends so,
/// else `int`).
pub(super) fn fresh_block(f: String) -> Method {
    let d = Span::DUMMY;
    let elem = if f.ends_with("boolean") {
        Type::boolean()
    } else if f.ends_with("float") {
        Type::new(TypeKind::Float32)
    } else if f.ends_with("double") {
        Type::new(TypeKind::Float64)
    } else {
        Type::int()
    };
    let result = || Expr::synth(ExprKind::Result);
    let len = Expr::synth(ExprKind::Field(Box::new(result()), Ident::synth("length")));
    let i = name("i", d);
    let cell = Expr::synth(ExprKind::Index(Box::new(result()), Box::new(i.clone())));
    let perm =
        Expr::synth(ExprKind::Builtin(Builtin::Perm, vec![cell, Expr::synth(ExprKind::Write)]));
    let range = bin(
        BinOp::And,
        bin(BinOp::Le, Expr::int(0), i.clone(), d),
        bin(BinOp::Lt, i, name("n", d), d),
        d,
    );
    let all = Expr::synth(ExprKind::Quant {
        kind: QuantKind::ForallStar,
        bindings: vec![Binding { ty: Type::int(), name: Ident::synth("i"), range: None, span: d }],
        cond: Some(Box::new(range)),
        body: Box::new(perm),
    });
    let fresh = bin(
        BinOp::And,
        bin(BinOp::Ne, result(), Expr::synth(ExprKind::Null), d),
        bin(BinOp::Eq, len, name("n", d), d),
        d,
    );
    let c = |kind, e| Clause { kind, body: ClauseBody::Expr(e), span: d };
    Method {
        prefix: Prefix {
            clauses: vec![
                c(ClauseKind::Requires, bin(BinOp::Le, Expr::int(0), name("n", d), d)),
                c(ClauseKind::Ensures, fresh),
                c(ClauseKind::Ensures, all),
            ],
            ..Prefix::default()
        },
        modifiers: vec![],
        kind: MethodKind::Method,
        ret: Type::new(TypeKind::Array(Box::new(elem), None)),
        name: Ident::synth(f),
        type_params: vec![],
        params: vec![Param { ty: Type::int(), name: Ident::synth("n"), span: d }],
        body: MethodBody::Abstract,
        span: d,
    }
}

/// A host function or prototype: pointer permissions spelled out in its contract and body.
pub(super) fn host(mut m: Method) -> Method {
    for c in &mut m.prefix.clauses {
        map_clause(c, &mut kernel_spelling);
    }
    if let MethodBody::Block(b) = &mut m.body {
        for s in &mut b.stmts {
            map_stmt(s, &mut kernel_spelling);
            unwrap_atomics(s);
        }
    }
    m
}

/// `if (c) return;` at the top of a kernel's body (CUDA's idiom for threads past the end of the
/// data) ends those threads: the statements after it run under `if (!c) { … }`. The wrapper has
/// no text of its own; the statements keep theirs.
fn early_exits(stmts: Vec<Stmt>) -> Vec<Stmt> {
    let mut out = Vec::new();
    let mut it = stmts.into_iter();
    while let Some(s) = it.next() {
        let exit = match &s.kind {
            StmtKind::If { cond, then, els: None } => {
                let returns = match &then.kind {
                    StmtKind::Return(None) => true,
                    StmtKind::Block(b) => {
                        matches!(b.stmts.as_slice(), [Stmt { kind: StmtKind::Return(None), .. }])
                    }
                    _ => false,
                };
                returns.then(|| cond.clone())
            }
            _ => None,
        };
        let Some(cond) = exit else {
            out.push(s);
            continue;
        };
        let rest = early_exits(it.collect());
        let d = Span::DUMMY;
        let not = Expr::new(ExprKind::Unary(UnOp::Not, Box::new(cond)), d);
        let body = Stmt { kind: StmtKind::Block(Block { stmts: rest, span: d }), span: d };
        out.push(Stmt {
            kind: StmtKind::If { cond: not, then: Box::new(body), els: None },
            span: d,
        });
        break;
    }
    out
}

/// The kernel form of a `__global__` function (module doc). With `flat` (the verifier's form), a
/// one-dimensional kernel without barriers or shared memory, whose blocks are independent, is
/// one `par` over the global index `gid.x` instead (see [`flat_ids`]).
/// A kernel in its internal form; `verifying`: the verifier's form (flat where blocks are
/// independent, launch sizes the contract fixes replaced by their values).
pub(super) fn kernel(m: Method, diags: &mut Vec<Diagnostic>, verifying: bool) -> Method {
    let mut m = m;
    // OpenCL's work-item calls of the specifications in CUDA's terms first: the dimensions
    // are read from the names.
    map_kernel(&mut m, &mut work_item_call);
    if verifying {
        unit_dimensions(&mut m);
        super::params::thread_copies(&mut m);
    }
    // The kernel's resource invariant when its `kernel_invariant` clauses hold permissions:
    // all of them (facts about the cells with the cells), which CUDA's atomic functions take
    // for their update (VerCors' reading of them).
    let kernel_invariants: Vec<Expr> = m
        .prefix
        .clauses
        .iter()
        .filter(|c| c.kind == ClauseKind::KernelInvariant)
        .filter_map(|c| c.expr().cloned())
        .collect();
    let invariant = match kernel_invariants.iter().any(has_resource) {
        true => kernel_invariants.into_iter().reduce(|a, b| bin(BinOp::Star, a, b, Span::DUMMY)),
        false => None,
    };
    let mut m = kernel_form(m, diags, verifying);
    if verifying {
        fix_sizes(&mut m);
    }
    if let MethodBody::Block(b) = &mut m.body {
        match invariant {
            // The whole launch inside `invariant kernel.invariant(R) { … }`: the kernel's
            // caller holds R (the clause is also the kernel's context), its threads reach it
            // in their atomics only.
            Some(mut resource) => {
                map_expr(&mut resource, &mut kernel_spelling);
                let span = b.span;
                let body = Block { stmts: std::mem::take(&mut b.stmts), span };
                let name = Ident::synth(super::KERNEL_INVARIANT);
                b.stmts = vec![Stmt { kind: StmtKind::Invariant { name, resource, body }, span }];
            }
            None => b.stmts.iter_mut().for_each(unwrap_atomics),
        }
    }
    m
}

/// The atomic functions of code without a resource invariant are plain updates of their cell
/// (which then needs write permission: never weaker than the atomic).
fn unwrap_atomics(s: &mut Stmt) {
    crate::visit::map_stmts(s, &mut |s| {
        if let StmtKind::Atomic { names, body } = &mut s.kind {
            if names.len() == 1 && names[0].name == super::KERNEL_INVARIANT {
                s.kind =
                    StmtKind::Block(std::mem::replace(body, Block { stmts: vec![], span: s.span }));
            }
        }
    });
}

fn kernel_form(mut m: Method, diags: &mut Vec<Diagnostic>, flat: bool) -> Method {
    // The dimensions the kernel indexes its threads and blocks in (`.y` implies `.x`, `.z` both).
    let dims = dimensions(&m);
    let tvars: Vec<&'static str> = ["threadIdx.x", "threadIdx.y", "threadIdx.z"][..dims].to_vec();
    let tvar_names = tvars.clone();
    let bvars: Vec<&'static str> = ["blockIdx.x", "blockIdx.y", "blockIdx.z"][..dims].to_vec();
    let all_vars: Vec<&'static str> = bvars.iter().chain(&tvars).copied().collect();
    let MethodBody::Block(body) = std::mem::replace(&mut m.body, MethodBody::Abstract) else {
        return m;
    };
    let body_span = body.span;
    let mut body_stmt = Stmt { kind: StmtKind::Block(body), span: body_span };
    // Every array a pointer permission names is non-null, once for the whole kernel.
    let mut non_null: Vec<(String, Span)> = Vec::new();
    let mut note = |e: &Expr| {
        if let ExprKind::Builtin(Builtin::Pointer | Builtin::PointerIndex, args) = &e.kind {
            if let Some(ExprKind::Name(n)) = args.first().map(|a| &a.kind) {
                if !non_null.iter().any(|(m, _)| *m == n.name) {
                    non_null.push((n.name.clone(), e.span));
                }
            }
        }
    };
    for c in &m.prefix.clauses {
        if let Some(e) = c.expr() {
            crate::visit::walk_expr(e, &mut note);
        }
    }
    crate::visit::walk_stmts(&body_stmt, &mut |s| {
        if let StmtKind::Barrier(b) = &s.kind {
            for c in &b.contract {
                if let Some(e) = c.expr() {
                    crate::visit::walk_expr(e, &mut note);
                }
            }
        }
    });
    map_stmt(&mut body_stmt, &mut kernel_spelling_no_null);
    if let StmtKind::Block(b) = &mut body_stmt.kind {
        b.stmts = early_exits(std::mem::take(&mut b.stmts));
    }
    // `__shared__` arrays belong to the block: allocated before its threads start. Only at the
    // top of the kernel's body, where every thread of the block declares them.
    let mut shared_decls = Vec::new();
    if let StmtKind::Block(b) = &mut body_stmt.kind {
        let (hoisted, rest): (Vec<Stmt>, Vec<Stmt>) =
            std::mem::take(&mut b.stmts).into_iter().partition(|s| shared_name(s).is_some());
        b.stmts = rest;
        shared_decls = hoisted;
    }
    let mut nested_shared = None;
    crate::visit::walk_stmts(&body_stmt, &mut |s| {
        if shared_name(s).is_some() {
            nested_shared.get_or_insert(s.span);
        }
    });
    if let Some(at) = nested_shared {
        diags.push(
            Diagnostic::error(
                "A0014",
                "a `__shared__` array declared inside a branch or a loop is not supported",
            )
            .with_primary(at, "declared here")
            .with_help("declare shared memory at the top level of the kernel's body"),
        );
    }
    let shared: Vec<String> =
        shared_decls.iter().filter_map(|s| shared_name(s).map(str::to_string)).collect();
    let shared_refs: Vec<&str> = shared.iter().map(String::as_str).collect();
    // A kernel's parameters it changes are no facts for the whole kernel.
    let assigned = crate::visit::assigned_names(&body_stmt);
    let assigned_refs: Vec<&str> = assigned.iter().map(String::as_str).collect();
    let mut barrier = false;
    crate::visit::walk_stmts(&body_stmt, &mut |s| {
        barrier |= matches!(s.kind, StmtKind::Barrier(_));
    });
    // A permission of a thread located by its block or thread index alone (`a[threadIdx.x]`,
    // held once per block) keeps the two-level form, which scales it by the other level's size:
    // over the global index such a location is not injective.
    let split_resource = m.prefix.clauses.iter().any(|c| {
        let mut c = c.clone();
        map_clause(&mut c, &mut kernel_spelling_no_null);
        map_clause(&mut c, &mut flat_ids);
        let mut split = false;
        if let Some(e) = c.expr() {
            crate::visit::walk_expr(e, &mut |x| {
                if matches!(&x.kind, ExprKind::Builtin(b, _) if b.is_resource()) {
                    crate::visit::walk_expr(x, &mut |y| {
                        split |= matches!(&y.kind, ExprKind::Binary(op, g, _) if op.is_division()
                            && matches!(&g.kind, ExprKind::Name(n) if n.name == GID));
                    });
                }
            });
        }
        split
    });
    let flat = flat && dims == 1 && shared_decls.is_empty() && !barrier && !split_resource;
    if flat {
        map_stmt(&mut body_stmt, &mut flat_ids);
    }
    // The variables a thread's clause is quantified over, for the whole kernel and per block.
    let (all_vars, tvars) = if flat { (vec![GID], vec![GID]) } else { (all_vars, tvars) };

    let mut method_clauses = Vec::new();
    let mut thread = Vec::new();
    let mut block = Vec::new();
    let mut whole = Vec::new();
    // Launch sizes are positive: CUDA refuses a launch with an empty grid or block (the kernel
    // does not run), so a launch site proves it, and the kernel's clauses may divide by them
    // (a permission held once per thread is `write \ (blockDim.x * gridDim.x)`).
    let sizes = bvars
        .iter()
        .chain(&tvar_names)
        .map(|v| bin(BinOp::Lt, Expr::int(0), name(size_of(v), m.name.span), m.name.span))
        .reduce(|a, b| bin(BinOp::And, a, b, m.name.span))
        .unwrap_or_else(|| Expr::int(0));
    method_clauses.push(clause(ClauseKind::ContextEverywhere, sizes, m.name.span));
    // Only the kernel's parameters: a `__shared__` array a barrier names is a local of each
    // block, which states its own `s != null` (a kernel-wide fact about it named no variable
    // in scope: V-UNDECLARED).
    for (a, span) in
        non_null.into_iter().filter(|(a, _)| m.params.iter().any(|p| p.name.name == *a))
    {
        let fact = bin(BinOp::Ne, name(&a, span), Expr::new(ExprKind::Null, span), span);
        method_clauses.push(clause(ClauseKind::ContextEverywhere, fact, span));
    }
    for mut c in std::mem::take(&mut m.prefix.clauses) {
        map_clause(&mut c, &mut kernel_spelling_no_null);
        if flat {
            map_clause(&mut c, &mut flat_ids);
        }
        match c.kind {
            ClauseKind::Requires | ClauseKind::Ensures | ClauseKind::Context => {
                let Some(e) = c.expr().cloned() else { continue };
                if c.kind != ClauseKind::Ensures {
                    // Facts about the first and last thread's indices, for every thread, the
                    // barriers and the loops of the kernel (pure facts about values no thread
                    // changes, implied by this precondition).
                    let facts: Vec<Expr> = e
                        .conjuncts()
                        .into_iter()
                        .filter(|x| {
                            mentions(x, INDICES)
                                && !has_resource(x)
                                && !has_old(x)
                                && !reads_heap(x)
                                && !mentions(x, &shared_refs)
                        })
                        .cloned()
                        .collect();
                    for f in instances(&facts, &all_vars, c.span) {
                        method_clauses.push(clause(ClauseKind::ContextEverywhere, f, c.span));
                    }
                    // Pure facts about values no thread assigns (`a != NULL`, `n > 0`, a
                    // launch size) hold in every thread, barrier and loop of the kernel too.
                    for x in e.conjuncts() {
                        let pure = !mentions(x, INDICES)
                            && !has_resource(x)
                            && !has_old(x)
                            && !reads_heap(x)
                            && !mentions(x, &shared_refs)
                            && !mentions(x, &assigned_refs);
                        if pure {
                            let f = x.clone();
                            method_clauses.push(clause(ClauseKind::ContextEverywhere, f, c.span));
                        }
                    }
                }
                // The block's shared memory is its own: the derived clauses leave it out.
                let outer = e
                    .conjuncts()
                    .into_iter()
                    .filter(|x| !mentions(x, &shared_refs))
                    .cloned()
                    .reduce(|a, b| bin(BinOp::Star, a, b, c.span));
                if let Some(outer) = outer {
                    if !flat {
                        block.push(clause(c.kind, quantified(&outer, &tvars, c.span), c.span));
                    }
                    whole.push(clause(c.kind, quantified(&outer, &all_vars, c.span), c.span));
                }
                thread.push(c);
            }
            // Holds in every thread and barrier too: the verifier and the interpreter carry a
            // method's `context_everywhere` facts into its par blocks.
            ClauseKind::ContextEverywhere => method_clauses.push(c),
            ClauseKind::KernelInvariant => {
                let mut c = c;
                c.kind = ClauseKind::Context;
                method_clauses.push(c);
            }
            _ => method_clauses.push(c),
        }
    }
    method_clauses.extend(whole);
    m.prefix.clauses = method_clauses;

    let iter = |v: &str| Iter {
        ty: int_ty(),
        name: Ident::new(v, Span::DUMMY),
        lo: Expr::int(0),
        hi: size(v, Span::DUMMY),
        span: Span::DUMMY,
    };
    // Every thread (and barrier) of the block knows its shared arrays: allocated, of their
    // declared length.
    for d in &shared_decls {
        let StmtKind::Decl { vars, .. } = &d.kind else { continue };
        let Some(ExprKind::Call { args, .. }) = vars[0].init.as_ref().map(|e| &e.kind) else {
            continue;
        };
        let (buf, span) = (&vars[0].name.name, d.span);
        let len =
            Expr::new(ExprKind::Field(Box::new(name(buf, span)), Ident::new("length", span)), span);
        let fact = bin(
            BinOp::And,
            bin(BinOp::Ne, name(buf, span), Expr::new(ExprKind::Null, span), span),
            bin(BinOp::Eq, len, args[0].clone(), span),
            span,
        );
        thread.insert(0, clause(ClauseKind::ContextEverywhere, fact, span));
    }
    let threads = Par {
        prefix: Prefix::default(),
        arms: vec![ParArm {
            label: Some(Ident::synth(BLOCK_LABEL)),
            iters: tvars.iter().map(|v| iter(v)).collect(),
            wait: None,
            contract: thread,
            body: Box::new(body_stmt),
            span: body_span,
        }],
        // The kernel's threads are named by the body's opening brace (sites, `--at`).
        keyword: Span::new(body_span.start(), body_span.start() + 1),
        loop_form: false,
    };
    // The launch sizes: the grid's, then the block's, one per dimension used; then the sizes of
    // dynamic shared memory.
    for v in bvars.iter().chain(&tvar_names) {
        m.params.push(Param { ty: int_ty(), name: Ident::synth(size_of(v)), span: Span::DUMMY });
    }
    for n in &shared {
        let size = format!("{n}{}", super::SHARED_SIZE);
        let dynamic = shared_decls.iter().any(|d| {
            let mut found = false;
            crate::visit::stmt_exprs(d, &mut |e| found |= mentions(e, &[&size]));
            found
        });
        if dynamic {
            m.params.push(Param { ty: int_ty(), name: Ident::synth(&size), span: Span::DUMMY });
        }
    }
    if flat {
        m.body = MethodBody::Block(Block {
            stmts: vec![Stmt { kind: StmtKind::Par(threads), span: body_span }],
            span: body_span,
        });
        return m;
    }
    let blocks = Par {
        prefix: Prefix::default(),
        arms: vec![ParArm {
            label: None,
            iters: bvars.iter().map(|v| iter(v)).collect(),
            wait: None,
            contract: block,
            body: Box::new({
                let par = Stmt { kind: StmtKind::Par(threads), span: body_span };
                if shared_decls.is_empty() {
                    par
                } else {
                    let mut stmts = shared_decls;
                    stmts.push(par);
                    Stmt {
                        kind: StmtKind::Block(Block { stmts, span: Span::DUMMY }),
                        span: Span::DUMMY,
                    }
                }
            }),
            span: body_span,
        }],
        // Empty (no `par` text): not a site; placed at the kernel's name for reports.
        keyword: Span::new(m.name.span.start(), m.name.span.start()),
        loop_form: false,
    };
    // The block-level par has no text: it is named by the kernel's name (its reports point
    // there), and does not start where the thread-level par does (statements are found by their
    // start offset).
    let kernel_name = m.name.span;
    m.body = MethodBody::Block(Block {
        stmts: vec![Stmt { kind: StmtKind::Par(blocks), span: kernel_name }],
        span: body_span,
    });
    m
}
