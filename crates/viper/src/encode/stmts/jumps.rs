//! `goto`, `label` and `return` before the end of a method (`verification.md` §5.7).
//!
//! PVL labels become Viper labels and `goto l` a Viper `goto`; an early `return e` assigns the
//! result and jumps to a label at the end of the method. Silicon verifies gotos out of loops
//! and loops formed by gotos soundly (the latter with no invariant: the state is havocked), but
//! a goto *into* a loop body skips the invariant check and verifies anything (checked: `goto`
//! into a `while` followed by `assert false` verifies). So each method's jumps are checked on
//! the encoded body: every target exists, no goto enters a loop from outside, and no gotos form
//! a loop (refused rather than verified with an invariant the user never wrote). Jumps inside
//! `par` arms and out of `invariant`/`atomic` blocks are refused up front: the former belong to
//! another Viper method, the latter would skip the exhale of the resource invariant.

use super::super::{Encoder, R};
use crate::ast::*;
use front::ast;
use front::span::Span;
use std::collections::HashMap;

impl Encoder<'_> {
    /// Can control leave the current statement by a jump? Not from a par arm (a thread method of
    /// its own) nor from an `invariant`/`atomic` block (the invariant's exhale would be skipped).
    fn jump_allowed(&mut self, what: &str, span: Span) -> R<()> {
        if !self.pars.is_empty() {
            self.unsupported(&format!("{what} inside a par block"), span);
            return Err(());
        }
        if self.fence > 0 {
            self.unsupported(&format!("{what} inside an `invariant` or `atomic` block"), span);
            return Err(());
        }
        Ok(())
    }

    /// The Viper label of a PVL label (fresh, and the same for every mention in the method).
    fn label_name(&mut self, pvl: &str) -> String {
        if let Some(v) = self.labels.get(pvl) {
            return v.clone();
        }
        let v = self.fresh_name(pvl);
        self.labels.insert(pvl.to_string(), v.clone());
        v
    }

    /// `goto l;` and `label l;` (parsed as opaque statements: the operand is the label name).
    pub(super) fn jump_stmt(&mut self, op: &ast::Opaque, out: &mut Vec<Stmt>) -> R<()> {
        let name = op.text.trim().strip_prefix(op.keyword.as_str()).unwrap_or("");
        let name = name.trim().trim_end_matches(';').trim();
        let ident = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !ident {
            self.bad(format!("`{}` needs a label name", op.keyword), op.span);
            return Err(());
        }
        let origin = Origin::new(Role::Code, Some(op.span));
        if op.keyword == "goto" {
            self.jump_allowed("`goto`", op.span)?;
            let l = self.label_name(name);
            out.push(Stmt::new(StmtKind::Goto(l), origin));
        } else {
            self.jump_allowed("a label", op.span)?;
            if self.defined_labels.insert(name.to_string(), op.span).is_some() {
                self.bad(format!("the label `{name}` is defined twice"), op.span);
                return Err(());
            }
            let l = self.label_name(name);
            out.push(Stmt::new(StmtKind::Label(l), origin));
        }
        Ok(())
    }

    /// `return e;` before the end of the method: assign the result, jump to the end.
    pub(super) fn early_return(&mut self, span: Span, out: &mut Vec<Stmt>) -> R<()> {
        self.jump_allowed("`return` before the end of the method", span)?;
        let l = match &self.ret_label {
            Some(l) => l.clone(),
            None => {
                let l = self.fresh_name("end");
                self.ret_label = Some(l.clone());
                l
            }
        };
        out.push(Stmt::new(StmtKind::Goto(l), Origin::new(Role::Code, Some(span))));
        Ok(())
    }

    /// Close a method body: the end label of early returns, then the checks of the module doc.
    pub fn finish_jumps(&mut self, body: &mut Vec<Stmt>) -> R<()> {
        if let Some(l) = self.ret_label.take() {
            body.push(Stmt::new(StmtKind::Label(l), Origin::synthetic()));
        }
        let mut ok = true;
        let gotos: Vec<(String, Span)> = self
            .labels
            .iter()
            .filter(|(p, _)| !self.defined_labels.contains_key(*p))
            .map(|(p, _)| (p.clone(), Span::DUMMY))
            .collect();
        for (p, _) in gotos {
            let at = first_goto(body, &self.labels[&p]).unwrap_or(Span::DUMMY);
            self.bad(format!("no label `{p}` in this method"), at);
            ok = false;
        }
        if !ok {
            return Err(());
        }
        let mut cfg = Cfg::default();
        let exit = cfg.node(None);
        cfg.block(body, exit, &mut Vec::new());
        for (from, target, loops_at_goto) in &cfg.gotos {
            let Some((to, loops_at_label)) = cfg.labels.get(target) else { continue };
            cfg.succ[*from].push(*to);
            if !loops_at_goto.starts_with(loops_at_label) {
                let sp = cfg.spans[*from].unwrap_or(Span::DUMMY);
                self.unsupported("a `goto` into a loop body", sp);
                ok = false;
            }
        }
        if ok {
            if let Some(n) = cfg.cycle() {
                let sp = cfg.spans[n].unwrap_or(Span::DUMMY);
                self.unsupported("a loop formed by `goto` (it has no loop invariant)", sp);
                ok = false;
            }
        }
        if ok {
            Ok(())
        } else {
            Err(())
        }
    }
}

fn first_goto(ss: &[Stmt], label: &str) -> Option<Span> {
    ss.iter().find_map(|s| match &s.kind {
        StmtKind::Goto(l) if l == label => s.origin.span,
        StmtKind::If(_, t, e) => first_goto(t, label).or_else(|| first_goto(e, label)),
        StmtKind::While(_, _, b) => first_goto(b, label),
        _ => None,
    })
}

/// The control-flow graph of a method body without the back edges of `while` loops: a cycle in
/// it is a loop made of gotos.
#[derive(Default)]
struct Cfg {
    succ: Vec<Vec<usize>>,
    spans: Vec<Option<Span>>,
    /// Label → (node, the loops it is inside, outermost first).
    labels: HashMap<String, (usize, Vec<usize>)>,
    /// (goto node, target label, the loops it is inside).
    gotos: Vec<(usize, String, Vec<usize>)>,
}

impl Cfg {
    fn node(&mut self, span: Option<Span>) -> usize {
        self.succ.push(Vec::new());
        self.spans.push(span);
        self.succ.len() - 1
    }

    /// Add the statements of a block that continues at `next`; returns its entry node.
    fn block(&mut self, ss: &[Stmt], next: usize, loops: &mut Vec<usize>) -> usize {
        let mut next = next;
        for s in ss.iter().rev() {
            let n = self.node(s.origin.span);
            match &s.kind {
                StmtKind::Goto(l) => self.gotos.push((n, l.clone(), loops.clone())),
                StmtKind::Label(l) => {
                    self.labels.insert(l.clone(), (n, loops.clone()));
                    self.succ[n].push(next);
                }
                StmtKind::If(_, t, e) => {
                    let a = self.block(t, next, loops);
                    let b = self.block(e, next, loops);
                    self.succ[n].extend([a, b]);
                }
                StmtKind::While(_, _, b) => {
                    loops.push(n);
                    let body = self.block(b, next, loops);
                    loops.pop();
                    self.succ[n].extend([body, next]);
                }
                _ => self.succ[n].push(next),
            }
            next = n;
        }
        next
    }

    /// A node on a cycle, if any (iterative depth-first search).
    fn cycle(&self) -> Option<usize> {
        // 0: unvisited, 1: on the stack, 2: done.
        let mut state = vec![0u8; self.succ.len()];
        for root in 0..self.succ.len() {
            if state[root] != 0 {
                continue;
            }
            let mut stack = vec![(root, 0usize)];
            state[root] = 1;
            while let Some((n, i)) = stack.pop() {
                if let Some(&m) = self.succ[n].get(i) {
                    stack.push((n, i + 1));
                    match state[m] {
                        0 => {
                            state[m] = 1;
                            stack.push((m, 0));
                        }
                        1 => return Some(m),
                        _ => {}
                    }
                } else {
                    state[n] = 2;
                }
            }
        }
        None
    }
}
