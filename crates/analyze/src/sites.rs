//! Optimization sites (loops, par blocks, methods) and the attachment of `gpuopt` annotations.

use front::ast::*;
use front::span::Span;
use front::visit::walk_stmts;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SiteKind {
    Loop,
    Par,
    Method,
}

#[derive(Clone, Debug)]
pub struct Site {
    pub kind: SiteKind,
    /// `while`, `for`, the par label (or `par`), the method name.
    pub name: String,
    /// The whole construct, prefix included.
    pub span: Span,
    /// The keyword (`while`, `for`, `par`) or the method name.
    pub keyword: Span,
    /// Annotations attached to the construct.
    pub annotations: Vec<Annotation>,
    /// Enclosing class name (if any) and method name.
    pub class: Option<String>,
    pub method: String,
    /// Nesting depth of loops/par blocks inside the method (0 = top level of the body).
    pub depth: usize,
}

/// All sites in source order.
pub fn sites(program: &Program) -> Vec<Site> {
    let mut out = Vec::new();
    let method_sites = |class: Option<&Class>, m: &Method, out: &mut Vec<Site>| {
        // A declaration a front end adds (a CUDA runtime model, a shared-memory allocator) has
        // no text: nothing to optimize there.
        if m.span.is_empty() {
            return;
        }
        out.push(Site {
            kind: SiteKind::Method,
            name: m.name.name.clone(),
            span: m.span,
            keyword: m.name.span,
            annotations: m.prefix.annotations.clone(),
            class: class.map(|c| c.name.name.clone()),
            method: m.name.name.clone(),
            depth: 0,
        });
        if let MethodBody::Block(b) = &m.body {
            for s in &b.stmts {
                stmt_sites(s, class, m, 0, out);
            }
        }
    };
    for (c, m) in program.methods() {
        method_sites(c, m, &mut out);
    }
    out.sort_by_key(|s| (s.span.lo, std::cmp::Reverse(s.span.hi)));
    out
}

/// The C loops with an iteration contract (read as `par` blocks, and no sites): for the message
/// of a request that names one.
pub fn iteration_contract_loops(program: &Program) -> Vec<Span> {
    let mut out = Vec::new();
    for (_, m) in program.methods() {
        if let MethodBody::Block(b) = &m.body {
            for s in &b.stmts {
                walk_stmts(s, &mut |t: &Stmt| {
                    if matches!(&t.kind, StmtKind::Par(p) if p.loop_form) {
                        out.push(t.span);
                    }
                });
            }
        }
    }
    out
}

fn stmt_sites(s: &Stmt, class: Option<&Class>, m: &Method, depth: usize, out: &mut Vec<Site>) {
    let mk = |kind, name: String, keyword: Span, annotations: Vec<Annotation>| Site {
        kind,
        name,
        span: s.span,
        keyword,
        annotations,
        class: class.map(|c| c.name.name.clone()),
        method: m.name.name.clone(),
        depth,
    };
    match &s.kind {
        StmtKind::While(l) | StmtKind::For(l) => {
            let word = if matches!(s.kind, StmtKind::While(_)) { "while" } else { "for" };
            out.push(mk(SiteKind::Loop, word.into(), l.keyword, l.prefix.annotations.clone()));
            stmt_sites(&l.body, class, m, depth + 1, out);
        }
        StmtKind::RangedFor { prefix, body, keyword, .. } => {
            out.push(mk(SiteKind::Loop, "for".into(), *keyword, prefix.annotations.clone()));
            stmt_sites(body, class, m, depth + 1, out);
        }
        // The block-level `par` of a CUDA kernel's form has no text of its own (an empty
        // keyword): not a site; the thread-level one inside it is the kernel's.
        // Nor is a C loop read as a `par` (an iteration contract): its text is a loop.
        StmtKind::Par(p) if p.keyword.is_empty() || p.loop_form => {
            for a in &p.arms {
                stmt_sites(&a.body, class, m, depth, out);
            }
        }
        StmtKind::Par(p) => {
            let name =
                p.arms[0].label.as_ref().map_or_else(|| "par".to_string(), |l| l.name.clone());
            out.push(mk(SiteKind::Par, name, p.keyword, p.prefix.annotations.clone()));
            for a in &p.arms {
                stmt_sites(&a.body, class, m, depth + 1, out);
            }
        }
        StmtKind::Block(b) => b.stmts.iter().for_each(|x| stmt_sites(x, class, m, depth, out)),
        StmtKind::If { then, els, .. } => {
            stmt_sites(then, class, m, depth, out);
            if let Some(e) = els {
                stmt_sites(e, class, m, depth, out);
            }
        }
        StmtKind::Ghost(x) => stmt_sites(x, class, m, depth, out),
        StmtKind::Invariant { body, .. } | StmtKind::Atomic { body, .. } => {
            body.stmts.iter().for_each(|x| stmt_sites(x, class, m, depth, out))
        }
        StmtKind::Parallel { body, .. } => {
            body.iter().for_each(|x| stmt_sites(x, class, m, depth, out))
        }
        _ => {}
    }
}

/// Find the method (and its class) with the given name in class `class`.
pub fn find_method<'p>(
    program: &'p Program,
    class: Option<&str>,
    method: &str,
) -> Option<(Option<&'p Class>, &'p Method)> {
    for item in &program.items {
        match item {
            Item::Class(c) if class == Some(c.name.name.as_str()) => {
                for m in &c.members {
                    if let Member::Method(m) = m {
                        if m.name.name == method {
                            return Some((Some(c), m));
                        }
                    }
                }
            }
            Item::Method(m) if class.is_none() && m.name.name == method => return Some((None, m)),
            _ => {}
        }
    }
    None
}

/// The method that contains byte offset `off`.
pub fn method_at(program: &Program, off: usize) -> Option<(Option<&Class>, &Method)> {
    for item in &program.items {
        match item {
            Item::Class(c) if c.span.contains_offset(off) => {
                for m in &c.members {
                    if let Member::Method(m) = m {
                        if m.span.contains_offset(off) {
                            return Some((Some(c), m));
                        }
                    }
                }
            }
            Item::Method(m) if m.span.contains_offset(off) => return Some((None, m)),
            _ => {}
        }
    }
    None
}

/// The statement whose span starts exactly at `start` (prefix included) inside `m`.
pub fn stmt_at(m: &Method, start: usize) -> Option<&Stmt> {
    let MethodBody::Block(b) = &m.body else {
        return None;
    };
    let mut found = None;
    for s in &b.stmts {
        walk_stmts(s, &mut |st| {
            if found.is_none() && st.span.start() == start {
                found = Some(st);
            }
        });
        if found.is_some() {
            break;
        }
    }
    found
}
