//! Adapters for optimizations that change the entry method's signature (semantics.md §11.3).
//!
//! Matrix linearization turns a parameter `T[][] m` into `T[] m`. To run both programs on the
//! same input, ORIG's matrix is flattened into OPT's array (row-major: `m'[i·C + j] = m[i][j]`,
//! column-major: `m'[j·R + i] = m[i][j]`), and OPT's final array is folded back into rows
//! through the same map before the observables are compared.
//!
//! The layout comes from `--adapter SPEC` (`matrix_lin m R|C E1 E2`, several separated by `;`,
//! `linearize` accepted as well), or else from ORIG's own `gpuopt matrix_lin` annotations: the
//! entry method's own, or, when the matrix reaches an annotated matrix through calls of ORIG
//! (linearization rewrites every method a matrix is passed to), that one's. The extents are the
//! input's own shape; when the annotation's extents can be evaluated on the input (the entry
//! method's own annotation or a spec), they must agree with it.
//!
//! A CUDA kernel's launch sizes are parameters of its method (`blockDim.x`), but they are how
//! the kernel is launched, not what it computes on: tiling launches N threads per block where
//! ORIG launched T. When OPT's contract fixes the block size (`blockDim.x == E`) differently
//! from ORIG's, OPT runs with its own block size, E evaluated on the input.

use super::compile::{CProgram, Ty};
use super::inputs::{InVal, Input};
use super::Observable;
use analyze::sites::find_method;
use front::ast::*;
use front::{parse, Dialect, ParseOptions};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Reads a matrix layout (`matrix_lin m R|C E1 E2`) from an annotation: the matrix, whether it
/// is row-major, and its extents. The linearization transform owns that annotation's grammar; a
/// later stage cannot import it (the crate order), so the caller passes its reader in
/// (`transforms::registry::matrix_layout`).
pub type MatrixLayout = fn(&str, Dialect, &Annotation) -> Option<(String, bool, (Expr, Expr))>;

/// How one matrix parameter is carried over.
#[derive(Clone, Debug, PartialEq)]
pub struct MatrixMap {
    pub param: String,
    pub row_major: bool,
    /// Extents in the entry method's parameters, when known.
    pub dims: Option<(Expr, Expr)>,
}

/// The input/output map between ORIG's and OPT's entry methods; empty for the identity.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Adapter {
    pub matrices: Vec<MatrixMap>,
    /// Launch sizes OPT's contract fixes differently from ORIG's: the parameter and its value.
    pub launch: Vec<(String, Expr)>,
}

/// Why an input cannot be carried over (the input is then skipped).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AdaptError {
    #[error("`{0}` is not a rectangular matrix")]
    NotRectangular(String),
    #[error("`{param}` has {rows} x {cols} cells but the adapter says {e1} x {e2}")]
    Extents { param: String, rows: usize, cols: usize, e1: i64, e2: i64 },
}

impl Adapter {
    pub fn is_identity(&self) -> bool {
        self.matrices.is_empty() && self.launch.is_empty()
    }

    /// Parse `--adapter SPEC`: `matrix_lin m R|C E1 E2` entries separated by `;`.
    pub fn parse(spec: &str, layout: MatrixLayout) -> Result<Adapter, String> {
        let mut matrices = Vec::new();
        for part in spec.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            // Reuse the annotation grammar: `gpuopt <part>;` before a dummy method.
            let text = format!("gpuopt {part};\nvoid vct_adapter() {{ }}\n");
            let parsed = parse(&text, &ParseOptions::default());
            if parsed.has_errors() {
                return Err(format!("`{part}`: expected `matrix_lin NAME R|C E1 E2`"));
            }
            let ann = parsed.program.items.iter().find_map(|i| match i {
                Item::Method(m) => m.prefix.annotations.first().cloned(),
                _ => None,
            });
            match ann.and_then(|a| layout(&text, parsed.dialect, &a)) {
                Some((matrix, row_major, dims)) => {
                    matrices.push(MatrixMap { param: matrix, row_major, dims: Some(dims) })
                }
                _ => {
                    return Err(format!(
                        "`{part}`: only `matrix_lin NAME R|C E1 E2` adapters exist"
                    ))
                }
            }
        }
        Ok(Adapter { matrices, launch: vec![] })
    }

    /// The adapter between ORIG's entry `om` and OPT's entry `pm`: from `spec` when given, else
    /// from ORIG's annotations. Only parameters whose type changed from `T[][]` to `T[]` are
    /// mapped; such a parameter without a layout is an error.
    pub fn between(
        (orig_src, opt_src): (&str, &str),
        orig: &CProgram,
        om: u32,
        opt: &CProgram,
        pm: u32,
        spec: Option<&str>,
        layout: Option<MatrixLayout>,
    ) -> Result<Adapter, String> {
        let op = &orig.methods[om as usize].params;
        let pp = &opt.methods[pm as usize].params;
        let launch = launch_sizes(
            (orig_src, &orig.methods[om as usize].name),
            (opt_src, &opt.methods[pm as usize].name),
        );
        let changed: Vec<String> = op
            .iter()
            .filter(|(_, n, t)| {
                matches!(t, Ty::Array(inner) if matches!(**inner, Ty::Array(_)))
                    && pp.iter().any(|(_, m, u)| {
                        m == n && matches!(u, Ty::Array(inner) if !matches!(**inner, Ty::Array(_)))
                    })
            })
            .map(|(_, n, _)| n.clone())
            .collect();
        let given = match spec {
            Some(s) => match layout {
                Some(l) => Some(Adapter::parse(s, l)?),
                None => return Err("no matrix layout reader was given for `--adapter`".into()),
            },
            None => None,
        };
        if changed.is_empty() {
            return Ok(Adapter { matrices: vec![], launch });
        }
        let m = &orig.methods[om as usize];
        let class = &orig.classes[m.class as usize].name;
        let mut matrices = Vec::new();
        let derived = match &given {
            Some(_) => BTreeMap::new(),
            None => layout
                .map(|l| from_annotations(orig_src, class, &m.name, &changed, l))
                .unwrap_or_default(),
        };
        for p in &changed {
            let found = match &given {
                Some(g) => g.matrices.iter().find(|x| x.param == *p).cloned(),
                None => derived.get(p).cloned(),
            };
            match found {
                Some(x) => matrices.push(x),
                None => {
                    return Err(format!(
                        "`{p}` is a matrix in ORIG and an array in OPT, but no layout is known for it; give `--adapter \"matrix_lin {p} R|C ROWS COLS\"`"
                    ))
                }
            }
        }
        Ok(Adapter { matrices, launch })
    }

    /// ORIG's input as OPT's input.
    pub fn forward(&self, input: &Input) -> Result<Input, AdaptError> {
        let mut out = input.clone();
        let env = scalars(input);
        for (param, e) in &self.launch {
            let slot = out.args.iter().position(|(n, _)| n == param);
            if let (Some(slot), Some(v)) = (slot, eval(e, &env)) {
                out.args[slot].1 = InVal::Int(v);
            }
        }
        for m in &self.matrices {
            let Some(slot) = out.args.iter().position(|(n, _)| *n == m.param) else {
                continue;
            };
            let InVal::Array(ty, rows) = &out.args[slot].1 else {
                continue; // null stays null
            };
            let (r, c) = region(m, input, rows)?;
            let elem = match ty {
                Ty::Array(e) => (**e).clone(),
                other => other.clone(),
            };
            let cell = |i: usize, j: usize| match &rows[i] {
                InVal::Array(_, v) => v[j].clone(),
                _ => InVal::Null,
            };
            let mut cells = Vec::with_capacity(r * c);
            if m.row_major {
                for i in 0..r {
                    for j in 0..c {
                        cells.push(cell(i, j));
                    }
                }
            } else {
                for j in 0..c {
                    for i in 0..r {
                        cells.push(cell(i, j));
                    }
                }
            }
            out.args[slot].1 = InVal::Array(elem, cells);
        }
        Ok(out)
    }

    /// OPT's final values in ORIG's shape: each linearized array folded back into the rows of
    /// ORIG's input matrix. Arrays whose length no longer fits are left as they are (the
    /// comparison then reports them).
    pub fn backward(&self, input: &Input, observables: &mut [Observable]) {
        for m in &self.matrices {
            let Some((_, InVal::Array(ty, rows))) = input.args.iter().find(|(n, _)| *n == m.param)
            else {
                continue;
            };
            let Ok((r, c)) = region(m, input, rows) else {
                continue;
            };
            for o in observables.iter_mut() {
                if o.path != m.param {
                    continue;
                }
                let InVal::Array(elem, cells) = &o.value else {
                    continue;
                };
                if cells.len() != r * c {
                    continue;
                }
                let at = |i: usize, j: usize| {
                    if m.row_major {
                        cells[i * c + j].clone()
                    } else {
                        cells[j * r + i].clone()
                    }
                };
                // Cells outside the region were not carried over: OPT never saw them, so they
                // keep the input's values (a program that wrote there differs, as it should).
                let folded = rows
                    .iter()
                    .enumerate()
                    .map(|(i, row)| match row {
                        InVal::Array(_, old) => InVal::Array(
                            elem.clone(),
                            (0..old.len())
                                .map(|j| if i < r && j < c { at(i, j) } else { old[j].clone() })
                                .collect(),
                        ),
                        other => other.clone(),
                    })
                    .collect();
                o.value = InVal::Array(ty.clone(), folded);
            }
        }
    }
}

/// The rows and columns of the matrix input that are carried over. With extents that evaluate
/// on the input, it is the leading E1 x E2 block: a generated matrix may be larger than its
/// extents (a contract such as `h.length == w * d`, or rows whose length nothing fixes), and the
/// cells past them are ones the program holds no permission for. Otherwise the whole matrix,
/// which must then be rectangular.
fn region(m: &MatrixMap, input: &Input, rows: &[InVal]) -> Result<(usize, usize), AdaptError> {
    let Some((e1, e2)) = &m.dims else {
        return shape(&m.param, rows);
    };
    let env = scalars(input);
    let (Some(x), Some(y)) = (eval(e1, &env), eval(e2, &env)) else {
        return shape(&m.param, rows);
    };
    let extents = |rows: usize, cols: usize| AdaptError::Extents {
        param: m.param.clone(),
        rows,
        cols,
        e1: x,
        e2: y,
    };
    let (Ok(r), Ok(c)) = (usize::try_from(x), usize::try_from(y)) else {
        return Err(extents(rows.len(), 0));
    };
    if rows.len() < r {
        let (r, c) = shape(&m.param, rows)?;
        return Err(extents(r, c));
    }
    for row in &rows[..r] {
        match row {
            InVal::Array(_, v) if v.len() >= c => {}
            _ => {
                let (r, c) = shape(&m.param, rows)?;
                return Err(extents(r, c));
            }
        }
    }
    Ok((r, c))
}

/// Rows and columns of a rectangular matrix value.
fn shape(param: &str, rows: &[InVal]) -> Result<(usize, usize), AdaptError> {
    let mut cols = None;
    for row in rows {
        let InVal::Array(_, v) = row else {
            return Err(AdaptError::NotRectangular(param.to_string()));
        };
        match cols {
            None => cols = Some(v.len()),
            Some(c) if c != v.len() => return Err(AdaptError::NotRectangular(param.to_string())),
            _ => {}
        }
    }
    Ok((rows.len(), cols.unwrap_or(0)))
}

fn scalars(input: &Input) -> BTreeMap<String, i64> {
    input
        .args
        .iter()
        .filter_map(|(n, v)| match v {
            InVal::Int(i) => Some((n.clone(), *i)),
            _ => None,
        })
        .collect()
}

/// Integer value of an extent over the input's scalars (`rows`, `n + 1`, `(w * 2)`).
fn eval(e: &Expr, env: &BTreeMap<String, i64>) -> Option<i64> {
    use ExprKind as K;
    match &e.kind {
        K::Int(v) => i64::try_from(v).ok(),
        K::Name(id) => env.get(&id.name).copied(),
        K::Unary(UnOp::Neg, x) => eval(x, env)?.checked_neg(),
        K::Binary(op, l, r) => {
            let (a, b) = (eval(l, env)?, eval(r, env)?);
            match op {
                BinOp::Add => a.checked_add(b),
                BinOp::Sub => a.checked_sub(b),
                BinOp::Mul => a.checked_mul(b),
                BinOp::Div if b != 0 => Some(a.div_euclid(b)),
                BinOp::Mod if b != 0 => Some(a.rem_euclid(b)),
                BinOp::TruncDiv => a.checked_div(b),
                BinOp::TruncMod => a.checked_rem(b),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The launch sizes of a CUDA kernel whose block size OPT's contract fixes (`blockDim.x == E`,
/// E over the other parameters) differently from ORIG's.
fn launch_sizes((orig_src, om): (&str, &str), (opt_src, pm): (&str, &str)) -> Vec<(String, Expr)> {
    const BLOCK: &str = "blockDim.x";
    let fixed = |src: &str, name: &str| -> Option<Expr> {
        if !front::looks_like_cuda(src) {
            return None;
        }
        let parsed = parse(src, &ParseOptions::default());
        let (_, m) = parsed.program.methods().find(|(_, m)| m.name.name == name)?;
        let mut found = None;
        for c in &m.prefix.clauses {
            let Some(e) = c.expr() else { continue };
            for x in e.conjuncts() {
                if let Some(v) = front::cuda::size_fact(x, BLOCK) {
                    if found.is_none() && !front::exprtext::mentions(v, BLOCK) {
                        found = Some(v.clone());
                    }
                }
            }
        }
        found
    };
    match (fixed(orig_src, om), fixed(opt_src, pm)) {
        (o, Some(p)) if o.as_ref() != Some(&p) => vec![(BLOCK.to_string(), p)],
        _ => vec![],
    }
}

/// Layouts of the entry's `params` from ORIG's `matrix_lin` annotations: the entry's own, or
/// the one of an annotated matrix it is connected to by calls (argument passed as a bare name).
pub fn from_annotations(
    src: &str,
    class: &str,
    method: &str,
    params: &[String],
    layout: MatrixLayout,
) -> BTreeMap<String, MatrixMap> {
    let parsed = parse(src, &ParseOptions::default());
    let prog = &parsed.program;
    let class_of = |c: &str| -> Option<String> {
        prog.items
            .iter()
            .any(|i| matches!(i, Item::Class(k) if k.name.name == c))
            .then(|| c.to_string())
    };
    type Node = (Option<String>, String, String);
    // Annotated matrices and call edges between matrix variables.
    let mut annotated: BTreeMap<Node, (bool, (Expr, Expr))> = BTreeMap::new();
    let mut edges: BTreeMap<Node, BTreeSet<Node>> = BTreeMap::new();
    let methods: Vec<(Option<&Class>, &Method)> = prog.methods().collect();
    for (c, m) in &methods {
        let cname = c.map(|c| c.name.name.clone());
        for a in &m.prefix.annotations {
            if let Some((matrix, row, dims)) = layout(src, parsed.dialect, a) {
                annotated.insert((cname.clone(), m.name.name.clone(), matrix), (row, dims));
            }
        }
        let mut visit = |e: &Expr| {
            front::visit::walk_expr(e, &mut |x| {
                let ExprKind::Call { recv, name, args, .. } = &x.kind else {
                    return;
                };
                let callee = match recv.as_deref().map(|r| &r.kind) {
                    None | Some(ExprKind::This) => find_method(prog, cname.as_deref(), &name.name)
                        .or_else(|| find_method(prog, None, &name.name)),
                    Some(ExprKind::Name(k)) => find_method(prog, Some(&k.name), &name.name),
                    _ => None,
                };
                let Some((kc, km)) = callee else { return };
                for (a, p) in args.iter().zip(&km.params) {
                    if let Some(v) = a.as_name() {
                        let from = (cname.clone(), m.name.name.clone(), v.to_string());
                        let to = (
                            kc.map(|k| k.name.name.clone()),
                            km.name.name.clone(),
                            p.name.name.clone(),
                        );
                        edges.entry(from.clone()).or_default().insert(to.clone());
                        edges.entry(to).or_default().insert(from);
                    }
                }
            })
        };
        for cl in &m.prefix.clauses {
            if let Some(e) = cl.expr() {
                visit(e);
            }
        }
        if let MethodBody::Block(b) = &m.body {
            for s in &b.stmts {
                front::visit::walk_stmts(s, &mut |st| {
                    front::visit::stmt_exprs(st, &mut |e| visit(e))
                });
            }
        }
    }
    let entry_class = class_of(class);
    let mut out = BTreeMap::new();
    for p in params {
        let start: Node = (entry_class.clone(), method.to_string(), p.clone());
        let mut seen = BTreeSet::from([start.clone()]);
        let mut queue = VecDeque::from([start.clone()]);
        while let Some(n) = queue.pop_front() {
            if let Some((row, dims)) = annotated.get(&n) {
                out.insert(
                    p.clone(),
                    MatrixMap {
                        param: p.clone(),
                        row_major: *row,
                        // Extents are in the annotated method's variables: usable only there.
                        dims: (n == start).then(|| dims.clone()),
                    },
                );
                break;
            }
            for next in edges.get(&n).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    queue.push_back(next.clone());
                }
            }
        }
    }
    out
}
