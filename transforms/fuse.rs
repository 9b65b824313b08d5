//! Kernel fusion (optimizations.md §7; paper §5.7–5.9, Algorithms 1–4).
//!
//! `F` consecutive top-level `par` blocks are fused pairwise, left to right. Each kernel's
//! contract is split into permission atoms and functional conjuncts; the permission questions of
//! the paper (same pattern? fits the budget? writes?) are answered symbolically with Z3 over the
//! thread range, so no concrete array length or thread count is needed.
//!
//! Everything is worked on as text: conjuncts are copied from the source (with the second
//! kernel's thread variable renamed token by token) and re-parsed standalone for the solver, so
//! untouched conjuncts keep their exact spelling.

// Refusals are the cold path and carry one diagnostic; boxing them buys nothing here.
#![allow(clippy::result_large_err)]

use super::{Applied, Ctx, Outcome, Params};
use crate::analyze::facts::{facts_at, Point};
use crate::analyze::sites::Site;
use crate::check::translate::{Term, Translator, Z3Bool, Z3Int};
use crate::check::{self, ctx as z3ctx};
use crate::diag::Diagnostic;
use crate::edit::{indent_at, EditSet};
use crate::front::ast::*;
use crate::front::lexer::{lex, TokKind};
use crate::front::parser::parse_expr_text;
use crate::front::span::Span;
use crate::front::visit::walk_expr;
use crate::front::Dialect;
use num_bigint::BigInt;
use num_traits::{One, Signed, ToPrimitive, Zero};
use z3::ast::{Ast, Bool, Int, Real};

// ---------------------------------------------------------------------------------------------
// Fractions
// ---------------------------------------------------------------------------------------------

/// A permission amount: an exact rational when the source spells one, otherwise source text.
#[derive(Clone, Debug, PartialEq)]
enum Frac {
    Rat(BigInt, BigInt),
    Sym(String),
}

fn gcd(a: &BigInt, b: &BigInt) -> BigInt {
    let (mut a, mut b) = (a.abs(), b.abs());
    while !b.is_zero() {
        let r = &a % &b;
        a = b;
        b = r;
    }
    a
}

impl Frac {
    fn rat(n: BigInt, d: BigInt) -> Frac {
        let g = gcd(&n, &d);
        let (mut n, mut d) = if g.is_zero() {
            (n, d)
        } else {
            (n / &g, d / &g)
        };
        if d.is_negative() {
            n = -n;
            d = -d;
        }
        Frac::Rat(n, d)
    }

    fn of_expr(e: &Expr, text: &str) -> Frac {
        fn lit(e: &Expr) -> Option<BigInt> {
            match &e.kind {
                ExprKind::Int(v) => Some(v.clone()),
                _ => None,
            }
        }
        match &e.kind {
            ExprKind::Write => Frac::rat(BigInt::one(), BigInt::one()),
            ExprKind::Int(v) => Frac::rat(v.clone(), BigInt::one()),
            ExprKind::Binary(BinOp::Frac, l, r) => match (lit(l), lit(r)) {
                (Some(a), Some(b)) if !b.is_zero() => Frac::rat(a, b),
                _ => Frac::Sym(text.to_string()),
            },
            _ => Frac::Sym(text.to_string()),
        }
    }

    fn text(&self) -> String {
        match self {
            Frac::Rat(n, d) if d.is_one() && n.is_one() => "write".into(),
            Frac::Rat(n, d) if d.is_one() => n.to_string(),
            Frac::Rat(n, d) => format!("{n}\\{d}"),
            Frac::Sym(s) => s.clone(),
        }
    }

    fn is_write(&self) -> bool {
        matches!(self, Frac::Rat(n, d) if n == d)
    }

    fn combine(&self, other: &Frac, sub: bool) -> Frac {
        match (self, other) {
            (Frac::Rat(a, b), Frac::Rat(c, d)) => {
                let n = if sub { a * d - c * b } else { a * d + c * b };
                Frac::rat(n, b * d)
            }
            _ => Frac::Sym(format!(
                "({}) {} ({})",
                self.text(),
                if sub { "-" } else { "+" },
                other.text()
            )),
        }
    }

    /// Is the amount positive? `None` when it cannot be decided exactly (symbolic amounts).
    fn positive(&self) -> Option<bool> {
        match self {
            Frac::Rat(n, _) => Some(n.is_positive()),
            Frac::Sym(_) => None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Permission atoms and the kernel model
// ---------------------------------------------------------------------------------------------

/// One permission atom: `(\forall* binders; conds; guards ==> Perm(array[index], frac))`.
#[derive(Clone, Debug)]
struct Atom {
    array: String,
    /// `(declaration text, name)` of each `\forall*` binder.
    binders: Vec<(String, String)>,
    /// Quantifier conditions and guards, as text.
    guards: Vec<String>,
    loc: String,
    index: String,
    frac: Frac,
    /// The conjunct as written, when it is exactly this atom at its original fraction.
    orig: Option<String>,
    /// Which kernel of the junction it came from (1 or 2), for barrier contracts.
    origin: u8,
}

impl Atom {
    /// `[guards ==>] loc == \old(loc)`: the location keeps its value across a barrier. Used for
    /// permissions only the second kernel holds: the first kernel cannot have changed them, but
    /// a thread keeps only what a barrier ensures, values included.
    fn frame(&self) -> String {
        self.wrap(format!("{} == \\old({})", self.loc, self.loc), "\\forall")
    }

    /// `inner` under this atom's guards and binders (`quant` quantifies the binders).
    fn wrap(&self, inner: String, quant: &str) -> String {
        let qguards: Vec<String> = self.guards.iter().map(|g| paren_if_needed(g)).collect();
        if self.binders.is_empty() {
            if qguards.is_empty() {
                inner
            } else {
                format!("{} ==> {}", qguards.join(" && "), inner)
            }
        } else {
            let decls: Vec<&str> = self.binders.iter().map(|(d, _)| d.as_str()).collect();
            let cond = if qguards.is_empty() {
                "true".to_string()
            } else {
                qguards.join(" && ")
            };
            format!("({quant} {}; {}; {})", decls.join(", "), cond, inner)
        }
    }

    fn print(&self) -> String {
        if let Some(o) = &self.orig {
            return o.clone();
        }
        let perm = format!("Perm({}, {})", self.loc, self.frac.text());
        self.wrap(perm, "\\forall*")
    }

    fn with_frac(&self, f: Frac) -> Atom {
        let mut a = self.clone();
        if a.frac != f {
            a.orig = None;
        }
        a.frac = f;
        a
    }

    /// Same cells (syntactically, after renaming): used to add up fractions of duplicates.
    fn same_shape(&self, o: &Atom) -> bool {
        self.array == o.array
            && self.binders == o.binders
            && self.guards == o.guards
            && self.loc == o.loc
    }
}

fn paren_if_needed(g: &str) -> String {
    if g.contains("==>") || g.contains('?') || g.contains("||") {
        format!("({g})")
    } else {
        g.to_string()
    }
}

/// A functional conjunct (or an opaque resource carried unchanged).
#[derive(Clone, Debug)]
struct Func {
    text: String,
    /// Arrays it mentions (for Algorithm 3's read sets).
    arrays: Vec<String>,
}

#[derive(Clone, Debug, Default)]
struct Kernel {
    label: Option<String>,
    tvar: String,
    iter_text: String,
    pre: Vec<Atom>,
    post: Vec<Atom>,
    fpre: Vec<Func>,
    fpost: Vec<Func>,
    carried_pre: Vec<Func>,
    carried_post: Vec<Func>,
    /// Every postcondition conjunct in clause order (for the assertions of Algorithm 4).
    post_texts: Vec<String>,
    /// Body statements, one line each, indentation relative to the body.
    body: Vec<String>,
}

// ---------------------------------------------------------------------------------------------
// Entry point
// ---------------------------------------------------------------------------------------------

pub fn apply(ctx: &mut Ctx, site: &Site, params: &Params) -> Outcome {
    let Params::Fuse {
        kernels,
        blocks,
        block_size,
    } = params
    else {
        return super::not_available(params);
    };
    let f = *kernels;
    let head = site.keyword;
    if f < 2 {
        return Err(vec![Diagnostic::error(
            "A0004",
            format!("cannot fuse {f} kernel(s): at least 2 are needed"),
        )
        .with_primary(head, "fusion requested here")
        .with_help("use `gpuopt fuse F;` with F >= 2")]);
    }
    if blocks == &Some(0) {
        return Err(vec![Diagnostic::error(
            "A0004",
            "the number of thread blocks must be at least 1",
        )
        .with_primary(head, "fusion requested here")
        .with_help("use `gpuopt fuse F B;` with B >= 1, or omit B")]);
    }
    let parsed = ctx.parsed;
    let Some((class, method)) =
        crate::analyze::sites::find_method(&parsed.program, site.class.as_deref(), &site.method)
    else {
        return Err(vec![refuse_shape(
            head,
            "the selected par block is not inside a method",
        )]);
    };
    let MethodBody::Block(body) = &method.body else {
        return Err(vec![refuse_shape(head, "the method has no body")]);
    };
    // Kernels are taken from the method's top-level block (as in the paper).
    let Some(first) = body.stmts.iter().position(|s| {
        matches!(&s.kind, StmtKind::Par(p) if p.keyword == site.keyword)
            || s.span.start() == site.span.start()
    }) else {
        return Err(vec![Diagnostic::error(
            "A609",
            "only par blocks at the top level of a method body can be fused",
        )
        .with_primary(head, "this par block is nested")
        .with_help("move the kernels to the top level of the method body")]);
    };

    // ---- collect F consecutive par blocks (A601 / A602)
    let mut pars: Vec<&Stmt> = Vec::new();
    let mut idx = first;
    while pars.len() < f as usize {
        match body.stmts.get(idx) {
            Some(s) if matches!(s.kind, StmtKind::Par(_)) => pars.push(s),
            Some(s) => {
                let more_pars = body.stmts[idx..]
                    .iter()
                    .any(|t| matches!(t.kind, StmtKind::Par(_)));
                if more_pars {
                    return Err(vec![Diagnostic::error(
                        "A602",
                        format!("a statement lies between kernel {} and kernel {} of the group to fuse", pars.len(), pars.len() + 1),
                    )
                    .with_primary(head, "fusion requested here")
                    .with_secondary(s.span, "this statement separates the kernels")
                    .with_help("move the statement before or after the group of kernels; only consecutive par blocks can be fused")]);
                }
                break;
            }
            None => break,
        }
        idx += 1;
    }
    if pars.len() < f as usize {
        let mut d = Diagnostic::error(
            "A601",
            format!(
                "cannot fuse {f} kernels: only {} consecutive par block(s) start here",
                pars.len()
            ),
        )
        .with_primary(head, format!("`fuse {f}` requested here"));
        if let Some(StmtKind::Par(p)) = pars.last().filter(|_| pars.len() > 1).map(|s| &s.kind) {
            d = d.with_secondary(p.keyword, "the group ends with this par block");
        }
        let help = if pars.len() >= 2 {
            format!(
                "found {} consecutive par blocks; use `gpuopt fuse {};`",
                pars.len(),
                pars.len()
            )
        } else {
            "fusion needs at least two consecutive par blocks".to_string()
        };
        return Err(vec![d.with_help(help)]);
    }

    // ---- shapes (A609)
    let mut arms: Vec<(&Par, &ParArm)> = Vec::new();
    for s in &pars {
        let StmtKind::Par(p) = &s.kind else { continue };
        if p.arms.len() != 1 || !p.prefix.clauses.is_empty() {
            return Err(vec![Diagnostic::error(
                "A609",
                "only single-arm par blocks without a region contract can be fused",
            )
            .with_primary(head, "fusion requested here")
            .with_secondary(
                p.keyword,
                "this par block has `and` arms or a region contract",
            )
            .with_help(
                "split the par block, or move the region contract into the per-thread contract",
            )]);
        }
        let arm = &p.arms[0];
        if arm.iters.len() != 1 || arm.wait.is_some() {
            return Err(vec![Diagnostic::error(
                "A609",
                "only one-dimensional kernels (one thread iterator) can be fused",
            )
            .with_primary(head, "fusion requested here")
            .with_secondary(
                p.keyword,
                "this par block has several iterators or a wait list",
            )
            .with_help("linearize the thread space first")]);
        }
        if !matches!(arm.body.kind, StmtKind::Block(_)) {
            return Err(vec![refuse_shape(
                p.keyword,
                "the kernel body is not a block",
            )]);
        }
        arms.push((p, arm));
    }

    // ---- facts and thread ranges (A603)
    let mut facts = facts_at(
        &parsed.program,
        class,
        method,
        Point::Before(pars[0].span.start()),
    );
    let it1 = &arms[0].1.iters[0];
    let (lo1, hi1) = match (facts.tr.int(&it1.lo), facts.tr.int(&it1.hi)) {
        (Ok(a), Ok(b)) => (a, b),
        _ => {
            return Err(vec![refuse_shape(
                it1.span,
                "the thread range cannot be encoded for the solver",
            )])
        }
    };
    for (k, (p, arm)) in arms.iter().enumerate().skip(1) {
        let it = &arm.iters[0];
        let same = match (facts.tr.int(&it.lo), facts.tr.int(&it.hi)) {
            (Ok(a), Ok(b)) => {
                let g = Bool::and(z3ctx(), &[&a._eq(&lo1), &b._eq(&hi1)]);
                check::prove(&facts.tr, &facts.facts, &g, ctx.timeout_ms)
            }
            _ => check::Answer::Unknown("the range cannot be encoded".into()),
        };
        if !same.is_proved() {
            let mut d = Diagnostic::error(
                "A603",
                format!(
                    "kernel {} runs over a thread range that is not provably equal to kernel 1's",
                    k + 1
                ),
            )
            .with_primary(head, "fusion requested here")
            .with_secondary(it1.span, "kernel 1's threads")
            .with_secondary(it.span, format!("kernel {}'s threads", k + 1));
            if let check::Answer::Refuted(cx) = &same {
                d = d.with_note(format!("counterexample: {cx}"));
            }
            let _ = p;
            return Err(vec![d.with_help("fuse only kernels over the same threads, or add a fact that makes the ranges equal")]);
        }
    }

    // ---- thread variable and label names
    let src = ctx.src;
    let dialect = ctx.dialect();
    let t1 = it1.name.name.clone();
    let capture = arms.iter().skip(1).any(|(p, arm)| {
        arm.iters[0].name.name != t1
            && has_token(ctx.text(Span::new(p.keyword.start(), arm.span.end())), &t1)
    });
    let tvar = if capture {
        ctx.names.name("vct_fused_tid")
    } else {
        t1.clone()
    };

    let mut models = Vec::new();
    for (p, arm) in &arms {
        match kernel_model(src, dialect, p, arm, &tvar) {
            Ok(k) => models.push(k),
            Err(d) => return Err(vec![d]),
        }
    }

    // ---- the solver context: thread range over the fused thread variable
    let tr = &mut facts.tr;
    let base_facts = facts.facts.clone();
    let range_of = |t: &Z3Int| Bool::and(z3ctx(), &[&lo1.le(t), &t.lt(&hi1)]);
    let block_size_expr = match (block_size, blocks) {
        (Some(e), _) => Some(
            tr.int(e)
                .map_err(|_| vec![refuse_shape(head, "the block size cannot be encoded")])?,
        ),
        (None, Some(b)) if *b > 1 => {
            let b = Int::from_i64(z3ctx(), *b as i64);
            let n = Int::sub(z3ctx(), &[&hi1, &lo1]);
            // ⌈T/B⌉
            Some(Int::add(z3ctx(), &[&n, &b, &Int::from_i64(z3ctx(), -1)]).div(&b))
        }
        _ => None,
    };

    let mut an = Analysis {
        tr,
        facts: base_facts,
        range_of: &range_of,
        tvar: tvar.clone(),
        dialect,
        timeout: ctx.timeout_ms,
    };

    let mut fused = models[0].clone();
    let mut warnings = Vec::new();
    let mut fused_count = 1usize;
    let mut stopped: Option<usize> = None;
    let mut need_label = !models[0].body.iter().all(|l| !l.contains("barrier"));
    for (k, next) in models.iter().enumerate().skip(1) {
        match an.junction(&fused, next, block_size_expr.as_ref()) {
            Ok((j, dp)) => {
                need_label |= dp || next.body.iter().any(|l| l.contains("barrier"));
                fused = j;
                fused_count += 1;
            }
            Err(JunctionError::Diag(d)) => {
                return Err(vec![d.with_primary(head, "fusion requested here")])
            }
            Err(JunctionError::InterBlock(msg, note)) => {
                let d = |sev: fn(&str, String) -> Diagnostic| {
                    sev("A607", format!("kernel {} depends on kernel {} across thread blocks: {msg}", k + 1, k))
                        .with_primary(head, "fusion requested here")
                        .with_secondary(arms[k].0.keyword, "this kernel reads what another thread block wrote")
                        .with_note(note.clone())
                        .with_help("a barrier synchronises only one thread block; use one block (omit the block size) or a larger block size")
                };
                if fused_count == 1 {
                    return Err(vec![d(Diagnostic::error)]);
                }
                warnings.push(d(Diagnostic::warning).with_note(format!(
                    "the first {fused_count} kernels were fused; the rest stay unfused"
                )));
                stopped = Some(k);
                break;
            }
        }
    }
    let _ = stopped;

    // ---- print the fused par block over the first `fused_count` kernels
    let label = match (&models[0].label, need_label) {
        (Some(l), _) => Some(l.clone()),
        (None, true) => Some(ctx.names.name("vct_fused_kernels")),
        (None, false) => None,
    };
    if let (Some(l), None) = (&label, &models[0].label) {
        // A generated barrier in the joined body was printed with a placeholder label.
        for line in &mut fused.body {
            *line = line.replace("barrier(\u{0}LABEL)", &format!("barrier({l})"));
        }
    }
    let label_text = label.clone().unwrap_or_default();
    for line in &mut fused.body {
        *line = line.replace("\u{0}LABEL", &label_text);
    }
    let ind = indent_at(src, pars[0].span.start()).to_string();
    let unit = ctx.layout.unit.clone();
    let nl = ctx.layout.newline;
    let mut out = String::new();
    out.push_str(&format!(
        "par {}({}){nl}",
        label.as_ref().map(|l| format!("{l} ")).unwrap_or_default(),
        fused.iter_text
    ));
    for (kw, text) in print_contract(&fused) {
        out.push_str(&format!("{ind}{unit}{kw} {text};{nl}"));
    }
    out.push_str(&format!("{ind}{{{nl}"));
    for line in &fused.body {
        if line.trim().is_empty() {
            out.push_str(nl);
        } else {
            // `\u{1}` marks one extra level (generated barrier contracts).
            let extra = line.chars().take_while(|c| *c == '\u{1}').count();
            let line = line.trim_start_matches('\u{1}');
            out.push_str(&format!("{ind}{unit}{}{line}{nl}", unit.repeat(extra)));
        }
    }
    out.push_str(&format!("{ind}}}"));

    let start = match &pars[0].kind {
        StmtKind::Par(p) => p.keyword.start(),
        _ => pars[0].span.start(),
    };
    let end = pars[fused_count - 1].span.end();
    let mut edits = EditSet::new();
    edits.replace(Span::new(start, end), out);
    Ok(Applied {
        edits,
        diagnostics: warnings,
    })
}

fn refuse_shape(span: Span, msg: &str) -> Diagnostic {
    Diagnostic::error("A609", format!("cannot fuse: {msg}"))
        .with_primary(span, "here")
        .with_help("fusion needs single-arm, one-dimensional par blocks with block bodies")
}

// ---------------------------------------------------------------------------------------------
// Building the model of one kernel from its source text
// ---------------------------------------------------------------------------------------------

fn has_token(text: &str, name: &str) -> bool {
    lex(text)
        .tokens
        .iter()
        .any(|t| matches!(t.kind, TokKind::Word) && t.span.text(text) == name)
}

/// Replace every identifier token `from` by `to` (thread-variable and label renaming).
fn rename_tokens(text: &str, from: &str, to: &str) -> String {
    if from == to {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for t in lex(text).tokens {
        if matches!(t.kind, TokKind::Word) && t.span.text(text) == from {
            out.push_str(&text[last..t.span.start()]);
            out.push_str(to);
            last = t.span.end();
        }
    }
    out.push_str(&text[last..]);
    out
}

fn kernel_model(
    src: &str,
    dialect: Dialect,
    p: &Par,
    arm: &ParArm,
    tvar: &str,
) -> Result<Kernel, Diagnostic> {
    let it = &arm.iters[0];
    let own = it.name.name.as_str();
    let ren = |s: &str| rename_tokens(s, own, tvar);
    let mut k = Kernel {
        label: arm.label.as_ref().map(|l| l.name.clone()),
        tvar: tvar.to_string(),
        iter_text: ren(it.span.text(src)),
        ..Kernel::default()
    };
    let _ = p;
    for c in &arm.contract {
        let Some(e) = c.expr() else { continue };
        if !(c.kind.is_pre() || c.kind.is_post()) {
            return Err(refuse_shape(
                c.span,
                "unsupported clause in a kernel contract",
            ));
        }
        for conj in e.conjuncts() {
            let text = ren(conj.span.text(src));
            let pe = parse_expr_text(&text, dialect).map_err(|_| {
                refuse_shape(
                    conj.span,
                    "a contract conjunct does not re-parse after renaming",
                )
            })?;
            let mut pieces = Vec::new();
            decompose(
                &pe,
                &text,
                &mut Vec::new(),
                &mut Vec::new(),
                &mut pieces,
                conj.span,
            )?;
            // A conjunct that is one atom keeps its spelling.
            if let [Piece::Atom(a)] = pieces.as_mut_slice() {
                a.orig = Some(text.clone());
            }
            for piece in pieces {
                match piece {
                    Piece::Atom(a) => {
                        if c.kind == ClauseKind::ContextEverywhere {
                            continue;
                        }
                        if c.kind.is_pre() {
                            k.pre.push(a.clone());
                        }
                        if c.kind.is_post() {
                            k.post.push(a);
                        }
                    }
                    Piece::Func(f) => {
                        if c.kind.is_pre() {
                            k.fpre.push(f.clone());
                        }
                        if c.kind.is_post() {
                            k.fpost.push(f);
                        }
                    }
                    Piece::Carried(f) => {
                        if c.kind.is_pre() {
                            k.carried_pre.push(f.clone());
                        }
                        if c.kind.is_post() {
                            k.carried_post.push(f);
                        }
                    }
                }
            }
            if c.kind.is_post() {
                k.post_texts.push(text);
            }
        }
    }
    // Body statements, re-indented relative to the block.
    if let StmtKind::Block(b) = &arm.body.kind {
        if let (Some(f), Some(l)) = (b.stmts.first(), b.stmts.last()) {
            let text = ren(&src[f.span.start()..l.span.end()]);
            let base = indent_at(src, f.span.start()).to_string();
            for (i, line) in text.lines().enumerate() {
                let line = if i == 0 {
                    line
                } else {
                    line.strip_prefix(base.as_str())
                        .unwrap_or(line.trim_start())
                };
                k.body.push(line.trim_end().to_string());
            }
        }
    }
    Ok(k)
}

enum Piece {
    Atom(Atom),
    Func(Func),
    Carried(Func),
}

fn arrays_in(e: &Expr) -> Vec<String> {
    let mut out = Vec::new();
    walk_expr(e, &mut |x| {
        if let ExprKind::Index(a, _) = &x.kind {
            if let Some(n) = a.as_name() {
                if !out.iter().any(|o: &String| o == n) {
                    out.push(n.to_string());
                }
            }
        }
    });
    out
}

fn has_resource(e: &Expr) -> bool {
    let mut r = false;
    walk_expr(e, &mut |x| {
        if let ExprKind::Builtin(b, _) = &x.kind {
            r |= b.is_resource() || matches!(b, Builtin::Array | Builtin::Matrix);
        }
    });
    r
}

fn decompose(
    e: &Expr,
    text: &str,
    guards: &mut Vec<String>,
    binders: &mut Vec<(String, String)>,
    out: &mut Vec<Piece>,
    at: Span,
) -> Result<(), Diagnostic> {
    let t = |x: &Expr| x.span.text(text).to_string();
    match &e.kind {
        ExprKind::Binary(BinOp::And | BinOp::Star, l, r) if has_resource(e) => {
            decompose(l, text, guards, binders, out, at)?;
            decompose(r, text, guards, binders, out, at)
        }
        ExprKind::Binary(BinOp::Implies, c, r) if has_resource(r) => {
            guards.push(t(c));
            let res = decompose(r, text, guards, binders, out, at);
            guards.pop();
            res
        }
        ExprKind::Cond(c, a, b) if has_resource(a) || has_resource(b) => {
            guards.push(t(c));
            decompose(a, text, guards, binders, out, at)?;
            guards.pop();
            guards.push(format!("!({})", t(c)));
            decompose(b, text, guards, binders, out, at)?;
            guards.pop();
            Ok(())
        }
        ExprKind::Quant {
            kind: QuantKind::ForallStar,
            bindings,
            cond,
            body,
        } => {
            let n = guards.len();
            let nb = binders.len();
            for b in bindings {
                let decl = format!("{} {}", t_ty(&b.ty, text), b.name.name);
                if let Some((lo, hi)) = &b.range {
                    guards.push(format!("{} <= {}", t(lo), b.name.name));
                    guards.push(format!("{} < {}", b.name.name, t(hi)));
                }
                binders.push((decl, b.name.name.clone()));
            }
            if let Some(c) = cond {
                guards.push(t(c));
            }
            let r = decompose(body, text, guards, binders, out, at);
            guards.truncate(n);
            binders.truncate(nb);
            r
        }
        ExprKind::Builtin(b @ (Builtin::Perm | Builtin::PointsTo | Builtin::Value), args) => {
            let loc = &args[0];
            let ExprKind::Index(arr, idx) = &loc.kind else {
                out.push(Piece::Carried(Func {
                    text: t(e),
                    arrays: vec![],
                }));
                return Ok(());
            };
            let Some(name) = arr.as_name() else {
                out.push(Piece::Carried(Func {
                    text: t(e),
                    arrays: arrays_in(e),
                }));
                return Ok(());
            };
            let frac = match b {
                Builtin::Value => Frac::Sym("read".into()),
                _ => match args.get(1) {
                    Some(f) => Frac::of_expr(f, &t(f)),
                    None => return Err(refuse_shape(at, "malformed permission")),
                },
            };
            if matches!(frac, Frac::Sym(_)) {
                return Err(Diagnostic::error(
                    "A604",
                    "cannot fuse: only literal permission fractions are analysed",
                )
                .with_secondary(at, "this permission has a symbolic or `read` fraction")
                .with_help("write the fraction as a literal such as `1\\2` or `write`"));
            }
            out.push(Piece::Atom(Atom {
                array: name.to_string(),
                binders: binders.clone(),
                guards: guards.clone(),
                loc: t(loc),
                index: t(idx),
                frac,
                orig: None,
                origin: 0,
            }));
            if *b == Builtin::PointsTo {
                let v = args.get(2).map(&t).unwrap_or_default();
                let f = format!("{} == {}", t(loc), v);
                out.push(Piece::Func(Func {
                    text: wrap_guards(&f, guards, binders, false),
                    arrays: arrays_in(e),
                }));
            }
            Ok(())
        }
        _ if has_resource(e) => {
            out.push(Piece::Carried(Func {
                text: wrap_guards(&t(e), guards, binders, true),
                arrays: arrays_in(e),
            }));
            Ok(())
        }
        _ => {
            out.push(Piece::Func(Func {
                text: wrap_guards(&t(e), guards, binders, false),
                arrays: arrays_in(e),
            }));
            Ok(())
        }
    }
}

fn t_ty(ty: &Type, text: &str) -> String {
    let s = ty.span.text(text);
    if s.is_empty() {
        "int".into()
    } else {
        s.to_string()
    }
}

fn wrap_guards(body: &str, guards: &[String], binders: &[(String, String)], star: bool) -> String {
    let g: Vec<String> = guards.iter().map(|g| paren_if_needed(g)).collect();
    if binders.is_empty() {
        if g.is_empty() {
            body.to_string()
        } else {
            format!("{} ==> {}", g.join(" && "), paren_if_needed(body))
        }
    } else {
        let decls: Vec<&str> = binders.iter().map(|(d, _)| d.as_str()).collect();
        let cond = if g.is_empty() {
            "true".into()
        } else {
            g.join(" && ")
        };
        format!(
            "(\\forall{} {}; {}; {})",
            if star { "*" } else { "" },
            decls.join(", "),
            cond,
            body
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Symbolic analysis of one junction
// ---------------------------------------------------------------------------------------------

enum JunctionError {
    Diag(Diagnostic),
    /// Message and counterexample note.
    InterBlock(String, String),
}

struct Analysis<'a, F: Fn(&Z3Int) -> Z3Bool> {
    tr: &'a mut Translator,
    facts: Vec<Z3Bool>,
    range_of: &'a F,
    tvar: String,
    dialect: Dialect,
    timeout: u32,
}

impl<F: Fn(&Z3Int) -> Z3Bool> Analysis<'_, F> {
    fn parse(&self, s: &str) -> Option<Expr> {
        parse_expr_text(s, self.dialect).ok()
    }

    /// `∃ j⃗: guards(t, j⃗) ∧ index(t, j⃗) == x`, with the binders existential (or free when
    /// `free` is set, for witness encodings).
    fn covers(&mut self, a: &Atom, t: &Z3Int, x: &Z3Int, free: bool) -> Option<Z3Bool> {
        let c = z3ctx();
        let prev_t = self
            .tr
            .env
            .bound
            .insert(self.tvar.clone(), Term::Int(t.clone()));
        let mut js = Vec::new();
        let mut prevs = Vec::new();
        for (_, n) in &a.binders {
            let j = self.tr.fresh_int(n);
            prevs.push((
                n.clone(),
                self.tr.env.bound.insert(n.clone(), Term::Int(j.clone())),
            ));
            js.push(j);
        }
        let res = (|| {
            let mut parts = Vec::new();
            for g in &a.guards {
                let e = self.parse(g)?;
                parts.push(self.tr.bool(&e).ok()?);
            }
            let i = self.parse(&a.index)?;
            parts.push(self.tr.int(&i).ok()?._eq(x));
            Some(Bool::and(c, &parts.iter().collect::<Vec<_>>()))
        })();
        for (n, p) in prevs.into_iter().rev() {
            restore(&mut self.tr.env.bound, &n, p);
        }
        restore(&mut self.tr.env.bound, &self.tvar, prev_t);
        let body = res?;
        if js.is_empty() || free {
            Some(body)
        } else {
            let vars: Vec<&dyn Ast<'static>> = js.iter().map(|j| j as &dyn Ast<'static>).collect();
            Some(z3::ast::exists_const(c, &vars, &[], &body))
        }
    }

    fn covers_any(&mut self, atoms: &[&Atom], t: &Z3Int, x: &Z3Int) -> Option<Z3Bool> {
        let mut parts = Vec::new();
        for a in atoms {
            parts.push(self.covers(a, t, x, false)?);
        }
        Some(Bool::or(z3ctx(), &parts.iter().collect::<Vec<_>>()))
    }

    fn sat(&self, extra: &[Z3Bool]) -> Result<Option<check::Counterexample>, ()> {
        let mut all = self.facts.clone();
        all.extend(extra.iter().cloned());
        // `satisfiable` folds unsat and unknown together; ask `prove(false)` to tell them apart.
        match check::prove(
            self.tr,
            &all,
            &Bool::from_bool(z3ctx(), false),
            self.timeout,
        ) {
            check::Answer::Proved => Ok(None),
            check::Answer::Refuted(cx) => Ok(Some(cx)),
            check::Answer::Unknown(_) => Err(()),
        }
    }

    /// Can the atoms' total at some cell exceed 1 (witness encoding)?
    fn may_exceed_one(&mut self, atoms: &[&Atom]) -> Result<bool, ()> {
        let c = z3ctx();
        let x = self.tr.fresh_int("cell");
        let mut cons = Vec::new();
        let mut sum = Vec::new();
        for a in atoms {
            let t = self.tr.fresh_int("thread");
            let b = Bool::fresh_const(c, "w");
            let cov = self.covers(a, &t, &x, true).ok_or(())?;
            cons.push(b.implies(&Bool::and(c, &[&(self.range_of)(&t), &cov])));
            let Frac::Rat(n, d) = &a.frac else {
                return Err(());
            };
            let v = Real::from_real(c, n.to_i32().ok_or(())?, d.to_i32().ok_or(())?);
            sum.push(b.ite(&v, &Real::from_real(c, 0, 1)));
        }
        let total = Real::add(c, &sum.iter().collect::<Vec<_>>());
        cons.push(total.gt(&Real::from_real(c, 1, 1)));
        Ok(self.sat(&cons)?.is_some())
    }

    /// Every atom must be injective in (thread, binders) on its guard.
    fn injective(&mut self, a: &Atom) -> Result<bool, ()> {
        let c = z3ctx();
        let x = self.tr.fresh_int("cell");
        let t1 = self.tr.fresh_int("thread");
        let t2 = self.tr.fresh_int("thread");
        let c1 = self.covers(a, &t1, &x, false).ok_or(())?;
        let c2 = self.covers(a, &t2, &x, false).ok_or(())?;
        let q = [
            (self.range_of)(&t1),
            (self.range_of)(&t2),
            c1,
            c2,
            t1._eq(&t2).not(),
        ];
        let _ = c;
        // Binder-level injectivity within one thread is left to the input's own verification.
        Ok(self.sat(&q)?.is_none())
    }

    fn junction(
        &mut self,
        k1: &Kernel,
        k2: &Kernel,
        ts: Option<&Z3Int>,
    ) -> Result<(Kernel, bool), JunctionError> {
        let unknown = |what: &str| {
            JunctionError::Diag(
                Diagnostic::error("A0020", format!("the solver could not decide {what}"))
                    .with_help("simplify the kernel contracts or raise --z3-timeout"),
            )
        };
        // Arrays in order of first appearance.
        let mut arrays: Vec<String> = Vec::new();
        for a in k1.pre.iter().chain(&k1.post).chain(&k2.pre).chain(&k2.post) {
            if !arrays.contains(&a.array) {
                arrays.push(a.array.clone());
            }
        }
        // Opaque resources on arrays of both kernels cannot be analysed.
        for cr in k1
            .carried_pre
            .iter()
            .chain(&k1.carried_post)
            .chain(&k2.carried_pre)
            .chain(&k2.carried_post)
        {
            let in1 = |n: &String| k1.pre.iter().chain(&k1.post).any(|a| &a.array == n);
            let in2 = |n: &String| k2.pre.iter().chain(&k2.post).any(|a| &a.array == n);
            if cr.arrays.iter().any(|n| in1(n) && in2(n)) {
                return Err(JunctionError::Diag(
                    Diagnostic::error(
                        "A604",
                        format!(
                            "cannot fuse: the resource `{}` mentions an array both kernels use",
                            cr.text
                        ),
                    )
                    .with_help("express the permission with Perm(a[i], π) atoms"),
                ));
            }
        }
        let mut pre = Vec::new();
        let mut post = Vec::new();
        let mut dp_arrays = Vec::new();
        for arr in &arrays {
            let sel = |v: &[Atom], o: u8| -> Vec<Atom> {
                v.iter()
                    .filter(|a| &a.array == arr)
                    .cloned()
                    .map(|mut a| {
                        a.origin = o;
                        a
                    })
                    .collect()
            };
            let (p1, q1, p2, q2) = (
                sel(&k1.pre, 1),
                sel(&k1.post, 1),
                sel(&k2.pre, 2),
                sel(&k2.post, 2),
            );
            let in1 = !(p1.is_empty() && q1.is_empty());
            let in2 = !(p2.is_empty() && q2.is_empty());
            if !(in1 && in2) {
                pre.extend(p1.into_iter().chain(p2));
                post.extend(q1.into_iter().chain(q2));
                continue;
            }
            for a in p1.iter().chain(&q1).chain(&p2).chain(&q2) {
                if !self
                    .injective(a)
                    .map_err(|_| unknown("whether a permission is injective"))?
                {
                    return Err(JunctionError::Diag(
                        Diagnostic::error("A604", format!("cannot fuse: `{}` gives two threads the same cell", a.print()))
                            .with_help("kernel permissions must be per-thread (injective in the thread variable)"),
                    ));
                }
            }
            let cperm = |v: &[Atom], what: &str| -> Result<Option<Frac>, JunctionError> {
                let Some(f0) = v.first().map(|a| a.frac.clone()) else {
                    return Ok(None);
                };
                if let Some(b) = v.iter().find(|a| a.frac != f0) {
                    return Err(JunctionError::Diag(
                        Diagnostic::error("A605", format!("cannot fuse: the {what} of array `{arr}` use different fractions ({} and {})", f0.text(), b.frac.text()))
                            .with_help("use one fraction per array in each kernel's pre- and postcondition"),
                    ));
                }
                Ok(Some(f0))
            };
            let c_p1 = cperm(&p1, "preconditions")?;
            let c_q1 = cperm(&q1, "postconditions")?;
            let c_p2 = cperm(&p2, "preconditions")?;
            let zero = Frac::rat(BigInt::zero(), BigInt::one());
            let one = Frac::rat(BigInt::one(), BigInt::one());

            // SAME: for every thread, P2 and Q1 cover the same cells.
            let same = {
                let t = self.tr.fresh_int("thread");
                let x = self.tr.fresh_int("cell");
                let r1: Vec<&Atom> = p2.iter().collect();
                let r2: Vec<&Atom> = q1.iter().collect();
                let a = self
                    .covers_any(&r1, &t, &x)
                    .ok_or_else(|| unknown("a permission pattern"))?;
                let b = self
                    .covers_any(&r2, &t, &x)
                    .ok_or_else(|| unknown("a permission pattern"))?;
                let q = [(self.range_of)(&t), a._eq(&b).not()];
                self.sat(&q)
                    .map_err(|_| unknown("whether the kernels use the same cells"))?
                    .is_none()
            };
            let all: Vec<&Atom> = p1.iter().chain(&p2).collect();
            let budget = !self
                .may_exceed_one(&all)
                .map_err(|_| unknown("the permission budget"))?;
            let w1 = p1.iter().any(|a| a.frac.is_write());
            let w2 = p2.iter().any(|a| a.frac.is_write());
            let cp1 = c_p1.clone().unwrap_or(zero.clone());
            let cq1 = c_q1.clone().unwrap_or(zero.clone());
            let cp2 = c_p2.clone().unwrap_or(zero.clone());
            let mut dp = false;
            if same {
                // Case S: the deficit from the start, the leftover at the end.
                pre.extend(p1.iter().cloned());
                let deficit = cp2.combine(&cq1, true);
                if deficit.positive() == Some(true) {
                    pre.extend(p2.iter().map(|a| a.with_frac(deficit.clone())));
                }
                post.extend(q2.iter().cloned());
                let left = cq1.combine(&cp2, true);
                if left.positive() == Some(true) {
                    post.extend(q1.iter().map(|a| a.with_frac(left.clone())));
                }
            } else if budget {
                pre.extend(p1.iter().cloned().chain(p2.iter().cloned()));
                post.extend(q1.iter().cloned().chain(q2.iter().cloned()));
            } else if !w1 && !w2 {
                let n = (p1.len() + p2.len()).max(1);
                let f = Frac::rat(BigInt::one(), BigInt::from(n));
                pre.extend(p1.iter().chain(&p2).map(|a| a.with_frac(f.clone())));
                post.extend(q1.iter().chain(&q2).map(|a| a.with_frac(f.clone())));
            } else if w1 {
                dp = true;
                pre.extend(p1.iter().cloned());
                post.extend(q2.iter().cloned());
                if !w2 {
                    let left = one.combine(&cp2, true);
                    post.extend(q1.iter().map(|a| a.with_frac(left.clone())));
                }
            } else {
                dp = true;
                let f = one.combine(&cp1, true);
                pre.extend(p1.iter().cloned());
                pre.extend(p2.iter().map(|a| a.with_frac(f.clone())));
                post.extend(q2.iter().cloned());
            }
            if dp {
                dp_arrays.push(arr.clone());
                if let Some(ts) = ts {
                    // Inter-block: a cell touched by t1 in kernel 1 and t2 in kernel 2, one writing,
                    // with t1 and t2 in different blocks.
                    let t1 = int_named(self.tr, "thread in kernel 1");
                    let t2 = int_named(self.tr, "thread in kernel 2");
                    let x = int_named(self.tr, "cell");
                    let k1all: Vec<&Atom> = p1.iter().chain(&q1).collect();
                    let k1w: Vec<&Atom> = p1.iter().filter(|a| a.frac.is_write()).collect();
                    let k2all: Vec<&Atom> = p2.iter().collect();
                    let k2w: Vec<&Atom> = p2.iter().filter(|a| a.frac.is_write()).collect();
                    let c = z3ctx();
                    let f = Bool::from_bool(c, false);
                    let a1 = self
                        .covers_any(&k1all, &t1, &x)
                        .ok_or_else(|| unknown("a permission pattern"))?;
                    let w1c = if k1w.is_empty() {
                        f.clone()
                    } else {
                        self.covers_any(&k1w, &t1, &x)
                            .ok_or_else(|| unknown("a permission pattern"))?
                    };
                    let a2 = self
                        .covers_any(&k2all, &t2, &x)
                        .ok_or_else(|| unknown("a permission pattern"))?;
                    let w2c = if k2w.is_empty() {
                        f
                    } else {
                        self.covers_any(&k2w, &t2, &x)
                            .ok_or_else(|| unknown("a permission pattern"))?
                    };
                    let conflict = Bool::or(
                        c,
                        &[&Bool::and(c, &[&w1c, &a2]), &Bool::and(c, &[&a1, &w2c])],
                    );
                    let lo = Int::from_i64(c, 0);
                    let _ = lo;
                    let q = [
                        (self.range_of)(&t1),
                        (self.range_of)(&t2),
                        conflict,
                        t1.div(ts)._eq(&t2.div(ts)).not(),
                    ];
                    match self.sat(&q) {
                        Ok(Some(cx)) => {
                            let pick = |n: &str| cx.get(n).unwrap_or("?").to_string();
                            return Err(JunctionError::InterBlock(
                                format!("array `{arr}` is written by one thread and accessed by another in a different block"),
                                format!(
                                    "counterexample: thread {} of the kernel(s) fused so far and thread {} of the next kernel both access {arr}[{}]",
                                    pick("thread in kernel 1"),
                                    pick("thread in kernel 2"),
                                    pick("cell")
                                ),
                            ));
                        }
                        Ok(None) => {}
                        Err(()) => {
                            return Err(unknown("whether the dependency crosses thread blocks"))
                        }
                    }
                }
            }
        }
        let dp = !dp_arrays.is_empty();

        // Functional conjuncts (Algorithm 3). A cell kernel 1 may write is an array it holds
        // write permission on; a conjunct about such an array describes kernel 1's result, so
        // it cannot be a precondition of the fused kernel.
        let w1_arrays: Vec<&String> = k1
            .pre
            .iter()
            .filter(|a| a.frac.is_write())
            .map(|a| &a.array)
            .collect();
        let w2_arrays: Vec<&String> = k2
            .pre
            .iter()
            .filter(|a| a.frac.is_write())
            .map(|a| &a.array)
            .collect();
        let fp2_kept: Vec<Func> = k2
            .fpre
            .iter()
            .filter(|c| !c.arrays.iter().any(|a| w1_arrays.contains(&a)))
            .cloned()
            .collect();
        let fq1_kept: Vec<Func> = k1
            .fpost
            .iter()
            .filter(|c| !c.arrays.iter().any(|a| w2_arrays.contains(&a)))
            .cloned()
            .collect();
        let mut fpre = k1.fpre.clone();
        for c in &fp2_kept {
            if !fpre.iter().any(|f| f.text == c.text) {
                fpre.push(c.clone());
            }
        }
        let mut fpost = fq1_kept.clone();
        for c in &k2.fpost {
            if !fpost.iter().any(|f| f.text == c.text) {
                fpost.push(c.clone());
            }
        }

        let pre = merge_dups(pre);
        let post = merge_dups(post);
        // Budget self-check: the fused precondition never asks more than 1 of a cell.
        for arr in &arrays {
            let atoms: Vec<&Atom> = pre.iter().filter(|a| &a.array == arr).collect();
            if atoms.len() > 1
                && self
                    .may_exceed_one(&atoms)
                    .map_err(|_| unknown("the fused budget"))?
            {
                return Err(JunctionError::Diag(
                    Diagnostic::error("A608", format!("self-check failed: the fused precondition may ask more than write permission on a cell of `{arr}`"))
                        .with_help("the kernels' permission patterns are outside what Algorithms 1 and 2 handle"),
                ));
            }
        }

        // Body (Algorithm 4).
        let mut body = k1.body.clone();
        if dp {
            let mut req: Vec<String> = Vec::new();
            let mut ens: Vec<String> = Vec::new();
            let push = |v: &mut Vec<String>, s: String| {
                if !v.contains(&s) {
                    v.push(s)
                }
            };
            for a in &k1.post {
                push(&mut req, a.print());
            }
            for a in pre.iter().filter(|a| a.origin == 2) {
                push(&mut req, a.print());
            }
            for c in k1.carried_post.iter().chain(&k2.carried_pre) {
                push(&mut req, c.text.clone());
            }
            for c in k1.fpost.iter().chain(&fp2_kept) {
                push(&mut req, c.text.clone());
            }
            for a in pre.iter().filter(|a| a.origin == 2) {
                push(&mut req, a.frame());
            }
            for a in &k2.pre {
                push(&mut ens, a.print());
            }
            for a in post.iter().filter(|a| a.origin == 1) {
                push(&mut ens, a.print());
            }
            for c in k1.carried_post.iter().chain(&k2.carried_pre) {
                push(&mut ens, c.text.clone());
            }
            for c in k2.fpre.iter().chain(&fq1_kept) {
                push(&mut ens, c.text.clone());
            }
            for a in pre.iter().filter(|a| a.origin == 2) {
                push(&mut ens, a.frame());
            }
            body.push("barrier(\u{0}LABEL) {".into());
            for r in req {
                body.push(format!("\u{1}requires {r};"));
            }
            for e in ens {
                body.push(format!("\u{1}ensures {e};"));
            }
            body.push("}".into());
        } else {
            for c in &k1.post_texts {
                body.push(format!("assert {c};"));
            }
        }
        // Kernel 2's own barriers are relabelled to the fused block.
        let l2 = k2.label.clone();
        for line in &k2.body {
            let line = match &l2 {
                Some(l) if line.contains("barrier") => rename_tokens(line, l, "\u{0}LABEL"),
                _ => line.clone(),
            };
            body.push(line);
        }
        let mut carried_pre = k1.carried_pre.clone();
        carried_pre.extend(k2.carried_pre.iter().cloned());
        let mut carried_post = k1.carried_post.clone();
        carried_post.extend(k2.carried_post.iter().cloned());
        let mut post_texts: Vec<String> = Vec::new();
        let fused = Kernel {
            label: k1.label.clone(),
            tvar: k1.tvar.clone(),
            iter_text: k1.iter_text.clone(),
            pre: pre
                .into_iter()
                .map(|mut a| {
                    a.origin = 0;
                    a
                })
                .collect(),
            post: post
                .into_iter()
                .map(|mut a| {
                    a.origin = 0;
                    a
                })
                .collect(),
            fpre,
            fpost,
            carried_pre,
            carried_post,
            post_texts: Vec::new(),
            body,
        };
        for (kw, t) in print_contract(&fused) {
            if kw != "requires" {
                post_texts.push(t);
            }
        }
        let mut fused = fused;
        fused.post_texts = post_texts;
        Ok((fused, dp))
    }
}

fn int_named(tr: &mut Translator, name: &str) -> Z3Int {
    match tr.var(name) {
        Term::Int(i) => i,
        _ => tr.fresh_int(name),
    }
}

fn restore(map: &mut std::collections::HashMap<String, Term>, name: &str, prev: Option<Term>) {
    match prev {
        Some(p) => {
            map.insert(name.to_string(), p);
        }
        None => {
            map.remove(name);
        }
    }
}

/// Add up the fractions of atoms on the same cells (e.g. a kept half plus a leftover half).
fn merge_dups(v: Vec<Atom>) -> Vec<Atom> {
    let mut out: Vec<Atom> = Vec::new();
    for a in v {
        if let Some(b) = out.iter_mut().find(|b| b.same_shape(&a)) {
            if let (Frac::Rat(..), Frac::Rat(..)) = (&a.frac, &b.frac) {
                let f = b.frac.combine(&a.frac, false);
                *b = b.with_frac(f);
                if b.origin != a.origin {
                    b.origin = 0;
                }
                continue;
            }
        }
        out.push(a);
    }
    // A merged atom may have returned to a source spelling; otherwise it is re-printed.
    out
}

/// The fused contract: permission clauses grouped per array, then carried resources, then
/// functional clauses; what is both pre and post prints as `context`.
fn print_contract(k: &Kernel) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let mut arrays: Vec<&String> = Vec::new();
    for a in k.pre.iter().chain(&k.post) {
        if !arrays.contains(&&a.array) {
            arrays.push(&a.array);
        }
    }
    for arr in arrays {
        let pre: Vec<String> = k
            .pre
            .iter()
            .filter(|a| &a.array == arr)
            .map(Atom::print)
            .collect();
        let post: Vec<String> = k
            .post
            .iter()
            .filter(|a| &a.array == arr)
            .map(Atom::print)
            .collect();
        both_lists(&pre, &post, &mut out);
    }
    let cp: Vec<String> = k.carried_pre.iter().map(|f| f.text.clone()).collect();
    let cq: Vec<String> = k.carried_post.iter().map(|f| f.text.clone()).collect();
    both_lists(&cp, &cq, &mut out);
    let fp: Vec<String> = k.fpre.iter().map(|f| f.text.clone()).collect();
    let fq: Vec<String> = k.fpost.iter().map(|f| f.text.clone()).collect();
    both_lists(&fp, &fq, &mut out);
    out
}

fn both_lists(pre: &[String], post: &[String], out: &mut Vec<(&'static str, String)>) {
    for p in pre {
        if post.contains(p) {
            out.push(("context", p.clone()));
        } else {
            out.push(("requires", p.clone()));
        }
    }
    for q in post {
        if !pre.contains(q) {
            out.push(("ensures", q.clone()));
        }
    }
}
