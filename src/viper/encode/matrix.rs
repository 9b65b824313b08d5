//! Arrays of arrays: the shape `\matrix(m, x, y)` states, also implied by a sized parameter
//! `int[M][N] m` (`verification.md` §5.2).

use super::Encoder;
use crate::viper::ast::{Exp, ExpKind, Ty};

impl Encoder<'_> {
    /// `m` is a non-null array of `x` rows that the member may read (wildcard permission on every
    /// row cell), each row non-null (of length `y` when given), and rows pairwise distinct.
    pub(super) fn matrix_shape(&mut self, m: &Exp, x: &Exp, y: Option<&Exp>) -> Exp {
        let i = self.fresh_name("i");
        let k = self.fresh_name("k");
        let iv = Exp::var(&i);
        let kv = Exp::var(&k);
        let range = |v: &Exp| {
            Exp::and(Exp::bin("<=", Exp::int(0), v.clone()), Exp::bin("<", v.clone(), x.clone()))
        };
        let row = |v: &Exp| Exp::field(Exp::app("aloc", vec![m.clone(), v.clone()]), "arr_val");
        let trig = |v: &Exp| vec![vec![Exp::app("aloc", vec![m.clone(), v.clone()])]];
        let forall = |vars: Vec<(String, Ty)>, trig: Vec<Vec<Exp>>, body: Exp| {
            Exp::synth(ExpKind::Forall(vars, trig, Box::new(body)))
        };
        let perm = forall(
            vec![(i.clone(), Ty::Int)],
            trig(&iv),
            Exp::implies(range(&iv), Exp::acc(row(&iv), Exp::synth(ExpKind::Wildcard))),
        );
        let some = Exp::bin("!=", row(&iv), Exp::app("anull", vec![]));
        let shape_body = match y {
            Some(y) => Exp::and(some, Exp::bin("==", Exp::app("alen", vec![row(&iv)]), y.clone())),
            None => some,
        };
        let shape =
            forall(vec![(i.clone(), Ty::Int)], trig(&iv), Exp::implies(range(&iv), shape_body));
        let both = vec![vec![
            Exp::app("aloc", vec![m.clone(), iv.clone()]),
            Exp::app("aloc", vec![m.clone(), kv.clone()]),
        ]];
        let distinct = forall(
            vec![(i, Ty::Int), (k, Ty::Int)],
            both,
            Exp::implies(
                Exp::and_all([range(&iv), range(&kv), Exp::bin("!=", iv.clone(), kv.clone())]),
                Exp::bin("!=", row(&iv), row(&kv)),
            ),
        );
        Exp::and_all([
            Exp::bin("!=", m.clone(), Exp::app("anull", vec![])),
            Exp::bin("==", Exp::app("alen", vec![m.clone()]), x.clone()),
            perm,
            shape,
            distinct,
        ])
    }
}
