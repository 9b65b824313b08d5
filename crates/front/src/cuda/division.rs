//! C's `/` and `%` truncate toward zero (`-7 / 2 == -3`, `-7 % 2 == -1`); PVL's, and the
//! tree's `BinOp::Div`/`Mod`, are Euclidean (`-7 / 2 == -4`, `-7 % 2 == 1`). The two agree when
//! the dividend is not negative, which is what GPU index arithmetic almost always divides
//! (`gid / width`, `threadIdx.x % 32`). So a division keeps `Div`/`Mod` where its dividend is
//! visibly non-negative, and becomes `TruncDiv`/`TruncMod` elsewhere: sound everywhere, and the
//! verifier's quantifier inversion (which reads `Div`/`Mod`) still sees the common forms.
//!
//! "Visibly non-negative": literals, CUDA's index and size variables, lengths, sums, products
//! and quotients of such, quantified variables whose range starts at such a value, and locals
//! every write of which stores such a value (a greatest fixpoint: if every write keeps every
//! candidate non-negative, no execution makes one negative). A C local cannot be aliased here:
//! the front end takes no address of a scalar.

use super::bits;
use crate::ast::*;
use crate::span::Span;
use crate::visit::{map_expr, walk_stmts};
use std::collections::HashSet;

/// Rewrite the divisions of `m` (contract and body) to C's semantics. `src` gives the written
/// types (`unsigned`, `size_t`), which the tree maps to `int`.
pub(super) fn settle(m: &mut Method, src: &str) {
    let mut known: HashSet<String> =
        m.params.iter().filter(|p| unsigned(&p.ty, src)).map(|p| p.name.name.clone()).collect();
    if let MethodBody::Block(b) = &m.body {
        // A local of an inner block may share a signed parameter's name: the name then
        // stands for both, and the parameter may be negative.
        let mut locals = non_negative_locals(&b.stmts, src);
        locals.retain(|n| !m.params.iter().any(|p| &p.name.name == n && !unsigned(&p.ty, src)));
        known.extend(locals);
    }
    let mut f = |e: &mut Expr| settle_expr(e, &known, src);
    crate::visit::map_method(m, &mut f);
    if let MethodBody::Block(b) = &mut m.body {
        for s in &mut b.stmts {
            crate::visit::map_stmts(s, &mut |st| settle_compound(st, &known, src));
        }
    }
}

/// `x /= d` and `x %= d` divide as C does where `x` may be negative; `x >>= k` and `x &= m`
/// (written `/=`/`%=` by the conversion, `bits.rs`) round down, written as an assignment of
/// [`bits::floor_form`] there.
fn settle_compound(st: &mut Stmt, known: &HashSet<String>, src: &str) {
    let span = st.span;
    let StmtKind::CompoundAssign { target, op: op @ (CompoundOp::Div | CompoundOp::Mod), value } =
        &mut st.kind
    else {
        return;
    };
    if non_negative(target, known) {
        return;
    }
    if matches!(bits::written_between(src, target, value), ">>=" | "&=") {
        let bin = op.bin_op();
        let value = bits::floor_form(bin, target.clone(), value.clone(), span);
        st.kind = StmtKind::Assign { target: target.clone(), value };
    } else {
        *op = if *op == CompoundOp::Div { CompoundOp::TruncDiv } else { CompoundOp::TruncMod };
    }
}

/// A shift or mask (`x >> k`, `x & m`, converted to `Div`/`Mod` by `bits.rs`) whose operand may
/// be negative: its [`bits::floor_form`], operands settled.
fn floor_of_bits(e: &mut Expr, known: &HashSet<String>, src: &str) -> Option<Expr> {
    let span = e.span;
    let ExprKind::Binary(op @ (BinOp::Div | BinOp::Mod), a, b) = &mut e.kind else {
        return None;
    };
    if non_negative(a, known) || !matches!(bits::written_between(src, a, b), ">>" | "&") {
        return None;
    }
    map_expr(a, &mut |x| settle_expr(x, known, src));
    Some(bits::floor_form(*op, (**a).clone(), (**b).clone(), span))
}

/// VerCors' `\euclidean_div(a, b)` and `\euclidean_mod(a, b)` are the tree's own `Div` and
/// `Mod` (the operands are read from the text; left opaque, and refused later, if they do not
/// parse).
fn euclidean_builtin(e: &mut Expr, src: &str) -> bool {
    let ExprKind::Opaque(o) = &e.kind else { return false };
    let op = match o.keyword.as_str() {
        "\\euclidean_div" => BinOp::Div,
        "\\euclidean_mod" => BinOp::Mod,
        _ => return false,
    };
    let (Some(open), Some(close)) = (o.text.find('('), o.text.rfind(')')) else { return false };
    let mut depth = 0i32;
    let mut comma = None;
    for (k, c) in o.text[open + 1..close].char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 && comma.is_none() => comma = Some(open + 1 + k),
            ',' if depth == 0 => return false,
            _ => {}
        }
    }
    let Some(comma) = comma else { return false };
    let base = o.span.start();
    let part = |lo: usize, hi: usize| {
        crate::parser::parse_expr_at(
            src,
            Span::new(base + lo, base + hi),
            crate::dialect::Dialect::V2,
        )
        .ok()
    };
    let (Some(a), Some(b)) = (part(open + 1, comma), part(comma + 1, close)) else {
        return false;
    };
    let span = e.span;
    *e = Expr::new(ExprKind::Binary(op, Box::new(a), Box::new(b)), span);
    true
}

/// The written type is unsigned: its values are never negative in C.
pub(super) fn unsigned(ty: &Type, src: &str) -> bool {
    let text = ty.span.text(src).trim();
    text.starts_with("unsigned")
        || matches!(text, "size_t" | "uint" | "uint32_t" | "uint64_t" | "uint16_t" | "uint8_t")
}

/// The locals of `stmts` that are never negative.
fn non_negative_locals(stmts: &[Stmt], src: &str) -> HashSet<String> {
    // Every write of every local: `(name, stored value)`, `None` for a write that may make it
    // negative whatever it stores (`-=`, a decrement).
    let mut writes: Vec<(String, Option<Expr>)> = Vec::new();
    let mut candidates: HashSet<String> = HashSet::new();
    let mut unsigned_locals: HashSet<String> = HashSet::new();
    for s in stmts {
        walk_stmts(s, &mut |st| match &st.kind {
            StmtKind::Decl { ty, vars, .. } => {
                for v in vars {
                    if unsigned(ty, src) {
                        unsigned_locals.insert(v.name.name.clone());
                    }
                    candidates.insert(v.name.name.clone());
                    if let Some(init) = &v.init {
                        writes.push((v.name.name.clone(), Some(init.clone())));
                    }
                }
            }
            StmtKind::Assign { target, value } => {
                if let ExprKind::Name(id) = &target.kind {
                    writes.push((id.name.clone(), Some(value.clone())));
                }
            }
            StmtKind::CompoundAssign { target, op, value } => {
                if let ExprKind::Name(id) = &target.kind {
                    let kept = matches!(
                        op,
                        CompoundOp::Add | CompoundOp::Mul | CompoundOp::Div | CompoundOp::Mod
                    );
                    writes.push((id.name.clone(), kept.then(|| value.clone())));
                }
            }
            StmtKind::IncDec { target, inc, .. } => {
                if let ExprKind::Name(id) = &target.kind {
                    writes.push((id.name.clone(), inc.then(|| Expr::int(1))));
                }
            }
            _ => {}
        });
    }
    let mut known: HashSet<String> = candidates;
    loop {
        let before = known.len();
        for (name, value) in &writes {
            if unsigned_locals.contains(name) {
                continue;
            }
            let ok = value.as_ref().is_some_and(|v| non_negative(v, &known));
            if !ok {
                known.remove(name);
            }
        }
        if known.len() == before {
            return known;
        }
    }
}

/// CUDA's index and size variables, which are never negative.
fn builtin_index(n: &str) -> bool {
    super::CUDA_BUILTINS.iter().any(|b| n.strip_prefix(b).is_some_and(|f| f.starts_with('.')))
}

/// `e` is visibly non-negative, given the names in `known`.
fn non_negative(e: &Expr, known: &HashSet<String>) -> bool {
    match &e.kind {
        ExprKind::Int(v) => v.sign() != num_bigint::Sign::Minus,
        ExprKind::Name(id) => known.contains(&id.name) || builtin_index(&id.name),
        ExprKind::ThreadId(_) | ExprKind::Length(_) | ExprKind::Write | ExprKind::Read => true,
        ExprKind::Builtin(Builtin::LengthFn, _) => true,
        ExprKind::Old(x, _) => non_negative(x, known),
        ExprKind::Cond(_, a, b) => non_negative(a, known) && non_negative(b, known),
        ExprKind::Binary(op, a, b) => {
            op.is_arith() && *op != BinOp::Sub && non_negative(a, known) && non_negative(b, known)
        }
        _ => false,
    }
}

/// Settle the divisions of `e`; quantified variables whose range starts at a non-negative
/// value count as non-negative in the quantifier's body.
fn settle_expr(e: &mut Expr, known: &HashSet<String>, src: &str) -> bool {
    if euclidean_builtin(e, src) {
        // Euclidean by the builtin's definition; its operands still divide as C does.
        if let ExprKind::Binary(_, a, b) = &mut e.kind {
            map_expr(a, &mut |x| settle_expr(x, known, src));
            map_expr(b, &mut |x| settle_expr(x, known, src));
        }
        return true;
    }
    if let Some(floor) = floor_of_bits(e, known, src) {
        *e = floor;
        return true;
    }
    match &mut e.kind {
        ExprKind::Binary(op @ (BinOp::Div | BinOp::Mod), a, _) if !non_negative(a, known) => {
            *op = if *op == BinOp::Div { BinOp::TruncDiv } else { BinOp::TruncMod };
            false
        }
        // A bound name hides a local of the same name.
        ExprKind::Let { name, value, body, .. } => {
            map_expr(value, &mut |x| settle_expr(x, known, src));
            let mut inner = known.clone();
            inner.remove(&name.name);
            map_expr(body, &mut |x| settle_expr(x, &inner, src));
            true
        }
        ExprKind::Sum { name, cond, body, .. } => {
            let mut inner = known.clone();
            inner.remove(&name.name);
            map_expr(cond, &mut |x| settle_expr(x, &inner, src));
            map_expr(body, &mut |x| settle_expr(x, &inner, src));
            true
        }
        ExprKind::Quant { bindings, cond, body, .. } => {
            let mut inner = known.clone();
            for b in bindings.iter() {
                inner.remove(&b.name.name);
            }
            for b in bindings.iter() {
                let from_range = b.range.as_ref().is_some_and(|(lo, _)| non_negative(lo, known));
                let guard = cond.as_deref().or(match &body.kind {
                    ExprKind::Binary(BinOp::Implies, g, _) => Some(&**g),
                    _ => None,
                });
                if from_range || guard.is_some_and(|g| lower_bound(g, &b.name.name, known)) {
                    inner.insert(b.name.name.clone());
                }
            }
            for b in bindings.iter_mut() {
                if let Some((lo, hi)) = &mut b.range {
                    map_expr(lo, &mut |x| settle_expr(x, known, src));
                    map_expr(hi, &mut |x| settle_expr(x, known, src));
                }
            }
            if let Some(c) = cond {
                map_expr(c, &mut |x| settle_expr(x, &inner, src));
            }
            map_expr(body, &mut |x| settle_expr(x, &inner, src));
            true
        }
        _ => false,
    }
}

/// A conjunct of `g` bounds `var` below by a non-negative value (`0 <= j`, `j >= lo`).
fn lower_bound(g: &Expr, var: &str, known: &HashSet<String>) -> bool {
    match &g.kind {
        ExprKind::Binary(BinOp::And, a, b) => {
            lower_bound(a, var, known) || lower_bound(b, var, known)
        }
        ExprKind::Binary(op @ (BinOp::Le | BinOp::Lt | BinOp::Ge | BinOp::Gt), a, b) => {
            let (lo, x) = if matches!(op, BinOp::Le | BinOp::Lt) { (a, b) } else { (b, a) };
            x.as_name() == Some(var) && non_negative(lo, known)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::ast::*;

    /// The division operators of `src`'s expressions, in source order.
    fn ops(src: &str) -> Vec<BinOp> {
        let mut p = super::super::parse_cuda(src);
        assert!(!p.has_errors(), "{:?}", p.diagnostics);
        let mut out: Vec<(usize, BinOp)> = Vec::new();
        crate::visit::map_program(&mut p.program, &mut |e| {
            if let ExprKind::Binary(op, _, _) = &e.kind {
                if op.is_division() {
                    out.push((e.span.start(), *op));
                }
            }
            false
        });
        out.sort_by_key(|(at, _)| *at);
        out.into_iter().map(|(_, op)| op).collect()
    }

    #[test]
    fn a_dividend_that_may_be_negative_truncates() {
        let src = "/*@ requires y != 0; @*/\nint f(int x, int y) { return x / y + x % y; }\n";
        assert_eq!(ops(src), [BinOp::TruncDiv, BinOp::TruncMod]);
    }

    #[test]
    fn counters_indices_and_unsigned_values_keep_the_euclidean_form() {
        let src = "/*@ requires n > 0; @*/\n\
            void g(int *a, unsigned u, int n) {\n\
              for (int i = 0; i < 10; i++) { a[i % 4] = i / 2 + u / 3; }\n\
              int t = threadIdx.x + blockIdx.x * blockDim.x;\n\
              int q = t / 32;\n\
            }\n";
        assert_eq!(ops(src), [BinOp::Mod, BinOp::Div, BinOp::Div, BinOp::Div]);
    }

    #[test]
    fn a_local_that_may_become_negative_or_hides_a_parameter_truncates() {
        let src = "/*@ requires true; @*/\n\
            void h(int x) {\n\
              int k = 0;\n\
              k -= 1;\n\
              int a = k / 2;\n\
              { int x = 5; }\n\
              int b = x / 2;\n\
            }\n";
        assert_eq!(ops(src), [BinOp::TruncDiv, BinOp::TruncDiv]);
    }

    #[test]
    fn quantified_variables_bounded_below_and_euclidean_builtins() {
        let src = "/*@\n\
              context \\pointer(a, n, write);\n\
              ensures (\\forall int j; 0 <= j && j < n; a[j / 2] == j % 2);\n\
              ensures (\\forall int j; j < n; j / 2 < n);\n\
              ensures \\result == \\euclidean_div(n - 5, 2) + (n - 5) / 2;\n\
            @*/\n\
            int e(int *a, int n);\n";
        assert_eq!(
            ops(src),
            [BinOp::Div, BinOp::Mod, BinOp::TruncDiv, BinOp::Div, BinOp::TruncDiv]
        );
    }
}
