//! Array allocation `new T[n1]…[nd]`: a bodiless method per element kind and dimension count,
//! declared on first use (`verification.md` §5.2). One and two dimensions of `int`, and one of
//! `boolean`, are the prelude's `new_int_array`, `new_int_matrix` and `new_bool_array`.

use super::typing::REF_FIELD;
use super::Encoder;
use crate::ast::{Contract, Exp, ExpKind, Method, MethodKind, Origin, Ty};
use front::ast::{Type, TypeKind};

impl Encoder<'_> {
    /// The method allocating an array of `dims` dimensions of `elem` (the innermost element
    /// type), or `None` for an element type arrays do not hold yet.
    pub(super) fn alloc_method(&mut self, elem: &Type, dims: usize) -> Option<String> {
        let (kind, field, zero) = match elem.kind {
            TypeKind::Int => ("int", "int_val", Exp::int(0)),
            TypeKind::Boolean | TypeKind::Bool => ("bool", "bool_val", Exp::bool(false)),
            TypeKind::Class(..) => ("ref", REF_FIELD, Exp::synth(ExpKind::Null)),
            // Floats are reals (`floats.rs`), in the `perm_val` cells `value_field` declares.
            TypeKind::Float32 | TypeKind::Float64 => {
                self.value_field(elem)?;
                ("real", "perm_val", super::floats::real(0.into(), 1.into()))
            }
            _ => return None,
        };
        match (kind, dims) {
            (_, 0) => return None,
            ("int", 1) => return Some("new_int_array".into()),
            ("bool", 1) => return Some("new_bool_array".into()),
            ("int", 2) => return Some("new_int_matrix".into()),
            _ => {}
        }
        let name = format!("vct_new_{kind}_array{dims}");
        if self.out.methods.iter().any(|m| m.name == name) {
            return Some(name);
        }
        if field == REF_FIELD && !self.out.fields.iter().any(|(n, _)| n == REF_FIELD) {
            self.out.fields.push((REF_FIELD.to_string(), Ty::Ref));
        }
        let ns: Vec<String> = (0..dims).map(|k| format!("n{k}")).collect();
        let is: Vec<String> = (0..dims).map(|k| format!("i{k}")).collect();
        let js: Vec<String> = (0..dims).map(|k| format!("j{k}")).collect();
        let r = Exp::var("r");
        // The array holding level `k` cells (the result for k = 0), indexed by `vars[..k]`.
        let holder = |vars: &[String], k: usize| {
            (0..k).fold(r.clone(), |a, l| {
                Exp::field(Exp::app("aloc", vec![a, Exp::var(&vars[l])]), "arr_val")
            })
        };
        let cell =
            |vars: &[String], k: usize| Exp::app("aloc", vec![holder(vars, k), Exp::var(&vars[k])]);
        let range = |vars: &[String], k: usize| {
            Exp::and_all((0..=k).map(|l| {
                Exp::and(
                    Exp::bin("<=", Exp::int(0), Exp::var(&vars[l])),
                    Exp::bin("<", Exp::var(&vars[l]), Exp::var(&ns[l])),
                )
            }))
        };
        let forall = |vars: &[String], trig: Vec<Exp>, body: Exp| {
            let bound = vars.iter().map(|v| (v.clone(), Ty::Int)).collect();
            Exp::synth(ExpKind::Forall(bound, vec![trig], Box::new(body)))
        };
        let mut posts = vec![Exp::and(
            Exp::bin("!=", r.clone(), Exp::app("anull", vec![])),
            Exp::bin("==", Exp::app("alen", vec![r.clone()]), Exp::var(&ns[0])),
        )];
        for k in 0..dims - 1 {
            let row = Exp::field(cell(&is, k), "arr_val");
            let vs = &is[..=k];
            posts.push(forall(
                vs,
                vec![cell(&is, k)],
                Exp::implies(range(&is, k), Exp::acc(row.clone(), Exp::synth(ExpKind::Write))),
            ));
            posts.push(forall(
                vs,
                vec![cell(&is, k)],
                Exp::implies(
                    range(&is, k),
                    Exp::and(
                        Exp::bin("!=", row.clone(), Exp::app("anull", vec![])),
                        Exp::bin("==", Exp::app("alen", vec![row.clone()]), Exp::var(&ns[k + 1])),
                    ),
                ),
            ));
            // Rows at this level are pairwise distinct (also across different parents).
            let other = Exp::field(cell(&js, k), "arr_val");
            let differ = (0..=k)
                .map(|l| Exp::bin("!=", Exp::var(&is[l]), Exp::var(&js[l])))
                .reduce(|a, b| Exp::bin("||", a, b))
                .expect("at least one level");
            let both: Vec<String> = vs.iter().chain(&js[..=k]).cloned().collect();
            posts.push(forall(
                &both,
                vec![cell(&is, k), cell(&js, k)],
                Exp::implies(
                    Exp::and_all([range(&is, k), range(&js, k), differ]),
                    Exp::bin("!=", row, other),
                ),
            ));
        }
        let leaf = Exp::field(cell(&is, dims - 1), field);
        posts.push(forall(
            &is,
            vec![cell(&is, dims - 1)],
            Exp::implies(range(&is, dims - 1), Exp::acc(leaf.clone(), Exp::synth(ExpKind::Write))),
        ));
        posts.push(forall(
            &is,
            vec![cell(&is, dims - 1)],
            Exp::implies(range(&is, dims - 1), Exp::bin("==", leaf, zero)),
        ));
        let pre = Exp::and_all(ns.iter().map(|n| Exp::bin(">=", Exp::var(n), Exp::int(0))));
        let contract = |exp| Contract { exp, origin: Origin::synthetic() };
        self.out.methods.push(Method {
            name: name.clone(),
            params: ns.iter().map(|n| (n.clone(), Ty::Int)).collect(),
            returns: vec![("r".into(), Ty::Arr)],
            pres: vec![contract(pre)],
            posts: posts.into_iter().map(contract).collect(),
            body: None,
            kind: MethodKind::Prelude,
            span: None,
        });
        Some(name)
    }
}
