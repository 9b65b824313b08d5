//! Fresh, deterministic generated names (optimizations.md §1.5).

use front::lexer::{lex, TokKind};
use std::collections::BTreeSet;

/// Hands out names that differ from every identifier in the file and from every name generated
/// earlier in the run. Deterministic: the smallest free suffix `_1`, `_2`, … is appended.
#[derive(Clone, Debug, Default)]
pub struct NameGen {
    taken: BTreeSet<String>,
    /// Names that needed a suffix since the last [`NameGen::take_suffixed`]: (base, name).
    suffixed: Vec<(String, String)>,
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
                // Most names are already known after the first call: look before allocating.
                let name = t.span.text(src).trim_matches('`');
                if !self.taken.contains(name) {
                    self.taken.insert(name.to_string());
                }
            }
        }
    }

    /// Mark the identifiers around the byte ranges `written` of `src` (the text an edit wrote) as
    /// taken: the rest of `src` was seen before. Each range is widened to whole words, since an
    /// edit may have extended a word of the old text. Every run of word characters that starts
    /// like an identifier counts, inside comments too: a superset of the identifiers, which can
    /// only make generated names longer, never clash.
    pub fn add_written(&mut self, src: &str, written: &[(usize, usize)]) {
        let bytes = src.as_bytes();
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        for &(lo, hi) in written {
            let (mut lo, mut hi) = (lo.min(bytes.len()), hi.min(bytes.len()));
            while lo > 0 && word(bytes[lo - 1]) {
                lo -= 1;
            }
            while hi < bytes.len() && word(bytes[hi]) {
                hi += 1;
            }
            let mut i = lo;
            while i < hi {
                if !word(bytes[i]) {
                    i += 1;
                    continue;
                }
                let start = i;
                while i < hi && word(bytes[i]) {
                    i += 1;
                }
                let w = &src[start..i];
                if !bytes[start].is_ascii_digit() && !self.taken.contains(w) {
                    self.taken.insert(w.to_string());
                }
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
                self.suffixed.push((base.to_string(), cand.clone()));
                return (cand, true);
            }
            k += 1;
        }
    }

    /// The names that needed a suffix since the last call, as (base, name), in order.
    pub fn take_suffixed(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.suffixed)
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

    #[test]
    fn written_ranges_are_widened_to_words() {
        let mut g = NameGen::for_text("int x;");
        // An edit wrote `_tmp` right after an old `x`: the word is `x_tmp`.
        let out = "int x_tmp; /* y2 */ 3e5";
        g.add_written(out, &[(5, 9)]);
        assert!(g.is_taken("x_tmp"));
        assert!(!g.is_taken("y2"));
        g.add_written(out, &[(11, out.len())]);
        assert!(g.is_taken("y2"));
        assert!(!g.is_taken("3e5"));
    }
}
