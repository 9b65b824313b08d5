//! Fresh, deterministic generated names (optimizations.md §1.5).

use crate::front::lexer::{lex, TokKind};
use std::collections::BTreeSet;

/// Hands out names that differ from every identifier in the file and from every name generated
/// earlier in the run. Deterministic: the smallest free suffix `_1`, `_2`, … is appended.
#[derive(Clone, Debug, Default)]
pub struct NameGen {
    taken: BTreeSet<String>,
}

impl NameGen {
    pub fn for_text(src: &str) -> NameGen {
        let mut g = NameGen::default();
        g.add_text(src);
        g
    }

    /// Mark every identifier token of `src` as taken (e.g. after re-parsing an output).
    pub fn add_text(&mut self, src: &str) {
        for t in lex(src).tokens {
            if matches!(t.kind, TokKind::Word | TokKind::QuotedWord) {
                self.taken
                    .insert(t.span.text(src).trim_matches('`').to_string());
            }
        }
    }

    pub fn is_taken(&self, name: &str) -> bool {
        self.taken.contains(name)
    }

    /// A fresh name based on `base`; returns it and whether a suffix was needed (note A0030).
    pub fn fresh(&mut self, base: &str) -> (String, bool) {
        if self.taken.insert(base.to_string()) {
            return (base.to_string(), false);
        }
        let mut k = 1;
        loop {
            let cand = format!("{base}_{k}");
            if self.taken.insert(cand.clone()) {
                return (cand, true);
            }
            k += 1;
        }
    }

    /// Just the fresh name.
    pub fn name(&mut self, base: &str) -> String {
        self.fresh(base).0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_names_avoid_the_file() {
        let mut g = NameGen::for_text("int vct_i = 0; int vct_i_1;");
        assert_eq!(g.name("vct_i"), "vct_i_2");
        assert_eq!(g.name("vct_i"), "vct_i_3");
        assert_eq!(g.name("reg"), "reg");
        assert_eq!(g.name("reg"), "reg_1");
    }
}
