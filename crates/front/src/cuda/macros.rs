//! Function-like macros and CUDA's integer `min`/`max`/`abs`, as kernels use them in index
//! arithmetic (`#define IDX(r, c) ((r) * W + (c))`, `min(a[t], 10)`).
//!
//! alpine-rs runs no preprocessor: a macro whose body is an expression is read as that
//! expression with its parameters replaced by the arguments, in code and in annotations; any
//! other body (statements, token pasting, a continued line) keeps the A0015 warning and its
//! uses stay calls to an undeclared function, which the oracles refuse by name. The nodes that
//! come from the body carry the span of the use, so that a diagnostic or an edit points at the
//! text the user wrote, never into the `#define` line.

use super::convert::Conv;
use crate::ast::*;
use crate::span::Span;
use crate::visit::map_expr;

/// A function-like macro whose body parsed as an expression.
#[derive(Clone, Debug)]
pub(super) struct FnMacro {
    pub params: Vec<String>,
    pub body: Expr,
    /// The body is parenthesized or primary: no operator around a use can split it.
    pub closed: bool,
    /// Per parameter: some use in the body is not delimited (`x * x` rather than `(x) * (x)`),
    /// so an argument with an operator would be split by the body's operators.
    pub loose: Vec<bool>,
}

impl FnMacro {
    /// The macro `#define NAME(params) text`, `body` its text parsed.
    pub(super) fn new(params: Vec<String>, text: &str, body: Expr) -> FnMacro {
        let loose = params.iter().map(|p| loose_param(text, p)).collect();
        FnMacro { closed: closed(text, &body), params, body, loose }
    }
}

/// The text of a macro body reads as one operand wherever it is pasted: wrapped in one pair of
/// parentheses, or a primary expression (a name, a literal, a call, an index).
pub(super) fn closed(text: &str, body: &Expr) -> bool {
    let t = text.trim();
    if t.starts_with('(') {
        let mut depth = 0i32;
        for (k, c) in t.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return k + 1 == t.len();
                    }
                }
                _ => {}
            }
        }
        return false;
    }
    primary(body)
}

/// An expression no neighbouring operator can split.
fn primary(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Unary(UnOp::Neg, x) => matches!(x.kind, ExprKind::Int(_)),
        k => matches!(
            k,
            ExprKind::Name(_)
                | ExprKind::Int(_)
                | ExprKind::Bool(_)
                | ExprKind::Null
                | ExprKind::Call { .. }
                | ExprKind::Index(..)
                | ExprKind::Field(..)
        ),
    }
}

/// Some use of `param` in `text` is not between `(`/`[`/`,` and `)`/`]`/`,`.
fn loose_param(text: &str, param: &str) -> bool {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut k = 0;
    while let Some(off) = text[k..].find(param) {
        let (lo, hi) = (k + off, k + off + param.len());
        k = hi;
        if (lo > 0 && ident(b[lo - 1])) || (hi < b.len() && ident(b[hi])) {
            continue;
        }
        let before = text[..lo].trim_end().bytes().last();
        let after = text[hi..].trim_start().bytes().next();
        let open = matches!(before, Some(b'(' | b'[' | b','));
        let close = matches!(after, Some(b')' | b']' | b','));
        if !(open && close) {
            return true;
        }
    }
    false
}

/// How deep macros may expand into one another (a recursive macro stops here, unexpanded).
const MAX_DEPTH: usize = 16;

impl Conv<'_> {
    /// The expansion of `name(args)` where `name` is a function-like macro taking as many
    /// arguments, or one of CUDA's integer `min`/`max`/`abs` that the file does not define.
    pub(super) fn expand_call(&self, name: &str, args: &[Expr], span: Span) -> Option<Expr> {
        self.expand_at(name, args, span, 0)
    }

    fn expand_at(&self, name: &str, args: &[Expr], span: Span, depth: usize) -> Option<Expr> {
        if depth > MAX_DEPTH {
            return None;
        }
        if let Some(m) = self.fn_macros.get(name) {
            if m.params.len() != args.len() {
                return None;
            }
            // The preprocessor pastes text: where the tree would group differently from the
            // pasted text, refuse by name rather than read another expression.
            if !m.closed {
                let what = format!("the macro `{name}`, whose body is not parenthesized");
                return Some(self.opaque_expr(&what, span));
            }
            if let Some(k) = (0..args.len()).find(|k| m.loose[*k] && !primary(&args[*k])) {
                let p = &m.params[k];
                let what = format!("an argument with an operator for `{p}` of the macro `{name}`, which its body does not parenthesize");
                return Some(self.opaque_expr(&what, span));
            }
            let mut body = m.body.clone();
            // Body nodes first take the use's span; arguments keep their own.
            map_expr(&mut body, &mut |x| {
                x.span = span;
                false
            });
            map_expr(&mut body, &mut |x| self.substitute(x, &m.params, args, span, depth));
            return Some(Expr { span, ..body });
        }
        if self.functions.contains(name) || args.iter().any(has_effect) {
            return None;
        }
        integer_builtin(name, args, span)
    }

    /// One node of a body: a parameter is its argument, an object-like `#define` its value, a
    /// nested macro use its expansion.
    fn substitute(
        &self,
        x: &mut Expr,
        params: &[String],
        args: &[Expr],
        span: Span,
        depth: usize,
    ) -> bool {
        match &mut x.kind {
            ExprKind::Name(n) => {
                if let Some(k) = params.iter().position(|p| *p == n.name) {
                    *x = args[k].clone();
                    return true;
                }
                if let Some(v) = self.defines.get(&n.name) {
                    *x = Expr { span, ..v.clone() };
                    return true;
                }
                false
            }
            ExprKind::Call { recv: None, name, args: inner, .. } => {
                let callee = name.name.clone();
                for a in inner.iter_mut() {
                    map_expr(a, &mut |y| self.substitute(y, params, args, span, depth));
                }
                if let Some(e) = self.expand_at(&callee, inner, span, depth + 1) {
                    *x = e;
                }
                true
            }
            _ => false,
        }
    }

    /// The same for a use inside an annotation (read by the specification parser): `true`
    /// where `e` was replaced.
    pub(super) fn expand_in_annotation(&self, e: &mut Expr) -> bool {
        let ExprKind::Call { recv: None, name, args, ghost, .. } = &mut e.kind else {
            return false;
        };
        // A macro, or one of CUDA's and math.h's functions read as expressions (`floor(x)` in
        // an assertion).
        let builtin = integer_builtin(&name.name, args, e.span).is_some();
        if !(self.fn_macros.contains_key(&name.name) || builtin) || !ghost_is_empty(ghost) {
            return false;
        }
        let callee = name.name.clone();
        for a in args.iter_mut() {
            map_expr(a, &mut |y| self.define_or_macro(y));
        }
        match self.expand_call(&callee, args, e.span) {
            Some(x) => {
                *e = x;
                true
            }
            None => false,
        }
    }

    /// An object-like `#define` or a macro use, in an annotation.
    pub(super) fn define_or_macro(&self, e: &mut Expr) -> bool {
        self.define_value(e) || self.expand_in_annotation(e)
    }
}

fn ghost_is_empty(g: &GhostArgs) -> bool {
    *g == GhostArgs::default()
}

/// `min(a, b)`, `max(a, b)` (and their unsigned and 64-bit spellings), `abs(x)`: CUDA's device
/// functions on integers, as conditionals; and their float forms `fminf`/`fmin`, `fmaxf`/`fmax`,
/// `fabsf`/`fabs`, `floor`/`ceil`, exact on the real numbers floats are verified as (NaN, which
/// they would skip, is not modelled: V-FLOAT-REAL says so).
fn integer_builtin(name: &str, args: &[Expr], span: Span) -> Option<Expr> {
    let cond = |c: Expr, a: &Expr, b: &Expr| {
        Expr::new(ExprKind::Cond(Box::new(c), Box::new(a.clone()), Box::new(b.clone())), span)
    };
    match (name, args) {
        ("min" | "umin" | "llmin" | "ullmin" | "fminf" | "fmin", [a, b]) => {
            Some(cond(Expr::bin(BinOp::Le, a.clone(), b.clone()), a, b))
        }
        ("max" | "umax" | "llmax" | "ullmax" | "fmaxf" | "fmax", [a, b]) => {
            Some(cond(Expr::bin(BinOp::Ge, a.clone(), b.clone()), a, b))
        }
        ("abs" | "llabs" | "fabsf" | "fabs", [a]) => {
            let neg = Expr::new(ExprKind::Unary(UnOp::Neg, Box::new(a.clone())), span);
            Some(cond(Expr::bin(BinOp::Lt, a.clone(), Expr::int(0)), &neg, a))
        }
        // `floor(a)`: the truncation, one less where it lies above `a`; `ceil`, one more where
        // it lies below. A float again; exact within the range of `int`.
        ("floor" | "floorf" | "ceil" | "ceilf", [a]) => {
            let t = super::casts::truncated(a.clone(), span);
            let up = name.starts_with("ceil");
            let (op, step) = if up { (BinOp::Le, BinOp::Add) } else { (BinOp::Ge, BinOp::Sub) };
            let moved = Expr::bin(step, t.clone(), Expr::int(1));
            let pick = cond(Expr::bin(op, a.clone(), t.clone()), &t, &moved);
            Some(super::casts::as_float(pick, span))
        }
        _ => None,
    }
}

/// The expression calls something (an atomic, a function): evaluating it twice, as a
/// conditional of `min` would, is not what the program does.
fn has_effect(e: &Expr) -> bool {
    crate::visit::any_expr(e, &mut |x| matches!(x.kind, ExprKind::Call { .. }))
}

/// An object-like macro whose value is not closed (`#define N 2 + 2`): opaque, named.
pub(super) fn unclosed_value(name: &str, text: &str, span: Span) -> Expr {
    Expr::new(
        ExprKind::Opaque(Opaque {
            keyword: format!("the macro `{name}`, whose value is not parenthesized"),
            text: text.to_string(),
            span,
        }),
        span,
    )
}

/// The warning for a function-like macro whose body is not an expression.
pub(super) fn not_an_expression(span: Span) -> diag::Diagnostic {
    diag::Diagnostic::warning("A0015", "preprocessor directive not evaluated")
        .with_primary(span, "ignored: the body of this macro is not an expression alpine-rs reads")
        .with_help("alpine-rs does not run the preprocessor; expand this macro by hand where the kernel uses it")
}

#[cfg(test)]
mod tests {
    use crate::dialect::Dialect;

    fn pvl(src: &str) -> (String, Vec<String>) {
        let p = super::super::parse_cuda(src);
        let codes = p.diagnostics.iter().map(|d| d.code.to_string()).collect();
        (crate::printer::print_program(&p.program, Dialect::V2), codes)
    }

    #[test]
    fn expression_macros_expand_in_code_and_contracts() {
        let src = "#define W 4\n#define AT(r, c) ((r) * W + (c))\n#define TWICE(x) (AT(0, x) + AT(0, x))\n\
                   //@ requires i >= 0;\n//@ ensures \\result == AT(i, 1);\n\
                   int f(int i) { return AT(i, 1) + TWICE(0) - min(i, 0) - max(0, 0); }\n";
        let (text, codes) = pvl(src);
        assert!(codes.is_empty(), "{codes:?}\n{text}");
        assert!(text.contains("ensures \\result == i * 4 + 1;"), "{text}");
        assert!(text.contains("return i * 4 + 1 + (0 * 4 + 0 + (0 * 4 + 0))"), "{text}");
        assert!(text.contains("(i <= 0 ? i : 0)"), "{text}");
    }

    #[test]
    fn statement_macros_and_wrong_arity_are_left_unexpanded() {
        let src = "#define SWAP(a, b) { int t = a; a = b; b = t; }\n#define ONE(x) (x)\n\
                   int f(int i) { return ONE(i, i); }\n";
        let (text, codes) = pvl(src);
        assert_eq!(codes, ["A0015"], "{text}");
        assert!(text.contains("ONE(i, i)"), "{text}");
    }

    #[test]
    fn macros_that_paste_differently_from_the_tree_are_refused_by_name() {
        let src = "#define N 2 + 2\n#define SQ(x) (x * x)\n#define DOUBLE(x) (x) + (x)\n\
                   int f(int a) { return N * 2 + SQ(a + 1) + SQ(a) + 3 * DOUBLE(a); }\n";
        let mut p = super::super::parse_cuda(src);
        let mut refused = Vec::new();
        crate::visit::map_program(&mut p.program, &mut |e| {
            if let crate::ast::ExprKind::Opaque(o) = &e.kind {
                refused.push(o.keyword.clone());
            }
            false
        });
        assert_eq!(
            refused,
            [
                "the macro `N`, whose value is not parenthesized",
                "an argument with an operator for `x` of the macro `SQ`, which its body does not parenthesize",
                "the macro `DOUBLE`, whose body is not parenthesized"
            ]
        );
        let text = crate::printer::print_program(&p.program, Dialect::V2);
        assert!(text.contains("a * a"), "{text}");
    }

    #[test]
    fn integer_builtins_are_not_duplicated_over_calls_or_redefined() {
        let src = "int g(int x);\nint min(int a, int b);\n\
                   int f(int i) { return max(g(i), 0) + min(i, 1); }\n";
        let (text, _) = pvl(src);
        assert!(text.contains("max(g(i), 0)") && text.contains("min(i, 1)"), "{text}");
    }
}
