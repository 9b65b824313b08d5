//! Generated permissions for permission-free sequential programs (VeyMont's global programs).
//!
//! VeyMont (VerCors 1.4) checks *global programs*: sequential programs whose roles are the
//! fields of one class, written without a single permission. VerCors verified them by
//! generating write permission to the whole object graph a method can reach; VerCors 2 keeps
//! the same idea behind `--generate-permissions`. We do the same here, as an AST-to-AST step
//! before encoding, so that the encoder and Silicon see an ordinary permission-based program:
//!
//! - every instance method, function and loop of a class holds (`requires`/`ensures`,
//!   `loop_invariant`) write permission to every field of `this`;
//! - through a field of class type, the referenced object is non-null and its fields are held
//!   too, transitively; a class met again on the way (a recursive structure) stops the
//!   descent, because a finite formula cannot describe an unbounded structure;
//! - through a field of array type, the array is non-null and its cells are held;
//! - a constructor ensures the same of the new object, and a loop inside a constructor holds
//!   the referenced objects only where the fields are no longer null (they may not be set yet);
//! - a method that returns an object or an array hands it over with all it reaches (a new
//!   object, a clone); a function holds read permission, to `this` and to its parameters;
//! - a method's parameters get nothing: callers pass their roles' own fields, which `this`
//!   already reaches, and write permission to both would ask for one location twice;
//! - each arm of a `par` block gets what its text touches (`par.rs`).
//!
//! Write permission everywhere gives up framing, never soundness: a call may change anything
//! its object reaches, so a caller keeps only what the callee's contract states. A program
//! with aliased roles gets a contract nobody can establish, and fails.
//!
//! The step runs when asked (`verify --generate-permissions`) and, by default, on a program
//! that has the shape of a global program ([`is_global_program`]): no permission anywhere,
//! nothing concurrent, and a class that builds its roles in a constructor and runs them in a
//! `run()` method. Such a program cannot verify in the permission-based reading at all, so
//! the default changes no verdict a permission-based program would get.

use front::ast::*;
use front::span::Span;
use front::visit::{all_exprs, walk_expr, walk_stmts};
use std::collections::{BTreeMap, HashSet};

mod par;
#[cfg(test)]
mod tests;

/// Whether to generate permissions (`verify --generate-permissions` / `--no-generate-permissions`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GenPerms {
    /// Only for a program with the shape of a VeyMont global program.
    #[default]
    Auto,
    Always,
    Never,
}

/// The bound variable of generated array quantifiers. A quantifier binds its own variable, and
/// the generated body names only fields through `this`, so a user's `gp__i` cannot be captured.
const CELL: &str = "gp__i";

/// The program with generated permissions, or `None` when none are generated.
pub fn generate(prog: &Program, mode: GenPerms) -> Option<Program> {
    let on = match mode {
        GenPerms::Never => false,
        GenPerms::Always => true,
        GenPerms::Auto => is_global_program(prog),
    };
    if !on {
        return None;
    }
    let fields = class_fields(prog);
    let functions = functions(prog);
    let mut out = prog.clone();
    for item in &mut out.items {
        match item {
            Item::Class(c) => {
                let name = c.name.name.clone();
                for m in &mut c.members {
                    if let Member::Method(m) = m {
                        let at = m.name.span;
                        Gen { fields: &fields, functions: &functions, class: Some(&name), at }
                            .method(m);
                    }
                }
            }
            Item::Method(m) => {
                let at = m.name.span;
                Gen { fields: &fields, functions: &functions, class: None, at }.method(m)
            }
            Item::Field(_) | Item::Adt(_) | Item::Opaque(_) => {}
        }
    }
    Some(out)
}

/// A VeyMont global program: no permission stated anywhere, nothing concurrent, and a class
/// with a field of class type, a constructor and a non-static `void run()` with a body.
pub fn is_global_program(prog: &Program) -> bool {
    let classes = class_fields(prog);
    let has_shape = prog.items.iter().any(|item| {
        let Item::Class(c) = item else { return false };
        let role_field = classes
            .get(&c.name.name)
            .is_some_and(|fs| fs.iter().any(|(_, t)| class_of(t, &classes).is_some()));
        let methods = || {
            c.members.iter().filter_map(|m| match m {
                Member::Method(m) => Some(m),
                Member::Field(_) => None,
            })
        };
        let ctor = methods().any(|m| m.kind.is_ctor());
        let run = methods().any(|m| {
            m.name.name == "run"
                && m.kind == MethodKind::Method
                && m.params.is_empty()
                && matches!(m.ret.kind, TypeKind::Void)
                && !m.has_modifier(Modifier::Static)
                && matches!(m.body, MethodBody::Block(_))
        });
        role_field && ctor && run
    });
    has_shape && !mentions_permissions_or_threads(prog)
}

/// Does anything in the program state a permission, or run code concurrently?
fn mentions_permissions_or_threads(prog: &Program) -> bool {
    let mut found = false;
    let mut expr = |e: &Expr| {
        walk_expr(e, &mut |x| {
            if matches!(
                &x.kind,
                ExprKind::Builtin(b, _) if b.is_resource() || matches!(b, Builtin::PermOf | Builtin::Held | Builtin::Committed | Builtin::Idle | Builtin::Running)
            ) || matches!(x.kind, ExprKind::Scale(..))
            {
                found = true;
            }
        })
    };
    for item in &prog.items {
        match item {
            Item::Opaque(_) => return true,
            Item::Field(_) | Item::Adt(_) => {}
            Item::Method(m) => {
                if method_is_concurrent(m, &mut expr) {
                    return true;
                }
            }
            // A class contract states a lock invariant.
            Item::Class(c) if !c.contract.is_empty() => return true,
            Item::Class(c) => {
                for m in &c.members {
                    if let Member::Method(m) = m {
                        if method_is_concurrent(m, &mut expr) {
                            return true;
                        }
                    }
                }
            }
        }
    }
    if let Some(b) = &prog.main {
        if block_is_concurrent(b) {
            return true;
        }
        for s in &b.stmts {
            all_exprs(s, &mut expr);
        }
    }
    found
}

/// Is `m` a predicate, a thread body or a lock owner, or does its body run anything
/// concurrently? Every expression of it goes to `expr`.
fn method_is_concurrent(m: &Method, expr: &mut dyn FnMut(&Expr)) -> bool {
    if (m.is_predicate() && !m.has_modifier(Modifier::Inline))
        || m.kind == MethodKind::Run
        || m.has_modifier(Modifier::ThreadLocal)
        || m.prefix
            .clauses
            .iter()
            .any(|c| matches!(c.kind, ClauseKind::LockInvariant | ClauseKind::KernelInvariant))
    {
        return true;
    }
    for c in &m.prefix.clauses {
        if let Some(e) = c.expr() {
            expr(e);
        }
    }
    match &m.body {
        MethodBody::Block(b) => {
            if block_is_concurrent(b) {
                return true;
            }
            for s in &b.stmts {
                all_exprs(s, expr);
            }
            false
        }
        MethodBody::Expr(e) => {
            expr(e);
            false
        }
        MethodBody::Abstract => false,
    }
}

fn block_is_concurrent(b: &Block) -> bool {
    let mut found = false;
    for s in &b.stmts {
        walk_stmts(s, &mut |st| {
            found |= match &st.kind {
                // Arms without iterators get generated contracts (`par.rs`).
                StmtKind::Par(p) => p.arms.iter().any(|a| !a.iters.is_empty() || a.wait.is_some()),
                StmtKind::Parallel { .. }
                | StmtKind::Barrier(_)
                | StmtKind::Invariant { .. }
                | StmtKind::Atomic { .. }
                | StmtKind::Vec { .. } => true,
                StmtKind::Opaque(op) => matches!(
                    op.keyword.as_str(),
                    "lock" | "unlock" | "wait" | "notify" | "fork" | "join"
                ),
                _ => false,
            }
        });
    }
    found
}

/// Every name declared in `s` (locals, loop variables), wherever in it.
fn declared(s: &Stmt, out: &mut HashSet<String>) {
    walk_stmts(s, &mut |st| match &st.kind {
        StmtKind::Decl { vars, .. } => out.extend(vars.iter().map(|d| d.name.name.clone())),
        StmtKind::RangedFor { var, .. } => {
            out.insert(var.name.clone());
        }
        _ => {}
    });
}

/// The functions of every class, as `(class, name)`.
fn functions(prog: &Program) -> HashSet<(String, String)> {
    prog.items
        .iter()
        .filter_map(|i| match i {
            Item::Class(c) => Some(c),
            _ => None,
        })
        .flat_map(|c| {
            c.members.iter().filter_map(move |m| match m {
                Member::Method(m) if m.is_function() => {
                    Some((c.name.name.clone(), m.name.name.clone()))
                }
                _ => None,
            })
        })
        .collect()
}

type Fields = BTreeMap<String, Vec<(String, Type)>>;

/// Every class's instance fields in declaration order.
fn class_fields(prog: &Program) -> Fields {
    let mut out = Fields::new();
    for item in &prog.items {
        if let Item::Class(c) = item {
            let fs = out.entry(c.name.name.clone()).or_default();
            for m in &c.members {
                if let Member::Field(f) = m {
                    for n in &f.names {
                        fs.push((n.name.clone(), f.ty.clone()));
                    }
                }
            }
        }
    }
    out
}

/// The program class a type names, if any.
fn class_of<'a>(t: &'a Type, classes: &Fields) -> Option<&'a str> {
    match &t.kind {
        TypeKind::Class(n, args) if args.is_empty() && classes.contains_key(&n.name) => {
            Some(&n.name)
        }
        _ => None,
    }
}

/// The generator for one member: `at` is the span every generated node carries (the member's
/// name), so that a generated clause that fails is reported at the member it belongs to.
#[derive(Clone, Copy)]
struct Gen<'a> {
    fields: &'a Fields,
    /// The functions of each class, `(class, name)`: a call to one only reads.
    functions: &'a HashSet<(String, String)>,
    /// The member's class; `None` for a top-level method.
    class: Option<&'a str>,
    at: Span,
}

impl Gen<'_> {
    fn method(&self, m: &mut Method) {
        if m.is_predicate() || m.is_operator() {
            return;
        }
        let function = m.is_function();
        // A function reads: any fraction lets a contract call it on the objects it holds,
        // even twice on one object (`p.equal(p)`).
        let amount = if function { ExprKind::Read } else { ExprKind::Write };
        let this = match self.class {
            Some(c) if !m.has_modifier(Modifier::Static) => Some((self.expr(ExprKind::This), c)),
            _ => None,
        };
        let mut held = Vec::new();
        let mut in_loops = Vec::new();
        if let Some((this, class)) = &this {
            if !m.kind.is_ctor() {
                held.extend(self.perms(this, class, &amount, false));
            }
            in_loops.extend(self.perms(this, class, &amount, m.kind.is_ctor()));
        }
        // A method's parameters get nothing: write permission to an object that a field of
        // `this` also reaches would ask for the same location twice, and callers routinely
        // pass their roles' own fields (`w.write(w.data)`).
        for p in m.params.iter().filter(|_| function) {
            let x = self.expr(ExprKind::Name(Ident::new(&p.name.name, self.at)));
            let ps = self.typed(&x, &p.ty, &amount);
            held.extend(ps.iter().cloned());
            in_loops.extend(ps);
        }
        let mut post = if function { Vec::new() } else { held.clone() };
        if m.kind.is_ctor() {
            if let Some((this, class)) = &this {
                post.splice(0..0, self.perms(this, class, &amount, false));
            }
        } else if !function {
            let result = self.expr(ExprKind::Result);
            post.extend(self.typed(&result, &m.ret, &amount));
        }
        self.prepend(&mut m.prefix.clauses, &held, &post);
        if let MethodBody::Block(b) = &mut m.body {
            let mut locals: HashSet<String> =
                m.params.iter().map(|p| p.name.name.clone()).collect();
            for s in &b.stmts {
                declared(s, &mut locals);
            }
            for s in &mut b.stmts {
                self.loops(s, &in_loops, &locals);
            }
        }
    }

    /// The permissions of a value `x` of type `t`: for an object or an array, `x != null` and
    /// what it reaches; nothing for other types.
    fn typed(&self, x: &Expr, t: &Type, amount: &ExprKind) -> Vec<Expr> {
        let mut inner = Vec::new();
        match &t.kind {
            TypeKind::Class(..) => match class_of(t, self.fields) {
                Some(c) => {
                    let mut path = vec![c.to_string()];
                    self.object(x, c, amount, false, &mut path, &mut inner);
                }
                None => return Vec::new(),
            },
            TypeKind::Array(..) => inner.push(self.cells(x, amount)),
            _ => return Vec::new(),
        }
        let mut out = Vec::new();
        self.reached(x.clone(), inner, false, &mut out);
        out
    }

    /// Put `pre` and `post` in front of the member's own clauses, so that those are framed.
    fn prepend(&self, clauses: &mut Vec<Clause>, pre: &[Expr], post: &[Expr]) {
        let mut new: Vec<Clause> = pre
            .iter()
            .map(|e| self.clause(ClauseKind::Requires, e))
            .chain(post.iter().map(|e| self.clause(ClauseKind::Ensures, e)))
            .collect();
        new.append(clauses);
        *clauses = new;
    }

    fn clause(&self, kind: ClauseKind, e: &Expr) -> Clause {
        Clause { kind, body: ClauseBody::Expr(e.clone()), span: self.at }
    }

    /// Add `inv` to every loop in `s`, and generate the contracts of its `par` arms.
    fn loops(&self, s: &mut Stmt, inv: &[Expr], locals: &HashSet<String>) {
        match &mut s.kind {
            StmtKind::Block(b) => b.stmts.iter_mut().for_each(|x| self.loops(x, inv, locals)),
            StmtKind::If { then, els, .. } => {
                self.loops(then, inv, locals);
                if let Some(e) = els {
                    self.loops(e, inv, locals);
                }
            }
            StmtKind::Par(p) => self.par_arms(p, locals),
            StmtKind::While(l) | StmtKind::For(l) => {
                let mut new: Vec<Clause> =
                    inv.iter().map(|e| self.clause(ClauseKind::LoopInvariant, e)).collect();
                new.append(&mut l.prefix.clauses);
                l.prefix.clauses = new;
                self.loops(&mut l.body, inv, locals);
            }
            StmtKind::RangedFor { prefix, body, .. } => {
                let mut new: Vec<Clause> =
                    inv.iter().map(|e| self.clause(ClauseKind::LoopInvariant, e)).collect();
                new.append(&mut prefix.clauses);
                prefix.clauses = new;
                self.loops(body, inv, locals);
            }
            StmtKind::Ghost(inner) => self.loops(inner, inv, locals),
            _ => {}
        }
    }

    /// The permissions of the object `e` of this member's class, as conjuncts in an order
    /// that frames each one by those before it. `guarded`: objects reached through a field
    /// are held only where the field is not null, instead of the field being non-null.
    fn perms(&self, e: &Expr, class: &str, amount: &ExprKind, guarded: bool) -> Vec<Expr> {
        let mut path = vec![class.to_string()];
        let mut out = Vec::new();
        self.object(e, class, amount, guarded, &mut path, &mut out);
        out
    }

    fn object(
        &self,
        e: &Expr,
        class: &str,
        amount: &ExprKind,
        guarded: bool,
        path: &mut Vec<String>,
        out: &mut Vec<Expr>,
    ) {
        let Some(fields) = self.fields.get(class) else { return };
        for (name, ty) in fields {
            let loc = self.expr(ExprKind::Field(Box::new(e.clone()), Ident::new(name, self.at)));
            out.push(self.perm(loc.clone(), amount));
            let mut inner = Vec::new();
            match &ty.kind {
                TypeKind::Class(..) => match class_of(ty, self.fields) {
                    Some(d) if !path.iter().any(|p| p == d) => {
                        path.push(d.to_string());
                        self.object(&loc, d, amount, guarded, path, &mut inner);
                        path.pop();
                    }
                    _ => continue,
                },
                TypeKind::Array(..) => inner.push(self.cells(&loc, amount)),
                _ => continue,
            }
            self.reached(loc, inner, guarded, out);
        }
    }

    /// `loc != null` and what it reaches, or `loc != null ==> (what it reaches)` when guarded.
    fn reached(&self, loc: Expr, inner: Vec<Expr>, guarded: bool, out: &mut Vec<Expr>) {
        let non_null = self.bin(BinOp::Ne, loc, self.expr(ExprKind::Null));
        if !guarded {
            out.push(non_null);
            out.extend(inner);
        } else if let Some(all) = inner.into_iter().reduce(|a, b| self.bin(BinOp::Star, a, b)) {
            out.push(self.bin(BinOp::Implies, non_null, all));
        }
    }

    /// `(\forall* int i; 0 <= i && i < a.length; Perm(a[i], write))`.
    fn cells(&self, a: &Expr, amount: &ExprKind) -> Expr {
        let i = self.expr(ExprKind::Name(Ident::new(CELL, self.at)));
        let len = self.expr(ExprKind::Field(Box::new(a.clone()), Ident::new("length", self.at)));
        let cond = self.bin(
            BinOp::And,
            self.bin(BinOp::Le, self.expr(ExprKind::Int(0.into())), i.clone()),
            self.bin(BinOp::Lt, i.clone(), len),
        );
        let cell = self.expr(ExprKind::Index(Box::new(a.clone()), Box::new(i)));
        self.expr(ExprKind::Quant {
            kind: QuantKind::ForallStar,
            bindings: vec![Binding {
                ty: Type { kind: TypeKind::Int, span: self.at },
                name: Ident::new(CELL, self.at),
                range: None,
                span: self.at,
            }],
            cond: Some(Box::new(cond)),
            body: Box::new(self.perm(cell, amount)),
        })
    }

    fn perm(&self, loc: Expr, amount: &ExprKind) -> Expr {
        self.expr(ExprKind::Builtin(Builtin::Perm, vec![loc, self.expr(amount.clone())]))
    }

    fn bin(&self, op: BinOp, l: Expr, r: Expr) -> Expr {
        self.expr(ExprKind::Binary(op, Box::new(l), Box::new(r)))
    }

    fn expr(&self, kind: ExprKind) -> Expr {
        Expr::new(kind, self.at)
    }
}
