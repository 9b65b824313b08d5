//! Facts that hold for a method's whole run: precondition conjuncts that read no heap and name
//! only parameters the method never assigns. Every `par` thread of the method assumes them
//! (`stmts/par.rs`), and `send`/`recv` may name those parameters (`stmts/sendrecv.rs`).

use super::{order, Encoder};
use crate::ast::*;
use front::ast::{self, MethodBody};
use std::collections::HashSet;

impl Encoder<'_> {
    /// The conjuncts of `pres` that hold for the whole run of `m` ([`Encoder::fixed_facts`]).
    pub(super) fn fixed(
        &self,
        m: &ast::Method,
        pres: &[Contract],
    ) -> (HashSet<String>, Vec<Contract>) {
        let MethodBody::Block(body) = &m.body else { return Default::default() };
        let mut assigned = HashSet::new();
        for s in &body.stmts {
            front::visit::walk_stmts(s, &mut |st| match &st.kind {
                ast::StmtKind::Assign { target, .. }
                | ast::StmtKind::CompoundAssign { target, .. }
                | ast::StmtKind::IncDec { target, .. } => {
                    if let Some(n) = target.as_name() {
                        assigned.insert(n.to_string());
                    }
                }
                _ => {}
            });
        }
        let names: HashSet<String> = m
            .params
            .iter()
            .map(|p| p.name.name.clone())
            .filter(|n| !assigned.contains(n))
            .collect();
        let mut fixed: HashSet<String> =
            names.iter().filter_map(|n| self.lookup(n).map(|l| l.viper.clone())).collect();
        // The receiver is never assigned: `committed(this)`, `this != null` hold throughout.
        if !m.has_modifier(ast::Modifier::Static) && !m.kind.is_ctor() {
            fixed.insert("this".into());
        }
        let facts = pres
            .iter()
            .filter(|c| c.origin.role == Role::Pre && order::heap_free(&c.exp))
            .filter(|c| {
                let mut ok = true;
                c.exp.visit(&mut |e| {
                    if let ExpKind::Var(v) = &e.kind {
                        ok &= fixed.contains(v.as_str());
                    }
                });
                ok
            })
            .cloned()
            .collect();
        (names, facts)
    }
}
