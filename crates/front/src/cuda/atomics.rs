//! CUDA's atomic functions as read-modify-writes of one cell, in an `atomic` block over the
//! kernel's resource invariant (VerCors' reading; `lower.rs` unwraps the block into a plain
//! update, which then needs write permission, in a kernel without one).
//!
//! Each returns the cell's old value: `int old = atomicAdd(&c[0], 1);` or `old = atomicCAS(p,
//! 0, 1);` reads the cell into the variable inside the same atomic step, before the update.
//! `atomicAdd/Sub/Exch/Min/Max/CAS/Inc/Dec` on integers are read; the bitwise ones
//! (`atomicAnd/Or/Xor`) stay calls of undeclared functions, refused by name.

use super::convert::Conv;
use crate::ast::*;
use crate::span::Span;
use lang_c::ast as c;
use lang_c::span::Node;

/// The atomic functions this module reads, with their numbers of arguments.
const ATOMICS: &[(&str, usize)] = &[
    ("atomicAdd", 2),
    ("atomicSub", 2),
    ("atomicExch", 2),
    ("atomicMin", 2),
    ("atomicMax", 2),
    ("atomicCAS", 3),
    ("atomicInc", 2),
    ("atomicDec", 2),
];

/// `e` is a call by name: its callee and the call.
pub(super) fn atomic_call(e: &Node<c::Expression>) -> Option<(&str, &Node<c::CallExpression>)> {
    let c::Expression::Call(call) = &e.node else { return None };
    let c::Expression::Identifier(id) = &call.node.callee.node else { return None };
    Some((id.node.name.as_str(), call))
}

impl Conv<'_> {
    /// `name` is one of CUDA's atomic functions (the file defines no function of that name),
    /// called with its number of arguments.
    pub(super) fn is_atomic(&self, name: &str, call: &Node<c::CallExpression>) -> bool {
        !self.functions.contains(name)
            && ATOMICS.iter().any(|(n, k)| *n == name && *k == call.node.arguments.len())
    }

    /// The atomic step of `name(args)`; with a `result`, the step first stores the cell's old
    /// value there. `None` where `name` is no atomic function this module reads.
    pub(super) fn atomic(
        &mut self,
        name: &str,
        call: &Node<c::CallExpression>,
        span: Span,
        result: Option<Expr>,
    ) -> Option<Stmt> {
        if !self.is_atomic(name, call) {
            return None;
        }
        let args = &call.node.arguments;
        let loc = self.location(&args[0]).ok()?;
        let v = self.expr(&args[1]).ok()?;
        let assign = |target: &Expr, value: Expr| Stmt {
            kind: StmtKind::Assign { target: target.clone(), value },
            span,
        };
        let cond = |c: Expr, then: Stmt, els: Option<Stmt>| StmtKind::If {
            cond: c,
            then: Box::new(then),
            els: els.map(Box::new),
        };
        let bin = |op: BinOp, a: &Expr, b: &Expr| {
            Expr::new(ExprKind::Binary(op, Box::new(a.clone()), Box::new(b.clone())), span)
        };
        let kind = match name {
            "atomicAdd" => {
                StmtKind::CompoundAssign { target: loc.clone(), op: CompoundOp::Add, value: v }
            }
            "atomicSub" => {
                StmtKind::CompoundAssign { target: loc.clone(), op: CompoundOp::Sub, value: v }
            }
            "atomicExch" => StmtKind::Assign { target: loc.clone(), value: v },
            // `if (v < *p) *p = v;`: a read and a write of the cell, so it needs write
            // permission (never weaker than the atomic).
            "atomicMin" => cond(bin(BinOp::Lt, &v, &loc), assign(&loc, v.clone()), None),
            "atomicMax" => cond(bin(BinOp::Gt, &v, &loc), assign(&loc, v.clone()), None),
            // `if (*p == compare) *p = val;`
            "atomicCAS" => {
                let val = self.expr(&args[2]).ok()?;
                cond(bin(BinOp::Eq, &loc, &v), assign(&loc, val), None)
            }
            // `*p = *p >= v ? 0 : *p + 1;`
            "atomicInc" => {
                let up = bin(BinOp::Add, &loc, &Expr::int(1));
                cond(bin(BinOp::Ge, &loc, &v), assign(&loc, Expr::int(0)), Some(assign(&loc, up)))
            }
            // `*p = (*p == 0 || *p > v) ? v : *p - 1;`
            _ => {
                let wrap =
                    bin(BinOp::Or, &bin(BinOp::Eq, &loc, &Expr::int(0)), &bin(BinOp::Gt, &loc, &v));
                let down = bin(BinOp::Sub, &loc, &Expr::int(1));
                cond(wrap, assign(&loc, v.clone()), Some(assign(&loc, down)))
            }
        };
        let mut stmts: Vec<Stmt> = result.iter().map(|r| assign(r, loc.clone())).collect();
        stmts.push(Stmt { kind, span });
        stmts.extend(self.then_block(self.sp(call.span).end(), span.end()));
        let body = Block { stmts, span };
        let names = vec![Ident::synth(super::KERNEL_INVARIANT)];
        Some(Stmt { kind: StmtKind::Atomic { names, body }, span })
    }

    /// The memory cell an atomic's pointer argument names: `&a[i]`, `a + i`, `a`.
    pub(super) fn location(&mut self, e: &Node<c::Expression>) -> Result<Expr, ()> {
        let span = self.sp(e.span);
        match &e.node {
            c::Expression::UnaryOperator(u)
                if u.node.operator.node == c::UnaryOperator::Address =>
            {
                self.expr(&u.node.operand)
            }
            c::Expression::BinaryOperator(b) if b.node.operator.node == c::BinaryOperator::Plus => {
                let a = self.expr(&b.node.lhs)?;
                let i = self.expr(&b.node.rhs)?;
                Ok(Expr::new(ExprKind::Index(Box::new(a), Box::new(i)), span))
            }
            _ => {
                let a = self.expr(e)?;
                Ok(Expr::new(ExprKind::Index(Box::new(a), Box::new(Expr::int(0))), span))
            }
        }
    }
}
