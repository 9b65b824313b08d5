//! Integer linear forms over opaque terms, used to print readable per-cell guards.
//!
//! When the amount of permission a kernel leaves on a cell depends on whether another kernel's
//! pattern reaches that cell, the fused contract needs a guard saying so: "thread `t2` with
//! `f(t2) == x` exists". For an index that is linear in the thread variable with a literal
//! coefficient, `t2` is `(x - r) / k`; substituting it into the other pattern's range and
//! guards gives that guard without a quantifier. This module does the arithmetic on text so the
//! guards come out as `t < n - 1` rather than `0 <= (t + 1) - 1 && …`.

use front::ast::*;
use front::exprtext::{is_atomic, paren, subst_var};
use front::lexer::{lex, TokKind};
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};

/// `Σ c·term + k`; terms are source texts in order of first appearance.
#[derive(Clone, Debug, PartialEq, Default)]
pub(super) struct Lin {
    terms: Vec<Term>,
    k: BigInt,
}

#[derive(Clone, Debug, PartialEq)]
struct Term {
    text: String,
    /// Usable as an operand of `*` without parentheses.
    atomic: bool,
    c: BigInt,
}

/// A variable to replace while building a form: `name := value`.
pub(super) struct Subst<'a> {
    pub name: &'a str,
    pub value: &'a Lin,
}

impl Lin {
    pub fn konst(k: BigInt) -> Lin {
        Lin { terms: Vec::new(), k }
    }

    /// An opaque term (coefficient 1).
    pub fn opaque(text: &str, atomic: bool) -> Lin {
        Lin {
            terms: vec![Term { text: text.to_string(), atomic, c: BigInt::one() }],
            k: BigInt::zero(),
        }
    }

    /// The form of `e` (whose spans refer to `src`), with an optional substitution applied.
    pub fn of(e: &Expr, src: &str, s: Option<&Subst>) -> Lin {
        use ExprKind as K;
        match &e.kind {
            K::Int(v) => Lin::konst(v.clone()),
            K::Name(id) => match s {
                Some(s) if s.name == id.name => s.value.clone(),
                _ => Lin::opaque(&id.name, true),
            },
            K::Unary(UnOp::Neg, x) => Lin::of(x, src, s).scale(&BigInt::from(-1)),
            K::Binary(BinOp::Add, l, r) => Lin::of(l, src, s).add(&Lin::of(r, src, s)),
            K::Binary(BinOp::Sub, l, r) => Lin::of(l, src, s).sub(&Lin::of(r, src, s)),
            K::Binary(BinOp::Mul, l, r) => {
                let (a, b) = (Lin::of(l, src, s), Lin::of(r, src, s));
                match (a.as_const(), b.as_const()) {
                    (Some(c), _) => b.scale(&c),
                    (_, Some(c)) => a.scale(&c),
                    _ => Lin::opaque_expr(e, src, s),
                }
            }
            _ => Lin::opaque_expr(e, src, s),
        }
    }

    fn opaque_expr(e: &Expr, src: &str, s: Option<&Subst>) -> Lin {
        let text = match s {
            Some(s) => subst_var(src, e, s.name, &s.value.print()),
            None => e.span.text(src).to_string(),
        };
        let atomic = is_atomic(src, e) && s.is_none_or(|s| !has_word(&text, s.name));
        Lin::opaque(text.trim(), atomic)
    }

    pub fn as_const(&self) -> Option<BigInt> {
        self.terms.is_empty().then(|| self.k.clone())
    }

    pub fn scale(&self, c: &BigInt) -> Lin {
        if c.is_zero() {
            return Lin::default();
        }
        Lin {
            terms: self.terms.iter().map(|t| Term { c: &t.c * c, ..t.clone() }).collect(),
            k: &self.k * c,
        }
    }

    pub fn add(&self, o: &Lin) -> Lin {
        let mut out = self.clone();
        for t in &o.terms {
            match out.terms.iter_mut().find(|x| x.text == t.text) {
                Some(x) => x.c += &t.c,
                None => out.terms.push(t.clone()),
            }
        }
        out.terms.retain(|t| !t.c.is_zero());
        out.k += &o.k;
        out
    }

    pub fn sub(&self, o: &Lin) -> Lin {
        self.add(&o.scale(&BigInt::from(-1)))
    }

    /// The form divided by `k`, when every coefficient is a multiple of it.
    pub fn div_exact(&self, k: &BigInt) -> Option<Lin> {
        if k.is_zero()
            || !(&self.k % k).is_zero()
            || self.terms.iter().any(|t| !(&t.c % k).is_zero())
        {
            return None;
        }
        Some(Lin {
            terms: self.terms.iter().map(|t| Term { c: &t.c / k, ..t.clone() }).collect(),
            k: &self.k / k,
        })
    }

    /// The coefficient of the plain variable `name`.
    pub fn coeff(&self, name: &str) -> BigInt {
        self.terms.iter().find(|t| t.text == name).map(|t| t.c.clone()).unwrap_or_default()
    }

    /// The form without the plain variable `name`.
    pub fn without(&self, name: &str) -> Lin {
        Lin {
            terms: self.terms.iter().filter(|t| t.text != name).cloned().collect(),
            k: self.k.clone(),
        }
    }

    /// Does any term mention one of `names` (as a word)?
    pub fn mentions(&self, names: &[&str]) -> bool {
        self.terms.iter().any(|t| names.iter().any(|n| has_word(&t.text, n)))
    }

    /// Split into (terms mentioning `names`, the rest).
    fn split(&self, names: &[&str]) -> (Lin, Lin) {
        let (a, b): (Vec<Term>, Vec<Term>) =
            self.terms.iter().cloned().partition(|t| names.iter().any(|n| has_word(&t.text, n)));
        (Lin { terms: a, k: BigInt::zero() }, Lin { terms: b, k: self.k.clone() })
    }

    pub fn print(&self) -> String {
        let mut out = String::new();
        for t in &self.terms {
            let neg = t.c.is_negative();
            let mag = t.c.abs();
            let body = if mag.is_one() {
                t.text.clone()
            } else if t.atomic {
                format!("{mag} * {}", t.text)
            } else {
                format!("{mag} * {}", paren(&t.text))
            };
            // A compound term after a sign needs parentheses unless it is a product-level term.
            let body =
                if mag.is_one() && !t.atomic && !out.is_empty() { paren(&body) } else { body };
            match (out.is_empty(), neg) {
                (true, false) => out.push_str(&body),
                (true, true) => {
                    if t.atomic || !mag.is_one() {
                        out.push_str(&format!("-{body}"))
                    } else {
                        out.push_str(&format!("-{}", paren(&body)))
                    }
                }
                (false, false) => out.push_str(&format!(" + {body}")),
                (false, true) => out.push_str(&format!(" - {body}")),
            }
        }
        if out.is_empty() {
            return self.k.to_string();
        }
        if self.k.is_positive() {
            out.push_str(&format!(" + {}", self.k));
        } else if self.k.is_negative() {
            out.push_str(&format!(" - {}", self.k.abs()));
        }
        out
    }
}

fn has_word(text: &str, name: &str) -> bool {
    lex(text).tokens.iter().any(|t| matches!(t.kind, TokKind::Word) && t.span.text(text) == name)
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rel {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Rel {
    pub fn of(op: BinOp) -> Option<Rel> {
        Some(match op {
            BinOp::Lt => Rel::Lt,
            BinOp::Le => Rel::Le,
            BinOp::Gt => Rel::Gt,
            BinOp::Ge => Rel::Ge,
            BinOp::Eq => Rel::Eq,
            BinOp::Ne => Rel::Ne,
            _ => return None,
        })
    }

    fn symbol(self) -> &'static str {
        match self {
            Rel::Lt => "<",
            Rel::Le => "<=",
            Rel::Gt => ">",
            Rel::Ge => ">=",
            Rel::Eq => "==",
            Rel::Ne => "!=",
        }
    }

    /// The relation with its operands swapped (`a < b` is `b > a`).
    fn mirrored(self) -> Rel {
        match self {
            Rel::Lt => Rel::Gt,
            Rel::Le => Rel::Ge,
            Rel::Gt => Rel::Lt,
            Rel::Ge => Rel::Le,
            r => r,
        }
    }

    /// The logical negation (`!(a < b)` is `a >= b`).
    pub fn negated(self) -> Rel {
        match self {
            Rel::Lt => Rel::Ge,
            Rel::Le => Rel::Gt,
            Rel::Gt => Rel::Le,
            Rel::Ge => Rel::Lt,
            Rel::Eq => Rel::Ne,
            Rel::Ne => Rel::Eq,
        }
    }
}

/// A condition printed for a guard, with its negation.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Cond {
    pub text: String,
    pub neg: String,
}

impl Cond {
    pub fn opaque(text: String) -> Cond {
        let neg = format!("!({text})");
        Cond { text, neg }
    }

    /// `l rel r`, normalised: the terms mentioning `vars` on the left with a positive leading
    /// coefficient, everything else on the right (`0 <= t - 1` prints as `t >= 1`).
    pub fn compare(l: &Lin, rel: Rel, r: &Lin, vars: &[&str]) -> Cond {
        let d = l.sub(r);
        let (mut lhs, rest) = d.split(vars);
        let mut rhs = rest.scale(&BigInt::from(-1));
        let mut rel = rel;
        if lhs.terms.is_empty() {
            // Nothing thread-dependent: keep all terms on the left.
            lhs = rhs.scale(&BigInt::from(-1));
            lhs.k = BigInt::zero();
            rhs = Lin::konst(-d.k.clone());
        }
        if lhs.terms.first().is_some_and(|t| t.c.is_negative()) {
            lhs = lhs.scale(&BigInt::from(-1));
            rhs = rhs.scale(&BigInt::from(-1));
            rel = rel.mirrored();
        }
        let pr = |rel: Rel| format!("{} {} {}", lhs.print(), rel.symbol(), rhs.print());
        Cond { text: pr(rel), neg: pr(rel.negated()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use front::parser::parse_expr_text;
    use front::Dialect;

    fn lin(s: &str) -> Lin {
        let e = parse_expr_text(s, Dialect::V1).expect("parses");
        Lin::of(&e, s, None)
    }

    #[test]
    fn forms_print_canonically() {
        assert_eq!(lin("n - 1 - t").print(), "n - t - 1");
        assert_eq!(lin("2 * t + 1").print(), "2 * t + 1");
        assert_eq!(lin("t + 1 - 1").print(), "t");
        assert_eq!(lin("4 * i + j - 4 * i").print(), "j");
        assert_eq!(lin("(t % 2) * 3 - x").print(), "3 * (t % 2) - x");
        assert_eq!(lin("1 - 1").print(), "0");
    }

    #[test]
    fn substitution_replaces_the_variable() {
        let v = lin("t - 1");
        let e = parse_expr_text("t + 1 < n", Dialect::V1).expect("parses");
        let ExprKind::Binary(_, l, r) = &e.kind else { panic!("comparison") };
        let s = Subst { name: "t", value: &v };
        let c = Cond::compare(
            &Lin::of(l, "t + 1 < n", Some(&s)),
            Rel::Lt,
            &Lin::of(r, "t + 1 < n", Some(&s)),
            &["t"],
        );
        assert_eq!(c.text, "t < n");
        assert_eq!(c.neg, "t >= n");
    }

    #[test]
    fn comparisons_put_the_thread_on_the_left() {
        let c = Cond::compare(&lin("0"), Rel::Le, &lin("t - 1"), &["t"]);
        assert_eq!(c.text, "t >= 1");
        let c = Cond::compare(&lin("i + 1"), Rel::Lt, &lin("m"), &["i"]);
        assert_eq!(c.text, "i < m - 1");
        let c = Cond::compare(&lin("n - 1 - t"), Rel::Ge, &lin("0"), &["t"]);
        assert_eq!(c.text, "t <= n - 1");
    }
}
