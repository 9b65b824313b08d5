//! Generated permissions for the arms of a `par` block in a global program.
//!
//! VeyMont's global programs run roles side by side in `par` arms without contracts of
//! their own. Each arm gets exactly what its text touches, as a `context` clause:
//! - write permission to a location the arm assigns, and to everything an object reaches when
//!   the arm calls a method on it (the callee holds all of it);
//! - `1\n` of a location it only reads (or reads through a function call), `n` being the
//!   number of arms, so that all arms reading one location together take at most all of it
//!   and the block hands back exactly what it took;
//! - the objects on the way to a location are read the same way, and stated non-null.
//!
//! Two arms that write one location, or one that writes what another reads, then ask for more
//! than the method holds: the race is reported as a failed par precondition.

use super::{class_of, Gen};
use front::ast::*;
use front::visit::{stmt_exprs, walk_expr, walk_stmts};
use std::collections::{BTreeMap, HashSet};

/// What an arm does with a location.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Use {
    Read,
    Write,
}

/// One location an arm touches: a field (`this.a.x`) or all cells of an array.
struct Access {
    loc: Expr,
    ty: Type,
    cells: bool,
    how: Use,
}

/// The locations of one arm, keyed by their path (`a.x`, `a.arr[]`): a path sorts after the
/// paths it extends, so that rendering in key order frames every location by the ones before.
type Accesses = BTreeMap<String, Access>;

impl Gen<'_> {
    /// Give every arm of `p` the permissions it needs, when no arm states a contract of
    /// permissions or iterates (a thread per value would need a share per thread).
    pub(super) fn par_arms(&self, p: &mut Par, locals: &HashSet<String>) {
        if p.arms.iter().any(|a| !a.iters.is_empty()) {
            return;
        }
        // Blame what the arms' contracts ask for at the block.
        let g = Gen { at: p.keyword, ..*self };
        let n = p.arms.len();
        for arm in &mut p.arms {
            let mut acc = Accesses::new();
            g.arm_accesses(&arm.body, locals, &mut acc);
            let held = g.render(&acc, n);
            let mut new: Vec<Clause> =
                held.iter().map(|e| g.clause(ClauseKind::Context, e)).collect();
            new.append(&mut arm.contract);
            arm.contract = new;
            g.loops(&mut arm.body, &held, locals);
        }
    }

    fn arm_accesses(&self, body: &Stmt, locals: &HashSet<String>, acc: &mut Accesses) {
        walk_stmts(body, &mut |s| {
            if let StmtKind::Assign { target, .. }
            | StmtKind::CompoundAssign { target, .. }
            | StmtKind::IncDec { target, .. } = &s.kind
            {
                self.touch(target, Use::Write, locals, acc);
            }
            stmt_exprs(s, &mut |e| {
                walk_expr(e, &mut |x| match &x.kind {
                    ExprKind::Call { recv, name, .. } => {
                        self.call(recv.as_deref(), name, locals, acc)
                    }
                    ExprKind::Field(..) | ExprKind::Name(_) | ExprKind::Index(..) => {
                        self.touch(x, Use::Read, locals, acc)
                    }
                    _ => {}
                })
            });
        });
    }

    /// Record the location `e` denotes (if it is one), and the objects on its way.
    fn touch(&self, e: &Expr, how: Use, locals: &HashSet<String>, acc: &mut Accesses) {
        let (e, cells) = match &e.kind {
            ExprKind::Index(a, _) => (a.as_ref(), true),
            _ => (e, false),
        };
        let Some(path) = self.path(e, locals) else { return };
        let last = path.len().saturating_sub(1);
        for (i, (key, loc, ty)) in path.into_iter().enumerate() {
            if i == last && cells {
                // The array itself is read; its cells are what the access reads or writes.
                let array =
                    Access { loc: loc.clone(), ty: ty.clone(), cells: false, how: Use::Read };
                add(acc, key.clone(), array);
                add(acc, format!("{key}[]"), Access { loc, ty, cells: true, how });
            } else {
                let how = if i == last { how } else { Use::Read };
                add(acc, key, Access { loc, ty, cells: false, how });
            }
        }
    }

    /// A call on an object (or on `this`): the callee's generated contract holds all the
    /// object reaches, written by a method and read by a function.
    fn call(
        &self,
        recv: Option<&Expr>,
        name: &Ident,
        locals: &HashSet<String>,
        acc: &mut Accesses,
    ) {
        let (prefix, class, base) = match recv {
            None => (Vec::new(), self.class.map(str::to_string), self.expr(ExprKind::This)),
            Some(r) if matches!(r.kind, ExprKind::This) => {
                (Vec::new(), self.class.map(str::to_string), self.expr(ExprKind::This))
            }
            Some(r) => {
                let Some(path) = self.path(r, locals) else { return };
                let Some((_, loc, ty)) = path.last().cloned() else { return };
                let class = class_of(&ty, self.fields).map(str::to_string);
                (path, class, loc)
            }
        };
        let Some(class) = class.as_deref() else { return };
        let how = if self.functions.contains(&(class.to_string(), name.name.clone())) {
            Use::Read
        } else {
            Use::Write
        };
        let root = prefix.last().map(|(k, _, _)| format!("{k}.")).unwrap_or_default();
        for (key, loc, ty) in prefix {
            add(acc, key, Access { loc, ty, cells: false, how: Use::Read });
        }
        let mut path = vec![class.to_string()];
        self.reach(&base, class, &root, &mut path, &mut |key, loc, ty, cells| {
            add(acc, key, Access { loc, ty, cells, how })
        });
    }

    /// Every location the object `e` of `class` reaches, as [`Gen::object`] generates them.
    fn reach(
        &self,
        e: &Expr,
        class: &str,
        root: &str,
        path: &mut Vec<String>,
        f: &mut dyn FnMut(String, Expr, Type, bool),
    ) {
        let Some(fields) = self.fields.get(class) else { return };
        for (name, ty) in fields {
            let loc = self.expr(ExprKind::Field(Box::new(e.clone()), Ident::new(name, self.at)));
            let key = format!("{root}{name}");
            f(key.clone(), loc.clone(), ty.clone(), false);
            match &ty.kind {
                TypeKind::Array(..) => f(format!("{key}[]"), loc, ty.clone(), true),
                TypeKind::Class(..) => {
                    if let Some(d) = class_of(ty, self.fields) {
                        if !path.iter().any(|p| p == d) {
                            path.push(d.to_string());
                            self.reach(&loc, d, &format!("{key}."), path, f);
                            path.pop();
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// The field path `e` denotes, with `this` explicit: each step's key, location and type.
    fn path(&self, e: &Expr, locals: &HashSet<String>) -> Option<Vec<(String, Expr, Type)>> {
        match &e.kind {
            ExprKind::Name(id) if !locals.contains(&id.name) => {
                let ty = self.field_type(self.class?, &id.name)?;
                let this = self.expr(ExprKind::This);
                let loc = self.expr(ExprKind::Field(Box::new(this), Ident::new(&id.name, self.at)));
                Some(vec![(id.name.clone(), loc, ty)])
            }
            ExprKind::Field(base, f) if matches!(base.kind, ExprKind::This) => {
                self.path(&Expr::new(ExprKind::Name(f.clone()), e.span), &HashSet::new())
            }
            ExprKind::Field(base, f) => {
                let mut p = self.path(base, locals)?;
                let (key, loc, ty) = p.last()?.clone();
                let ty = self.field_type(class_of(&ty, self.fields)?, &f.name)?;
                let loc = self.expr(ExprKind::Field(Box::new(loc), Ident::new(&f.name, self.at)));
                p.push((format!("{key}.{}", f.name), loc, ty));
                Some(p)
            }
            _ => None,
        }
    }

    fn field_type(&self, class: &str, field: &str) -> Option<Type> {
        self.fields.get(class)?.iter().find(|(n, _)| n == field).map(|(_, t)| t.clone())
    }

    /// The arm's contract: each location's permission, after the objects on its way, each
    /// object on the way stated non-null.
    fn render(&self, acc: &Accesses, arms: usize) -> Vec<Expr> {
        let share = ExprKind::Binary(
            BinOp::Frac,
            Box::new(self.expr(ExprKind::Int(1.into()))),
            Box::new(self.expr(ExprKind::Int(arms.into()))),
        );
        let mut out = Vec::new();
        for (key, a) in acc {
            let amount = match a.how {
                Use::Write => ExprKind::Write,
                Use::Read => share.clone(),
            };
            if a.cells {
                out.push(self.cells(&a.loc, &amount));
                continue;
            }
            out.push(self.perm(a.loc.clone(), &amount));
            let extended = acc.range(key.clone()..).nth(1).is_some_and(|(k, _)| {
                k.starts_with(&format!("{key}.")) || k.starts_with(&format!("{key}["))
            });
            if extended && matches!(a.ty.kind, TypeKind::Class(..) | TypeKind::Array(..)) {
                out.push(self.bin(BinOp::Ne, a.loc.clone(), self.expr(ExprKind::Null)));
            }
        }
        out
    }
}

/// Record an access; a location written anywhere in the arm is written.
fn add(acc: &mut Accesses, key: String, a: Access) {
    match acc.get_mut(&key) {
        Some(old) => old.how = old.how.max(a.how),
        None => {
            acc.insert(key, a);
        }
    }
}
