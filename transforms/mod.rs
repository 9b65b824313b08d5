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

/// `impl Optimization for $ty` with the layout every optimization folder has: its `static META`,
/// `check::check` returning `$plan`, and `rewrite::rewrite`. Each `META` is written as a table
/// (`#[rustfmt::skip]`): the parameters stand between what names the optimization and where it
/// applies, one parameter a line.
macro_rules! optimization {
    ($ty:ident, $plan:ty) => {
        impl $crate::transforms::Optimization for $ty {
            type Plan<'a> = $plan;

            fn meta(&self) -> &'static $crate::transforms::Meta {
                &META
            }

            fn check<'a>(
                &self,
                ctx: &mut $crate::transforms::Ctx<'a>,
                site: &$crate::analyze::sites::Site,
                params: &$crate::transforms::Params,
            ) -> Result<Self::Plan<'a>, Vec<$crate::diag::Diagnostic>> {
                check::check(ctx, site, params)
            }

            fn rewrite<'a>(
                &self,
                ctx: &mut $crate::transforms::Ctx<'a>,
                plan: Self::Plan<'a>,
            ) -> $crate::transforms::Outcome {
                rewrite::rewrite(ctx, plan)
            }
        }
    };
}

pub mod driver;
mod explicit;
pub mod params;
pub mod registry;

use crate::analyze::names::NameGen;
use crate::analyze::sites::{find_method, Site, SiteKind};
use crate::diag::Diagnostic;
use crate::edit::{EditSet, Layout};
use crate::front::ast::*;
use crate::front::{Dialect, Parsed};
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
}

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
    pub fn text(&self, span: crate::front::Span) -> &str {
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
    // launch. Fusion merges two kernels at their launches (transforms/fuse/cuda.rs); tiling
    // rewrites the launches itself (transforms/tile/cuda.rs).
    if site.kind == SiteKind::Par
        && params.opt.meta().name == "fuse"
        && crate::front::looks_like_cuda(ctx.src)
    {
        return registry::fuse::fuse_cuda_launches(ctx, site, params);
    }
    params.opt.apply(ctx, site, params)
}
