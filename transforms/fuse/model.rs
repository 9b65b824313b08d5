//! The model of one kernel: its contract split into permission atoms, functional conjuncts and
//! carried resources (optimizations.md §7d "Normalisation"), its body as text, all with the
//! thread variables already renamed to the fused kernel's.

use super::check::refuse_shape;
use analyze::scope::mentioned_names;
use diag::Diagnostic;
use edit::indent_at;
use front::ast::*;
use front::lexer::{lex, TokKind};
use front::parser::parse_expr_text;
use front::span::Span;
use front::visit::{walk_expr, walk_stmts};
use front::Dialect;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};
use std::collections::{BTreeSet, HashMap};

/// A permission amount. Only literal fractions are analysed (A604 otherwise), so it is exact.
pub(super) type Frac = BigRational;

/// The amount a literal permission expression denotes, if it is one.
fn frac_of_expr(e: &Expr) -> Option<Frac> {
    fn lit(e: &Expr) -> Option<BigInt> {
        match &e.kind {
            ExprKind::Int(v) => Some(v.clone()),
            _ => None,
        }
    }
    match &e.kind {
        ExprKind::Write => Some(Frac::one()),
        ExprKind::Int(v) => Some(Frac::from_integer(v.clone())),
        ExprKind::Binary(BinOp::Frac, l, r) => match (lit(l), lit(r)) {
            (Some(a), Some(b)) if !b.is_zero() => Some(BigRational::new(a, b)),
            _ => None,
        },
        _ => None,
    }
}

/// PVL spelling of an amount: `write`, an integer, or `p\q`.
pub(super) fn frac_text(f: &Frac) -> String {
    if f.is_one() {
        "write".into()
    } else if f.is_integer() {
        f.numer().to_string()
    } else {
        format!("{}\\{}", f.numer(), f.denom())
    }
}

/// One permission atom: `(\forall* binders; guards ==> Perm(array[index], frac))`.
#[derive(Clone, Debug)]
pub(super) struct Atom {
    pub array: String,
    /// `(declaration text, name)` of each `\forall*` binder.
    pub binders: Vec<(String, String)>,
    /// Quantifier conditions and guards, as text (conjoined).
    pub guards: Vec<String>,
    pub loc: String,
    pub index: String,
    pub frac: Frac,
    /// The conjunct as written, when it is exactly this atom at its original fraction.
    pub orig: Option<String>,
    /// The source conjunct the atom comes from (labels of diagnostics).
    pub span: Span,
}

impl Atom {
    /// `[guards ==>] loc == \old(loc)`: the location keeps its value across a barrier. Used for
    /// permissions a thread holds for the second kernel since the start: the first kernel cannot
    /// have changed them, but a thread keeps only what a barrier ensures, values included.
    pub fn frame(&self) -> String {
        self.wrap(format!("{} == \\old({})", self.loc, self.loc), "\\forall")
    }

    /// `inner` under this atom's guards and binders (`quant` quantifies the binders).
    pub fn wrap(&self, inner: String, quant: &str) -> String {
        let qguards: Vec<String> = self.guards.iter().map(|g| paren_if_needed(g)).collect();
        if self.binders.is_empty() {
            if qguards.is_empty() {
                inner
            } else {
                format!("{} ==> {}", qguards.join(" && "), inner)
            }
        } else {
            let decls: Vec<&str> = self.binders.iter().map(|(d, _)| d.as_str()).collect();
            let cond = if qguards.is_empty() { "true".to_string() } else { qguards.join(" && ") };
            format!("({quant} {}; {}; {})", decls.join(", "), cond, inner)
        }
    }

    pub fn print(&self) -> String {
        if let Some(o) = &self.orig {
            return o.clone();
        }
        let perm = format!("Perm({}, {})", self.loc, frac_text(&self.frac));
        self.wrap(perm, "\\forall*")
    }

    /// The same permission: array, binders, guards, location and amount (not its spelling
    /// or origin), so both atoms cover the same cells with the same amount for every thread.
    pub fn same_as(&self, other: &Atom) -> bool {
        self.array == other.array
            && self.binders == other.binders
            && self.guards == other.guards
            && self.loc == other.loc
            && self.index == other.index
            && self.frac == other.frac
    }

    pub fn with_frac(&self, f: Frac) -> Atom {
        let mut a = self.clone();
        if a.frac != f {
            a.orig = None;
        }
        a.frac = f;
        a
    }

    /// The atom restricted to the cells where the extra guards hold.
    pub fn restricted(&self, extra: &[String]) -> Atom {
        let mut a = self.clone();
        if !extra.is_empty() {
            a.orig = None;
            a.guards.extend(extra.iter().cloned());
        }
        a
    }

    /// Same cells (syntactically, after renaming): used to add up fractions of duplicates.
    pub fn same_shape(&self, o: &Atom) -> bool {
        self.array == o.array
            && self.binders == o.binders
            && self.guards == o.guards
            && self.loc == o.loc
    }

    pub fn is_write(&self) -> bool {
        self.frac.is_one()
    }
}

pub(super) fn paren_if_needed(g: &str) -> String {
    if g.contains("==>") || g.contains('?') || g.contains("||") {
        format!("({g})")
    } else {
        g.to_string()
    }
}

/// A functional conjunct (or an opaque resource carried unchanged).
#[derive(Clone, Debug)]
pub(super) struct Func {
    pub text: String,
    /// Arrays it mentions (for Algorithm 3's read sets).
    pub arrays: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub(super) struct Kernel {
    pub label: Option<String>,
    /// The `par` keyword of the kernel (diagnostics).
    pub keyword: Span,
    /// The iterator declarations of the header, renamed (`int t = 0 .. n, …`).
    pub iter_text: String,
    pub pre: Vec<Atom>,
    pub post: Vec<Atom>,
    pub fpre: Vec<Func>,
    pub fpost: Vec<Func>,
    pub carried_pre: Vec<Func>,
    pub carried_post: Vec<Func>,
    /// Every postcondition conjunct in clause order (for the assertions of Algorithm 4), with
    /// the arrays its permission atoms are on.
    pub post_texts: Vec<(String, Vec<String>)>,
    /// Body statements, one line each, indentation relative to the body.
    pub body: Vec<String>,
    /// Locals declared at the top level of the body (they stay in scope for a body joined after
    /// it), and every name the body mentions (renamed).
    pub decls: BTreeSet<String>,
    pub mentions: BTreeSet<String>,
    /// Arrays mentioned by the contracts of barriers inside the body.
    pub barrier_arrays: BTreeSet<String>,
    /// A kernel of the input (not the result of an earlier junction): the paper's assumptions
    /// (A605, A606) are checked on it.
    pub original: bool,
}

impl Kernel {
    pub fn arrays(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for a in self.pre.iter().chain(&self.post) {
            if !out.contains(&a.array) {
                out.push(a.array.clone());
            }
        }
        out
    }

    pub fn uses(&self, array: &str) -> bool {
        self.pre.iter().chain(&self.post).any(|a| a.array == array)
    }
}

// ---------------------------------------------------------------------------------------------
// Renaming
// ---------------------------------------------------------------------------------------------

pub(super) fn has_token(text: &str, name: &str) -> bool {
    lex(text).tokens.iter().any(|t| matches!(t.kind, TokKind::Word) && t.span.text(text) == name)
}

/// Replace identifier tokens simultaneously (`i → j, j → i` swaps correctly).
pub(super) fn rename_tokens(text: &str, map: &[(String, String)]) -> String {
    let map: HashMap<&str, &str> =
        map.iter().filter(|(f, t)| f != t).map(|(f, t)| (f.as_str(), t.as_str())).collect();
    if map.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for t in lex(text).tokens {
        if !matches!(t.kind, TokKind::Word) {
            continue;
        }
        if let Some(to) = map.get(t.span.text(text)) {
            out.push_str(&text[last..t.span.start()]);
            out.push_str(to);
            last = t.span.end();
        }
    }
    out.push_str(&text[last..]);
    out
}

// ---------------------------------------------------------------------------------------------
// Building the model of one kernel from its source text
// ---------------------------------------------------------------------------------------------

/// The model of one `par` arm whose iterators are renamed to `tvars` (positionally).
pub(super) fn kernel_model(
    src: &str,
    dialect: Dialect,
    keyword: Span,
    arm: &ParArm,
    tvars: &[String],
    predicates: &[String],
) -> Result<Kernel, Diagnostic> {
    let map: Vec<(String, String)> =
        arm.iters.iter().zip(tvars).map(|(it, t)| (it.name.name.clone(), t.clone())).collect();
    let ren = |s: &str| rename_tokens(s, &map);
    let iter_text = match (arm.iters.first(), arm.iters.last()) {
        (Some(f), Some(l)) => ren(&src[f.span.start()..l.span.end()]),
        _ => String::new(),
    };
    let mut k = Kernel {
        label: arm.label.as_ref().map(|l| l.name.clone()),
        keyword,
        iter_text,
        original: true,
        ..Kernel::default()
    };
    // A CUDA file's contracts are read in C's spelling (`Perm(&x[i], p)`); the source text of a
    // conjunct is respelled as the front end reads it, or its permissions would not be seen.
    let c_file = front::looks_like_cuda(src);
    for c in &arm.contract {
        let Some(e) = c.expr() else { continue };
        if !(c.kind.is_pre() || c.kind.is_post()) {
            return Err(refuse_shape(c.span, "unsupported clause in a kernel contract"));
        }
        for conj in e.conjuncts() {
            let raw = conj.span.text(src);
            let text = if c_file {
                ren(&front::cuda::respell_annotation_text(raw))
            } else {
                ren(raw)
            };
            let pe = parse_expr_text(&text, dialect).map_err(|_| {
                refuse_shape(conj.span, "a contract conjunct does not re-parse after renaming")
            })?;
            let mut pieces = Vec::new();
            let mut d = Decomposer {
                text: &text,
                at: conj.span,
                guards: Vec::new(),
                binders: Vec::new(),
                out: &mut pieces,
                predicates,
            };
            d.go(&pe)?;
            // A conjunct that is one atom keeps its spelling.
            if let [Piece::Atom(a)] = pieces.as_mut_slice() {
                a.orig = Some(text.clone());
            }
            let perm_arrays: Vec<String> = pieces
                .iter()
                .filter_map(|p| match p {
                    Piece::Atom(a) => Some(a.array.clone()),
                    _ => None,
                })
                .collect();
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
                k.post_texts.push((text, perm_arrays));
            }
        }
    }
    // Body statements, re-indented relative to the block.
    if let StmtKind::Block(b) = &arm.body.kind {
        let renamed =
            |n: String| map.iter().find(|(f, _)| *f == n).map_or(n.clone(), |(_, t)| t.clone());
        for st in &b.stmts {
            if let StmtKind::Decl { vars, .. } = &st.kind {
                k.decls.extend(vars.iter().map(|v| v.name.name.clone()));
            }
            k.mentions.extend(mentioned_names(st).into_iter().map(renamed));
            walk_stmts(st, &mut |x| {
                if let StmtKind::Barrier(bar) = &x.kind {
                    for c in &bar.contract {
                        if let Some(e) = c.expr() {
                            k.barrier_arrays.extend(arrays_in(e));
                        }
                    }
                }
            });
        }
        if let (Some(f), Some(l)) = (b.stmts.first(), b.stmts.last()) {
            let text = ren(&src[f.span.start()..l.span.end()]);
            let base = indent_at(src, f.span.start()).to_string();
            for (i, line) in text.lines().enumerate() {
                let line = if i == 0 {
                    line
                } else {
                    line.strip_prefix(base.as_str()).unwrap_or(line.trim_start())
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

/// The arrays `e` names: indexed, or passed by name to a built-in resource (`\\pointer(a, n,
/// p)`) or a predicate (`cells(a, t)`), which may stand for their cells.
pub(super) fn arrays_in(e: &Expr) -> Vec<String> {
    let mut out = Vec::new();
    let mut add = |n: &str| {
        if !out.iter().any(|o: &String| o == n) {
            out.push(n.to_string());
        }
    };
    walk_expr(e, &mut |x| match &x.kind {
        ExprKind::Index(a, _) => {
            if let Some(n) = a.as_name() {
                add(n);
            }
        }
        ExprKind::Builtin(b, args) if b.is_resource() => {
            args.iter().filter_map(Expr::as_name).for_each(&mut add);
        }
        ExprKind::Call { args, .. } => args.iter().filter_map(Expr::as_name).for_each(&mut add),
        _ => {}
    });
    out
}

fn has_resource(e: &Expr, predicates: &[String]) -> bool {
    let mut r = false;
    walk_expr(e, &mut |x| match &x.kind {
        ExprKind::Builtin(b, _) => {
            r |= b.is_resource() || matches!(b, Builtin::Array | Builtin::Matrix);
        }
        ExprKind::Call { name, .. } => r |= predicates.contains(&name.name),
        _ => {}
    });
    r
}

/// Splits one contract conjunct into pieces (the normalisation table of §7d).
struct Decomposer<'a> {
    text: &'a str,
    at: Span,
    guards: Vec<String>,
    binders: Vec<(String, String)>,
    out: &'a mut Vec<Piece>,
    /// The program's predicates: a call of one is a resource (carried, not functional).
    predicates: &'a [String],
}

impl Decomposer<'_> {
    fn t(&self, x: &Expr) -> String {
        x.span.text(self.text).to_string()
    }

    fn res(&self, e: &Expr) -> bool {
        has_resource(e, self.predicates)
    }

    fn go(&mut self, e: &Expr) -> Result<(), Diagnostic> {
        match &e.kind {
            ExprKind::Binary(BinOp::And | BinOp::Star, l, r) if self.res(e) => {
                self.go(l)?;
                self.go(r)
            }
            ExprKind::Binary(BinOp::Implies, c, r) if self.res(r) => {
                self.guards.push(self.t(c));
                let res = self.go(r);
                self.guards.pop();
                res
            }
            ExprKind::Cond(c, a, b) if self.res(a) || self.res(b) => {
                self.guards.push(self.t(c));
                self.go(a)?;
                self.guards.pop();
                self.guards.push(format!("!({})", self.t(c)));
                self.go(b)?;
                self.guards.pop();
                Ok(())
            }
            ExprKind::Quant { kind: QuantKind::ForallStar, bindings, cond, body } => {
                let n = self.guards.len();
                let nb = self.binders.len();
                for b in bindings {
                    let ty = b.ty.span.text(self.text);
                    let ty = if ty.is_empty() { "int" } else { ty };
                    let decl = format!("{ty} {}", b.name.name);
                    if let Some((lo, hi)) = &b.range {
                        self.guards.push(format!("{} <= {}", self.t(lo), b.name.name));
                        self.guards.push(format!("{} < {}", b.name.name, self.t(hi)));
                    }
                    self.binders.push((decl, b.name.name.clone()));
                }
                if let Some(c) = cond {
                    self.guards.push(self.t(c));
                }
                let r = self.go(body);
                self.guards.truncate(n);
                self.binders.truncate(nb);
                r
            }
            ExprKind::Builtin(b @ (Builtin::Perm | Builtin::PointsTo | Builtin::Value), args) => {
                self.atom(e, *b, args)
            }
            _ if self.res(e) => {
                let text = wrap_guards(&self.t(e), &self.guards, &self.binders, true);
                self.out.push(Piece::Carried(Func { text, arrays: arrays_in(e) }));
                Ok(())
            }
            _ => {
                let text = wrap_guards(&self.t(e), &self.guards, &self.binders, false);
                self.out.push(Piece::Func(Func { text, arrays: arrays_in(e) }));
                Ok(())
            }
        }
    }

    fn atom(&mut self, e: &Expr, b: Builtin, args: &[Expr]) -> Result<(), Diagnostic> {
        let Some(loc) = args.first() else {
            return Err(refuse_shape(self.at, "malformed permission"));
        };
        let name = match &loc.kind {
            ExprKind::Index(arr, _) => arr.as_name(),
            _ => None,
        };
        let (ExprKind::Index(_, idx), Some(name)) = (&loc.kind, name) else {
            // Fields, matrix rows, …: not an array cell; carried unchanged (A604 if shared).
            let text = wrap_guards(&self.t(e), &self.guards, &self.binders, true);
            self.out.push(Piece::Carried(Func { text, arrays: arrays_in(e) }));
            return Ok(());
        };
        let amount = match b {
            Builtin::Value => None,
            _ => args.get(1).and_then(frac_of_expr),
        };
        let Some(frac) = amount.filter(|f| f.is_positive()) else {
            return Err(Diagnostic::error(
                "A604",
                "cannot fuse: only literal, positive permission fractions are analysed",
            )
            .with_secondary(self.at, "this permission has a symbolic or `read` fraction")
            .with_help("write the fraction as a literal such as `1\\2` or `write`"));
        };
        self.out.push(Piece::Atom(Atom {
            array: name.to_string(),
            binders: self.binders.clone(),
            guards: self.guards.clone(),
            loc: self.t(loc),
            index: self.t(idx),
            frac,
            orig: None,
            span: self.at,
        }));
        if b == Builtin::PointsTo {
            let v = args.get(2).map(|x| self.t(x)).unwrap_or_default();
            let f = format!("{} == {}", self.t(loc), v);
            self.out.push(Piece::Func(Func {
                text: wrap_guards(&f, &self.guards, &self.binders, false),
                arrays: arrays_in(e),
            }));
        }
        Ok(())
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
        let cond = if g.is_empty() { "true".into() } else { g.join(" && ") };
        format!(
            "(\\forall{} {}; {}; {})",
            if star { "*" } else { "" },
            decls.join(", "),
            cond,
            body
        )
    }
}

/// Add up the fractions of atoms on the same cells (e.g. a kept half plus a leftover half).
pub(super) fn merge_dups(v: Vec<Atom>) -> Vec<Atom> {
    let mut out: Vec<Atom> = Vec::new();
    for a in v {
        if let Some(b) = out.iter_mut().find(|b| b.same_shape(&a)) {
            let f = &b.frac + &a.frac;
            *b = b.with_frac(f);
            continue;
        }
        out.push(a);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frac(n: i64, d: i64) -> Frac {
        BigRational::new(BigInt::from(n), BigInt::from(d))
    }

    #[test]
    fn fractions_print_in_pvl() {
        assert_eq!(frac_text(&frac(1, 1)), "write");
        assert_eq!(frac_text(&frac(2, 4)), "1\\2");
        assert_eq!(frac_text(&frac(3, 4)), "3\\4");
    }

    #[test]
    fn renaming_is_simultaneous() {
        let m = vec![("i".to_string(), "j".to_string()), ("j".into(), "i".into())];
        assert_eq!(rename_tokens("a[i * 4 + j] + ij", &m), "a[j * 4 + i] + ij");
    }
}
