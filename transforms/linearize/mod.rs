//! Matrix linearization: a 2-D array becomes a 1-D array (optimizations.md §5; paper §5,
//! "matrix linearization").
//!
//! A matrix `g` with `E1` rows and `E2` columns becomes a 1-D array; `g[r][c]` becomes
//! `g[E2 * r + c]` (row-major) or `g[E1 * c + r]` (column-major) in the code and in every
//! annotation of the method.
//!
//! Two length conventions are accepted, decided by Z3 from the program's own facts:
//! * the *linear* one used by Alpinist's examples and the corpus: `g.length == E1 * E2` is already
//!   a fact of the 2-D program (VerCors 1.4 encodes `int[][]` with value rows); `g.length` then
//!   keeps its text, because after the rewrite it describes the 1-D array;
//! * the *2-D* one of the design: `g.length == E1` and every row has length `E2` (a
//!   `\matrix(g, E1, E2)` fact, or row facts); `g.length == X` becomes `g.length == X * E2`, any
//!   other `g.length` becomes `E1`, `g[r].length` becomes `E2`.
//!
//! **Across methods.** A matrix that is passed to, or received from, another method of the file
//! is linearized there too, with the same layout: the plan follows every call edge (a caller
//! passing the matrix parameter, a callee receiving the matrix), derives each other matrix's
//! extents by substituting the call's arguments (or takes them from that matrix's own pending
//! `matrix_lin`, which is then consumed), and proves with Z3 at every call site that caller and
//! callee agree on the extents. Every method involved is rewritten in the same step. A call that
//! passes something that cannot be linearized consistently is refused (A404, the call labelled).
//!
//! Before:
//! ```pvl
//! class Grid {
//!   gpuopt matrix_lin g R 4 8;
//!   context_everywhere g != null && g.length == 4;
//!   context (\forall* int r; 0 <= r && r < 4; Perm(g[r], 1\2));
//!   context (\forall int r; 0 <= r && r < 4; g[r] != null && g[r].length == 8);
//!   context (\forall int r1; 0 <= r1 && r1 < 4; (\forall int r2; 0 <= r2 && r2 < 4 && r1 != r2; g[r1] != g[r2]));
//!   context (\forall* int r; 0 <= r && r < 4; (\forall* int c; 0 <= c && c < 8; Perm(g[r][c], write)));
//!   void clear(int[][] g) {
//!     par cells (int r = 0 .. 4, int c = 0 .. 8)
//!       context Perm(g[r], 1\32) ** g[r] != null && g[r].length == 8;
//!       context Perm(g[r][c], write);
//!     {
//!       g[r][c] = 0;
//!     }
//!   }
//! }
//! ```
//! After `alpine-rs apply`:
//! ```pvl
//! class Grid {
//!   context_everywhere g != null && g.length == 4 * 8;
//!   context (\forall* int r; 0 <= r && r < 4; (\forall* int c; 0 <= c && c < 8; Perm(g[8 * r + c], write)));
//!   void clear(int[] g) {
//!     par cells (int r = 0 .. 4, int c = 0 .. 8)
//!       context Perm(g[8 * r + c], write);
//!     {
//!       g[8 * r + c] = 0;
//!     }
//!   }
//! }
//! ```

mod check;
mod lin;
mod model;
mod rewrite;
mod sweep;

use crate::params::{Choice, Kind, Param};
use crate::{Meta, MethodPar};
use analyze::sites::SiteKind;
use front::ast::{Annotation, Expr};
use front::Dialect;

pub struct Linearize;

/// The validation adapter (`validate --adapter`) of a linearization of `array` with extents
/// `rows` x `cols` (their texts): what `sweep` gives each candidate and what `apply --validate`
/// uses for the command line's linearization.
pub fn adapter_spec(array: &str, row_major: bool, rows: &str, cols: &str) -> String {
    let (r, c) = (crate::sweep::operand(rows), crate::sweep::operand(cols));
    format!("matrix_lin {array} {} {r} {c}", if row_major { "R" } else { "C" })
}

/// The matrix, layout (row-major?) and dimensions of a `matrix_lin` annotation read from `src`;
/// `None` for any other annotation (the interpreter's adapter maps signatures with it).
pub fn matrix_of(
    src: &str,
    dialect: Dialect,
    ann: &Annotation,
) -> Option<(String, bool, (Expr, Expr))> {
    let params = crate::registry::read(src, dialect, ann).ok()?;
    if params.opt != &Linearize as crate::Opt {
        return None;
    }
    let [d0, d1] = params.exprs("dims") else {
        return None;
    };
    Some((
        params.name("array")?.to_string(),
        params.word("layout") == check::ROW,
        (d0.clone(), d1.clone()),
    ))
}

#[rustfmt::skip]
static META: Meta = Meta {
    name: "linearize", keyword: "matrix_lin", summary: "turn a 2-D array into a 1-D array",
    params: &[
        Param::operand("array", "array", Kind::Name, "the matrix", "<matrix>",
            "the matrix (a parameter, field or local of type `T[][]`)"),
        Param::operand("layout", "layout", Kind::Choice(&[
                Choice { value: check::ROW, word: "R", meaning: "row-major" },
                Choice { value: "col", word: "C", meaning: "column-major" },
            ]),
            "the layout of {word}", "R|C",
            "row (R) or col (C): which index varies fastest in the 1-D array"),
        Param::operand("dims", "dims",
            Kind::Pair { first: "the first dimension", second: "the second dimension",
                both: "rows, row length" },
            "the dimensions", "<rows> <cols>",
            "E1,E2: the extent of the first index (rows) and of the second (row length)"),
        Param::option("index_fn", "index-fn", Kind::Switch, "whether to use an index function",
            "use Alpinist's index helper function instead of inline arithmetic"),
    ],
    sites: &[SiteKind::Method], method_par: MethodPar::None, exclusive: false, allocates_names: true, explicit_loops: false, adapter: Some(matrix_of),
    candidates: Some(sweep::candidates), cuda_par: None, codes: 400, rewrites_contract: true,
    placement: "before the contract of the method that uses the matrix",
    dangling_help: "place it before a method's contract",
};

optimization!(Linearize, check::Plan<'a>);
