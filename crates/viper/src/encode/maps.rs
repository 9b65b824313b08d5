//! Maps `map<K,V>` as Viper's built-in `Map[K, V]`.
//!
//! | PVL (VerCors 1)                      | Viper                                              |
//! |--------------------------------------|----------------------------------------------------|
//! | `map<K,V>{}`                         | `Map[K, V]()`                                      |
//! | `map<K,V>{k1 -> v1, k2 -> v2}`       | `Map[K, V]()[k1 := v1][k2 := v2]` (later wins)     |
//! | `m[k]`, `getFromMap(m, k)`           | `vct_map_get(m, k)` (total, see below)             |
//! | `m ++ (k, v)`, `buildMap(m, k, v)`   | `m[k := v]`                                        |
//! | `removeFromMap(m, k)`                | `vct_map_remove(m, k)` (axiomatised, see below)    |
//! | `keysMap(m)`, `valuesMap(m)`         | `domain(m)`, `range(m)`                            |
//! | `itemsMap(m)`                        | `vct_map_items(m)`: the pairs `(k, m[k])`          |
//! | `\|m\|`, `isEmpty(m)`                | `\|m\|`, `\|m\| == 0`                                |
//! | `disjointMap(a, b)`                  | `domain(a) intersection domain(b) == Set[K]()`;    |
//! |                                      | with a literal `b`: `!(k in domain(a))` per key    |
//! | `equalsMap(a, b)`, `a == b`          | `a == b` (Viper's map equality is extensional)     |
//!
//! VerCors 1's lookup is total (a key outside the domain gives an unspecified value), Viper's
//! `m[k]` requires `k in domain(m)`, as VerCors 2's does (a VerCors 2 program gets Viper's
//! lookup). VerCors 1 lookups therefore go through the generic domain function `vct_map_get`, which agrees with `m[k]` on the domain and is unconstrained elsewhere. Viper has
//! no removal: `vct_map_remove(m, k)` has the domain `domain(m) setminus Set(k)` and agrees
//! with `m` on it, which determines it up to (extensional) map equality. Both live in the domain
//! `VctMap`, declared on first use (with the batch name prefix, so that several programs can
//! share one Viper file). `itemsMap(m)` is the domain function `vct_map_items` (domain
//! `VctMapItems`, with the tuple domain of `adts.rs`): `(k, v)` is in it exactly when `k` is
//! a key of `m` and `m[k] == v`, and it has `|m|` elements.

use super::{Encoder, R};
use crate::ast::{Exp, ExpKind, Ty};
use front::ast::{Expr, ExprKind, Type, TypeKind};
use front::span::Span;

/// The key and value types of a map type.
pub(super) fn map_types(t: &Type) -> Option<(Type, Type)> {
    match &t.kind {
        TypeKind::Map(k, v) => Some(((**k).clone(), (**v).clone())),
        _ => None,
    }
}

pub(super) fn is_map(t: &Type) -> bool {
    matches!(t.kind, TypeKind::Map(..))
}

/// The Viper text of the `VctMap` domain, its names prefixed with `p`.
fn domain_text(p: &str) -> String {
    format!(
        "domain {p}VctMap[K, V] {{
  function {p}vct_map_get(m: Map[K, V], k: K): V
  function {p}vct_map_remove(m: Map[K, V], k: K): Map[K, V]

  axiom {p}vct_map_get_def {{
    forall m: Map[K, V], k: K :: {{ {p}vct_map_get(m, k) }} k in domain(m) ==> {p}vct_map_get(m, k) == m[k]
  }}
  axiom {p}vct_map_remove_domain {{
    forall m: Map[K, V], k: K :: {{ {p}vct_map_remove(m, k) }} domain({p}vct_map_remove(m, k)) == domain(m) setminus Set(k)
  }}
  axiom {p}vct_map_remove_values {{
    forall m: Map[K, V], k: K, j: K :: {{ {p}vct_map_remove(m, k)[j] }} {{ {p}vct_map_remove(m, k), m[j] }} j in domain({p}vct_map_remove(m, k)) ==> {p}vct_map_remove(m, k)[j] == m[j]
  }}
}}
"
    )
}

/// `itemsMap(m)`, the set of pairs `(k, m[k])`: a domain of its own, since it needs the tuple
/// domain (`adts.rs`), which maps without `itemsMap` do not.
fn items_domain_text(p: &str) -> String {
    format!(
        "domain {p}VctMapItems[K, V] {{
  function {p}vct_map_items(m: Map[K, V]): Set[VctTuple[K, V]]

  axiom {p}vct_map_items_def {{
    forall m: Map[K, V], t: VctTuple[K, V] :: {{ t in {p}vct_map_items(m) }} (t in {p}vct_map_items(m)) == (vct_fst(t) in domain(m) && {p}vct_map_get(m, vct_fst(t)) == vct_snd(t))
  }}
  axiom {p}vct_map_items_card {{
    forall m: Map[K, V] :: {{ {p}vct_map_items(m) }} |{p}vct_map_items(m)| == |m|
  }}
}}
"
    )
}

impl Encoder<'_> {
    /// `itemsMap(m)` for a map of type `mt`: declares the tuple, map and items domains.
    fn map_items(&mut self, m: Exp, mt: &Type) -> R<Exp> {
        let (kt, vt) = map_types(mt).ok_or(())?;
        self.tuple_ty(&kt, &vt)?;
        self.map_fn("vct_map_get");
        let p = self.opts.prefix.clone();
        let head = format!("domain {p}VctMapItems[");
        if !self.out.domains.iter().any(|d| d.starts_with(&head)) {
            self.out.domains.push(items_domain_text(&p));
        }
        Ok(Exp::app(format!("{p}vct_map_items"), vec![m]))
    }

    /// Declare the `VctMap` domain (once) and return the name of its function `f`.
    fn map_fn(&mut self, f: &str) -> String {
        let p = self.opts.prefix.clone();
        let head = format!("domain {p}VctMap[");
        if !self.out.domains.iter().any(|d| d.starts_with(&head)) {
            self.out.domains.push(domain_text(&p));
        }
        format!("{p}{f}")
    }

    /// The Viper key and value types of a map-typed expression.
    fn map_vtypes(&mut self, t: &Type) -> R<(Ty, Ty)> {
        match self.viper_ty(t)? {
            Ty::Map(k, v) => Ok((*k, *v)),
            _ => Err(()),
        }
    }

    /// `map<K,V>{k1 -> v1, …}`: updates of the empty map, in order.
    pub(super) fn map_lit(
        &mut self,
        key_ty: &Type,
        val_ty: &Type,
        entries: &[(Expr, Expr)],
        code: bool,
    ) -> R<ExpKind> {
        let (kt, vt) = (self.viper_ty(key_ty)?, self.viper_ty(val_ty)?);
        let mut m = Exp::synth(ExpKind::EmptyMap(kt, vt));
        for (k, v) in entries {
            let kx = self.expr_to(k, Some(key_ty), code)?;
            let vx = self.expr_to(v, Some(val_ty), code)?;
            m = Exp::synth(ExpKind::SeqUpdate(Box::new(m), Box::new(kx), Box::new(vx)));
        }
        Ok(m.kind)
    }

    /// The total lookup `m[k]` of a map `m` of type `mt`.
    pub(super) fn map_get(&mut self, m: Exp, k: &Expr, mt: &Type, code: bool) -> R<ExpKind> {
        let kt = map_types(mt).map(|(k, _)| k);
        let kx = self.expr_to(k, kt.as_ref(), code)?;
        // VerCors 2 checks that the key is in the map (its `mapKey` error): Viper's lookup.
        if self.v2 {
            return Ok(ExpKind::SeqIndex(Box::new(m), Box::new(kx)));
        }
        Ok(ExpKind::App(self.map_fn("vct_map_get"), vec![m, kx]))
    }

    /// `m ++ (k, v)`: `m[k := v]`; `None` when `a ++ b` is no map update.
    pub(super) fn map_concat(
        &mut self,
        a: &Expr,
        b: &Expr,
        code: bool,
        span: Span,
    ) -> Option<R<Exp>> {
        let mt = self.type_of(a).filter(is_map)?;
        let (kt, vt) = map_types(&mt)?;
        Some((|| {
            let ExprKind::Tuple(kv) = &b.kind else {
                self.unsupported("`++` on a map with anything but a pair `(key, value)`", b.span);
                return Err(());
            };
            let [k, v] = kv.as_slice() else {
                self.bad("a map update `m ++ (k, v)` takes a pair", b.span);
                return Err(());
            };
            let m = self.expr(a, code)?;
            let kx = self.expr_to(k, Some(&kt), code)?;
            let vx = self.expr_to(v, Some(&vt), code)?;
            Ok(Exp::new(ExpKind::SeqUpdate(Box::new(m), Box::new(kx), Box::new(vx)), Some(span)))
        })())
    }

    /// The PVL type of a map library call (for [`Encoder::type_of`]).
    pub(super) fn map_call_type(&self, name: &str, args: &[Expr]) -> Option<Type> {
        let mt = self.type_of(args.first()?).filter(is_map)?;
        let (kt, vt) = map_types(&mt)?;
        let set = |t: Type| Type::new(TypeKind::Generic1(front::ast::Generic1::Set, Box::new(t)));
        Some(match (name, args.len()) {
            ("keysMap", 1) => set(kt),
            ("valuesMap", 1) => set(vt),
            ("itemsMap", 1) => set(Type::new(TypeKind::Tuple(Box::new(kt), Box::new(vt)))),
            ("getFromMap", 2) => vt,
            ("buildMap", 3) | ("removeFromMap", 2) => mt,
            ("disjointMap" | "equalsMap" | "isEmpty", _) => Type::boolean(),
            _ => return None,
        })
    }

    /// VerCors' library functions on maps, when the program defines no function of that name
    /// and the first argument is a map; `None` otherwise.
    pub(super) fn map_call(
        &mut self,
        name: &str,
        args: &[Expr],
        code: bool,
        span: Span,
    ) -> Option<R<Exp>> {
        let mt = self.type_of(args.first()?).filter(is_map)?;
        let (kt, vt) = map_types(&mt)?;
        let sp = Some(span);
        let r = (|| -> R<Option<Exp>> {
            let e = match (name, args) {
                ("keysMap", [m]) => Exp::app("domain", vec![self.expr(m, code)?]),
                ("valuesMap", [m]) => Exp::app("range", vec![self.expr(m, code)?]),
                ("isEmpty", [m]) => {
                    let m = self.expr(m, code)?;
                    Exp::bin("==", Exp::synth(ExpKind::Len(Box::new(m))), Exp::int(0))
                }
                ("getFromMap", [m, k]) => {
                    let m = self.expr(m, code)?;
                    Exp::synth(self.map_get(m, k, &mt, code)?)
                }
                ("buildMap", [m, k, v]) => {
                    let m = self.expr(m, code)?;
                    let k = self.expr_to(k, Some(&kt), code)?;
                    let v = self.expr_to(v, Some(&vt), code)?;
                    Exp::synth(ExpKind::SeqUpdate(Box::new(m), Box::new(k), Box::new(v)))
                }
                ("removeFromMap", [m, k]) => {
                    let m = self.expr(m, code)?;
                    let k = self.expr_to(k, Some(&kt), code)?;
                    Exp::app(self.map_fn("vct_map_remove"), vec![m, k])
                }
                ("disjointMap", [a, b]) => {
                    // With a literal on one side, no key of the literal is in the other's
                    // domain: the keys are then terms Z3 can instantiate with (to refute
                    // disjointness, the intersection form needs a common key it cannot guess).
                    let lit = |e: &Expr| match &e.kind {
                        ExprKind::MapLit { entries, .. } => Some(entries.clone()),
                        _ => None,
                    };
                    if let Some((entries, other)) =
                        lit(b).map(|es| (es, a)).or_else(|| lit(a).map(|es| (es, b)))
                    {
                        let dom = Exp::app("domain", vec![self.expr(other, code)?]);
                        let mut all = Vec::new();
                        for (k, _) in &entries {
                            let k = self.expr_to(k, Some(&kt), code)?;
                            all.push(Exp::negate(Exp::bin("in", k, dom.clone())));
                        }
                        Exp::and_all(all)
                    } else {
                        let (kv, _) = self.map_vtypes(&mt)?;
                        let a = self.expr(a, code)?;
                        let b = self.expr(b, code)?;
                        let both = Exp::bin(
                            "intersection",
                            Exp::app("domain", vec![a]),
                            Exp::app("domain", vec![b]),
                        );
                        Exp::bin("==", both, Exp::synth(ExpKind::SetLit(kv, vec![])))
                    }
                }
                ("equalsMap", [a, b]) => {
                    let a = self.expr(a, code)?;
                    let b = self.expr(b, code)?;
                    Exp::bin("==", a, b)
                }
                ("itemsMap", [m]) => {
                    let m = self.expr(m, code)?;
                    self.map_items(m, &mt)?
                }
                _ => return Ok(None),
            };
            Ok(Some(e.with_span(sp)))
        })();
        match r {
            Ok(Some(e)) => Some(Ok(e)),
            Ok(None) => None,
            Err(()) => Some(Err(())),
        }
    }
}
