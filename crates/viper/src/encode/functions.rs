//! Pure functions, predicates and termination measures: the members that become Viper
//! functions and predicates, and `decreases` clauses.

use super::{frac_range, names, Callable, Encoder, R};
use crate::ast::*;
use front::ast::{self, MethodBody, TypeKind};

impl Encoder<'_> {
    pub(super) fn function(&mut self, m: &ast::Method, info: &Callable) -> R<()> {
        // A function's `given` parameters are Viper parameters after the others, which every
        // call supplies from `given { … }` (a call without them is V-BAD-INPUT). A function
        // has one result: `yields` are refused before its body is read.
        if let Some(c) = m.prefix.clauses.iter().find(|c| c.kind == ast::ClauseKind::Yields) {
            self.unsupported("a `yields` parameter of a pure function", c.span);
            return Err(());
        }
        self.in_function = true;
        self.ret = Some(m.ret.clone());
        let mut params = self.params(m, info)?;
        for (g, t) in &info.given {
            params.push(self.bind_param(g, t)?);
        }
        let ret = self.viper_ty(&m.ret)?;
        let (mut pres, mut posts) = self.method_contract(m, Role::Pre, Role::Post)?;
        // A function takes no permission from its caller (its precondition is checked, not
        // consumed), so a permission in its postcondition is one the caller still holds: the
        // clause states nothing a caller can use, and Viper rejects it in a function. The
        // clauses are split at `**` first, so the pure conjuncts stay.
        posts.retain(|c| !c.exp.has_acc());
        // A function whose postcondition calls it needs a measure before Silicon accepts it.
        // Without a `decreases` clause, termination is assumed (as for any function without
        // one, and as VerCors 1 does); `decreases _` says so to Silicon.
        let recursive_post = posts.iter().any(|c| {
            let mut found = false;
            c.exp.visit(&mut |e| {
                found |= matches!(&e.kind, ExpKind::App(f, _) if *f == info.viper);
            });
            found
        });
        if recursive_post && !pres.iter().any(|c| c.origin.role == Role::Decreases) {
            pres.push(Contract {
                exp: Exp::synth(ExpKind::Wildcard),
                origin: Origin::new(Role::Decreases, Some(m.name.span)),
            });
        }
        // The body as a value of the declared type (`pure frac f() = 1;`).
        let body = match &m.body {
            MethodBody::Expr(e) => Some(self.expr_to(e, Some(&m.ret), false)?),
            MethodBody::Abstract => None,
            MethodBody::Block(b) => match names::return_chain(&b.stmts) {
                Some(e) => Some(self.expr_to(&e, Some(&m.ret), false)?),
                None => {
                    self.unsupported(
                        "a pure function whose body is not a chain of `if`s and `return`s",
                        b.span,
                    );
                    return Err(());
                }
            },
        };
        self.out.functions.push(Function {
            name: info.viper.clone(),
            params,
            ret,
            pres,
            posts,
            body,
            span: Some(m.span),
        });
        Ok(())
    }

    pub(super) fn predicate(&mut self, m: &ast::Method, info: &Callable) -> R<()> {
        let params = self.params(m, info)?;
        let body = match &m.body {
            MethodBody::Expr(e) => Some(self.spec(e)?),
            MethodBody::Abstract => None,
            MethodBody::Block(b) => {
                self.unsupported("a predicate with a statement body", b.span);
                return Err(());
            }
        };
        // A `frac` (`zfrac`) parameter is in its range wherever a predicate instance is folded
        // or unfolded (as everywhere a value of the type exists); Viper's predicates have no
        // preconditions, so the body says it: `range ==> body` is the body for every argument
        // of the type, and `Perm(x, p)` in it is well-formed.
        let ranges: Vec<Exp> = m
            .params
            .iter()
            .filter(|p| matches!(p.ty.kind, TypeKind::Frac | TypeKind::ZFrac))
            .filter_map(|p| {
                let v = self.lookup(&p.name.name)?.viper.clone();
                Some(frac_range(&v, p.ty.kind == TypeKind::Frac))
            })
            .collect();
        let body = match body {
            Some(b) if !ranges.is_empty() => Some(Exp::implies(Exp::and_all(ranges), b)),
            b => b,
        };
        self.out.predicates.push(Predicate {
            name: info.viper.clone(),
            params,
            body,
            span: Some(m.span),
        });
        Ok(())
    }

    /// A `decreases` clause as the components of a Viper termination measure (checked by
    /// Silicon's termination plugin; a tuple is ordered lexicographically, as in VerCors).
    /// `decreases assume;` asks to assume termination: no measure, nothing checked, as asked.
    /// `decreases;` without a measure (VerCors 2) says the member terminates without
    /// recursing: the constant measure `0`, which any (mutually) recursive call fails to
    /// decrease, while calls of other members need nothing.
    pub(super) fn measure(&mut self, c: &ast::Clause) -> R<Vec<Contract>> {
        match &c.body {
            ast::ClauseBody::DecreasesAssume => Ok(Vec::new()),
            ast::ClauseBody::List(es) if es.is_empty() => Ok(vec![Contract {
                exp: Exp::int(0),
                origin: Origin::new(Role::Decreases, Some(c.span)).with_clause(c.span),
            }]),
            ast::ClauseBody::List(es) if !es.is_empty() => es
                .iter()
                .map(|e| {
                    Ok(Contract {
                        exp: self.spec(e)?,
                        origin: Origin::new(Role::Decreases, Some(e.span)).with_clause(c.span),
                    })
                })
                .collect(),
            _ => {
                self.unsupported("this `decreases` clause", c.span);
                Err(())
            }
        }
    }
}
