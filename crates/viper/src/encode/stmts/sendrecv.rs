//! VerCors 1's loop-carried dependencies: in a parallel loop (`par` over one variable `i`),
//! `send φ to L, d;` in iteration `i` hands the resources and facts `φ` to iteration `i + d`,
//! which takes them with `recv ψ from L', d;` (waiting until they are sent).
//!
//! Encoding: `send` exhales `φ(i)`, `recv` inhales `ψ(i)`. That is sound when whatever an
//! iteration receives was sent to it, which a *transfer method* checks for an arbitrary
//! iteration `j` that receives (its range and the conditions on the way to the `recv`
//! assumed):
//! - iteration `j − d` exists and reaches its `send`: `lo <= j − d < hi` and the conditions on
//!   the way to the `send`, for `j − d`;
//! - what it sent gives what is received: `inhale φ(j − d); exhale ψ(j)`.
//!
//! The conditions and both assertions may name only the loop variable, literals and parameters
//! the method never assigns (values that mean the same in every iteration); each iteration has
//! at most one `send` and one `recv`, outside nested loops, with the same distance `d > 0`.
//! Anything else is refused (V-UNSUPPORTED), never verified half-way.
//!
//! VerCors 2 writes `send L, d: φ;` and `recv L;`: the `recv` takes what the `send` labelled
//! `L` gives, `φ` of the sending iteration (`φ` with `i` replaced by `i - d`).

use super::vars::captured;
use crate::ast::*;
use crate::encode::{Encoder, R};
use front::ast::{self, BinOp, Expr, ExprKind};
use front::span::Span;
use front::Dialect;
use std::collections::HashSet;

/// One `send` or `recv` of an iteration, with the conditions under which it runs.
struct Transfer {
    send: bool,
    what: Expr,
    distance: i64,
    guards: Vec<Expr>,
    span: Span,
    /// VerCors 2's form: the send's label, or a `recv L;` that names one (no `what` of its
    /// own, no distance).
    v2: Option<String>,
}

/// One parsed `send` or `recv`.
struct Parts {
    send: bool,
    what: Expr,
    distance: i64,
    v2: Option<String>,
}

/// `send L, d: φ` (the text after `send`) as (L, d, φ's text).
fn v2_send(body: &str) -> Option<(&str, i64, &str)> {
    let (label, rest) = body.split_once(',')?;
    let (d, phi) = rest.split_once(':')?;
    let label = label.trim();
    let d: i64 = d.trim().parse().ok().filter(|d| *d > 0)?;
    is_label(label).then_some((label, d, phi))
}

/// Whether `s` is a label name (an identifier).
fn is_label(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

impl Encoder<'_> {
    /// `send φ to L, d;` / `recv φ from L, d;` (VerCors 1), `send L, d: φ;` / `recv L;`
    /// (VerCors 2). A VerCors 2 `recv` has no φ of its own: `true` until its send is found.
    fn transfer_parts(&mut self, op: &ast::Opaque) -> R<Parts> {
        let send = op.keyword == "send";
        let word = if send { " to " } else { " from " };
        let body = op.text.strip_prefix(op.keyword.as_str()).unwrap_or("");
        let body = body.trim_end().strip_suffix(';').unwrap_or(body.trim_end());
        let label = body.trim();
        if !send && is_label(label) {
            let what = Expr::new(ExprKind::Bool(true), op.span);
            return Ok(Parts { send, what, distance: 0, v2: Some(label.to_string()) });
        }
        if let Some((l, d, phi)) = v2_send(body).filter(|_| send) {
            let at = op.span.start() + op.keyword.len() + (body.len() - phi.len());
            let text = crate::encode::locks::at_offset(at, phi);
            if let Ok(e) = front::parser::parse_expr_text(&text, Dialect::V2) {
                return Ok(Parts { send, what: e, distance: d, v2: Some(l.to_string()) });
            }
        }
        let parsed = body.rfind(word).and_then(|at| {
            let (phi, rest) = (&body[..at], &body[at + word.len()..]);
            let (_label, d) = rest.split_once(',')?;
            let d: i64 = d.trim().parse().ok().filter(|d| *d > 0)?;
            let text = crate::encode::locks::at_offset(op.span.start() + op.keyword.len(), phi);
            let e = front::parser::parse_expr_text(&text, Dialect::V1).ok()?;
            Some((e, d))
        });
        match parsed {
            Some((e, d)) => Ok(Parts { send, what: e, distance: d, v2: None }),
            None => {
                let form = if send {
                    "send L, d: φ;` or `send φ to L, d;"
                } else {
                    "recv L;` or `recv φ from L, d;"
                };
                self.bad(
                    format!(
                        "cannot read `{}`: expected `{form}` with a distance d > 0",
                        op.keyword
                    ),
                    op.span,
                );
                Err(())
            }
        }
    }

    /// The `send`s and `recv`s of `s` with the conditions on their way.
    fn collect_transfers(
        &mut self,
        s: &ast::Stmt,
        guards: &mut Vec<Expr>,
        in_loop: bool,
        out: &mut Vec<Transfer>,
    ) -> R<()> {
        use ast::StmtKind as K;
        match &s.kind {
            K::Opaque(op) if op.keyword == "send" || op.keyword == "recv" => {
                if in_loop {
                    self.unsupported("`send`/`recv` inside a loop of the iteration", op.span);
                    return Err(());
                }
                let Parts { send, what, distance, v2 } = self.transfer_parts(op)?;
                let guards = guards.clone();
                out.push(Transfer { send, what, distance, guards, span: op.span, v2 });
            }
            K::Block(b) => {
                for x in &b.stmts {
                    self.collect_transfers(x, guards, in_loop, out)?;
                }
            }
            K::Ghost(x) => self.collect_transfers(x, guards, in_loop, out)?,
            K::If { cond, then, els } => {
                guards.push(cond.clone());
                self.collect_transfers(then, guards, in_loop, out)?;
                guards.pop();
                if let Some(e) = els {
                    guards.push(Expr::not(cond.clone()));
                    self.collect_transfers(e, guards, in_loop, out)?;
                    guards.pop();
                }
            }
            K::While(l) | K::For(l) => self.collect_transfers(&l.body, guards, true, out)?,
            K::RangedFor { body, .. } => self.collect_transfers(body, guards, true, out)?,
            K::Vec { body, .. } | K::Atomic { body, .. } | K::Invariant { body, .. } => {
                for x in &body.stmts {
                    self.collect_transfers(x, guards, true, out)?;
                }
            }
            // A nested par block's threads have their own iterations.
            _ => {}
        }
        Ok(())
    }

    /// Check the transfers of a par arm (see the module comment): `var` is the arm's only
    /// variable (Viper name `v`, PVL name `name`) over `lo .. hi`, `every` the facts every
    /// thread knows. Approved statements are encoded by [`Encoder::sendrecv_stmt`].
    #[allow(clippy::too_many_arguments)]
    pub(super) fn transfers(
        &mut self,
        arm: &ast::ParArm,
        name: &str,
        v: &str,
        lo: &Exp,
        hi: &Exp,
        every: &[Contract],
        outer_names: &[String],
        site: &str,
    ) -> R<()> {
        let mut found = Vec::new();
        self.collect_transfers(&arm.body, &mut Vec::new(), false, &mut found)?;
        if found.is_empty() {
            return Ok(());
        }
        let sends: Vec<&Transfer> = found.iter().filter(|t| t.send).collect();
        let recvs: Vec<&Transfer> = found.iter().filter(|t| !t.send).collect();
        if sends.len() > 1 || recvs.len() > 1 {
            self.unsupported("several `send`s or `recv`s in one iteration", found[1].span);
            return Err(());
        }
        if arm.iters.len() != 1 {
            self.unsupported("`send`/`recv` in a par block over several variables", found[0].span);
            return Err(());
        }
        // Only values every iteration shares, and the loop variable.
        let allowed: HashSet<&str> =
            self.fixed_params.iter().map(String::as_str).chain([name]).collect();
        for t in &found {
            for e in t.guards.iter().chain([&t.what]) {
                if let Some(bad) = foreign_name(e, &allowed) {
                    self.unsupported(
                        &format!("a `send`/`recv` whose assertion or condition names `{bad}` (only the loop variable and parameters the method never assigns)"),
                        t.span,
                    );
                    return Err(());
                }
            }
        }
        let Some(recv) = recvs.first() else {
            // A send nobody receives only gives resources away.
            self.transfers_ok.extend(sends.iter().map(|t| (t.span.start(), t.span.end())));
            return Ok(());
        };
        let Some(send) = sends.first() else {
            self.unsupported("a `recv` without a `send` in the iterations", recv.span);
            return Err(());
        };
        // The sender, `v - d`, in PVL.
        let shifted = Expr::bin(BinOp::Sub, Expr::name(name), Expr::int(send.distance));
        let v2_recv;
        let recv = match (&recv.v2, &send.v2) {
            (Some(l), Some(sl)) if recv.distance == 0 => {
                if l != sl {
                    self.unsupported(&format!("a `recv {l};` whose label names no `send` of the iteration (the send is labelled `{sl}`)"), recv.span);
                    return Err(());
                }
                let Some(what) = subst(&send.what, name, &shifted) else {
                    self.unsupported(
                        "this form in a `send` (quantifiers, calls, collections)",
                        send.span,
                    );
                    return Err(());
                };
                // The first iterations have no sender, the last no receiver: there a `recv`
                // takes nothing and a `send` keeps what it would give.
                let it = &arm.iters[0];
                let i = Expr::name(name);
                let d = Expr::int(send.distance);
                let has_sender = Expr::bin(BinOp::Le, it.lo.clone(), shifted.clone());
                let has_receiver = Expr::bin(BinOp::Lt, Expr::bin(BinOp::Add, i, d), it.hi.clone());
                for (t, cond, phi) in [(*recv, has_sender, &what), (send, has_receiver, &send.what)]
                {
                    let guarded = Expr::bin(BinOp::Implies, cond, phi.clone());
                    self.received.insert((t.span.start(), t.span.end()), guarded);
                }
                v2_recv = Transfer {
                    send: false,
                    what,
                    distance: send.distance,
                    guards: recv.guards.clone(),
                    span: recv.span,
                    v2: recv.v2.clone(),
                };
                &v2_recv
            }
            (None, _) if recv.distance > 0 => *recv,
            _ => {
                self.unsupported("a `send` and a `recv` in different forms (VerCors 1's `send φ to L, d;` with VerCors 2's `recv L;`, or the reverse)", recv.span);
                return Err(());
            }
        };
        if send.distance != recv.distance {
            self.unsupported("a `send` and a `recv` with different distances", recv.span);
            return Err(());
        }
        let (Some(sent), Some(sent_guards)) = (
            subst(&send.what, name, &shifted),
            send.guards.iter().map(|g| subst(g, name, &shifted)).collect::<Option<Vec<_>>>(),
        ) else {
            self.unsupported("this form in a `send` (quantifiers, calls, collections)", send.span);
            return Err(());
        };
        let origin = |role: Role, s: Span| Origin::new(role, Some(s)).with_clause(recv.span);
        let mut pres = vec![Contract {
            exp: Exp::and(
                Exp::bin("<=", lo.clone(), Exp::var(v)),
                Exp::bin("<", Exp::var(v), hi.clone()),
            ),
            origin: origin(Role::ThreadPre, arm.span),
        }];
        pres.extend(every.iter().cloned());
        for g in &recv.guards {
            pres.push(Contract { exp: self.spec(g)?, origin: origin(Role::ThreadPre, g.span) });
        }
        let sender = Exp::bin("-", Exp::var(v), Exp::int(send.distance));
        let exists =
            Exp::and(Exp::bin("<=", lo.clone(), sender.clone()), Exp::bin("<", sender, hi.clone()));
        let mut body = Vec::new();
        if recv.v2.is_some() {
            // VerCors 2: a `recv` takes something only from a sender that exists.
            pres.push(Contract { exp: exists, origin: origin(Role::ThreadPre, recv.span) });
        } else {
            body.push(Stmt::new(
                StmtKind::Assert(exists),
                origin(Role::UserAssert, recv.span).with_label("the sending iteration exists"),
            ));
        }
        for g in &sent_guards {
            body.push(Stmt::new(
                StmtKind::Assert(self.spec(g)?),
                origin(Role::UserAssert, send.span),
            ));
        }
        // Whole assertions: exhaling a permission before the fact it frames would leave the
        // fact unframed.
        let sent = self.spec(&sent)?;
        body.push(Stmt::new(StmtKind::Inhale(sent), origin(Role::Code, send.span)));
        let received = self.spec(&recv.what)?;
        body.push(Stmt::new(StmtKind::Exhale(received), origin(Role::Code, recv.span)));
        let contracts: Vec<&Contract> = pres.iter().collect();
        let used: HashSet<String> = captured(&contracts, &body).into_iter().collect();
        let mut params = vec![(v.to_string(), Ty::Int)];
        for n in outer_names {
            if used.contains(n) && n != v {
                if let Some(t) = self.vtypes.get(n) {
                    params.push((n.clone(), t.clone()));
                }
            }
        }
        let mname = self.global_name(format!("{site}_transfer"));
        self.out.methods.push(Method {
            name: mname,
            params,
            returns: vec![],
            pres,
            posts: vec![],
            body: Some(body),
            kind: MethodKind::Thread,
            span: Some(recv.span),
        });
        self.transfers_ok.extend(found.iter().map(|t| (t.span.start(), t.span.end())));
        Ok(())
    }

    /// `send φ …;` exhales φ, `recv ψ …;` inhales ψ, once the par block approved them.
    pub(super) fn sendrecv_stmt(&mut self, op: &ast::Opaque, out: &mut Vec<Stmt>) -> R<bool> {
        if op.keyword != "send" && op.keyword != "recv" {
            return Ok(false);
        }
        if !self.transfers_ok.contains(&(op.span.start(), op.span.end())) {
            self.unsupported(
                &format!("`{}` outside a par block over one variable (or a C loop with an iteration contract)", op.keyword),
                op.span,
            );
            return Err(());
        }
        let Parts { send, mut what, .. } = self.transfer_parts(op)?;
        if let Some(w) = self.received.get(&(op.span.start(), op.span.end())) {
            what = w.clone();
        }
        let x = self.spec(&what)?;
        let origin = Origin::new(Role::Code, Some(what.span)).with_clause(op.span);
        out.push(Stmt::new(if send { StmtKind::Exhale(x) } else { StmtKind::Inhale(x) }, origin));
        Ok(true)
    }
}

/// A name in `e` outside `allowed`, if any (fields after `.` are not names).
fn foreign_name(e: &Expr, allowed: &HashSet<&str>) -> Option<String> {
    let mut bad = None;
    front::visit::walk_expr(e, &mut |x| {
        if let ExprKind::Name(id) = &x.kind {
            if !allowed.contains(id.name.as_str()) && bad.is_none() {
                bad = Some(id.name.clone());
            }
        }
    });
    bad
}

/// `e` with the name `var` replaced by `with`; `None` for a form that binds names or that this
/// does not rewrite.
fn subst(e: &Expr, var: &str, with: &Expr) -> Option<Expr> {
    use ExprKind as K;
    let b = |x: &Expr| subst(x, var, with).map(Box::new);
    let kind = match &e.kind {
        K::Name(id) if id.name == var => return Some(with.clone()),
        K::Int(_)
        | K::Bool(_)
        | K::Null
        | K::This
        | K::Name(_)
        | K::Write
        | K::Read
        | K::NoPerm => e.kind.clone(),
        K::Unary(o, x) => K::Unary(*o, b(x)?),
        K::Binary(o, l, r) => K::Binary(*o, b(l)?, b(r)?),
        K::Cond(c, x, y) => K::Cond(b(c)?, b(x)?, b(y)?),
        K::Field(x, f) => K::Field(b(x)?, f.clone()),
        K::Index(x, i) => K::Index(b(x)?, b(i)?),
        K::Length(x) => K::Length(b(x)?),
        K::Builtin(f, args) => {
            K::Builtin(*f, args.iter().map(|a| subst(a, var, with)).collect::<Option<_>>()?)
        }
        _ => return None,
    };
    Some(Expr::new(kind, e.span))
}
