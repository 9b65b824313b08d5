//! Fusing two CUDA kernels launched one after the other. In CUDA the "consecutive kernels" of
//! PVL are consecutive launches in a host function, `k1<<<1, B>>>(…); k2<<<1, B>>>(…);`, of two
//! `__global__` functions with their own parameters. The fusion itself is PVL's: both kernels'
//! thread blocks are written as two consecutive `par` blocks of one PVL method (parameters of
//! `k2` that receive the same argument as one of `k1`'s are renamed to it; thread and size
//! names become identifiers), PVL fusion runs on that text (every check and self-check of
//! optimizations.md §7), and the fused `par` block is written back as a new `__global__`
//! function after `k2`, with the generated barrier as `__syncthreads()` with its contract. The
//! two launches become one launch of it; `k1` and `k2` stay (other code may launch them).
//!
//! `\\pointer_index(a, i, p)` is written as its bounds and `Perm(a[i], p)`, which fusion analyses
//! per cell; the fused contract keeps that form.
//!
//! Supported: one-dimensional kernels without `__shared__` memory or barriers of their own, and
//! bodies and contracts that read as PVL (array indexing, scalars, loops). Launched with one
//! block (`<<<1, B>>>`), the fused kernel may synchronise its threads with `__syncthreads()`.
//! Launched with the same grid of several blocks, the PVL text is the threads of one block
//! `vct_bid` (any block of the grid): fusion must then need no barrier, since nothing
//! synchronises blocks, so each thread of the second kernel reads only what the same thread of
//! the first wrote or what the first leaves alone. The rest is refused (A609).

use crate::{Applied, Ctx, Outcome, Params};
use analyze::names::NameGen;
use analyze::sites::{sites, Site, SiteKind};
use diag::Diagnostic;
use edit::{EditSet, Layout};
use front::ast::*;
use front::span::Span;
use num_traits::One;

/// Dotted CUDA names and the identifiers that stand for them in the PVL text.
const SPELLINGS: &[(&str, &str)] = &[
    ("threadIdx.x", "vct_tid"),
    ("\\ltid", "vct_tid"),
    ("blockDim.x", "blockDim_x"),
    ("opencl_gsize", "blockDim_x"),
    ("gridDim.x", "gridDim_x"),
    ("blockIdx.x", "vct_bid"),
    ("\\gtid", "(vct_bid * blockDim_x + vct_tid)"),
    ("NULL", "null"),
];

/// The back translation (one spelling per identifier).
const BACK: &[(&str, &str)] = &[
    ("vct_tid", "threadIdx.x"),
    ("blockDim_x", "blockDim.x"),
    ("gridDim_x", "gridDim.x"),
    ("vct_bid", "blockIdx.x"),
    ("null", "NULL"),
];

fn refuse(code: &str, msg: String, at: Span, help: &str) -> Outcome {
    Err(vec![Diagnostic::error(code, msg)
        .with_primary(at, "this kernel's threads")
        .with_help(help.to_string())])
}

/// One kernel of the fusion: its method, its thread block, and its launch.
struct Launched<'a> {
    method: &'a Method,
    arm: &'a ParArm,
    launch: &'a Stmt,
    /// The kernel's own arguments (without the launch sizes).
    args: &'a [Expr],
    grid: &'a Expr,
    block: &'a Expr,
}

pub(super) fn fuse_launches(ctx: &mut Ctx, site: &Site, params: &Params) -> Outcome {
    let src = ctx.src;
    let program = &ctx.parsed.program;
    let help = "fuse two one-dimensional kernels launched one after the other as `k1<<<1, B>>>(…); k2<<<1, B>>>(…);`";
    if params.count_opt("kernels").is_some_and(|f| f != 2) {
        return refuse(
            "A609",
            "cannot fuse: CUDA kernels are fused two at a time".into(),
            site.keyword,
            "use `--kernels 2`, and fuse the result with the next kernel in a second step",
        );
    }
    let Some((_, k1)) = program.methods().find(|(_, m)| m.name.name == site.method) else {
        return Err(vec![Diagnostic::internal("the kernel of this site is not in the program")]);
    };
    // The launch of `k1` followed by the launch of another kernel, in some host function.
    let mut pair = None;
    for (_, m) in program.methods() {
        let MethodBody::Block(b) = &m.body else { continue };
        find_pair(program, &b.stmts, &k1.name.name, &mut pair);
        if pair.is_some() {
            break;
        }
    }
    let Some((a, b)) = pair else {
        return refuse(
            "A601",
            format!(
                "cannot fuse: no launch of `{}` is directly followed by the launch of another kernel",
                k1.name.name
            ),
            site.keyword,
            help,
        );
    };
    // One block, or the same grid of blocks for both launches (then no barrier may be needed).
    let one_block = [&a, &b].iter().all(|k| k.grid.as_int().is_some_and(|v| v.is_one()));
    if !one_block && a.grid.span.text(src).trim() != b.grid.span.text(src).trim() {
        return refuse(
            "A603",
            "cannot fuse: the two launches have different grids".into(),
            b.grid.span,
            "launch both kernels with the same grid and block sizes",
        );
    }
    let refused_words: &[&str] = if one_block {
        &["__syncthreads", "__shared__", "blockIdx", "atomic", "\\gtid"]
    } else {
        &["__syncthreads", "__shared__", "atomic", "blockIdx.y", "blockIdx.z"]
    };
    for k in [&a, &b] {
        let body = k.arm.body.span.text(src);
        let contract = k.method.prefix.clauses.iter().map(|c| c.span.text(src)).collect::<String>();
        for word in refused_words {
            if body.contains(word) || contract.contains(word) {
                return refuse(
                    "A609",
                    format!("cannot fuse: `{}` uses `{word}`", k.method.name.name),
                    k.method.name.span,
                    "fuse kernels without barriers, shared memory, atomics or block indices",
                );
            }
        }
    }
    if b.block.span.text(src).trim() != a.block.span.text(src).trim() {
        return refuse(
            "A603",
            "cannot fuse: the two launches have different block sizes".into(),
            b.block.span,
            "launch both kernels with the same block size",
        );
    }
    // ---- the PVL text: k2's parameters renamed to k1's where they receive the same argument
    let mut renames: Vec<(String, String)> = Vec::new();
    let mut extra: Vec<(&Param, &Expr)> = Vec::new();
    let user_params = |m: &Method| m.params.iter().filter(|p| p.span.end() != 0).count();
    let (n1, n2) = (user_params(a.method), user_params(b.method));
    let mut taken: Vec<String> =
        a.method.params[..n1].iter().map(|p| p.name.name.clone()).collect();
    for (q, arg) in b.method.params[..n2].iter().zip(b.args) {
        let same = a.method.params[..n1]
            .iter()
            .zip(a.args)
            .find(|(_, x)| x.span.text(src).trim() == arg.span.text(src).trim());
        match same {
            Some((p, _)) => renames.push((q.name.name.clone(), p.name.name.clone())),
            None => {
                let mut name = q.name.name.clone();
                while taken.contains(&name) {
                    name.push_str("_2");
                }
                taken.push(name.clone());
                renames.push((q.name.name.clone(), name));
                extra.push((q, arg));
            }
        }
    }
    let none: Vec<(String, String)> = Vec::new();
    let mut t = String::from("class VctCudaFusion {\n");
    for (k, ren) in [(&a, &none), (&b, &renames)] {
        for c in written_everywhere(src, k.method, k.arm) {
            t.push_str(&format!("  {}\n", clause_to_pvl(c, ren)));
        }
    }
    let mut ps: Vec<String> = Vec::new();
    for p in &a.method.params[..n1] {
        ps.push(format!("{} {}", front::printer::print_type(&p.ty, ctx.dialect()), p.name.name));
    }
    for (p, _) in &extra {
        let name =
            &renames.iter().find(|(q, _)| *q == p.name.name).map_or(&p.name.name, |(_, n)| n);
        ps.push(format!("{} {}", front::printer::print_type(&p.ty, ctx.dialect()), name));
    }
    ps.push("int blockDim_x".into());
    ps.push("int gridDim_x".into());
    if !one_block {
        // The threads of one block, any block of the grid.
        t.push_str("  context_everywhere 0 <= vct_bid && vct_bid < gridDim_x;\n");
        ps.push("int vct_bid".into());
    }
    t.push_str(&format!("  void vct_launch({}) {{\n", ps.join(", ")));
    // The threads of the launch: a number where the launch gives one (after `#define`s), which
    // keeps the analysis linear.
    let threads = a.block.as_int().map_or_else(|| "blockDim_x".to_string(), |v| v.to_string());
    for (k, ren) in [(&a, &none), (&b, &renames)] {
        t.push_str(&format!("    par {} (int vct_tid = 0 .. {threads})\n", k.method.name.name));
        for c in &k.arm.contract {
            t.push_str(&format!("      {}\n", clause_to_pvl(c.span.text(src), ren)));
        }
        t.push_str(&format!("    {}\n", to_pvl(k.arm.body.span.text(src), ren)));
    }
    t.push_str("  }\n}\n");
    // ---- PVL fusion on that text
    let fused = match pvl_fusion(&t, ctx, params) {
        Ok(x) if !one_block && x.body.contains("barrier") => {
            return refuse(
                "A609",
                "cannot fuse: a thread of the second kernel reads what another thread of the first wrote, and the launches have several blocks".into(),
                site.keyword,
                "nothing synchronises the blocks of a grid: fuse kernels whose threads read only their own results, or launch one block (`<<<1, B>>>`)",
            );
        }
        Ok(x) => x,
        Err(ds) => {
            // Positions in the PVL text mean nothing in the user's file: the refusal points at
            // the kernel, and says what the text was.
            let note = format!(
                "decided on `{}` and `{}` written as two PVL `par` blocks",
                a.method.name.name, b.method.name.name
            );
            return Err(ds
                .into_iter()
                .map(|mut d| {
                    d.labels.clear();
                    d.with_note(note.clone())
                        .with_primary(site.keyword, "fusing this kernel with the next launch")
                })
                .collect());
        }
    };
    // ---- the fused kernel, after k2, and one launch for two
    let name = ctx.names.name(&format!("{}_{}", a.method.name.name, b.method.name.name));
    let nl = ctx.layout.newline;
    let mut c_params: Vec<String> =
        a.method.params[..n1].iter().map(|p| p.span.text(src).to_string()).collect();
    for (p, _) in &extra {
        let new = &renames.iter().find(|(q, _)| *q == p.name.name).map_or(&p.name.name, |(_, n)| n);
        let text = p.span.text(src);
        c_params.push(match text.rfind(p.name.name.as_str()) {
            Some(at) => format!("{}{new}{}", &text[..at], &text[at + p.name.name.len()..]),
            None => text.to_string(),
        });
    }
    let mut kernel = format!("{nl}{nl}/*@{nl}");
    for c in written_everywhere(src, a.method, a.arm) {
        kernel.push_str(&format!("  {c}{nl}"));
    }
    for c in written_everywhere(src, b.method, b.arm) {
        let c = from_pvl(&to_pvl(c, &renames));
        if !kernel.contains(&c) {
            kernel.push_str(&format!("  {c}{nl}"));
        }
    }
    for c in &fused.clauses {
        kernel.push_str(&format!("  {}{nl}", from_pvl(c)));
    }
    kernel.push_str(&format!("@*/{nl}__global__ void {name}({}) ", c_params.join(", ")));
    kernel.push_str(&from_pvl(&fused.body).replace('\n', nl));
    let mut edits = EditSet::new();
    edits.insert(b.method.span.end(), kernel);
    let mut args: Vec<String> = a.args.iter().map(|x| x.span.text(src).to_string()).collect();
    args.extend(extra.iter().map(|(_, x)| x.span.text(src).to_string()));
    let launch = format!(
        "{name}<<<{}, {}>>>({});",
        a.grid.span.text(src),
        a.block.span.text(src),
        args.join(", ")
    );
    let end = statement_end(src, b.launch.span.end());
    edits.replace(Span::new(a.launch.span.start(), end), launch);
    Ok(Applied { edits, diagnostics: fused.warnings })
}

/// The kernels of `stmts` (recursively): `k1`'s launch followed directly by another kernel's.
fn find_pair<'a>(
    program: &'a Program,
    stmts: &'a [Stmt],
    k1: &str,
    out: &mut Option<(Launched<'a>, Launched<'a>)>,
) {
    for w in stmts.windows(2) {
        if out.is_some() {
            return;
        }
        if let (Some(a), Some(b)) = (launched(program, &w[0]), launched(program, &w[1])) {
            if a.method.name.name == k1 && b.method.name.name != k1 {
                *out = Some((a, b));
                return;
            }
        }
    }
    for s in stmts {
        match &s.kind {
            StmtKind::Block(b) => find_pair(program, &b.stmts, k1, out),
            StmtKind::If { then, els, .. } => {
                for x in std::iter::once(then).chain(els) {
                    if let StmtKind::Block(b) = &x.kind {
                        find_pair(program, &b.stmts, k1, out);
                    }
                }
            }
            StmtKind::For(l) | StmtKind::While(l) => {
                if let StmtKind::Block(b) = &l.body.kind {
                    find_pair(program, &b.stmts, k1, out);
                }
            }
            _ => {}
        }
    }
}

/// A statement launching a one-dimensional kernel `k<<<g, b>>>(args)`.
fn launched<'a>(program: &'a Program, s: &'a Stmt) -> Option<Launched<'a>> {
    let StmtKind::Expr(Expr { kind: ExprKind::Call { recv: None, name, args, .. }, .. }) = &s.kind
    else {
        return None;
    };
    let (_, method) = program.methods().find(|(_, m)| m.name.name == name.name)?;
    let arm = thread_arm(method)?;
    if arm.iters.len() != 1 || args.len() < 2 {
        return None;
    }
    let n = args.len() - 2;
    Some(Launched { method, arm, launch: s, args: &args[..n], grid: &args[n], block: &args[n + 1] })
}

/// The thread block of a kernel in the C/CUDA front end's form (blocks around threads).
fn thread_arm(m: &Method) -> Option<&ParArm> {
    let MethodBody::Block(b) = &m.body else { return None };
    let StmtKind::Par(blocks) = &b.stmts.first()?.kind else { return None };
    let StmtKind::Par(threads) = &blocks.arms.first()?.body.kind else { return None };
    let arm = threads.arms.first()?;
    (arm.label.as_ref().map(|l| l.name.as_str()) == Some(front::cuda::BLOCK_LABEL)).then_some(arm)
}

/// The `context_everywhere` clauses the kernel's author wrote (not those the front end derives).
fn written_everywhere<'s>(src: &'s str, m: &Method, arm: &ParArm) -> Vec<&'s str> {
    front::cuda::written_kernel_clauses(src, m, arm)
        .into_iter()
        .filter(|c| c.kind == ClauseKind::ContextEverywhere)
        .map(|c| c.span.text(src))
        .collect()
}

/// The end of the statement whose expression ends at `at` (past its `;`).
fn statement_end(src: &str, at: usize) -> usize {
    let rest = &src[at..];
    match rest.find(|c: char| !c.is_whitespace()) {
        Some(k) if rest[k..].starts_with(';') => at + k + 1,
        _ => at,
    }
}

/// C/CUDA text (a clause, a body) as PVL: annotation comment markers dropped (their content is
/// PVL), thread and size names as identifiers, parameters renamed.
fn to_pvl(text: &str, renames: &[(String, String)]) -> String {
    let t = text.replace("/*@", "   ").replace("@*/", "   ").replace("//@", "   ");
    let t = pointer_index_as_perm(&t);
    let mut map: Vec<(&str, &str)> = SPELLINGS.to_vec();
    map.extend(renames.iter().map(|(a, b)| (a.as_str(), b.as_str())));
    replace_words(&t, &map)
}

/// A contract clause as PVL: [`to_pvl`] after the C respellings of annotations (`Perm(&x[i], p)`
/// is the cell `x[i]`; kept, fusion would not see the permission and could drop a needed
/// barrier).
fn clause_to_pvl(text: &str, renames: &[(String, String)]) -> String {
    to_pvl(&front::cuda::respell_annotation_text(text), renames)
}

/// `\\pointer_index(a, i, p)` as the bounds it states and a `Perm(a[i], p)` atom, which
/// fusion analyses per cell (it would carry the built-in unanalysed).
fn pointer_index_as_perm(text: &str) -> String {
    const KW: &str = "\\pointer_index";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(KW) {
        out.push_str(&rest[..at]);
        let after = &rest[at + KW.len()..];
        let open = after.len() - after.trim_start().len();
        let args = after[open..].strip_prefix('(').and_then(|inner| {
            let mut depth = 0i32;
            let mut parts = Vec::new();
            let mut start = 0;
            for (k, c) in inner.char_indices() {
                match c {
                    '(' | '[' | '{' => depth += 1,
                    ')' if depth == 0 => {
                        parts.push(inner[start..k].trim());
                        return Some((parts, open + 1 + k + 1));
                    }
                    ')' | ']' | '}' => depth -= 1,
                    ',' if depth == 0 => {
                        parts.push(inner[start..k].trim());
                        start = k + 1;
                    }
                    _ => {}
                }
            }
            None
        });
        match args {
            Some((p, used)) if p.len() == 3 => {
                let (a, i, f) = (p[0], p[1], p[2]);
                out.push_str(&format!("(0 <= {i} && {i} < {a}.length) ** Perm({a}[{i}], {f})"));
                rest = &after[used..];
            }
            _ => {
                out.push_str(KW);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// PVL text of the fused kernel back in CUDA's spelling.
fn from_pvl(text: &str) -> String {
    // `\gtid` went in as this expression (see `SPELLINGS`) and comes back as written.
    let gtid = SPELLINGS.iter().find(|(c, _)| *c == "\\gtid").map_or("", |(_, p)| p);
    replace_words(&text.replace(gtid, "\\gtid"), BACK)
}

/// Replace whole words (a word may contain `.` or start with `\`), in one pass.
fn replace_words(text: &str, map: &[(&str, &str)]) -> String {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let bytes = text.as_bytes();
    'outer: while i < text.len() {
        let prev_ok = i == 0 || !ident(bytes[i - 1] as char);
        if prev_ok {
            for (from, to) in map {
                if text[i..].starts_with(from) {
                    let after = text[i + from.len()..].chars().next();
                    if !after.is_some_and(ident) {
                        out.push_str(to);
                        i += from.len();
                        continue 'outer;
                    }
                }
            }
        }
        let c = text[i..].chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// The fused `par` block of the PVL text: its clauses and its body.
struct Fused {
    clauses: Vec<String>,
    body: String,
    warnings: Vec<Diagnostic>,
}

fn pvl_fusion(text: &str, ctx: &Ctx, params: &Params) -> Result<Fused, Vec<Diagnostic>> {
    let parsed = front::parse(text, &Default::default());
    if parsed.has_errors() {
        return Err(vec![Diagnostic::error(
            "A609",
            "cannot fuse: a kernel's body or contract does not read as PVL",
        )
        .with_help("fuse kernels whose code indexes arrays and computes on scalars (no pointer arithmetic, casts or calls)")]);
    }
    let site = sites(&parsed.program)
        .into_iter()
        .filter(|s| s.kind == SiteKind::Par)
        .min_by_key(|s| s.span.start())
        .ok_or_else(|| vec![Diagnostic::internal("no par block in the fusion text")])?;
    let mut names = NameGen::for_text(text);
    let mut sub = Ctx {
        src: text,
        parsed: &parsed,
        layout: Layout::detect(text),
        names: &mut names,
        timeout_ms: ctx.timeout_ms,
        annotation_text: None,
    };
    let applied = params.opt.apply(&mut sub, &site, params)?;
    let out = applied
        .edits
        .apply(text)
        .map_err(|e| vec![Diagnostic::internal(format!("fusion text: {e}"))])?;
    let parsed = front::parse(&out, &Default::default());
    let (_, m) = parsed
        .program
        .methods()
        .find(|(_, m)| m.name.name == "vct_launch")
        .ok_or_else(|| vec![Diagnostic::internal("the fused method is missing")])?;
    let MethodBody::Block(b) = &m.body else {
        return Err(vec![Diagnostic::internal("the fused method has no body")]);
    };
    let pars: Vec<&Stmt> = b.stmts.iter().filter(|s| matches!(s.kind, StmtKind::Par(_))).collect();
    let [par] = pars.as_slice() else {
        return Err(vec![Diagnostic::error(
            "A601",
            "cannot fuse: PVL fusion left the kernels apart",
        )
        .with_help("fusion stopped at a dependency it cannot synchronise (see the warnings)")]);
    };
    let StmtKind::Par(p) = &par.kind else { unreachable!() };
    let arm = &p.arms[0];
    Ok(Fused {
        clauses: arm.contract.iter().map(|c| c.span.text(&out).to_string()).collect(),
        body: dedent(arm.body.span.text(&out)),
        warnings: applied
            .diagnostics
            .into_iter()
            .map(|mut d| {
                d.labels.clear();
                d
            })
            .collect(),
    })
}

/// A block's text with the indentation of its inner lines reduced to one level.
fn dedent(block: &str) -> String {
    let lines: Vec<&str> = block.lines().collect();
    let inner = lines[1..]
        .iter()
        .filter(|l| !l.trim().is_empty() && l.trim() != "}")
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    for (k, l) in lines.iter().enumerate() {
        if k > 0 {
            out.push('\n');
            if l.trim() == "}" && k + 1 == lines.len() {
                out.push('}');
                continue;
            }
            if !l.trim().is_empty() {
                out.push_str("  ");
                out.push_str(&l[inner.min(l.len() - l.trim_start().len())..]);
            }
        } else {
            out.push_str(l);
        }
    }
    out
}
