//! Front end: lexing, parsing, the syntax tree, the canonical printer and the front checks.

// Refusals carry whole diagnostics in `Err` (the cold path); AST enums keep large variants
// inline. Boxing them would only add noise (the same allowance as every crate of the workspace).
#![allow(clippy::result_large_err, clippy::large_enum_variant)]

pub mod ast;
pub mod ast_comp;
pub mod ast_ops;
pub mod cuda;
pub mod dialect;
pub mod exprtext;
pub mod iteration;
pub mod keywords;
pub mod lexer;
pub mod lint;
pub mod merge;
pub mod parser;
pub mod prec;
pub mod printer;
pub mod visit;
pub mod worker;

pub use diag::span;

pub use cuda::{looks_like_cuda, parse_cuda};
pub use dialect::{Dialect, DialectChoice};
pub use parser::annot::OperandReader;
pub use parser::{
    parse, parse_file_for_verification, parse_for_verification, ParseOptions, Parsed,
};
pub use span::Span;
pub use worker::dispose;
