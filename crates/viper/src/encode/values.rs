//! `\values(a, lo, hi)`: the cells `lo .. hi` of an array as a sequence, a Viper function per
//! element field (`vct_values_int_val`) declared on first use. Like any read of the cells it
//! needs some permission on each of them; its result is the sequence of their values.

use super::typing::{elem, is_array};
use super::{Encoder, R};
use crate::ast::*;
use front::ast::Expr;
use front::span::Span;

impl Encoder<'_> {
    pub(super) fn values(
        &mut self,
        a: &Expr,
        lo: &Expr,
        hi: &Expr,
        code: bool,
        span: Span,
    ) -> R<Exp> {
        let et = self.type_of(a).filter(is_array).and_then(|t| elem(&t));
        let field = et.as_ref().and_then(|t| self.array_field(t));
        let (Some(et), Some(field)) = (et, field) else {
            self.unsupported("`\\values` of this array", span);
            return Err(());
        };
        let ty = self.viper_ty(&et)?;
        let name = format!("vct_values_{field}");
        if !self.out.functions.iter().any(|f| f.name == name) {
            self.out.functions.push(values_function(&name, &field, ty));
        }
        let args = vec![self.expr(a, code)?, self.expr(lo, code)?, self.expr(hi, code)?];
        Ok(Exp::new(ExpKind::App(name, args), Some(span)))
    }
}

/// `function name(a: Arr, lo: Int, hi: Int): Seq[T]` with some permission on every cell of
/// `lo .. hi`, a result of `hi - lo` elements, and element `i` the value of cell `lo + i`.
/// Abstract: the postcondition is all a caller knows, and the sequence it describes exists.
fn values_function(name: &str, field: &str, ty: Ty) -> Function {
    let (a, lo, hi, i) = (Exp::var("a"), Exp::var("lo"), Exp::var("hi"), Exp::var("i"));
    let cell = |ix: Exp| {
        Exp::synth(ExpKind::Field(Box::new(Exp::app("aloc", vec![a.clone(), ix])), field.into()))
    };
    let in_range = |x: Exp, from: Exp, to: Exp| {
        Exp::and(Exp::bin("<=", from, x.clone()), Exp::bin("<", x, to))
    };
    let forall = |body: Exp, trigger: Exp| {
        Exp::synth(ExpKind::Forall(
            vec![("i".into(), Ty::Int)],
            vec![vec![trigger]],
            Box::new(body),
        ))
    };
    let contract = |e: Exp| Contract { exp: e, origin: Origin::synthetic() };
    let perms = forall(
        Exp::implies(
            in_range(i.clone(), lo.clone(), hi.clone()),
            Exp::synth(ExpKind::Acc(
                Box::new(cell(i.clone())),
                Box::new(Exp::synth(ExpKind::Wildcard)),
            )),
        ),
        Exp::app("aloc", vec![a.clone(), i.clone()]),
    );
    let result = Exp::synth(ExpKind::Result);
    let nth = Exp::synth(ExpKind::SeqIndex(Box::new(result.clone()), Box::new(i.clone())));
    let width = Exp::bin("-", hi.clone(), lo.clone());
    Function {
        name: name.to_string(),
        params: vec![("a".into(), Ty::Arr), ("lo".into(), Ty::Int), ("hi".into(), Ty::Int)],
        ret: Ty::Seq(Box::new(ty)),
        pres: vec![
            contract(Exp::bin("!=", a.clone(), Exp::app("anull", vec![]))),
            contract(Exp::and(
                Exp::and(
                    Exp::bin("<=", Exp::int(0), lo.clone()),
                    Exp::bin("<=", lo.clone(), hi.clone()),
                ),
                Exp::bin("<=", hi.clone(), Exp::app("alen", vec![a.clone()])),
            )),
            contract(perms),
        ],
        posts: vec![
            contract(Exp::bin("==", Exp::synth(ExpKind::Len(Box::new(result))), width.clone())),
            contract(forall(
                Exp::implies(
                    in_range(i.clone(), Exp::int(0), width),
                    Exp::bin("==", nth.clone(), cell(Exp::bin("+", lo, i))),
                ),
                nth,
            )),
        ],
        body: None,
        span: None,
    }
}
