//! The C/CUDA front end: annotated `.cu` (and OpenCL `.c`) files, read with lang-c, into the
//! same syntax tree as PVL, so that every later stage works on them unchanged.
//!
//! Stages: [`prep`] masks what lang-c cannot read (comments, directives, CUDA qualifiers,
//! launch configurations) without moving any offset; lang-c parses the masked text;
//! [`convert`] builds our tree and attaches the annotation comments (parsed by the PVL parser:
//! the specification language is shared); [`lower`] gives each `__global__` kernel its PVL
//! kernel form, a `par` over blocks around a `par` over the threads of a block.
//!
//! Spans point into the user's file; offsets lang-c reports are shifted back by the length of
//! the typedef prelude ([`prep::PRELUDE`]).

mod aliases;
mod atomics;
mod bits;
mod casts;
mod convert;
mod division;
pub mod emit;
mod host;
mod ignore;
mod initializer;
mod iteration;
mod jumps;
mod lower;
mod macros;
mod openmp;
mod params;
pub mod prep;
mod pure;
mod shared;
mod sizes;
mod stdio;
mod types;
mod unsigned;
mod vectors;

use crate::ast::*;
use crate::dialect::Dialect;
use crate::parser::{parse_decls_at, parse_expr_at, parse_fragment, FragItem, Parsed};
use crate::span::Span;
use convert::Conv;
use diag::Diagnostic;
use lang_c::ast as c;
use std::collections::{HashMap, HashSet};

/// The label of the thread-level `par` of a kernel, named by its barriers.
pub const BLOCK_LABEL: &str = "cuda_block";

/// The name of a kernel's resource invariant (its `kernel_invariant` clauses that hold
/// permissions): CUDA's atomic functions are `atomic` blocks over it. Not a C identifier.
pub const KERNEL_INVARIANT: &str = "kernel.invariant";

/// The allocators of `__shared__` arrays (`cuda_shared_int`, …), declared by the front end.
pub const SHARED_ALLOC: &str = "cuda_shared_";
/// The suffix of a dynamic shared array's size parameter (`buf.shared_mem_size`, which
/// `\shared_mem_size(buf)` names).
pub const SHARED_SIZE: &str = ".shared_mem_size";

/// CUDA's built-in variables; `threadIdx.x` is one name in our tree (`Name("threadIdx.x")`),
/// printed back as written.
pub const CUDA_BUILTINS: &[&str] = &["threadIdx", "blockIdx", "blockDim", "gridDim"];

/// The value `E` of a conjunct `size == E` or `E == size` (`size` a launch size of the kernel
/// form, e.g. `blockDim.x`).
pub fn size_fact<'e>(x: &'e Expr, size: &str) -> Option<&'e Expr> {
    let ExprKind::Binary(BinOp::Eq, l, r) = &x.kind else { return None };
    match (l.as_name(), r.as_name()) {
        (Some(n), _) if n == size => Some(r),
        (_, Some(n)) if n == size => Some(l),
        _ => None,
    }
}

/// The clauses of a kernel's method (in the kernel form) that its author wrote for the whole
/// kernel (`context_everywhere`, `kernel_invariant`, …), not those the lowering derives from the
/// per-thread contract of `threads` (which keep the written clause's span) or adds itself.
pub fn written_kernel_clauses<'m>(src: &str, m: &'m Method, threads: &ParArm) -> Vec<&'m Clause> {
    const WORDS: &[&str] =
        &["context_everywhere", "kernel_invariant", "requires", "ensures", "context"];
    let mut out: Vec<&Clause> = Vec::new();
    for c in &m.prefix.clauses {
        let text = c.span.text(src).trim_start();
        if c.span.end() != 0
            && !threads.contract.iter().any(|t| t.span.same_place(c.span))
            && !out.iter().any(|o| o.span.same_place(c.span))
            && WORDS.iter().any(|k| text.starts_with(k))
        {
            out.push(c);
        }
    }
    out
}

/// `threadIdx` `.` `x` → `threadIdx.x`.
pub fn builtin_name(base: &str, field: &str) -> Option<&'static str> {
    const NAMES: &[&str] = &[
        "threadIdx.x",
        "threadIdx.y",
        "threadIdx.z",
        "blockIdx.x",
        "blockIdx.y",
        "blockIdx.z",
        "blockDim.x",
        "blockDim.y",
        "blockDim.z",
        "gridDim.x",
        "gridDim.y",
        "gridDim.z",
    ];
    NAMES.iter().copied().find(|n| {
        n.len() == base.len() + 1 + field.len()
            && n.starts_with(base)
            && n.ends_with(field)
            && n.as_bytes()[base.len()] == b'.'
    })
}

/// Does this text look like C or CUDA rather than PVL? A directive at the start of a line, or a
/// CUDA/OpenCL kernel qualifier, never occurs in PVL. Nor does a plain C file (VerCors' own
/// examples have no directive) need one: specifications in annotation comments (`/*@`, `//@`
/// starting a line) with no PVL class or kernel declaration mark C too. PVL writes its contracts
/// as plain text, and a PVL file that uses `/*@` as an ordinary comment declares a class.
pub fn looks_like_cuda(src: &str) -> bool {
    let lines = || src.lines().map(str::trim_start);
    let directive = lines().any(|t| t.starts_with("#include") || t.starts_with("#define"));
    let kernel = ["__global__", "__kernel", "__device__", "__syncthreads"];
    directive
        || kernel.iter().any(|w| src.contains(w))
        || prep::is_opencl(src)
        || (lines().any(|t| t.starts_with("/*@") || t.starts_with("//@"))
            && !lines().any(declares_pvl_class))
}

/// A line that starts a PVL class or kernel declaration (`class C`, `final class C`, `kernel K`).
fn declares_pvl_class(line: &str) -> bool {
    let mut words = line.split_whitespace().skip_while(|w| matches!(*w, "final" | "abstract"));
    matches!(words.next(), Some("class" | "kernel"))
        && words.next().is_some_and(|n| n.starts_with(|c: char| c.is_alphabetic() || c == '_'))
}

/// Parse a C/CUDA file. Always returns a program (possibly partial) and diagnostics.
pub fn parse_cuda(src: &str) -> Parsed {
    let src = src.to_string();
    crate::worker::run(move || parse_here(&src, false))
}

/// The same program in the verifier's kernel form: a kernel whose blocks are independent (one
/// dimension, no barrier, no shared memory) is one `par` over its global index (see
/// `lower::kernel`). Only the Viper encoding reads it: sites, rewrites and the interpreter keep
/// the two-level form of the text.
pub fn parse_cuda_for_verification(src: &str) -> Parsed {
    let src = src.to_string();
    crate::worker::run(move || parse_here(&src, true))
}

fn parse_here(src: &str, flat: bool) -> Parsed {
    let prep = prep::prepare(src);
    let norm = normalise_annotations(src, &prep);
    let mut diags = Vec::new();
    if let Some(at) = prep.unterminated {
        diags.push(
            Diagnostic::error("A0001", "unterminated comment or launch configuration")
                .with_primary(at, "starts here")
                .with_help("close the comment with `*/`, or the launch configuration with `>>>`"),
        );
    }
    for d in &prep.other_directives {
        diags.push(
            Diagnostic::warning("A0015", "preprocessor directive not evaluated")
                .with_primary(*d, "ignored: only `#include` and `#define`s of values and expressions are understood")
                .with_help("alpine-rs does not run the preprocessor; expand this directive by hand if the kernel depends on it"),
        );
    }
    let config = lang_c::driver::Config::with_gcc();
    let unit = match lang_c::driver::parse_preprocessed(&config, prep.c_text.clone()) {
        Ok(p) => p.unit,
        Err(e) => {
            let at = e.offset.saturating_sub(prep.prelude_len()).min(src.len());
            let mut expected: Vec<&str> = e.expected.iter().copied().collect();
            expected.sort_unstable();
            let shown: Vec<&str> = expected.iter().take(6).copied().collect();
            diags.push(
                Diagnostic::error("A0001", "C syntax error")
                    .with_primary(Span::new(at, (at + 1).min(src.len())), format!("expected one of {}", shown.join(" ")))
                    .with_help("alpine-rs reads C11 with the CUDA qualifiers; C++ (templates, classes, references) is not supported"),
            );
            return finish(
                src,
                Program {
                    items: vec![],
                    main: None,
                    span: Span::new(0, src.len()),
                    memo: Default::default(),
                },
                diags,
            );
        }
    };
    let mut functions = HashSet::new();
    for ext in &unit.0 {
        match &ext.node {
            c::ExternalDeclaration::FunctionDefinition(f) => {
                if let Some(n) = decl_name(&f.node.declarator) {
                    functions.insert(n);
                }
            }
            c::ExternalDeclaration::Declaration(d) => {
                for id in &d.node.declarators {
                    if is_function_declarator(&id.node.declarator) {
                        if let Some(n) = decl_name(&id.node.declarator) {
                            functions.insert(n);
                        }
                    }
                }
            }
            c::ExternalDeclaration::StaticAssert(_) => {}
        }
    }
    let launches: HashMap<usize, usize> =
        prep.launches.iter().enumerate().map(|(k, l)| (l.name_end, k)).collect();
    let mut defines = HashMap::new();
    // The CUDA runtime's copy directions, which programs pass to their own memcpy models.
    for (k, v) in [
        "cudaMemcpyHostToHost",
        "cudaMemcpyHostToDevice",
        "cudaMemcpyDeviceToHost",
        "cudaMemcpyDeviceToDevice",
        "cudaMemcpyDefault",
    ]
    .iter()
    .zip(0..)
    {
        defines.insert(k.to_string(), Expr::int(v));
    }
    for d in &prep.defines {
        if let Ok(e) = parse_expr_at(src, d.value, Dialect::V2) {
            let e = if macros::closed(d.value.text(src), &e) {
                e
            } else {
                // `#define N 2 + 2` makes `N * 2` six: refused by name, never read as eight.
                macros::unclosed_value(&d.name, d.value.text(src), d.value)
            };
            defines.insert(d.name.clone(), e);
        }
    }
    let mut fn_macros = HashMap::new();
    for m in &prep.fn_defines {
        match parse_expr_at(src, m.body, Dialect::V2) {
            Ok(body) => {
                let text = m.body.text(src);
                fn_macros
                    .insert(m.name.clone(), macros::FnMacro::new(m.params.clone(), text, body));
            }
            Err(_) => diags.push(macros::not_an_expression(m.span)),
        }
    }
    let mut cv = Conv {
        flat,
        launched: HashSet::new(),
        src,
        norm: &norm,
        prep: &prep,
        diags,
        used: vec![false; prep.annots.len()],
        pragma_used: vec![false; prep.pragmas.len()],
        structured_labels: HashSet::new(),
        goto_targets: jumps::goto_targets(&prep.c_text),
        omp_region: false,
        omp_fors: HashMap::new(),
        vectors: HashMap::new(),
        pointee: HashMap::new(),
        floats: HashSet::new(),
        in_kernel: false,
        next_modifiers: Vec::new(),
        defines,
        fn_macros,
        launches,
        functions,
    };
    let mut items = Vec::new();
    let mut cursor = 0;
    for ext in &unit.0 {
        let span = cv.sp(ext.span);
        if span.same_place(Span::DUMMY) {
            continue; // the prelude
        }
        let contract = top_annotations(&mut cv, cursor, span.start(), &mut items);
        match &ext.node {
            c::ExternalDeclaration::FunctionDefinition(f) => {
                if let Some(m) = function(&mut cv, f, contract, span) {
                    items.push(Item::Method(m));
                }
            }
            c::ExternalDeclaration::Declaration(d) => {
                cv.next_modifiers.clear();
                declaration(&mut cv, d, contract, span, &mut items)
            }
            c::ExternalDeclaration::StaticAssert(_) => cv.unsupported("_Static_assert", span),
        }
        cursor = span.end();
    }
    let rest = top_annotations(&mut cv, cursor, src.len(), &mut items);
    if !rest.is_empty() {
        cv.diags.push(
            Diagnostic::error("A0001", "contract clauses at the end of the file")
                .with_primary(rest.span, "these clauses have nothing to attach to")
                .with_help("put a function's contract right before it"),
        );
    }
    for (k, a) in prep.annots.iter().enumerate() {
        if !cv.used[k] {
            cv.diags.push(
                Diagnostic::error("A0002", "annotation comment inside a statement or expression")
                    .with_primary(a.span, "not attached to a declaration or a statement")
                    .with_help("annotations go before a function, a statement or a loop, or stand alone in a block"),
            );
        }
    }
    cv.unused_pragmas();
    // Functions declared without a body: their contracts divide as C does too (the defined
    // ones were settled before their kernel form added divisions of its own).
    for item in &mut items {
        if let Item::Method(m) = item {
            if matches!(m.body, MethodBody::Abstract) {
                division::settle(m, src);
                if flat {
                    unsigned::checks(m, src);
                }
            }
        }
    }
    ignore::strip(&mut items, src, &mut cv.diags);
    launch_dimensions(&mut items, &cv.launched, &mut cv.diags);
    runtime_models(&mut items, &cv.functions);
    lower::shared_allocators(&mut items);
    host::host_models(&mut items);
    let program =
        Program { items, main: None, span: Span::new(0, src.len()), memo: Default::default() };
    let diags = std::mem::take(&mut cv.diags);
    finish(src, program, diags)
}

fn finish(_src: &str, program: Program, mut diagnostics: Vec<Diagnostic>) -> Parsed {
    diagnostics.sort_by_key(|d| (d.primary_span().map_or(0, |s| s.lo), !d.is_error()));
    Parsed { program, diagnostics, dialect: Dialect::V2, settled: true, sensitive: Vec::new() }
}

/// Annotation comments between two top-level declarations: clauses are the next function's
/// contract; ghost declarations (`/*@ pure int f() = 1; @*/`) become items.
fn top_annotations(cv: &mut Conv, lo: usize, hi: usize, items: &mut Vec<Item>) -> Prefix {
    let mut prefix = Prefix { span: Span::new(hi, hi), ..Prefix::default() };
    for k in 0..cv.prep.annots.len() {
        let a = cv.prep.annots[k].clone();
        if cv.used[k] || a.span.start() < lo || a.span.end() > hi {
            continue;
        }
        cv.used[k] = true;
        let first: String = a
            .body
            .text(cv.norm)
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        // `/*@ pure @*/`: modifiers of the function that follows.
        if let Some(ms) = pure::modifiers_only(a.body.text(cv.norm)) {
            cv.next_modifiers.extend(ms);
            continue;
        }
        let clause = crate::keywords::CLAUSE_WORDS.contains(&first.as_str()) || first == "gpuopt";
        if clause {
            // A contract followed by a ghost declaration in one comment is that declaration's
            // (`/*@ requires n >= 0; pure int f(int n) = n; @*/`).
            let (decls, ds) = parse_decls_at(cv.norm, a.body, Dialect::V2);
            if !decls.is_empty() && !ds.iter().any(|d| d.is_error()) {
                items.extend(decls);
                continue;
            }
        }
        if clause {
            let mut frag = parse_fragment(cv.norm, a.body, Dialect::V2);
            cv.diags.extend(frag.diagnostics);
            for item in &mut frag.items {
                cv.substitute_defines(item);
            }
            for f in frag.items {
                match f {
                    FragItem::Prefix(p) => {
                        prefix.span =
                            if prefix.is_empty() { p.span } else { prefix.span.to(p.span) };
                        prefix.clauses.extend(p.clauses);
                        prefix.annotations.extend(p.annotations);
                    }
                    FragItem::Stmt(s) => cv.diags.push(
                        Diagnostic::error("A0001", "a statement outside any function")
                            .with_primary(s.span, "statements belong in a function body")
                            .with_help("move it into the function it is about"),
                    ),
                }
            }
        } else {
            let (decls, ds) = parse_decls_at(cv.norm, a.body, Dialect::V2);
            cv.diags.extend(ds);
            items.extend(decls);
        }
    }
    prefix
}

/// CUDA runtime functions that touch no memory the program's contracts talk about (events,
/// timing, synchronisation with the host): a call needs and gives no permission, which is what a
/// declaration without a contract says. Functions that copy or allocate memory are not here: a
/// model without a contract would claim they change nothing.
pub(super) const RUNTIME_WITHOUT_EFFECT: &[&str] = &[
    "cudaEventCreate",
    "cudaEventRecord",
    "cudaEventSynchronize",
    "cudaEventElapsedTime",
    "cudaEventDestroy",
    "cudaDeviceSynchronize",
    "cudaDeviceReset",
    "cudaGetLastError",
    // OpenMP's queries of the team: some number, which a contract cannot rely on.
    "omp_get_thread_num",
    "omp_get_num_threads",
    "omp_get_max_threads",
];

/// Declare the effect-free runtime functions the file calls without declaring them, with the
/// arity of their first call.
fn runtime_models(items: &mut Vec<Item>, declared: &HashSet<String>) {
    let arity: Vec<(String, usize)> = called(items)
        .into_iter()
        .filter(|(n, _)| RUNTIME_WITHOUT_EFFECT.contains(&n.as_str()) && !declared.contains(n))
        .collect();
    for (n, k) in arity {
        items.push(Item::Method(Method {
            prefix: Prefix::default(),
            modifiers: vec![],
            kind: MethodKind::Method,
            ret: Type::int(),
            name: Ident::synth(n),
            type_params: vec![],
            params: (0..k)
                .map(|i| Param {
                    ty: Type::int(),
                    name: Ident::synth(format!("arg{i}")),
                    span: Span::DUMMY,
                })
                .collect(),
            body: MethodBody::Abstract,
            span: Span::DUMMY,
        }));
    }
}

/// A launch `k<<<g, b>>>(…)` passes one grid and one block size; a kernel that indexes `.y` (or
/// `.z`) takes one per dimension. An integer launch size is `dim3(g, 1, 1)`, as in CUDA; a
/// `dim3(x, y)` size (written in the launch or declared as a `dim3` variable) gives its own, the
/// missing ones 1. A size in a dimension the kernel does not index other than 1 would run
/// copies of the same threads: refused.
fn launch_dimensions(
    items: &mut [Item],
    launched: &HashSet<(u32, u32)>,
    diags: &mut Vec<Diagnostic>,
) {
    let dims: HashMap<String, usize> = items
        .iter()
        .filter_map(|i| match i {
            Item::Method(m) => {
                let d = m.params.iter().filter(|p| p.name.name.starts_with("gridDim.")).count();
                (d > 0).then(|| (m.name.name.clone(), d))
            }
            _ => None,
        })
        .collect();
    if dims.is_empty() || launched.is_empty() {
        return;
    }
    let sizes = |e: Expr, d: usize, diags: &mut Vec<Diagnostic>| -> Vec<Expr> {
        let span = e.span;
        let mut parts = match e.kind {
            ExprKind::Call { recv: None, name, args, .. } if name.name == "dim3" => args,
            kind => vec![Expr { kind, ..e }],
        };
        if parts.len() > d {
            let extra = parts.split_off(d);
            if extra.iter().any(|x| !matches!(&x.kind, ExprKind::Int(v) if *v == 1.into())) {
                diags.push(
                    Diagnostic::error(
                        "A0014",
                        format!(
                            "a launch size with more dimensions than the kernel indexes ({d})"
                        ),
                    )
                    .with_primary(span, "sizes beyond the kernel's dimensions are not 1")
                    .with_help("index the threads in every dimension the launch uses (`threadIdx.y`, …), or launch with size 1 there"),
                );
            }
        }
        parts.resize_with(d, || Expr::int(1));
        parts
    };
    let mut fix = |e: &mut Expr| {
        if let ExprKind::Call { recv: None, name, args, .. } = &mut e.kind {
            if let (Some(&d), true) =
                (dims.get(&name.name), launched.contains(&(e.span.lo, e.span.hi)))
            {
                if args.len() >= 2 {
                    let block = args.pop().expect("two launch sizes");
                    let grid = args.pop().expect("two launch sizes");
                    args.extend(sizes(grid, d, diags));
                    args.extend(sizes(block, d, diags));
                }
            }
        }
        false
    };
    for item in items.iter_mut() {
        if let Item::Method(m) = item {
            if let MethodBody::Block(b) = &mut m.body {
                for st in &mut b.stmts {
                    crate::visit::map_stmt(st, &mut fix);
                }
            }
        }
    }
}

/// The functions the methods of `items` call without a receiver, with the argument count of
/// their first call, in order of first call.
pub(super) fn called(items: &[Item]) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for item in items {
        let Item::Method(m) = item else { continue };
        let MethodBody::Block(b) = &m.body else { continue };
        for st in &b.stmts {
            crate::visit::walk_stmts(st, &mut |st| {
                crate::visit::stmt_exprs(st, &mut |e| {
                    crate::visit::walk_expr(e, &mut |x| {
                        if let ExprKind::Call { recv: None, name, args, .. } = &x.kind {
                            if !out.iter().any(|(n, _)| *n == name.name) {
                                out.push((name.name.clone(), args.len()));
                            }
                        }
                    })
                })
            });
        }
    }
    out
}

fn decl_name(d: &lang_c::span::Node<c::Declarator>) -> Option<String> {
    match &d.node.kind.node {
        c::DeclaratorKind::Identifier(id) => Some(id.node.name.clone()),
        c::DeclaratorKind::Declarator(inner) => decl_name(inner),
        c::DeclaratorKind::Abstract => None,
    }
}

fn is_function_declarator(d: &lang_c::span::Node<c::Declarator>) -> bool {
    d.node.derived.iter().any(|x| {
        matches!(x.node, c::DerivedDeclarator::Function(_) | c::DerivedDeclarator::KRFunction(_))
    })
}

/// The return type: the specifiers and the pointers before the function declarator.
fn return_type(
    cv: &mut Conv,
    specs: &[lang_c::span::Node<c::DeclarationSpecifier>],
    d: &lang_c::span::Node<c::Declarator>,
    span: Span,
) -> Type {
    let mut ty = cv.base_type(specs, span);
    for der in &d.node.derived {
        match der.node {
            c::DerivedDeclarator::Pointer(_) => {
                ty = Type { kind: TypeKind::Array(Box::new(ty), None), span }
            }
            c::DerivedDeclarator::Function(_) | c::DerivedDeclarator::KRFunction(_) => break,
            _ => {}
        }
    }
    ty
}

fn function(
    cv: &mut Conv,
    f: &lang_c::span::Node<c::FunctionDefinition>,
    contract: Prefix,
    span: Span,
) -> Option<Method> {
    let d = &f.node.declarator;
    let name_id = decl_ident(cv, d)?;
    let ret = return_type(cv, &f.node.specifiers, d, span);
    if matches!(ret.kind, TypeKind::Float32 | TypeKind::Float64) {
        cv.floats.insert(name_id.name.clone());
    }
    let params = cv.params(d).unwrap_or_default();
    let c::Statement::Compound(items) = &f.node.statement.node else {
        cv.unsupported("a function body that is not a block", span);
        return None;
    };
    let body_span = cv.sp(f.node.statement.span);
    // lang-c's span starts after the blanked qualifier: it is the word right before, or one
    // among the specifiers.
    let kernel = cv.prep.qualifiers.iter().any(|q| {
        matches!(q.word, "__global__" | "__kernel")
            && q.span.end() <= name_id.span.start()
            && (q.span.start() >= span.start()
                || cv.src.get(q.span.end()..span.start()).is_some_and(|gap| gap.trim().is_empty()))
    });
    cv.in_kernel = kernel;
    let mut body = cv.block(items, body_span);
    cv.in_kernel = false;
    let mut params = params;
    if kernel {
        // An OpenCL kernel's `local T* buf` parameter is memory of the work group, of the size
        // the host sets: the block allocates it, as CUDA's `extern __shared__ T buf[];`.
        let local = |p: &Param| {
            cv.prep.qualifiers.iter().any(|q| {
                q.word == "__local"
                    && q.span.end() <= p.span.start()
                    && cv.src.get(q.span.end()..p.span.start()).is_some_and(|g| g.trim().is_empty())
            })
        };
        let (locals, rest): (Vec<Param>, Vec<Param>) = params.into_iter().partition(local);
        params = rest;
        for (k, p) in locals.into_iter().enumerate() {
            let TypeKind::Array(elem, None) = &p.ty.kind else {
                cv.unsupported("a `local` parameter that is not a pointer", p.span);
                continue;
            };
            let len = shared::dynamic_size(&p.name.name, p.span);
            match shared::shared_alloc(p.name.clone(), elem, len, p.ty.span, p.span, p.span) {
                Some(s) => body.stmts.insert(k, s),
                None => cv.unsupported("`local` memory of this element type", p.span),
            }
        }
    }
    // `/*@ pure @*/` before the function (`top_annotations`) or among its specifiers.
    let mut modifiers = std::mem::take(&mut cv.next_modifiers);
    modifiers.extend(cv.modifier_annotations(span.start(), body_span.start()));
    let body = if modifiers.contains(&Modifier::Pure) {
        MethodBody::Expr(cv.pure_body(&body, body_span)?)
    } else {
        MethodBody::Block(body)
    };
    let mut method = Method {
        prefix: contract,
        modifiers,
        kind: MethodKind::Method,
        ret,
        name: name_id,
        type_params: vec![],
        params,
        body,
        span,
    };
    aliases::resolve(&mut method);
    division::settle(&mut method, cv.src);
    if cv.flat {
        unsigned::checks(&mut method, cv.src);
    }
    Some(if kernel { lower::kernel(method, &mut cv.diags, cv.flat) } else { lower::host(method) })
}

fn decl_ident(cv: &Conv, d: &lang_c::span::Node<c::Declarator>) -> Option<Ident> {
    match &d.node.kind.node {
        c::DeclaratorKind::Identifier(id) => Some(Ident::new(&id.node.name, cv.sp(id.span))),
        c::DeclaratorKind::Declarator(inner) => decl_ident(cv, inner),
        c::DeclaratorKind::Abstract => None,
    }
}

/// A top-level declaration: function prototypes become methods without a body (their contract
/// is what calls may assume); typedefs are types; anything else is refused by name.
fn declaration(
    cv: &mut Conv,
    d: &lang_c::span::Node<c::Declaration>,
    contract: Prefix,
    span: Span,
    items: &mut Vec<Item>,
) {
    let typedef = d.node.specifiers.iter().any(|s| matches!(&s.node, c::DeclarationSpecifier::StorageClass(k) if k.node == c::StorageClassSpecifier::Typedef));
    if typedef {
        return;
    }
    let mut contract = Some(contract);
    for id in &d.node.declarators {
        let decl = &id.node.declarator;
        if !is_function_declarator(decl) {
            items.push(Item::Opaque(Opaque {
                keyword: "global variable".into(),
                text: span.text(cv.src).to_string(),
                span,
            }));
            continue;
        }
        let Some(name) = decl_ident(cv, decl) else { continue };
        let ret = return_type(cv, &d.node.specifiers, decl, span);
        let params = cv.params(decl).unwrap_or_default();
        let prefix = contract.take().unwrap_or_default();
        items.push(Item::Method(lower::host(Method {
            prefix,
            modifiers: vec![],
            kind: MethodKind::Method,
            ret,
            name,
            type_params: vec![],
            params,
            body: MethodBody::Abstract,
            span,
        })));
    }
}

/// A copy of `src` where the C spellings inside annotations that PVL reads differently are
/// respelled in place (same length): `&x` → ` x` (a location is its own address in PVL), `NULL`
/// → `null`, `p->f` → `p .f`.
fn normalise_annotations(src: &str, prep: &prep::Prepared) -> String {
    let mut b = src.as_bytes().to_vec();
    for a in &prep.annots {
        respell(&mut b, a.body.start(), a.body.end());
    }
    String::from_utf8(b).unwrap_or_else(|_| src.to_string())
}

/// `text`, a piece of an annotation of a C or CUDA file (a contract conjunct an optimization
/// re-parses on its own), with the respellings [`normalise_annotations`] makes: without them
/// `Perm(&x[i], write)` would read as an opaque address instead of the cell `x[i]`.
/// Unlike there, nothing maps back into the text, so the blanks the respelling leaves for `&`
/// and `->` are dropped (`Perm(x[i], p)`, `p.f`).
pub fn respell_annotation_text(text: &str) -> String {
    let orig = text.as_bytes();
    let mut b = orig.to_vec();
    let n = b.len();
    respell(&mut b, 0, n);
    let kept: Vec<u8> = b
        .iter()
        .zip(orig)
        .enumerate()
        .filter(|(i, (new, old))| {
            let blanked_amp = **old == b'&' && **new == b' ';
            let blanked_arrow = **old == b'-' && **new == b' ' && orig.get(i + 1) == Some(&b'>');
            !(blanked_amp || blanked_arrow)
        })
        .map(|(_, (new, _))| *new)
        .collect();
    String::from_utf8(kept).unwrap_or_else(|_| text.to_string())
}

fn respell(b: &mut [u8], lo: usize, hi: usize) {
    let mut i = lo;
    while i < hi {
        if b[i] == b'&' && b.get(i + 1) != Some(&b'&') && (i == lo || b[i - 1] != b'&') {
            let prev = b[lo..i].iter().rev().find(|c| !c.is_ascii_whitespace()).copied();
            if matches!(prev, None | Some(b'(' | b',' | b'=' | b'!' | b'?' | b':')) {
                b[i] = b' ';
            }
        } else if b[i..hi].starts_with(b"NULL")
            && (i == lo || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
            && b.get(i + 4).is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
        {
            b[i..i + 4].copy_from_slice(b"null");
            i += 3;
        } else if b[i..hi].starts_with(b"->") {
            b[i] = b' ';
            b[i + 1] = b'.';
            i += 1;
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::looks_like_cuda;

    #[test]
    fn a_conjunct_is_respelled_as_the_front_end_reads_it() {
        use super::respell_annotation_text as r;
        assert_eq!(
            r("Perm(&x[i], write) ** Perm(&y[i], 1\\2)"),
            "Perm(x[i], write) ** Perm(y[i], 1\\2)"
        );
        assert_eq!(r("p != NULL && p->f == 1 && a && b"), "p != null && p.f == 1 && a && b");
    }

    #[test]
    fn c_is_told_from_pvl_without_directives() {
        // VerCors' C examples have annotation comments and no `#include`.
        assert!(looks_like_cuda("/*@ requires n > 0; @*/\nvoid f(int n) { }\n"));
        assert!(looks_like_cuda("//@ requires n > 0;\nint f(int n) { return n; }\n"));
        assert!(looks_like_cuda("#include <cuda.h>\n"));
        assert!(looks_like_cuda(
            "/*@ context n > 0; @*/\nkernel void f(global int* a, int n) { }\n"
        ));
        // PVL writes contracts as text; a class with a `/*@` comment is still PVL.
        assert!(!looks_like_cuda("class C {\n  requires n > 0;\n  void f(int n) { }\n}\n"));
        assert!(!looks_like_cuda("/*@\n  a note\n@*/\nclass C { }\n"));
        assert!(!looks_like_cuda("/*@ note @*/\nfinal class C { }\n"));
        assert!(!looks_like_cuda("requires n > 0;\nvoid f(int n) { }\n"));
    }
}
