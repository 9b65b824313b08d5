//! Which accesses a suggestion changes: the per-access tables of the file and of the applied
//! output on the first input both ran, side by side. An access is matched by what it is (read
//! or write, memory space, text), not by its line, which the rewrite moves; accesses of the
//! same text are summed. Only those whose executions, sectors or conflicts differ are kept,
//! largest change first.

use crate::sem::cost::{AccessCost, Space};
use serde::Serialize;
use std::collections::BTreeMap;

/// An access's totals on one side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Tally {
    pub execs: u64,
    pub sectors: u64,
    pub conflicts: u64,
}

/// One access as the file and as the output executed it (`None`: the side has no such access).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct AccessChange {
    pub text: String,
    pub write: bool,
    pub space: Option<Space>,
    pub before: Option<Tally>,
    pub after: Option<Tally>,
}

type Key = (bool, Option<Space>, String);

fn tally(list: &[AccessCost]) -> BTreeMap<Key, Tally> {
    let mut out: BTreeMap<Key, Tally> = BTreeMap::new();
    for a in list {
        let t = out.entry((a.write, a.space, a.text.clone())).or_default();
        t.execs += a.execs;
        t.sectors += a.sectors;
        t.conflicts += a.conflicts;
    }
    out
}

/// The accesses whose totals differ between `orig` and `opt`, largest memory change first.
pub(crate) fn changed(orig: &[AccessCost], opt: &[AccessCost]) -> Vec<AccessChange> {
    let (a, b) = (tally(orig), tally(opt));
    let mut keys: Vec<&Key> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut out: Vec<AccessChange> = keys
        .into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| AccessChange {
            text: k.2.clone(),
            write: k.0,
            space: k.1,
            before: a.get(k).copied(),
            after: b.get(k).copied(),
        })
        .collect();
    let weight = |c: &AccessChange| {
        let (x, y) = (c.before.unwrap_or_default(), c.after.unwrap_or_default());
        (
            x.sectors.abs_diff(y.sectors) + x.conflicts.abs_diff(y.conflicts),
            x.execs.abs_diff(y.execs),
        )
    };
    // Stable: equal weights keep the order of the keys (deterministic).
    out.sort_by_key(|q| std::cmp::Reverse(weight(q)));
    out
}

impl AccessChange {
    /// `read A[i] (global): 128 runs, 512 sectors -> 64 runs, 256 sectors`.
    pub(crate) fn line(&self) -> String {
        let side = |t: Option<Tally>| match t {
            None => "none".to_string(),
            Some(t) => {
                let mut s = format!("{} runs", t.execs);
                match self.space {
                    Some(Space::Shared) => s += &format!(", {} conflicts", t.conflicts),
                    Some(Space::Local) => {}
                    _ => s += &format!(", {} sectors", t.sectors),
                }
                s
            }
        };
        let space = self.space.map_or("?".to_string(), |s| s.to_string());
        format!(
            "{} {} ({space}): {} -> {}",
            if self.write { "write" } else { "read" },
            self.text,
            side(self.before),
            side(self.after)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(line: usize, text: &str, execs: u64, sectors: u64) -> AccessCost {
        AccessCost {
            line,
            text: text.into(),
            space: Some(Space::Global),
            execs,
            sectors,
            ..AccessCost::default()
        }
    }

    #[test]
    fn accesses_are_matched_by_text_not_line_and_only_changes_are_kept() {
        let orig = [acc(10, "A[i]", 4, 16), acc(11, "A[i]", 4, 16), acc(12, "B[i]", 4, 4)];
        // The rewrite moved B's access to another line and read A once into a register.
        let opt = [acc(13, "B[i]", 4, 4), acc(9, "A[i]", 4, 8), acc(9, "a_reg", 8, 0)];
        let got = changed(&orig, &opt);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].text, "A[i]");
        assert_eq!(got[0].before, Some(Tally { execs: 8, sectors: 32, conflicts: 0 }));
        assert_eq!(got[0].after, Some(Tally { execs: 4, sectors: 8, conflicts: 0 }));
        assert_eq!(got[0].line(), "read A[i] (global): 8 runs, 32 sectors -> 4 runs, 8 sectors");
        assert_eq!(got[1].before, None);
        assert!(got[1].line().ends_with("none -> 8 runs, 0 sectors"), "{}", got[1].line());
    }
}
