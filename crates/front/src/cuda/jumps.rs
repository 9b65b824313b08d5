//! Jumps in C input: a forward `goto` to a label later in the same block is the code it
//! skips run under the negated condition (`Conv::block`); the labels other jumps target
//! become `label L;` statements the verifier checks (`convert.rs`).

use super::convert::Conv;
use crate::ast::*;
use lang_c::ast as c;
use lang_c::span::Node;
use std::collections::HashSet;

impl Conv<'_> {
    /// Item `k` of a block as a forward jump: `goto L;` (condition `true`) or `if (c) goto L;`
    /// (condition `c`) with `L: …` a later item of the same block, and the index of that item.
    /// A label in between is not supported (another jump could land there).
    pub(super) fn forward_goto(
        &mut self,
        items: &[Node<c::BlockItem>],
        k: usize,
    ) -> Option<(Expr, usize)> {
        let c::BlockItem::Statement(st) = &items[k].node else { return None };
        let goto_label = |s: &Node<c::Statement>| match &s.node {
            c::Statement::Goto(l) => Some(l.node.name.clone()),
            c::Statement::Compound(b) => match b.as_slice() {
                [Node { node: c::BlockItem::Statement(g), .. }] => match &g.node {
                    c::Statement::Goto(l) => Some(l.node.name.clone()),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        };
        let (cond, label) = match &st.node {
            c::Statement::Goto(l) => (None, l.node.name.clone()),
            c::Statement::If(i) if i.node.else_statement.is_none() => {
                (Some(&i.node.condition), goto_label(&i.node.then_statement)?)
            }
            _ => return None,
        };
        let labelled = |it: &Node<c::BlockItem>| match &it.node {
            c::BlockItem::Statement(s) => match &s.node {
                c::Statement::Labeled(l) => match &l.node.label.node {
                    c::Label::Identifier(id) => Some(id.node.name.clone()),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        };
        let target =
            (k + 1..items.len()).find(|&j| labelled(&items[j]).as_deref() == Some(&label))?;
        if (k + 1..target).any(|j| labelled(&items[j]).is_some()) {
            return None;
        }
        let cond = match cond {
            Some(c) => self.expr(c).ok()?,
            None => Expr::new(ExprKind::Bool(true), self.sp(items[k].span)),
        };
        self.structured_labels.insert(label);
        Some((cond, target))
    }
}

/// The names after every `goto` of masked C text (comments and strings are blank there).
pub(super) fn goto_targets(masked: &str) -> HashSet<String> {
    let words: Vec<&str> = masked
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(2).filter(|w| w[0] == "goto").map(|w| w[1].to_string()).collect()
}
