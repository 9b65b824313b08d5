//! Text-level rewriting of expressions: copy an expression's source text while replacing some of
//! its sub-expressions (pvl.md §9.2: copied code keeps its original spelling).
//!
//! The callback sees every node together with a flag saying whether the node stands in a
//! *delimited* position (an index, a call or builtin argument, a quantifier body, a statement
//! root), where a compound replacement needs no parentheses. Elsewhere the caller should wrap
//! compound replacements in parentheses ([`paren`]).

use crate::ast::*;
use crate::span::Span;
use crate::visit::for_each_child;
use num_bigint::BigInt;
use std::collections::BTreeMap;

/// The direct sub-expressions of `e`, each with its "delimited position" flag.
pub fn children(e: &Expr) -> Vec<(&Expr, bool)> {
    let mut out = Vec::new();
    for_each_child(e, &mut |c, delimited| out.push((c, delimited)));
    out
}

/// Callback type: `Some(text)` replaces the node (its children are not visited).
pub type Replacer<'a> = dyn FnMut(&Expr, bool) -> Option<String> + 'a;

/// Collect the replacements `f` asks for inside `e` (pre-order, no descent below a replacement).
pub fn collect(e: &Expr, delimited: bool, f: &mut Replacer, out: &mut Vec<(Span, String)>) {
    if let Some(t) = f(e, delimited) {
        out.push((e.span, t));
        return;
    }
    for (c, d) in children(e) {
        collect(c, d, f, out);
    }
}

/// Splice replacements (non-overlapping, inside `span`) into the text of `span`.
pub fn splice(src: &str, span: Span, mut reps: Vec<(Span, String)>) -> String {
    reps.sort_by_key(|(s, _)| s.start());
    let mut out = String::new();
    let mut pos = span.start();
    for (s, t) in reps {
        if s.start() < pos || s.end() > span.end() {
            continue; // overlapping or outside: cannot happen for a tree walk; skip defensively
        }
        out.push_str(&src[pos..s.start()]);
        out.push_str(&t);
        pos = s.end();
    }
    out.push_str(&src[pos..span.end()]);
    out
}

/// The text of `e` with the replacements asked for by `f`; `e` itself stands delimited.
pub fn rewrite(src: &str, e: &Expr, f: &mut Replacer) -> String {
    let mut reps = Vec::new();
    collect(e, true, f, &mut reps);
    splice(src, e.span, reps)
}

/// Whether the source text of `e` can be used as an operand without parentheses.
pub fn is_atomic(src: &str, e: &Expr) -> bool {
    use ExprKind as K;
    match &e.kind {
        K::Int(_) | K::Bool(_) | K::Name(_) | K::Null | K::This | K::Result => true,
        K::Index(..)
        | K::Field(..)
        | K::Length(..)
        | K::Call { .. }
        | K::Builtin(..)
        | K::Old(..) => true,
        _ => e.span.text(src).starts_with('('),
    }
}

/// `text` wrapped in parentheses unless it is a plain word, number or already bracketed call.
pub fn paren(text: &str) -> String {
    let t = text.trim();
    let simple = t.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        || (t.starts_with('(') && balanced_outer(t));
    if simple {
        t.to_string()
    } else {
        format!("({t})")
    }
}

/// Whether the parentheses opening `t` close at its very end.
fn balanced_outer(t: &str) -> bool {
    let mut depth = 0i32;
    for (i, c) in t.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 && i + 1 != t.len() {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

/// Does `e` mention the (free) variable `name`?
pub fn mentions(e: &Expr, name: &str) -> bool {
    let mut found = false;
    let mut f = |x: &Expr, _d: bool| -> Option<String> {
        match &x.kind {
            ExprKind::Name(id) if id.name == name => {
                found = true;
                Some(String::new())
            }
            ExprKind::Quant { bindings, .. } if bindings.iter().any(|b| b.name.name == name) => {
                Some(String::new())
            }
            _ => None,
        }
    };
    let mut sink = Vec::new();
    collect(e, true, &mut f, &mut sink);
    found
}

/// Text of `e` with the free variable `name` replaced by `with` (parenthesised where needed).
pub fn subst_var(src: &str, e: &Expr, name: &str, with: &str) -> String {
    let mut f = subst_fn(src, name, with);
    rewrite(src, e, &mut f)
}

/// The replacer used by [`subst_var`] (quantifiers that rebind `name` are copied unchanged).
pub fn subst_fn<'a>(
    src: &'a str,
    name: &'a str,
    with: &'a str,
) -> impl FnMut(&Expr, bool) -> Option<String> + 'a {
    move |x: &Expr, delimited: bool| match &x.kind {
        ExprKind::Name(id) if id.name == name => {
            Some(if delimited { with.to_string() } else { paren(with) })
        }
        ExprKind::Quant { bindings, .. } if bindings.iter().any(|b| b.name.name == name) => {
            Some(x.span.text(src).to_string())
        }
        _ => None,
    }
}

/// A plain printing of an expression that has no usable span in the current text (e.g. a
/// parameter taken from a consumed annotation). Covers the forms a size or an extent takes;
/// anything else is parenthesised structurally, never lost.
pub fn print_simple(e: &Expr) -> String {
    use ExprKind as K;
    let op = |x: &Expr| {
        let t = print_simple(x);
        match &x.kind {
            K::Binary(..) | K::Cond(..) | K::Unary(..) => format!("({t})"),
            _ => t,
        }
    };
    match &e.kind {
        K::Int(v) => v.to_string(),
        K::Bool(b) => b.to_string(),
        K::Name(id) => id.name.clone(),
        K::Null => "null".into(),
        K::This => "this".into(),
        K::Unary(UnOp::Neg, x) => format!("-{}", op(x)),
        K::Unary(UnOp::Not, x) => format!("!{}", op(x)),
        K::Binary(o, l, r) => format!("{} {} {}", op(l), o.symbol(), op(r)),
        K::Cond(a, b, c) => format!("{} ? {} : {}", op(a), op(b), op(c)),
        K::Field(x, f) => format!("{}.{}", op(x), f.name),
        K::Length(x) => format!("{}.length", op(x)),
        K::Index(a, i) => format!("{}[{}]", op(a), print_simple(i)),
        K::Old(x, _) => format!("\\old({})", print_simple(x)),
        K::Call { recv, name, args, .. } => {
            let args: Vec<String> = args.iter().map(print_simple).collect();
            match recv {
                Some(r) => format!("{}.{}({})", op(r), name.name, args.join(", ")),
                None => format!("{}({})", name.name, args.join(", ")),
            }
        }
        _ => format!("{e:?}"),
    }
}

/// `e` with the names of `map` replaced by their expressions (which are not substituted again).
/// None for a form it does not rewrite: it handles literals, names, unary and
/// binary operators, conditionals, fields, indices, calls without ghost arguments and `|s|`.
pub fn subst_names(e: &Expr, map: &BTreeMap<String, Expr>) -> Option<Expr> {
    use ExprKind as K;
    let b = |x: &Expr| subst_names(x, map).map(Box::new);
    let kind = match &e.kind {
        K::Int(_) | K::Bool(_) | K::Null | K::This => e.kind.clone(),
        K::Name(id) => return Some(map.get(&id.name).cloned().unwrap_or_else(|| e.clone())),
        K::Unary(o, x) => K::Unary(*o, b(x)?),
        K::Binary(o, l, r) => K::Binary(*o, b(l)?, b(r)?),
        K::Cond(c, x, y) => K::Cond(b(c)?, b(x)?, b(y)?),
        K::Field(x, f) => K::Field(b(x)?, f.clone()),
        K::Index(x, i) => K::Index(b(x)?, b(i)?),
        K::Call { recv, name, args, ghost, null_safe } if ghost.is_empty() => K::Call {
            recv: match recv {
                Some(r) => Some(b(r)?),
                None => None,
            },
            name: name.clone(),
            args: args.iter().map(|a| subst_names(a, map)).collect::<Option<_>>()?,
            ghost: ghost.clone(),
            null_safe: *null_safe,
        },
        K::Length(x) => K::Length(b(x)?),
        _ => return None,
    };
    Some(Expr::new(kind, e.span))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::parse_expr_text;
    use crate::Dialect;

    #[test]
    fn substitution_parenthesises_operands() {
        let src = "5 * t - 2 + a[t] + f(t)";
        let e = parse_expr_text(src, Dialect::V1).unwrap();
        assert_eq!(
            subst_var(src, &e, "t", "t + x * 4"),
            "5 * (t + x * 4) - 2 + a[t + x * 4] + f(t + x * 4)"
        );
    }

    #[test]
    fn paren_keeps_simple_text() {
        assert_eq!(paren("n"), "n");
        assert_eq!(paren("(a + b)"), "(a + b)");
        assert_eq!(paren("(a) + (b)"), "((a) + (b))");
        assert_eq!(paren("a + b"), "(a + b)");
    }
}

/// The exact value of a decimal floating literal (`1.5`, `0.5f`, `2.`, `.25`, `1e-3`, `3.0L`) as
/// numerator and denominator; `None` for anything else (hexadecimal floats included).
pub fn decimal(text: &str) -> Option<(BigInt, BigInt)> {
    let t = text.trim().trim_end_matches(['f', 'F', 'l', 'L']);
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
        None => (t, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty()
        || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit())
        || !(t.contains('.') || t.contains(['e', 'E']))
    {
        return None;
    }
    let digits: BigInt = format!("{int}{frac}0").parse::<BigInt>().ok()? / 10;
    let scale = exp - i32::try_from(frac.len()).ok()?;
    let ten = BigInt::from(10);
    let (num, den) = if scale >= 0 {
        (digits * ten.pow(scale.unsigned_abs()), BigInt::from(1))
    } else {
        (digits, ten.pow(scale.unsigned_abs()))
    };
    let g = num_integer::Integer::gcd(&num, &den);
    if g == BigInt::from(0) {
        return Some((num, den));
    }
    Some((num / &g, den / g))
}

/// The floating literal an expression is (both front ends keep one as text): its exact value.
pub fn float_literal(e: &Expr) -> Option<(BigInt, BigInt)> {
    match &e.kind {
        ExprKind::Opaque(o) if o.keyword.ends_with("literal") => decimal(&o.text),
        _ => None,
    }
}

#[cfg(test)]
mod float_tests {
    use super::decimal;

    fn d(s: &str) -> Option<(i64, i64)> {
        decimal(s).map(|(n, d)| (n.try_into().unwrap(), d.try_into().unwrap()))
    }

    #[test]
    fn decimal_literals_are_exact_fractions() {
        assert_eq!(d("1.5"), Some((3, 2)));
        assert_eq!(d("0.5f"), Some((1, 2)));
        assert_eq!(d("0.510000"), Some((51, 100)));
        assert_eq!(d("2."), Some((2, 1)));
        assert_eq!(d(".25"), Some((1, 4)));
        assert_eq!(d("1e-3"), Some((1, 1000)));
        assert_eq!(d("2.5E2"), Some((250, 1)));
        assert_eq!(d("0.0"), Some((0, 1)));
        assert_eq!(d("12"), None);
        assert_eq!(d("0x1.8p1"), None);
        assert_eq!(d("'a'"), None);
        assert_eq!(d("."), None);
    }
}
