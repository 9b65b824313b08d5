//! The six optimizations, one file each (rewrite stage of the pipeline).
//!
//! Every transformation gets a [`Ctx`] (the current text, its parse, layout, fresh names, solver
//! settings) and a selected [`Site`], and answers with an [`Outcome`]: either the edits that
//! rewrite the program (plus warnings/notes), or a refusal made of diagnostics. "Not applicable"
//! is a normal answer, never a panic. Transformations never touch the consumed annotation: the
//! driver removes it before the transformation runs.

pub mod driver;
pub mod fuse;
pub mod linearize;
pub mod merge;
pub mod prefetch;
pub mod tile;
pub mod unroll;

use crate::analyze::names::NameGen;
use crate::analyze::sites::{find_method, Site};
use crate::diag::Diagnostic;
use crate::edit::{EditSet, Layout};
use crate::front::ast::*;
use crate::front::{Dialect, Parsed};

/// Parameters of one optimization request, from an annotation or the command line.
#[derive(Clone, Debug)]
pub enum Params {
    Unroll {
        var: Option<String>,
        factor: u64,
    },
    Merge {
        var: Option<String>,
        factor: u64,
        mode: MergeMode,
    },
    Prefetch {
        array: Expr,
        locations: Vec<Expr>,
    },
    Linearize {
        matrix: String,
        layout: Layout2,
        dims: (Expr, Expr),
        index_fn: bool,
    },
    Tile {
        mode: TileMode,
        size: Expr,
        keep_method_contract: bool,
    },
    Fuse {
        kernels: u64,
        blocks: Option<u64>,
        block_size: Option<Expr>,
    },
}

/// Matrix layout (re-exported name to avoid a clash with `edit::Layout`).
pub type Layout2 = crate::front::ast::Layout;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MergeMode {
    #[default]
    Auto,
    Exact,
    Remainder,
}

impl Params {
    pub fn opt(&self) -> OptKind {
        match self {
            Params::Unroll { .. } => OptKind::Unroll,
            Params::Merge { .. } => OptKind::Merge,
            Params::Prefetch { .. } => OptKind::Prefetch,
            Params::Linearize { .. } => OptKind::Linearize,
            Params::Tile { .. } => OptKind::Tile,
            Params::Fuse { .. } => OptKind::Fuse,
        }
    }

    /// The parameters an in-source annotation asks for.
    pub fn from_annotation(a: &Annotation) -> Params {
        match &a.kind {
            AnnotKind::Unroll { var, factor } => Params::Unroll {
                var: Some(var.name.clone()),
                factor: factor.value,
            },
            AnnotKind::Merge { var, factor } => Params::Merge {
                var: Some(var.name.clone()),
                factor: factor.value,
                mode: MergeMode::Auto,
            },
            AnnotKind::Prefetch { array, locations } => Params::Prefetch {
                array: array.clone(),
                locations: locations.clone(),
            },
            AnnotKind::Linearize {
                matrix,
                layout,
                dims,
            } => Params::Linearize {
                matrix: matrix.name.clone(),
                layout: *layout,
                dims: dims.clone(),
                index_fn: false,
            },
            AnnotKind::Tile { mode, size } => Params::Tile {
                mode: *mode,
                size: size.clone(),
                keep_method_contract: false,
            },
            AnnotKind::Fuse { kernels, blocks } => Params::Fuse {
                kernels: kernels.value,
                blocks: blocks.as_ref().map(|b| b.value),
                block_size: None,
            },
        }
    }
}

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

/// Run one optimization at a site.
pub fn run(ctx: &mut Ctx, site: &Site, params: &Params) -> Outcome {
    match params.opt() {
        OptKind::Unroll => unroll::apply(ctx, site, params),
        OptKind::Merge => merge::apply(ctx, site, params),
        OptKind::Prefetch => prefetch::apply(ctx, site, params),
        OptKind::Linearize => linearize::apply(ctx, site, params),
        OptKind::Tile => tile::apply(ctx, site, params),
        OptKind::Fuse => fuse::apply(ctx, site, params),
    }
}

/// Refusal used by optimizations that are not built yet.
pub(crate) fn not_available(params: &Params) -> Outcome {
    Err(vec![Diagnostic::error(
        "A0004",
        format!(
            "the `{}` optimization is not available in this build",
            params.opt().cli_name()
        ),
    )
    .with_help("use a build of alpine-rs that implements it")])
}
