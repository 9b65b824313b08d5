//! The cost model's ranking (`alpine-rs suggest --json` on a snapshot of the document) and the
//! cost run whose access rows the hover shows (`alpine-rs run --cost --format json`).

use crate::actions::SiteAction;
use crate::hover::{cost_rows, AccessRow};
use crate::jobs::{self, Cancel};
use crate::server::Event;
use crate::text::Doc;
use crossbeam_channel::Sender;
use std::path::PathBuf;
use std::time::Duration;

/// One ranked suggestion.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Ranked {
    pub rank: usize,
    pub optimization: String,
    pub line: usize,
    pub column: usize,
    pub params: Vec<(String, String)>,
    /// The objective's relative change (−0.065: 6.5 % less); `None`: not measured.
    pub change: Option<f64>,
    pub objective: String,
    pub verdict: String,
    pub command: String,
}

impl Ranked {
    /// Whether this suggestion is the action `a` (same optimization, site and parameters).
    pub fn is(&self, a: &SiteAction) -> bool {
        let mut mine = self.params.clone();
        let mut theirs = a.params.clone();
        mine.sort();
        theirs.sort();
        self.optimization == a.opt && self.line == a.line && self.column == a.col && mine == theirs
    }

    /// " — time −6.5% (rank 1)" for an action's title.
    pub fn suffix(&self) -> String {
        match self.change {
            Some(c) => {
                let sign = if c < 0.0 {
                    "−"
                } else if c > 0.0 {
                    "+"
                } else {
                    "±"
                };
                format!(
                    " — {} {sign}{:.1}% (rank {})",
                    self.objective,
                    (c * 100.0).abs(),
                    self.rank
                )
            }
            None => format!(" — {} (rank {})", self.verdict, self.rank),
        }
    }
}

/// The suggestions of `suggest --json`'s document.
pub fn parse(v: &serde_json::Value) -> Vec<Ranked> {
    let objective = v.get("objective").and_then(|o| o.as_str()).unwrap_or("time").to_string();
    let rows = v.get("suggestions").and_then(|s| s.as_array()).cloned().unwrap_or_default();
    rows.iter()
        .filter_map(|r| {
            let params = r
                .get("params")
                .and_then(|p| p.as_object())
                .map(|o| {
                    o.iter()
                        .map(|(k, v)| {
                            let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                            (k.clone(), v)
                        })
                        .collect()
                })
                .unwrap_or_default();
            Some(Ranked {
                rank: r.get("rank")?.as_u64()? as usize,
                optimization: r.get("optimization")?.as_str()?.to_string(),
                line: r.get("line")?.as_u64()? as usize,
                column: r.get("column")?.as_u64()? as usize,
                params,
                change: r.get("change").and_then(|c| c.as_f64()),
                objective: objective.clone(),
                verdict: r.get("verdict").and_then(|c| c.as_str()).unwrap_or("").to_string(),
                command: r.get("command").and_then(|c| c.as_str()).unwrap_or("").to_string(),
            })
        })
        .collect()
}

/// Start `suggest` on a snapshot of `doc`; the answer comes back as [`Event::Suggested`].
pub fn start_suggest(exe: PathBuf, doc: &Doc, cancel: Cancel, tx: Sender<Event>) {
    let (uri, version, text) = (doc.uri.clone(), doc.version, doc.text.clone());
    let ext = jobs::extension(&doc.name).to_string();
    std::thread::spawn(move || {
        let limit = Duration::from_secs(600);
        let result = jobs::run_json(&exe, &["suggest", "--json"], &text, &ext, &cancel, limit)
            .map(|v| parse(&v));
        let _ = tx.send(Event::Suggested { uri, version, result });
    });
}

/// Start `run --cost` on a snapshot of `doc`; the rows come back as [`Event::Cost`].
pub fn start_cost(exe: PathBuf, doc: &Doc, cancel: Cancel, tx: Sender<Event>) {
    let (uri, version, text) = (doc.uri.clone(), doc.version, doc.text.clone());
    let ext = jobs::extension(&doc.name).to_string();
    std::thread::spawn(move || {
        let limit = Duration::from_secs(120);
        let args = ["run", "--cost", "--format", "json"];
        let rows: Result<Vec<AccessRow>, String> =
            jobs::run_json(&exe, &args, &text, &ext, &cancel, limit).map(|v| cost_rows(&v));
        let _ = tx.send(Event::Cost { uri, version, rows });
    });
}
