//! Front end: lexing, parsing, the syntax tree, the canonical printer and the front checks.

pub mod ast;
pub mod ast_comp;
pub mod ast_ops;
pub mod cuda;
pub mod dialect;
pub mod iteration;
pub mod keywords;
pub mod lexer;
pub mod lint;
pub mod merge;
pub mod parser;
pub mod prec;
pub mod printer;
pub mod span;
pub mod visit;
pub mod worker;

pub use cuda::{looks_like_cuda, parse_cuda};
pub use dialect::{Dialect, DialectChoice};
pub use parser::annot::OperandReader;
pub use parser::{
    parse, parse_file_for_verification, parse_for_verification, ParseOptions, Parsed,
};
pub use span::Span;
pub use worker::dispose;
