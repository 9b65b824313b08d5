//! Groups and barriers (semantics.md §4.6, §5.7, §7): a group's warps run in [`Schedule`]
//! order between barriers; at each barrier resolution, divergence and deadlock are detected,
//! the uniformity lint runs, and the permissions the threads pooled are handed out.

use super::*;

/// The order in which the warps of a group run within a barrier interval (semantics.md §4.6).
/// Race-free programs give the same result under every order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Schedule {
    /// Ascending warp index.
    #[default]
    Forward,
    /// Descending warp index.
    Reverse,
    /// A fresh pseudo-random permutation for every round of every group, drawn from the seed.
    Random(u64),
}

impl Schedule {
    /// Warp indices in running order for round `round` of the `group`-th group of the run.
    pub fn order(self, n: usize, group: u64, round: u32) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        match self {
            Schedule::Forward => {}
            Schedule::Reverse => v.reverse(),
            Schedule::Random(seed) => {
                let mut rng = Rng::new(
                    seed ^ group.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                        ^ (round as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93),
                );
                // Fisher–Yates.
                for i in (1..n).rev() {
                    let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                    v.swap(i, j);
                }
            }
        }
        v
    }
}

impl std::fmt::Display for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Schedule::Forward => write!(f, "forward"),
            Schedule::Reverse => write!(f, "reverse"),
            Schedule::Random(s) => write!(f, "random:{s}"),
        }
    }
}

impl std::str::FromStr for Schedule {
    type Err = String;
    fn from_str(s: &str) -> Result<Schedule, String> {
        match s {
            "forward" => Ok(Schedule::Forward),
            "reverse" => Ok(Schedule::Reverse),
            _ => match s.strip_prefix("random:") {
                Some(seed) => seed.parse().map(Schedule::Random).map_err(|_| {
                    format!("bad seed `{seed}` in schedule `{s}` (expected random:<integer>)")
                }),
                None => Err(format!(
                    "unknown schedule `{s}` (expected forward, reverse or random:SEED)"
                )),
            },
        }
    }
}

impl Interp {
    /// Run one group (thread block) to completion: warp-serial rounds between barriers.
    pub(super) fn run_group(
        &mut self,
        lanes: Vec<Lane>,
        method: u32,
        pc: usize,
    ) -> Result<Vec<Lane>, Stop> {
        let ws = self.cfg.warp_size.clamp(1, 64);
        let mut warps: Vec<Warp> = Vec::new();
        let mut it = lanes.into_iter().peekable();
        while it.peek().is_some() {
            let chunk: Vec<Lane> = it.by_ref().take(ws).collect();
            let n = chunk.len();
            warps.push(Warp {
                lanes: chunk,
                frames: vec![WFrame {
                    method,
                    pc,
                    returned: 0,
                    call_mask: full_mask(n),
                    ret_target: None,
                    yields: Vec::new(),
                    ctl_base: 0,
                    span: Span::DUMMY,
                    fork: 0,
                }],
                ctl: Vec::new(),
                mask: full_mask(n),
                finished: 0,
                epoch: 0,
                atomic: None,
                kernel: true,
                pool: Holder::default(),
                cost: Default::default(),
                sigma: 0,
                thread: false,
                regions: Vec::new(),
            });
        }
        let mut epoch = 0u32;
        let group = self.groups_run;
        self.groups_run += 1;
        loop {
            let mut arrivals: Vec<Option<(Rc<BarrierC>, Vec<u32>)>> = vec![None; warps.len()];
            for i in self.cfg.schedule.order(warps.len(), group, epoch) {
                if let WarpStop::Barrier(b, it) = self.run_warp(&mut warps[i], None)? {
                    arrivals[i] = Some((b, it));
                }
            }
            let waiting: Vec<usize> = (0..warps.len()).filter(|&i| arrivals[i].is_some()).collect();
            if waiting.is_empty() {
                self.cost_group_done(&warps);
                break;
            }
            let finished: Vec<usize> =
                (0..warps.len()).filter(|&i| arrivals[i].is_none()).collect();
            let first = &arrivals[waiting[0]];
            let (b0, it0) = first.as_ref().expect("waiting");
            if !finished.is_empty() {
                let d = Diagnostic::error(
                    "R-DEADLOCK",
                    format!(
                        "deadlock: warps {:?} wait at a barrier while warps {:?} finished without reaching it",
                        waiting, finished
                    ),
                )
                .with_primary(b0.span, "threads wait here")
                .with_note(format!(
                    "waiting: {}; finished: {}",
                    self.lane_names(&warps[waiting[0]], full_mask(warps[waiting[0]].lanes.len())),
                    self.lane_names(&warps[finished[0]], full_mask(warps[finished[0]].lanes.len()))
                ));
                return Err(Stop::Error(Box::new(d)));
            }
            for &i in &waiting[1..] {
                let (b, iv) = arrivals[i].as_ref().expect("waiting");
                if b.id != b0.id || iv != it0 {
                    let d = Diagnostic::error(
                        "R-DIVERGENCE",
                        format!(
                            "barrier divergence: warp {} is at a barrier (iterations {:?}) while warp {} is at {} (iterations {:?})",
                            waiting[0], it0, i, if b.id != b0.id { "another barrier" } else { "the same barrier" }, iv
                        ),
                    )
                    .with_primary(b0.span, format!("warp {}", waiting[0]))
                    .with_secondary(b.span, format!("warp {i}"));
                    return Err(Stop::Error(Box::new(d)));
                }
            }
            if self.cfg.uniformity {
                self.uniformity(&warps, b0);
            }
            // Resolution: pool all contributions, hand out the barrier postconditions.
            let mut pool = Holder::default();
            for w in warps.iter_mut() {
                std::mem::take(&mut w.pool).drain_into(&mut pool);
            }
            // Permissions first, for every thread; then the pure parts, which may read what
            // other threads' permissions made readable (semantics.md §5.7).
            // What the threads do not take back is discarded (§5.7).
            // `\old(e)` in a barrier contract is `e` when the threads reach the barrier (as the
            // encoder has it, viper/encode/stmts/barrier.rs): before its body runs.
            let b0 = b0.clone();
            let at_barrier = super::uses_old(&b0.post).then(|| self.heap.clone());
            let pool = self.barrier_body(&mut warps[waiting[0]], &b0, pool)?;
            let _left =
                self.barrier_post(&mut warps, &b0.post, b0.span, epoch, Some(pool), None)?;
            if self.cfg.checks.contracts {
                self.barrier_post(&mut warps, &b0.post, b0.span, epoch, None, at_barrier)?;
            }
            epoch += 1;
            for w in warps.iter_mut() {
                w.epoch = epoch;
            }
            self.cost_barrier(&mut warps);
        }
        Ok(warps.into_iter().flat_map(|w| w.lanes).collect())
    }

    /// One pass of a barrier resolution over the live threads of a group, in linear-id order:
    /// with `pool`, inhale the permission parts of `post` from it (what is left is returned);
    /// without, check the pure parts against each thread's new holdings.
    fn barrier_post(
        &mut self,
        warps: &mut [Warp],
        post: &[CClause],
        site: Span,
        epoch: u32,
        pool: Option<Holder>,
        at_barrier: Option<Heap>,
    ) -> Result<Holder, Stop> {
        let perms = pool.is_some();
        let mut pool = pool.unwrap_or_default();
        let rep = Report {
            code_pure: "R-BAR-POST",
            code_perm: if perms { "R-BAR-INCONSISTENT" } else { "R-BAR-POST" },
            what: "barrier postcondition",
            site,
            who: Who::Text(""),
        };
        for w in warps.iter_mut() {
            for l in lanes_of(full_mask(w.lanes.len()) & !w.finished) {
                let who = w.lanes[l].who();
                let (mut env, holders) = Self::new_lane_env(&mut w.lanes[l], epoch, None, true);
                if let Some(h) = &at_barrier {
                    env.old = Some(h);
                }
                let top = holders.last_mut().expect("holder");
                let mut x = Xfer::new(Mode::Inhale, std::mem::take(&mut pool), std::mem::take(top));
                x.from_pool = perms;
                x.pure = !perms;
                x.perms = perms;
                let r = self.clauses(post, &mut env, &mut x, &Report { who, ..rep });
                pool = std::mem::take(&mut x.src);
                *top = x.dst;
                r?;
            }
        }
        Ok(pool)
    }

    /// The uniformity lint (semantics.md §5.8) at a resolution of barrier `b`: each local of
    /// [`BarrierC::shared`] must have one value in all threads of the group that have not
    /// finished. The first thread in linear-id order with a value different from the first
    /// thread's is named; each variable is reported once per barrier.
    fn uniformity(&mut self, warps: &[Warp], b: &BarrierC) {
        for v in &b.shared {
            if self.nonuniform.contains(&(b.id, v.slot)) {
                continue;
            }
            let mut first: Option<(&Lane, &Value)> = None;
            let mut differ = None;
            'threads: for w in warps {
                for l in lanes_of(full_mask(w.lanes.len()) & !w.finished) {
                    let lane = &w.lanes[l];
                    let Some(x) = lane.frames.last().and_then(|f| f.store.get(v.slot as usize))
                    else {
                        continue;
                    };
                    match first {
                        None => first = Some((lane, x)),
                        Some((_, x0)) if x0 != x => {
                            differ = Some((lane, x));
                            break 'threads;
                        }
                        Some(_) => {}
                    }
                }
            }
            let (Some((l0, x0)), Some((l1, x1))) = (first, differ) else {
                continue;
            };
            self.nonuniform.insert((b.id, v.slot));
            let (t0, t1) = (self.lane_desc(l0), self.lane_desc(l1));
            let d = Diagnostic::warning(
                "W-NONUNIFORM",
                format!(
                    "`{}` differs between the threads at the barrier: {} in {t0}, {} in {t1}",
                    v.name,
                    show_value(x0),
                    show_value(x1)
                ),
            )
            .with_primary(v.span, format!("`{}` is not uniform", v.name))
            .with_secondary(b.span, "at this barrier")
            .with_help(
                "`verify` reads a local of a barrier contract through its definition over the \
                 iterators when it is written once from them, and otherwise as one value for all \
                 threads; define it once from the iterators, make it depend on uniform values \
                 only, or express the per-thread part through the iterators",
            );
            self.errors.push(d);
        }
    }
}

/// A value as PVL would write it, for messages.
fn show_value(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        Value::Ref(id) => format!("object #{id}"),
        Value::Seq(s) => {
            let v: Vec<String> = s.iter().map(show_value).collect();
            format!("[{}]", v.join(", "))
        }
        Value::Unit => "()".into(),
        Value::Perm(a) => a.to_string(),
        Value::Big(b) => b.to_string(),
        Value::Set(s) | Value::Bag(s) => {
            let v: Vec<String> = s.iter().map(show_value).collect();
            format!("{{{}}}", v.join(", "))
        }
        Value::Map(m) => {
            let v: Vec<String> = m
                .entries
                .iter()
                .map(|(k, x)| format!("{} -> {}", show_value(k), show_value(x)))
                .collect();
            format!("map{{{}}}", v.join(", "))
        }
        Value::Opt(None) => "None".into(),
        Value::Opt(Some(x)) => format!("Some({})", show_value(x)),
        Value::Tuple(s) => {
            let v: Vec<String> = s.iter().map(show_value).collect();
            format!("({})", v.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Schedule;

    #[test]
    fn schedules_are_permutations_and_reproducible() {
        assert_eq!(Schedule::Forward.order(4, 0, 0), [0, 1, 2, 3]);
        assert_eq!(Schedule::Reverse.order(4, 0, 0), [3, 2, 1, 0]);
        let r = Schedule::Random(7);
        let mut seen = std::collections::BTreeSet::new();
        for round in 0..20 {
            let o = r.order(9, 3, round);
            assert_eq!(o, r.order(9, 3, round));
            let mut s = o.clone();
            s.sort_unstable();
            assert_eq!(s, (0..9).collect::<Vec<_>>());
            seen.insert(o);
        }
        // Rounds draw different orders.
        assert!(seen.len() > 10);
    }

    #[test]
    fn schedules_parse_and_print() {
        for s in ["forward", "reverse", "random:0", "random:18446744073709551615"] {
            let p: Schedule = s.parse().expect("parses");
            assert_eq!(p.to_string(), s);
        }
        assert!("random:-1".parse::<Schedule>().is_err());
        assert!("backward".parse::<Schedule>().is_err());
    }
}
