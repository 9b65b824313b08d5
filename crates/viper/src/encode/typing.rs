//! What the encoder knows of an expression's PVL type: for coercions, element access,
//! overloads and the library calls.

use super::coerce::is_perm;
use super::Encoder;
use crate::ast::Ty;

/// The element field of arrays of objects; declared only by encodings that use it.
pub(super) const REF_FIELD: &str = "ref_val";
use front::ast::{self, BinOp, Builtin, CollKind, Expr, ExprKind, Type, TypeKind, UnOp};

pub(super) fn is_array(t: &Type) -> bool {
    matches!(t.kind, TypeKind::Array(..))
}

pub(super) fn is_seq(t: &Type) -> bool {
    matches!(t.kind, TypeKind::Generic1(ast::Generic1::Seq, _))
}

pub(super) fn elem(t: &Type) -> Option<Type> {
    match &t.kind {
        TypeKind::Array(e, _) => Some((**e).clone()),
        TypeKind::Generic1(_, e) => Some((**e).clone()),
        _ => None,
    }
}

/// The element field for an array of this element type (`None`: no field for it yet).
pub(super) fn elem_field(t: &Type) -> Option<&'static str> {
    match t.kind {
        TypeKind::Int => Some("int_val"),
        TypeKind::Boolean | TypeKind::Bool => Some("bool_val"),
        TypeKind::Array(..) => Some("arr_val"),
        TypeKind::Class(..) => Some(REF_FIELD),
        _ => None,
    }
}

impl Encoder<'_> {
    /// The field that holds the cells of an array of `et`: a built-in one ([`elem_field`]), or
    /// one declared for a value type ([`Self::value_field`]).
    pub(super) fn array_field(&mut self, et: &Type) -> Option<String> {
        elem_field(et).map(str::to_string).or_else(|| self.value_field(et))
    }

    /// The field that holds the cells of an array of a value type other than the built-in
    /// ones (`seq<int>[]`: `seq_int_val: Seq[Int]`), declared on first use; `None` for a type
    /// Viper cannot store in a field.
    pub(super) fn value_field(&mut self, t: &Type) -> Option<String> {
        let ty = self.viper_ty(t).ok()?;
        let collection = matches!(ty, Ty::Seq(_) | Ty::Set(_) | Ty::Multiset(_) | Ty::Map(..));
        // Floats (reals) too: `float[]` cells are `perm_val: Perm`.
        if !(collection || matches!(ty, Ty::Domain(_) | Ty::Perm)) {
            return None;
        }
        let mut name = String::new();
        for c in ty.to_string().chars() {
            match c {
                c if c.is_ascii_alphanumeric() => name.push(c.to_ascii_lowercase()),
                _ if !name.ends_with('_') => name.push('_'),
                _ => {}
            }
        }
        let name = format!("{}_val", name.trim_end_matches('_'));
        if !self.out.fields.iter().any(|(n, _)| *n == name) {
            self.out.fields.push((name.clone(), ty));
        }
        Some(name)
    }

    /// The element type of a collection literal: as declared, else that of its first element.
    pub(super) fn elem_type(&self, declared: Option<&Type>, elems: &[Expr]) -> Option<Type> {
        declared.cloned().or_else(|| elems.first().and_then(|x| self.type_of(x)))
    }

    pub fn type_of(&self, e: &Expr) -> Option<Type> {
        Some(match &e.kind {
            ExprKind::Int(_) => Type::int(),
            ExprKind::Opaque(_) if super::floats::literal(e).is_some() => {
                Type::new(TypeKind::Float64)
            }
            ExprKind::Bool(_) => Type::boolean(),
            ExprKind::Write | ExprKind::Read | ExprKind::NoPerm => Type::new(TypeKind::Frac),
            ExprKind::Name(id) => match self.lookup(&id.name) {
                Some(l) => l.ty.clone(),
                None => self.field_type(self.class.as_deref()?, &id.name)?,
            },
            ExprKind::Result => self.ret.clone()?,
            ExprKind::This => {
                Type::new(TypeKind::Class(ast::Ident::synth(self.class.as_deref()?), vec![]))
            }
            ExprKind::Index(a, _) => {
                let t = self.type_of(a)?;
                match super::maps::map_types(&t) {
                    Some((_, v)) => v,
                    None => elem(&t)?,
                }
            }
            ExprKind::Field(o, f) => {
                if f.name == "length" {
                    return Some(Type::int());
                }
                if let Some((_, t)) = self.enum_const(o, &f.name) {
                    return Some(t);
                }
                if let TypeKind::Tuple(a, b) = &self.type_of(o)?.kind {
                    match f.name.as_str() {
                        "fst" => return Some((**a).clone()),
                        "snd" => return Some((**b).clone()),
                        _ => {}
                    }
                }
                let c = match &o.kind {
                    ExprKind::This => self.class.clone()?,
                    _ => match self.type_of(o)?.kind {
                        TypeKind::Class(c, _) => c.name,
                        _ => return None,
                    },
                };
                self.field_type(&c, &f.name)?
            }
            ExprKind::Old(x, _) => self.type_of(x)?,
            ExprKind::Cond(_, a, b) => {
                let (ta, tb) = (self.type_of(a), self.type_of(b));
                // A permission in either branch makes the whole a permission (see `expr`).
                match (ta, tb) {
                    (Some(t), _) | (_, Some(t)) if is_perm(&t) => t,
                    (ta, tb) => ta.or(tb)?,
                }
            }
            ExprKind::Binary(op, a, b) => match op {
                BinOp::Concat => {
                    let ta = self.type_of(a);
                    // `m ++ (k, v)`: a map update.
                    if let Some(t) = ta.as_ref().filter(|t| super::maps::is_map(t)) {
                        return Some(t.clone());
                    }
                    // An element appended or prepended (`s ++ x`, `x ++ s`): the sequence's type.
                    let tb = self.type_of(b);
                    match (ta, tb) {
                        // A sequence of sequences with one appended: the longer type.
                        (Some(x), Some(y)) if is_seq(&x) && elem(&x).as_ref() == Some(&y) => x,
                        (Some(x), Some(y)) if is_seq(&y) && elem(&y).as_ref() == Some(&x) => y,
                        (Some(x), _) if is_seq(&x) => x,
                        (ta, tb) => tb.or(ta)?,
                    }
                }
                BinOp::Add | BinOp::Sub | BinOp::Mul => {
                    // A real on either side makes the whole a real (`i * 0.5`).
                    let (x, y) = (self.type_of(a), self.type_of(b));
                    if let Some(t) = x.iter().chain(y.iter()).find(|t| is_perm(t)) {
                        return Some(t.clone());
                    }
                    let ta = x.or(y)?;
                    if matches!(op, BinOp::Concat) || !matches!(ta.kind, TypeKind::Int) {
                        ta
                    } else {
                        Type::int()
                    }
                }
                BinOp::Cons => self.type_of(b)?,
                BinOp::Div | BinOp::TruncDiv => match (self.type_of(a), self.type_of(b)) {
                    (Some(t), _) if is_perm(&t) => t,
                    // An integer divided by a float is a float (`1 / x`).
                    (_, Some(t)) if super::floats::is_float(&t) => t,
                    _ => Type::int(),
                },
                BinOp::Mod | BinOp::TruncMod => Type::int(),
                BinOp::Frac => Type::new(TypeKind::Frac),
                _ => Type::boolean(),
            },
            ExprKind::Unary(UnOp::Neg, x) => match self.type_of(x) {
                Some(t) if is_perm(&t) => t,
                _ => Type::int(),
            },
            ExprKind::Unary(UnOp::Not, _) => Type::boolean(),
            ExprKind::Slice(s, _, _) => self.type_of(s)?,
            ExprKind::SeqUpdate(s, _, _) => self.type_of(s)?,
            ExprKind::Length(_) => Type::int(),
            ExprKind::Builtin(Builtin::PermOf, _) => Type::new(TypeKind::Rational),
            ExprKind::Builtin(Builtin::Head, a) => elem(&self.type_of(a.first()?)?)?,
            ExprKind::Builtin(Builtin::Tail, a) => self.type_of(a.first()?)?,
            ExprKind::Builtin(Builtin::Values, a) => Type::new(TypeKind::Generic1(
                ast::Generic1::Seq,
                Box::new(elem(&self.type_of(a.first()?)?)?),
            )),
            ExprKind::Builtin(Builtin::Some, a) => Type::new(TypeKind::Generic1(
                ast::Generic1::Option,
                Box::new(self.type_of(a.first()?)?),
            )),
            ExprKind::Call { recv, name, args, .. } => {
                if let Some(t) = self.adt_call_type(recv.as_deref(), &name.name) {
                    return Some(t);
                }
                match self.callee(recv.as_deref(), &name.name, args) {
                    Some(c) => c.ret,
                    None if recv.is_none() => match (name.name.as_str(), args.as_slice()) {
                        _ if self.map_call_type(&name.name, args).is_some() => {
                            self.map_call_type(&name.name, args)?
                        }
                        ("isEmpty", [_]) => Type::boolean(),
                        ("removeAt", [s, _]) => self.type_of(s)?,
                        ("getOption", [o]) => elem(&self.type_of(o)?)?,
                        ("getOrElseOption", [o, _]) => elem(&self.type_of(o)?)?,
                        _ => return None,
                    },
                    None => return None,
                }
            }
            ExprKind::TupleLit(t, _, _) => t.clone(),
            ExprKind::Collection { kind, elem_ty, elems } => {
                coll_type(*kind, self.elem_type(elem_ty.as_ref(), elems)?)
            }
            ExprKind::EmptyCollection(k, t) => coll_type(*k, t.clone()),
            ExprKind::MapLit { key_ty, val_ty, .. } => {
                Type::new(TypeKind::Map(Box::new(key_ty.clone()), Box::new(val_ty.clone())))
            }
            ExprKind::Range(k, _, _) => coll_type(*k, Type::int()),
            // The body outside the binding's scope: a body that is the bound name has the
            // binding's type (C's `(int) x`, `(\let int vct_cast = x; vct_cast)`).
            ExprKind::Let { ty, name, body, .. } if body.as_name() == Some(name.name.as_str()) => {
                ty.clone()
            }
            ExprKind::Let { body, .. } => self.type_of(body)?,
            ExprKind::Unfolding(_, b) => self.type_of(b)?,
            ExprKind::NewArray(t, dims) => {
                let mut ty = t.clone();
                for _ in dims {
                    ty = Type::new(TypeKind::Array(Box::new(ty), None));
                }
                ty
            }
            ExprKind::Trigger(_, x) => self.type_of(x)?,
            _ => return None,
        })
    }

    pub(super) fn field_type(&self, class: &str, f: &str) -> Option<Type> {
        self.classes.get(class)?.fields.get(f).cloned()
    }

    /// The class of a receiver expression (or the current class when absent).
    pub(super) fn recv_class(&self, recv: Option<&Expr>) -> Option<String> {
        match recv {
            None => self.class.clone(),
            Some(Expr { kind: ExprKind::This, .. }) => self.class.clone(),
            Some(r) => match self.type_of(r)?.kind {
                TypeKind::Class(c, _) => Some(c.name),
                _ => None,
            },
        }
    }

    /// The member a call names, among overloads the one that fits the arguments.
    pub(super) fn callee(
        &self,
        recv: Option<&Expr>,
        name: &str,
        args: &[Expr],
    ) -> Option<super::Callable> {
        let class = self.recv_class(recv);
        if let Some(c) = &class {
            if let Some(x) = self.pick_overload(c, name, args) {
                return Some(x);
            }
        }
        // A static member called through its class name (`C.f(x)`) or a top-level method.
        if let Some(Expr { kind: ExprKind::Name(cn), .. }) = recv {
            if let Some(x) = self.pick_overload(&cn.name, name, args) {
                return Some(x);
            }
        }
        self.pick_overload("", name, args)
    }
}

pub(super) fn coll_type(k: CollKind, t: Type) -> Type {
    let g = match k {
        CollKind::Seq => ast::Generic1::Seq,
        CollKind::Set => ast::Generic1::Set,
        CollKind::Bag => ast::Generic1::Bag,
    };
    Type::new(TypeKind::Generic1(g, Box::new(t)))
}
