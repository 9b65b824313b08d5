//! The heap (semantics.md §3.2, §4.9): arrays and objects by id, and the value a new location
//! starts with. Apart from the interpreter because the column evaluator (`vector`) and input
//! generation (`inputs`) read and build heaps too.

use super::compile::Ty;
use super::value::{Amt, Loc, Value};
use std::rc::Rc;

#[derive(Clone, Debug)]
pub enum HObj {
    Array { data: Vec<Value>, elem: Ty },
    Object { class: u32, fields: Vec<Value> },
}

#[derive(Clone, Debug, Default)]
pub struct Heap {
    pub objs: Vec<HObj>,
    /// Arrays of arrays whose `\matrix` shape has held: their rows are readable by everyone.
    pub readable_rows: std::collections::BTreeSet<u32>,
}

impl Heap {
    pub fn alloc_array(&mut self, elem: Ty, data: Vec<Value>) -> u32 {
        self.objs.push(HObj::Array { data, elem });
        (self.objs.len() - 1) as u32
    }
    pub fn alloc_object(&mut self, class: u32, fields: Vec<Value>) -> u32 {
        self.objs.push(HObj::Object { class, fields });
        (self.objs.len() - 1) as u32
    }
    #[inline]
    pub fn len_of(&self, id: u32) -> usize {
        match &self.objs[id as usize] {
            HObj::Array { data, .. } => data.len(),
            HObj::Object { fields, .. } => fields.len(),
        }
    }
    #[inline]
    pub fn get(&self, l: Loc) -> Value {
        match &self.objs[l.obj() as usize] {
            HObj::Array { data, .. } => data[l.idx() as usize].clone(),
            HObj::Object { fields, .. } => fields[l.idx() as usize].clone(),
        }
    }
    #[inline]
    pub fn set(&mut self, l: Loc, v: Value) {
        match &mut self.objs[l.obj() as usize] {
            HObj::Array { data, .. } => data[l.idx() as usize] = v,
            HObj::Object { fields, .. } => fields[l.idx() as usize] = v,
        }
    }
    /// All locations of an object (for granting (1, 0) at allocation).
    pub fn locations(&self, id: u32) -> impl Iterator<Item = Loc> {
        (0..self.len_of(id) as u32).map(move |i| Loc::new(id, i))
    }
}

/// The value a field, array cell or local of type `t` starts with: `0`, `false`, the empty
/// collection, `none` for the rationals, `None` for an option; `null` otherwise.
pub fn default_of(t: &Ty) -> Value {
    match t {
        Ty::Int => Value::Int(0),
        Ty::Bool => Value::Bool(false),
        Ty::Seq(_) => Value::Seq(Rc::new(Vec::new())),
        Ty::Set(_) => Value::Set(Rc::new(Vec::new())),
        Ty::Bag(_) => Value::Bag(Rc::new(Vec::new())),
        Ty::Option(_) => Value::Opt(None),
        Ty::Map(_, v) => Value::map(Vec::new(), default_of(v)),
        Ty::Frac | Ty::ZFrac | Ty::Rational => Value::perm(Amt::none()),
        _ => Value::Null,
    }
}
