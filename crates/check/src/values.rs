//! Values that are not numbers: sequences, sets, bags, options, maps, tuples, strings and
//! objects (optimizations.md §1.3 "Encoding").
//!
//! Each such PVL type is an uninterpreted Z3 sort named after the type (`seq<int>`; every class
//! shares `Ref`, so `null` and aliasing between classes mean what they mean at run time). Their
//! operations are uninterpreted functions of the sort (`len`, `at`, `cat`, `slice`, …), and what
//! a refusal needs to know about them is stated as axioms collected in
//! [`Translator::axioms`]. Every axiom is valid for PVL's values (`|s| >= 0`, `|a ++ b| == |a| +
//! |b|`, the elements of a literal, …), so adding one never proves something false; leaving
//! one out only weakens the facts. Object fields are functions of the receiver, versioned like
//! array contents (heap key `.<field>`), so a loop or call that writes the field forgets them.

use super::ctx;
use super::translate::{Term, Translator, Unsupported, Z3Bool, Z3Int};
use front::ast::*;
use front::printer::print_type;
use front::Dialect;
use z3::ast::{Ast, Bool, Dynamic, Int};
use z3::{FuncDecl, Sort, Symbol};

/// How a PVL type is represented in Z3.
#[derive(Clone, Debug, PartialEq)]
pub enum Repr {
    Int,
    Bool,
    /// An uninterpreted sort of this name.
    Val(String),
    /// Arrays (named heap functions), fractions and anything else the translator keeps as `int`
    /// names (its historical default: unknown names are integers).
    Other,
}

pub fn repr(ty: &Type) -> Repr {
    match &ty.kind {
        TypeKind::Int | TypeKind::Char => Repr::Int,
        TypeKind::Boolean | TypeKind::Bool => Repr::Bool,
        TypeKind::Generic1(g, _) if !matches!(g, Generic1::Loc | Generic1::Pointer) => {
            Repr::Val(sort_name(ty))
        }
        TypeKind::Map(..) | TypeKind::Tuple(..) | TypeKind::String => Repr::Val(sort_name(ty)),
        TypeKind::Class(..) => Repr::Val("Ref".into()),
        _ => Repr::Other,
    }
}

/// The sort name of a value type: its canonical spelling, all classes being `Ref`.
fn sort_name(ty: &Type) -> String {
    match &ty.kind {
        TypeKind::Class(..) => "Ref".into(),
        TypeKind::Bool => "boolean".into(),
        TypeKind::Generic1(g, t) => format!("{}<{}>", g.as_str(), sort_name(t)),
        TypeKind::Map(k, v) => format!("map<{},{}>", sort_name(k), sort_name(v)),
        TypeKind::Tuple(a, b) => format!("tuple<{},{}>", sort_name(a), sort_name(b)),
        _ => print_type(ty, Dialect::V1),
    }
}

pub fn z3_sort(ty: &Type) -> Option<Sort<'static>> {
    Some(match repr(ty) {
        Repr::Int => Sort::int(ctx()),
        Repr::Bool => Sort::bool(ctx()),
        Repr::Val(name) => Sort::uninterpreted(ctx(), Symbol::String(name)),
        Repr::Other => return None,
    })
}

/// A term of type `ty` from an application result.
fn typed(d: Dynamic<'static>, ty: &Type) -> Result<Term, Unsupported> {
    let bad = || Unsupported("sort of a value operation".into());
    Ok(match repr(ty) {
        Repr::Int => Term::Int(d.as_int().ok_or_else(bad)?),
        Repr::Bool => Term::Bool(d.as_bool().ok_or_else(bad)?),
        Repr::Val(_) => Term::Val(d, ty.clone()),
        Repr::Other => return Err(bad()),
    })
}

/// A fresh or named constant of type `ty` (`None` for types kept as integers).
pub fn constant(name: &str, ty: &Type) -> Option<Term> {
    let c = ctx();
    Some(match repr(ty) {
        Repr::Bool => Term::Bool(Bool::new_const(c, name)),
        Repr::Val(_) => {
            Term::Val(FuncDecl::new(c, name, &[], &z3_sort(ty)?).apply(&[]), ty.clone())
        }
        Repr::Int | Repr::Other => return None,
    })
}

fn elem(ty: &Type) -> Option<(Generic1, &Type)> {
    match &ty.kind {
        TypeKind::Generic1(g, t) => Some((*g, t)),
        _ => None,
    }
}

fn coll_type(kind: CollKind, elem_ty: Type) -> Type {
    let g = match kind {
        CollKind::Seq => Generic1::Seq,
        CollKind::Set => Generic1::Set,
        CollKind::Bag => Generic1::Bag,
    };
    Type::new(TypeKind::Generic1(g, Box::new(elem_ty)))
}

/// The PVL type of a translated element (for untyped literals `[1, 2]`).
fn type_of(t: &Term) -> Option<Type> {
    match t {
        Term::Int(_) => Some(Type::int()),
        Term::Bool(_) => Some(Type::boolean()),
        Term::Val(_, ty) => Some(ty.clone()),
        Term::Real(_) => None,
    }
}

/// Same Z3 sort? (Equalities and `ite` of different sorts are Z3 errors.)
pub fn same_sort(a: &Term, b: &Term) -> bool {
    a.dynamic().get_sort() == b.dynamic().get_sort()
}

impl Translator {
    /// `op_<sort>(args) : range`, an uninterpreted function of a value sort.
    fn apply(
        &self,
        op: &str,
        of: &Type,
        args: &[&Term],
        range: &Type,
    ) -> Result<Term, Unsupported> {
        let dom: Vec<Sort<'static>> = args.iter().map(|a| a.sort()).collect();
        let dom_refs: Vec<&Sort<'static>> = dom.iter().collect();
        let r = z3_sort(range).ok_or_else(|| Unsupported("value of an unknown sort".into()))?;
        let f = FuncDecl::new(ctx(), format!("{op}_{}", sort_name(of)), &dom_refs, &r);
        let dyns: Vec<Dynamic<'static>> = args.iter().map(|a| a.dynamic()).collect();
        let refs: Vec<&dyn Ast<'static>> = dyns.iter().map(|d| d as &dyn Ast<'static>).collect();
        typed(f.apply(&refs), range)
    }

    /// `|s|`: the length (cardinality) of a sequence, set or bag, never negative.
    pub(super) fn size(&mut self, s: &Term) -> Result<Z3Int, Unsupported> {
        let Term::Val(_, ty) = s else {
            return Err(Unsupported("`|…|` of a value that is not a collection".into()));
        };
        if !matches!(elem(ty), Some((Generic1::Seq | Generic1::Set | Generic1::Bag, _))) {
            return Err(Unsupported("`|…|` of a value that is not a collection".into()));
        }
        let Term::Int(n) = self.apply("len", ty, &[s], &Type::int())? else {
            return Err(Unsupported("length sort".into()));
        };
        self.axioms.push(n.ge(&Int::from_i64(ctx(), 0)));
        Ok(n)
    }

    /// `|e|`, remembering a named sequence's length for counterexamples.
    pub(super) fn length_of(&mut self, e: &Expr) -> Result<Term, Unsupported> {
        let s = self.term(e)?;
        let n = self.size(&s)?;
        if let ExprKind::Name(id) = &e.kind {
            if !self.env.bound.contains_key(&id.name) {
                let v = self.env.vars.get(&id.name).copied().unwrap_or(0);
                let label = if v == 0 {
                    format!("|{}|", id.name)
                } else {
                    format!("|{}| (version {v})", id.name)
                };
                self.remember(label, Term::Int(n.clone()));
            }
        }
        Ok(Term::Int(n))
    }

    /// `s[i]` of a sequence (or `m[k]` of a map).
    pub(super) fn at(&mut self, s: Term, i: &Expr) -> Result<Term, Unsupported> {
        let Term::Val(_, ty) = &s else {
            return Err(Unsupported("indexing a non-sequence".into()));
        };
        match &ty.kind {
            TypeKind::Generic1(Generic1::Seq, el) => {
                let i = Term::Int(self.int(i)?);
                self.apply("at", ty, &[&s, &i], el)
            }
            TypeKind::Map(_, v) => {
                let k = self.term(i)?;
                self.apply("get", ty, &[&s, &k], v)
            }
            _ => Err(Unsupported("indexing a value that is not a sequence or map".into())),
        }
    }

    /// Does `e` denote a sequence or map value (rather than an array)?
    pub(super) fn is_value(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Name(id) => match self.env.bound.get(&id.name) {
                Some(t) => matches!(t, Term::Val(..)),
                None => self.types.get(&id.name).is_some_and(|t| matches!(repr(t), Repr::Val(_))),
            },
            ExprKind::Field(r, f) if matches!(r.kind, ExprKind::This) => {
                self.types.get(&f.name).is_some_and(|t| matches!(repr(t), Repr::Val(_)))
            }
            ExprKind::Index(..) => false,
            // `o.a` of an array field is an array, whatever `o`'s class.
            ExprKind::Field(_, f) => {
                !self.field_types.iter().any(|((_, name), t)| *name == f.name && t.array_dims() > 0)
            }
            _ => true,
        }
    }

    pub(super) fn slice(
        &mut self,
        s: &Expr,
        lo: Option<&Expr>,
        hi: Option<&Expr>,
    ) -> Result<Term, Unsupported> {
        let st = self.term(s)?;
        let Term::Val(_, ty) = &st else {
            return Err(Unsupported("slice of a non-sequence".into()));
        };
        let ty = ty.clone();
        let len = self.size(&st)?;
        let lo = match lo {
            Some(e) => self.int(e)?,
            None => Int::from_i64(ctx(), 0),
        };
        let hi = match hi {
            Some(e) => self.int(e)?,
            None => len.clone(),
        };
        let r =
            self.apply("slice", &ty, &[&st, &Term::Int(lo.clone()), &Term::Int(hi.clone())], &ty)?;
        let rl = self.size(&r)?;
        let ok = Bool::and(ctx(), &[&Int::from_i64(ctx(), 0).le(&lo), &lo.le(&hi), &hi.le(&len)]);
        self.axioms.push(ok.implies(&rl._eq(&Int::sub(ctx(), &[&hi, &lo]))));
        Ok(r)
    }

    /// `a ++ b` and `x :: s`.
    pub(super) fn concat(&mut self, op: BinOp, l: &Expr, r: &Expr) -> Result<Term, Unsupported> {
        let c = ctx();
        let (lt, rt) = (self.term(l)?, self.term(r)?);
        if op == BinOp::Cons {
            let Term::Val(_, ty) = &rt else {
                return Err(Unsupported("`::` onto a non-sequence".into()));
            };
            let ty = ty.clone();
            let res = self.apply("cons", &ty, &[&lt, &rt], &ty)?;
            let (n, m) = (self.size(&res)?, self.size(&rt)?);
            self.axioms.push(n._eq(&Int::add(c, &[&m, &Int::from_i64(c, 1)])));
            let first = self.apply(
                "at",
                &ty,
                &[&res, &Term::Int(Int::from_i64(c, 0))],
                elem(&ty).map_or(&ty, |e| e.1),
            )?;
            if same_sort(&first, &lt) {
                self.axioms.push(first.dynamic()._eq(&lt.dynamic()));
            }
            return Ok(res);
        }
        let Term::Val(_, ty) = &lt else {
            return Err(Unsupported("`++` of a non-sequence".into()));
        };
        let ty = ty.clone();
        if !same_sort(&lt, &rt) || !matches!(elem(&ty), Some((Generic1::Seq, _))) {
            return Err(Unsupported("`++` of values of different types".into()));
        }
        let res = self.apply("cat", &ty, &[&lt, &rt], &ty)?;
        let (n, a, b) = (self.size(&res)?, self.size(&lt)?, self.size(&rt)?);
        self.axioms.push(n._eq(&Int::add(c, &[&a, &b])));
        Ok(res)
    }

    /// `[e1, …]`, `{e1, …}`, `b{e1, …}` and their typed forms; `[t: T]` when `elems` is empty.
    pub(super) fn literal(
        &mut self,
        kind: CollKind,
        elem_ty: Option<&Type>,
        elems: &[Expr],
    ) -> Result<Term, Unsupported> {
        let c = ctx();
        let vals = elems.iter().map(|e| self.term(e)).collect::<Result<Vec<_>, _>>()?;
        let el = match (elem_ty, vals.first()) {
            (Some(t), _) => t.clone(),
            (None, Some(v)) => {
                type_of(v).ok_or_else(|| Unsupported("literal of fractions".into()))?
            }
            (None, None) => return Err(Unsupported("empty literal without a type".into())),
        };
        let ty = coll_type(kind, el.clone());
        let refs: Vec<&Term> = vals.iter().collect();
        if refs.iter().any(|v| !same_sort(v, refs[0])) {
            return Err(Unsupported("literal with elements of different types".into()));
        }
        // An element whose term does not have the declared element type's sort (a name the
        // translator could not type) must not reach Z3's equality, which panics on it.
        if let Some(first) = refs.first() {
            if z3_sort(&el).is_some_and(|s| first.dynamic().get_sort() != s) {
                return Err(Unsupported("literal element of another type than declared".into()));
            }
        }
        let res = self.apply(&format!("lit{}", vals.len()), &ty, &refs, &ty)?;
        let n = self.size(&res)?;
        let count = i64::try_from(vals.len()).unwrap_or(i64::MAX);
        // A set literal may repeat an element: only sequences and bags count them all.
        if kind != CollKind::Set || vals.is_empty() {
            self.axioms.push(n._eq(&Int::from_i64(c, count)));
        }
        for (k, v) in vals.iter().enumerate() {
            if kind == CollKind::Seq {
                let idx = Term::Int(Int::from_i64(c, i64::try_from(k).unwrap_or(i64::MAX)));
                let el_ty = elem(&ty).map(|e| e.1.clone()).unwrap_or_else(Type::int);
                let got = self.apply("at", &ty, &[&res, &idx], &el_ty)?;
                self.axioms.push(got.dynamic()._eq(&v.dynamic()));
            }
            let member = self.apply("mem", &ty, &[v, &res], &Type::boolean())?;
            if let Term::Bool(b) = member {
                self.axioms.push(b);
            }
        }
        Ok(res)
    }

    /// `s[i -> v]`: same length; element `i` is `v` when `i` is in range.
    pub(super) fn update(&mut self, s: &Expr, i: &Expr, v: &Expr) -> Result<Term, Unsupported> {
        let c = ctx();
        let st = self.term(s)?;
        let Term::Val(_, ty) = &st else {
            return Err(Unsupported("update of a non-sequence".into()));
        };
        let ty = ty.clone();
        let Some((Generic1::Seq, el)) = elem(&ty) else {
            return Err(Unsupported("update of a non-sequence".into()));
        };
        let el = el.clone();
        let (iv, vv) = (self.int(i)?, self.term(v)?);
        let res = self.apply("upd", &ty, &[&st, &Term::Int(iv.clone()), &vv], &ty)?;
        let (n, m) = (self.size(&res)?, self.size(&st)?);
        self.axioms.push(n._eq(&m));
        let got = self.apply("at", &ty, &[&res, &Term::Int(iv.clone())], &el)?;
        if same_sort(&got, &vv) {
            let inside = Bool::and(c, &[&Int::from_i64(c, 0).le(&iv), &iv.lt(&m)]);
            self.axioms.push(inside.implies(&got.dynamic()._eq(&vv.dynamic())));
        }
        Ok(res)
    }

    /// `x in s`: membership, uninterpreted but for the elements of literals.
    pub(super) fn member(&mut self, x: &Expr, s: &Expr) -> Result<Term, Unsupported> {
        let (xt, st) = (self.term(x)?, self.term(s)?);
        let Term::Val(_, ty) = &st else {
            return Err(Unsupported("`in` of a non-collection".into()));
        };
        let ty = ty.clone();
        self.apply("mem", &ty, &[&xt, &st], &Type::boolean())
    }

    /// `head(s)` and `tail(s)`.
    pub(super) fn head_tail(&mut self, head: bool, s: &Expr) -> Result<Term, Unsupported> {
        if head {
            let st = self.term(s)?;
            let zero = Expr::int(0);
            return self.at(st, &zero);
        }
        self.slice(s, Some(&Expr::int(1)), None)
    }

    /// `o.f` for an object `o` of class `C`: `fld_C_f` at the field's current heap version.
    pub(super) fn object_field(
        &mut self,
        r: &Expr,
        f: &Ident,
        want_bool: bool,
    ) -> Result<Term, Unsupported> {
        let rt = self.term(r)?;
        let cls = class_of(&rt)?;
        let fty = self
            .field_types
            .get(&(cls.clone(), f.name.clone()))
            .cloned()
            .unwrap_or_else(|| if want_bool { Type::boolean() } else { Type::int() });
        let r_sort = z3_sort(&fty)
            .ok_or_else(|| Unsupported("field that is an array or a fraction".into()))?;
        let ver = self.heap_version(&format!(".{}", f.name));
        let fd =
            FuncDecl::new(ctx(), format!("fld_{cls}_{}_{ver}", f.name), &[&rt.sort()], &r_sort);
        let t = typed(fd.apply(&[&rt.dynamic() as &dyn Ast<'static>]), &fty)?;
        if let ExprKind::Name(id) = &r.kind {
            if matches!(t, Term::Int(_) | Term::Bool(_)) {
                self.remember(format!("{}.{}", id.name, f.name), t.clone());
            }
        }
        Ok(t)
    }

    /// `o.a[i]` (with `idx`) or `o.a.length` (without) for an array field `a` of another
    /// object: functions of the receiver, versioned with the field (a write to the field or to
    /// its cells gives both a new version).
    pub(super) fn object_array(
        &mut self,
        r: &Expr,
        f: &Ident,
        idx: Option<&Expr>,
    ) -> Result<Term, Unsupported> {
        let rt = self.term(r)?;
        let cls = class_of(&rt)?;
        let ver = self.heap_version(&format!(".{}", f.name));
        let c = ctx();
        let (op, range, args) = match idx {
            None => ("olen", Type::int(), vec![rt]),
            Some(i) => {
                let fty = self.field_types.get(&(cls.clone(), f.name.clone()));
                let elem = match fty.map(|t| &t.kind) {
                    Some(TypeKind::Array(el, _)) if matches!(repr(el), Repr::Int | Repr::Bool) => {
                        (**el).clone()
                    }
                    _ => return Err(Unsupported("cell of an array field of unknown type".into())),
                };
                ("osel", elem, vec![rt, Term::Int(self.int(i)?)])
            }
        };
        let dom: Vec<Sort<'static>> = args.iter().map(Term::sort).collect();
        let dom_refs: Vec<&Sort<'static>> = dom.iter().collect();
        let rs = z3_sort(&range).ok_or_else(|| Unsupported("array field sort".into()))?;
        let fd = FuncDecl::new(c, format!("{op}_{cls}_{}_{ver}", f.name), &dom_refs, &rs);
        let dyns: Vec<Dynamic<'static>> = args.iter().map(Term::dynamic).collect();
        let refs: Vec<&dyn Ast<'static>> = dyns.iter().map(|d| d as &dyn Ast<'static>).collect();
        let t = typed(fd.apply(&refs), &range)?;
        if let (None, Term::Int(n)) = (idx, &t) {
            self.axioms.push(n.ge(&Int::from_i64(c, 0)));
        }
        Ok(t)
    }

    /// `o.m(args)` for a pure method `m` of `o`'s class.
    pub(super) fn method_call(
        &mut self,
        recv: &Expr,
        name: &str,
        args: &[Expr],
    ) -> Result<Term, Unsupported> {
        let rt = self.term(recv)?;
        let cls = class_of(&rt)?;
        let Some(m) = self.class_methods.get(&(cls.clone(), name.to_string())).cloned() else {
            return Err(Unsupported(format!("call of `{name}`, not a pure method of `{cls}`")));
        };
        if !m.is_pure() || m.params.len() != args.len() {
            return Err(Unsupported(format!("call of the non-pure method `{name}`")));
        }
        let mut vals = vec![rt];
        for a in args {
            vals.push(self.term(a)?);
        }
        let refs: Vec<&Term> = vals.iter().collect();
        let dom: Vec<Sort<'static>> = refs.iter().map(|a| a.sort()).collect();
        let dom_refs: Vec<&Sort<'static>> = dom.iter().collect();
        let range =
            z3_sort(&m.ret).ok_or_else(|| Unsupported("result of an unknown sort".into()))?;
        let f = FuncDecl::new(ctx(), format!("fn_{cls}_{name}_{}", args.len()), &dom_refs, &range);
        let dyns: Vec<Dynamic<'static>> = refs.iter().map(|a| a.dynamic()).collect();
        let drefs: Vec<&dyn Ast<'static>> = dyns.iter().map(|d| d as &dyn Ast<'static>).collect();
        typed(f.apply(&drefs), &m.ret)
    }

    /// `null`: the one null reference.
    pub(super) fn null(&self) -> Term {
        let ty = Type::new(TypeKind::Class(Ident::synth("Object"), vec![]));
        constant("null", &ty).unwrap_or_else(|| Term::Int(Int::from_i64(ctx(), 0)))
    }
}

fn class_of(t: &Term) -> Result<String, Unsupported> {
    match t {
        Term::Val(_, Type { kind: TypeKind::Class(c, _), .. }) => Ok(c.name.clone()),
        _ => Err(Unsupported("field or method of a value that is not an object".into())),
    }
}

/// Facts of equal sort: `a == b`.
pub fn equal(a: &Term, b: &Term) -> Option<Z3Bool> {
    same_sort(a, b).then(|| a.dynamic()._eq(&b.dynamic()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{prove, Answer};
    use front::parser::parse_expr_text;

    fn e(s: &str) -> Expr {
        parse_expr_text(s, Dialect::V1).expect("parses")
    }

    fn seq_int() -> Type {
        Type::new(TypeKind::Generic1(Generic1::Seq, Box::new(Type::int())))
    }

    /// `facts ⟹ goal` with `xs`, `ys` sequences of ints and `o` an object of class `Box`.
    fn proves(facts: &str, goal: &str) -> Answer {
        let mut tr = Translator::new();
        tr.declare("xs", &seq_int());
        tr.declare("ys", &seq_int());
        tr.declare("o", &Type::new(TypeKind::Class(Ident::synth("Box"), vec![])));
        let f: Vec<Z3Bool> = tr.fact(&e(facts)).into_iter().collect();
        let g = tr.bool(&e(goal)).expect("encodable goal");
        prove(&tr, &f, &g, 2000)
    }

    #[test]
    fn lengths_of_sequence_operations() {
        for (facts, goal) in [
            ("|xs| == 3", "|xs ++ ys| >= 3"),
            ("true", "|[1, 2, 3]| == 3"),
            ("true", "[1, 2, 3][1] == 2"),
            ("|xs| == 4", "|xs[1 .. 3]| == 2"),
            ("|xs| == 4", "|tail(xs)| == 3"),
            ("true", "|7 :: xs| == |xs| + 1"),
            ("|xs| == 2", "|xs[0 -> 5]| == 2"),
            ("xs == ys && |ys| > 0", "|xs| > 0"),
            ("true", "|xs| >= 0"),
            ("true", "2 in [1, 2]"),
            ("o.n > 2", "o.n >= 3"),
        ] {
            assert!(proves(facts, goal).is_proved(), "{facts} ⟹ {goal}");
        }
    }

    /// Nothing false follows: the axioms are valid for PVL's values.
    #[test]
    fn no_false_consequences() {
        for (facts, goal) in [
            ("true", "|{1, 1}| == 2"),
            ("true", "|xs| > 0"),
            ("|xs| == 4", "|xs[3 .. 1]| == -2"),
            ("true", "xs == ys"),
            ("|xs| == 1", "xs[0 -> 5][0] == 6"),
        ] {
            assert!(!proves(facts, goal).is_proved(), "{facts} ⟹ {goal} must not be proved");
        }
    }

    /// Counterexamples show lengths and fields, never a sequence as a number.
    #[test]
    fn counterexample_in_program_types() {
        match proves("|xs| >= 0 && o.n >= 0", "|xs| > 0 || o.n > 0") {
            Answer::Refuted(cx) => {
                assert_eq!(cx.get("|xs|"), Some("0"));
                assert_eq!(cx.get("o.n"), Some("0"));
                assert_eq!(cx.get("xs"), None);
            }
            other => panic!("expected a counterexample, got {other:?}"),
        }
    }

    /// A write to the field (a new heap version) forgets what was known of it.
    #[test]
    fn field_versions() {
        let mut tr = Translator::new();
        tr.declare("o", &Type::new(TypeKind::Class(Ident::synth("Box"), vec![])));
        let f: Vec<Z3Bool> = tr.fact(&e("o.n == 1")).into_iter().collect();
        tr.havoc_heap(".n");
        let g = tr.bool(&e("o.n == 1")).expect("encodable");
        assert!(!prove(&tr, &f, &g, 2000).is_proved());
    }
}
