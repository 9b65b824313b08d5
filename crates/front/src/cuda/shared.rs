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
        // `__shared__ T a[N], b[M];`: one block allocation per array.
        let mut allocs = Vec::new();
        for id in &d.node.declarators {
            let at = self.sp(id.span);
            let (name, t) = self.declarator(&base, &id.node.declarator);
            let why = match (name, &t.kind, &id.node.initializer) {
                (_, _, Some(_)) => "a `__shared__` variable with an initializer",
                (Some(name), TypeKind::Array(elem, n), None)
                    if !matches!(elem.kind, TypeKind::Array(..)) =>
                {
                    // `extern __shared__ T buf[];`: dynamic shared memory, whose size the launch
                    // gives (`\shared_mem_size(buf)` in the contract).
                    let len = match n {
                        Some(n) => (**n).clone(),
                        None => dynamic_size(&name.name, span),
                    };
                    match shared_alloc(name, elem, len, t.span, at, span) {
                        Some(s) => {
                            allocs.push(s);
                            continue;
                        }
                        None => "a `__shared__` array of this element type",
                    }
                }
                (_, TypeKind::Array(..), None) => {
                    "a `__shared__` array of several dimensions (declare it with one, `T s[N * M]`, and index `s[i * M + j]`)"
                }
                _ => "a `__shared__` scalar (declare an array of one cell, `T s[1]`, and use `s[0]`)",
            };
            // Said at the declaration: the variable would otherwise be unknown to every later
            // use, which blames the user's names instead of this construct.
            self.unsupported(why, at);
            out.stmts.push(self.opaque_stmt("__shared__", span));
            return;
        }
        out.stmts.extend(allocs);
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
        TypeKind::Float32 => "float",
        TypeKind::Float64 => "double",
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
