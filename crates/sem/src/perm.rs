//! Permission holders (semantics.md §3.4): what a thread, a frame, a loop, a barrier pool or
//! the environment holds, a map from locations to amounts kept in the layout that is fastest
//! for its shape. Apart from the values and amounts it stores, which are plain arithmetic.

use super::value::{Amt, FxMap, Loc};

/// Entries a holder keeps in its unsorted list before it looks for a denser layout.
const SMALL_MAX: usize = 16;
/// An object moves to a dense per-element vector once a holder has this many of its locations…
const DENSE_MIN: usize = 8;
/// …and the vector would be at most this many times larger than the number of entries.
const DENSE_SPREAD: usize = 64;

/// The amounts a holder has of one object, indexed by element (or field slot).
#[derive(Clone, Debug, Default)]
struct DenseObj {
    obj: u32,
    /// Per-slot amounts; empty while `uniform` is set.
    amts: Vec<Amt>,
    /// `Some((a, n))`: every slot of `0..n` holds `a`, none beyond (`amts` unused). Whole
    /// arrays are usually granted and moved at once (an input, a `\forall*` over the whole
    /// array, a launch over every element); in this form each such move is one operation.
    uniform: Option<(Amt, usize)>,
    nonzero: usize,
}

impl DenseObj {
    fn uniform(obj: u32, a: Amt, n: usize) -> DenseObj {
        DenseObj {
            obj,
            amts: Vec::new(),
            nonzero: if a.is_zero() { 0 } else { n },
            uniform: Some((a, n)),
        }
    }

    /// Keep the amounts per slot from now on.
    fn materialize(&mut self) {
        if let Some((a, n)) = self.uniform.take() {
            self.amts = vec![a; n];
        }
    }

    #[inline]
    fn get(&self, i: usize) -> Option<&Amt> {
        match &self.uniform {
            Some((a, n)) => (i < *n).then_some(a),
            None => self.amts.get(i),
        }
        .filter(|a| !a.is_zero())
    }
}

/// Add `a` to one slot of a dense object, keeping its count of nonzero slots.
#[inline]
fn add_slot(e: &mut Amt, a: &Amt, nonzero: &mut usize) {
    let was = !e.is_zero();
    if was {
        e.add(a);
    } else {
        // Into an empty slot (the common case): no arithmetic.
        e.clone_from(a);
    }
    match (was, e.is_zero()) {
        (false, false) => *nonzero += 1,
        (true, true) => *nonzero -= 1,
        _ => {}
    }
}

/// A permission holder (§3.4): a map from locations to amounts. Three layouts, chosen per
/// object and invisible to callers: a short unsorted list (a thread's holder usually has a few
/// entries), dense per-element vectors for objects the holder has many locations of (the
/// environment, a kernel's parent), and a hash map for whatever is large and scattered.
/// Zero amounts count as absent.
#[derive(Clone, Debug, Default)]
pub struct Holder {
    small: Vec<(Loc, Amt)>,
    dense: Vec<DenseObj>,
    map: FxMap<Loc, Amt>,
}

impl Holder {
    fn dense_of(&self, obj: u32) -> Option<usize> {
        self.dense.iter().position(|d| d.obj == obj)
    }

    #[inline]
    pub fn get(&self, l: Loc) -> Option<&Amt> {
        for d in &self.dense {
            if d.obj == l.obj() {
                return d.get(l.idx() as usize);
            }
        }
        for (k, a) in &self.small {
            if *k == l {
                return Some(a);
            }
        }
        if self.map.is_empty() {
            None
        } else {
            self.map.get(&l)
        }
    }

    pub fn is_empty(&self) -> bool {
        self.small.is_empty() && self.map.is_empty() && self.dense.iter().all(|d| d.nonzero == 0)
    }

    #[inline]
    pub fn can_read(&self, l: Loc) -> bool {
        self.get(l).is_some_and(Amt::can_read)
    }
    #[inline]
    pub fn can_write(&self, l: Loc) -> bool {
        self.get(l).is_some_and(Amt::can_write)
    }
    pub fn amount(&self, l: Loc) -> Amt {
        self.get(l).cloned().unwrap_or(Amt::NONE)
    }

    pub fn add(&mut self, l: Loc, a: &Amt) {
        if a.is_zero() {
            return;
        }
        if let Some(di) = self.dense_of(l.obj()) {
            let d = &mut self.dense[di];
            d.materialize();
            let i = l.idx() as usize;
            if d.amts.len() <= i {
                // Grown geometrically: holders filled in index order (a `\forall*` inhale)
                // would otherwise resize once per element. Slots past the end are absent
                // either way.
                let len = (i + 1).max(d.amts.len() * 2);
                d.amts.resize(len, Amt::NONE);
            }
            add_slot(&mut d.amts[i], a, &mut d.nonzero);
            return;
        }
        if let Some(p) = self.small.iter().position(|(k, _)| *k == l) {
            let e = &mut self.small[p].1;
            e.add(a);
            if e.is_zero() {
                self.small.swap_remove(p);
            }
            return;
        }
        if !self.map.is_empty() {
            if let Some(e) = self.map.get_mut(&l) {
                e.add(a);
                if e.is_zero() {
                    self.map.remove(&l);
                }
                return;
            }
        }
        if self.small.len() < SMALL_MAX {
            self.small.push((l, a.clone()));
            return;
        }
        if self.densify(l) {
            self.add(l, a);
            return;
        }
        self.map.insert(l, a.clone());
    }

    /// Move `l`'s object to a dense vector if that layout pays off (judged by its small
    /// entries, as the map is usually empty).
    fn densify(&mut self, l: Loc) -> bool {
        let obj = l.obj();
        let mut count = 1;
        let mut max = l.idx() as usize;
        for (k, _) in &self.small {
            if k.obj() == obj {
                count += 1;
                max = max.max(k.idx() as usize);
            }
        }
        if count < DENSE_MIN || max + 1 > DENSE_SPREAD * count {
            return false;
        }
        // Through `make_dense`, which also takes the object's entries out of the map: an
        // earlier add may have put one there while the object had too few small entries, and
        // left there it would be hidden behind the dense vector (`get`, `take` and `add` look
        // no further), so the permission would be lost.
        self.make_dense(obj, max + 1);
        true
    }

    /// Give the holder (1, 0) of elements `0..n` of `obj`, which it holds nothing of (a fresh
    /// allocation or an input array).
    pub fn grant_all(&mut self, obj: u32, n: usize) {
        if n < DENSE_MIN && self.small.len() + n <= SMALL_MAX {
            for i in 0..n as u32 {
                self.add(Loc::new(obj, i), &Amt::WRITE);
            }
            return;
        }
        match self.dense_of(obj) {
            Some(_) => {
                for i in 0..n as u32 {
                    self.add(Loc::new(obj, i), &Amt::WRITE);
                }
            }
            None => self.dense.push(DenseObj::uniform(obj, Amt::WRITE, n)),
        }
    }

    /// Remove `a` from `l`; returns false (and removes nothing) when not enough is held.
    ///
    /// A holder of nothing but reads (a `read` is a wildcard: some positive amount) gives
    /// reads away and keeps its own, as Viper splits a wildcard: its reads only count how many
    /// were given to it, and without a fraction it can never write. So a kernel whose every
    /// thread reads a cell `read` runs with the launch holding it `read` once.
    pub fn take(&mut self, l: Loc, a: &Amt) -> bool {
        if a.is_zero() {
            return true;
        }
        if a.is_read_only() && self.get(l).is_some_and(Amt::is_read_only) {
            return true;
        }
        if let Some(di) = self.dense_of(l.obj()) {
            let d = &mut self.dense[di];
            d.materialize();
            return match d.amts.get_mut(l.idx() as usize) {
                Some(e) if !e.is_zero() && *e >= *a => {
                    if e == a {
                        // All of it (the common case): no arithmetic.
                        *e = Amt::NONE;
                    } else {
                        e.sub(a);
                    }
                    if e.is_zero() {
                        d.nonzero -= 1;
                    }
                    true
                }
                _ => false,
            };
        }
        if let Some(p) = self.small.iter().position(|(k, _)| *k == l) {
            let e = &mut self.small[p].1;
            if *e < *a {
                return false;
            }
            if e == a {
                self.small.swap_remove(p);
                return true;
            }
            e.sub(a);
            if e.is_zero() {
                self.small.swap_remove(p);
            }
            return true;
        }
        match self.map.get_mut(&l) {
            Some(e) if *e >= *a => {
                e.sub(a);
                if e.is_zero() {
                    self.map.remove(&l);
                }
                true
            }
            _ => false,
        }
    }

    /// Remove `a` from each of the elements `lo..hi` of `obj`; all or nothing: returns false
    /// (and removes nothing) when one of them is not held enough.
    pub fn take_range(&mut self, obj: u32, lo: u32, hi: u32, a: &Amt) -> bool {
        if a.is_zero() || lo >= hi {
            return true;
        }
        // Reads from a holder of reads only are kept (see `take`): element by element when
        // some of the range is held so.
        if a.is_read_only()
            && (lo..hi).any(|i| self.get(Loc::new(obj, i)).is_some_and(Amt::is_read_only))
        {
            let enough =
                |e: Option<&Amt>| e.is_some_and(|e| e.is_read_only() || (!e.is_zero() && *e >= *a));
            if !(lo..hi).all(|i| enough(self.get(Loc::new(obj, i)))) {
                return false;
            }
            for i in lo..hi {
                self.take(Loc::new(obj, i), a);
            }
            return true;
        }
        if let Some(di) = self.dense_of(obj) {
            let d = &mut self.dense[di];
            if let Some((u, n)) = &mut d.uniform {
                if lo == 0 && hi as usize == *n {
                    // The whole object: one comparison and at most one subtraction.
                    if u.is_zero() || *u < *a {
                        return false;
                    }
                    if u.same(a) {
                        *u = Amt::NONE;
                    } else {
                        u.sub(a);
                    }
                    if u.is_zero() {
                        d.nonzero = 0;
                    }
                    return true;
                }
            }
            d.materialize();
            let Some(slice) = d.amts.get_mut(lo as usize..hi as usize) else {
                return false;
            };
            // Usually the slice holds exactly `a` everywhere: one comparison per element.
            if slice.iter().all(|e| e.same(a)) {
                slice.fill(Amt::NONE);
                d.nonzero -= slice.len();
                return true;
            }
            // Often the slice holds one amount everywhere (a whole array granted at once):
            // one comparison and one subtraction for all of it.
            if let Some((first, tail)) = slice.split_first() {
                if tail.iter().all(|e| e.same(first)) {
                    if first.is_zero() || *first < *a {
                        return false;
                    }
                    let mut r = first.clone();
                    r.sub(a);
                    if r.is_zero() {
                        d.nonzero -= slice.len();
                    }
                    slice.fill(r);
                    return true;
                }
            }
            if !slice.iter().all(|e| !e.is_zero() && *e >= *a) {
                return false;
            }
            for e in slice {
                if e.same(a) {
                    *e = Amt::NONE;
                } else {
                    e.sub(a);
                }
                if e.is_zero() {
                    d.nonzero -= 1;
                }
            }
            return true;
        }
        for i in lo..hi {
            if !self.take(Loc::new(obj, i), a) {
                for j in lo..i {
                    self.add(Loc::new(obj, j), a);
                }
                return false;
            }
        }
        true
    }

    /// Add `a` to each of the elements `lo..hi` of `obj`, moving the object to the dense
    /// layout first when the range alone makes that pay off.
    pub fn add_range(&mut self, obj: u32, lo: u32, hi: u32, a: &Amt) {
        if a.is_zero() || lo >= hi {
            return;
        }
        let count = (hi - lo) as usize;
        if self.dense_of(obj).is_none() && count >= DENSE_MIN && hi as usize <= DENSE_SPREAD * count
        {
            self.make_dense(obj, hi as usize);
        }
        let Some(di) = self.dense_of(obj) else {
            for i in lo..hi {
                self.add(Loc::new(obj, i), a);
            }
            return;
        };
        let d = &mut self.dense[di];
        if let Some((u, n)) = &mut d.uniform {
            if lo == 0 && hi as usize == *n {
                // The whole object: one addition.
                if u.is_zero() {
                    u.clone_from(a);
                } else {
                    u.add(a);
                }
                d.nonzero = if u.is_zero() { 0 } else { *n };
                return;
            }
        }
        d.materialize();
        if d.amts.len() < hi as usize {
            d.amts.resize(hi as usize, Amt::NONE);
        }
        let slice = &mut d.amts[lo as usize..hi as usize];
        // Usually into empty slots: a fill.
        if slice.iter().all(Amt::is_zero) {
            slice.fill(a.clone());
            d.nonzero += slice.len();
            return;
        }
        // One nonzero amount everywhere (what is left after a range was taken): one addition.
        if let Some((first, tail)) = slice.split_first() {
            if !first.is_zero() && tail.iter().all(|e| e.same(first)) {
                let r = first.plus(a);
                if r.is_zero() {
                    d.nonzero -= slice.len();
                }
                slice.fill(r);
                return;
            }
        }
        for e in slice {
            add_slot(e, a, &mut d.nonzero);
        }
    }

    /// Give `obj` a dense vector of at least `len` slots, holding the entries the other
    /// layouts had of it.
    fn make_dense(&mut self, obj: u32, len: usize) {
        let mut entries: Vec<(u32, Amt)> = Vec::new();
        self.small.retain(|(k, a)| {
            let mine = k.obj() == obj;
            if mine {
                entries.push((k.idx(), a.clone()));
            }
            !mine
        });
        if !self.map.is_empty() {
            self.map.retain(|k, a| {
                let mine = k.obj() == obj;
                if mine {
                    entries.push((k.idx(), a.clone()));
                }
                !mine
            });
        }
        if entries.is_empty() {
            // Nothing held of it yet: the caller fills a range, usually all of it.
            self.dense.push(DenseObj::uniform(obj, Amt::NONE, len));
            return;
        }
        let max = entries.iter().map(|(i, _)| *i as usize + 1).max().unwrap_or(0);
        let mut d = DenseObj { obj, amts: vec![Amt::NONE; len.max(max)], ..DenseObj::default() };
        for (i, a) in entries {
            if !a.is_zero() {
                d.amts[i as usize] = a;
                d.nonzero += 1;
            }
        }
        self.dense.push(d);
    }

    /// May the holder read every element of `lo..hi` of `obj`? (True for an empty range.)
    pub fn can_read_range(&self, obj: u32, lo: u32, hi: u32) -> bool {
        if lo >= hi {
            return true;
        }
        if let Some(d) = self.dense.iter().find(|d| d.obj == obj) {
            return match &d.uniform {
                Some((a, n)) => hi as usize <= *n && a.can_read(),
                None => d
                    .amts
                    .get(lo as usize..hi as usize)
                    .is_some_and(|s| s.iter().all(Amt::can_read)),
            };
        }
        (lo..hi).all(|i| self.can_read(Loc::new(obj, i)))
    }

    /// Every nonzero entry, in an unspecified order.
    pub fn entries(&self) -> impl Iterator<Item = (Loc, &Amt)> {
        let dense = self.dense.iter().flat_map(|d| {
            let n = d.uniform.as_ref().map_or(d.amts.len(), |u| u.1);
            (0..n).filter_map(move |i| d.get(i).map(|a| (Loc::new(d.obj, i as u32), a)))
        });
        dense
            .chain(self.small.iter().map(|(l, a)| (*l, a)))
            .chain(self.map.iter().map(|(l, a)| (*l, a)))
    }

    /// Move everything into `dst` (loop exit, frame collapse).
    pub fn drain_into(&mut self, dst: &mut Holder) {
        if dst.is_empty() {
            std::mem::swap(self, dst);
            return;
        }
        for d in self.dense.drain(..) {
            if d.nonzero == 0 {
                continue;
            }
            if let Some((a, n)) = &d.uniform {
                dst.add_range(d.obj, 0, *n as u32, a);
                continue;
            }
            for (i, a) in d.amts.into_iter().enumerate() {
                if !a.is_zero() {
                    dst.add(Loc::new(d.obj, i as u32), &a);
                }
            }
        }
        for (l, a) in self.small.drain(..) {
            dst.add(l, &a);
        }
        for (l, a) in self.map.drain() {
            dst.add(l, &a);
        }
    }

    /// Forget everything but keep the allocations.
    pub fn clear(&mut self) {
        self.small.clear();
        self.dense.clear();
        if !self.map.is_empty() {
            self.map.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Rng;

    #[test]
    fn holder_layouts_agree() {
        // The same operations on a holder that stays small and one pushed into the dense and
        // hash layouts give the same amounts.
        let mut h = Holder::default();
        let mut reference: std::collections::BTreeMap<Loc, Amt> = Default::default();
        let mut rng = Rng::new(5);
        for step in 0..4000 {
            // Object 0: many nearby elements (dense); object 2: scattered ones (hash map).
            let obj = if rng.range(0, 2) < 2 { 0 } else { 2 };
            let idx = if obj == 2 { rng.range(0, 100_000) } else { rng.range(0, 40) } as u32;
            let l = Loc::new(obj, idx);
            let a = match rng.range(0, 3) {
                0 => Amt::write(),
                1 => Amt::frac(1, 2),
                2 => Amt::read(),
                _ => Amt::frac(1, 3),
            };
            if step % 3 == 0 {
                let ok = h.take(l, &a);
                let r = reference.get(&l).cloned().unwrap_or_else(Amt::none);
                // A holder of reads only keeps them when it gives reads (a wildcard splits).
                let keeps = a.is_read_only() && r.is_read_only();
                assert_eq!(ok, keeps || r >= a && !r.is_zero() || a.is_zero());
                if ok && !keeps {
                    let mut n = r;
                    n.sub(&a);
                    if n.is_zero() {
                        reference.remove(&l);
                    } else {
                        reference.insert(l, n);
                    }
                }
            } else {
                h.add(l, &a);
                let e = reference.entry(l).or_insert_with(Amt::none);
                e.add(&a);
                if e.is_zero() {
                    reference.remove(&l);
                }
            }
        }
        for (l, a) in &reference {
            assert_eq!(&h.amount(*l), a);
        }
        let mut got: Vec<(Loc, Amt)> = h.entries().map(|(l, a)| (l, a.clone())).collect();
        got.sort_by_key(|e| e.0);
        let want: Vec<(Loc, Amt)> = reference.into_iter().collect();
        assert_eq!(got, want);
        assert!(!h.dense.is_empty() && !h.map.is_empty());
    }

    #[test]
    fn a_holder_of_reads_gives_reads_of_a_range_and_keeps_them() {
        let mut h = Holder::default();
        h.add_range(0, 0, 64, &Amt::read());
        h.add(Loc::new(0, 64), &Amt::frac(1, 2));
        assert!(h.take_range(0, 0, 64, &Amt::read()));
        assert!(h.take_range(0, 0, 64, &Amt::read()));
        assert_eq!(h.amount(Loc::new(0, 5)), Amt::read());
        // Reads are not a fraction: none of it can be taken.
        assert!(!h.take_range(0, 0, 64, &Amt::frac(1, 2)));
        // A range held partly as reads, partly as a fraction: the fraction gives its read.
        assert!(h.take_range(0, 60, 65, &Amt::read()));
        assert_eq!(h.amount(Loc::new(0, 60)), Amt::read());
        let mut half_minus_read = Amt::frac(1, 2);
        half_minus_read.sub(&Amt::read());
        assert_eq!(h.amount(Loc::new(0, 64)), half_minus_read);
        // All or nothing: a cell held not at all fails the range, and nothing is taken.
        assert!(!h.take_range(0, 60, 70, &Amt::read()));
        assert_eq!(h.amount(Loc::new(0, 64)), half_minus_read);
    }

    #[test]
    fn densifying_an_object_keeps_its_entries_in_the_map() {
        // Object 1 gets an entry into the hash map while it has too few small entries for a
        // dense vector (the small list full of object 0), and a dense vector later: the entry
        // must move with the others, not stay hidden behind the vector.
        let mut h = Holder::default();
        let mut added = Vec::new();
        let mut add = |h: &mut Holder, obj, i| {
            h.add(Loc::new(obj, i), &Amt::write());
            added.push(Loc::new(obj, i));
        };
        for i in 0..5 {
            add(&mut h, 1, i);
        }
        for i in 0..11 {
            add(&mut h, 0, i);
        }
        add(&mut h, 1, 5);
        assert!(!h.map.is_empty(), "the entry went to the map");
        // Object 0 goes dense, leaving room in the small list for object 1 until it does too.
        add(&mut h, 0, 11);
        for i in 6..20 {
            add(&mut h, 1, i);
        }
        assert!(h.map.is_empty() && h.dense.len() == 2, "{h:?}");
        for l in &added {
            assert_eq!(h.amount(*l), Amt::write(), "{l:?}");
        }
        assert_eq!(h.entries().count(), added.len());
        assert!(h.take(Loc::new(1, 5), &Amt::write()));
    }

    #[test]
    fn range_moves_match_element_moves() {
        // `add_range`/`take_range` against element-by-element `add`/`take` (all or nothing) on
        // a holder that starts in each layout.
        let amts = [Amt::write(), Amt::frac(1, 2), Amt::read(), Amt::frac(1, 3)];
        for start in 0..5 {
            let mut h = Holder::default();
            let mut r = Holder::default();
            let mut rng = Rng::new(11 + start);
            // Layouts to start from: a few small entries, a dense object, a scattered one.
            // Start 3: a whole array granted at once (one amount for all, moved as one while
            // ranges cover all of it); start 4: an object first seen through a range.
            for i in 0..[3, 40, 20, 0, 0][start as usize] {
                let l = Loc::new(1, if start == 2 { i * 5_000 } else { i });
                h.add(l, &Amt::frac(1, 2));
                r.add(l, &Amt::frac(1, 2));
            }
            if start == 3 {
                h.grant_all(1, 40);
                for i in 0..40 {
                    r.add(Loc::new(1, i), &Amt::write());
                }
            }
            for _ in 0..300 {
                let (lo, hi) = if start >= 3 && rng.chance(60) {
                    (0, 40)
                } else {
                    let lo = rng.range(0, 60) as u32;
                    (lo, lo + rng.range(0, 30) as u32)
                };
                let a = &amts[rng.range(0, 3) as usize];
                if rng.chance(40) {
                    let ok = h.take_range(1, lo, hi, a);
                    let want = (lo..hi).all(|i| r.get(Loc::new(1, i)).is_some_and(|e| e >= a));
                    assert_eq!(ok, want || a.is_zero() || lo >= hi);
                    if ok {
                        for i in lo..hi {
                            assert!(r.take(Loc::new(1, i), a));
                        }
                    }
                } else {
                    h.add_range(1, lo, hi, a);
                    for i in lo..hi {
                        r.add(Loc::new(1, i), a);
                    }
                }
                let mut got: Vec<(Loc, Amt)> = h.entries().map(|(l, a)| (l, a.clone())).collect();
                let mut want: Vec<(Loc, Amt)> = r.entries().map(|(l, a)| (l, a.clone())).collect();
                got.sort_by_key(|e| e.0);
                want.sort_by_key(|e| e.0);
                assert_eq!(got, want);
                for i in 0..70 {
                    let l = Loc::new(1, i);
                    assert_eq!(h.amount(l), r.amount(l));
                }
                let (lo, hi) = (rng.range(0, 50) as u32, rng.range(0, 50) as u32);
                let want = (lo..hi).all(|i| r.can_read(Loc::new(1, i)));
                assert_eq!(h.can_read_range(1, lo, hi), want, "{lo}..{hi}");
            }
            let mut d = Holder::default();
            h.drain_into(&mut d);
            let mut e = Holder::default();
            e.add(Loc::new(1, 3), &Amt::read());
            d.drain_into(&mut e);
            r.add(Loc::new(1, 3), &Amt::read());
            let mut got: Vec<(Loc, Amt)> = e.entries().map(|(l, a)| (l, a.clone())).collect();
            let mut want: Vec<(Loc, Amt)> = r.entries().map(|(l, a)| (l, a.clone())).collect();
            got.sort_by_key(|e| e.0);
            want.sort_by_key(|e| e.0);
            assert_eq!(got, want);
        }
    }
}
