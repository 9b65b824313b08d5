//! Vector types of CUDA (`int2`, `int4`, …), OpenCL (`int2` … `int16`) and GCC (`__v4si`):
//! a local vector variable is its lanes, one `int` variable each (`v.0`, `v.1`, …), and every
//! vector operation is the same operation on each lane. So the verifier and the interpreter see
//! plain integer code, and the permissions of `vload2(i, p)`/`vstore2(v, i, p)` are those of
//! the cells they read and write (`p[2 * i]`, `p[2 * i + 1]`).
//!
//! Read: declarations with a `make_intN(…)`, `(intN)(…)`, `vloadN(i, p)`, `{…}` or vector
//! expression initializer; `v = e;` and `v op= e;` of a whole vector; a lane `v.x`, `v.s3`,
//! `v[2]` anywhere a scalar goes (also assigned); lane-wise `+ - * / %` with vectors or a scalar
//! on either side, and comparisons (a lane is -1 where true, 0 where false, as in OpenCL and
//! GCC); `vstoreN(v, i, p)`. Refused by name: vectors of other element types, vector
//! parameters and results, pointers to vectors, and swizzles of several lanes (`v.xy`).

use super::convert::{Body, Conv, R};
use super::lower::name;
use crate::ast::*;
use crate::span::Span;
use lang_c::ast as c;
use lang_c::span::Node;

/// The number of lanes of an integer vector type name.
pub(super) fn lanes_of_type(name: &str) -> Option<usize> {
    match name {
        "__v2si" => return Some(2),
        "__v4si" => return Some(4),
        "__v8si" => return Some(8),
        _ => {}
    }
    let n = name.strip_prefix("uint").or_else(|| name.strip_prefix("int"))?;
    match n {
        "2" => Some(2),
        "3" => Some(3),
        "4" => Some(4),
        "8" => Some(8),
        "16" => Some(16),
        _ => None,
    }
}

/// The lane a component name selects: `x y z w`, `s0` … `sF` (`sa` … `sf` too).
fn lane_index(component: &str) -> Option<usize> {
    match component {
        "x" => Some(0),
        "y" => Some(1),
        "z" => Some(2),
        "w" => Some(3),
        _ => {
            let hex = component.strip_prefix('s')?;
            if hex.len() != 1 {
                return None;
            }
            usize::from_str_radix(hex, 16).ok()
        }
    }
}

/// The variable holding lane `k` of vector `v`.
fn lane_name(v: &str, k: usize) -> String {
    format!("{v}.{k}")
}

impl Conv<'_> {
    /// The vector lanes of a declaration's base type, if it is a vector type.
    fn vector_type(&self, specs: &[Node<c::DeclarationSpecifier>]) -> Option<usize> {
        specs.iter().find_map(|s| match &s.node {
            c::DeclarationSpecifier::TypeSpecifier(t) => match &t.node {
                c::TypeSpecifier::TypedefName(n) => lanes_of_type(&n.node.name),
                _ => None,
            },
            _ => None,
        })
    }

    /// A declaration of vector variables: each one's lanes, declared and initialised. `false`
    /// when the declaration is of no vector type.
    pub(super) fn vector_decl(
        &mut self,
        d: &Node<c::Declaration>,
        span: Span,
        out: &mut Body,
    ) -> bool {
        let Some(n) = self.vector_type(&d.node.specifiers) else { return false };
        // `vload2(i, p) /*@ given {r = …} @*/`: VerCors' contract of `vload2` wants the
        // fraction it reads; here the reads are the lanes' own, checked as any other read.
        for (k, a) in self.prep.annots.iter().enumerate() {
            if span.contains(a.span) && a.body.text(self.norm).trim_start().starts_with("given") {
                self.used[k] = true;
            }
        }
        for id in &d.node.declarators {
            let decl = &id.node.declarator;
            let at = self.sp(id.span);
            let c::DeclaratorKind::Identifier(v) = &decl.node.kind.node else {
                self.unsupported("a vector declarator other than a name", at);
                continue;
            };
            if !decl.node.derived.is_empty() {
                self.unsupported("a pointer to or an array of vectors", at);
                continue;
            }
            let v = v.node.name.clone();
            let values: Vec<Option<Expr>> = match &id.node.initializer {
                None => vec![None; n],
                Some(Node { node: c::Initializer::Expression(e), .. }) => {
                    match self.vector_value(e, n) {
                        Ok(ls) => ls.into_iter().map(Some).collect(),
                        Err(()) => continue,
                    }
                }
                Some(Node { node: c::Initializer::List(items), .. }) => {
                    let mut ls = Vec::new();
                    for it in items {
                        match &it.node.initializer.node {
                            c::Initializer::Expression(e) if it.node.designation.is_empty() => {
                                match self.expr(e) {
                                    Ok(x) => ls.push(Some(x)),
                                    Err(()) => return true,
                                }
                            }
                            _ => {
                                self.unsupported("a nested or designated vector initializer", at);
                                return true;
                            }
                        }
                    }
                    if ls.len() > n {
                        self.unsupported("a vector initializer with more elements than lanes", at);
                        continue;
                    }
                    // Lanes past the list are zero, as in C.
                    ls.resize(n, Some(Expr::int(0)));
                    ls
                }
            };
            self.vectors.insert(v.clone(), n);
            for (k, init) in values.into_iter().enumerate() {
                let var = Declarator { name: Ident::new(lane_name(&v, k), at), init, span: at };
                let ty = Type { kind: TypeKind::Int, span: at };
                out.stmts.push(Stmt { kind: StmtKind::Decl { ty, vars: vec![var] }, span });
            }
        }
        true
    }

    /// Whether `e` has a vector type (as far as this reading goes).
    pub(super) fn is_vector(&self, e: &Node<c::Expression>) -> bool {
        use c::Expression as E;
        match &e.node {
            E::Identifier(id) => self.vectors.contains_key(&id.node.name),
            E::Call(call) => match &call.node.callee.node {
                E::Identifier(f) => {
                    let f = f.node.name.as_str();
                    f.starts_with("make_int") || f.starts_with("vload")
                }
                _ => false,
            },
            E::BinaryOperator(b) => {
                !matches!(b.node.operator.node, c::BinaryOperator::Index)
                    && (self.is_vector(&b.node.lhs) || self.is_vector(&b.node.rhs))
            }
            E::Cast(k) => k.node.type_name.node.specifiers.iter().any(|s| {
                matches!(&s.node, c::SpecifierQualifier::TypeSpecifier(t)
                    if matches!(&t.node, c::TypeSpecifier::TypedefName(n) if lanes_of_type(&n.node.name).is_some()))
            }),
            _ => false,
        }
    }

    /// The lanes of a vector expression of `n` lanes.
    pub(super) fn vector_value(&mut self, e: &Node<c::Expression>, n: usize) -> R<Vec<Expr>> {
        use c::Expression as E;
        let span = self.sp(e.span);
        let lanes = match &e.node {
            E::Identifier(id) if self.vectors.contains_key(&id.node.name) => {
                let m = self.vectors[&id.node.name];
                (0..m).map(|k| name(&lane_name(&id.node.name, k), span)).collect()
            }
            E::Call(call) => {
                let E::Identifier(f) = &call.node.callee.node else {
                    self.unsupported("this vector expression", span);
                    return Err(());
                };
                let f = f.node.name.as_str();
                if let Some(m) = f.strip_prefix("vload").and_then(|m| m.parse::<usize>().ok()) {
                    let [i, p] = call.node.arguments.as_slice() else {
                        self.unsupported("a `vload` call without an index and a pointer", span);
                        return Err(());
                    };
                    let (i, p) = (self.expr(i)?, self.expr(p)?);
                    (0..m)
                        .map(|k| {
                            let at = Expr::bin(
                                BinOp::Add,
                                Expr::bin(BinOp::Mul, Expr::int(m as i64), i.clone()),
                                Expr::int(k as i64),
                            );
                            Expr::new(ExprKind::Index(Box::new(p.clone()), Box::new(at)), span)
                        })
                        .collect()
                } else if f.starts_with("make_int") {
                    let mut v = Vec::new();
                    for a in &call.node.arguments {
                        v.push(self.expr(a)?);
                    }
                    v
                } else {
                    self.unsupported(&format!("a call to `{f}` as a vector value"), span);
                    return Err(());
                }
            }
            // `(int4)(a, b)`: the lanes of its parts, one after the other.
            E::Cast(k) => {
                let parts: Vec<&Node<c::Expression>> = match &k.node.expression.node {
                    E::Comma(xs) => xs.iter().collect(),
                    _ => vec![&k.node.expression],
                };
                let mut v = Vec::new();
                for p in parts {
                    if self.is_vector(p) {
                        let m = self.lanes_of(p).unwrap_or(n);
                        v.extend(self.vector_value(p, m)?);
                    } else {
                        v.push(self.expr(p)?);
                    }
                }
                // `(int4)(x)`: one scalar for every lane.
                if v.len() == 1 {
                    v = vec![v[0].clone(); n];
                }
                v
            }
            E::BinaryOperator(b) => {
                use c::BinaryOperator as B;
                let op = match b.node.operator.node {
                    B::Plus => BinOp::Add,
                    B::Minus => BinOp::Sub,
                    B::Multiply => BinOp::Mul,
                    B::Divide => BinOp::Div,
                    B::Modulo => BinOp::Mod,
                    B::Equals => BinOp::Eq,
                    B::NotEquals => BinOp::Ne,
                    B::Less => BinOp::Lt,
                    B::LessOrEqual => BinOp::Le,
                    B::Greater => BinOp::Gt,
                    B::GreaterOrEqual => BinOp::Ge,
                    _ => {
                        self.unsupported("this operator on vectors", span);
                        return Err(());
                    }
                };
                let l = self.operand_lanes(&b.node.lhs, n)?;
                let r = self.operand_lanes(&b.node.rhs, n)?;
                let compare = matches!(
                    op,
                    BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
                );
                l.into_iter()
                    .zip(r)
                    .map(|(x, y)| {
                        let v = Expr::new(ExprKind::Binary(op, Box::new(x), Box::new(y)), span);
                        if compare {
                            let t = Expr::int(-1);
                            Expr::new(
                                ExprKind::Cond(Box::new(v), Box::new(t), Box::new(Expr::int(0))),
                                span,
                            )
                        } else {
                            v
                        }
                    })
                    .collect()
            }
            _ => {
                self.unsupported("this vector expression", span);
                return Err(());
            }
        };
        if lanes.len() != n {
            self.unsupported("a vector value with another number of lanes than its target", span);
            return Err(());
        }
        Ok(lanes)
    }

    /// The lanes of an operand of a lane-wise operation: a vector's, or a scalar's, repeated.
    fn operand_lanes(&mut self, e: &Node<c::Expression>, n: usize) -> R<Vec<Expr>> {
        if self.is_vector(e) {
            self.vector_value(e, n)
        } else {
            let x = self.expr(e)?;
            Ok(vec![x; n])
        }
    }

    /// The number of lanes of a vector expression, where it is known without its context.
    fn lanes_of(&self, e: &Node<c::Expression>) -> Option<usize> {
        use c::Expression as E;
        match &e.node {
            E::Identifier(id) => self.vectors.get(&id.node.name).copied(),
            E::Call(call) => match &call.node.callee.node {
                E::Identifier(f) => {
                    let f = f.node.name.as_str();
                    f.strip_prefix("vload")
                        .or_else(|| f.strip_prefix("make_int"))
                        .and_then(|m| m.parse().ok())
                }
                _ => None,
            },
            E::BinaryOperator(b) => {
                self.lanes_of(&b.node.lhs).or_else(|| self.lanes_of(&b.node.rhs))
            }
            _ => None,
        }
    }

    /// A lane of a vector variable, `v.x`, `v.s3` or `v[2]`, as its variable; `None` for
    /// anything else (a multi-lane swizzle is refused).
    pub(super) fn lane_access(&mut self, e: &Node<c::Expression>) -> Option<R<Expr>> {
        use c::Expression as E;
        let span = self.sp(e.span);
        let (v, k) = match &e.node {
            E::Member(m) => {
                let E::Identifier(base) = &m.node.expression.node else { return None };
                if !self.vectors.contains_key(&base.node.name) {
                    return None;
                }
                let comp = &m.node.identifier.node.name;
                match lane_index(comp) {
                    Some(k) => (base.node.name.clone(), k),
                    None => {
                        self.unsupported(
                            &format!("the vector component `.{comp}` (several lanes at once)"),
                            span,
                        );
                        return Some(Err(()));
                    }
                }
            }
            E::BinaryOperator(b) if matches!(b.node.operator.node, c::BinaryOperator::Index) => {
                let E::Identifier(base) = &b.node.lhs.node else { return None };
                if !self.vectors.contains_key(&base.node.name) {
                    return None;
                }
                let E::Constant(c) = &b.node.rhs.node else {
                    self.unsupported("a vector lane chosen by a non-constant index", span);
                    return Some(Err(()));
                };
                let c::Constant::Integer(i) = &c.node else { return None };
                let Ok(k) = i.number.parse::<usize>() else { return None };
                (base.node.name.clone(), k)
            }
            _ => return None,
        };
        if k >= self.vectors[&v] {
            self.unsupported("a vector lane past the vector's last", span);
            return Some(Err(()));
        }
        Some(Ok(name(&lane_name(&v, k), span)))
    }

    /// `v = e;` or `v op= e;` for a vector variable `v`: each lane assigned, from temporaries
    /// when `e` reads `v` itself. `false` for any other assignment.
    pub(super) fn vector_assign(
        &mut self,
        lhs: &Node<c::Expression>,
        rhs: &Node<c::Expression>,
        op: Option<CompoundOp>,
        span: Span,
        out: &mut Body,
    ) -> bool {
        let c::Expression::Identifier(id) = &lhs.node else { return false };
        let Some(&n) = self.vectors.get(&id.node.name) else { return false };
        let Ok(values) = self.operand_lanes(rhs, n) else { return true };
        let v = id.node.name.clone();
        let temps: Vec<String> = (0..n).map(|k| format!("{v}.tmp{k}")).collect();
        for (k, x) in values.into_iter().enumerate() {
            let var = Declarator { name: Ident::new(&temps[k], span), init: Some(x), span };
            let ty = Type { kind: TypeKind::Int, span };
            out.stmts.push(Stmt { kind: StmtKind::Decl { ty, vars: vec![var] }, span });
        }
        for (k, t) in temps.iter().enumerate() {
            let target = name(&lane_name(&v, k), span);
            let value = name(t, span);
            let kind = match op {
                None => StmtKind::Assign { target, value },
                Some(op) => StmtKind::CompoundAssign { target, op, value },
            };
            out.stmts.push(Stmt { kind, span });
        }
        true
    }

    /// `vstoreN(v, i, p)`: lane `k` of `v` to `p[N * i + k]`.
    pub(super) fn vector_store(
        &mut self,
        call: &Node<c::CallExpression>,
        span: Span,
        out: &mut Body,
    ) {
        let c::Expression::Identifier(f) = &call.node.callee.node else { return };
        let Some(m) = f.node.name.strip_prefix("vstore").and_then(|m| m.parse::<usize>().ok())
        else {
            return;
        };
        let [v, i, p] = call.node.arguments.as_slice() else {
            self.unsupported("a `vstore` call without a vector, an index and a pointer", span);
            return;
        };
        let (Ok(lanes), Ok(i), Ok(p)) = (self.vector_value(v, m), self.expr(i), self.expr(p))
        else {
            return;
        };
        for (k, x) in lanes.into_iter().enumerate() {
            let at = Expr::bin(
                BinOp::Add,
                Expr::bin(BinOp::Mul, Expr::int(m as i64), i.clone()),
                Expr::int(k as i64),
            );
            let target = Expr::new(ExprKind::Index(Box::new(p.clone()), Box::new(at)), span);
            out.stmts.push(Stmt { kind: StmtKind::Assign { target, value: x }, span });
        }
    }
}
