//! Products of two symbolic integers as `vct_mul(a, b)`, with monotonicity axioms.
//!
//! GPU kernels index with products of two unknowns: `blockIdx.x * blockDim.x + threadIdx.x`,
//! a linearized cell `w * r + c` in an array of length `h * w`, a thread's block
//! `g * N + k` of an array of length `M * N`. Whether such an index is in bounds follows from
//! `r < h` only by multiplying the inequality by `w`, which Silicon's Z3 does not do. Every
//! product of two non-literal integers is written `vct_mul(a, b)`: a domain function equal to
//! `a * b` (so nothing else changes), whose axioms state, for two products that share a
//! factor `c >= 0`, that `a < b` gives `a * c + c <= b * c` (in every arrangement of the
//! factors), and that the product of two non-negative numbers is non-negative. Each is valid
//! integer arithmetic, so they assume nothing false. Their triggers are pairs of products
//! already in the proof, and their instances create no new product, so no instantiation loop.
//!
//! Only products whose operands are surely integers are rewritten (permission amounts stay).
//! The domain is emitted only for a program that uses it, so other programs' Viper text is
//! unchanged.

use crate::viper::ast::{Contract, Exp, ExpKind, Program, Stmt, StmtKind, Ty};
use std::collections::HashMap;

pub const MUL_FN: &str = "vct_mul";

const DOMAIN: &str = "domain VctMul {
  function vct_mul(a: Int, b: Int): Int

  axiom vct_mul_def {
    forall a: Int, b: Int :: { vct_mul(a, b) } vct_mul(a, b) == a * b
  }
  axiom vct_mul_nonneg {
    forall a: Int, b: Int :: { vct_mul(a, b) } 0 <= a && 0 <= b ==> 0 <= vct_mul(a, b)
  }
  axiom vct_mul_mono_rr {
    forall a: Int, b: Int, c: Int :: { vct_mul(a, c), vct_mul(b, c) } 0 <= c && a < b ==> vct_mul(a, c) + c <= vct_mul(b, c)
  }
  axiom vct_mul_mono_ll {
    forall a: Int, b: Int, c: Int :: { vct_mul(c, a), vct_mul(c, b) } 0 <= c && a < b ==> vct_mul(c, a) + c <= vct_mul(c, b)
  }
  axiom vct_mul_mono_lr {
    forall a: Int, b: Int, c: Int :: { vct_mul(c, a), vct_mul(b, c) } 0 <= c && a < b ==> vct_mul(c, a) + c <= vct_mul(b, c)
  }
  axiom vct_mul_mono_rl {
    forall a: Int, b: Int, c: Int :: { vct_mul(a, c), vct_mul(c, b) } 0 <= c && a < b ==> vct_mul(a, c) + c <= vct_mul(c, b)
  }
}";

/// Rewrite the symbolic integer products of `prog` (see the module comment).
pub(crate) fn route(prog: &mut Program) {
    let fields: HashMap<String, Ty> = prog.fields.iter().cloned().collect();
    let mut rets: HashMap<String, Ty> =
        prog.functions.iter().map(|f| (f.name.clone(), f.ret.clone())).collect();
    for f in ["alen", "loc_idx", MUL_FN] {
        rets.insert(f.to_string(), Ty::Int);
    }
    let mut used = false;
    let mut cx =
        Cx { fields: &fields, rets: &rets, vars: HashMap::new(), result: None, used: &mut used };
    for f in &mut prog.functions {
        cx.vars = f.params.iter().cloned().collect();
        cx.result = Some(f.ret.clone());
        let exps = f.pres.iter().chain(&f.posts).map(|c| &c.exp).chain(f.body.as_ref());
        cx.bind_all(exps.collect());
        contracts(&mut cx, &mut f.pres);
        contracts(&mut cx, &mut f.posts);
        f.body = f.body.take().map(|b| cx.exp(b));
    }
    cx.result = None;
    for p in &mut prog.predicates {
        cx.vars = p.params.iter().cloned().collect();
        cx.bind_all(p.body.iter().collect());
        p.body = p.body.take().map(|b| cx.exp(b));
    }
    for m in &mut prog.methods {
        cx.vars = m.params.iter().chain(&m.returns).cloned().collect();
        let mut exps: Vec<&Exp> = m.pres.iter().chain(&m.posts).map(|c| &c.exp).collect();
        if let Some(b) = &m.body {
            decls(b, &mut cx.vars, &mut exps);
        }
        cx.bind_all(exps);
        contracts(&mut cx, &mut m.pres);
        contracts(&mut cx, &mut m.posts);
        if let Some(b) = m.body.take() {
            m.body = Some(stmts(&mut cx, b));
        }
    }
    if used {
        prog.domains.push(DOMAIN.to_string());
    }
}

struct Cx<'a> {
    fields: &'a HashMap<String, Ty>,
    rets: &'a HashMap<String, Ty>,
    /// The types of the variables in scope: parameters, locals and every bound variable of
    /// the member (the encoder's bound names are fresh, so one type each; a clash is dropped).
    vars: HashMap<String, Ty>,
    /// A function's result type.
    result: Option<Ty>,
    used: &'a mut bool,
}

impl Cx<'_> {
    fn bind_all(&mut self, exps: Vec<&Exp>) {
        let mut clash = Vec::new();
        for e in exps {
            e.visit(&mut |n| {
                if let ExpKind::Forall(vs, ..) | ExpKind::Exists(vs, ..) = &n.kind {
                    for (v, t) in vs {
                        match self.vars.get(v) {
                            Some(old) if old != t => clash.push(v.clone()),
                            _ => {
                                self.vars.insert(v.clone(), t.clone());
                            }
                        }
                    }
                }
            });
        }
        for v in clash {
            self.vars.remove(&v);
        }
    }

    fn int(&self, e: &Exp) -> bool {
        match &e.kind {
            ExpKind::Int(_) | ExpKind::Len(_) => true,
            ExpKind::Var(v) => self.vars.get(v) == Some(&Ty::Int),
            ExpKind::Result => self.result == Some(Ty::Int),
            ExpKind::App(f, _) => self.rets.get(f) == Some(&Ty::Int),
            ExpKind::Field(_, f) => self.fields.get(f) == Some(&Ty::Int),
            ExpKind::Binary("+" | "-" | "*" | "\\" | "%", a, b) => self.int(a) && self.int(b),
            ExpKind::Unary("-", a) | ExpKind::Old(_, a) => self.int(a),
            ExpKind::Cond(_, a, b) => self.int(a) && self.int(b),
            _ => false,
        }
    }

    fn exp(&mut self, e: Exp) -> Exp {
        e.map(&mut |n| match n.kind {
            ExpKind::Binary("*", a, b)
                if !literal(&a) && !literal(&b) && self.int(&a) && self.int(&b) =>
            {
                *self.used = true;
                Exp::new(ExpKind::App(MUL_FN.to_string(), vec![*a, *b]), n.span)
            }
            k => Exp { kind: k, span: n.span },
        })
    }
}

fn literal(e: &Exp) -> bool {
    match &e.kind {
        ExpKind::Int(_) => true,
        ExpKind::Unary("-", x) => literal(x),
        _ => false,
    }
}

fn contracts(cx: &mut Cx, cs: &mut [Contract]) {
    for c in cs {
        let e = std::mem::replace(&mut c.exp, Exp::bool(true));
        c.exp = cx.exp(e);
    }
}

/// The local declarations of a body (into `vars`) and its expressions (into `exps`).
fn decls<'a>(b: &'a [Stmt], vars: &mut HashMap<String, Ty>, exps: &mut Vec<&'a Exp>) {
    for s in b {
        match &s.kind {
            StmtKind::VarDecl(v, t) => {
                vars.insert(v.clone(), t.clone());
            }
            StmtKind::Assign(a, b) => exps.extend([a, b]),
            StmtKind::Call(_, _, args) => exps.extend(args),
            StmtKind::Inhale(e)
            | StmtKind::Exhale(e)
            | StmtKind::Assert(e)
            | StmtKind::Assume(e)
            | StmtKind::Fold(e)
            | StmtKind::Unfold(e) => exps.push(e),
            StmtKind::If(c, t, f) => {
                exps.push(c);
                decls(t, vars, exps);
                decls(f, vars, exps);
            }
            StmtKind::While(c, invs, body) => {
                exps.push(c);
                exps.extend(invs.iter().map(|i| &i.exp));
                decls(body, vars, exps);
            }
            StmtKind::New(..) | StmtKind::Label(_) | StmtKind::Goto(_) | StmtKind::Comment(_) => {}
        }
    }
}

fn stmts(cx: &mut Cx, b: Vec<Stmt>) -> Vec<Stmt> {
    b.into_iter()
        .map(|s| {
            let kind = match s.kind {
                StmtKind::Assign(a, b) => StmtKind::Assign(cx.exp(a), cx.exp(b)),
                StmtKind::Call(t, m, args) => {
                    StmtKind::Call(t, m, args.into_iter().map(|a| cx.exp(a)).collect())
                }
                StmtKind::Inhale(e) => StmtKind::Inhale(cx.exp(e)),
                StmtKind::Exhale(e) => StmtKind::Exhale(cx.exp(e)),
                StmtKind::Assert(e) => StmtKind::Assert(cx.exp(e)),
                StmtKind::Assume(e) => StmtKind::Assume(cx.exp(e)),
                StmtKind::Fold(e) => StmtKind::Fold(cx.exp(e)),
                StmtKind::Unfold(e) => StmtKind::Unfold(cx.exp(e)),
                StmtKind::If(c, t, f) => StmtKind::If(cx.exp(c), stmts(cx, t), stmts(cx, f)),
                StmtKind::While(c, mut invs, body) => {
                    let c = cx.exp(c);
                    contracts(cx, &mut invs);
                    StmtKind::While(c, invs, stmts(cx, body))
                }
                k => k,
            };
            Stmt { kind, origin: s.origin }
        })
        .collect()
}
