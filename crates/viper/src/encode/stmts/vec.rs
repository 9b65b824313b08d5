//! v1 vector blocks `vec (int j = lo .. hi) { … }`: every lane `j` runs the body in lock step,
//! one statement at a time, and a statement reads before any lane writes.
//!
//! The body is encoded statement by statement for all lanes at once:
//! * a lane-local variable (`int c; c = e;`) becomes a Viper expression of `j`, its value
//!   `old[L](e)` at a label `L` placed where it is assigned, so that later writes do not change it;
//! * an array write `a[i] = e` becomes, at a fresh label `L`, the exhale and re-inhale of the
//!   write permission to every lane's location (Silicon checks that the lanes' locations are
//!   distinct and fully held) and then `a[i] == old[L](e)` for every lane, after a check that
//!   every lane can read `e`.
//!
//! Anything else in the body (calls, shared scalars, fields, control flow, nested blocks) is
//! refused with V-UNSUPPORTED: the lanes would race on it or it needs a per-lane control flow.

use super::super::{quant, Encoder, R};
use crate::ast::*;
use front::ast::{self, Expr, ExprKind, StmtKind as P, TypeKind};
use front::span::Span;
use std::collections::HashMap;

/// A lane-local variable: its Viper placeholder name and, once assigned, its value per lane.
struct LaneLocal {
    placeholder: String,
    value: Option<Exp>,
}

impl Encoder<'_> {
    pub(super) fn vec_block(
        &mut self,
        iter: &ast::Iter,
        body: &ast::Block,
        out: &mut Vec<Stmt>,
    ) -> R<()> {
        if !matches!(iter.ty.kind, TypeKind::Int) {
            self.unsupported("a `vec` iterator that is not an `int`", iter.ty.span);
            return Err(());
        }
        // The bounds are read once, before any lane runs.
        let lo = self.code(&iter.lo)?;
        let hi = self.code(&iter.hi)?;
        self.flush(out);
        let lo_t = self.temp("vec_lo", Ty::Int);
        let hi_t = self.temp("vec_hi", Ty::Int);
        let code = |span| Origin::new(Role::Code, Some(span));
        out.push(Stmt::new(StmtKind::Assign(Exp::var(&lo_t), lo), code(iter.lo.span)));
        out.push(Stmt::new(StmtKind::Assign(Exp::var(&hi_t), hi), code(iter.hi.span)));
        self.scopes.push(HashMap::new());
        let j = self.fresh_name(&iter.name.name);
        self.bind_name(&iter.name.name, &j, &iter.ty);
        let guards = vec![
            Exp::bin("<=", Exp::var(&lo_t), Exp::var(&j)),
            Exp::bin("<", Exp::var(&j), Exp::var(&hi_t)),
        ];
        let mut locals: HashMap<String, LaneLocal> = HashMap::new();
        let mut ok = true;
        for s in &body.stmts {
            if self.vec_stmt(s, &j, &guards, &mut locals, out).is_err() {
                ok = false;
            }
        }
        self.scopes.pop();
        if ok {
            Ok(())
        } else {
            Err(())
        }
    }

    fn vec_stmt(
        &mut self,
        s: &ast::Stmt,
        j: &str,
        guards: &[Exp],
        locals: &mut HashMap<String, LaneLocal>,
        out: &mut Vec<Stmt>,
    ) -> R<()> {
        match &s.kind {
            P::Decl { ty, vars } => {
                if !matches!(ty.kind, TypeKind::Int | TypeKind::Boolean | TypeKind::Bool) {
                    self.unsupported(
                        "a `vec` lane variable that is not an int or a boolean",
                        s.span,
                    );
                    return Err(());
                }
                for d in vars {
                    let placeholder = self.fresh_name(&d.name.name);
                    self.bind_name(&d.name.name, &placeholder, ty);
                    locals.insert(d.name.name.clone(), LaneLocal { placeholder, value: None });
                    if let Some(init) = &d.init {
                        let target = Expr::new(ExprKind::Name(d.name.clone()), d.name.span);
                        self.vec_assign(&target, init, d.span, j, guards, locals, out)?;
                    }
                }
                Ok(())
            }
            P::Assign { target, value } => {
                self.vec_assign(target, value, s.span, j, guards, locals, out)
            }
            P::CompoundAssign { target, op, value } => {
                let v = op.value_of(target, value, s.span);
                self.vec_assign(target, &v, s.span, j, guards, locals, out)
            }
            _ => {
                self.unsupported("this statement inside a `vec` block", s.span);
                Err(())
            }
        }
    }

    /// A pure expression of the lanes, with the lane-local variables replaced by their values.
    fn vec_value(&mut self, e: &Expr, locals: &HashMap<String, LaneLocal>) -> R<Exp> {
        let mut x = self.spec(e)?;
        for (name, l) in locals {
            if !x.mentions_var(&l.placeholder) {
                continue;
            }
            let Some(v) = &l.value else {
                self.bad(format!("`{name}` is read before it is assigned"), e.span);
                return Err(());
            };
            x = x.subst(&l.placeholder, v);
        }
        Ok(x)
    }

    #[allow(clippy::too_many_arguments)] // the lane state of `vec_block`, passed along
    fn vec_assign(
        &mut self,
        target: &Expr,
        value: &Expr,
        span: Span,
        j: &str,
        guards: &[Exp],
        locals: &mut HashMap<String, LaneLocal>,
        out: &mut Vec<Stmt>,
    ) -> R<()> {
        let v = self.vec_value(value, locals)?;
        let label = self.fresh_name("vec_l");
        out.push(Stmt::new(StmtKind::Label(label.clone()), Origin::synthetic()));
        let old = Exp::new(ExpKind::Old(Some(label), Box::new(v.clone())), Some(value.span));
        if let Some(name) = target.as_name().filter(|n| locals.contains_key(*n)) {
            if let Some(l) = locals.get_mut(name) {
                l.value = Some(old);
            }
            return Ok(());
        }
        let is_elem = matches!(&target.kind, ExprKind::Index(a, _)
            if self.type_of(a).is_some_and(|t| matches!(t.kind, TypeKind::Array(..))));
        if !is_elem {
            self.unsupported(
                "an assignment inside a `vec` block to something other than an array element \
                 or a variable of the block",
                target.span,
            );
            return Err(());
        }
        let loc = self.vec_value(target, locals)?;
        let every = |me: &mut Self, body: Exp| {
            quant::quantify(me, vec![j.to_string()], guards.to_vec(), body)
        };
        // Every lane must be able to read its right-hand side before any lane writes.
        let readable = every(self, Exp::bin("==", v.clone(), v));
        let perm = every(self, Exp::acc(loc.clone(), Exp::synth(ExpKind::Write)));
        let values = every(self, Exp::bin("==", loc, old));
        let o = |r: Role| Origin::new(r, Some(span));
        out.push(Stmt::new(StmtKind::Assert(readable), o(Role::HeapWrite)));
        out.push(Stmt::new(StmtKind::Exhale(perm.clone()), o(Role::HeapWrite)));
        out.push(Stmt::new(StmtKind::Inhale(perm), o(Role::Synthetic)));
        out.push(Stmt::new(StmtKind::Inhale(values), o(Role::Synthetic)));
        Ok(())
    }
}
