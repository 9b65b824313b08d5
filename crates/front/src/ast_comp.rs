//! Syntax tree parts for comprehensions, kept apart from `ast.rs` to keep that file readable.

use super::ast::{Expr, Ident, Type};
use super::span::Span;

/// `set<T> {body | T x <- source, T y; cond}`: the set of `body` over the generators' values
/// that satisfy `cond`.
#[derive(Clone, Debug, PartialEq)]
pub struct Comprehension {
    pub elem_ty: Type,
    pub body: Expr,
    pub gens: Vec<Generator>,
    pub cond: Option<Expr>,
}

/// `T x` (every value of `T`) or `T x <- source` (the elements of a collection).
#[derive(Clone, Debug, PartialEq)]
pub struct Generator {
    pub ty: Type,
    pub name: Ident,
    pub source: Option<Expr>,
    pub span: Span,
}
