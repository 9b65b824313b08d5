//! Arrays of arrays: the shape `\matrix(m, x, y)` states, also implied by a sized parameter
//! `int[M][N] m` (`verification.md` §5.2).

use super::Encoder;
use crate::ast::{Contract, Exp, ExpKind, Ty};

impl Encoder<'_> {
    /// `m` is a non-null array of `x` rows that the member may read (wildcard permission on every
    /// row cell), each row non-null (of length `y` when given), and rows pairwise distinct.
    pub(super) fn matrix_shape(&mut self, m: &Exp, x: &Exp, y: Option<&Exp>) -> Exp {
        let i = self.fresh_name("i");
        let k = self.fresh_name("k");
        let iv = Exp::var(&i);
        let range = |v: &Exp| in_rows(v, x);
        let perm = Exp::synth(ExpKind::Forall(
            vec![(i.clone(), Ty::Int)],
            vec![vec![aloc(m, &iv)]],
            Box::new(Exp::implies(
                range(&iv),
                Exp::acc(row(m, &iv), Exp::synth(ExpKind::Wildcard)),
            )),
        ));
        let (shape, distinct) = rows_facts(m, (i, k), y, &range);
        Exp::and_all([
            Exp::bin("!=", m.clone(), Exp::app("anull", vec![])),
            Exp::bin("==", Exp::app("alen", vec![m.clone()]), x.clone()),
            perm,
            shape,
            distinct,
        ])
    }
}

/// A parameter whose rows the member grants itself permission to (`\pointer(m, M, write)` in
/// C, `Perm(m[i], read)`): its Viper name, row count and row length.
pub(super) struct HeldRows {
    pub(super) var: String,
    pub(super) rows: Exp,
    pub(super) len: Option<Exp>,
}

impl Encoder<'_> {
    /// `list` with, after every conjunct that grants permission to rows of a `held` parameter,
    /// the shape of those rows (as `matrix_shape` states it: non-null, of their length,
    /// pairwise distinct) without permissions of their own (a wildcard on top of the member's
    /// own could exceed 1), under the grant's own condition, so that every row it names is
    /// framed by it. Viper allows no `perm(...)` in a contract, hence one copy per grant.
    pub(super) fn after_row_grants(
        &mut self,
        list: Vec<Contract>,
        held: &[HeldRows],
    ) -> Vec<Contract> {
        let mut out = Vec::with_capacity(list.len());
        for c in list {
            let mut facts = Vec::new();
            for h in held {
                if let Some(f) = self.granted_shape(&c.exp, h) {
                    facts.push(Contract { exp: f, origin: c.origin.clone() });
                }
            }
            out.push(c);
            out.extend(facts);
        }
        out
    }

    /// The shape facts of the rows `grant` gives permission to: a quantified grant
    /// `forall k :: G(k) ==> acc(aloc(m, k).arr_val, p)` (in the member's range of rows) or a
    /// single `[c ==>] acc(aloc(m, e).arr_val, p)`.
    fn granted_shape(&mut self, grant: &Exp, h: &HeldRows) -> Option<Exp> {
        let m = Exp::var(&h.var);
        let is_row_acc = |e: &Exp, idx: &mut Option<Exp>| match &e.kind {
            ExpKind::Acc(loc, _) => match &loc.kind {
                ExpKind::Field(r, f) if f == "arr_val" => match &r.kind {
                    ExpKind::App(a, args)
                        if a == "aloc"
                            && args.len() == 2
                            && matches!(&args[0].kind, ExpKind::Var(x) if *x == h.var) =>
                    {
                        *idx = Some(args[1].clone());
                        true
                    }
                    _ => false,
                },
                _ => false,
            },
            _ => false,
        };
        let range = |v: &Exp| in_rows(v, &h.rows);
        // `guard ==> acc(row)` or `acc(row)`.
        let split = |e: &Exp| -> Option<(Option<Exp>, Exp)> {
            let mut idx = None;
            match &e.kind {
                ExpKind::Binary("==>", g, b) if is_row_acc(b, &mut idx) => {
                    Some((Some((**g).clone()), idx?))
                }
                _ if is_row_acc(e, &mut idx) => Some((None, idx?)),
                _ => None,
            }
        };
        match &grant.kind {
            ExpKind::Forall(vars, _, body) if vars.len() == 1 => {
                let (guard, idx) = split(body)?;
                let k = &vars[0].0;
                if !matches!(&idx.kind, ExpKind::Var(x) if x == k) {
                    return None;
                }
                let guard = guard.unwrap_or_else(|| Exp::bool(true));
                let names = (self.fresh_name("i"), self.fresh_name("k"));
                let g = |v: &Exp| Exp::and(range(v), guard.clone().subst(k, v));
                let (shape, distinct) = rows_facts(&m, names, h.len.as_ref(), &g);
                Some(Exp::and(shape, distinct))
            }
            _ => {
                let (guard, idx) = split(grant)?;
                let mut conds = vec![range(&idx)];
                conds.extend(guard);
                Some(Exp::implies(Exp::and_all(conds), row_shape(row(&m, &idx), h.len.as_ref())))
            }
        }
    }
}

/// `0 <= v && v < x`.
fn in_rows(v: &Exp, x: &Exp) -> Exp {
    Exp::and(Exp::bin("<=", Exp::int(0), v.clone()), Exp::bin("<", v.clone(), x.clone()))
}

/// `aloc(m, v)`.
fn aloc(m: &Exp, v: &Exp) -> Exp {
    Exp::app("aloc", vec![m.clone(), v.clone()])
}

/// Row `v` of `m`: `aloc(m, v).arr_val`.
fn row(m: &Exp, v: &Exp) -> Exp {
    Exp::field(aloc(m, v), "arr_val")
}

/// A row `r` is non-null (and `y` long when given).
fn row_shape(r: Exp, y: Option<&Exp>) -> Exp {
    let some = Exp::bin("!=", r.clone(), Exp::app("anull", vec![]));
    match y {
        Some(y) => Exp::and(some, Exp::bin("==", Exp::app("alen", vec![r]), y.clone())),
        None => some,
    }
}

/// Over the rows `guard` admits, with bound variables named `i` and `k`: each row's shape, and
/// rows pairwise distinct.
fn rows_facts(
    m: &Exp,
    (i, k): (String, String),
    y: Option<&Exp>,
    guard: &dyn Fn(&Exp) -> Exp,
) -> (Exp, Exp) {
    let (iv, kv) = (Exp::var(&i), Exp::var(&k));
    let shape = Exp::synth(ExpKind::Forall(
        vec![(i.clone(), Ty::Int)],
        vec![vec![aloc(m, &iv)]],
        Box::new(Exp::implies(guard(&iv), row_shape(row(m, &iv), y))),
    ));
    let distinct = Exp::synth(ExpKind::Forall(
        vec![(i, Ty::Int), (k, Ty::Int)],
        vec![vec![aloc(m, &iv), aloc(m, &kv)]],
        Box::new(Exp::implies(
            Exp::and_all([guard(&iv), guard(&kv), Exp::bin("!=", iv.clone(), kv.clone())]),
            Exp::bin("!=", row(m, &iv), row(m, &kv)),
        )),
    ));
    (shape, distinct)
}
