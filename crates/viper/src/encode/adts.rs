//! VerCors 2 ADTs as Viper domains: `adt L { pure L nil(); pure L cons(int h, L t); axiom …; }`
//! declares the domain type `L`, one domain function per ADT function (`L_nil`, `L_cons`) and
//! one axiom per `axiom`. Functions are called as `L.nil()` in the program and unqualified in
//! the ADT's own axioms. A generic ADT reaches the encoder only as its instances (the
//! monomorphiser, analyze/generics.rs, writes `Pair<int, int>` as `Pair__int__int`); one that
//! still has type parameters here is refused.

use super::{Encoder, R};
use crate::ast::{Exp, ExpKind, Ty};
use front::ast::{self, Expr, ExprKind, Type, TypeKind};
use front::span::Span;

/// Pairs (`tuple<A, B>`), declared once per program when a tuple type is used. The bound names
/// are among those global names yield to (`names.rs`).
const TUPLE_DOMAIN: &str = "domain VctTuple[A, B] {
  function vct_tuple(A, B): VctTuple[A, B]
  function vct_fst(VctTuple[A, B]): A
  function vct_snd(VctTuple[A, B]): B
  axiom vct_tuple_proj {
    forall a: A, c: B :: { vct_tuple(a, c) } vct_fst(vct_tuple(a, c)) == a && vct_snd(vct_tuple(a, c)) == c
  }
  axiom vct_tuple_eta {
    forall t: VctTuple[A, B] :: { vct_fst(t) } { vct_snd(t) } vct_tuple(vct_fst(t), vct_snd(t)) == t
  }
}
";
use std::collections::HashMap;

#[derive(Clone, Debug, Default)]
pub struct AdtInfo {
    /// The Viper domain (type) name.
    pub viper: String,
    /// PVL function name → (Viper function name, parameter types, result type).
    pub funcs: HashMap<String, (String, Vec<Type>, Type)>,
    pub is_enum: bool,
}

impl Encoder<'_> {
    /// Register the ADT's names before anything is encoded (types and calls refer to them).
    pub(super) fn collect_adt(&mut self, a: &ast::Adt) {
        if self.adts.contains_key(&a.name.name) {
            self.bad(format!("ADT `{}` is declared twice", a.name.name), a.name.span);
            return;
        }
        let viper = self.global_name(format!("{}{}", self.opts.prefix, a.name.name));
        self.record_name(&viper, &a.name.name);
        let mut info = AdtInfo { viper, funcs: HashMap::new(), is_enum: a.is_enum };
        for f in &a.functions {
            let v =
                self.global_name(format!("{}{}_{}", self.opts.prefix, a.name.name, f.name.name));
            self.record_name(&v, &f.name.name);
            let params = f.params.iter().map(|p| p.ty.clone()).collect();
            info.funcs.insert(f.name.name.clone(), (v, params, f.ret.clone()));
        }
        self.adts.insert(a.name.name.clone(), info);
    }

    /// Emit the ADT's domain (refusing a generic one).
    pub(super) fn adt_domain(&mut self, a: &ast::Adt) {
        if !a.type_params.is_empty() {
            self.unsupported("a generic `adt`", a.span);
            return;
        }
        let Some(info) = self.adts.get(&a.name.name).cloned() else { return };
        let mut text = format!("domain {} {{\n", info.viper);
        let mut ok = true;
        for f in &a.functions {
            let (v, _, _) = &info.funcs[&f.name.name];
            // Unnamed parameters: a name could clash with a global one (Viper has one
            // namespace).
            let mut params = Vec::new();
            for p in &f.params {
                match self.viper_ty(&p.ty) {
                    Ok(t) => params.push(t.to_string()),
                    Err(()) => ok = false,
                }
            }
            match self.viper_ty(&f.ret) {
                Ok(r) => text.push_str(&format!("  function {v}({}): {r}\n", params.join(", "))),
                Err(()) => ok = false,
            }
        }
        for (k, ax) in a.axioms.iter().enumerate() {
            self.scopes.push(HashMap::new());
            self.in_adt = Some(a.name.name.clone());
            let e = self.spec(ax);
            self.in_adt = None;
            self.scopes.pop();
            match e {
                Ok(e) => text.push_str(&format!(
                    "  axiom {}_ax{} {{\n    {}\n  }}\n",
                    info.viper,
                    k + 1,
                    crate::print::exp_text(&e)
                )),
                Err(()) => ok = false,
            }
        }
        if a.is_enum {
            // The constants are pairwise distinct and the only values.
            let consts: Vec<String> =
                a.functions.iter().map(|f| format!("{}()", info.funcs[&f.name.name].0)).collect();
            for (i, x) in consts.iter().enumerate() {
                for y in &consts[i + 1..] {
                    text.push_str(&format!("  axiom {{ {x} != {y} }}\n"));
                }
            }
            if !consts.is_empty() {
                let ors: Vec<String> = consts.iter().map(|c| format!("e == {c}")).collect();
                text.push_str(&format!(
                    "  axiom {{ forall e: {} :: {} }}\n",
                    info.viper,
                    ors.join(" || ")
                ));
            }
        }
        text.push_str("}\n");
        if ok {
            self.out.domains.push(text);
        }
    }

    /// `L.f(args)` (or `f(args)` inside L's axioms): the domain function's application.
    pub(super) fn adt_call(
        &mut self,
        recv: Option<&Expr>,
        name: &ast::Ident,
        args: &[Expr],
        code: bool,
        span: Span,
    ) -> Option<R<Exp>> {
        let adt = self.called_adt(recv, &name.name)?;
        let Some((v, params, _)) = self.adts[&adt].funcs.get(&name.name).cloned() else {
            self.bad(format!("the ADT `{adt}` has no function `{}`", name.name), name.span);
            return Some(Err(()));
        };
        if params.len() != args.len() {
            self.bad(
                format!(
                    "`{adt}.{}` takes {} argument(s), found {}",
                    name.name,
                    params.len(),
                    args.len()
                ),
                span,
            );
            return Some(Err(()));
        }
        let mut xs = Vec::new();
        for (a, t) in args.iter().zip(&params) {
            match self.expr_to(a, Some(t), code) {
                Ok(x) => xs.push(x),
                Err(()) => return Some(Err(())),
            }
        }
        Some(Ok(Exp::new(ExpKind::App(v, xs), Some(span))))
    }

    /// The Viper type of `tuple<A, B>`: the generic domain `VctTuple[A, B]`, declared on first
    /// use (a pair, its projections, and the axioms that make it one).
    pub(super) fn tuple_ty(&mut self, a: &Type, b: &Type) -> R<Ty> {
        let (ta, tb) = (self.viper_ty(a)?, self.viper_ty(b)?);
        if !self.out.domains.iter().any(|d| d.starts_with("domain VctTuple[")) {
            self.out.domains.push(TUPLE_DOMAIN.to_string());
        }
        Ok(Ty::Domain(format!("VctTuple[{ta}, {tb}]")))
    }

    /// `tuple<A, B>{a, b}`.
    pub(super) fn tuple_lit(
        &mut self,
        ty: &Type,
        a: &Expr,
        b: &Expr,
        code: bool,
        span: Span,
    ) -> R<Exp> {
        let TypeKind::Tuple(ta, tb) = &ty.kind else {
            self.bad("a tuple literal needs a tuple type", span);
            return Err(());
        };
        self.tuple_ty(ta, tb)?;
        let xa = self.expr_to(a, Some(ta), code)?;
        let xb = self.expr_to(b, Some(tb), code)?;
        Ok(Exp::new(ExpKind::App("vct_tuple".into(), vec![xa, xb]), Some(span)))
    }

    /// Is `o.f` a projection `t.fst` / `t.snd` of a tuple?
    pub(super) fn is_tuple_proj(&self, o: &Expr, f: &str) -> bool {
        matches!(f, "fst" | "snd")
            && matches!(self.type_of(o), Some(Type { kind: TypeKind::Tuple(..), .. }))
    }

    /// `t.fst` / `t.snd` (see [`Self::is_tuple_proj`]).
    pub(super) fn tuple_proj(&mut self, o: &Expr, f: &str, code: bool, span: Span) -> R<Exp> {
        let fun = if f == "fst" { "vct_fst" } else { "vct_snd" };
        let x = self.expr(o, code)?;
        Ok(Exp::new(ExpKind::App(fun.into(), vec![x]), Some(span)))
    }

    /// `E.A` for a constant `A` of the enum `E`: the domain constant.
    pub(super) fn enum_const(&self, o: &Expr, f: &str) -> Option<(Exp, Type)> {
        let info = self.adts.get(self.adt_named(o)?).filter(|i| i.is_enum)?;
        let (v, _, t) = info.funcs.get(f)?;
        Some((Exp::new(ExpKind::App(v.clone(), Vec::new()), Some(o.span)), t.clone()))
    }

    /// The result type of an ADT function call, for typing (`None`: not one).
    pub(super) fn adt_call_type(&self, recv: Option<&Expr>, name: &str) -> Option<Type> {
        let adt = self.called_adt(recv, name)?;
        self.adts.get(&adt)?.funcs.get(name).map(|(_, _, r)| r.clone())
    }

    /// The ADT a call `L.f(…)` names (`L` an ADT, not shadowed by a variable), or, inside L's
    /// axioms, the ADT of an unqualified call of one of its functions.
    fn called_adt(&self, recv: Option<&Expr>, name: &str) -> Option<String> {
        match recv {
            Some(r) => self.adt_named(r).map(str::to_string),
            None => {
                let a = self.in_adt.as_ref()?;
                self.adts.get(a)?.funcs.contains_key(name).then(|| a.clone())
            }
        }
    }

    /// `e` as the name of an ADT (or enum): a bare name that is not a variable in scope.
    fn adt_named<'e>(&self, e: &'e Expr) -> Option<&'e str> {
        let ExprKind::Name(id) = &e.kind else { return None };
        (self.lookup(&id.name).is_none() && self.adts.contains_key(&id.name)).then_some(&id.name)
    }
}
