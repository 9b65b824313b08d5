//! `(\sum int k; cond; body)`: the sum of `body` over the integers `k` that satisfy `cond`.
//!
//! The condition must bound `k` (`lo <= k && k < hi`, in any of the usual spellings); the sum
//! is the sum over `[lo, hi)` of `cond ? body : 0`. Viper has no sum binder, so:
//! - literal bounds (at most [`MAX_EXPANDED`] terms): the terms are written out, and Silicon
//!   decides the sum without any unfolding;
//! - otherwise: a generated recursive function `sum_N(lo, hi, free variables…)`, whose
//!   precondition is what the terms need to be defined over the range (read permission to
//!   every heap location they read, sequence indices in bounds, non-zero divisors). A call
//!   must establish it: a `\sum` over an out-of-bounds cell is an error, as in VerCors.
//!   Silicon unfolds a function once per call in the program; its body is the recursion
//!   unrolled [`UNROLL`] times, so that a sum of up to that many terms (a literal sequence of
//!   ten elements) is known from the call alone. The unrolled body equals the recursive one,
//!   so nothing is assumed that the definition does not give.
//!
//! A symbolic sum whose body is not plain arithmetic over sequences, arrays and fields (a
//! call, a quantifier, `\old`, a permission) is refused with V-UNSUPPORTED naming it.

use super::{Encoder, R};
use crate::ast::{Contract, Exp, ExpKind, Function, Origin, Ty};
use front::ast::{Expr, Ident, Type, TypeKind};
use front::span::Span;
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};

/// The generated functions' names start with this (`errors.rs` recognises them).
pub const SUM_FN: &str = "vct_sum";
/// At most this many terms are written out; beyond it the function is used.
const MAX_EXPANDED: usize = 256;
/// Levels of recursion in the generated function's body.
const UNROLL: usize = 16;

impl Encoder<'_> {
    pub fn sum(&mut self, ty: &Type, name: &Ident, cond: &Expr, body: &Expr, span: Span) -> R<Exp> {
        if !matches!(ty.kind, TypeKind::Int) {
            self.unsupported("a `\\sum` over a variable that is not an `int`", span);
            return Err(());
        }
        self.scopes.push(Default::default());
        let v = self.fresh_name(&name.name);
        self.bind_name(&name.name, &v, ty);
        let r = self.sum_in_scope(&v, cond, body, span);
        self.scopes.pop();
        r
    }

    fn sum_in_scope(&mut self, v: &str, cond: &Expr, body: &Expr, span: Span) -> R<Exp> {
        if !matches!(self.type_of(body).map(|t| t.kind), Some(TypeKind::Int)) {
            self.unsupported("a `\\sum` whose terms are not `int`s", body.span);
            return Err(());
        }
        let mut guards = Vec::new();
        super::quant::split_and(self.spec(cond)?, &mut guards);
        let term = self.spec(body)?;
        let bounds = super::comprehension::int_bounds_at(&guards, v, &[v.to_string()]);
        let Some((lo, hi, used)) = bounds else {
            self.unsupported(
                &format!(
                    "a `\\sum` whose variable `{}` has no bounds `lo <= {0} && {0} < hi` in its \
                     condition",
                    self.pvl_name(v)
                ),
                cond.span,
            );
            return Err(());
        };
        // The two guards that give the range hold on all of it: the condition is the rest.
        // (Kept, they would make the range's variables arguments of the sum's function, and
        // sums over `[0, i)` and `[0, i + 1)` would not be related by its definition.)
        let rest = guards.into_iter().enumerate().filter(|(at, _)| !used.contains(at));
        let c = Exp::and_all(rest.map(|(_, g)| g));
        let at = |j: &Exp| term_at(&c, &term, v, j);
        let (l, h) = (super::comprehension::lit(&lo), super::comprehension::lit(&hi));
        if let (Some(l), Some(h)) = (l, h) {
            if h <= l || &h - &l <= BigInt::from(MAX_EXPANDED) {
                let mut terms = Vec::new();
                let mut k = l;
                while k < h {
                    terms.push(at(&Exp::synth(ExpKind::Int(k.clone()))));
                    k += 1;
                }
                let sum = terms.into_iter().reduce(|a, b| Exp::bin("+", a, b));
                return Ok(sum.unwrap_or_else(|| Exp::int(0)).with_span(Some(span)));
            }
        }
        // `a[off + j]` over `[lo, hi)` is `a[i]` over `[lo + off, hi + off)`: the generated
        // function then indexes at its own variable, whose cells Silicon can tell apart (it
        // cannot show `aloc(a, x + k)` injective in `k`).
        if let Some((shifted, s)) = shift(&term, &c, v) {
            let lo = Exp::bin("+", lo, s.clone());
            let hi = Exp::bin("+", hi, s);
            return self.sum_function(v, &c, &shifted, lo, hi, span);
        }
        self.sum_function(v, &c, &term, lo, hi, span)
    }

    /// The call of a generated function for a sum over a symbolic range.
    fn sum_function(
        &mut self,
        v: &str,
        c: &Exp,
        term: &Exp,
        lo: Exp,
        hi: Exp,
        span: Span,
    ) -> R<Exp> {
        for e in [c, term] {
            if let Some(what) = not_plain(e) {
                self.unsupported(
                    &format!("a `\\sum` over a symbolic range whose terms contain {what}"),
                    span,
                );
                return Err(());
            }
        }
        // The free variables become parameters, in order of first occurrence.
        let mut free: Vec<String> = Vec::new();
        for e in [c, term] {
            e.visit(&mut |x| {
                if let ExpKind::Var(n) = &x.kind {
                    if n != v && !free.contains(n) {
                        free.push(n.clone());
                    }
                }
            });
        }
        let mut params = Vec::new();
        for n in &free {
            let Some(t) = self.var_type(n) else {
                self.unsupported(
                    &format!("a `\\sum` over a symbolic range that reads `{}`", self.pvl_name(n)),
                    span,
                );
                return Err(());
            };
            params.push((n.clone(), t));
        }
        // Named `%sum` until it is known to be new: an equal sum reuses the functions.
        let name = "%sum".to_string();
        // Parameter names of the function's own: `lo`, `hi`, the bound variable and one per
        // free variable (the caller's names may be placeholders or reserved). Silicon rejects
        // a parameter named like a member, so none may be a global name.
        let own = |base: &str| {
            let mut n = base.to_string();
            while self.globals.contains(&n) {
                n.push('_');
            }
            n
        };
        let (plo, phi, pk) = (own("lo"), own("hi"), own("k"));
        let renamed: Vec<(String, Exp)> = free
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), Exp::var(own(&format!("x{i}")))))
            .collect();
        // One simultaneous renaming: a caller's variable may be called `k` or `x0`.
        let local = |e: &Exp| {
            e.clone().map(&mut |x| match x.kind {
                ExpKind::Var(n) if n == v => Exp::var(&pk),
                ExpKind::Var(n) => match renamed.iter().find(|(m, _)| *m == n) {
                    Some((_, to)) => to.clone(),
                    None => Exp::new(ExpKind::Var(n), x.span),
                },
                kind => Exp::new(kind, x.span),
            })
        };
        let (c, term) = (local(c), local(term));
        let args = |lo: Exp, hi: Exp| -> Vec<Exp> {
            let mut a = vec![lo, hi];
            a.extend(renamed.iter().map(|(_, x)| x.clone()));
            a
        };
        let at = |j: &Exp| term_at(&c, &term, &pk, j);
        let hi_minus = |d: usize| match d {
            0 => Exp::var(&phi),
            _ => Exp::bin("-", Exp::var(&phi), Exp::int(d as i64)),
        };
        // `name` is the recursion, one step per level; `name_u` the same sum unrolled over
        // `name`. The program calls `name_u`: not being recursive, its definition is not
        // limited to one unfolding, so it relates a call to `name` on a range `UNROLL`
        // shorter, whose own one-step definition relates sums over `[lo, i)` and `[lo, i + 1)`
        // (a loop invariant), while a range of up to `UNROLL` literal terms is decided.
        let step = |inner: Exp, d: usize| {
            Exp::synth(ExpKind::Cond(
                Box::new(Exp::bin("<", Exp::var(&plo), hi_minus(d))),
                Box::new(Exp::bin("+", inner, at(&hi_minus(d + 1)))),
                Box::new(Exp::int(0)),
            ))
        };
        let body = step(Exp::app(&name, args(Exp::var(&plo), hi_minus(1))), 0);
        let mut unrolled = Exp::app(&name, args(Exp::var(&plo), hi_minus(UNROLL)));
        for d in (0..UNROLL).rev() {
            unrolled = step(unrolled, d);
        }
        let range = Exp::and(
            Exp::bin("<=", Exp::var(&plo), Exp::var(&pk)),
            Exp::bin("<", Exp::var(&pk), Exp::var(&phi)),
        );
        // What the condition needs, over the whole range; what the term needs, where the
        // condition holds. Inner locations first: a location's receiver reads them.
        let mut pres = Vec::new();
        for (e, guard) in [(&c, range.clone()), (&term, Exp::and(range.clone(), c.clone()))] {
            for need in needs(e) {
                let Some(pre) = need.precondition(&pk, &plo, &phi, &guard) else {
                    self.unsupported(
                        &format!("a `\\sum` over a symbolic range that {}", need.refusal()),
                        span,
                    );
                    return Err(());
                };
                if !pres.contains(&pre) {
                    pres.push(pre);
                }
            }
        }
        let mut fparams = vec![(plo, Ty::Int), (phi, Ty::Int)];
        fparams.extend(renamed.iter().zip(&params).map(|((_, x), (_, t))| {
            let ExpKind::Var(x) = &x.kind else { unreachable!("renamed to variables") };
            (x.clone(), t.clone())
        }));
        let pres: Vec<Contract> = pres
            .into_iter()
            .map(|exp| Contract { exp: unspanned(exp), origin: Origin::synthetic() })
            .collect();
        let key = Function {
            name: name.clone(),
            params: fparams,
            ret: Ty::Int,
            pres,
            posts: vec![],
            body: Some(unspanned(body)),
            span: None,
        };
        let name_u = match self.sums.iter().find(|(f, _)| *f == key) {
            Some((_, u)) => u.clone(),
            None => {
                let name = self.global_name(SUM_FN.to_string());
                let name_u = self.global_name(format!("{name}_u"));
                let own = |e: Exp| {
                    e.map(&mut |x| match x.kind {
                        ExpKind::App(f, args) if f == "%sum" => Exp::app(&name, args),
                        kind => Exp::new(kind, x.span),
                    })
                };
                for (n, b) in [(&name, key.body.clone()), (&name_u, Some(unspanned(unrolled)))] {
                    self.out.functions.push(Function {
                        name: n.clone(),
                        body: b.map(own),
                        span: Some(span),
                        ..key.clone()
                    });
                }
                self.sums.push((key, name_u.clone()));
                name_u
            }
        };
        let mut call = vec![lo, hi];
        call.extend(free.iter().map(Exp::var));
        Ok(Exp::new(ExpKind::App(name_u, call), Some(span)))
    }

    /// The Viper type of a variable of the current member: a local, a parameter, a bound
    /// variable or `this`.
    fn var_type(&mut self, n: &str) -> Option<Ty> {
        if n == "this" {
            return Some(Ty::Ref);
        }
        if let Some(t) = self.vtypes.get(n) {
            return Some(t.clone());
        }
        let pvl = self
            .scopes
            .iter()
            .rev()
            .flat_map(|s| s.values())
            .find(|l| l.viper == n)
            .map(|l| l.ty.clone())?;
        self.viper_ty(&pvl).ok()
    }
}

/// The sum's term at `k = j`: `cond ? term : 0`, or the term alone when there is no condition.
fn term_at(cond: &Exp, term: &Exp, k: &str, j: &Exp) -> Exp {
    let (c, t) = (cond.clone().subst(k, j), term.clone().subst(k, j));
    match c.kind {
        ExpKind::Bool(true) => t,
        _ => Exp::synth(ExpKind::Cond(Box::new(c), Box::new(t), Box::new(Exp::int(0)))),
    }
}

/// `term` with every `s + k` (or `k + s`) written `k`, and `s`, when the variable `k` occurs in
/// it only in that form, for one `s` free of `k`, and not in the condition `cond`.
fn shift(term: &Exp, cond: &Exp, k: &str) -> Option<(Exp, Exp)> {
    if cond.mentions_var(k) {
        return None;
    }
    let is_k = |e: &Exp| matches!(&e.kind, ExpKind::Var(n) if n == k);
    let offset = |e: &Exp| -> Option<Exp> {
        match &e.kind {
            ExpKind::Binary("+", a, b) if is_k(a) && !b.mentions_var(k) => Some((**b).clone()),
            ExpKind::Binary("+", a, b) if is_k(b) && !a.mentions_var(k) => Some((**a).clone()),
            // `vct_stride(k, v, K)` is `k + v * K` (a row `v` of width `K`, `quant/stride.rs`).
            ExpKind::App(f, args)
                if f == super::quant::STRIDE_FN
                    && args.len() == 3
                    && is_k(&args[0])
                    && !args[1].mentions_var(k)
                    && !args[2].mentions_var(k) =>
            {
                let zero = Exp::int(0);
                Some(Exp::app(f, vec![zero, args[1].clone(), args[2].clone()]))
            }
            _ => None,
        }
    };
    let (mut shifts, mut uses) = (Vec::new(), 0usize);
    term.visit(&mut |x| {
        if let Some(s) = offset(x) {
            shifts.push(unspanned(s));
        }
        uses += usize::from(is_k(x));
    });
    let s = shifts.first()?.clone();
    if shifts.len() != uses || shifts.iter().any(|x| *x != s) {
        return None;
    }
    let shifted = term.clone().map(&mut |x| match offset(&x) {
        Some(_) => Exp { kind: ExpKind::Var(k.to_string()), span: x.span },
        None => x,
    });
    Some((shifted, s))
}

/// `e` without source positions: the functions of two sums at different places compare equal
/// when their terms do.
fn unspanned(e: Exp) -> Exp {
    e.map(&mut |mut x| {
        x.span = None;
        x
    })
}

/// What makes `e` more than plain arithmetic over sequences, arrays and fields, if anything.
fn not_plain(e: &Exp) -> Option<&'static str> {
    let mut what = None;
    e.visit(&mut |x| {
        let bad = match &x.kind {
            ExpKind::Int(_)
            | ExpKind::Bool(_)
            | ExpKind::Null
            | ExpKind::Var(_)
            | ExpKind::Unary(..)
            | ExpKind::Binary(..)
            | ExpKind::Cond(..)
            | ExpKind::Field(..)
            | ExpKind::SeqIndex(..)
            | ExpKind::Len(..) => None,
            ExpKind::App(f, _) if f == "aloc" || f == "alen" || f == super::quant::STRIDE_FN => {
                None
            }
            ExpKind::App(..) => Some("a call"),
            ExpKind::Forall(..) | ExpKind::Exists(..) | ExpKind::Let(..) => Some("a binder"),
            ExpKind::Old(..) => Some("`\\old`"),
            ExpKind::Result => Some("`\\result`"),
            ExpKind::Acc(..) | ExpKind::PermOf(..) | ExpKind::Write | ExpKind::NoPerm => {
                Some("a permission")
            }
            ExpKind::Wildcard => Some("a permission"),
            _ => Some("a collection operation"),
        };
        what = what.or(bad);
    });
    what
}

/// One thing the terms need to be defined.
#[derive(Clone, Debug, PartialEq)]
enum Need {
    /// Read permission to a location.
    Acc(Exp),
    /// `0 <= index < len` (a sequence's or an array's length).
    Index { len: Exp, index: Exp },
    /// An array that is not `anull()`.
    NonNull(Exp),
    /// A divisor that is not zero.
    NonZero(Exp),
}

impl Need {
    /// The function's precondition for this need, over the range `[lo, hi)` of `k` where
    /// `guard` holds; `None` when it cannot be stated without a quantifier that Silicon could
    /// not instantiate.
    fn precondition(&self, k: &str, lo: &str, hi: &str, guard: &Exp) -> Option<Exp> {
        let nonempty = Exp::bin("<", Exp::var(lo), Exp::var(hi));
        let plain =
            |e: &Exp| (!e.mentions_var(k)).then(|| Exp::implies(nonempty.clone(), e.clone()));
        match self {
            // A quantified permission is inverted by Silicon; it needs no trigger.
            Need::Acc(loc) if loc.mentions_var(k) => Some(Exp::synth(ExpKind::Forall(
                vec![(k.to_string(), Ty::Int)],
                vec![],
                Box::new(Exp::implies(
                    guard.clone(),
                    Exp::acc(loc.clone(), Exp::synth(ExpKind::Wildcard)),
                )),
            ))),
            Need::Acc(loc) => plain(&Exp::acc(loc.clone(), Exp::synth(ExpKind::Wildcard))),
            Need::NonNull(a) => plain(&Exp::bin("!=", a.clone(), Exp::app("anull", vec![]))),
            Need::NonZero(d) => plain(&Exp::bin("!=", d.clone(), Exp::int(0))),
            Need::Index { len, index } => {
                if len.mentions_var(k) {
                    return None;
                }
                // Over the whole range: the least and the greatest index, stated without a
                // quantifier (the index is affine in `k`).
                let lin = super::quant::linear(index, &[k.to_string()])?;
                let coef = lin.coeffs[0].clone();
                let off = lin.constant.unwrap_or_else(|| Exp::int(0));
                let at = |x: Exp| -> Exp {
                    let scaled = if coef.is_one() {
                        x
                    } else {
                        Exp::bin("*", Exp::synth(ExpKind::Int(coef.clone())), x)
                    };
                    match &off.kind {
                        ExpKind::Int(z) if z.is_zero() => scaled,
                        _ => Exp::bin("+", scaled, off.clone()),
                    }
                };
                let last = Exp::bin("-", Exp::var(hi), Exp::int(1));
                let (least, most) = if coef.is_zero() {
                    (off.clone(), off.clone())
                } else if coef.is_positive() {
                    (at(Exp::var(lo)), at(last))
                } else {
                    (at(last), at(Exp::var(lo)))
                };
                Some(Exp::implies(
                    nonempty,
                    Exp::and(Exp::bin("<=", Exp::int(0), least), Exp::bin("<", most, len.clone())),
                ))
            }
        }
    }

    fn refusal(&self) -> &'static str {
        match self {
            Need::Index { .. } => "indexes at a non-affine expression of its variable",
            Need::NonNull(_) => "reads an array chosen by its variable",
            Need::NonZero(_) => "divides by an expression of its variable",
            Need::Acc(_) => "reads a location it cannot name",
        }
    }
}

/// What `e` needs to be defined, innermost first.
fn needs(e: &Exp) -> Vec<Need> {
    let mut out = Vec::new();
    collect(e, &mut out);
    out
}

fn collect(e: &Exp, out: &mut Vec<Need>) {
    e.for_each_child(false, &mut |c| collect(c, out));
    let found = match &e.kind {
        ExpKind::Field(..) => vec![Need::Acc(e.clone())],
        ExpKind::SeqIndex(s, i) => {
            vec![Need::Index { len: Exp::synth(ExpKind::Len(s.clone())), index: (**i).clone() }]
        }
        ExpKind::App(f, args) if f == "aloc" && args.len() == 2 => vec![
            Need::NonNull(args[0].clone()),
            Need::Index { len: Exp::app("alen", vec![args[0].clone()]), index: args[1].clone() },
        ],
        ExpKind::Binary("\\" | "%" | "/", _, d) => vec![Need::NonZero((**d).clone())],
        _ => vec![],
    };
    for n in found {
        if !out.contains(&n) {
            out.push(n);
        }
    }
}
