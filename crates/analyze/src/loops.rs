//! Loop-shape analysis shared by unrolling and iteration merging (optimizations.md §1.4).
//!
//! Finds the iteration variable (given or inferred), its single unconditional update `i op c`,
//! the guard, the bound conjuncts of the invariants, and the fact context at the first guard
//! evaluation (Γ at loop entry, the `for` initialiser executed, the loop's own invariants added).
//! Every unsupported shape becomes a labelled diagnostic (A101–A106); nothing here panics.

use super::facts::{facts_at, Facts, Point};
use super::scope::{assigned_arrays, assigned_vars, field_key, may_change_heap, target_array};
use check::translate::{Term, Z3Bool, Z3Int};
use diag::Diagnostic;
use front::ast::*;
use front::span::Span;
use front::visit::mentions_name as mentions;
use front::visit::{walk_expr, walk_stmts};
use std::collections::BTreeSet;
use z3::ast::{Ast, Int};

/// The update operator of the iteration variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdOp {
    Add,
    Sub,
    Mul,
    Div,
}

impl UpdOp {
    pub fn symbol(self) -> &'static str {
        match self {
            UpdOp::Add => "+",
            UpdOp::Sub => "-",
            UpdOp::Mul => "*",
            UpdOp::Div => "/",
        }
    }
}

/// A bound conjunct `L <= i` (lower) or `i <= U` (upper) of an invariant clause.
#[derive(Clone, Debug)]
pub struct Bound {
    /// The bound expression `L` / `U` (its span is what tightening replaces).
    pub expr: Expr,
    pub lower: bool,
    /// `<` / `>` rather than `<=` / `>=`.
    pub strict: bool,
}

/// The analysed shape of a loop.
#[derive(Clone, Debug)]
pub struct LoopShape {
    pub is_for: bool,
    pub var: String,
    pub op: UpdOp,
    /// The step `c`.
    pub step: Expr,
    /// `c` when it is an integer literal.
    pub step_lit: Option<i64>,
    /// The single update statement (in the body or the `for` header).
    pub update: Span,
    pub update_in_header: bool,
    pub guard: Expr,
    pub bounds: Vec<Bound>,
}

/// Names (free variables) mentioned by an expression.
pub fn expr_names(e: &Expr) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk_expr(e, &mut |x| {
        if let ExprKind::Name(id) = &x.kind {
            out.insert(id.name.clone());
        }
    });
    out
}

/// Arrays read in an expression (`a[...]`, not `a.length`).
/// The heap locations `e` reads: arrays (by root name) and fields of other objects (`.f`).
fn read_arrays(e: &Expr) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk_expr(e, &mut |x| {
        if let ExprKind::Index(..) = &x.kind {
            if let Some(a) = target_array(x) {
                out.insert(a.to_string());
            }
        }
        if let Some(key) = field_key(x) {
            out.insert(key);
        }
    });
    out
}

/// Statements assigning `var` in the loop (body and `for` update), with the statement.
fn updates_of<'a>(lp: &'a Loop, var: &str) -> Vec<&'a Stmt> {
    let mut out = Vec::new();
    let mut visit = |s: &'a Stmt| {
        if let StmtKind::Assign { target, .. }
        | StmtKind::CompoundAssign { target, .. }
        | StmtKind::IncDec { target, .. } = &s.kind
        {
            if target.as_name() == Some(var) {
                out.push(s);
            }
        }
    };
    for u in &lp.update {
        walk_stmts(u, &mut visit);
    }
    walk_stmts(&lp.body, &mut visit);
    out
}

/// The loop's `(Loop, is_for)` if `s` is a `while` or classic `for` loop.
pub fn as_loop(s: &Stmt) -> Option<(&Loop, bool)> {
    match &s.kind {
        StmtKind::While(l) => Some((l, false)),
        StmtKind::For(l) => Some((l, true)),
        _ => None,
    }
}

/// Analyse the loop `s` (whose header is labelled by `header`). `var` is the requested iteration
/// variable, if any.
pub fn analyze(s: &Stmt, var: Option<&str>, header: Span) -> Result<LoopShape, Vec<Diagnostic>> {
    let Some((lp, is_for)) = as_loop(s) else {
        return Err(vec![Diagnostic::error(
            "A0004",
            "this optimization applies to a `while` or `for` loop",
        )
        .with_primary(header, "not a classic loop")
        .with_help(
            "annotate a `while` loop, a classic `for` loop or a ranged `for (int i = lo .. hi)`",
        )]);
    };
    let Some(guard) = lp.cond.clone() else {
        return Err(vec![Diagnostic::error("A106", "the loop has no guard")
            .with_primary(header, "loop without a guard")
            .with_help("give the loop a guard that mentions the iteration variable")]);
    };
    let assigned = assigned_vars(s);
    let var = match var {
        Some(v) => v.to_string(),
        None => {
            let cands: Vec<String> =
                expr_names(&guard).into_iter().filter(|n| updates_of(lp, n).len() == 1).collect();
            if cands.len() != 1 {
                return Err(vec![Diagnostic::error("A101", "cannot infer the iteration variable of this loop")
                    .with_primary(header, "which variable is the iteration variable?")
                    .with_secondary(guard.span, "guard")
                    .with_help(if cands.is_empty() {
                        "no variable of the guard has exactly one update in the loop; name it with `--var`".to_string()
                    } else {
                        format!("candidates: {}; name one with `--var`", cands.join(", "))
                    })]);
            }
            cands[0].clone()
        }
    };
    let ups = updates_of(lp, &var);
    if ups.is_empty() {
        return Err(vec![Diagnostic::error(
            "A102",
            format!("the iteration variable `{var}` is never updated in the loop"),
        )
        .with_primary(header, format!("no assignment to `{var}` in this loop"))
        .with_secondary(
            guard.span,
            // A mistyped `--var` (or annotation variable) need not occur in the guard at all.
            if mentions(&guard, &var) {
                "the guard depends on it".to_string()
            } else {
                format!("the guard does not mention `{var}` either")
            },
        )
        .with_help(
            "name the variable that the loop actually advances (in the annotation, or with --var)",
        )]);
    }
    if ups.len() > 1 {
        let mut d = Diagnostic::error(
            "A104",
            format!(
                "`{var}` is updated {} times in the loop; exactly one update is supported",
                ups.len()
            ),
        )
        .with_primary(header, "loop with several updates");
        for u in &ups {
            d = d.with_secondary(u.span, format!("update of `{var}`"));
        }
        return Err(vec![
            d.with_help(format!("advance `{var}` by a single statement per iteration"))
        ]);
    }
    let upd = ups[0];
    let in_header = lp.update.iter().any(|u| u.span.contains(upd.span));
    let top_level = in_header
        || match &lp.body.kind {
            StmtKind::Block(b) => b.stmts.iter().any(|x| std::ptr::eq(x, upd)),
            _ => std::ptr::eq(&*lp.body, upd),
        };
    if !top_level {
        return Err(vec![Diagnostic::error(
            "A104",
            format!("the update of `{var}` is conditional or nested"),
        )
        .with_primary(header, "loop")
        .with_secondary(upd.span, "this update is not a top-level statement of the body")
        .with_help(format!(
            "update `{var}` unconditionally, as a top-level statement of the body"
        ))]);
    }
    let (op, step) = match update_form(upd, &var) {
        Some(x) => x,
        None => {
            return Err(vec![Diagnostic::error("A103", format!("unsupported update of `{var}`"))
                .with_primary(header, "loop")
                .with_secondary(upd.span, format!("not of the form `{var} = {var} + c` (or `-`, `*`, `/` a constant)"))
                .with_help(format!("rewrite the update as `{var} = {var} + c`, `- c`, `* c` or `/ c` with `c` not assigned in the loop"))]);
        }
    };
    if expr_names(&step).iter().any(|n| assigned.contains(n)) {
        return Err(vec![Diagnostic::error(
            "A105",
            "the step of the update changes inside the loop",
        )
        .with_primary(header, "loop")
        .with_secondary(step.span, "step assigned in the loop")
        .with_help("use a step that the loop does not assign")]);
    }
    // Guard: mentions var, other variables not assigned, reads no array the loop writes.
    if !mentions(&guard, &var) {
        return Err(vec![Diagnostic::error("A106", format!("the guard does not mention `{var}`"))
            .with_primary(header, "loop")
            .with_secondary(guard.span, "guard")
            .with_help("annotate the variable the guard tests")]);
    }
    let bad: Vec<String> =
        expr_names(&guard).into_iter().filter(|n| n != &var && assigned.contains(n)).collect();
    let written = assigned_arrays(s);
    // A call in the loop may write any heap location.
    let any_heap = may_change_heap(s, &|_| false);
    let bad_arr: Vec<String> = read_arrays(&guard)
        .into_iter()
        .filter(|a| any_heap || written.contains(a))
        .map(|a| {
            let a = match a.strip_prefix('.') {
                Some(f) => format!("field `{f}`"),
                None => a,
            };
            if any_heap {
                format!("{a} (the loop calls methods)")
            } else {
                a
            }
        })
        .collect();
    let mut has_call = false;
    walk_expr(&guard, &mut |x| {
        if matches!(x.kind, ExprKind::Call { .. }) {
            has_call = true;
        }
    });
    if !bad.is_empty() || !bad_arr.is_empty() {
        let what: Vec<String> = bad.into_iter().chain(bad_arr).collect();
        return Err(vec![Diagnostic::error(
            "A106",
            "the guard depends on something the loop changes",
        )
        .with_primary(header, "loop")
        .with_secondary(guard.span, format!("reads {} which the loop assigns", what.join(", ")))
        .with_help(format!("make `{var}` the only thing in the guard that the loop changes"))]);
    }
    let _ = has_call; // calls in a guard are translated as pure functions (uninterpreted)
                      // Bound conjuncts of the invariants.
    let mut bounds = Vec::new();
    for c in &lp.prefix.clauses {
        if c.kind != ClauseKind::LoopInvariant {
            continue;
        }
        let Some(e) = c.expr() else { continue };
        for conj in e.conjuncts() {
            if let ExprKind::Binary(op, l, r) = &conj.kind {
                let (lower, b) = match op {
                    BinOp::Le | BinOp::Lt if r.as_name() == Some(&var) => (true, l),
                    BinOp::Ge | BinOp::Gt if l.as_name() == Some(&var) => (true, r),
                    BinOp::Le | BinOp::Lt if l.as_name() == Some(&var) => (false, r),
                    BinOp::Ge | BinOp::Gt if r.as_name() == Some(&var) => (false, l),
                    _ => continue,
                };
                if mentions(b, &var) || expr_names(b).iter().any(|n| assigned.contains(n)) {
                    continue;
                }
                bounds.push(Bound {
                    expr: (**b).clone(),
                    lower,
                    strict: matches!(op, BinOp::Lt | BinOp::Gt),
                });
            }
        }
    }
    let step_lit = step.as_int().and_then(|v| i64::try_from(v.clone()).ok());
    Ok(LoopShape {
        is_for,
        var,
        op,
        step,
        step_lit,
        update: upd.span,
        update_in_header: in_header,
        guard,
        bounds,
    })
}

/// `(op, c)` for a supported update statement of `var`.
fn update_form(s: &Stmt, var: &str) -> Option<(UpdOp, Expr)> {
    let lit1 = || Expr::new(ExprKind::Int(1.into()), s.span);
    let op_of = |b: BinOp| match b {
        BinOp::Add => Some(UpdOp::Add),
        BinOp::Sub => Some(UpdOp::Sub),
        BinOp::Mul => Some(UpdOp::Mul),
        // C's truncating `/` is left out: the analysis computes Euclidean quotients (the C front
        // end keeps `Div` where the counter is never negative).
        BinOp::Div => Some(UpdOp::Div),
        _ => None,
    };
    let (op, c) = match &s.kind {
        StmtKind::IncDec { inc, .. } => (if *inc { UpdOp::Add } else { UpdOp::Sub }, lit1()),
        StmtKind::CompoundAssign { op, value, .. } => (op_of(op.bin_op())?, value.clone()),
        StmtKind::Assign { value, .. } => {
            let ExprKind::Binary(b, l, r) = &strip_parens(value).kind else {
                return None;
            };
            let op = op_of(*b)?;
            if l.as_name() == Some(var) {
                (op, (**r).clone())
            } else if r.as_name() == Some(var) && matches!(op, UpdOp::Add | UpdOp::Mul) {
                (op, (**l).clone())
            } else {
                return None;
            }
        }
        _ => return None,
    };
    if mentions(&c, var) {
        return None;
    }
    // `i + -c` is `i - c`.
    if let ExprKind::Unary(UnOp::Neg, inner) = &c.kind {
        return match op {
            UpdOp::Add => Some((UpdOp::Sub, (**inner).clone())),
            UpdOp::Sub => Some((UpdOp::Add, (**inner).clone())),
            _ => None,
        };
    }
    if let Some(v) = c.as_int() {
        if v < &0.into() {
            let neg = Expr::new(ExprKind::Int(-v.clone()), c.span);
            return match op {
                UpdOp::Add => Some((UpdOp::Sub, neg)),
                UpdOp::Sub => Some((UpdOp::Add, neg)),
                _ => Some((op, c)),
            };
        }
    }
    Some((op, c))
}

fn strip_parens(e: &Expr) -> &Expr {
    e
}

/// The fact context at the first guard evaluation, and the entry value of the iteration variable.
pub struct Entry {
    pub facts: Facts,
    pub i0: Z3Int,
    pub step: Z3Int,
}

/// Γ at loop entry: facts before the loop, the `for` initialiser, the loop's own invariants
/// (they hold on entry because the input verifies).
pub fn entry_facts(
    program: &Program,
    class: Option<&Class>,
    method: &Method,
    s: &Stmt,
    shape: &LoopShape,
) -> Result<Entry, String> {
    let mut f = facts_at(program, class, method, Point::Before(s.span.start()));
    if let Some((lp, _)) = as_loop(s) {
        for st in &lp.init {
            exec_simple(&mut f, st);
        }
        for c in &lp.prefix.clauses {
            if let Some(e) = c.expr() {
                f.assume(e);
            }
        }
    }
    let i0 = match f.tr.var(&shape.var) {
        Term::Int(i) => i,
        _ => return Err(format!("`{}` is not an integer", shape.var)),
    };
    let step = f.tr.int(&shape.step).map_err(|u| format!("the step cannot be encoded: {}", u.0))?;
    Ok(Entry { facts: f, i0, step })
}

/// Execute a `for` initialiser statement (declarations and plain assignments).
fn exec_simple(f: &mut Facts, s: &Stmt) {
    let assign = |f: &mut Facts, name: &str, value: Option<&Expr>| {
        let v = value.and_then(|e| f.tr.term(e).ok());
        f.tr.havoc(name);
        if let (Some(Term::Int(v)), Term::Int(cur)) = (v, f.tr.var(name)) {
            f.facts.push(cur._eq(&v));
        }
    };
    match &s.kind {
        StmtKind::Decl { ty, vars } => {
            for d in vars {
                f.tr.declare(&d.name.name, ty);
                assign(f, &d.name.name, d.init.as_ref());
            }
        }
        StmtKind::Assign { target, value } => {
            if let Some(n) = target.as_name() {
                assign(f, n, Some(value));
            }
        }
        _ => {
            for v in assigned_vars(s) {
                f.tr.havoc(&v);
            }
        }
    }
}

/// `upd^j(i)` as a Z3 term.
pub fn upd_pow(op: UpdOp, i: &Z3Int, c: &Z3Int, j: u64) -> Z3Int {
    let ctx = check::ctx();
    match op {
        UpdOp::Add => i + &(c * &Int::from_u64(ctx, j)),
        UpdOp::Sub => i - &(c * &Int::from_u64(ctx, j)),
        UpdOp::Mul => {
            let mut t = i.clone();
            for _ in 0..j {
                t = &t * c;
            }
            t
        }
        UpdOp::Div => {
            let mut t = i.clone();
            for _ in 0..j {
                t = t.div(c);
            }
            t
        }
    }
}

/// The guard with the iteration variable bound to `value`.
pub fn guard_at(f: &mut Facts, shape: &LoopShape, value: &Z3Int) -> Result<Z3Bool, String> {
    let prev = f.tr.env.bound.insert(shape.var.clone(), Term::Int(value.clone()));
    let g = f.tr.bool(&shape.guard).map_err(|u| u.0);
    match prev {
        Some(p) => {
            f.tr.env.bound.insert(shape.var.clone(), p);
        }
        None => {
            f.tr.env.bound.remove(&shape.var);
        }
    }
    g
}

/// Integer literal power with overflow check.
pub fn lit_pow(c: i64, k: u64) -> Option<i64> {
    let mut r: i64 = 1;
    for _ in 0..k {
        r = r.checked_mul(c)?;
    }
    Some(r)
}

/// Text of `i` after `j` updates, for printing (`i + 2`, `i * 9`, `i + 3 * c`).
pub fn upd_text(shape: &LoopShape, i_text: &str, step_text: &str, j: u64) -> String {
    if j == 0 {
        return i_text.to_string();
    }
    let sym = shape.op.symbol();
    match (shape.op, shape.step_lit) {
        (UpdOp::Add | UpdOp::Sub, Some(c)) => match c.checked_mul(j as i64) {
            Some(v) => format!("{i_text} {sym} {v}"),
            None => format!("{i_text} {sym} {j} * {c}"),
        },
        (UpdOp::Mul | UpdOp::Div, Some(c)) => match lit_pow(c, j) {
            Some(v) => format!("{i_text} {sym} {v}"),
            None => format!("{i_text} {sym} ({})", vec![c.to_string(); j as usize].join(" * ")),
        },
        (UpdOp::Add | UpdOp::Sub, None) => {
            if j == 1 {
                format!("{i_text} {sym} {}", paren_if_complex(step_text))
            } else {
                format!("{i_text} {sym} {j} * {}", paren_if_complex(step_text))
            }
        }
        (UpdOp::Mul | UpdOp::Div, None) => {
            let p = paren_if_complex(step_text);
            if j == 1 {
                format!("{i_text} {sym} {p}")
            } else {
                format!("{i_text} {sym} ({})", vec![p; j as usize].join(" * "))
            }
        }
    }
}

/// Parenthesise text unless it is a single word or literal.
pub fn paren_if_complex(t: &str) -> String {
    let t = t.trim();
    if t.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.') {
        t.to_string()
    } else {
        format!("({t})")
    }
}

/// Γ at the loop head (every iteration): facts before the loop, the initialiser, then what the
/// loop assigns havocked and its invariants added.
pub fn head_facts(program: &Program, class: Option<&Class>, method: &Method, s: &Stmt) -> Facts {
    let mut f = facts_at(program, class, method, Point::Before(s.span.start()));
    if let Some((lp, _)) = as_loop(s) {
        for st in &lp.init {
            exec_simple(&mut f, st);
        }
        super::facts::havoc_loop(&mut f, s);
        for c in &lp.prefix.clauses {
            if let Some(e) = c.expr() {
                f.assume(e);
            }
        }
    }
    f
}

/// The maximal integer sub-expressions of the guard that do not mention `var` (the values the
/// trip count depends on besides the entry value). `None` if the guard has another shape.
pub fn guard_atoms<'e>(e: &'e Expr, var: &str) -> Option<Vec<&'e Expr>> {
    if !mentions(e, var) {
        return Some(vec![e]);
    }
    match &e.kind {
        ExprKind::Name(_) => Some(vec![]),
        ExprKind::Unary(_, x) => guard_atoms(x, var),
        ExprKind::Binary(_, l, r) => {
            let mut v = guard_atoms(l, var)?;
            v.extend(guard_atoms(r, var)?);
            Some(v)
        }
        ExprKind::Cond(c, a, b) => {
            let mut v = guard_atoms(c, var)?;
            v.extend(guard_atoms(a, var)?);
            v.extend(guard_atoms(b, var)?);
            Some(v)
        }
        _ => None,
    }
}

/// A v2 ranged `for (T i = lo .. hi) S` rewritten in the explicit form of optimizations.md §1.4:
/// `loop_invariant lo <= i && i <= hi; for (T i = lo; i < hi; i = i + 1) S`. The invariant is the
/// one VerCors (and the encoder) attach to a ranged loop implicitly; written out, it is a bound
/// conjunct like any other and survives the rewrite of the loop into a classic one.
#[derive(Clone, Debug)]
pub struct Desugared {
    /// The whole program text with the loop rewritten.
    pub text: String,
    /// The edits made, in order: `(span in the old text, length of the new text, span a label
    /// inside the new text is reported on)`.
    edits: Vec<(Span, usize, Span)>,
}

impl Desugared {
    /// A span of the rewritten text as a span of the original one: exact outside the rewritten
    /// pieces, the ranged header for anything inside them (the guard, the update, the bound
    /// invariant exist only in the rewritten text).
    pub fn map_span(&self, sp: Span) -> Span {
        let mut delta: isize = 0;
        for &(old, new_len, origin) in &self.edits {
            let lo = (old.start() as isize + delta) as usize;
            let hi = lo + new_len;
            if sp.end() <= lo {
                break;
            }
            if sp.start() < hi {
                // Overlaps the rewritten piece: a label within it goes to its origin; a label
                // enclosing it (the whole loop) keeps its outer ends.
                if sp.start() >= lo && sp.end() <= hi {
                    return origin;
                }
                let start = if sp.start() < lo { self.back(sp.start()) } else { origin.start() };
                let end = if sp.end() > hi { self.back(sp.end()) } else { origin.end() };
                return Span::new(start, end.max(start));
            }
            delta += new_len as isize - old.len() as isize;
        }
        Span::new(self.back(sp.start()), self.back(sp.end()))
    }

    /// An offset outside every rewritten piece, in the original text.
    fn back(&self, off: usize) -> usize {
        let mut delta: isize = 0;
        for &(old, new_len, _) in &self.edits {
            let lo = (old.start() as isize + delta) as usize;
            if off < lo + new_len {
                break;
            }
            delta += new_len as isize - old.len() as isize;
        }
        (off as isize - delta).max(0) as usize
    }
}

/// The explicit form of `s` if it is a ranged `for` (`Ok(None)` for any other statement).
/// `newline` is the file's line ending.
pub fn desugar_ranged(src: &str, s: &Stmt, newline: &str) -> Result<Option<Desugared>, String> {
    let StmtKind::RangedFor { prefix, ty, var, lo, hi, .. } = &s.kind else {
        return Ok(None);
    };
    // The header `T i = lo .. hi` must sit right after `for (` (no comment in between).
    let before = &src[..ty.span.start()];
    before
        .trim_end()
        .strip_suffix('(')
        .map(str::trim_end)
        .filter(|t| t.ends_with("for"))
        .ok_or("cannot locate the `for` keyword of the ranged loop")?;
    let header = Span::new(ty.span.start(), hi.span.end());
    let i = &var.name;
    let bound = |e: &Expr| {
        let t = e.span.text(src).trim();
        let low = matches!(&e.kind, ExprKind::Cond(..))
            || matches!(&e.kind, ExprKind::Binary(op, ..) if op.is_comparison()
                || matches!(op, BinOp::And | BinOp::Or | BinOp::Implies));
        if low {
            format!("({t})")
        } else {
            t.to_string()
        }
    };
    let (lo_t, hi_t) = (bound(lo), bound(hi));
    // The bound goes first, where the encoder puts the implicit one: at the start of the prefix.
    let at = s.span.start();
    let indent = edit::indent_at(src, at);
    let bound_inv = format!("{lo_t} <= {i} && {i} <= {hi_t}");
    // Users often state the implicit bound themselves; a second copy would only clutter the
    // output (and every peeled iteration's assertions), so it is added only when missing.
    let squash = |t: &str| t.split_whitespace().collect::<String>();
    let stated = prefix
        .clauses_of(ClauseKind::LoopInvariant)
        .filter_map(|c| c.expr())
        .any(|e| squash(e.span.text(src)) == squash(&bound_inv));
    let inv = format!("loop_invariant {bound_inv};");
    // A loop that does not start its line (`} for (…)`) keeps the invariant on its line.
    let inv = if stated {
        String::new()
    } else if src[..at].ends_with(indent) && src[..at - indent.len()].ends_with('\n') {
        format!("{inv}{newline}{indent}")
    } else {
        format!("{inv} ")
    };
    let head = format!(
        "{} {i} = {}; {i} < {}; {i} = {i} + 1",
        ty.span.text(src).trim(),
        lo.span.text(src).trim(),
        hi.span.text(src).trim()
    );
    let mut text = String::with_capacity(src.len() + inv.len() + head.len());
    text.push_str(&src[..at]);
    text.push_str(&inv);
    text.push_str(&src[at..header.start()]);
    text.push_str(&head);
    text.push_str(&src[header.end()..]);
    Ok(Some(Desugared {
        text,
        edits: vec![(Span::new(at, at), inv.len(), header), (header, head.len(), header)],
    }))
}
