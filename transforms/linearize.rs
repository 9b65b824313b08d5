//! Matrix linearization (optimizations.md §5; paper §5, "matrix linearization"): a 2-D array
//! `g` with `E1` rows and `E2` columns becomes a 1-D array; `g[r][c]` becomes `g[E2 * r + c]`
//! (row-major) or `g[E1 * c + r]` (column-major) in the code and in every annotation of the
//! method.
//!
//! Two length conventions are accepted, decided by Z3 from the program's own facts:
//! * the *linear* one used by Alpinist's examples and the corpus: `g.length == E1 * E2` is already
//!   a fact of the 2-D program (VerCors 1.4 encodes `int[][]` with value rows); `g.length` then
//!   keeps its text, because after the rewrite it describes the 1-D array;
//! * the *2-D* one of the design: `g.length == E1` and every row has length `E2` (usually a
//!   `\matrix(g, E1, E2)` fact); `g.length` becomes `E1`, `g[r].length` becomes `E2`.

use super::{Applied, Ctx, Outcome, Params};
use crate::analyze::exprtext::{children, is_atomic, paren, print_simple, splice};
use crate::analyze::facts::{facts_at, Point};
use crate::analyze::scope::assigned_vars;
use crate::analyze::sites::{Site, SiteKind};
use crate::check::{prove, Answer};
use crate::diag::Diagnostic;
use crate::edit::{indent_at, line_start, removal_span, EditSet};
use crate::front::ast::*;
use crate::front::span::Span;
use crate::front::visit::{stmt_exprs, walk_expr, walk_stmts};

struct Lin<'a> {
    src: &'a str,
    g: &'a str,
    row: bool,
    e1: String,
    e2: String,
    linear: bool,
    index_fn: Option<String>,
    /// Span of the `new T[x][y]` initialiser of a local matrix.
    new_init: Option<Span>,
    bad: Vec<Span>,
    matrix_converted: bool,
}

impl Lin<'_> {
    /// Text of `e` with every matrix access rewritten.
    fn text(&mut self, e: &Expr) -> String {
        let mut reps = Vec::new();
        self.collect(e, &mut reps);
        splice(self.src, e.span, reps)
    }

    fn is_g(&self, e: &Expr) -> bool {
        e.as_name() == Some(self.g)
    }

    fn collect(&mut self, e: &Expr, out: &mut Vec<(Span, String)>) {
        use ExprKind as K;
        let src = self.src;
        let keep = |e: &Expr| (e.span, e.span.text(src).to_string());
        match &e.kind {
            K::Index(inner, c) => {
                if let K::Index(a, r) = &inner.kind {
                    if self.is_g(a) {
                        let rt = self.text(r);
                        let ct = self.text(c);
                        let (major, minor, stride) = if self.row {
                            (rt, ct, self.e2.clone())
                        } else {
                            (ct, rt, self.e1.clone())
                        };
                        let (maj_e, min_e) = if self.row { (&**r, &**c) } else { (&**c, &**r) };
                        let idx = match &self.index_fn {
                            Some(f) => format!("{f}({stride}, {major}, {minor})"),
                            None => {
                                let maj = if is_atomic(src, maj_e)
                                    || matches!(maj_e.kind, K::Binary(BinOp::Mul, ..))
                                {
                                    major
                                } else {
                                    paren(&major)
                                };
                                let min = if is_atomic(src, min_e)
                                    || matches!(
                                        min_e.kind,
                                        K::Binary(
                                            BinOp::Add
                                                | BinOp::Sub
                                                | BinOp::Mul
                                                | BinOp::Div
                                                | BinOp::Mod,
                                            ..
                                        )
                                    ) {
                                    minor
                                } else {
                                    paren(&minor)
                                };
                                format!("{} * {maj} + {min}", paren(&stride))
                            }
                        };
                        out.push((e.span, format!("{}[{idx}]", self.g)));
                        return;
                    }
                }
            }
            K::Field(x, f) if f.name == "length" => {
                if self.is_g(x) {
                    out.push(if self.linear {
                        keep(e)
                    } else {
                        (e.span, self.e1.clone())
                    });
                    return;
                }
                if let K::Index(a, _) = &x.kind {
                    if self.is_g(a) {
                        out.push((e.span, self.e2.clone()));
                        return;
                    }
                }
            }
            K::Builtin(Builtin::Matrix, args) if args.len() == 3 && self.is_g(&args[0]) => {
                let x = self.text(&args[1]);
                let y = self.text(&args[2]);
                self.matrix_converted = true;
                out.push((
                    e.span,
                    format!("\\array({}, {} * {})", self.g, paren(&x), paren(&y)),
                ));
                return;
            }
            K::Binary(BinOp::Eq | BinOp::Ne, l, r)
                if (self.is_g(l) && matches!(r.kind, K::Null))
                    || (self.is_g(r) && matches!(l.kind, K::Null)) =>
            {
                out.push(keep(e));
                return;
            }
            K::NewArray(_, args) if Some(e.span) == self.new_init && args.len() == 2 => {
                let text = e.span.text(src);
                let base = text.split('[').next().unwrap_or("new int").trim_end();
                let x = self.text(&args[0]);
                let y = self.text(&args[1]);
                out.push((e.span, format!("{base}[{} * {}]", paren(&x), paren(&y))));
                return;
            }
            K::Name(id) if id.name == self.g => {
                self.bad.push(e.span);
                return;
            }
            K::Quant { bindings, .. } if bindings.iter().any(|b| b.name.name == self.g) => {
                out.push(keep(e));
                return;
            }
            _ => {}
        }
        for (c, _) in children(e) {
            self.collect(c, out);
        }
    }

    /// Row-level facts (row permissions, row null checks, row lengths, quantified forms).
    fn is_row_level(&self, e: &Expr) -> bool {
        use ExprKind as K;
        let row = |x: &Expr| matches!(&x.kind, K::Index(a, _) if self.is_g(a));
        match &e.kind {
            K::Quant { body, .. } => self.is_row_level(body),
            K::Binary(BinOp::And | BinOp::Star, l, r) => {
                self.is_row_level(l) && self.is_row_level(r)
            }
            K::Binary(BinOp::Implies, _, r) => self.is_row_level(r),
            K::Builtin(Builtin::Perm, args) => args.first().is_some_and(row),
            K::Binary(BinOp::Ne | BinOp::Eq, l, r) => {
                let rl =
                    |x: &Expr| matches!(&x.kind, K::Field(y, f) if f.name == "length" && row(y));
                (row(l) && matches!(r.kind, K::Null)) || rl(l) || rl(r)
            }
            _ => false,
        }
    }
}

pub fn apply(ctx: &mut Ctx, site: &Site, params: &Params) -> Outcome {
    let Params::Linearize {
        matrix,
        layout,
        dims,
        index_fn,
    } = params
    else {
        return super::not_available(params);
    };
    if site.kind != SiteKind::Method {
        return Err(vec![Diagnostic::error(
            "A0004",
            "matrix linearization applies to a method",
        )
        .with_primary(site.keyword, "not a method")
        .with_help("place `gpuopt matrix_lin …;` before the method contract")]);
    }
    let parsed = ctx.parsed;
    let Some((class, method)) =
        crate::analyze::sites::find_method(&parsed.program, site.class.as_deref(), &site.method)
    else {
        return Err(vec![Diagnostic::error(
            "A401",
            "cannot find the annotated method",
        )
        .with_primary(site.keyword, "here")]);
    };
    let src = ctx.src;
    let g = matrix.as_str();
    let body_stmt = Stmt {
        kind: StmtKind::Block(match &method.body {
            MethodBody::Block(b) => b.clone(),
            _ => Block {
                stmts: vec![],
                span: Span::DUMMY,
            },
        }),
        span: Span::DUMMY,
    };

    // ---- A401: a 2-D array parameter or local ----
    let param = method.params.iter().find(|p| p.name.name == g);
    let mut local: Option<(&Stmt, &Type, Option<&Expr>)> = None;
    if let MethodBody::Block(b) = &method.body {
        for s in &b.stmts {
            walk_stmts(s, &mut |st| {
                if let StmtKind::Decl { ty, vars } = &st.kind {
                    if let Some(d) = vars.iter().find(|d| d.name.name == g) {
                        if local.is_none() {
                            local = Some((st, ty, d.init.as_ref()));
                        }
                    }
                }
            });
        }
    }
    let ty = match (param, &local) {
        (Some(p), _) => &p.ty,
        (None, Some((_, t, _))) => *t,
        (None, None) => {
            return Err(vec![Diagnostic::error(
                "A401",
                format!(
                    "`{g}` is not a parameter or local of `{}`",
                    method.name.name
                ),
            )
            .with_primary(method.name.span, "this method")
            .with_help("name a 2-D array parameter or local of the method")])
        }
    };
    if ty.array_dims() != 2 {
        return Err(vec![Diagnostic::error(
            "A401",
            format!("`{g}` is not a 2-D array"),
        )
        .with_primary(ty.span, format!("`{g}` has this type"))
        .with_help("matrix linearization applies to `T[][]` arrays")]);
    }

    // ---- extents may only use variables the method does not assign ----
    let assigned = assigned_vars(&body_stmt);
    let e1t = print_simple(&dims.0);
    let e2t = print_simple(&dims.1);
    for d in [&dims.0, &dims.1] {
        let mut bad = None;
        walk_expr(d, &mut |e| {
            if let ExprKind::Name(id) = &e.kind {
                if assigned.contains(&id.name) || id.name == g {
                    bad = Some(id.name.clone());
                }
            }
        });
        if let Some(v) = bad {
            return Err(vec![Diagnostic::error(
                "A402",
                format!(
                    "the extent `{}` uses `{v}`, which the method assigns",
                    print_simple(d)
                ),
            )
            .with_primary(method.name.span, "this method")
            .with_help(
                "give the extents in terms of parameters the method does not assign",
            )]);
        }
    }

    // ---- A404: callers ----
    if param.is_some() {
        let calls = crate::analyze::scope::calls_of(&parsed.program, &method.name.name);
        if !calls.is_empty() {
            let mut d = Diagnostic::error(
                "A404",
                format!(
                    "cannot linearize parameter `{g}`: `{}` has callers in the file",
                    method.name.name
                ),
            )
            .with_primary(method.name.span, "this method");
            for c in calls {
                d = d.with_secondary(c, "passes a 2-D array here");
            }
            return Err(vec![d.with_help(
                "linearize the matrix in the callers too, or inline the call",
            )]);
        }
    }

    // ---- extents (A402): linear convention, then 2-D convention ----
    let point = match (&local, &method.body) {
        (Some((st, _, _)), _) if param.is_none() => st.span.start(),
        (_, MethodBody::Block(b)) => b.stmts.first().map_or(usize::MAX, |s| s.span.start()),
        _ => usize::MAX,
    };
    let mut fx = facts_at(&parsed.program, class, method, Point::Before(point));
    let len = Expr::synth(ExprKind::Field(
        Box::new(Expr::name(g)),
        Ident::synth("length"),
    ));
    let mut linear = false;
    let mut last_answer = None;
    let mut try_goal = |goal: Expr, fx: &mut crate::analyze::facts::Facts| -> bool {
        let a = match fx.tr.bool(&goal) {
            Ok(z) => prove(&fx.tr, &fx.facts, &z, ctx.timeout_ms),
            Err(u) => Answer::Unknown(format!("cannot encode: {}", u.0)),
        };
        let ok = a.is_proved();
        if last_answer.is_none() {
            last_answer = Some(a);
        }
        ok
    };
    let proven = if let (None, Some((_, _, Some(init)))) = (param, &local) {
        // A local `g = new T[x][y]`.
        match &init.kind {
            ExprKind::NewArray(_, args) if args.len() == 2 => try_goal(
                Expr::bin(
                    BinOp::And,
                    Expr::bin(BinOp::Eq, args[0].clone(), dims.0.clone()),
                    Expr::bin(BinOp::Eq, args[1].clone(), dims.1.clone()),
                ),
                &mut fx,
            ),
            _ => false,
        }
    } else {
        let lin_goal = Expr::bin(
            BinOp::Eq,
            len.clone(),
            Expr::bin(BinOp::Mul, dims.0.clone(), dims.1.clone()),
        );
        if try_goal(lin_goal, &mut fx) {
            linear = true;
            true
        } else {
            let r = "vct_ml_r";
            let row_len = Expr::synth(ExprKind::Field(
                Box::new(Expr::index(Expr::name(g), Expr::name(r))),
                Ident::synth("length"),
            ));
            let range = Expr::bin(
                BinOp::And,
                Expr::bin(BinOp::Le, Expr::int(0), Expr::name(r)),
                Expr::bin(BinOp::Lt, Expr::name(r), dims.0.clone()),
            );
            let rows = Expr::synth(ExprKind::Quant {
                kind: QuantKind::Forall,
                bindings: vec![Binding {
                    ty: Type::int(),
                    name: Ident::synth(r),
                    range: None,
                    span: Span::DUMMY,
                }],
                cond: Some(Box::new(range)),
                body: Box::new(Expr::bin(BinOp::Eq, row_len, dims.1.clone())),
            });
            try_goal(
                Expr::bin(
                    BinOp::And,
                    Expr::bin(BinOp::Eq, len.clone(), dims.0.clone()),
                    rows,
                ),
                &mut fx,
            )
        }
    };
    if !proven {
        let mut d = Diagnostic::error(
            "A402",
            format!(
                "the dimensions {e1t} x {e2t} given for `{g}` do not match the program's facts: neither `{g}.length == {} * {}` nor `\\matrix({g}, {e1t}, {e2t})` is provable",
                paren(&e1t),
                paren(&e2t)
            ),
        )
        .with_primary(method.name.span, "this method");
        // Label the facts that talk about g's length.
        for c in &method.prefix.clauses {
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
        match last_answer {
            Some(Answer::Refuted(cx)) if !cx.values.is_empty() => {
                d = d.with_note(format!("counterexample: {cx}"))
            }
            Some(Answer::Unknown(w)) => d = d.with_note(format!("not proven: {w}")),
            _ => {}
        }
        return Err(vec![d.with_help(format!(
            "give the extents the program uses, or add `context_everywhere {g}.length == {} * {};` (or `\\matrix({g}, {e1t}, {e2t})`)",
            paren(&e1t),
            paren(&e2t)
        ))]);
    }

    // ---- A405: rows distinct (2-D convention only) ----
    if !linear && param.is_some() {
        let mut has_matrix = false;
        for c in &method.prefix.clauses {
            if let Some(e) = c.expr() {
                walk_expr(e, &mut |x| {
                    if let ExprKind::Builtin(Builtin::Matrix, a) = &x.kind {
                        if a.first().and_then(|a| a.as_name()) == Some(g) {
                            has_matrix = true;
                        }
                    }
                });
            }
        }
        if !has_matrix {
            return Err(vec![Diagnostic::error(
                "A405",
                format!("the rows of `{g}` may alias"),
            )
            .with_primary(method.name.span, "this method")
            .with_help(format!(
                "add `context_everywhere \\matrix({g}, {e1t}, {e2t});`"
            ))]);
        }
    }

    // ---- rewrite ----
    let mut edits = EditSet::new();
    let mut diagnostics = Vec::new();
    let helper = if *index_fn {
        Some(ctx.names.name("vct_ml_Idx"))
    } else {
        None
    };
    let mut lin = Lin {
        src,
        g,
        row: *layout == Layout::Row,
        e1: e1t.clone(),
        e2: e2t.clone(),
        linear,
        index_fn: helper.clone(),
        new_init: local.and_then(|(_, _, i)| i.map(|i| i.span)),
        bad: Vec::new(),
        matrix_converted: false,
    };
    // Declared type.
    let base = ty.base().span.text(src).to_string();
    let new_ty = match &ty.kind {
        TypeKind::Array(inner, Some(y)) => match &inner.kind {
            TypeKind::Array(_, Some(x)) => format!(
                "{base}[{} * {}]",
                paren(x.span.text(src)),
                paren(y.span.text(src))
            ),
            _ => format!("{base}[]"),
        },
        _ => format!("{base}[]"),
    };
    edits.replace(ty.span, new_ty);

    // Method clauses, with row-level conjuncts removed.
    let mut removed = Vec::new();
    for clause in &method.prefix.clauses {
        let Some(e) = clause.expr() else { continue };
        let cjs = e.conjuncts();
        let drop: Vec<bool> = cjs.iter().map(|c| lin.is_row_level(c)).collect();
        if drop.iter().all(|d| *d) {
            edits.replace(removal_span(src, clause.span), "");
            removed.push(clause.span);
            continue;
        }
        let last_kept = drop.iter().rposition(|d| !*d).unwrap_or(0);
        let mut trailing_done = false;
        for (i, c) in cjs.iter().enumerate() {
            if !drop[i] {
                let mut reps = Vec::new();
                lin.collect(c, &mut reps);
                for (s, t) in reps {
                    edits.replace(s, t);
                }
            } else if i < last_kept {
                edits.replace(Span::new(c.span.start(), cjs[i + 1].span.start()), "");
                removed.push(c.span);
            } else if !trailing_done {
                edits.replace(
                    Span::new(cjs[last_kept].span.end(), cjs[cjs.len() - 1].span.end()),
                    "",
                );
                trailing_done = true;
                removed.push(c.span);
            } else {
                removed.push(c.span);
            }
        }
    }
    // Body: statements, loop/par contracts.
    let mut reps = Vec::new();
    if let MethodBody::Block(b) = &method.body {
        for s in &b.stmts {
            walk_stmts(s, &mut |st| {
                stmt_exprs(st, &mut |e| lin.collect(e, &mut reps))
            });
        }
    }
    if let Some((st, _, _)) = &local {
        if let StmtKind::Decl { ty, .. } = &st.kind {
            // The local's declared type was rewritten above (ty is the same node).
            let _ = ty;
        }
    }
    for (s, t) in reps {
        edits.replace(s, t);
    }
    if !lin.bad.is_empty() {
        let mut d = Diagnostic::error(
            "A403",
            format!("cannot linearize `{g}`: the matrix or one of its rows is used as a value"),
        )
        .with_primary(method.name.span, "this method");
        for b in &lin.bad {
            d = d.with_secondary(*b, "used here");
        }
        return Err(vec![d.with_help(format!(
            "access `{g}` only as `{g}[r][c]`, `{g}.length`, `{g}[r].length` or in `\\matrix({g}, …)`"
        ))]);
    }
    if !removed.is_empty() {
        let mut d = Diagnostic::note("A406", format!("row-level facts about `{g}` removed"))
            .with_primary(method.name.span, "this method");
        for r in removed {
            d = d.with_secondary(r, "removed");
        }
        diagnostics.push(d);
    }
    let nl = ctx.layout.newline;
    let anchor = method
        .prefix
        .clauses
        .first()
        .map_or(method.span.start(), |c| c.span.start());
    let ind = indent_at(src, anchor).to_string();
    if param.is_some() && !linear && !lin.matrix_converted {
        edits.insert(
            line_start(src, anchor),
            format!(
                "{ind}context_everywhere \\array({g}, {} * {});{nl}",
                paren(&e1t),
                paren(&e2t)
            ),
        );
    }
    if let Some(h) = helper {
        let kw = if class.is_some() { "static " } else { "" };
        let start = method.span.start().min(anchor);
        edits.insert(
            line_start(src, start),
            format!("{ind}{kw}pure int {h}(int stride, int major, int minor) = major * stride + minor;{nl}{nl}"),
        );
    }
    Ok(Applied { edits, diagnostics })
}
