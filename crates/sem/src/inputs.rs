//! Input generation (semantics.md §10): sizes and scalars from a Z3 model of the precondition's
//! shape conjuncts, array contents from a seeded PRNG. Candidates whose precondition fails at
//! run time are rejected by the caller and redrawn.

use super::compile::{Body, CClause, CMethod, CProgram, Ty, CE};
use super::heap::{default_of, Heap};
use super::interp::Interp;
use super::value::{Amt, Rng, Value, Q};
use num_rational::BigRational;
use std::collections::BTreeMap;
use std::rc::Rc;
use z3::ast::{Ast, Bool, Int};

mod contents;
mod translate;

use translate::{let_chain, Vars};

/// The longest generated array: only reached when the user's sizes need it (2^24 cells, a
/// vector add at n = 2^20 with room to spare).
const MAX_LEN: i64 = 1 << 24;

/// A concrete input value, independent of any heap.
#[derive(Clone, Debug, PartialEq)]
pub enum InVal {
    Int(i64),
    Bool(bool),
    Null,
    Array(Ty, Vec<InVal>),
    Seq(Vec<InVal>),
    /// An object of the named class (empty: the class of the parameter or field it is given
    /// for) with field values by name; a field left out has its default value.
    Object(String, Vec<(String, InVal)>),
    /// A `frac`, `zfrac` or `rational` value q + k·ε (an amount: `read` is one too); kept
    /// apart from [`Amt`], which is not `Send`.
    Rat(BigRational, i64),
    /// An integer outside the `i64` range.
    Big(num_bigint::BigInt),
    Set(Vec<InVal>),
    Bag(Vec<InVal>),
    /// A map's entries (a lookup outside them gives the default of the value type).
    Map(Vec<(InVal, InVal)>),
    Opt(Option<Box<InVal>>),
    Tuple(Vec<InVal>),
}

/// `v` written with `open`, `, ` between the elements and `close` (at most 64 shown).
fn list(f: &mut std::fmt::Formatter<'_>, open: &str, v: &[InVal], close: &str) -> std::fmt::Result {
    write!(f, "{open}")?;
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            write!(f, ", ")?;
        }
        if i >= 64 {
            write!(f, "… ({} more)", v.len() - i)?;
            break;
        }
        write!(f, "{x}")?;
    }
    write!(f, "{close}")
}

impl std::fmt::Display for InVal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InVal::Int(i) => write!(f, "{i}"),
            InVal::Bool(b) => write!(f, "{b}"),
            InVal::Null => write!(f, "null"),
            InVal::Array(_, v) | InVal::Seq(v) => list(f, "[", v, "]"),
            InVal::Set(v) => list(f, "{", v, "}"),
            InVal::Bag(v) => list(f, "b{", v, "}"),
            InVal::Tuple(v) => list(f, "(", v, ")"),
            // A value, not a permission: zero is `0` (an amount's own display says `none`).
            InVal::Rat(..) => match self.amount().unwrap_or(Amt::NONE) {
                a if a == Amt::NONE => write!(f, "0"),
                a => write!(f, "{a}"),
            },
            InVal::Big(b) => write!(f, "{b}"),
            InVal::Opt(None) => write!(f, "None"),
            InVal::Opt(Some(x)) => write!(f, "Some({x})"),
            InVal::Map(es) => {
                write!(f, "map{{")?;
                for (i, (k, x)) in es.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{k} -> {x}")?;
                }
                write!(f, "}}")
            }
            InVal::Object(_, fields) => {
                write!(f, "{{")?;
                for (i, (n, x)) in fields.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{n}: {x}")?;
                }
                write!(f, "}}")
            }
        }
    }
}

impl InVal {
    pub fn rat(a: Amt) -> InVal {
        InVal::Rat(a.q.to_big(), a.k)
    }
    /// A rational's amount.
    pub fn amount(&self) -> Option<Amt> {
        match self {
            InVal::Rat(q, k) => Some(Amt { q: Q::from_big(q.clone()), k: *k }),
            _ => None,
        }
    }
    /// The value as JSON: numbers, booleans, `null`, arrays (also for sequences, sets, bags
    /// and tuples), objects; a rational or a big integer as a string (`"1/2"`), a map as an
    /// array of `[key, value]` pairs, an option as `null` (`None`) or `[value]`.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            InVal::Int(i) => J::from(*i),
            InVal::Bool(b) => J::Bool(*b),
            InVal::Null | InVal::Opt(None) => J::Null,
            InVal::Rat(..) | InVal::Big(_) => J::String(self.to_string()),
            InVal::Opt(Some(x)) => J::Array(vec![x.to_json()]),
            InVal::Map(es) => {
                J::Array(es.iter().map(|(k, x)| J::Array(vec![k.to_json(), x.to_json()])).collect())
            }
            InVal::Array(_, v)
            | InVal::Seq(v)
            | InVal::Set(v)
            | InVal::Bag(v)
            | InVal::Tuple(v) => J::Array(v.iter().map(InVal::to_json).collect()),
            InVal::Object(_, fields) => {
                J::Object(fields.iter().map(|(n, x)| (n.clone(), x.to_json())).collect())
            }
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Input {
    pub args: Vec<(String, InVal)>,
    pub this_fields: Vec<(String, InVal)>,
    pub seed: u64,
}

impl Input {
    /// `{"args": {...}, "this": {...}}`, in declaration order.
    pub fn to_json(&self) -> serde_json::Value {
        let obj = |v: &[(String, InVal)]| {
            serde_json::Value::Object(v.iter().map(|(k, x)| (k.clone(), x.to_json())).collect())
        };
        serde_json::json!({"args": obj(&self.args), "this": obj(&self.this_fields)})
    }

    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self.args.iter().map(|(n, v)| format!("{n} = {v}")).collect();
        parts.extend(self.this_fields.iter().map(|(n, v)| format!("this.{n} = {v}")));
        parts.join(", ")
    }
}

/// Put an input into the interpreter's heap. The environment receives (1, 0) of every location.
pub fn materialize(it: &mut Interp, m: &CMethod, input: &Input) -> (Value, Vec<Value>) {
    let mut args = Vec::new();
    for (i, p) in m.params.iter().chain(&m.yields).enumerate() {
        let param = i < m.params.len();
        let v = input
            .args
            .iter()
            .find(|(n, _)| *n == p.1)
            .or_else(|| input.args.get(i).filter(|_| param))
            .map(|(_, v)| v);
        // A `yields` variable the input leaves out starts as its type's default.
        let dflt = || if param { Value::Null } else { default_of(&p.2) };
        args.push(v.map_or_else(dflt, |v| alloc_as(it, v, &p.2)));
    }
    let this = if m.is_static {
        Value::Null
    } else {
        let class = &it.prog.classes[m.class as usize].clone();
        let mut fields = Vec::new();
        for f in &class.fields {
            let v = input
                .this_fields
                .iter()
                .find(|(n, _)| *n == f.1)
                .map(|(_, v)| alloc_as(it, v, &f.2))
                .unwrap_or_else(|| default_of(&f.2));
            fields.push(v);
        }
        let id = it.heap.alloc_object(m.class, fields);
        grant(it, id);
        Value::Ref(id)
    };
    (this, args)
}

fn grant(it: &mut Interp, id: u32) {
    let n = it.heap.len_of(id);
    it.env_holder.grant_all(id, n);
}

/// [`alloc`] for a value given for a parameter or field of type `ty`: an object with no class
/// name (from an input file) is of `ty`'s class, an integer for a rational is that rational,
/// an array for a set or bag its elements, and a map's lookups outside its entries give the
/// default of its value type.
fn alloc_as(it: &mut Interp, v: &InVal, ty: &Ty) -> Value {
    let all = |it: &mut Interp, xs: &[InVal], t: &Ty| -> Vec<Value> {
        xs.iter().map(|x| alloc_as(it, x, t)).collect()
    };
    match (v, ty) {
        (InVal::Object(c, fields), Ty::Class(tc)) if c.is_empty() => {
            alloc(it, &InVal::Object(tc.clone(), fields.clone()))
        }
        (InVal::Int(i), t) if t.is_rational() => Value::perm(Amt { q: Q::int(*i), k: 0 }),
        (InVal::Set(xs) | InVal::Array(_, xs) | InVal::Seq(xs), Ty::Set(t)) => {
            Value::set(all(it, xs, t))
        }
        (InVal::Bag(xs) | InVal::Array(_, xs) | InVal::Seq(xs), Ty::Bag(t)) => {
            Value::bag(all(it, xs, t))
        }
        (InVal::Seq(xs) | InVal::Array(_, xs), Ty::Seq(t)) => Value::Seq(Rc::new(all(it, xs, t))),
        (InVal::Opt(Some(x)), Ty::Option(t)) => Value::Opt(Some(Rc::new(alloc_as(it, x, t)))),
        (InVal::Map(es), Ty::Map(kt, vt)) => {
            let entries =
                es.iter().map(|(k, x)| (alloc_as(it, k, kt), alloc_as(it, x, vt))).collect();
            Value::map(entries, default_of(vt))
        }
        _ => alloc(it, v),
    }
}

fn alloc(it: &mut Interp, v: &InVal) -> Value {
    match v {
        InVal::Object(cname, given) => {
            let Some(ci) = it.prog.classes.iter().position(|c| c.name == *cname) else {
                return Value::Null;
            };
            let fields: Vec<(String, Ty)> =
                it.prog.classes[ci].fields.iter().map(|f| (f.1.clone(), f.2.clone())).collect();
            let values: Vec<Value> = fields
                .iter()
                .map(|(n, t)| match given.iter().find(|(g, _)| g == n) {
                    Some((_, x)) => alloc_as(it, x, t),
                    None => default_of(t),
                })
                .collect();
            let id = it.heap.alloc_object(ci as u32, values);
            grant(it, id);
            Value::Ref(id)
        }
        InVal::Int(i) => Value::Int(*i),
        InVal::Bool(b) => Value::Bool(*b),
        InVal::Null => Value::Null,
        InVal::Seq(xs) => Value::Seq(Rc::new(xs.iter().map(|x| alloc(it, x)).collect())),
        InVal::Rat(..) => Value::perm(v.amount().unwrap_or(Amt::NONE)),
        InVal::Big(b) => Value::big(b.clone()),
        InVal::Set(xs) => Value::set(xs.iter().map(|x| alloc(it, x)).collect()),
        InVal::Bag(xs) => Value::bag(xs.iter().map(|x| alloc(it, x)).collect()),
        InVal::Tuple(xs) => Value::Tuple(Rc::new(xs.iter().map(|x| alloc(it, x)).collect())),
        InVal::Opt(o) => Value::Opt(o.as_ref().map(|x| Rc::new(alloc(it, x)))),
        // Without a type, a lookup outside the entries gives `null`.
        InVal::Map(es) => {
            Value::map(es.iter().map(|(k, x)| (alloc(it, k), alloc(it, x))).collect(), Value::Null)
        }
        InVal::Array(elem, xs) => {
            // Arrays of ints are the bulk of most inputs: one check, then a plain copy. (Two
            // passes on purpose: one `collect` into `Option<Vec<_>>` has no exact size and made
            // the vector-add benchmark 1.6x slower.)
            let data: Vec<Value> = if xs.iter().all(|x| matches!(x, InVal::Int(_))) {
                xs.iter().map(|x| Value::Int(if let InVal::Int(i) = x { *i } else { 0 })).collect()
            } else {
                xs.iter().map(|x| alloc(it, x)).collect()
            };
            let id = it.heap.alloc_array(elem.clone(), data);
            grant(it, id);
            Value::Ref(id)
        }
    }
}

/// Read back an input-shaped value from a heap (for observables); objects down to a depth of 4.
pub fn read_back(heap: &Heap, prog: &CProgram, v: &Value) -> InVal {
    fn go(heap: &Heap, prog: &CProgram, v: &Value, depth: u32) -> InVal {
        let go = |heap: &Heap, v: &Value, depth: u32| go(heap, prog, v, depth);
        match v {
            Value::Int(i) => InVal::Int(*i),
            Value::Bool(b) => InVal::Bool(*b),
            Value::Null | Value::Unit => InVal::Null,
            Value::Seq(s) => InVal::Seq(s.iter().map(|x| go(heap, x, depth)).collect()),
            Value::Perm(a) => InVal::Rat(a.q.to_big(), a.k),
            Value::Big(b) => InVal::Big((**b).clone()),
            Value::Set(s) => InVal::Set(s.iter().map(|x| go(heap, x, depth)).collect()),
            Value::Bag(s) => InVal::Bag(s.iter().map(|x| go(heap, x, depth)).collect()),
            Value::Tuple(s) => InVal::Tuple(s.iter().map(|x| go(heap, x, depth)).collect()),
            Value::Opt(o) => InVal::Opt(o.as_ref().map(|x| Box::new(go(heap, x, depth)))),
            Value::Map(m) => InVal::Map(
                m.entries.iter().map(|(k, x)| (go(heap, k, depth), go(heap, x, depth))).collect(),
            ),
            Value::Ref(id) => match &heap.objs[*id as usize] {
                super::heap::HObj::Object { class, fields } if depth < 4 => {
                    let c = &prog.classes[*class as usize];
                    InVal::Object(
                        c.name.clone(),
                        c.fields
                            .iter()
                            .zip(fields)
                            .map(|(f, x)| (f.1.clone(), go(heap, x, depth + 1)))
                            .collect(),
                    )
                }
                super::heap::HObj::Array { data, elem } if depth < 4 => InVal::Array(
                    elem.clone(),
                    // Arrays of ints: one check, then a plain copy.
                    if data.iter().all(|x| matches!(x, Value::Int(_))) {
                        data.iter()
                            .map(|x| InVal::Int(if let Value::Int(i) = x { *i } else { 0 }))
                            .collect()
                    } else {
                        data.iter().map(|x| go(heap, x, depth + 1)).collect()
                    },
                ),
                _ => InVal::Null,
            },
        }
    }
    go(heap, prog, v, 0)
}

// ---------------------------------------------------------------------------------------------
// Generation
// ---------------------------------------------------------------------------------------------

/// How array contents are drawn; rotated over candidates so that content preconditions such as
/// `a[i] >= 0` are met without content solving.
#[derive(Clone, Copy, Debug)]
enum Fill {
    Random,
    NonNeg,
    Zero,
    Small,
}

/// A user's range for one generated input (`--bound x=lo..hi`, `--set x=v`; both ends
/// included). `name` is a parameter or `given` name, `this.f` (a field of the receiver), `a.length`
/// (an array's length) or `|xs|` (a sequence's length).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputBound {
    pub name: String,
    pub lo: i64,
    pub hi: i64,
}

impl std::str::FromStr for InputBound {
    type Err = String;
    /// `x=lo..hi` or `x=v`.
    fn from_str(s: &str) -> Result<InputBound, String> {
        let (name, range) =
            s.split_once('=').ok_or_else(|| format!("`{s}`: expected NAME=LO..HI or NAME=V"))?;
        let int = |t: &str| {
            t.trim().parse::<i64>().map_err(|_| format!("`{s}`: `{}` is not an integer", t.trim()))
        };
        let (lo, hi) = match range.split_once("..") {
            Some((a, b)) => (int(a)?, int(b)?),
            None => (int(range)?, int(range)?),
        };
        if lo > hi {
            return Err(format!("`{s}`: the range is empty ({lo} > {hi})"));
        }
        let name = name.trim().to_string();
        if name.is_empty() {
            return Err(format!("`{s}`: no input name"));
        }
        Ok(InputBound { name, lo, hi })
    }
}

/// The solver variable of a bound's input name (see [`InputBound`]).
fn bound_var(name: &str) -> String {
    if let Some(a) = name.strip_suffix(".length") {
        format!("len:{a}")
    } else if let Some(x) = name.strip_prefix('|').and_then(|n| n.strip_suffix('|')) {
        format!("slen:{x}")
    } else {
        name.to_string()
    }
}

/// Does `e` read a local (or a bound variable)?
fn has_local(e: &CE) -> bool {
    let mut found = matches!(e, CE::Local(_));
    e.for_each_sub(&mut |x| found |= has_local(x));
    found
}

/// How [`generate`] draws an input.
#[derive(Clone, Copy)]
pub struct Draw<'a> {
    /// `--bound`/`--set` ranges.
    pub bounds: &'a [InputBound],
    /// An object input the contract says nothing of is never null (runs without permission
    /// checks: a program without permissions says nothing of which objects exist).
    pub all_objects: bool,
    /// Start with small cell values (0..2) instead of random ones (after runs that did not
    /// end in time).
    pub small: bool,
}

impl<'a> Draw<'a> {
    /// The draw for `cfg`'s bounds and checks.
    pub fn of(cfg: &'a crate::interp::Config, small: bool) -> Self {
        Draw { bounds: &cfg.bounds, all_objects: !cfg.checks.perms, small }
    }
}

/// Generate candidate input `attempt` for `method` (semantics.md §10.2 stages 1 and 2), within
/// the user's `bounds` where they name an input of the method; see [`Draw`].
pub fn generate(
    prog: &CProgram,
    method: u32,
    seed: u64,
    attempt: u32,
    input_index: u64,
    draw: Draw<'_>,
) -> Result<Input, String> {
    let Draw { bounds, all_objects, small } = draw;
    let m = &prog.methods[method as usize];
    let mut rng = Rng::new(seed ^ (attempt as u64).wrapping_mul(0x9E37_79B9));
    let mut cfg = z3::Config::new();
    cfg.set_timeout_msec(2000);
    let ctx = z3::Context::new(&cfg);
    let mut vars = Vars {
        ctx: &ctx,
        ints: BTreeMap::new(),
        bools: BTreeMap::new(),
        slot_names: m
            .params
            .iter()
            .chain(&m.yields)
            .map(|p| (p.0, (p.1.clone(), p.2.clone())))
            .collect(),
        field_names: prog.field_names.clone(),
        // A constructor's receiver is a fresh object: its fields are not inputs.
        this_fields: if m.is_static || m.is_ctor {
            BTreeMap::new()
        } else {
            prog.classes[m.class as usize]
                .fields
                .iter()
                .map(|f| (f.1.clone(), f.2.clone()))
                .collect()
        },
        classes: prog
            .classes
            .iter()
            .map(|c| {
                (c.name.clone(), c.fields.iter().map(|f| (f.1.clone(), f.2.clone())).collect())
            })
            .collect(),
        funcs: prog
            .methods
            .iter()
            .map(|f| match (&f.body, f.is_pure || f.is_predicate) {
                (Body::Expr(b), true) => Some((f.params.iter().map(|p| p.0).collect(), b.clone())),
                _ => None,
            })
            .collect(),
        subst: Vec::new(),
        level: std::cell::Cell::new(0),
    };
    // Object inputs the contract reads a field of are objects with generated fields (their
    // fields are inputs named `b.n`); other object inputs are null.
    let mut objects = BTreeMap::new();
    for c in m.pre.iter().chain(&m.everywhere) {
        vars.mentioned(&c.e, &mut objects);
    }
    let opt = z3::Optimize::new(&ctx);
    let mut conj: Vec<&CClause> = m.pre.iter().collect();
    // The receiver's lock holds its invariant (see `interp::sync`): its pure conjuncts about
    // `this` constrain the fields too (those with bound variables are left out: their slots
    // are the predicate's, not the method's).
    if !m.is_static {
        if let Some((_, inv)) = &prog.classes[m.class as usize].lock_inv {
            conj.extend(inv.iter().filter(|c| c.pure && !has_local(&c.e)));
        }
    }
    for c in conj {
        if let Some(b) = vars.tr_necessary(&c.e) {
            opt.assert(&b);
        }
        let mut implied = Vec::new();
        vars.perm_bounds(&c.e, &mut Vec::new(), &mut implied);
        for b in implied {
            opt.assert(&b);
        }
    }
    // Declare every scalar/array input so that it has bounds and a soft target.
    let mut inputs: Vec<(String, Ty)> =
        m.params.iter().chain(&m.yields).map(|p| (p.1.clone(), p.2.clone())).collect();
    inputs.extend(vars.this_fields.iter().map(|(n, t)| (format!("this.{n}"), t.clone())));
    let top = inputs.clone();
    for (o, c) in &objects {
        let fields = vars.classes.get(c).cloned().unwrap_or_default();
        inputs.extend(fields.into_iter().map(|(f, t)| (format!("{o}.{f}"), t)));
    }
    let class = (input_index as u32 + attempt / 8) % 4;
    // The user's range for solver variable `key` where there is one, else the default one.
    let user = |key: &str| bounds.iter().find(|b| bound_var(&b.name) == key).map(|b| (b.lo, b.hi));
    // The default length limit yields to the sizes the user asks for: `--set n=32768` with
    // `a.length == n` must not meet a hidden cap below it, nor `--set h=128` with
    // `B.length == 64 * h`. The cap holds under an assumption that is dropped when the user's
    // sizes cannot be met below it.
    let len_hi = bounds.iter().map(|b| b.hi).fold(4096, i64::max);
    let capped = Bool::new_const(&ctx, "lengths_capped");
    let range = |v: &Int, key: &str, dflt: (i64, i64)| {
        let (lo, hi) = user(key).unwrap_or(dflt);
        opt.assert(&v.ge(&Int::from_i64(&ctx, lo)));
        opt.assert(&v.le(&Int::from_i64(&ctx, hi)));
    };
    for (n, t) in &inputs {
        match t {
            Ty::Int => {
                let v = vars.int(n);
                range(&v, n, (-(1 << 16), 1 << 16));
                let target = if attempt >= 24 { rng.range(0, 8) } else { rng.range(-4, 40) };
                opt.assert_soft(&v._eq(&Int::from_i64(&ctx, target)), 1u64, None);
            }
            Ty::Bool => {
                let v = vars.boolean(n);
                opt.assert_soft(&v._eq(&Bool::from_bool(&ctx, rng.chance(50))), 1u64, None);
            }
            Ty::Array(inner) => {
                let key = format!("len:{n}");
                let len = vars.int(&key);
                let nn = vars.boolean(&format!("nn:{n}"));
                match user(&key) {
                    Some(_) => range(&len, &key, (0, len_hi)),
                    None => {
                        range(&len, &key, (0, MAX_LEN));
                        opt.assert(&capped.implies(&len.le(&Int::from_i64(&ctx, len_hi))));
                    }
                }
                opt.assert_soft(&nn, 4u64, None);
                let target = match class {
                    0 => 32 * rng.range(1, 4),
                    1 => 32 * rng.range(0, 3) + 1,
                    2 => rng.range(1, 3),
                    _ => rng.range(0, 100),
                };
                let target = if attempt >= 24 { rng.range(1, 8) } else { target };
                opt.assert_soft(&len._eq(&Int::from_i64(&ctx, target)), 2u64, None);
                if matches!(**inner, Ty::Array(_)) {
                    let cols = vars.int(&format!("cols:{n}"));
                    opt.assert(&cols.ge(&Int::from_i64(&ctx, 0)));
                    opt.assert(&cols.le(&Int::from_i64(&ctx, 64)));
                    opt.assert_soft(&cols._eq(&Int::from_i64(&ctx, rng.range(1, 8))), 1u64, None);
                }
            }
            Ty::Class(_) if objects.contains_key(n) => {
                opt.assert_soft(&vars.boolean(&format!("nn:{n}")), 4u64, None);
            }
            Ty::Seq(_) => {
                let key = format!("slen:{n}");
                let len = vars.int(&key);
                range(&len, &key, (0, 64));
                let target = if attempt >= 24 { rng.range(0, 3) } else { rng.range(0, 6) };
                opt.assert_soft(&len._eq(&Int::from_i64(&ctx, target)), 2u64, None);
            }
            _ => {}
        }
    }
    let mut outcome = opt.check(std::slice::from_ref(&capped));
    let mut len_hi = len_hi;
    if outcome == z3::SatResult::Unsat && !bounds.is_empty() {
        outcome = opt.check(&[]);
        len_hi = MAX_LEN;
    }
    let model = match outcome {
        z3::SatResult::Sat => opt.get_model(),
        z3::SatResult::Unsat => {
            let how = if bounds.is_empty() {
                "within the default bounds (ints in -65536..65536, lengths up to 4096; widen them with --bound NAME=LO..HI)"
            } else {
                "within the default bounds and the --bound/--set ranges"
            };
            return Err(format!("the precondition's shape part is unsatisfiable {how}"));
        }
        z3::SatResult::Unknown => None,
    };
    let geti = |n: &str, vars: &mut Vars, rng: &mut Rng, dflt: (i64, i64)| -> i64 {
        let v = vars.int(n);
        model
            .as_ref()
            .and_then(|md| md.eval(&v, true))
            .and_then(|x| x.as_i64())
            .unwrap_or_else(|| rng.range(dflt.0, dflt.1))
    };
    let getb = |n: &str, vars: &mut Vars, rng: &mut Rng| -> bool {
        let v = vars.boolean(n);
        model
            .as_ref()
            .and_then(|md| md.eval(&v, true))
            .and_then(|x| x.as_bool())
            .unwrap_or_else(|| rng.chance(50))
    };
    let fill = match (attempt / 3 + if small { 2 } else { 0 }) % 4 {
        0 => Fill::Random,
        1 => Fill::NonNeg,
        2 => Fill::Small,
        _ => Fill::Zero,
    };
    // Lengths stay within 4096 cells unless the user's sizes need more.
    let cap = |key: &str| user(key).map_or(len_hi, |(_, hi)| hi.max(0));
    let mut vals: BTreeMap<String, InVal> = BTreeMap::new();
    for (n, t) in &inputs {
        let v = match t {
            Ty::Int => InVal::Int(geti(n, &mut vars, &mut rng, (0, 16))),
            Ty::Bool => InVal::Bool(getb(n, &mut vars, &mut rng)),
            Ty::Array(inner) => {
                if !getb(&format!("nn:{n}"), &mut vars, &mut rng) {
                    InVal::Null
                } else {
                    let len = geti(&format!("len:{n}"), &mut vars, &mut rng, (0, 16))
                        .clamp(0, cap(&format!("len:{n}"))) as usize;
                    match &**inner {
                        Ty::Array(elem) => {
                            let cols = geti(&format!("cols:{n}"), &mut vars, &mut rng, (1, 8))
                                .clamp(0, 64) as usize;
                            InVal::Array(
                                (**inner).clone(),
                                (0..len)
                                    .map(|_| {
                                        InVal::Array(
                                            (**elem).clone(),
                                            fill_vec(elem, cols, fill, &mut rng, &vars.classes),
                                        )
                                    })
                                    .collect(),
                            )
                        }
                        elem => InVal::Array(
                            elem.clone(),
                            fill_vec(elem, len, fill, &mut rng, &vars.classes),
                        ),
                    }
                }
            }
            Ty::Seq(elem) => {
                let len = geti(&format!("slen:{n}"), &mut vars, &mut rng, (0, 6))
                    .clamp(0, cap(&format!("slen:{n}")));
                InVal::Seq(fill_vec(elem, len as usize, fill, &mut rng, &vars.classes))
            }
            Ty::Class(_) if objects.contains_key(n) => {
                InVal::Bool(getb(&format!("nn:{n}"), &mut vars, &mut rng))
            }
            // Rationals and the ghost collections: drawn small (other object inputs are null).
            t if t.is_rational()
                || matches!(
                    t,
                    Ty::Set(_) | Ty::Bag(_) | Ty::Option(_) | Ty::Map(..) | Ty::Tuple(_)
                ) =>
            {
                fill_vec(t, 1, fill, &mut rng, &vars.classes).pop().unwrap_or(InVal::Null)
            }
            // An object input the contract reads no field of: null or a fresh object (always an
            // object when asked: a program without permissions says nothing of which exist).
            Ty::Class(c) if all_objects || rng.chance(60) => {
                object(c, fill, &mut rng, &vars.classes, 0, all_objects)
            }
            _ => InVal::Null,
        };
        vals.insert(n.clone(), v);
    }
    // Cells the precondition fixes one by one (`b[i] == i`) are computed, not drawn.
    let names: BTreeMap<u32, String> =
        m.params.iter().chain(&m.yields).map(|p| (p.0, p.1.clone())).collect();
    let fixed: Vec<&CClause> = m.pre.iter().chain(&m.everywhere).collect();
    let map_values: BTreeMap<String, Ty> = m
        .params
        .iter()
        .chain(&m.yields)
        .filter_map(|p| match &p.2 {
            Ty::Map(_, v) => Some((p.1.clone(), (**v).clone())),
            _ => None,
        })
        .collect();
    contents::solve(&fixed, &names, &vars.funcs, &map_values, &mut vals);
    let mut input = Input { seed, ..Input::default() };
    for (n, t) in &top {
        let v = assemble(n, t, &mut vals, &objects, &vars.classes);
        if let Some(f) = n.strip_prefix("this.") {
            input.this_fields.push((f.to_string(), v));
        } else {
            input.args.push((n.clone(), v));
        }
    }
    Ok(input)
}

/// The value of input `n`: an object input the contract mentions is built from its fields'
/// values (`n.f`), or null where the model makes it null; `vals` holds the generated values
/// (for an object input: whether it is non-null).
fn assemble(
    n: &str,
    t: &Ty,
    vals: &mut BTreeMap<String, InVal>,
    objects: &BTreeMap<String, String>,
    classes: &BTreeMap<String, Vec<(String, Ty)>>,
) -> InVal {
    let v = vals.remove(n).unwrap_or(InVal::Null);
    let (Ty::Class(c), Some(_)) = (t, objects.get(n)) else {
        return v;
    };
    if v != InVal::Bool(true) {
        return InVal::Null;
    }
    let fields = classes.get(c).cloned().unwrap_or_default();
    InVal::Object(
        c.clone(),
        fields
            .iter()
            .map(|(f, ft)| (f.clone(), assemble(&format!("{n}.{f}"), ft, vals, objects, classes)))
            .collect(),
    )
}

/// The classes of the program: their fields and field types.
type Classes = BTreeMap<String, Vec<(String, Ty)>>;

/// Drop repeated elements (the first stays), in the interpreter's order when they are
/// integers, so that a generated set or map prints as its value does.
fn dedup(xs: &mut Vec<InVal>) {
    let mut out: Vec<InVal> = Vec::with_capacity(xs.len());
    for x in xs.drain(..) {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    *xs = out;
    sort_ints(xs);
}

fn sort_ints(xs: &mut [InVal]) {
    if xs.iter().all(|x| matches!(x, InVal::Int(_))) {
        xs.sort_by_key(|x| if let InVal::Int(i) = x { *i } else { 0 });
    }
}

/// A value of the rational type `t`, from a few small fractions (the caller's precondition
/// filter keeps those that fit): `frac` is in (0, 1], `zfrac` in [0, 1], `rational` any.
fn rational(t: &Ty, rng: &mut Rng) -> Amt {
    const FRAC: [(i64, i64); 8] = [(1, 2), (1, 1), (1, 3), (1, 4), (3, 4), (2, 3), (1, 5), (1, 8)];
    const MORE: [(i64, i64); 4] = [(0, 1), (-1, 2), (3, 2), (2, 1)];
    let (n, d) = match t {
        Ty::Frac => FRAC[rng.range(0, 7) as usize],
        Ty::ZFrac if rng.chance(15) => (0, 1),
        Ty::ZFrac => FRAC[rng.range(0, 7) as usize],
        _ if rng.chance(30) => MORE[rng.range(0, 3) as usize],
        _ => FRAC[rng.range(0, 7) as usize],
    };
    Amt::frac(n, d)
}

fn fill_vec(elem: &Ty, len: usize, fill: Fill, rng: &mut Rng, classes: &Classes) -> Vec<InVal> {
    // Nested sequences are mostly rectangular (`|G| == n && (\forall e in G; |e| == n)` is the
    // common contract): square, or rows of one shared length; else each row drawn alone.
    let shared = match elem {
        Ty::Seq(_) => match rng.range(0, 3) {
            0 => Some(len),
            1 => Some(rng.range(0, 4) as usize),
            _ => None,
        },
        _ => None,
    };
    (0..len)
        .map(|_| match elem {
            Ty::Bool => InVal::Bool(rng.chance(50)),
            Ty::Int => InVal::Int(match fill {
                Fill::Random => {
                    if rng.chance(10) {
                        let l = len as i64;
                        [0, 1, -1, l, -l][rng.range(0, 4) as usize]
                    } else {
                        rng.range(-100, 100)
                    }
                }
                Fill::NonNeg => rng.range(0, 100),
                Fill::Small => rng.range(0, 3),
                Fill::Zero => 0,
            }),
            // A sequence is a value, never null: its elements are sequences too.
            Ty::Seq(inner) => {
                let n = shared.unwrap_or_else(|| rng.range(0, 4) as usize);
                InVal::Seq(fill_vec(inner, n, fill, rng, classes))
            }
            t if t.is_rational() => InVal::rat(rational(t, rng)),
            // Small collections, drawn like sequences (`Fill::Small` makes repeated elements
            // likely, for bags).
            Ty::Set(inner) | Ty::Bag(inner) => {
                let n = rng.range(0, 4) as usize;
                let mut xs = fill_vec(inner, n, fill, rng, classes);
                if matches!(elem, Ty::Set(_)) {
                    dedup(&mut xs);
                    InVal::Set(xs)
                } else {
                    sort_ints(&mut xs);
                    InVal::Bag(xs)
                }
            }
            Ty::Option(inner) => match rng.chance(25) {
                true => InVal::Opt(None),
                false => InVal::Opt(fill_vec(inner, 1, fill, rng, classes).pop().map(Box::new)),
            },
            Ty::Map(k, x) => {
                let n = rng.range(0, 4) as usize;
                let mut keys = fill_vec(k, n, fill, rng, classes);
                dedup(&mut keys);
                let vals = fill_vec(x, keys.len(), fill, rng, classes);
                InVal::Map(keys.into_iter().zip(vals).collect())
            }
            Ty::Tuple(ts) => InVal::Tuple(
                ts.iter()
                    .map(|t| fill_vec(t, 1, fill, rng, classes).pop().unwrap_or(InVal::Null))
                    .collect(),
            ),
            // Elements of a class type are objects whose scalar fields are drawn like cells
            // (a contract over `a[i].f` needs the objects; one that allows null elements
            // accepts objects too).
            Ty::Class(c) => object(c, fill, rng, classes, 0, false),
            _ => InVal::Null,
        })
        .collect()
}

/// A fresh object of class `c`: scalar fields drawn like cells; a field of a class type is
/// null or, at random and up to a small depth, another fresh object (a list of a few nodes,
/// so that code past `next != null` runs), or always up to that depth when `all`; other fields
/// stay null.
fn object(c: &str, fill: Fill, rng: &mut Rng, classes: &Classes, depth: u32, all: bool) -> InVal {
    let Some(fields) = classes.get(c) else { return InVal::Null };
    InVal::Object(
        c.to_string(),
        fields
            .iter()
            .map(|(f, t)| {
                let v = match t {
                    Ty::Int | Ty::Bool => {
                        fill_vec(t, 1, fill, rng, &Classes::new()).pop().unwrap_or(InVal::Null)
                    }
                    Ty::Class(d) if depth < 3 && (all || rng.chance(50)) => {
                        object(d, fill, rng, classes, depth + 1, all)
                    }
                    _ => InVal::Null,
                };
                (f.clone(), v)
            })
            .collect(),
    )
}
