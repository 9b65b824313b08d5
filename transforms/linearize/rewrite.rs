//! The linearized program: in every method of the plan, `g[r][c]` becomes the cell of the 1-D
//! array in code and annotations, lengths and `\\matrix` facts are restated, parameter and
//! local types lose a dimension, and pending annotations follow.

use super::check::Plan;
use super::lin::Lin;
use super::model::*;
use crate::params::Kind;
use crate::{registry, Applied, Ctx, Outcome};
use analyze::sites::find_method;
use diag::Diagnostic;
use edit::{indent_at, line_start, removal_span, EditSet};
use front::ast::*;
use front::exprtext::{paren, print_simple};
use front::span::Span;
use front::visit::walk_stmts;
use front::Dialect;
use std::collections::{BTreeMap, BTreeSet};

/// Build the edits for every method of the plan.
pub(super) fn rewrite(ctx: &mut Ctx, plan: Plan) -> Outcome {
    let plan = &plan;
    let index_fn = plan.index_fn;
    let src = ctx.src;
    let program = plan.program;
    let helper = if index_fn { Some(ctx.names.name("vct_ml_Idx")) } else { None };
    // Methods in source order, each with its matrices.
    let mut methods: Vec<(Key, Vec<&Target>)> = Vec::new();
    for t in &plan.targets {
        let mk = Key { var: String::new(), ..t.key.clone() };
        match methods.iter_mut().find(|(k, _)| *k == mk) {
            Some((_, v)) => v.push(t),
            None => methods.push((mk, vec![t])),
        }
    }
    methods.sort_by_key(|(k, _)| {
        find_method(program, k.class.as_deref(), &k.method).map_or(0, |(_, m)| m.span.start())
    });
    let consumed: BTreeSet<(usize, usize)> =
        plan.targets.iter().filter_map(|t| t.consumed.map(key_span)).collect();
    let mut edits = EditSet::new();
    let mut diagnostics = Vec::new();
    let mut helper_classes: BTreeSet<Option<String>> = BTreeSet::new();
    let nl = ctx.layout.newline;
    for (mk, ts) in &methods {
        let Some((class, m)) = find_method(program, mk.class.as_deref(), &mk.method) else {
            continue;
        };
        let mats: BTreeMap<String, Info> = ts
            .iter()
            .map(|t| {
                (
                    t.key.var.clone(),
                    Info {
                        row: t.row,
                        e1: print_simple(&t.dims.0),
                        e2: print_simple(&t.dims.1),
                        linear: t.linear,
                    },
                )
            })
            .collect();
        let mut lin = Lin::new(src, mats, helper.clone());
        for e in &plan.edges {
            if e.caller.class == mk.class && e.caller.method == mk.method {
                lin.allowed_args.insert(key_span(e.arg));
            }
        }
        for t in ts {
            match decl_of(m, &t.key.var) {
                Some(Decl::Param(_, ty)) | Some(Decl::Local(ty, None, _)) => {
                    edits.replace(ty.span, new_type(src, ty))
                }
                Some(Decl::Local(ty, Some(init), _)) => {
                    edits.replace(ty.span, new_type(src, ty));
                    lin.new_inits.insert(key_span(init.span));
                }
                None => {}
            }
        }
        lin.method(m, &mut edits);
        if !lin.bad.is_empty() {
            let mut d = Diagnostic::error(
                "A403",
                format!(
                    "cannot linearize in `{}`: a matrix or one of its rows is used as a value",
                    m.name.name
                ),
            )
            .with_primary(m.name.span, "this method");
            for b in &lin.bad {
                d = d.with_secondary(*b, "used here");
            }
            return Err(vec![d.with_help(
                "access a matrix only as `g[r][c]`, `g.length`, `g[r].length`, in `\\matrix(g, …)`, or pass it whole to a method of this file",
            )]);
        }
        // Pending annotations of the method and of its loops and par blocks.
        pending_annotations(&mut lin, plan.dialect, m, &consumed, &mut edits);
        for t in ts {
            if let Some(c) = t.consumed {
                edits.replace(removal_span(src, c), "");
            }
        }
        if !lin.removed.is_empty() {
            let mut d =
                Diagnostic::note("A406", format!("row-level facts removed in `{}`", m.name.name))
                    .with_primary(m.name.span, "this method");
            for r in &lin.removed {
                d = d.with_secondary(*r, "removed");
            }
            diagnostics.push(d);
        }
        // New method clauses go before the first clause (or the method itself).
        let clause_anchor = m.prefix.clauses.first().map_or(m.span.start(), |c| c.span.start());
        let ind = indent_at(src, clause_anchor).to_string();
        if let Some(h) = &helper {
            let ck = class.map(|c| c.name.name.clone());
            if helper_classes.insert(ck) {
                let kw = if class.is_some() { "static " } else { "" };
                // Before the method's annotations and contract.
                let start = m.prefix.span.start().min(m.span.start());
                edits.insert(
                    line_start(src, start),
                    format!("{ind}{kw}pure int {h}(int stride, int major, int minor) = major * stride + minor;{nl}{nl}"),
                );
            }
        }
        for t in ts {
            let g = &t.key.var;
            if matches!(decl_of(m, g), Some(Decl::Param(..)))
                && !t.linear
                && !lin.matrix_converted.contains(g)
                && !lin.length_everywhere.contains(g)
            {
                edits.insert(
                    line_start(src, clause_anchor),
                    format!(
                        "{ind}context_everywhere \\array({g}, {} * {});{nl}",
                        paren(&print_simple(&t.dims.0)),
                        paren(&print_simple(&t.dims.1))
                    ),
                );
            }
        }
        if ts.iter().any(|t| t.via.is_some()) {
            let names: Vec<String> = ts.iter().map(|t| format!("`{}`", t.key.var)).collect();
            let mut d = Diagnostic::note(
                "A407",
                format!(
                    "`{}` is rewritten too: {} passed along with the requested matrix",
                    m.name.name,
                    names.join(", ")
                ),
            )
            .with_primary(m.name.span, "rewritten");
            for t in ts {
                if let Some(c) = t.via {
                    d = d.with_secondary(c, "through this call");
                }
            }
            diagnostics.push(d);
        }
    }
    Ok(Applied { edits, diagnostics })
}

/// `T[][]` → `T[]`, `T[X][Y]` → `T[X * Y]`.
pub(super) fn new_type(src: &str, ty: &Type) -> String {
    let base = ty.base().span.text(src).to_string();
    match &ty.kind {
        TypeKind::Array(inner, Some(y)) => match &inner.kind {
            TypeKind::Array(_, Some(x)) => {
                format!("{base}[{} * {}]", paren(x.span.text(src)), paren(y.span.text(src)))
            }
            _ => format!("{base}[]"),
        },
        _ => format!("{base}[]"),
    }
}

/// Linearization's substitution applied to the pending annotations of `m` (optimizations.md
/// §5(h)): `gpuopt glob_to_reg g[r] c;` becomes `gpuopt glob_to_reg g (E2 * r + c);`, and matrix
/// accesses or lengths in any other annotation argument are rewritten. A prefetch of the whole
/// matrix (`glob_to_reg g e`) already names cells of the 1-D array (Alpinist applies
/// linearization first) and is left as it is.
pub(super) fn pending_annotations(
    lin: &mut Lin,
    dialect: Dialect,
    m: &Method,
    consumed: &BTreeSet<(usize, usize)>,
    edits: &mut EditSet,
) {
    let mut anns: Vec<&Annotation> = m.prefix.annotations.iter().collect();
    if let MethodBody::Block(b) = &m.body {
        for s in &b.stmts {
            walk_stmts(s, &mut |st| match &st.kind {
                StmtKind::While(l) | StmtKind::For(l) => anns.extend(&l.prefix.annotations),
                StmtKind::RangedFor { prefix, .. } => anns.extend(&prefix.annotations),
                StmtKind::Par(p) => anns.extend(&p.prefix.annotations),
                _ => {}
            });
        }
    }
    for a in anns {
        if consumed.contains(&key_span(a.span)) {
            continue;
        }
        let Ok(params) = registry::read(lin.src, dialect, a) else {
            continue;
        };
        // An array path followed by its locations (prefetching) on a row of a linearized
        // matrix: `g[r] c…` names the cells `g (index(r, c))…` of the 1-D array.
        let kinds = params.opt.meta().params;
        let path = kinds.iter().find(|p| matches!(p.kind, Kind::Path));
        let list = kinds.iter().find(|p| matches!(p.kind, Kind::List { .. }));
        if let (Some(pp), Some(lp)) = (path, list) {
            if let Some(array) = params.expr(pp.key) {
                let locations = params.exprs(lp.key);
                if let ExprKind::Index(g, r) = &array.kind {
                    if let Some((gname, info)) = lin.mat(g) {
                        let rt = lin.text(r);
                        let idx: Vec<String> = locations
                            .iter()
                            .map(|l| {
                                let lt = lin.text(l);
                                let i = lin.index(&info, r, l, rt.clone(), lt);
                                paren(&i)
                            })
                            .collect();
                        let end = locations.last().map_or(array.span.end(), |l| l.span.end());
                        edits.replace(
                            Span::new(array.span.start(), end),
                            format!("{gname} {}", idx.join(" ")),
                        );
                        continue;
                    }
                }
            }
        }
        // Matrix accesses and lengths in every other expression. A whole matrix (a prefetch of
        // the linearized array) already names the 1-D array.
        for e in params.opt.reads(&params) {
            if lin.mat(e).is_some() {
                continue;
            }
            let mut reps = Vec::new();
            lin.collect(e, &mut reps);
            for (s, t) in reps {
                edits.replace(s, t);
            }
        }
    }
}
