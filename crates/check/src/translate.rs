//! Translation of PVL expressions to Z3 terms (optimizations.md §1.3 "Encoding").
//!
//! Integers map to Int, booleans to Bool, `/` and `%` to SMT `div`/`mod` (PVL uses the SMT-LIB
//! definitions), `\` to Real division. `a[i]` becomes `sel_a_v(i)` for heap version `v` of the
//! array, `a.length` the constant `len_a` (lengths never change), `m[i].length` `len2_m(i)`.
//! Pure function calls are uninterpreted functions. Anything else is `Unsupported`, and callers
//! drop facts they cannot encode: facts may be weakened, never strengthened.

use super::{ctx, values};
use front::ast::*;
use std::collections::HashMap;
use z3::ast::{Ast, Bool, Dynamic, Int, Real};
use z3::{FuncDecl, Sort};

pub type Z3Int = Int<'static>;
pub type Z3Bool = Bool<'static>;

#[derive(Debug, Clone)]
pub struct Unsupported(pub String);

#[derive(Clone, Debug)]
pub enum Term {
    Int(Z3Int),
    Bool(Z3Bool),
    Real(Real<'static>),
    /// A sequence, set, bag, option, map, tuple, string or object (see [`super::values`]), with
    /// its PVL type (element types for indexing, the class for fields and methods).
    Val(Dynamic<'static>, Type),
}

impl Term {
    pub fn sort(&self) -> Sort<'static> {
        let c = ctx();
        match self {
            Term::Int(_) => Sort::int(c),
            Term::Bool(_) => Sort::bool(c),
            Term::Real(_) => Sort::real(c),
            Term::Val(d, _) => d.get_sort(),
        }
    }

    pub fn dynamic(&self) -> Dynamic<'static> {
        match self {
            Term::Int(i) => Dynamic::from_ast(i),
            Term::Bool(b) => Dynamic::from_ast(b),
            Term::Real(r) => Dynamic::from_ast(r),
            Term::Val(d, _) => d.clone(),
        }
    }
}

/// The value environment: versions of scalar variables and arrays.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// Current version number of each scalar variable (absent = version 0).
    pub vars: HashMap<String, u32>,
    /// Current heap version of each array (absent = 0).
    pub heap: HashMap<String, u32>,
    /// Variables bound to a fixed term (quantifier binders, substitutions).
    pub bound: HashMap<String, Term>,
}

/// Translates PVL expressions in a typing context.
pub struct Translator {
    /// Declared types of variables (parameters, locals, fields). Unknown names are `int`.
    pub types: HashMap<String, Type>,
    pub env: Env,
    /// The environment `\old(…)` refers to.
    pub old: Option<Env>,
    /// Pure functions of the program: name → (parameter types, return type, body).
    pub functions: std::sync::Arc<HashMap<String, Method>>,
    fresh: u32,
    /// User-visible constants created so far, in creation order (for counterexamples).
    pub visible: Vec<(String, Term)>,
    seen: HashMap<String, usize>,
    /// Valid facts about the value terms made so far (`|s| >= 0`, lengths of concatenations, …):
    /// fact collection adds them to Γ, and `prove` to every query.
    pub axioms: Vec<Z3Bool>,
    /// Field types by (class, field), for `o.f` on objects of other classes.
    pub field_types: std::sync::Arc<HashMap<(String, String), Type>>,
    /// Methods by (class, name), for `o.m(…)` calls of pure methods.
    pub class_methods: std::sync::Arc<HashMap<(String, String), Method>>,
}

fn int_sort() -> Sort<'static> {
    Sort::int(ctx())
}

impl Default for Translator {
    fn default() -> Self {
        Translator::new()
    }
}

impl Translator {
    pub fn new() -> Translator {
        Translator {
            types: HashMap::new(),
            env: Env::default(),
            old: None,
            functions: Default::default(),
            fresh: 0,
            visible: Vec::new(),
            seen: HashMap::new(),
            axioms: Vec::new(),
            field_types: Default::default(),
            class_methods: Default::default(),
        }
    }

    pub fn declare(&mut self, name: &str, ty: &Type) {
        self.types.insert(name.to_string(), ty.clone());
    }

    pub fn is_bool_var(&self, name: &str) -> bool {
        matches!(self.types.get(name).map(|t| &t.kind), Some(TypeKind::Boolean | TypeKind::Bool))
    }

    pub(super) fn remember(&mut self, label: String, t: Term) {
        if !self.seen.contains_key(&label) {
            self.seen.insert(label.clone(), self.visible.len());
            self.visible.push((label, t));
        }
    }

    /// The Z3 constant for the current version of scalar `name`.
    pub fn var(&mut self, name: &str) -> Term {
        if let Some(t) = self.env.bound.get(name) {
            return t.clone();
        }
        let v = self.env.vars.get(name).copied().unwrap_or(0);
        let id = format!("{name}@{v}");
        let typed = self.types.get(name).and_then(|ty| values::constant(&id, ty));
        let t = match typed {
            // Collections and objects have no value a counterexample could print; their
            // lengths and fields are remembered where they are used.
            Some(t @ Term::Val(..)) => return t,
            Some(t) => t,
            None => Term::Int(Int::new_const(ctx(), id)),
        };
        let label = if v == 0 { name.to_string() } else { format!("{name} (version {v})") };
        self.remember(label, t.clone());
        t
    }

    /// Give `name` a new, unconstrained version (an assignment we cannot or need not track).
    pub fn havoc(&mut self, name: &str) {
        self.fresh += 1;
        let f = self.fresh;
        *self.env.vars.entry(name.to_string()).or_insert(0) = 1000 + f;
    }

    /// Havoc array contents (a write we do not model precisely).
    pub fn havoc_heap(&mut self, array: &str) {
        self.fresh += 1;
        let f = self.fresh;
        *self.env.heap.entry(array.to_string()).or_insert(0) = 1000 + f;
    }

    pub fn havoc_all_heap(&mut self) {
        let names: Vec<String> = self.env.heap.keys().cloned().collect();
        self.fresh += 1;
        for n in names {
            self.havoc_heap(&n);
        }
        // Arrays not yet seen also get a new version: mark a global epoch.
        let f = self.fresh;
        self.env.heap.insert("*epoch*".into(), f);
    }

    pub(super) fn heap_version(&self, array: &str) -> String {
        let epoch = self.env.heap.get("*epoch*").copied().unwrap_or(0);
        let v = self.env.heap.get(array).copied().unwrap_or(0);
        format!("{v}_{epoch}")
    }

    pub fn fresh_int(&mut self, hint: &str) -> Z3Int {
        self.fresh += 1;
        Int::new_const(ctx(), format!("{hint}!{}", self.fresh))
    }

    pub fn int(&mut self, e: &Expr) -> Result<Z3Int, Unsupported> {
        match self.term(e)? {
            Term::Int(i) => Ok(i),
            Term::Bool(_) => Err(Unsupported(format!("expected an integer expression: {e:?}"))),
            Term::Real(_) => Err(Unsupported("rational in an integer position".into())),
            Term::Val(..) => {
                Err(Unsupported("a collection or object in an integer position".into()))
            }
        }
    }

    pub fn bool(&mut self, e: &Expr) -> Result<Z3Bool, Unsupported> {
        match self.term_ctx(e, true)? {
            Term::Bool(b) => Ok(b),
            _ => Err(Unsupported("expected a boolean expression".into())),
        }
    }

    fn real(&mut self, e: &Expr) -> Result<Real<'static>, Unsupported> {
        match self.term(e)? {
            Term::Int(i) => Ok(Real::from_int(&i)),
            Term::Real(r) => Ok(r),
            Term::Bool(_) | Term::Val(..) => {
                Err(Unsupported("boolean or value in a rational position".into()))
            }
        }
    }

    pub fn term(&mut self, e: &Expr) -> Result<Term, Unsupported> {
        self.term_ctx(e, false)
    }

    /// The array name and heap-version key for an array expression (a name or a field).
    fn array_name(&self, a: &Expr) -> Result<String, Unsupported> {
        match &a.kind {
            ExprKind::Name(id) => Ok(id.name.clone()),
            ExprKind::Field(r, f) if matches!(r.kind, ExprKind::This) => Ok(f.name.clone()),
            _ => Err(Unsupported("array expression that is not a name".into())),
        }
    }

    fn elem_is_bool(&self, array: &str) -> bool {
        matches!(
            self.types.get(array).map(|t| &t.base().kind),
            Some(TypeKind::Boolean | TypeKind::Bool)
        )
    }

    fn select(&mut self, array: &str, idx: &[Z3Int], want_bool: bool) -> Term {
        let ver = self.heap_version(array);
        let is_bool = want_bool || self.elem_is_bool(array);
        let name = format!("sel{}_{}_{}", idx.len(), array, ver);
        let dom: Vec<Sort<'static>> = idx.iter().map(|_| int_sort()).collect();
        let dom_refs: Vec<&Sort<'static>> = dom.iter().collect();
        let range = if is_bool { Sort::bool(ctx()) } else { int_sort() };
        let f = FuncDecl::new(ctx(), name, &dom_refs, &range);
        let args: Vec<&dyn Ast<'static>> = idx.iter().map(|i| i as &dyn Ast<'static>).collect();
        let d: Dynamic<'static> = f.apply(&args);
        let t = match (d.as_int(), d.as_bool()) {
            (Some(i), _) => Term::Int(i),
            (_, Some(b)) => Term::Bool(b),
            _ => Term::Int(Int::from_i64(ctx(), 0)),
        };
        if idx.iter().all(|i| i.as_i64().is_some()) {
            let label = format!(
                "{array}[{}]",
                idx.iter()
                    .map(|i| i.as_i64().unwrap_or(0).to_string())
                    .collect::<Vec<_>>()
                    .join("][")
            );
            self.remember(label, t.clone());
        }
        t
    }

    /// `len_a`: the length of array `a` (never changes).
    pub fn length(&mut self, array: &str) -> Z3Int {
        let t = Int::new_const(ctx(), format!("len_{array}"));
        self.remember(format!("{array}.length"), Term::Int(t.clone()));
        t
    }

    fn length2(&mut self, array: &str, i: &Z3Int) -> Z3Int {
        let f = FuncDecl::new(ctx(), format!("len2_{array}"), &[&int_sort()], &int_sort());
        f.apply(&[i as &dyn Ast<'static>]).as_int().unwrap_or_else(|| Int::from_i64(ctx(), 0))
    }

    fn term_ctx(&mut self, e: &Expr, want_bool: bool) -> Result<Term, Unsupported> {
        use ExprKind as K;
        let c = ctx();
        Ok(match &e.kind {
            K::Int(v) => {
                Term::Int(Int::from_str(c, &v.to_string()).unwrap_or_else(|| Int::from_i64(c, 0)))
            }
            K::Bool(b) => Term::Bool(Bool::from_bool(c, *b)),
            K::Write => Term::Real(Real::from_real(c, 1, 1)),
            K::NoPerm => Term::Real(Real::from_real(c, 0, 1)),
            K::Name(id) => {
                if want_bool
                    && !self.types.contains_key(&id.name)
                    && !self.env.bound.contains_key(&id.name)
                {
                    self.types.insert(id.name.clone(), Type::boolean());
                }
                self.var(&id.name)
            }
            K::Unary(UnOp::Not, x) => Term::Bool(self.bool(x)?.not()),
            K::Unary(UnOp::Neg, x) => match self.term(x)? {
                Term::Int(i) => Term::Int(i.unary_minus()),
                Term::Real(r) => Term::Real(r.unary_minus()),
                Term::Bool(_) | Term::Val(..) => {
                    return Err(Unsupported("negated boolean or value".into()))
                }
            },
            K::Binary(op, l, r) => self.binary(*op, l, r)?,
            K::Cond(cnd, a, b) => {
                let cb = self.bool(cnd)?;
                match (self.term_ctx(a, want_bool)?, self.term_ctx(b, want_bool)?) {
                    (Term::Int(x), Term::Int(y)) => Term::Int(cb.ite(&x, &y)),
                    (Term::Bool(x), Term::Bool(y)) => Term::Bool(cb.ite(&x, &y)),
                    (Term::Val(x, ty), y @ Term::Val(..)) => {
                        if !values::same_sort(&Term::Val(x.clone(), ty.clone()), &y) {
                            return Err(Unsupported(
                                "conditional of values of different types".into(),
                            ));
                        }
                        Term::Val(cb.ite(&x, &y.dynamic()), ty)
                    }
                    (x, y) => {
                        let to_real = |t: Term| match t {
                            Term::Int(i) => Ok(Real::from_int(&i)),
                            Term::Real(r) => Ok(r),
                            Term::Bool(_) | Term::Val(..) => {
                                Err(Unsupported("mixed ternary".into()))
                            }
                        };
                        Term::Real(cb.ite(&to_real(x)?, &to_real(y)?))
                    }
                }
            }
            K::Field(r, f) if f.name == "length" => match &r.kind {
                K::Field(o, g) if !matches!(o.kind, K::This) => self.object_array(o, g, None)?,
                K::Index(m, i) => {
                    let name = self.array_name(m)?;
                    let iv = self.int(i)?;
                    Term::Int(self.length2(&name, &iv))
                }
                _ => {
                    let name = self.array_name(r)?;
                    Term::Int(self.length(&name))
                }
            },
            K::Field(r, f) if matches!(r.kind, K::This) => self.var(&f.name),
            K::Field(r, f) => self.object_field(r, f, want_bool)?,
            K::Null => self.null(),
            K::Length(x) => self.length_of(x)?,
            K::Index(a, i) if self.is_value(a) => {
                let s = self.term(a)?;
                self.at(s, i)?
            }
            K::Slice(s, lo, hi) => self.slice(s, lo.as_deref(), hi.as_deref())?,
            K::SeqUpdate(s, i, v) => self.update(s, i, v)?,
            K::Collection { kind, elem_ty, elems } => {
                self.literal(*kind, elem_ty.as_ref(), elems)?
            }
            K::EmptyCollection(kind, ty) => self.literal(*kind, Some(ty), &[])?,
            K::Builtin(b @ (Builtin::Head | Builtin::Tail), args) if args.len() == 1 => {
                self.head_tail(*b == Builtin::Head, &args[0])?
            }
            K::Index(a, i) => match &a.kind {
                K::Index(m, j) => {
                    let name = self.array_name(m)?;
                    let jv = self.int(j)?;
                    let iv = self.int(i)?;
                    self.select(&name, &[jv, iv], want_bool)
                }
                K::Field(o, g) if !matches!(o.kind, K::This) => self.object_array(o, g, Some(i))?,
                _ => {
                    let name = self.array_name(a)?;
                    let iv = self.int(i)?;
                    self.select(&name, &[iv], want_bool)
                }
            },
            K::Old(x, None) => {
                let Some(old) = self.old.clone() else {
                    return Err(Unsupported("\\old outside a method or par context".into()));
                };
                let saved = std::mem::replace(&mut self.env, old);
                let bound = saved.bound.clone();
                self.env.bound = bound;
                let r = self.term_ctx(x, want_bool);
                self.env = saved;
                r?
            }
            K::Quant { kind, bindings, cond, body } if *kind != QuantKind::ForallStar => {
                self.quant(*kind, bindings, cond.as_deref(), body)?
            }
            K::Let { name, value, body, .. } => {
                let v = self.term(value)?;
                let prev = self.env.bound.insert(name.name.clone(), v);
                let r = self.term_ctx(body, want_bool);
                restore(&mut self.env.bound, &name.name, prev);
                r?
            }
            K::Call { recv, name, args, ghost, .. } if ghost.is_empty() => match recv.as_deref() {
                None | Some(Expr { kind: K::This, .. }) => {
                    self.call(&name.name, args, want_bool)?
                }
                Some(r) => self.method_call(r, &name.name, args)?,
            },
            K::Trigger(_, x) => self.term_ctx(x, want_bool)?,
            K::Builtin(Builtin::Array, args) if args.len() == 2 => {
                let name = self.array_name(&args[0])?;
                let n = self.int(&args[1])?;
                Term::Bool(self.length(&name)._eq(&n))
            }
            _ => {
                let text = front::printer::print_expr(e, front::Dialect::V1);
                let text = if text.chars().count() > 60 {
                    format!("{}…", text.chars().take(60).collect::<String>())
                } else {
                    text
                };
                return Err(Unsupported(format!("cannot encode `{text}` ({})", kind_name(e))));
            }
        })
    }

    fn binary(&mut self, op: BinOp, l: &Expr, r: &Expr) -> Result<Term, Unsupported> {
        let c = ctx();
        Ok(match op {
            BinOp::And | BinOp::Star => Term::Bool(Bool::and(c, &[&self.bool(l)?, &self.bool(r)?])),
            BinOp::Or => Term::Bool(Bool::or(c, &[&self.bool(l)?, &self.bool(r)?])),
            BinOp::Implies => Term::Bool(self.bool(l)?.implies(&self.bool(r)?)),
            BinOp::Concat | BinOp::Cons => self.concat(op, l, r)?,
            BinOp::In => self.member(l, r)?,
            BinOp::Eq | BinOp::Ne => {
                let lt = self.term(l)?;
                let rt = match lt {
                    Term::Bool(_) => Term::Bool(self.bool(r)?),
                    _ => self.term(r)?,
                };
                let eq = match (lt, rt) {
                    (Term::Int(a), Term::Int(b)) => a._eq(&b),
                    (Term::Bool(a), Term::Bool(b)) => a._eq(&b),
                    (a @ Term::Val(..), b) | (a, b @ Term::Val(..)) => values::equal(&a, &b)
                        .ok_or_else(|| {
                            Unsupported("equality of values of different types".into())
                        })?,
                    (a, b) => {
                        let ar = as_real(a)?;
                        let br = as_real(b)?;
                        ar._eq(&br)
                    }
                };
                Term::Bool(if op == BinOp::Eq { eq } else { eq.not() })
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => match (self.term(l)?, self.term(r)?) {
                (Term::Int(a), Term::Int(b)) => Term::Bool(match op {
                    BinOp::Lt => a.lt(&b),
                    BinOp::Le => a.le(&b),
                    BinOp::Gt => a.gt(&b),
                    _ => a.ge(&b),
                }),
                (a, b) => {
                    let (a, b) = (as_real(a)?, as_real(b)?);
                    Term::Bool(match op {
                        BinOp::Lt => a.lt(&b),
                        BinOp::Le => a.le(&b),
                        BinOp::Gt => a.gt(&b),
                        _ => a.ge(&b),
                    })
                }
            },
            BinOp::Add | BinOp::Sub | BinOp::Mul => match (self.term(l)?, self.term(r)?) {
                (Term::Int(a), Term::Int(b)) => Term::Int(match op {
                    BinOp::Add => Int::add(c, &[&a, &b]),
                    BinOp::Sub => Int::sub(c, &[&a, &b]),
                    _ => Int::mul(c, &[&a, &b]),
                }),
                (a, b) => {
                    let (a, b) = (as_real(a)?, as_real(b)?);
                    Term::Real(match op {
                        BinOp::Add => Real::add(c, &[&a, &b]),
                        BinOp::Sub => Real::sub(c, &[&a, &b]),
                        _ => Real::mul(c, &[&a, &b]),
                    })
                }
            },
            BinOp::Div => Term::Int(self.int(l)?.div(&self.int(r)?)),
            BinOp::Mod => Term::Int(self.int(l)?.modulo(&self.int(r)?)),
            BinOp::TruncDiv | BinOp::TruncMod => {
                Term::Int(truncated(op == BinOp::TruncDiv, &self.int(l)?, &self.int(r)?))
            }
            BinOp::Frac => Term::Real(self.real(l)?.div(&self.real(r)?)),
            _ => return Err(Unsupported(format!("operator `{}`", op.symbol()))),
        })
    }

    /// A fresh integer constant for the bound variable `b`, bound in the environment; what it
    /// shadows goes on `prevs`, for the caller to restore.
    fn bind_fresh(&mut self, b: &Binding, prevs: &mut Vec<(String, Option<Term>)>) -> Term {
        self.fresh += 1;
        let name = format!("{}!q{}", b.name.name, self.fresh);
        let k = match values::constant(&name, &b.ty) {
            Some(t) if b.range.is_none() => t,
            _ => Term::Int(Int::new_const(ctx(), name)),
        };
        let prev = self.env.bound.insert(b.name.name.clone(), k.clone());
        prevs.push((b.name.name.clone(), prev));
        k
    }

    fn quant(
        &mut self,
        kind: QuantKind,
        bindings: &[Binding],
        cond: Option<&Expr>,
        body: &Expr,
    ) -> Result<Term, Unsupported> {
        let c = ctx();
        let mut consts = Vec::new();
        let mut guards = Vec::new();
        let mut prevs = Vec::new();
        for b in bindings {
            if matches!(values::repr(&b.ty), values::Repr::Other) {
                return Err(Unsupported("quantifier over an array or fraction type".into()));
            }
            let t = self.bind_fresh(b, &mut prevs);
            let k = match &t {
                Term::Int(k) => k.clone(),
                _ => {
                    consts.push(t.dynamic());
                    continue;
                }
            };
            if let Some((lo, hi)) = &b.range {
                let lo = self.int(lo);
                let hi = self.int(hi);
                match (lo, hi) {
                    (Ok(lo), Ok(hi)) => guards.push(Bool::and(c, &[&lo.le(&k), &k.lt(&hi)])),
                    (Err(e), _) | (_, Err(e)) => {
                        for (n, p) in prevs {
                            restore(&mut self.env.bound, &n, p);
                        }
                        return Err(e);
                    }
                }
            }
            consts.push(Dynamic::from_ast(&k));
        }
        let res = (|| {
            if let Some(cnd) = cond {
                guards.push(self.bool(cnd)?);
            }
            let b = self.bool(body)?;
            let g = Bool::and(c, &guards.iter().collect::<Vec<_>>());
            Ok::<_, Unsupported>((g, b))
        })();
        for (n, p) in prevs.into_iter().rev() {
            restore(&mut self.env.bound, &n, p);
        }
        let (g, b) = res?;
        let vars: Vec<&dyn Ast<'static>> = consts.iter().map(|k| k as &dyn Ast<'static>).collect();
        Ok(Term::Bool(match kind {
            QuantKind::Exists => z3::ast::exists_const(c, &vars, &[], &Bool::and(c, &[&g, &b])),
            _ => z3::ast::forall_const(c, &vars, &[], &g.implies(&b)),
        }))
    }

    fn call(&mut self, name: &str, args: &[Expr], want_bool: bool) -> Result<Term, Unsupported> {
        let c = ctx();
        let method = self.functions.get(name).cloned();
        let ret_bool = match &method {
            Some(m) => matches!(m.ret.kind, TypeKind::Boolean | TypeKind::Bool),
            None => want_bool,
        };
        let ret_val = method
            .as_ref()
            .filter(|m| matches!(values::repr(&m.ret), values::Repr::Val(_)))
            .map(|m| m.ret.clone());
        if let Some(m) = &method {
            if !m.is_pure() || m.params.len() != args.len() {
                return Err(Unsupported(format!("call of the non-pure method `{name}`")));
            }
        }
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.term(a)?);
        }
        let sorts: Vec<Sort<'static>> = vals.iter().map(Term::sort).collect();
        let sort_refs: Vec<&Sort<'static>> = sorts.iter().collect();
        let range = match ret_val.as_ref().and_then(values::z3_sort) {
            Some(s) => s,
            None if ret_bool => Sort::bool(c),
            None => Sort::int(c),
        };
        let f = FuncDecl::new(c, format!("fn_{name}_{}", args.len()), &sort_refs, &range);
        let dyn_args: Vec<Dynamic<'static>> = vals.iter().map(Term::dynamic).collect();
        let arg_refs: Vec<&dyn Ast<'static>> =
            dyn_args.iter().map(|d| d as &dyn Ast<'static>).collect();
        let d = f.apply(&arg_refs);
        if let Some(ty) = ret_val {
            return Ok(Term::Val(d, ty));
        }
        Ok(if ret_bool {
            Term::Bool(d.as_bool().ok_or_else(|| Unsupported("call sort".into()))?)
        } else {
            Term::Int(d.as_int().ok_or_else(|| Unsupported("call sort".into()))?)
        })
    }

    /// Pure consequences of a (possibly resource-carrying) assertion, used as a fact. `None` if
    /// nothing can be said (the fact is dropped, which only weakens the context).
    pub fn fact(&mut self, e: &Expr) -> Option<Z3Bool> {
        use ExprKind as K;
        let c = ctx();
        match &e.kind {
            K::Binary(BinOp::And | BinOp::Star, l, r) => match (self.fact(l), self.fact(r)) {
                (Some(a), Some(b)) => Some(Bool::and(c, &[&a, &b])),
                (a, b) => a.or(b),
            },
            K::Binary(BinOp::Implies, l, r) => {
                let g = self.bool(l).ok()?;
                Some(g.implies(&self.fact(r)?))
            }
            K::Cond(cnd, a, b) => {
                let g = self.bool(cnd).ok()?;
                let t = Bool::from_bool(c, true);
                let fa = self.fact(a).unwrap_or_else(|| t.clone());
                let fb = self.fact(b).unwrap_or(t);
                Some(g.ite(&fa, &fb))
            }
            K::Builtin(Builtin::Perm | Builtin::Value, args) => self.wellformed(args.first()?),
            K::Builtin(Builtin::PointsTo, args) if args.len() == 3 => {
                let wf = self.wellformed(&args[0]);
                let eq = self.bool(&Expr::bin(BinOp::Eq, args[0].clone(), args[2].clone())).ok();
                match (wf, eq) {
                    (Some(a), Some(b)) => Some(Bool::and(c, &[&a, &b])),
                    (a, b) => a.or(b),
                }
            }
            K::Builtin(Builtin::Matrix, args) if args.len() == 3 => {
                let name = self.array_name(&args[0]).ok()?;
                let r = self.int(&args[1]).ok()?;
                let col = self.int(&args[2]).ok()?;
                let len = self.length(&name);
                let i = self.fresh_int("row");
                let row_len = self.length2(&name, &i);
                let rows = z3::ast::forall_const(
                    c,
                    &[&i as &dyn Ast<'static>],
                    &[],
                    &Bool::and(c, &[&Int::from_i64(c, 0).le(&i), &i.lt(&r)])
                        .implies(&row_len._eq(&col)),
                );
                Some(Bool::and(c, &[&len._eq(&r), &rows]))
            }
            // A pure `\forall` whose body cannot be encoded as a whole (`m[r] != null &&
            // m[r].length == w`: row null tests are not encoded) keeps its encodable conjuncts,
            // like a `\forall*`.
            K::Quant { kind: QuantKind::Forall, bindings, cond, body } => match self.bool(e) {
                Ok(b) => Some(b),
                Err(_) => self.fact_quant(bindings, cond.as_deref(), body),
            },
            K::Quant { kind: QuantKind::ForallStar, bindings, cond, body } => self
                .range_bounds(bindings, cond.as_deref(), body)
                .or_else(|| self.fact_quant(bindings, cond.as_deref(), body)),
            K::Call { .. } if self.is_resource_call(e) => None,
            _ => self.bool(e).ok(),
        }
    }

    /// `(\forall* int k; lo <= k && k < hi; Perm(a[k], _))`, the commonest permission, as the
    /// quantifier-free fact it implies: `hi <= lo || (0 <= lo && hi <= a.length)` (the range is
    /// empty, or its ends are in bounds). Equivalent to the quantified form over the integers,
    /// and much cheaper: a query with no quantifier left skips the solver's quantifier engine.
    /// `None` for any other shape (the general encoding then applies).
    fn range_bounds(
        &mut self,
        bindings: &[Binding],
        cond: Option<&Expr>,
        body: &Expr,
    ) -> Option<Z3Bool> {
        use front::exprtext::mentions;
        let [b] = bindings else { return None };
        if !matches!(b.ty.kind, TypeKind::Int) {
            return None;
        }
        let k = b.name.name.as_str();
        let ExprKind::Builtin(Builtin::Perm, args) = &body.kind else { return None };
        let ExprKind::Index(arr, idx) = &args.first()?.kind else { return None };
        if !matches!(&idx.kind, ExprKind::Name(n) if n.name == k) || mentions(arr, k) {
            return None;
        }
        let args_rest = &args[1..];
        if args_rest.iter().any(|a| mentions(a, k)) {
            return None;
        }
        // The binder's range, from `int k = lo .. hi` or from a condition `lo <= k && k < hi`.
        let (lo, hi) = match (&b.range, cond) {
            (Some((lo, hi)), None) => (self.int(lo).ok()?, self.int(hi).ok()?),
            (None, Some(c)) => self.int_range(c, k)?,
            _ => return None,
        };
        let name = self.array_name(arr).ok()?;
        let len = self.length(&name);
        let zero = Int::from_i64(ctx(), 0);
        Some(Bool::or(ctx(), &[&hi.le(&lo), &Bool::and(ctx(), &[&zero.le(&lo), &hi.le(&len)])]))
    }

    /// `(lo, hi)` when `cond` is exactly `lo <= k && k < hi` (either order, either way round,
    /// `<=` on the upper end as `hi - 1`), with `lo` and `hi` free of `k`.
    fn int_range(&mut self, cond: &Expr, k: &str) -> Option<(Z3Int, Z3Int)> {
        use front::exprtext::mentions;
        let ExprKind::Binary(BinOp::And, l, r) = &cond.kind else { return None };
        let is_k = |e: &Expr| matches!(&e.kind, ExprKind::Name(n) if n.name == k);
        // Some((true, bound)) for a lower bound `bound <= k`, (false, bound) for `k < bound`.
        let side = |e: &Expr| -> Option<(bool, Expr, i64)> {
            let ExprKind::Binary(op, a, b) = &e.kind else { return None };
            let (op, other, k_left) = if is_k(a) && !mentions(b, k) {
                (*op, (**b).clone(), true)
            } else if is_k(b) && !mentions(a, k) {
                (*op, (**a).clone(), false)
            } else {
                return None;
            };
            // Read as `k OP other`.
            match if k_left { op } else { op.converse() } {
                BinOp::Ge => Some((true, other, 0)),
                BinOp::Gt => Some((true, other, 1)),
                BinOp::Lt => Some((false, other, 0)),
                BinOp::Le => Some((false, other, 1)),
                _ => None,
            }
        };
        let (a, b) = (side(l)?, side(r)?);
        let ((_, lo, dlo), (_, hi, dhi)) = match (a.0, b.0) {
            (true, false) => (a, b),
            (false, true) => (b, a),
            _ => return None,
        };
        let shift = |t: Z3Int, d: i64| if d == 0 { t } else { t + Int::from_i64(ctx(), d) };
        let lo = shift(self.int(&lo).ok()?, dlo);
        let hi = shift(self.int(&hi).ok()?, dhi);
        Some((lo, hi))
    }

    /// The encodable part of `(\forall[*] bindings; cond; body)` as a fact.
    fn fact_quant(
        &mut self,
        bindings: &[Binding],
        cond: Option<&Expr>,
        body: &Expr,
    ) -> Option<Z3Bool> {
        let c = ctx();
        let mut consts = Vec::new();
        let mut guards = Vec::new();
        let mut prevs = Vec::new();
        for b in bindings {
            let t = self.bind_fresh(b, &mut prevs);
            if let (Some((lo, hi)), Term::Int(k)) = (&b.range, &t) {
                if let (Ok(lo), Ok(hi)) = (self.int(lo), self.int(hi)) {
                    guards.push(Bool::and(c, &[&lo.le(k), &k.lt(&hi)]));
                }
            }
            consts.push(t.dynamic());
        }
        let inner = (|| {
            if let Some(cnd) = cond {
                guards.push(self.bool(cnd).ok()?);
            }
            let f = self.fact(body)?;
            Some((Bool::and(c, &guards.iter().collect::<Vec<_>>()), f))
        })();
        for (n, p) in prevs.into_iter().rev() {
            restore(&mut self.env.bound, &n, p);
        }
        let (g, f) = inner?;
        let vars: Vec<&dyn Ast<'static>> = consts.iter().map(|k| k as &dyn Ast<'static>).collect();
        Some(z3::ast::forall_const(c, &vars, &[], &g.implies(&f)))
    }

    fn is_resource_call(&self, e: &Expr) -> bool {
        if let ExprKind::Call { name, .. } = &e.kind {
            return self.functions.get(&name.name).is_some_and(|m| m.is_predicate());
        }
        false
    }

    /// `0 <= i < a.length` for a location `a[i]` (and the row bounds for `m[i][j]`).
    fn wellformed(&mut self, loc: &Expr) -> Option<Z3Bool> {
        let c = ctx();
        match &loc.kind {
            ExprKind::Index(a, i) => {
                let iv = self.int(i).ok()?;
                let zero = Int::from_i64(c, 0);
                let len = match &a.kind {
                    ExprKind::Index(m, j) => {
                        let name = self.array_name(m).ok()?;
                        let jv = self.int(j).ok()?;
                        let outer = self.length(&name);
                        let inner = self.length2(&name, &jv);
                        return Some(Bool::and(
                            c,
                            &[&zero.le(&jv), &jv.lt(&outer), &zero.le(&iv), &iv.lt(&inner)],
                        ));
                    }
                    _ => {
                        let name = self.array_name(a).ok()?;
                        self.length(&name)
                    }
                };
                Some(Bool::and(c, &[&zero.le(&iv), &iv.lt(&len)]))
            }
            _ => None,
        }
    }
}

fn restore(map: &mut HashMap<String, Term>, name: &str, prev: Option<Term>) {
    match prev {
        Some(p) => {
            map.insert(name.to_string(), p);
        }
        None => {
            map.remove(name);
        }
    }
}

fn as_real(t: Term) -> Result<Real<'static>, Unsupported> {
    match t {
        Term::Int(i) => Ok(Real::from_int(&i)),
        Term::Real(r) => Ok(r),
        Term::Bool(_) | Term::Val(..) => {
            Err(Unsupported("boolean or value compared with a number".into()))
        }
    }
}

fn kind_name(e: &Expr) -> &'static str {
    match &e.kind {
        ExprKind::Builtin(..) => "a permission or built-in",
        ExprKind::Quant { .. } => "a quantifier",
        ExprKind::Call { .. } => "a call",
        ExprKind::Read => "`read`",
        ExprKind::Old(..) => "`\\old`",
        ExprKind::Sum { .. } => "a sum",
        ExprKind::NewObject(..) | ExprKind::NewArray(..) => "an allocation",
        ExprKind::Result => "`\\result`",
        ExprKind::Unary(..) => "an operator on values of this type",
        _ => "an unsupported form",
    }
}

/// C's truncating `a / b` (`div`) or `a % b`, over Z3's Euclidean `div` and `mod`: equal when
/// `a >= 0` or `b` divides `a`, else the quotient is one nearer zero and the remainder `|b|`
/// lower (linear in the two Euclidean terms; see `viper::encode::coerce`).
pub fn truncated<'c>(div: bool, a: &Int<'c>, b: &Int<'c>) -> Int<'c> {
    let c = a.get_ctx();
    let (zero, one) = (Int::from_i64(c, 0), Int::from_i64(c, 1));
    let rem = a.modulo(b);
    let exact = Bool::or(c, &[&a.ge(&zero), &rem._eq(&zero)]);
    let positive = b.gt(&zero);
    if div {
        let q = a.div(b);
        let step = positive.ite(&one, &one.unary_minus());
        exact.ite(&q, &Int::add(c, &[&q, &step]))
    } else {
        let abs = positive.ite(b, &b.unary_minus());
        exact.ite(&rem, &Int::sub(c, &[&rem, &abs]))
    }
}
