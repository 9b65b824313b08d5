//! Host memory as C and CUDA programs manage it, read as VerCors reads C: `malloc(n *
//! sizeof(T))` and `cudaMalloc(&p, n * sizeof(T))` give a fresh block of `n` cells of `T` with
//! write permission to each and nothing known of their contents (the allocation succeeds),
//! `calloc(n, sizeof(T))` one of zeroes;
//! `free(p)` and `cudaFree(p)` take that permission back, so a later access fails;
//! `cudaMemcpy(dst, src, n * sizeof(T), kind)` copies `n` cells, reading `src` and writing
//! `dst` (half of each source cell is enough). Each is a call of an abstract method the front end declares ([`host_models`]);
//! only `int` and `bool` cells, and sizes written as a count of `sizeof(T)`, are read: any
//! other form stays refused by name.

use super::convert::{Conv, R};
use super::lower;
use crate::ast::*;
use crate::span::Span;
use lang_c::ast as c;
use lang_c::span::Node;

/// The allocator, deallocator and copy of each element type: `c_alloc_int`, ….
pub(super) const ALLOC: &str = "c_alloc_";
pub(super) const FREE: &str = "c_free_";
pub(super) const COPY: &str = "c_memcpy_";

/// Our name for an element type the models cover.
fn elem_word(t: &TypeKind) -> Option<&'static str> {
    match t {
        TypeKind::Int => Some("int"),
        TypeKind::Boolean => Some("boolean"),
        _ => None,
    }
}

fn strip_casts(e: &Node<c::Expression>) -> &Node<c::Expression> {
    match &e.node {
        c::Expression::Cast(k) => strip_casts(&k.node.expression),
        _ => e,
    }
}

/// `1\2`: the share of a source cell a copy reads (a `read` amount, Viper's wildcard, would
/// come back as another, and the caller could no longer free the block).
fn half() -> Expr {
    lower::bin(BinOp::Frac, Expr::int(1), Expr::int(2), Span::DUMMY)
}

fn call(id: &str, args: Vec<Expr>, span: Span) -> Expr {
    Expr::new(
        ExprKind::Call {
            recv: None,
            name: Ident::new(id, span),
            args,
            ghost: Default::default(),
            null_safe: false,
        },
        span,
    )
}

impl Conv<'_> {
    /// `sizeof(T)` of an `int`-like or `bool` type: its element word.
    fn sizeof_elem(&mut self, e: &Node<c::Expression>) -> Option<&'static str> {
        let c::Expression::SizeOfTy(t) = &strip_casts(e).node else { return None };
        let tn = &t.node.0.node;
        if tn.declarator.is_some() {
            return None;
        }
        let words = super::types::type_words(&tn.specifiers);
        let ty = self.type_of_specifiers(&words, Span::DUMMY);
        elem_word(&ty.kind)
    }

    /// A byte count `n * sizeof(T)`, `sizeof(T) * n` or `sizeof(T)`: `(n, T)`.
    fn cells(&mut self, e: &Node<c::Expression>) -> Option<(Expr, &'static str)> {
        let e = strip_casts(e);
        if let Some(w) = self.sizeof_elem(e) {
            return Some((Expr::int(1), w));
        }
        let c::Expression::BinaryOperator(b) = &e.node else { return None };
        if b.node.operator.node != c::BinaryOperator::Multiply {
            return None;
        }
        let (count, size) = match self.sizeof_elem(&b.node.rhs) {
            Some(w) => (&b.node.lhs, w),
            None => (&b.node.rhs, self.sizeof_elem(&b.node.lhs)?),
        };
        let n = self.expr(count).ok()?;
        Some((n, size))
    }

    /// `malloc(bytes)` or `calloc(n, sizeof(T))` under any pointer casts, as an allocation;
    /// `None` when `e` is no call of either (or the file declares its own).
    pub(super) fn allocation(&mut self, e: &Node<c::Expression>, span: Span) -> Option<R<Expr>> {
        let c::Expression::Call(k) = &strip_casts(e).node else { return None };
        let c::Expression::Identifier(id) = &k.node.callee.node else { return None };
        let name = id.node.name.as_str();
        if !matches!(name, "malloc" | "calloc") || self.functions.contains(name) {
            return None;
        }
        Some(Ok(match (name, k.node.arguments.as_slice()) {
            ("malloc", [bytes]) => match self.cells(bytes) {
                Some((n, w)) => call(&format!("{ALLOC}{w}"), vec![n], span),
                None => self.opaque_expr("`malloc` of other than a count of `sizeof(int)`", span),
            },
            // Zeroed cells: PVL's `new T[n]`.
            ("calloc", [count, size]) => match (self.sizeof_elem(size), self.expr(count)) {
                (Some(w), Ok(n)) => {
                    let elem = if w == "boolean" { Type::boolean() } else { Type::int() };
                    Expr::new(ExprKind::NewArray(elem, vec![n]), span)
                }
                _ => self.opaque_expr("`calloc` of other than `sizeof(int)` cells", span),
            },
            _ => self.opaque_expr("this allocation", span),
        }))
    }

    /// `cudaMalloc(&p, bytes)`, `free(p)`, `cudaFree(p)` and `cudaMemcpy(dst, src, bytes, kind)`
    /// as statements; `None` for any other call.
    pub(super) fn host_memory(
        &mut self,
        name: &str,
        args: &[Node<c::Expression>],
        span: Span,
    ) -> Option<Stmt> {
        if self.functions.contains(name) {
            return None;
        }
        let refused = |cv: &mut Conv, what: &str| Some(cv.opaque_stmt(what, span));
        match (name, args) {
            ("cudaMalloc", [target, bytes]) => {
                let c::Expression::UnaryOperator(u) = &strip_casts(target).node else {
                    return refused(self, "`cudaMalloc` of other than `&p`");
                };
                if u.node.operator.node != c::UnaryOperator::Address {
                    return refused(self, "`cudaMalloc` of other than `&p`");
                }
                let Ok(p) = self.expr(&u.node.operand) else { return None };
                let Some((n, w)) = self.cells(bytes) else {
                    return refused(self, "`cudaMalloc` of other than a count of `sizeof(int)`");
                };
                let value = call(&format!("{ALLOC}{w}"), vec![n], span);
                Some(Stmt { kind: StmtKind::Assign { target: p, value }, span })
            }
            ("free" | "cudaFree", [p]) => {
                let Ok(p) = self.expr(strip_casts(p)) else { return None };
                let Some(w) = p.as_name().and_then(|n| self.pointee.get(n)).and_then(elem_word)
                else {
                    return refused(self, "freeing other than a pointer variable to `int` cells");
                };
                Some(Stmt {
                    kind: StmtKind::Expr(call(&format!("{FREE}{w}"), vec![p], span)),
                    span,
                })
            }
            ("cudaMemcpy", [dst, src, bytes, _kind]) => {
                let (Ok(d), Ok(s)) = (self.expr(strip_casts(dst)), self.expr(strip_casts(src)))
                else {
                    return None;
                };
                let Some((n, w)) = self.cells(bytes) else {
                    return refused(self, "`cudaMemcpy` of other than a count of `sizeof(int)`");
                };
                let copy = call(&format!("{COPY}{w}"), vec![d, s, n], span);
                Some(Stmt { kind: StmtKind::Expr(copy), span })
            }
            _ => None,
        }
    }
}

/// Declare the models of the host memory functions the program uses.
pub(super) fn host_models(items: &mut Vec<Item>) {
    let used: Vec<String> = super::called(items)
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| n.starts_with(ALLOC) || n.starts_with(FREE) || n.starts_with(COPY))
        .collect();
    for f in used {
        let copy = f.starts_with(COPY);
        let elem = if f.ends_with("boolean") { Type::boolean() } else { Type::int() };
        let arr = Type::new(TypeKind::Array(Box::new(elem), None));
        let d = Span::DUMMY;
        let name = |n: &str| lower::name(n, d);
        let bin = |op, a, b| lower::bin(op, a, b, d);
        let index = |a: Expr, i: Expr| Expr::new(ExprKind::Index(Box::new(a), Box::new(i)), d);
        let len = |a: Expr| Expr::new(ExprKind::Field(Box::new(a), Ident::synth("length")), d);
        let perm = |a: Expr, p: Expr| {
            Expr::new(ExprKind::Builtin(Builtin::Perm, vec![index(a, name("i")), p]), d)
        };
        // `(\forall* int i; 0 <= i && i < hi; body)` (or `\forall`).
        let all = |kind, hi: Expr, body: Expr| {
            let range = bin(
                BinOp::And,
                bin(BinOp::Le, Expr::int(0), name("i")),
                bin(BinOp::Lt, name("i"), hi),
            );
            Expr::new(
                ExprKind::Quant {
                    kind,
                    bindings: vec![Binding {
                        ty: Type::int(),
                        name: Ident::synth("i"),
                        range: None,
                        span: d,
                    }],
                    cond: Some(Box::new(range)),
                    body: Box::new(body),
                },
                d,
            )
        };
        let null = || Expr::new(ExprKind::Null, d);
        let write = || Expr::new(ExprKind::Write, d);
        let c = |kind, e| Clause { kind, body: ClauseBody::Expr(e), span: d };
        let p = |t: &Type, n: &str| Param { ty: t.clone(), name: Ident::synth(n), span: d };
        let star = QuantKind::ForallStar;
        if f.starts_with(ALLOC) {
            // As `__shared__` memory: fresh cells of unknown contents.
            items.push(Item::Method(super::lower::fresh_block(f)));
            continue;
        }
        let (clauses, params, ret) = if f.starts_with(FREE) {
            // `free(NULL)` does nothing; a block is freed whole.
            let owned = all(star, len(name("p")), perm(name("p"), write()));
            (
                vec![c(
                    ClauseKind::Requires,
                    bin(BinOp::Implies, bin(BinOp::Ne, name("p"), null()), owned),
                )],
                vec![p(&arr, "p")],
                Type::new(TypeKind::Void),
            )
        } else {
            let sized = |a: &str| {
                bin(
                    BinOp::And,
                    bin(BinOp::Ne, name(a), null()),
                    bin(BinOp::Le, name("n"), len(name(a))),
                )
            };
            let reads = all(star, name("n"), perm(name("src"), half()));
            let writes = all(star, name("n"), perm(name("dst"), write()));
            let same = bin(BinOp::Eq, index(name("dst"), name("i")), index(name("src"), name("i")));
            let copied = all(QuantKind::Forall, name("n"), same);
            (
                vec![
                    c(ClauseKind::Requires, bin(BinOp::Le, Expr::int(0), name("n"))),
                    c(ClauseKind::Requires, bin(BinOp::And, sized("dst"), sized("src"))),
                    c(ClauseKind::Context, reads),
                    c(ClauseKind::Context, writes),
                    c(ClauseKind::Ensures, copied),
                ],
                vec![p(&arr, "dst"), p(&arr, "src"), p(&Type::int(), "n")],
                Type::new(TypeKind::Void),
            )
        };
        items.push(Item::Method(Method {
            prefix: Prefix { clauses, ..Prefix::default() },
            modifiers: vec![],
            kind: MethodKind::Method,
            ret,
            name: Ident::synth(f),
            type_params: vec![],
            params,
            body: if copy { MethodBody::Block(copy_body()) } else { MethodBody::Abstract },
            span: d,
        }));
    }
}

/// `par (int i = 0 .. n) context Perm(dst[i], write) ** Perm(src[i], 1\2); ensures dst[i] ==
/// src[i]; { dst[i] = src[i]; }`: the copy runs (a source cell keeps its value by the part of
/// its permission the caller keeps).
fn copy_body() -> Block {
    let d = Span::DUMMY;
    let name = |n: &str| lower::name(n, d);
    let cell = |a: &str| Expr::new(ExprKind::Index(Box::new(name(a)), Box::new(name("i"))), d);
    let perm = |a: &str, p: Expr| Expr::new(ExprKind::Builtin(Builtin::Perm, vec![cell(a), p]), d);
    let both =
        lower::bin(BinOp::Star, perm("dst", Expr::new(ExprKind::Write, d)), perm("src", half()), d);
    let same = lower::bin(BinOp::Eq, cell("dst"), cell("src"), d);
    let clause = |kind, e| Clause { kind, body: ClauseBody::Expr(e), span: d };
    let assign =
        Stmt { kind: StmtKind::Assign { target: cell("dst"), value: cell("src") }, span: d };
    let arm = ParArm {
        label: None,
        iters: vec![Iter {
            ty: Type::int(),
            name: Ident::synth("i"),
            lo: Expr::int(0),
            hi: name("n"),
            span: d,
        }],
        wait: None,
        contract: vec![clause(ClauseKind::Context, both), clause(ClauseKind::Ensures, same)],
        body: Box::new(Stmt {
            kind: StmtKind::Block(Block { stmts: vec![assign], span: d }),
            span: d,
        }),
        span: d,
    };
    let par = Par { prefix: Prefix::default(), arms: vec![arm], keyword: d, loop_form: false };
    Block { stmts: vec![Stmt { kind: StmtKind::Par(par), span: d }], span: d }
}
