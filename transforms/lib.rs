//! The six optimizations (the rewrite stage of the pipeline), one folder each, listed in
//! [`registry`].
//!
//! An optimization is a type implementing [`Optimization`]: its [`Meta`] (names, parameter
//! schema, the constructs it applies to), `check` (applicability, from the program's own
//! annotations, with Z3) and `rewrite` (the edits). Both get a [`Ctx`] (the current text, its
//! parse, layout, fresh names, solver settings) and a selected [`Site`]. "Not applicable" is a
//! normal answer (`Err` with diagnostics), never a panic. Optimizations only return edits over
//! `Ctx::src`; they never see the annotation that requested them (the driver removes consumed
//! annotations itself, the same way for all six).

// Refusals carry whole diagnostics in `Err` (the cold path); AST enums keep large variants
// inline. Boxing them would only add noise (the same allowance as every crate of the workspace).
#![allow(clippy::result_large_err, clippy::large_enum_variant)]

/// `impl Optimization for $ty` with the layout every optimization folder has: its `static META`,
/// `check::check` returning `$plan`, and `rewrite::rewrite`. Each `META` is written as a table
/// (`#[rustfmt::skip]`): the parameters stand between what names the optimization and where it
/// applies, one parameter a line.
macro_rules! optimization {
    ($ty:ident, $plan:ty) => {
        impl $crate::Optimization for $ty {
            type Plan<'a> = $plan;

            fn meta(&self) -> &'static $crate::Meta {
                &META
            }

            fn check<'a>(
                &self,
                ctx: &mut $crate::Ctx<'a>,
                site: &::analyze::sites::Site,
                params: &$crate::Params,
            ) -> Result<Self::Plan<'a>, Vec<::diag::Diagnostic>> {
                check::check(ctx, site, params)
            }

            fn rewrite<'a>(
                &self,
                ctx: &mut $crate::Ctx<'a>,
                plan: Self::Plan<'a>,
            ) -> $crate::Outcome {
                rewrite::rewrite(ctx, plan)
            }
        }
    };
}

pub mod driver;
mod explicit;
pub mod params;
pub mod registry;
pub mod sweep;

/// Declares each optimization's folder as a module and lists its type in [`registry::ALL`].
macro_rules! optimizations {
    ($($folder:ident :: $ty:ident),* $(,)?) => {
        $(pub mod $folder;)*
        static REGISTERED: &[&dyn Registered] = &[$(&$folder::$ty),*];
    };
}

// The optimizations, one line each, in Alpinist's application order (optimizations.md §8):
// in-source annotations are applied by kind in this order. Adding an optimization is its
// folder, its spec, its fixtures and its line here.
optimizations! {
    linearize::Linearize,
    fuse::Fuse,
    merge::Merge,
    prefetch::Prefetch,
    tile::Tile,
    unroll::Unroll,
}

use analyze::names::NameGen;
use analyze::sites::{find_method, Site, SiteKind};
use diag::Diagnostic;
use edit::{EditSet, Layout};
use front::ast::*;
use front::{Dialect, Parsed};
pub use params::{Param, Params};

/// The largest factor unrolling and merging accept. Their output holds one copy of the loop
/// body per unit of the factor, and their checks build one guard instance per unit before
/// asking Z3, so a factor such as 2^63 (found by the fuzzer, `fixtures/fuzz/`) never finished.
/// Far above any useful factor: beyond it A109 / A201 refuse, the loop left unchanged.
pub const MAX_FACTOR: u64 = 1024;

/// What an optimization is, for everything but its algorithm: names, where it applies, its
/// parameters. One static value per optimization.
#[derive(Debug)]
pub struct Meta {
    /// The command-line name (`--opt unroll`), also accepted in annotations.
    pub name: &'static str,
    /// Alpinist's annotation word (`loop_unroll`).
    pub keyword: &'static str,
    /// One line for help texts.
    pub summary: &'static str,
    /// The constructs its annotation may annotate and `--at` may select, in order of preference.
    pub sites: &'static [SiteKind],
    /// With `--at` inside a method that is not a target itself: which of the method's
    /// top-level `par` blocks it selects.
    pub method_par: MethodPar,
    /// Rewrites the whole construct: two such annotations cannot share one (A0006).
    pub exclusive: bool,
    /// Its rewrite allocates fresh names (steps must then run in application order).
    pub allocates_names: bool,
    /// It works on loops in their explicit form: a v2 ranged `for` is checked and rewritten as
    /// the `for` with initialiser, guard and update it stands for (optimizations.md §1.4).
    pub explicit_loops: bool,
    /// Where its annotation belongs, completing "place `gpuopt …` …" (A0004).
    pub placement: &'static str,
    /// The help for an annotation of it that annotates nothing (A0002).
    pub dangling_help: &'static str,
    /// The parameters: annotation operands first, in order, then command-line-only ones.
    pub params: &'static [Param],
    /// What validation needs to run ORIG and OPT on one input when the optimization changes the
    /// entry method's signature: linearization's reader of the matrix layout its annotation
    /// names. Validation is a later stage and cannot import it; the CLI passes it in
    /// ([`registry::matrix_layout`]).
    pub adapter: Option<MatrixLayout>,
    /// The parameter values `sweep` and `suggest` try at a site (the folder's `sweep.rs`);
    /// `None`: the defaults, when they suffice.
    pub candidates: Option<fn(&sweep::SweepSite) -> sweep::Candidates>,
    /// How a `par` site of a CUDA kernel is rewritten instead: at the kernels' launches (fusion
    /// merges two launched kernels, `transforms/fuse/cuda.rs`). `None`: as any site.
    pub cuda_par: Option<fn(&mut Ctx, &Site, &Params) -> Outcome>,
    /// Its refusal codes: `A{codes + 1}` to `A{codes + 99}` (crates/diag/src/codes/optimize.md;
    /// merging also reports unrolling's loop-shape codes A101–A106).
    pub codes: u16,
    /// Whether the rewrite may change the method contract of its site (linearization, tiling);
    /// the others leave the contract's text untouched (tested on the CUDA fixtures).
    pub rewrites_contract: bool,
}

/// Reads `(matrix, row-major, (rows, cols))` from an annotation of the optimization.
pub type MatrixLayout = fn(&str, Dialect, &Annotation) -> Option<(String, bool, (Expr, Expr))>;

/// How `--at` in a method body selects a `par` block for an optimization of `par` blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodPar {
    /// It does not: the line must be in the block.
    None,
    /// The method's only top-level `par` block.
    Only,
    /// The first top-level `par` block.
    First,
}

/// An optimization. Implementations live in `transforms/<name>/` and are listed once in
/// [`registry::ALL`].
pub trait Optimization: Sync + 'static {
    /// What `check` hands to `rewrite`: everything it established about the site.
    type Plan<'a>;

    fn meta(&self) -> &'static Meta;

    /// Whether the optimization applies at `site` with `params`, proved from the program's
    /// annotations; `Err` is a refusal with at least one error diagnostic and a help line.
    fn check<'a>(
        &self,
        ctx: &mut Ctx<'a>,
        site: &Site,
        params: &Params,
    ) -> Result<Self::Plan<'a>, Vec<Diagnostic>>;

    /// The edits over `ctx.src` that carry out a checked plan, with warnings and notes.
    fn rewrite<'a>(&self, ctx: &mut Ctx<'a>, plan: Self::Plan<'a>) -> Outcome;

    /// The expressions over program variables among the parameters (a rewrite that renames or
    /// reshapes those variables must rewrite them in a pending annotation too).
    fn reads<'p>(&self, params: &'p Params) -> Vec<&'p Expr> {
        params.expressions()
    }
}

/// The object-safe face of an [`Optimization`], which the registry holds.
pub trait Registered: Sync {
    fn meta(&self) -> &'static Meta;
    /// `check`, then `rewrite`.
    fn apply(&self, ctx: &mut Ctx, site: &Site, params: &Params) -> Outcome;
    fn reads<'p>(&self, params: &'p Params) -> Vec<&'p Expr>;
}

impl<T: Optimization> Registered for T {
    fn meta(&self) -> &'static Meta {
        Optimization::meta(self)
    }

    fn apply(&self, ctx: &mut Ctx, site: &Site, params: &Params) -> Outcome {
        if Optimization::meta(self).explicit_loops {
            if let Some(out) = explicit::via_explicit_form(ctx, site, params) {
                return out;
            }
        }
        let plan = self.check(ctx, site, params)?;
        self.rewrite(ctx, plan)
    }

    fn reads<'p>(&self, params: &'p Params) -> Vec<&'p Expr> {
        Optimization::reads(self, params)
    }
}

/// A registered optimization.
pub type Opt = &'static dyn Registered;

impl std::fmt::Debug for dyn Registered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.meta().name)
    }
}

impl PartialEq for dyn Registered {
    fn eq(&self, other: &Self) -> bool {
        self.meta().name == other.meta().name
    }
}

impl Eq for dyn Registered {}

/// Everything a transformation may read, plus the name generator it must use.
pub struct Ctx<'a> {
    /// The current program text (spans refer to it).
    pub src: &'a str,
    pub parsed: &'a Parsed,
    pub layout: Layout,
    pub names: &'a mut NameGen,
    /// Per-query Z3 timeout in milliseconds.
    pub timeout_ms: u32,
    /// The annotation that requested this step, if any (its span refers to the text *before*
    /// the driver removed it; use it only for messages).
    pub annotation_text: Option<String>,
}

impl Ctx<'_> {
    pub fn program(&self) -> &Program {
        &self.parsed.program
    }

    pub fn dialect(&self) -> Dialect {
        self.parsed.dialect
    }

    /// The method (and class) a site belongs to.
    pub fn method_of(&self, site: &Site) -> Option<(Option<&Class>, &Method)> {
        find_method(self.program(), site.class.as_deref(), &site.method)
    }

    /// Source text of a span.
    pub fn text(&self, span: front::Span) -> &str {
        span.text(self.src)
    }
}

/// A successful step: the edits (over `Ctx::src`) and any warnings or notes.
#[derive(Debug, Default)]
pub struct Applied {
    pub edits: EditSet,
    pub diagnostics: Vec<Diagnostic>,
}

/// `Err` is a refusal: at least one error diagnostic explaining why, with a help line.
pub type Outcome = Result<Applied, Vec<Diagnostic>>;

/// Run one optimization at a site: `check`, then `rewrite`.
pub fn run(ctx: &mut Ctx, site: &Site, params: &Params) -> Outcome {
    // A CUDA kernel's thread block has no `par` header to rewrite: its threads are set by the
    // launch. An optimization that works at the launches says so in its `Meta` (fusion merges
    // two kernels there); tiling rewrites the launches itself (transforms/tile/cuda.rs).
    if let Some(at_launches) = params.opt.meta().cuda_par {
        if site.kind == SiteKind::Par && front::looks_like_cuda(ctx.src) {
            return at_launches(ctx, site, params);
        }
    }
    params.opt.apply(ctx, site, params)
}
