//! The peeled loop: the hoisted initialisation, K copies of the body (each preceded by `assert`s
//! of the loop invariants, as in the paper's template, the first copy included), then the
//! residual loop with its bound invariants tightened by the K updates. Also the text generation
//! iteration merging shares ([`Gen`]).

use super::check::Plan;
use crate::{Applied, Ctx, Outcome};
use analyze::loops::{self, as_loop, lit_pow, LoopShape, UpdOp};
use edit::{indent_at, reindent, EditSet};
use front::ast::*;
use front::span::Span;
use front::visit::walk_expr;

pub(super) fn rewrite(ctx: &mut Ctx, plan: Plan) -> Outcome {
    let Plan { stmt, shape, k, diagnostics } = plan;
    let gen = Gen::new(ctx, stmt, &shape);
    let inner = gen.inner();
    let mut out: Vec<String> = Vec::new();
    out.extend(gen.init_lines(&inner));
    // The invariants are asserted before each copy, the first included: the original's entry
    // check, which the prover may need to unfold a recursive function at the first copy's
    // state (an invariant `s[k] == psum(a, k)` for `k <= i` at `i = 0`).
    for _ in 0..k {
        out.extend(gen.assert_lines(&inner));
        out.extend(gen.copy_lines(&inner, true, None));
    }
    out.push(gen.residual(&inner, &tighten_edits(ctx.src, &shape, k), None, None, &[]));
    let text = gen.finish(out);
    let mut edits = EditSet::new();
    edits.replace(stmt.span, text);
    Ok(Applied { edits, diagnostics })
}

/// Edits over the source that tighten the bound conjuncts for `k` updates.
pub fn tighten_edits(src: &str, shape: &LoopShape, k: u64) -> Vec<(Span, String)> {
    let mut out = Vec::new();
    if k == 0 {
        return out;
    }
    let step_text = shape.step.span.text(src).to_string();
    for b in &shape.bounds {
        let applies = b.lower == matches!(shape.op, UpdOp::Add | UpdOp::Mul);
        if !applies || b.expr.span.is_empty() {
            continue;
        }
        let moved = if b.strict && shape.op == UpdOp::Div {
            strict_div_bound(src, &b.expr, shape, &step_text, k)
        } else {
            bound_after(src, &b.expr, shape, &step_text, k)
        };
        out.push((b.expr.span, moved));
    }
    out
}

/// A strict upper bound `i < U` moved by `k` divisions. `U / c^k` would be wrong (`5 < 6` but not
/// `5 / 4 < 6 / 4`): `i < U` is `i <= U - 1`, which floor division preserves, so the bound
/// becomes `(U - 1) / c^k + 1`.
fn strict_div_bound(src: &str, e: &Expr, shape: &LoopShape, step_text: &str, k: u64) -> String {
    let lit = e.as_int().and_then(|v| i64::try_from(v.clone()).ok());
    if let (Some(u), Some(c)) = (lit, shape.step_lit) {
        if let Some(f) = lit_pow(c, k) {
            return ((u - 1).div_euclid(f) + 1).to_string();
        }
    }
    let text = e.span.text(src).trim();
    // An arithmetic `U` needs only the outer parentheses; a conditional needs its own.
    let minus_one = if matches!(e.kind, ExprKind::Cond(..)) {
        format!("(({text}) - 1)")
    } else {
        format!("({text} - 1)")
    };
    let divisor = match shape.step_lit.and_then(|c| lit_pow(c, k)) {
        Some(f) => f.to_string(),
        None if k == 1 => loops::paren_if_complex(step_text),
        None => format!("({})", vec![loops::paren_if_complex(step_text); k as usize].join(" * ")),
    };
    format!("{minus_one} / {divisor} + 1")
}

/// The text of bound `e` moved by `k` updates (`L + c*k`, `L * c^k`, `U - c*k`, `U / c^k`).
pub fn bound_after(src: &str, e: &Expr, shape: &LoopShape, step_text: &str, k: u64) -> String {
    let text = e.span.text(src).trim().to_string();
    let lit = e.as_int().and_then(|v| i64::try_from(v.clone()).ok());
    let needs_paren = |e: &Expr| {
        !matches!(
            e.kind,
            ExprKind::Name(_)
                | ExprKind::Int(_)
                | ExprKind::Index(..)
                | ExprKind::Call { .. }
                | ExprKind::Field(..)
                | ExprKind::Length(_)
        )
    };
    match (shape.op, shape.step_lit) {
        (UpdOp::Add | UpdOp::Sub, Some(c)) => {
            // In i128: `c * k`, its negation and the folded sums below cannot overflow (each
            // operand fits in i64); the text may then hold a literal out of `int`'s range,
            // which the type checker judges, not this rewrite.
            let amt = i128::from(c) * i128::from(k);
            let amt = if shape.op == UpdOp::Add { amt } else { -amt };
            if let Some(v) = lit {
                return (i128::from(v) + amt).to_string();
            }
            // `X + a` / `X - a` with a literal `a` fold into one literal.
            if let ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), x, a) = &e.kind {
                if let Some(a) = a.as_int().and_then(|v| i64::try_from(v.clone()).ok()) {
                    let a = i128::from(a);
                    let total = if *op == BinOp::Add { a + amt } else { -a + amt };
                    let xt = x.span.text(src).trim();
                    return match total.cmp(&0) {
                        std::cmp::Ordering::Equal => xt.to_string(),
                        std::cmp::Ordering::Greater => format!("{xt} + {total}"),
                        std::cmp::Ordering::Less => format!("{xt} - {}", -total),
                    };
                }
            }
            if amt >= 0 {
                format!("{} + {amt}", paren_cond(&text, e))
            } else {
                format!("{} - {}", paren_cond(&text, e), -amt)
            }
        }
        (UpdOp::Mul | UpdOp::Div, Some(c)) => {
            let Some(f) = lit_pow(c, k) else {
                return format!(
                    "{} {} ({})",
                    paren_if(&text, needs_paren(e)),
                    shape.op.symbol(),
                    vec![c.to_string(); k as usize].join(" * ")
                );
            };
            if let Some(v) = lit {
                return if shape.op == UpdOp::Mul {
                    v.checked_mul(f).map_or_else(|| format!("{v} * {f}"), |x| x.to_string())
                } else {
                    v.div_euclid(f).to_string()
                };
            }
            format!("{} {} {f}", paren_if(&text, needs_paren(e)), shape.op.symbol())
        }
        (op, None) => {
            let c = loops::paren_if_complex(step_text);
            let amount = if k == 1 {
                c.clone()
            } else if matches!(op, UpdOp::Add | UpdOp::Sub) {
                format!("{k} * {c}")
            } else {
                format!("({})", vec![c.clone(); k as usize].join(" * "))
            };
            if lit == Some(0) && op == UpdOp::Add {
                return amount;
            }
            match op {
                UpdOp::Add | UpdOp::Sub => {
                    format!("{} {} {amount}", paren_cond(&text, e), op.symbol())
                }
                _ => format!("{} {} {amount}", paren_if(&text, needs_paren(e)), op.symbol()),
            }
        }
    }
}

fn paren_if(t: &str, yes: bool) -> String {
    if yes {
        format!("({t})")
    } else {
        t.to_string()
    }
}

/// Additive contexts only need parentheses around conditionals.
fn paren_cond(t: &str, e: &Expr) -> String {
    paren_if(t, matches!(e.kind, ExprKind::Cond(..)))
}

/// The guard's text with the iteration variable replaced by `repl` (parenthesised where needed).
pub fn guard_text_with(src: &str, guard: &Expr, var: &str, repl: &str) -> String {
    if repl == var {
        return guard.span.text(src).to_string();
    }
    let mut edits: Vec<(Span, String)> = Vec::new();
    // Occurrences directly under a comparison need no parentheses (arithmetic binds tighter).
    let mut bare = Vec::new();
    walk_expr(guard, &mut |e| {
        if let ExprKind::Binary(op, l, r) = &e.kind {
            if op.is_comparison() {
                for x in [l, r] {
                    if x.as_name() == Some(var) {
                        bare.push(x.span);
                    }
                }
            }
        }
    });
    if guard.as_name() == Some(var) {
        bare.push(guard.span);
    }
    walk_expr(guard, &mut |e| {
        if e.as_name() == Some(var) {
            let r = if bare.iter().any(|s| s.same_place(e.span)) {
                repl.to_string()
            } else {
                format!("({repl})")
            };
            // C's front end may give a name's span its trailing blanks (`i ` in `i < n`): keep
            // them, so that `i + 2 < n` keeps its space.
            let text = e.span.text(src);
            let blank = text.len() - text.trim_end().len();
            let name = Span::new(e.span.start(), e.span.end() - blank);
            edits.push((name, r));
        }
    });
    splice(src, guard.span, edits)
}

/// The text of `span` with the given inner replacements (spans inside `span`, non-overlapping).
pub fn splice(src: &str, span: Span, mut edits: Vec<(Span, String)>) -> String {
    edits.sort_by_key(|(s, _)| (s.start(), s.end()));
    let mut out = String::new();
    let mut pos = span.start();
    for (s, t) in edits {
        if s.start() < pos || s.end() > span.end() {
            continue;
        }
        out.push_str(&src[pos..s.start()]);
        out.push_str(&t);
        pos = s.end();
    }
    out.push_str(&src[pos..span.end()]);
    out
}

/// Shared text generation for peeled and merged loops.
pub struct Gen<'a> {
    pub src: &'a str,
    pub newline: String,
    pub unit: String,
    /// Indentation of the loop statement.
    pub ind: String,
    pub stmt: &'a Stmt,
    pub lp: &'a Loop,
    pub shape: &'a LoopShape,
    /// The result is wrapped in `{ }` because the `for` initialiser declares variables.
    pub wraps: bool,
}

impl<'a> Gen<'a> {
    pub fn new(ctx: &'a Ctx, stmt: &'a Stmt, shape: &'a LoopShape) -> Gen<'a> {
        let lp = as_loop(stmt).map(|x| x.0).expect("analysed loops are loops");
        let wraps = lp.init.iter().any(|s| matches!(s.kind, StmtKind::Decl { .. }));
        Gen {
            src: ctx.src,
            newline: ctx.layout.newline.to_string(),
            unit: ctx.layout.unit.clone(),
            ind: indent_at(ctx.src, stmt.span.start()).to_string(),
            stmt,
            lp,
            shape,
            wraps,
        }
    }

    /// The indentation of the generated statements: the loop's, one unit deeper when the result
    /// is wrapped in a block.
    pub fn inner(&self) -> String {
        if self.wraps {
            format!("{}{}", self.ind, self.unit)
        } else {
            self.ind.clone()
        }
    }

    /// The indentation of a body written at the loop's own level (the residual re-indents it).
    pub fn body_ind(&self) -> String {
        format!("{}{}", self.ind, self.unit)
    }

    /// Source text of a statement re-indented to `to` (every line, the first included).
    pub fn stmt_text(&self, span: Span, to: &str) -> String {
        let from = indent_at(self.src, span.start());
        format!("{to}{}", reindent(span.text(self.src), from, to))
    }

    /// The `for` initialiser as statements.
    pub fn init_lines(&self, to: &str) -> Vec<String> {
        self.statements(&self.lp.init, to)
    }

    /// The `for` update statements.
    pub fn update_lines(&self, to: &str) -> Vec<String> {
        self.statements(&self.lp.update, to)
    }

    /// The source text of `stmts` (a `for` header's parts), each as a statement ending in `;`.
    fn statements(&self, stmts: &[Stmt], to: &str) -> Vec<String> {
        stmts
            .iter()
            .map(|s| {
                let t = s.span.text(self.src).trim_end();
                format!("{to}{}{}", t, if t.ends_with(';') { "" } else { ";" })
            })
            .collect()
    }

    /// `assert E;` for every loop invariant the prover cannot rebuild by itself between two
    /// copies: those with a quantifier or a call (a recursive function it must unfold at each
    /// state), unless they state permissions only. Permissions stay in the heap, and linear facts
    /// over locals (bounds, lengths) follow from the copies' assignments; asserting them proves
    /// nothing new and perturbs the search: a merged sorting loop whose two quantified value
    /// invariants are asserted verifies in 17 s, and with `assert 0 <= j && j <= n - 1;` added,
    /// or its `\forall*` permission, it ran past 150 s.
    pub fn assert_lines(&self, to: &str) -> Vec<String> {
        self.lp
            .prefix
            .clauses
            .iter()
            .filter(|c| c.kind == ClauseKind::LoopInvariant)
            .filter_map(|c| c.expr())
            .filter(|e| !permissions_only(e) && needs_assert(e))
            .map(|e| {
                let from = indent_at(self.src, e.span.start());
                format!("{to}assert {};", reindent(e.span.text(self.src), from, to))
            })
            .collect()
    }

    /// One copy of the body (spliced, or as a block when it declares locals), plus the `for`
    /// update when `with_update`, plus `extra` (e.g. the ghost counter increment).
    pub fn copy_lines(&self, to: &str, with_update: bool, extra: Option<&str>) -> Vec<String> {
        let mut out = Vec::new();
        let declares = |b: &Block| b.stmts.iter().any(|s| matches!(s.kind, StmtKind::Decl { .. }));
        match &self.lp.body.kind {
            StmtKind::Block(b) if !declares(b) => {
                // The inside of the braces, comments included (those before the first and
                // after the last statement belong to the body too).
                let text = b.span.text(self.src);
                match text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
                    Some(inner) if !b.stmts.is_empty() => {
                        let lo = b.span.start() + 1 + (inner.len() - inner.trim_start().len());
                        let hi = b.span.start() + 1 + inner.trim_end().len();
                        out.push(self.stmt_text(Span::new(lo, hi), to));
                    }
                    _ => {
                        if let (Some(f), Some(l)) = (b.stmts.first(), b.stmts.last()) {
                            out.push(self.stmt_text(f.span.to(l.span), to));
                        }
                    }
                }
            }
            StmtKind::Block(b) => out.push(self.stmt_text(b.span, to)),
            _ => out.push(self.stmt_text(self.lp.body.span, to)),
        }
        if with_update {
            out.extend(self.update_lines(to));
        }
        if let Some(x) = extra {
            out.push(format!("{to}{x}"));
        }
        out
    }

    /// The loop with the given changes: `init` removed, inner `edits` applied, optionally a new
    /// guard text, a new body text, and extra invariant lines in front of the prefix.
    pub fn residual(
        &self,
        to: &str,
        edits: &[(Span, String)],
        guard: Option<String>,
        body: Option<String>,
        extra_invariants: &[String],
    ) -> String {
        let mut e: Vec<(Span, String)> = edits.to_vec();
        if let (Some(f), Some(l)) = (self.lp.init.first(), self.lp.init.last()) {
            e.push((f.span.to(l.span), String::new()));
        }
        if let Some(g) = guard {
            e.push((self.shape.guard.span, g));
        }
        if let Some(b) = body {
            e.push((self.lp.body.span, b));
        }
        let text = splice(self.src, self.stmt.span, e);

        let mut out = String::new();
        for x in extra_invariants {
            out.push_str(&format!("{to}loop_invariant {x};{}", self.newline));
        }
        out.push_str(&format!("{to}{}", reindent(&text, &self.ind, to)));
        out
    }

    /// A block body `{ … }` whose statement lines are `lines`, closing at indentation `to`.
    pub fn block(&self, to: &str, lines: &[String]) -> String {
        let mut out = format!("{{{}", self.newline);
        for l in lines {
            out.push_str(l);
            out.push_str(&self.newline);
        }
        out.push_str(to);
        out.push('}');
        out
    }

    /// Join the generated lines into the replacement text for the loop statement (the first line
    /// continues at the loop's column, so its indentation is dropped).
    pub fn finish(&self, lines: Vec<String>) -> String {
        let body = lines.join(&self.newline);
        if self.wraps {
            format!("{{{}{}{}{}}}", self.newline, body, self.newline, self.ind)
        } else {
            body.strip_prefix(self.ind.as_str()).unwrap_or(&body).to_string()
        }
    }
}

/// Whether `e` states permissions and nothing else: resource built-ins joined by `**`/`&&`,
/// under guards (`c ==> R`), conditionals and quantifiers.
fn permissions_only(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Builtin(b, _) => b.is_resource(),
        ExprKind::Binary(BinOp::Star | BinOp::And, l, r) => {
            permissions_only(l) && permissions_only(r)
        }
        ExprKind::Binary(BinOp::Implies, _, r) => permissions_only(r),
        ExprKind::Cond(_, a, b) => permissions_only(a) && permissions_only(b),
        ExprKind::Quant { body, .. } => permissions_only(body),
        _ => false,
    }
}

/// Whether `e` has a quantifier or a call of a function, which the prover does not carry from
/// one copy's state to the next without being told.
fn needs_assert(e: &Expr) -> bool {
    let mut found = false;
    walk_expr(e, &mut |x| {
        if matches!(x.kind, ExprKind::Quant { .. } | ExprKind::Call { .. }) {
            found = true;
        }
    });
    found
}
