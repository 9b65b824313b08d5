//! Assertions and permissions (semantics.md §5): an assertion checked, exhaled or inhaled
//! ([`Mode`]) as one transfer ([`Xfer`]) between permission holders, and clause lists whose
//! failures become diagnostics ([`Report`]). The evaluator only reads; this is where
//! permissions move.

use super::*;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Check,
    Exhale,
    Inhale,
}

/// One assertion transfer in progress.
pub struct Xfer {
    pub mode: Mode,
    /// Exhale/check: the holder the permissions come from. Inhale: the pool (if `from_pool`).
    pub src: Holder,
    /// Exhale: the destination. Inhale: the lane's holder.
    pub dst: Holder,
    /// Exhale: what has been moved so far, kept separately only when `dst` did not start empty
    /// (otherwise `dst` is exactly that).
    pub taken: Option<Holder>,
    pub scale: Option<Q>,
    pub perms: bool,
    pub pure: bool,
    pub from_pool: bool,
    /// `src` is the environment, which folds predicates on demand.
    pub src_is_env: bool,
    pub fails: Vec<Fail>,
}

#[derive(Clone, Debug)]
pub struct Fail {
    pub perm: bool,
    pub span: Span,
    pub msg: String,
}

impl Xfer {
    pub fn new(mode: Mode, src: Holder, dst: Holder) -> Xfer {
        let taken = (mode == Mode::Exhale && !dst.is_empty()).then(Holder::default);
        Xfer {
            mode,
            src,
            dst,
            taken,
            scale: None,
            perms: true,
            pure: true,
            from_pool: false,
            src_is_env: false,
            fails: Vec::new(),
        }
    }
}

/// How the failures of a clause list become diagnostics: the codes for a false pure part and
/// for a missing permission, what the list is (for the message), where it is checked, and for
/// whom.
#[derive(Clone, Copy)]
pub struct Report<'a> {
    pub code_pure: &'a str,
    pub code_perm: &'a str,
    pub what: &'a str,
    pub site: Span,
    pub who: Who<'a>,
}

/// Whom a contract check is about, turned into text only when a diagnostic is written.
#[derive(Clone, Copy, Debug)]
pub enum Who<'a> {
    Text(&'a str),
    Thread(PathId),
}

impl Interp {
    pub fn assertion(&mut self, e: &CE, env: &mut Env, x: &mut Xfer) -> Result<(), Stop> {
        let resource = matches!(e, CE::Perm(..) | CE::PointsTo(..)) || has_resource(e);
        if !resource {
            return self.pure_assertion(e, env, x);
        }
        match e {
            CE::Bin(BinOp::And | BinOp::Star, l, r, _) => {
                self.assertion(l, env, x)?;
                self.assertion(r, env, x)
            }
            CE::Bin(BinOp::Implies, c, a, span) => {
                let v = self.guard(c, env, x, *span)?;
                if v {
                    self.assertion(a, env, x)?;
                }
                Ok(())
            }
            CE::Cond(c, a, b) => {
                if self.guard(c, env, x, Span::DUMMY)? {
                    self.assertion(a, env, x)
                } else {
                    self.assertion(b, env, x)
                }
            }
            CE::Perm(l, p, span) => {
                if !x.perms {
                    return Ok(());
                }
                let (loc, amt) = {
                    let pv = self.pure_view_noself(x);
                    let loc = self.eval_loc(l, env, pv)?;
                    let amt = self.eval_perm(p, env, pv)?;
                    (loc, amt)
                };
                self.transfer(loc, amt, *span, x);
                Ok(())
            }
            CE::PointsTo(l, p, v, span) => {
                if x.perms {
                    let (loc, amt) = {
                        let pv = self.pure_view_noself(x);
                        (self.eval_loc(l, env, pv)?, self.eval_perm(p, env, pv)?)
                    };
                    self.transfer(loc, amt, *span, x);
                }
                if x.pure && self.cfg.checks.contracts {
                    let pv = self.pure_view(x);
                    let loc = self.eval_loc(l, env, pv)?;
                    let want = self.ev(v, env, pv)?;
                    if self.heap.get(loc) != want {
                        x.fails.push(Fail {
                            perm: false,
                            span: *span,
                            msg: format!("{} is not {want:?}", self.describe_loc(loc)),
                        });
                    }
                }
                Ok(())
            }
            CE::Quant {
                kind: QuantKind::ForallStar | QuantKind::Forall,
                binders,
                cond,
                implied,
                body,
                span,
            } => {
                let tuples = {
                    let pv = self.pure_view_noself(x);
                    self.enumerate(binders, cond.as_deref(), *implied, *span, env, pv)?
                };
                if let [b] = &binders[..] {
                    let mut chain = Vec::new();
                    if perm_chain(body, b.slot, &mut chain) {
                        return self.perm_chain_instances(&chain, b.slot, &tuples, env, x);
                    }
                }
                for t in tuples.chunks(binders.len().max(1)) {
                    for (b, v) in binders.iter().zip(t) {
                        env.store[b.slot as usize] = Value::Int(*v);
                    }
                    self.assertion(body, env, x)?;
                }
                Ok(())
            }
            CE::Let(s, v, b) => {
                let val = {
                    let pv = self.pure_view_noself(x);
                    self.ev(v, env, pv)?
                };
                env.store[*s as usize] = val;
                self.assertion(b, env, x)
            }
            CE::Pred { pred, recv, args, span } => {
                if !x.perms {
                    return Ok(());
                }
                let loc = {
                    let pv = self.pure_view_noself(x);
                    self.pred_loc(*pred, recv.as_deref(), args, *span, env, pv)?
                };
                if x.mode == Mode::Exhale && x.src_is_env && !x.src.can_read(loc) {
                    // The environment can provide a predicate instance if it can fold it.
                    self.env_fold(*pred, recv.as_deref(), args, loc, env, x)?;
                }
                self.transfer(loc, Amt::write(), *span, x);
                Ok(())
            }
            CE::Scale(p, r) => {
                let amt = {
                    let pv = self.pure_view_noself(x);
                    self.eval_perm(p, env, pv)?
                };
                if amt.k != 0 {
                    return Err(unsupported("a resource scaled by a wildcard amount", Span::DUMMY));
                }
                let saved = x.scale.clone();
                x.scale = Some(match &saved {
                    Some(s) => s.mul(&amt.q),
                    None => amt.q,
                });
                let r = self.assertion(r, env, x);
                x.scale = saved;
                r
            }
            other => Err(unsupported(format!("resource assertion form {other:?}"), Span::DUMMY)),
        }
    }

    /// A resource-free assertion: evaluated (when pure parts are checked), never transferred.
    fn pure_assertion(&mut self, e: &CE, env: &mut Env, x: &mut Xfer) -> Result<(), Stop> {
        if !x.pure || !self.cfg.checks.contracts {
            return Ok(());
        }
        let v = {
            let pv = self.pure_view(x);
            self.ev(e, env, pv)?
        };
        if v != Value::Bool(true) {
            x.fails.push(Fail { perm: false, span: Span::DUMMY, msg: "is false".into() });
        }
        Ok(())
    }

    /// `g == E` (or `E == g`) for an entry `given` slot `g` that `E` does not read: set `g` to
    /// `E`'s value, so that the conjunct holds. Evaluated in the clause's own state (after the
    /// clauses before it have moved their permissions); an `E` that cannot be evaluated leaves
    /// `g` alone (the conjunct then reports it).
    fn derive_given(&mut self, e: &CE, env: &mut Env, x: &mut Xfer) -> Result<(), Stop> {
        let CE::Bin(BinOp::Eq, l, r, _) = e else { return Ok(()) };
        for (g, rhs) in [(l, r), (r, l)] {
            let CE::Local(s) = **g else { continue };
            if !self.derive_givens.contains(&s) || rhs.reads_local(s) {
                continue;
            }
            let v = {
                let pv = self.pure_view(x);
                self.ev(rhs, env, pv)
            };
            match v {
                Ok(v) => env.store[s as usize] = v,
                Err(Stop::Error(_)) => {}
                Err(stop) => return Err(stop),
            }
            return Ok(());
        }
        Ok(())
    }

    /// The instances of `\forall* int i; …; Perm(a[e], p) ** Perm(b[f], q) …` (see
    /// [`perm_chain`]), without the assertion walk: the array locals and the amounts do not
    /// depend on `i`, and the indices read only the store. The locations are computed first, in
    /// the order [`Self::assertion`] on the body would compute them, up to the first that fails;
    /// then the permissions move in that order, all at once when the source has them all (an
    /// exhale), one transfer at a time otherwise, so that failures are reported as they would
    /// be. The error, if any, comes last, as it would after the transfers before it.
    fn perm_chain_instances(
        &mut self,
        chain: &[PermLeaf],
        binder: u32,
        tuples: &[i64],
        env: &mut Env,
        x: &mut Xfer,
    ) -> Result<(), Stop> {
        let Some(&last) = tuples.last() else {
            return Ok(());
        };
        if !x.perms || self.chain_ranges(chain, binder, tuples, env, x) {
            // Nothing to move instance by instance (or, without permission tracking, every
            // instance is in bounds, which is all the instance loop would check).
            env.store[binder as usize] = Value::Int(last);
            return Ok(());
        }
        let arrays: Vec<Value> =
            chain.iter().map(|c| env.store[c.array as usize].clone()).collect();
        // Without permission tracking the transfers do nothing, but the bounds checks stay.
        let perms = self.cfg.checks.perms;
        let mut moves = std::mem::take(&mut self.moves);
        moves.clear();
        let mut stopped = None;
        // Array ids and lengths, for the bounds check without a call per instance.
        let shapes: Vec<Option<(u32, usize)>> = arrays
            .iter()
            .map(|a| match a {
                Value::Ref(id) => Some((*id, self.heap.len_of(*id))),
                _ => None,
            })
            .collect();
        'tuples: for &i in tuples {
            env.store[binder as usize] = Value::Int(i);
            for ((c, a), shape) in chain.iter().zip(&arrays).zip(&shapes) {
                let idx = match &c.index {
                    CE::Local(s) if *s == binder => Ok(i),
                    e => match local_plus_literal(e, env.store) {
                        Some(k) => Ok(k),
                        None => self
                            .ev(e, env, PV::Unchecked)
                            .and_then(|v| self.as_int(v, c.index_span)),
                    },
                };
                let loc = match (idx, shape) {
                    (Ok(k), Some((id, len))) if k >= 0 && (k as usize) < *len => {
                        Ok(Loc::new(*id, k as u32))
                    }
                    (idx, _) => idx.and_then(|k| self.index_loc(a.clone(), k, c.index_span)),
                };
                match loc {
                    Ok(loc) if perms => moves.push((loc, c.amt.clone())),
                    Ok(_) => {}
                    Err(e) => {
                        stopped = Some(e);
                        break 'tuples;
                    }
                }
            }
        }
        let bulk = self.cfg.shortcuts
            && x.mode == Mode::Exhale
            && x.scale.is_none()
            && take_all(&mut x.src, &moves);
        if bulk {
            for (loc, amt) in &moves {
                x.dst.add(*loc, amt);
                if let Some(t) = &mut x.taken {
                    t.add(*loc, amt);
                }
            }
        } else {
            for (k, (loc, amt)) in moves.iter().enumerate() {
                self.transfer(*loc, amt.clone(), chain[k % chain.len()].span, x);
            }
        }
        self.moves = moves;
        match stopped {
            Some(e) => Err(e),
            None => {
                env.store[binder as usize] = Value::Int(last);
                Ok(())
            }
        }
    }

    fn env_fold(
        &mut self,
        pred: u32,
        recv: Option<&CE>,
        args: &[CE],
        loc: Loc,
        env: &mut Env,
        x: &mut Xfer,
    ) -> Result<(), Stop> {
        let prog = self.prog.clone();
        let md = &prog.methods[pred as usize];
        let Body::Expr(body) = &md.body else {
            return Ok(());
        };
        let this = self.recv_value(recv, env, PV::Unchecked)?;
        let mut store = self.arg_store(md, args, env, PV::Unchecked)?;
        let null = Value::Null;
        let mut inner = Env::contract(&mut store, &this, &null, None);
        let mut fx = Xfer::new(Mode::Exhale, std::mem::take(&mut x.src), Holder::default());
        self.assertion(body, &mut inner, &mut fx)?;
        x.src = std::mem::take(&mut fx.src);
        x.fails.append(&mut fx.fails);
        self.pred_store[loc.idx() as usize] = fx.dst;
        x.src.add(loc, &Amt::write());
        Ok(())
    }

    fn guard(&mut self, c: &CE, env: &mut Env, x: &Xfer, span: Span) -> Result<bool, Stop> {
        let pv = self.pure_view_noself(x);
        let v = self.ev(c, env, pv)?;
        self.as_bool(v, span)
    }

    fn pure_view<'h>(&self, x: &'h Xfer) -> PV<'h> {
        Self::view(x, self.cfg.checks.perms)
    }

    fn pure_view_noself(&self, x: &Xfer) -> PV<'static> {
        // Reads inside permission expressions (indices, guards) are framed by the same rules,
        // but their failures would duplicate the main check; they are left unchecked.
        let _ = x;
        PV::Unchecked
    }

    fn view(x: &Xfer, perms: bool) -> PV<'_> {
        if !perms {
            return PV::Unchecked;
        }
        match x.mode {
            Mode::Check => PV::One(&x.src),
            Mode::Exhale => PV::Two(&x.src, x.taken.as_ref().unwrap_or(&x.dst)),
            Mode::Inhale => PV::One(&x.dst),
        }
    }

    fn transfer(&mut self, loc: Loc, amt: Amt, span: Span, x: &mut Xfer) {
        let amt = match &x.scale {
            Some(s) => amt.scaled(s),
            None => amt,
        };
        if amt.is_negative() {
            x.fails.push(Fail { perm: true, span, msg: format!("negative permission {amt}") });
            return;
        }
        if !self.cfg.checks.perms {
            return;
        }
        match x.mode {
            Mode::Check => {
                if x.src.amount(loc) < amt {
                    x.fails.push(Fail {
                        perm: true,
                        span,
                        msg: format!(
                            "needs {amt} of {}, holds {}",
                            self.describe_loc(loc),
                            x.src.amount(loc)
                        ),
                    });
                }
            }
            Mode::Exhale => {
                if x.src.take(loc, &amt) {
                    x.dst.add(loc, &amt);
                    if let Some(t) = &mut x.taken {
                        t.add(loc, &amt);
                    }
                } else {
                    let have = x.src.amount(loc);
                    x.fails.push(Fail {
                        perm: true,
                        span,
                        msg: format!("needs {amt} of {}, holds {have}", self.describe_loc(loc)),
                    });
                    // Best effort: move what is there.
                    if !have.is_negative() && !have.is_zero() {
                        x.src.take(loc, &have);
                        x.dst.add(loc, &have);
                        if let Some(t) = &mut x.taken {
                            t.add(loc, &have);
                        }
                    }
                }
            }
            Mode::Inhale => {
                if x.from_pool && !x.src.take(loc, &amt) {
                    let have = x.src.amount(loc);
                    x.fails.push(Fail {
                        perm: true,
                        span,
                        msg: format!(
                            "asks for {amt} of {}, the barrier has {have} left",
                            self.describe_loc(loc)
                        ),
                    });
                    return;
                }
                x.dst.add(loc, &amt);
                if x.dst.amount(loc) > Amt::write() {
                    x.fails.push(Fail {
                        perm: true,
                        span,
                        msg: format!(
                            "holder exceeds write permission on {}",
                            self.describe_loc(loc)
                        ),
                    });
                }
            }
        }
    }

    /// Run a clause list in one mode for one lane; failures become diagnostics as `rep` says.
    /// Returns whether everything held.
    pub fn clauses(
        &mut self,
        cl: &[CClause],
        env: &mut Env,
        x: &mut Xfer,
        rep: &Report,
    ) -> Result<bool, Stop> {
        self.clauses_skip(cl, 0, env, x, rep)
    }

    /// [`Self::clauses`], leaving out the clauses `i < 64` with bit `i` of `skip` set: pure
    /// clauses already known to hold (they have no effect when they hold), or permission leaves
    /// already moved in bulk.
    pub fn clauses_skip(
        &mut self,
        cl: &[CClause],
        skip: u64,
        env: &mut Env,
        x: &mut Xfer,
        rep: &Report,
    ) -> Result<bool, Stop> {
        let Report { code_pure, code_perm, what, site, who } = *rep;
        let mut ok = true;
        for (i, c) in cl.iter().enumerate() {
            if i < 64 && skip >> i & 1 == 1 {
                continue;
            }
            let before = x.fails.len();
            // The scale applies to permissions only, which a pure clause has none of.
            if c.pure {
                if !self.derive_givens.is_empty() {
                    self.derive_given(&c.e, env, x)?;
                }
                // What `assertion` does with a resource-free expression, without looking for
                // resources in it again.
                self.pure_assertion(&c.e, env, x)?;
            } else {
                self.assertion(&c.e, env, x)?;
            }
            if x.fails.len() == before {
                continue;
            }
            let who = self.who_text(who);
            let fails: Vec<Fail> = x.fails.drain(before..).collect();
            for f in fails {
                ok = false;
                let (code, msg) = if f.perm {
                    (code_perm, format!("{what}: {} ({who})", f.msg))
                } else {
                    (code_pure, format!("{what} does not hold for {who}"))
                };
                let mut d = Diagnostic::error(code, msg).with_primary(c.span, "this conjunct");
                // `Span`'s `==` is structural (always true): compare positions.
                let placed = !site.is_empty() && !site.same_place(c.span);
                if placed && !site.contains(c.span) {
                    // Checked elsewhere: at a call, an assertion, a barrier.
                    d = d.with_secondary(site, "checked here");
                } else if placed && code_pure.ends_with("POST") && site.end() > 0 {
                    // The clause belongs to the block it is checked for: a postcondition is
                    // checked where the block ends (its closing brace), a precondition where
                    // it starts, which the clause itself shows.
                    let end = Span::new(site.end() - 1, site.end());
                    d = d.with_secondary(end, "checked when the block ends here");
                }
                if !f.span.is_empty() && !f.span.same_place(c.span) && !f.perm {
                    d = d.with_secondary(f.span, f.msg);
                }
                self.report(d);
            }
        }
        Ok(ok)
    }
}

/// Is `e` a `**`/`&&` chain of [`PermLeaf`]s over arrays other than the binder slot? The
/// leaves are collected in evaluation order.
fn perm_chain(e: &CE, binder: u32, out: &mut Vec<PermLeaf>) -> bool {
    match e {
        CE::Bin(BinOp::Star | BinOp::And, l, r, _) => {
            perm_chain(l, binder, out) && perm_chain(r, binder, out)
        }
        _ => match PermLeaf::of(e) {
            Some(leaf) if leaf.array != binder => {
                out.push(leaf);
                true
            }
            _ => false,
        },
    }
}
