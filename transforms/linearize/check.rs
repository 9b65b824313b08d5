//! Applicability of linearization: the plan (every matrix reached through calls, with its
//! layout and extents), and Z3's proofs that the extents agree at every call and match the
//! matrix's length facts.

use super::lin::Lin;
use super::model::*;
use crate::{registry, Ctx, Opt, Params};
use analyze::facts::{facts_at, Point};
use analyze::scope::assigned_vars;
use analyze::sites::{find_method, Site, SiteKind};
use check::{prove, Answer};
use diag::Diagnostic;
use edit::EditSet;
use front::ast::*;
use front::exprtext::{paren, print_simple, subst_names};
use front::span::Span;
use front::visit::walk_expr;
use front::Dialect;
use std::collections::{BTreeMap, BTreeSet};

/// The `layout` value of row-major.
pub(super) const ROW: &str = "row";

/// A pending `matrix_lin` of method `m` for `var`, with its parameters.
pub(super) fn pending_lin<'m>(
    src: &str,
    dialect: Dialect,
    m: &'m Method,
    var: &str,
) -> Option<(&'m Annotation, Params)> {
    m.prefix.annotations.iter().find_map(|a| {
        let params = registry::read(src, dialect, a).ok()?;
        (params.opt == &super::Linearize as Opt && params.name("array") == Some(var))
            .then_some((a, params))
    })
}

pub(super) fn prove_goal(ctx: &Ctx, fx: &mut analyze::facts::Facts, goal: &Expr) -> Answer {
    match fx.tr.bool(goal) {
        Ok(z) => prove(&fx.tr, &fx.facts, &z, ctx.timeout_ms),
        Err(u) => Answer::Unknown(format!("cannot encode: {}", u.0)),
    }
}

pub(super) fn with_answer(mut d: Diagnostic, a: &Answer) -> Diagnostic {
    match a {
        Answer::Refuted(cx) if !cx.values.is_empty() => {
            d = d.with_note(format!("counterexample: {cx}"))
        }
        Answer::Unknown(w) => d = d.with_note(format!("not proven: {w}")),
        _ => {}
    }
    d
}

pub struct Plan<'p> {
    pub(super) program: &'p Program,
    pub(super) src: &'p str,
    pub(super) dialect: Dialect,
    pub(super) targets: Vec<Target>,
    pub(super) edges: Vec<Edge>,
    pub(super) index_fn: bool,
}

impl<'p> Plan<'p> {
    pub(super) fn find(&self, k: &Key) -> Option<usize> {
        self.targets.iter().position(|t| t.key == *k)
    }

    pub(super) fn method(&self, k: &Key) -> Option<(Option<&'p Class>, &'p Method)> {
        find_method(self.program, k.class.as_deref(), &k.method)
    }

    /// Add the matrix `key` reached through `call`; its extents come from its own pending
    /// annotation (which must agree on the layout) or from `derived`.
    pub(super) fn reach(
        &mut self,
        key: Key,
        row: bool,
        derived: Option<(Expr, Expr)>,
        call: Span,
    ) -> Result<(), Diagnostic> {
        if let Some(i) = self.find(&key) {
            if self.targets[i].row != row {
                return Err(Diagnostic::error(
                    "A404",
                    format!(
                        "{} would need both layouts: it is linearized {} and passed here to a matrix linearized {}",
                        key.describe(),
                        layout_name(self.targets[i].row),
                        layout_name(row)
                    ),
                )
                .with_primary(call, "this call")
                .with_help("use one layout for a matrix and every matrix it is passed to"));
            }
            return Ok(());
        }
        let Some((_, m)) = self.method(&key) else {
            return Err(Diagnostic::error("A404", "cannot find the method of this call")
                .with_primary(call, "this call")
                .with_help("call methods of this file directly"));
        };
        let (dims, consumed) = match pending_lin(self.src, self.dialect, m, &key.var) {
            Some((a, params)) => {
                let (Some(d0), Some(d1)) = (params.exprs("dims").first(), params.exprs("dims").get(1))
                else {
                    return Err(Diagnostic::internal("malformed matrix_lin annotation"));
                };
                let dims = (d0.clone(), d1.clone());
                let annotated_row = params.word("layout") == ROW;
                if annotated_row != row {
                    return Err(Diagnostic::error(
                        "A404",
                        format!(
                            "{} is annotated {} but is passed to or from a matrix linearized {}",
                            key.describe(),
                            layout_name(annotated_row),
                            layout_name(row)
                        ),
                    )
                    .with_primary(call, "this call")
                    .with_secondary(a.span, "its own annotation")
                    .with_help("use one layout for a matrix and every matrix it is passed to"));
                }
                (dims, Some(a.span))
            }
            None => match derived {
                Some(d) => (d, None),
                None => {
                    return Err(Diagnostic::error(
                        "A404",
                        format!(
                            "cannot linearize {} consistently: its extents cannot be written in `{}`'s own variables",
                            key.describe(),
                            key.method
                        ),
                    )
                    .with_primary(call, "the matrix is passed here")
                    .with_help(format!(
                        "pass the extents as plain arguments, or add `gpuopt matrix_lin {} … ;` to `{}`",
                        key.var, key.method
                    )))
                }
            },
        };
        self.targets.push(Target { key, row, dims, via: Some(call), consumed, linear: false });
        Ok(())
    }
}

pub(super) fn check<'a>(
    ctx: &mut Ctx<'a>,
    site: &Site,
    params: &Params,
) -> Result<Plan<'a>, Vec<Diagnostic>> {
    let matrix = params.name("array").unwrap_or_default().to_string();
    let row = params.word("layout") == ROW;
    let dims = match params.exprs("dims") {
        [d0, d1] => (d0.clone(), d1.clone()),
        _ => return Err(vec![Diagnostic::internal("linearization without two dimensions")]),
    };
    let index_fn = params.switch("index_fn");
    if site.kind != SiteKind::Method {
        return Err(vec![Diagnostic::error("A0004", "matrix linearization applies to a method")
            .with_primary(site.keyword, "not a method")
            .with_help("place `gpuopt matrix_lin …;` before the method contract")]);
    }
    let parsed: &'a front::Parsed = ctx.parsed;
    let program = &parsed.program;
    let Some((class, method)) = find_method(program, site.class.as_deref(), &site.method) else {
        return Err(vec![Diagnostic::error("A401", "cannot find the annotated method")
            .with_primary(site.keyword, "here")]);
    };
    let src = ctx.src;
    let primary = Key {
        class: class.map(|c| c.name.name.clone()),
        method: method.name.name.clone(),
        var: matrix,
    };
    let mut plan = Plan {
        program,
        src,
        dialect: ctx.dialect(),
        index_fn,
        targets: vec![Target { key: primary, row, dims, via: None, consumed: None, linear: false }],
        edges: Vec::new(),
    };

    // ---- the plan: follow every call edge (worklist) ----
    let mut i = 0;
    while i < plan.targets.len() {
        let t = plan.targets[i].clone();
        let Some((tclass, m)) = plan.method(&t.key) else {
            return Err(vec![via(
                Diagnostic::error("A401", format!("cannot find `{}`", t.key.method))
                    .with_help("name a method of this file"),
                &t,
            )]);
        };
        let g = t.key.var.as_str();
        let decl = decl_of(m, g);
        let ty = match &decl {
            Some(Decl::Param(_, ty)) | Some(Decl::Local(ty, _, _)) => *ty,
            None => {
                let d = Diagnostic::error(
                    if t.via.is_some() { "A404" } else { "A401" },
                    format!("`{g}` is not a parameter or local of `{}`", m.name.name),
                )
                .with_primary(m.name.span, "this method")
                .with_help("name a 2-D array parameter or local of the method");
                return Err(vec![via(d, &t)]);
            }
        };
        if ty.array_dims() != 2 {
            let d = Diagnostic::error(
                if t.via.is_some() { "A404" } else { "A401" },
                format!("`{g}` is not a 2-D array"),
            )
            .with_primary(ty.span, format!("`{g}` has this type"))
            .with_help("matrix linearization applies to `T[][]` arrays");
            return Err(vec![via(d, &t)]);
        }
        // Extents use only variables the method does not assign.
        let assigned = assigned_vars(&method_body_stmt(m));
        for d in [&t.dims.0, &t.dims.1] {
            if let Some(v) = names_of(d).into_iter().find(|v| assigned.contains(v) || v == g) {
                let d = Diagnostic::error(
                    "A402",
                    format!(
                        "the extent `{}` of {} uses `{v}`, which the method assigns",
                        print_simple(d),
                        t.key.describe()
                    ),
                )
                .with_primary(m.name.span, "this method")
                .with_help("give the extents in terms of parameters the method does not assign");
                return Err(vec![via(d, &t)]);
            }
        }

        // Uses of the matrix in its method: calls that pass it, and anything illegal.
        let info = Info {
            row: t.row,
            e1: print_simple(&t.dims.0),
            e2: print_simple(&t.dims.1),
            linear: false,
        };
        let mut scan = Lin::new(src, BTreeMap::from([(g.to_string(), info)]), None);
        let mut sink = EditSet::new();
        scan.method(m, &mut sink);
        let call_args: BTreeSet<(usize, usize)> =
            scan.calls.iter().map(|u| key_span(u.arg)).collect();
        let bad: Vec<Span> =
            scan.bad.iter().copied().filter(|b| !call_args.contains(&key_span(*b))).collect();
        if !bad.is_empty() {
            let mut d = Diagnostic::error(
                "A403",
                format!(
                    "cannot linearize {}: the matrix or one of its rows is used as a value",
                    t.key.describe()
                ),
            )
            .with_primary(m.name.span, "this method");
            for b in bad {
                d = d.with_secondary(b, "used here");
            }
            return Err(vec![via(d, &t).with_help(format!(
                "access `{g}` only as `{g}[r][c]`, `{g}.length`, `{g}[r].length`, in `\\matrix({g}, …)`, or pass it whole to a method of this file"
            ))]);
        }
        let tclass_name = tclass.map(|c| c.name.name.as_str());
        for u in scan.calls.clone() {
            let Some((cc, callee)) = resolve(program, tclass_name, u.recv.as_ref(), &u.name) else {
                let d = Diagnostic::error(
                    "A403",
                    format!("cannot linearize `{g}`: it is passed to `{}`, which is not a method of this file", u.name),
                )
                .with_primary(u.arg, "passed here")
                .with_help("only calls to methods of this file can be rewritten with the matrix");
                return Err(vec![via(d, &t)]);
            };
            let Some(q) = callee.params.get(u.index) else {
                continue;
            };
            let ckey = Key {
                class: cc.map(|c| c.name.name.clone()),
                method: callee.name.name.clone(),
                var: q.name.name.clone(),
            };
            // The callee's extents in its own variables: the caller's extents with every
            // variable passed as a plain argument replaced by the parameter it is passed to.
            let mut back = BTreeMap::new();
            for (a, p) in u.args.iter().zip(&callee.params) {
                if let Some(n) = a.as_name() {
                    back.entry(n.to_string()).or_insert_with(|| Expr::name(&p.name.name));
                }
            }
            let derived = match (
                names_of(&t.dims.0).iter().all(|v| back.contains_key(v)),
                names_of(&t.dims.1).iter().all(|v| back.contains_key(v)),
            ) {
                (true, true) => subst_names(&t.dims.0, &back).zip(subst_names(&t.dims.1, &back)),
                _ => None,
            };
            if let Err(d) = plan.reach(ckey.clone(), t.row, derived, u.call) {
                return Err(vec![via(d, &t)]);
            }
            push_edge(
                &mut plan.edges,
                Edge {
                    caller: t.key.clone(),
                    callee: ckey,
                    call: u.call,
                    arg: u.arg,
                    args: u.args.clone(),
                    callee_params: callee.params.iter().map(|p| p.name.name.clone()).collect(),
                    point: u.point,
                },
            );
        }
        // Callers that pass a matrix for this parameter.
        if let Some(Decl::Param(k, _)) = decl {
            for (cc, caller) in program.methods() {
                let cname = cc.map(|c| c.name.name.as_str());
                let mut found = Vec::new();
                calls_in(caller, &mut |e, point| {
                    if let ExprKind::Call { recv, name, args, .. } = &e.kind {
                        let target = resolve(program, cname, recv.as_deref(), &name.name);
                        if let Some((rc, rm)) = target {
                            if rm.name.name == t.key.method
                                && rc.map(|c| c.name.name.clone()) == t.key.class
                            {
                                found.push((e.span, args.clone(), point));
                            }
                        }
                    }
                });
                for (call, args, point) in found {
                    let Some(arg) = args.get(k) else { continue };
                    let Some(h) = arg.as_name() else {
                        let d = Diagnostic::error(
                            "A404",
                            format!(
                                "cannot linearize {} consistently: this call passes `{}`, which is not a matrix variable of `{}`",
                                t.key.describe(),
                                arg.span.text(src),
                                caller.name.name
                            ),
                        )
                        .with_primary(arg.span, "passed here")
                        .with_help("pass a 2-D array parameter or local, which is then linearized with it");
                        return Err(vec![via(d, &t)]);
                    };
                    let ckey = Key {
                        class: cc.map(|c| c.name.name.clone()),
                        method: caller.name.name.clone(),
                        var: h.to_string(),
                    };
                    let fwd: BTreeMap<String, Expr> = m
                        .params
                        .iter()
                        .zip(&args)
                        .map(|(p, a)| (p.name.name.clone(), a.clone()))
                        .collect();
                    let derived = subst_names(&t.dims.0, &fwd).zip(subst_names(&t.dims.1, &fwd));
                    if let Err(d) = plan.reach(ckey.clone(), t.row, derived, call) {
                        return Err(vec![via(d, &t)]);
                    }
                    push_edge(
                        &mut plan.edges,
                        Edge {
                            caller: ckey,
                            callee: t.key.clone(),
                            call,
                            arg: arg.span,
                            args: args.clone(),
                            callee_params: m.params.iter().map(|p| p.name.name.clone()).collect(),
                            point,
                        },
                    );
                }
            }
        }
        i += 1;
    }

    // ---- extents (A402) and distinct rows (A405), per matrix ----
    for i in 0..plan.targets.len() {
        let t = plan.targets[i].clone();
        let Some((tclass, m)) = plan.method(&t.key) else {
            continue;
        };
        match check_extents(ctx, program, tclass, m, &t) {
            Ok(linear) => plan.targets[i].linear = linear,
            Err(d) => return Err(vec![via(d, &t)]),
        }
    }

    // ---- every call agrees on the extents (A404) ----
    for e in &plan.edges {
        let (Some(ci), Some(ki)) = (plan.find(&e.caller), plan.find(&e.callee)) else {
            continue;
        };
        let (ct, kt) = (&plan.targets[ci], &plan.targets[ki]);
        let Some((cclass, cm)) = plan.method(&e.caller) else {
            continue;
        };
        let fwd: BTreeMap<String, Expr> =
            e.callee_params.iter().cloned().zip(e.args.iter().cloned()).collect();
        let (Some(k1), Some(k2)) = (subst_names(&kt.dims.0, &fwd), subst_names(&kt.dims.1, &fwd))
        else {
            return Err(vec![Diagnostic::error(
                "A404",
                format!(
                    "cannot compare the extents of {} with this call's arguments",
                    kt.key.describe()
                ),
            )
            .with_primary(e.call, "this call")
            .with_help("give the extents as plain expressions over parameters")]);
        };
        let goal = Expr::bin(
            BinOp::And,
            Expr::bin(BinOp::Eq, ct.dims.0.clone(), k1.clone()),
            Expr::bin(BinOp::Eq, ct.dims.1.clone(), k2.clone()),
        );
        let point = e.point.unwrap_or_else(|| entry_point(cm));
        let mut fx = facts_at(program, cclass, cm, Point::Before(point));
        let a = prove_goal(ctx, &mut fx, &goal);
        if !a.is_proved() {
            let d = Diagnostic::error(
                "A404",
                format!(
                    "cannot linearize {} and {} consistently: the extents {} x {} and {} x {} may differ at this call",
                    ct.key.describe(),
                    kt.key.describe(),
                    print_simple(&ct.dims.0),
                    print_simple(&ct.dims.1),
                    print_simple(&k1),
                    print_simple(&k2)
                ),
            )
            .with_primary(e.call, "this call")
            .with_secondary(e.arg, "the matrix passed");
            return Err(vec![with_answer(d, &a).with_help(
                "pass a matrix with the same extents, or give both matrices matching `matrix_lin` annotations",
            )]);
        }
    }

    Ok(plan)
}

pub(super) fn push_edge(edges: &mut Vec<Edge>, e: Edge) {
    if !edges.iter().any(|x| x.call == e.call && x.arg == e.arg) {
        edges.push(e);
    }
}

/// A402: the extents agree with the facts at the method's entry (or the local's allocation);
/// A405: the rows are distinct. Returns whether the linear length convention applies.
pub(super) fn check_extents(
    ctx: &Ctx,
    program: &Program,
    class: Option<&Class>,
    m: &Method,
    t: &Target,
) -> Result<bool, Diagnostic> {
    let g = t.key.var.as_str();
    let (e1t, e2t) = (print_simple(&t.dims.0), print_simple(&t.dims.1));
    let decl = decl_of(m, g);
    let point = match &decl {
        Some(Decl::Local(_, _, start)) => *start,
        _ => entry_point(m),
    };
    let mut fx = facts_at(program, class, m, Point::Before(point));
    let len = Expr::synth(ExprKind::Field(Box::new(Expr::name(g)), Ident::synth("length")));
    let mut first = None;
    let mut linear = false;
    let proven = if let Some(Decl::Local(_, Some(init), _)) = &decl {
        match &init.kind {
            ExprKind::NewArray(_, args) if args.len() == 2 => {
                let goal = Expr::bin(
                    BinOp::And,
                    Expr::bin(BinOp::Eq, args[0].clone(), t.dims.0.clone()),
                    Expr::bin(BinOp::Eq, args[1].clone(), t.dims.1.clone()),
                );
                let a = prove_goal(ctx, &mut fx, &goal);
                let ok = a.is_proved();
                first = Some(a);
                ok
            }
            _ => false,
        }
    } else {
        let lin_goal = Expr::bin(
            BinOp::Eq,
            len.clone(),
            Expr::bin(BinOp::Mul, t.dims.0.clone(), t.dims.1.clone()),
        );
        let a = prove_goal(ctx, &mut fx, &lin_goal);
        if a.is_proved() {
            linear = true;
            true
        } else {
            first = Some(a);
            let goal = Expr::bin(
                BinOp::And,
                Expr::bin(BinOp::Eq, len.clone(), t.dims.0.clone()),
                rows_quant(&t.dims.0, |r| {
                    Expr::bin(
                        BinOp::Eq,
                        Expr::synth(ExprKind::Field(
                            Box::new(Expr::index(Expr::name(g), Expr::name(r))),
                            Ident::synth("length"),
                        )),
                        t.dims.1.clone(),
                    )
                }),
            );
            prove_goal(ctx, &mut fx, &goal).is_proved()
        }
    };
    if !proven {
        let mut d = Diagnostic::error(
            "A402",
            format!(
                "the dimensions {e1t} x {e2t} given for {} do not match the program's facts: neither `{g}.length == {} * {}` nor `{g}.length == {e1t}` with rows of length {e2t} is provable",
                t.key.describe(),
                paren(&e1t),
                paren(&e2t)
            ),
        )
        .with_primary(m.name.span, "this method");
        for c in &m.prefix.clauses {
            if let Some(e) = c.expr() {
                for cj in e.conjuncts() {
                    let mut hit = false;
                    walk_expr(cj, &mut |x| match &x.kind {
                        ExprKind::Field(y, f) if f.name == "length" && y.as_name() == Some(g) => {
                            hit = true
                        }
                        ExprKind::Builtin(Builtin::Matrix | Builtin::Array, a)
                            if a.first().and_then(|a| a.as_name()) == Some(g) =>
                        {
                            hit = true
                        }
                        _ => {}
                    });
                    if hit {
                        d = d.with_secondary(cj.span, "the program's extent fact");
                    }
                }
            }
        }
        if let Some(a) = &first {
            d = with_answer(d, a);
        }
        return Err(d.with_help(format!(
            "give the extents the program uses, or add `context_everywhere {g}.length == {} * {};` (or `\\matrix({g}, {e1t}, {e2t})`)",
            paren(&e1t),
            paren(&e2t)
        )));
    }
    // A405: two rows that are the same array would become two separate ranges of cells.
    if !linear
        && matches!(decl, Some(Decl::Param(..)))
        && !rows_distinct(ctx, &mut fx, m, g, &t.dims.0)
    {
        return Err(Diagnostic::error("A405", format!("the rows of {} may alias", t.key.describe()))
            .with_primary(m.name.span, "this method")
            .with_help(format!(
                "add `context_everywhere \\matrix({g}, {e1t}, {e2t});`, a fact that the rows are distinct, or write permission to every cell"
            )));
    }
    Ok(linear)
}

/// `(\forall int vct_ml_r; 0 <= vct_ml_r && vct_ml_r < rows; body(vct_ml_r))`.
pub(super) fn rows_quant(rows: &Expr, body: impl Fn(&str) -> Expr) -> Expr {
    let r = "vct_ml_r";
    let range = Expr::bin(
        BinOp::And,
        Expr::bin(BinOp::Le, Expr::int(0), Expr::name(r)),
        Expr::bin(BinOp::Lt, Expr::name(r), rows.clone()),
    );
    Expr::synth(ExprKind::Quant {
        kind: QuantKind::Forall,
        bindings: vec![Binding {
            ty: Type::int(),
            name: Ident::synth(r),
            range: None,
            span: Span::DUMMY,
        }],
        cond: Some(Box::new(range)),
        body: Box::new(body(r)),
    })
}

/// Rows are distinct: a `\matrix` fact, a provable distinctness fact, or write permission to
/// every cell in the precondition (two equal rows would need two write permissions per cell).
pub(super) fn rows_distinct(
    ctx: &Ctx,
    fx: &mut analyze::facts::Facts,
    m: &Method,
    g: &str,
    rows: &Expr,
) -> bool {
    let mut found = false;
    for c in &m.prefix.clauses {
        let Some(e) = c.expr() else { continue };
        walk_expr(e, &mut |x| {
            if let ExprKind::Builtin(Builtin::Matrix, a) = &x.kind {
                if a.first().and_then(|a| a.as_name()) == Some(g) {
                    found = true;
                }
            }
        });
        if c.kind.is_pre() {
            for cj in e.conjuncts() {
                if writes_every_cell(cj, g) {
                    found = true;
                }
            }
        }
    }
    if found {
        return true;
    }
    let (r1, r2) = ("vct_ml_r1", "vct_ml_r2");
    let in_range = |r: &str| {
        Expr::bin(
            BinOp::And,
            Expr::bin(BinOp::Le, Expr::int(0), Expr::name(r)),
            Expr::bin(BinOp::Lt, Expr::name(r), rows.clone()),
        )
    };
    let goal = Expr::synth(ExprKind::Quant {
        kind: QuantKind::Forall,
        bindings: [r1, r2]
            .iter()
            .map(|n| Binding {
                ty: Type::int(),
                name: Ident::synth(*n),
                range: None,
                span: Span::DUMMY,
            })
            .collect(),
        cond: Some(Box::new(Expr::bin(
            BinOp::And,
            Expr::bin(BinOp::And, in_range(r1), in_range(r2)),
            Expr::bin(BinOp::Ne, Expr::name(r1), Expr::name(r2)),
        ))),
        body: Box::new(Expr::bin(
            BinOp::Ne,
            Expr::index(Expr::name(g), Expr::name(r1)),
            Expr::index(Expr::name(g), Expr::name(r2)),
        )),
    });
    prove_goal(ctx, fx, &goal).is_proved()
}

/// `(\forall* r …; (\forall* c …; Perm(g[r][c], write)))` (the quantifiers possibly merged).
pub(super) fn writes_every_cell(e: &Expr, g: &str) -> bool {
    match &e.kind {
        ExprKind::Quant { body, .. } => writes_every_cell(body, g),
        ExprKind::Builtin(Builtin::Perm, args) if args.len() == 2 => {
            matches!(&args[0].kind, ExprKind::Index(inner, _)
                if matches!(&inner.kind, ExprKind::Index(a, _) if a.as_name() == Some(g)))
                && matches!(args[1].kind, ExprKind::Write)
        }
        _ => false,
    }
}
