//! Applicability of iteration merging: the loop's shape and step, and its trip count — a
//! constant proved by simulation from the facts (exact mode) or symbolic (remainder mode).

use crate::unroll::{
    check_steps, clean_cx, guard_text_with, loop_site, unchanged, unsupported, LoopSite,
};
use crate::{Ctx, Params, MAX_FACTOR};
use analyze::loops::{self, guard_at, guard_atoms, upd_pow, upd_text, Entry, LoopShape, UpdOp};
use analyze::sites::Site;
use check::translate::Term;
use check::{holds, prove, with_model, Answer};
use diag::Diagnostic;
use front::ast::*;
use front::span::Span;
use z3::ast::{Ast, Bool, Int};

/// The values of the `mode` parameter.
pub(super) const EXACT: &str = "exact";
pub(super) const REMAINDER: &str = "remainder";

/// Simulation limit for the exact trip count (A204).
const SIM_LIMIT: u64 = 1_000_000;

/// A checked merge.
pub enum Plan<'a> {
    /// A constant trip count.
    Exact { stmt: &'a Stmt, shape: LoopShape, m: u64, trip: Trip },
    /// A symbolic trip count: a merged loop guarded by `guard`, then the original loop.
    Remainder {
        stmt: &'a Stmt,
        shape: LoopShape,
        m: u64,
        guard: String,
        diagnostics: Vec<Diagnostic>,
    },
}

pub(super) fn check<'a>(
    ctx: &mut Ctx<'a>,
    site: &Site,
    params: &Params,
) -> Result<Plan<'a>, Vec<Diagnostic>> {
    let (var, m, mode) = (params.name("var"), params.count("factor"), params.word("mode"));
    let header = site.keyword;
    if m < 2 {
        return Err(unchanged(
            Diagnostic::error(
                "A201",
                format!("cannot merge by {m}: the factor must be at least 2"),
            ),
            header,
            &format!("merging by {m} would not change the loop"),
            "use a factor M >= 2, or remove the annotation",
        ));
    }
    if m > MAX_FACTOR {
        return Err(unchanged(
            Diagnostic::error(
                "A201",
                format!("cannot merge by {m}: the factor must be at most {MAX_FACTOR}"),
            ),
            header,
            &format!("merging by {m} would write {m} copies of the loop body"),
            &format!("use a factor between 2 and {MAX_FACTOR}, or remove the annotation"),
        ));
    }
    let LoopSite { class, method, stmt, shape, mut entry } = loop_site(ctx, site, var)?;
    check_steps(ctx, &mut entry, &shape, header)?;
    let trip = if mode == REMAINDER {
        Err("remainder mode was requested".to_string())
    } else {
        trip_count(ctx, &mut entry, &shape, header, mode == EXACT)?
    };
    match trip {
        Ok(t) => {
            if t.count < m {
                return Err(vec![Diagnostic::error(
                    "A203",
                    format!("cannot merge {m} iterations: the loop runs only {} times", t.count),
                )
                .with_primary(header, format!("loop to merge by {m}"))
                .with_secondary(shape.guard.span, format!("false after {} iterations", t.count))
                .with_note(format!(
                    "with entry value {} = {} the trip count is {}",
                    shape.var, t.v0, t.count
                ))
                .with_help(format!("use a factor between 2 and {}", t.count))]);
            }
            Ok(Plan::Exact { stmt, shape, m, trip: t })
        }
        Err(why) => {
            if mode == EXACT {
                return Err(vec![Diagnostic::error(
                    "A202",
                    "exact merging needs a constant trip count",
                )
                .with_primary(header, "loop")
                .with_secondary(
                    shape.guard.span,
                    "the number of iterations is not fixed by the facts",
                )
                .with_note(why)
                .with_help("add facts fixing the bounds, or use `--mode remainder`")]);
            }
            let (guard, diagnostics) =
                remainder(ctx, site, (class, method), stmt, &shape, m, &mut entry)?;
            Ok(Plan::Remainder { stmt, shape, m, guard, diagnostics })
        }
    }
}

pub struct Trip {
    pub(super) count: u64,
    pub(super) v0: i64,
    pub(super) step: i64,
    /// `values[j]`: the iteration variable after `j` updates, `j = 0 ..= count` (kept for the
    /// multiplicative updates only, whose trip count is small: the values grow or shrink
    /// geometrically, and the simulation stops at an i64 overflow).
    pub(super) values: Vec<i64>,
}

/// The constant trip count, if Γ fixes the entry value, the step and everything else the guard
/// reads (`Ok(Err(why))` when it does not).
fn trip_count(
    ctx: &Ctx,
    entry: &mut Entry,
    shape: &LoopShape,
    header: Span,
    explain: bool,
) -> Result<Result<Trip, String>, Vec<Diagnostic>> {
    let z = check::ctx();
    let Some(atoms) = guard_atoms(&shape.guard, &shape.var) else {
        return Ok(Err("the guard has a shape that cannot be simulated".into()));
    };
    // Everything the trip count depends on: the entry value, the step, and every maximal
    // sub-term of the guard without the iteration variable (Boolean ones too: a flag the facts
    // leave open would make the count depend on the model's arbitrary choice).
    let mut terms: Vec<(String, Term)> = vec![
        ("the entry value".to_string(), Term::Int(entry.i0.clone())),
        ("the step".to_string(), Term::Int(entry.step.clone())),
    ];
    for a in atoms {
        match entry.facts.tr.term(a) {
            Ok(t @ (Term::Int(_) | Term::Bool(_))) => {
                terms.push((a.span.text(ctx.src).to_string(), t))
            }
            _ => return Ok(Err(format!("`{}` cannot be encoded", a.span.text(ctx.src)))),
        }
    }
    // The facts that decide. In auto mode (`explain` false), only the quantifier-free ones:
    // quantified facts speak of array contents and permissions, which do not fix a trip count in
    // the programs this is for, and queries with them cost several times more (a model of them
    // needs instantiation). A count they alone would fix is then treated as not fixed: the
    // remainder form, which is correct for every count. `--mode exact` asks with all facts.
    let facts = if explain {
        entry.facts.facts.clone()
    } else {
        check::quantifier_free(&entry.facts.facts)
    };
    // One model of Γ proposes the values; each is then proven to be the only one.
    let values: Option<Vec<Option<Term>>> = with_model(&facts, ctx.timeout_ms, |model| {
        model.map(|m| {
            terms
                .iter()
                .map(|(_, t)| match t {
                    Term::Int(i) => m.eval(i, true).map(Term::Int),
                    Term::Bool(b) => m.eval(b, true).map(Term::Bool),
                    Term::Real(_) | Term::Val(..) => None,
                })
                .collect()
        })
    });
    let Some(values) = values else {
        return Ok(Err("the facts at loop entry have no model".into()));
    };
    let mut fixed_int: Vec<(Int<'static>, Int<'static>)> = Vec::new();
    let mut fixed_bool: Vec<(Bool<'static>, Bool<'static>)> = Vec::new();
    let mut goals: Vec<(&str, Bool<'static>, String)> = Vec::new();
    for ((what, t), v) in terms.iter().zip(values) {
        match (t, v) {
            (Term::Int(t), Some(Term::Int(v))) => {
                let shown = v.as_i64().map_or_else(|| "?".into(), |x| x.to_string());
                goals.push((what, t._eq(&v), shown));
                fixed_int.push((t.clone(), v));
            }
            (Term::Bool(t), Some(Term::Bool(v))) => {
                let shown = v.as_bool().map_or_else(|| "?".into(), |x| x.to_string());
                goals.push((what, t._eq(&v), shown));
                fixed_bool.push((t.clone(), v));
            }
            _ => return Ok(Err(format!("{what} has no value"))),
        }
    }
    // One query when every value is fixed (exact mode); one per value only to say which is not,
    // when the reason is shown (an explicit `--mode exact`).
    let refs: Vec<&Bool<'static>> = goals.iter().map(|(_, g, _)| g).collect();
    let all = Bool::and(z, &refs);
    if !holds(&facts, &all, ctx.timeout_ms) {
        if !explain {
            return Ok(Err("the trip count is not fixed by the facts".into()));
        }
        for (what, goal, shown) in &goals {
            match prove(&entry.facts.tr, &facts, goal, ctx.timeout_ms) {
                Answer::Proved => {}
                Answer::Refuted(cx) => {
                    return Ok(Err(format!(
                        "{what} is not fixed: it can be {shown} or differ ({cx})",
                        cx = clean_cx(&cx, shape)
                    )))
                }
                Answer::Unknown(w) => return Ok(Err(format!("{what}: solver gave up ({w})"))),
            }
        }
        return Ok(Err("the values are not fixed together".into()));
    }
    let (Some(v0), Some(step)) = (fixed_int[0].1.as_i64(), fixed_int[1].1.as_i64()) else {
        return Ok(Err("the entry value or step is out of range".into()));
    };
    let x = Int::new_const(z, "vct_sim_i");
    let g = guard_at(&mut entry.facts, shape, &x).map_err(|m| vec![unsupported(header, &m)])?;
    let subst: Vec<(&Int<'static>, &Int<'static>)> =
        fixed_int.iter().map(|(a, b)| (a, b)).collect();
    let subst_b: Vec<(&Bool<'static>, &Bool<'static>)> =
        fixed_bool.iter().map(|(a, b)| (a, b)).collect();
    let g: Bool<'static> = g.substitute(&subst).substitute(&subst_b);
    let too_long = || {
        Err(vec![Diagnostic::error("A204", format!("the loop runs more than {SIM_LIMIT} times"))
            .with_primary(header, "loop")
            .with_help("use remainder mode (`--mode remainder`)")])
    };
    // The simulation costs a Z3 simplification per iteration: seconds for a million. A loop
    // that does not end within the limit (`while (i < 5) i--;`, found by the fuzzer,
    // `fixtures/fuzz/`) is recognised up front: its guard provably holds at every value of
    // the first SIM_LIMIT + 1 (one quantifier-free query).
    if matches!(shape.op, UpdOp::Add | UpdOp::Sub) {
        let j = Int::new_const(z, "vct_sim_j");
        let sign = if shape.op == UpdOp::Add { step } else { step.wrapping_neg() };
        let jstep = Int::mul(z, &[&j, &Int::from_i64(z, sign)]);
        let vj = Int::add(z, &[&Int::from_i64(z, v0), &jstep]);
        let bounds = [j.ge(&Int::from_i64(z, 0)), j.le(&Int::from_i64(z, SIM_LIMIT as i64))];
        if step != i64::MIN && holds(&bounds, &g.substitute(&[(&x, &vj)]), ctx.timeout_ms) {
            return too_long();
        }
    }
    let mut i = v0;
    let mut count = 0u64;
    let geometric = matches!(shape.op, UpdOp::Mul | UpdOp::Div);
    let mut values = if geometric { vec![v0] } else { Vec::new() };
    loop {
        let gi = g.substitute(&[(&x, &Int::from_i64(z, i))]).simplify();
        // Every input of the guard is fixed, so it simplifies to a literal; anything else (an
        // uninterpreted function applied to them) is not evaluated on a guess.
        let Some(holds) = gi.as_bool() else {
            return Ok(Err("the guard cannot be evaluated".into()));
        };
        if !holds {
            break;
        }
        count += 1;
        if count > SIM_LIMIT {
            return too_long();
        }
        let next = match shape.op {
            UpdOp::Add => i.checked_add(step),
            UpdOp::Sub => i.checked_sub(step),
            UpdOp::Mul => i.checked_mul(step),
            UpdOp::Div => (step != 0).then(|| i.div_euclid(step)),
        };
        match next {
            // A fixed point of the update (`i / 2` at 0) whose guard holds never ends.
            Some(n) if n == i => return too_long(),
            Some(n) => {
                i = n;
                if geometric {
                    values.push(n);
                }
            }
            None => return Ok(Err("the iteration variable overflows during simulation".into())),
        }
    }
    Ok(Ok(Trip { count, v0, step, values }))
}
/// Remainder mode: the merged guard (simplified to its last instance when the facts at the loop
/// head allow) and the warnings.
fn remainder(
    ctx: &mut Ctx,
    site: &Site,
    (class, method): (Option<&Class>, &Method),
    stmt: &Stmt,
    shape: &LoopShape,
    m: u64,
    entry: &mut Entry,
) -> Result<(String, Vec<Diagnostic>), Vec<Diagnostic>> {
    let header = site.keyword;
    let mut diagnostics = Vec::new();
    let step_text = shape.step.span.text(ctx.src).to_string();
    // Is the last guard instance enough? (Γ at the loop head, invariants included.)
    let mut head = loops::head_facts(ctx.program(), class, method, stmt);
    let simple = (|| -> Option<bool> {
        let Term::Int(i) = head.tr.var(&shape.var) else {
            return None;
        };
        let c = head.tr.int(&shape.step).ok()?;
        let last = guard_at(&mut head, shape, &upd_pow(shape.op, &i, &c, m - 1)).ok()?;
        let mut facts = head.facts.clone();
        facts.push(last);
        let mut others = Vec::new();
        for j in 0..m - 1 {
            others.push(guard_at(&mut head, shape, &upd_pow(shape.op, &i, &c, j)).ok()?);
        }
        let refs: Vec<&Bool<'static>> = others.iter().collect();
        let all = Bool::and(check::ctx(), &refs);
        Some(holds(&facts, &all, ctx.timeout_ms))
    })()
    .unwrap_or(false);
    let instance = |j: u64| {
        guard_text_with(
            ctx.src,
            &shape.guard,
            &shape.var,
            &upd_text(shape, &shape.var, &step_text, j),
        )
    };
    let gm = if simple {
        instance(m - 1)
    } else {
        diagnostics.push(
            Diagnostic::note(
                "A206",
                "merged guard not simplified: every instance of the guard is tested",
            )
            .with_primary(shape.guard.span, "guard"),
        );
        let comparison =
            matches!(&shape.guard.kind, ExprKind::Binary(op, ..) if op.is_comparison());
        (0..m)
            .map(|j| if comparison { instance(j) } else { format!("({})", instance(j)) })
            .collect::<Vec<_>>()
            .join(" && ")
    };
    // A205: the merged loop can never run. A warning, decided from the quantifier-free facts
    // (see `trip_count`): the query almost always fails, and with quantified facts a failing
    // query is the expensive kind.
    let last = upd_pow(shape.op, &entry.i0, &entry.step, m - 1);
    if let Ok(g) = guard_at(&mut entry.facts, shape, &last) {
        let plain = check::quantifier_free(&entry.facts.facts);
        if holds(&plain, &g.not(), ctx.timeout_ms) {
            diagnostics.push(
                Diagnostic::warning(
                    "A205",
                    format!(
                        "the merged loop can never run: the loop never has {m} iterations left"
                    ),
                )
                .with_primary(header, "only the remainder loop will run"),
            );
        }
    }
    Ok((gm, diagnostics))
}
