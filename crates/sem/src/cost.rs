//! The cost model (semantics.md §9): RaCUDA's four metrics counted on concrete executions,
//! warps in lock-step. This module holds what is independent of the interpreter: profiles,
//! memory spaces, the counts, the report of one run and the comparison of two (§9.8). The
//! counting itself is `interp::cost`.

use front::Span;
use serde::Serialize;
use std::fmt::Write as _;

/// Machine parameters (semantics.md §9.1).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Profile {
    pub name: String,
    pub warp_size: usize,
    /// Global memory sector size S, in bytes.
    pub sector_bytes: u64,
    /// Shared memory banks B.
    pub banks: u64,
    pub bank_width: u64,
    /// Warps issued at once (P in T = W/P + S).
    pub issue_width: u64,
}

impl Profile {
    pub fn racuda() -> Profile {
        Profile {
            name: "racuda".into(),
            warp_size: 32,
            sector_bytes: 32,
            banks: 32,
            bank_width: 4,
            issue_width: 4,
        }
    }

    pub fn fermi_l1() -> Profile {
        Profile { name: "fermi-l1".into(), sector_bytes: 128, issue_width: 2, ..Profile::racuda() }
    }

    /// A built-in profile by name, or a YAML file (`base:` a built-in name, then any of
    /// `warp_size`, `sector_bytes`, `banks`, `bank_width`, `issue_width`).
    pub fn load(name_or_file: &str) -> Result<Profile, String> {
        match name_or_file {
            "racuda" => return Ok(Profile::racuda()),
            "fermi-l1" => return Ok(Profile::fermi_l1()),
            _ => {}
        }
        let text = std::fs::read_to_string(name_or_file).map_err(|e| {
            format!(
                "`{name_or_file}` is neither a built-in profile (racuda, fermi-l1) nor a readable file: {e}"
            )
        })?;
        Profile::from_yaml(&text, name_or_file)
    }

    pub fn from_yaml(text: &str, name: &str) -> Result<Profile, String> {
        let v: serde_yaml::Value =
            serde_yaml::from_str(text).map_err(|e| format!("profile `{name}`: {e}"))?;
        let serde_yaml::Value::Mapping(m) = v else {
            return Err(format!("profile `{name}`: expected a mapping of parameters"));
        };
        let mut p = Profile::racuda();
        if let Some(b) = m.get("base") {
            p = match b.as_str() {
                Some("racuda") => Profile::racuda(),
                Some("fermi-l1") => Profile::fermi_l1(),
                _ => return Err(format!("profile `{name}`: `base` must be racuda or fermi-l1")),
            };
        }
        p.name = name.to_string();
        for (k, v) in &m {
            let key = k.as_str().unwrap_or("");
            if key == "base" {
                continue;
            }
            let n = v
                .as_u64()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("profile `{name}`: `{key}` must be a positive integer"))?;
            match key {
                "warp_size" if n <= 64 => p.warp_size = n as usize,
                "warp_size" => return Err(format!("profile `{name}`: warp_size is at most 64")),
                "sector_bytes" => p.sector_bytes = n,
                "banks" => p.banks = n,
                "bank_width" => p.bank_width = n,
                "issue_width" => p.issue_width = n,
                _ => return Err(format!(
                    "profile `{name}`: unknown parameter `{key}` (known: base, warp_size, sector_bytes, banks, bank_width, issue_width)"
                )),
            }
        }
        Ok(p)
    }
}

/// The memory space of an array (semantics.md §3.2, §9.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Space {
    Global,
    Shared,
    Local,
}

impl std::str::FromStr for Space {
    type Err = String;
    fn from_str(s: &str) -> Result<Space, String> {
        match s {
            "global" => Ok(Space::Global),
            "shared" => Ok(Space::Shared),
            "local" => Ok(Space::Local),
            _ => Err(format!("unknown memory space `{s}` (expected global, shared or local)")),
        }
    }
}

impl std::fmt::Display for Space {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
        })
    }
}

/// What to count, as `run --cost` and `cost` configure it.
#[derive(Clone, Debug)]
pub struct CostConfig {
    pub profile: Profile,
    /// `--space NAME=SPACE`: arrays bound to a parameter, field or local of that name.
    pub spaces: Vec<(String, Space)>,
}

impl Default for CostConfig {
    fn default() -> Self {
        CostConfig { profile: Profile::racuda(), spaces: Vec::new() }
    }
}

/// RaCUDA's four metrics (semantics.md §9.4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub sectors: u64,
    pub conflicts: u64,
    pub divwarps: u64,
    pub steps: u64,
}

impl Counts {
    pub fn add(&mut self, o: &Counts) {
        self.sectors += o.sectors;
        self.conflicts += o.conflicts;
        self.divwarps += o.divwarps;
        self.steps += o.steps;
    }
    pub fn max_with(&mut self, o: &Counts) {
        self.sectors = self.sectors.max(o.sectors);
        self.conflicts = self.conflicts.max(o.conflicts);
        self.divwarps = self.divwarps.max(o.divwarps);
        self.steps = self.steps.max(o.steps);
    }
    pub fn as_array(&self) -> [u64; 4] {
        [self.sectors, self.conflicts, self.divwarps, self.steps]
    }
}

pub const METRICS: [&str; 4] = ["sectors", "conflicts", "divwarps", "steps"];

/// The costs of one `par` statement, summed over its launches (semantics.md §9.6, §9.7).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SiteCost {
    /// The `par` label (`par k (…)`), or `par`.
    pub label: String,
    #[serde(skip)]
    pub span: Span,
    pub line: usize,
    pub launches: u64,
    pub warps: u64,
    /// Each metric summed over warps.
    pub counts: Counts,
    /// Each metric's largest value in one warp.
    pub warp_max: Counts,
    /// W: steps summed over warps.
    pub work: u64,
    /// S: the longest chain of steps of a launch (warps meet at barriers), summed over launches.
    pub span_steps: u64,
}

/// One access site: which array access is uncoalesced or conflicting (semantics.md §9.7).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AccessCost {
    #[serde(skip)]
    pub span: Span,
    pub line: usize,
    pub text: String,
    pub write: bool,
    pub space: Option<Space>,
    /// Warp instructions that executed the access.
    pub execs: u64,
    pub sectors: u64,
    pub conflicts: u64,
    /// The worst conflict degree (shared) or sector count (global) of one execution.
    pub worst: u64,
}

/// The cost of one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CostReport {
    pub profile: String,
    pub sites: Vec<SiteCost>,
    pub total: Counts,
    pub work: u64,
    pub span: u64,
    /// T = W / P + S.
    pub time: f64,
    pub accesses: Vec<AccessCost>,
}

impl CostReport {
    /// The value of metric `m` (`sectors`, `conflicts`, `divwarps`, `steps`, `time`).
    pub fn metric(&self, m: &str) -> f64 {
        match m {
            "sectors" => self.total.sectors as f64,
            "conflicts" => self.total.conflicts as f64,
            "divwarps" => self.total.divwarps as f64,
            "steps" => self.total.steps as f64,
            _ => self.time,
        }
    }

    /// The text table `run --cost` prints.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "cost (profile {}):", self.profile);
        let _ = writeln!(
            s,
            "  {:<16} {:>5} {:>8} {:>6} {:>10} {:>10} {:>9} {:>10} {:>10}",
            "launch",
            "line",
            "launches",
            "warps",
            "sectors",
            "conflicts",
            "divwarps",
            "steps",
            "span"
        );
        for k in &self.sites {
            let _ = writeln!(
                s,
                "  {:<16} {:>5} {:>8} {:>6} {:>10} {:>10} {:>9} {:>10} {:>10}",
                k.label,
                k.line,
                k.launches,
                k.warps,
                k.counts.sectors,
                k.counts.conflicts,
                k.counts.divwarps,
                k.counts.steps,
                k.span_steps
            );
        }
        let t = &self.total;
        let _ = writeln!(
            s,
            "  {:<16} {:>5} {:>8} {:>6} {:>10} {:>10} {:>9} {:>10} {:>10}",
            "total", "", "", "", t.sectors, t.conflicts, t.divwarps, t.steps, self.span
        );
        let _ = writeln!(
            s,
            "  work W = {}, span S = {}, time T = W/P + S = {:.2}",
            self.work, self.span, self.time
        );
        if !self.accesses.is_empty() {
            let _ = writeln!(s, "  accesses:");
            for a in &self.accesses {
                let sp = a.space.map_or("?".to_string(), |x| x.to_string());
                let what = match a.space {
                    Some(Space::Shared) => {
                        format!("conflicts {} (worst degree {})", a.conflicts, a.worst)
                    }
                    Some(Space::Local) => String::new(),
                    _ => format!("sectors {} (worst {} per warp)", a.sectors, a.worst),
                };
                let _ = writeln!(
                    s,
                    "    line {:>4} {:<6} {:<5} {:<24} executions {:>7}  {}",
                    a.line,
                    sp,
                    if a.write { "write" } else { "read" },
                    a.text,
                    a.execs,
                    what
                );
            }
        }
        s
    }
}

/// Semantics.md §9.8: the Pareto verdict over the four metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CostVerdict {
    Improved,
    Regressed,
    TradeOff,
    Unchanged,
    InvalidOptimization,
}

impl CostVerdict {
    pub fn of(orig: &Counts, opt: &Counts) -> CostVerdict {
        let (a, b) = (orig.as_array(), opt.as_array());
        let lower = a.iter().zip(&b).any(|(x, y)| y < x);
        let higher = a.iter().zip(&b).any(|(x, y)| y > x);
        match (lower, higher) {
            (true, false) => CostVerdict::Improved,
            (false, true) => CostVerdict::Regressed,
            (true, true) => CostVerdict::TradeOff,
            (false, false) => CostVerdict::Unchanged,
        }
    }
    /// The verdict on one metric (the `--objective` headline).
    pub fn of_metric(orig: f64, opt: f64) -> CostVerdict {
        if opt < orig {
            CostVerdict::Improved
        } else if opt > orig {
            CostVerdict::Regressed
        } else {
            CostVerdict::Unchanged
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            CostVerdict::Improved => "improved",
            CostVerdict::Regressed => "regressed",
            CostVerdict::TradeOff => "trade-off",
            CostVerdict::Unchanged => "unchanged",
            CostVerdict::InvalidOptimization => "invalid-optimization",
        }
    }
}

/// Line number (1-based) of a span's start.
pub fn line_of(src: &str, span: Span) -> usize {
    let end = (span.lo as usize).min(src.len());
    src.as_bytes()[..end].iter().filter(|&&b| b == b'\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pareto_verdicts() {
        let c = |s, st| Counts { sectors: s, conflicts: 0, divwarps: 0, steps: st };
        assert_eq!(CostVerdict::of(&c(32, 86), &c(32, 48)), CostVerdict::Improved);
        assert_eq!(CostVerdict::of(&c(16, 20), &c(32, 48)), CostVerdict::Regressed);
        assert_eq!(CostVerdict::of(&c(16, 48), &c(32, 20)), CostVerdict::TradeOff);
        assert_eq!(CostVerdict::of(&c(1, 1), &c(1, 1)), CostVerdict::Unchanged);
    }

    #[test]
    fn profiles_from_yaml() {
        let p = Profile::from_yaml("base: fermi-l1\nissue_width: 8\n", "mine.yaml").unwrap();
        assert_eq!((p.sector_bytes, p.issue_width, p.warp_size), (128, 8, 32));
        assert!(Profile::from_yaml("sector_bytes: 0\n", "x").is_err());
        assert!(Profile::from_yaml("colour: 3\n", "x").is_err());
        assert!(Profile::load("no-such-profile").is_err());
    }
}
