//! Shared memory in C input: `__shared__ T buf[N];` and `extern __shared__ T buf[];` (and
//! OpenCL's `local` parameters, `mod.rs`) as an allocation of the block (`lower.rs` hoists it
//! out of the threads).

use super::convert::{Body, Conv};
use crate::ast::*;
use crate::span::Span;
use lang_c::ast as c;
use lang_c::span::Node;

impl Conv<'_> {
    /// `__shared__ T buf[N];`: memory of the thread block, allocated by the block with unknown
    /// contents (`T[] buf = cuda_shared_T(N);`, an allocator [`super::lower`] declares and
    /// hoists out of the threads). Only one-dimensional arrays of a known extent.
    pub(super) fn shared_decl(&mut self, d: &Node<c::Declaration>, span: Span, out: &mut Body) {
        let base = self.base_type(&d.node.specifiers, span);
        let [id] = d.node.declarators.as_slice() else {
            out.stmts.push(self.opaque_stmt("__shared__", span));
            return;
        };
        let (name, t) = self.declarator(&base, &id.node.declarator);
        let (Some(name), TypeKind::Array(elem, n), None) = (name, &t.kind, &id.node.initializer)
        else {
            out.stmts.push(self.opaque_stmt("__shared__", span));
            return;
        };
        // `extern __shared__ T buf[];`: dynamic shared memory, whose size the launch gives
        // (`\shared_mem_size(buf)` in the contract).
        let len = match n {
            Some(n) => (**n).clone(),
            None => dynamic_size(&name.name, span),
        };
        match shared_alloc(name, elem, len, t.span, self.sp(id.span), span) {
            Some(s) => out.stmts.push(s),
            None => out.stmts.push(self.opaque_stmt("__shared__", span)),
        }
    }
}

/// The size of dynamic shared memory `buf` (`\shared_mem_size(buf)`), a launch parameter of the
/// kernel form (see `lower::kernel`).
pub(super) fn dynamic_size(buf: &str, span: Span) -> Expr {
    let n = format!("{buf}{}", super::SHARED_SIZE);
    Expr::new(ExprKind::Name(Ident::new(n, span)), span)
}

/// `T[] buf = cuda_shared_T(len);`: the block's allocation of shared array `buf` (of ints or
/// booleans; `None` for another element type).
pub(super) fn shared_alloc(
    name: Ident,
    elem: &Type,
    len: Expr,
    ty_span: Span,
    decl_span: Span,
    span: Span,
) -> Option<Stmt> {
    let word = match elem.kind {
        TypeKind::Int => "int",
        TypeKind::Boolean => "boolean",
        _ => return None,
    };
    let alloc = format!("{}{word}", super::SHARED_ALLOC);
    let call = Expr::new(
        ExprKind::Call {
            recv: None,
            name: Ident::new(alloc, span),
            args: vec![len],
            ghost: Box::default(),
            null_safe: false,
        },
        span,
    );
    let ty = Type { kind: TypeKind::Array(Box::new(elem.clone()), None), span: ty_span };
    let var = Declarator { name, init: Some(call), span: decl_span };
    Some(Stmt { kind: StmtKind::Decl { ty, vars: vec![var] }, span })
}
