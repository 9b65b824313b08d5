//! Runtime values, locations and permission amounts (semantics.md §3.1, §3.3).

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Signed;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

/// A runtime value. `int` is mathematical; we use `i64` with checked arithmetic and report
/// overflow as inconclusive (R-INT-RANGE), as semantics.md §4.8 allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Int(i64),
    Bool(bool),
    /// A reference to a heap object (array or class instance).
    Ref(u32),
    Null,
    /// Ghost sequence value.
    Seq(Rc<Vec<Value>>),
    /// The value of a `void` call.
    Unit,
}

impl Value {
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

/// A heap location: object id in the high half, element index or field slot in the low half.
/// Locals are not locations (§3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Loc(pub u64);

impl Loc {
    pub fn new(obj: u32, idx: u32) -> Loc {
        Loc(((obj as u64) << 32) | idx as u64)
    }
    pub fn obj(self) -> u32 {
        (self.0 >> 32) as u32
    }
    pub fn idx(self) -> u32 {
        self.0 as u32
    }
}

/// FxHash: locations are dense integers, so a cheap multiplicative hash is enough and keeps the
/// per-access permission lookup fast. Output never depends on map iteration order.
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.hash = (self.hash.rotate_left(5) ^ b as u64).wrapping_mul(SEED);
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.hash = (self.hash.rotate_left(5) ^ i).wrapping_mul(SEED);
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64)
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64)
    }
    fn finish(&self) -> u64 {
        self.hash
    }
}

pub type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// An exact rational. Almost every permission amount in practice is a small fraction (1, 1/2,
/// 1/n), so those are kept as a reduced `i64` pair and computed with `i128` intermediates; only
/// results that do not fit fall back to `BigRational`. A value that fits is always `S`, so the
/// representation is canonical.
#[derive(Clone, Debug)]
pub enum Q {
    /// `n/d` with `d > 0` and `gcd(|n|, d) == 1`.
    S(i64, i64),
    B(Rc<BigRational>),
}

/// Binary (Stein's) gcd, for the machine-word widths the small rationals use.
macro_rules! binary_gcd {
    ($name:ident, $t:ty) => {
        fn $name(mut a: $t, mut b: $t) -> $t {
            if a == 0 {
                return b;
            }
            if b == 0 {
                return a;
            }
            let shift = (a | b).trailing_zeros();
            a >>= a.trailing_zeros();
            loop {
                b >>= b.trailing_zeros();
                if a > b {
                    std::mem::swap(&mut a, &mut b);
                }
                b -= a;
                if b == 0 {
                    return a << shift;
                }
            }
        }
    };
}

binary_gcd!(gcd_u64, u64);
binary_gcd!(gcd_u128, u128);

impl Q {
    pub const ZERO: Q = Q::S(0, 1);
    pub const ONE: Q = Q::S(1, 1);

    /// `n/d` for `d != 0`.
    pub fn frac(n: i64, d: i64) -> Q {
        Q::from_i128(n as i128, d as i128)
    }

    pub fn int(n: i64) -> Q {
        Q::S(n, 1)
    }

    /// Reduce `n/d` for `d > 0`.
    #[inline]
    fn reduce64(n: i64, d: i64) -> Q {
        if n == 0 {
            return Q::ZERO;
        }
        if d == 1 {
            return Q::S(n, 1);
        }
        let g = gcd_u64(n.unsigned_abs(), d as u64);
        if g == 1 {
            Q::S(n, d)
        } else {
            // g divides |n| <= 2^63 and d < 2^63, and g > 1, so both quotients fit.
            Q::S((n as i128 / g as i128) as i64, d / g as i64)
        }
    }

    /// Reduce `n/d` (`d != 0`) and keep it small when it fits.
    fn from_i128(mut n: i128, mut d: i128) -> Q {
        if let (Ok(n), Ok(d)) = (i64::try_from(n), i64::try_from(d)) {
            if d > 0 {
                return Q::reduce64(n, d);
            }
        }
        if d < 0 {
            n = -n;
            d = -d;
        }
        if d != 1 {
            let g = gcd_u128(n.unsigned_abs(), d as u128) as i128;
            if g > 1 {
                n /= g;
                d /= g;
            }
        }
        match (i64::try_from(n), i64::try_from(d)) {
            (Ok(n), Ok(d)) => Q::S(n, d),
            _ => Q::B(Rc::new(BigRational::new(BigInt::from(n), BigInt::from(d)))),
        }
    }

    fn from_big(r: BigRational) -> Q {
        use num_traits::ToPrimitive;
        match (r.numer().to_i64(), r.denom().to_i64()) {
            (Some(n), Some(d)) => Q::S(n, d),
            _ => Q::B(Rc::new(r)),
        }
    }

    pub fn to_big(&self) -> BigRational {
        match self {
            Q::S(n, d) => BigRational::new_raw(BigInt::from(*n), BigInt::from(*d)),
            Q::B(b) => (**b).clone(),
        }
    }

    pub fn is_zero(&self) -> bool {
        matches!(self, Q::S(0, _))
    }
    pub fn is_one(&self) -> bool {
        matches!(self, Q::S(1, 1))
    }
    pub fn is_positive(&self) -> bool {
        match self {
            Q::S(n, _) => *n > 0,
            Q::B(b) => b.is_positive(),
        }
    }
    pub fn is_negative(&self) -> bool {
        match self {
            Q::S(n, _) => *n < 0,
            Q::B(b) => b.is_negative(),
        }
    }

    pub fn add(&self, o: &Q) -> Q {
        match (self, o) {
            (Q::S(0, _), x) | (x, Q::S(0, _)) => x.clone(),
            (Q::S(a, b), Q::S(c, d)) if b == d => match a.checked_add(*c) {
                Some(n) => Q::reduce64(n, *b),
                None => Q::from_i128(*a as i128 + *c as i128, *b as i128),
            },
            (Q::S(a, b), Q::S(c, d)) => match Q::cross(*a, *b, *c, *d, false) {
                Some(q) => q,
                None => Q::from_i128(
                    *a as i128 * *d as i128 + *c as i128 * *b as i128,
                    *b as i128 * *d as i128,
                ),
            },
            _ => Q::from_big(self.to_big() + o.to_big()),
        }
    }

    /// `a/b ± c/d` in machine words, when nothing overflows (small fractions: `1 - 1/2`);
    /// `None` sends the caller to the 128-bit path.
    #[inline]
    fn cross(a: i64, b: i64, c: i64, d: i64, minus: bool) -> Option<Q> {
        let (x, y) = (a.checked_mul(d)?, c.checked_mul(b)?);
        let n = if minus {
            x.checked_sub(y)?
        } else {
            x.checked_add(y)?
        };
        Some(Q::reduce64(n, b.checked_mul(d)?))
    }

    pub fn neg(&self) -> Q {
        match self {
            Q::S(n, d) if *n != i64::MIN => Q::S(-n, *d),
            _ => Q::from_big(-self.to_big()),
        }
    }

    pub fn sub(&self, o: &Q) -> Q {
        match (self, o) {
            (x, Q::S(0, _)) => x.clone(),
            (Q::S(a, b), Q::S(c, d)) if b == d => match a.checked_sub(*c) {
                Some(n) => Q::reduce64(n, *b),
                None => Q::from_i128(*a as i128 - *c as i128, *b as i128),
            },
            (Q::S(a, b), Q::S(c, d)) => match Q::cross(*a, *b, *c, *d, true) {
                Some(q) => q,
                None => Q::from_i128(
                    *a as i128 * *d as i128 - *c as i128 * *b as i128,
                    *b as i128 * *d as i128,
                ),
            },
            _ => Q::from_big(self.to_big() - o.to_big()),
        }
    }

    pub fn mul(&self, o: &Q) -> Q {
        match (self, o) {
            (Q::S(1, 1), x) | (x, Q::S(1, 1)) => x.clone(),
            (Q::S(a, b), Q::S(c, d)) => {
                Q::from_i128(*a as i128 * *c as i128, *b as i128 * *d as i128)
            }
            _ => Q::from_big(self.to_big() * o.to_big()),
        }
    }
}

impl PartialEq for Q {
    #[inline]
    fn eq(&self, o: &Q) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Q {}
impl PartialOrd for Q {
    fn partial_cmp(&self, o: &Q) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Q {
    #[inline(always)]
    fn cmp(&self, o: &Q) -> Ordering {
        match (self, o) {
            // Equal denominators (most comparisons: amounts of one kernel's fractions).
            (Q::S(a, b), Q::S(c, d)) if b == d => a.cmp(c),
            _ => self.cmp_slow(o),
        }
    }
}

impl Q {
    #[inline(never)]
    fn cmp_slow(&self, o: &Q) -> Ordering {
        match (self, o) {
            (Q::S(a, b), Q::S(c, d)) => match (a.checked_mul(*d), c.checked_mul(*b)) {
                (Some(x), Some(y)) => x.cmp(&y),
                _ => (*a as i128 * *d as i128).cmp(&(*c as i128 * *b as i128)),
            },
            _ => self.to_big().cmp(&o.to_big()),
        }
    }
}

impl std::fmt::Display for Q {
    /// Same text as `BigRational`'s `Display`: `n` for integers, `n/d` otherwise.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Q::S(n, 1) => write!(f, "{n}"),
            Q::S(n, d) => write!(f, "{n}/{d}"),
            Q::B(b) => write!(f, "{b}"),
        }
    }
}

/// A permission amount q + k·ε (§3.3): `q` exact, ε the infinitesimal of `read`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Amt {
    pub q: Q,
    pub k: i64,
}

impl Amt {
    pub const NONE: Amt = Amt { q: Q::ZERO, k: 0 };
    pub const WRITE: Amt = Amt { q: Q::ONE, k: 0 };

    pub fn none() -> Amt {
        Amt::NONE
    }
    pub fn write() -> Amt {
        Amt::WRITE
    }
    pub fn read() -> Amt {
        Amt { q: Q::ZERO, k: 1 }
    }
    pub fn frac(n: i64, d: i64) -> Amt {
        Amt {
            q: Q::frac(n, d),
            k: 0,
        }
    }
    #[inline]
    pub fn is_zero(&self) -> bool {
        self.q.is_zero() && self.k == 0
    }
    /// Equality without the general comparison, exact when both are small (the canonical
    /// form makes small values equal exactly when their fields are).
    #[inline(always)]
    pub fn same(&self, o: &Amt) -> bool {
        match (&self.q, &o.q) {
            (Q::S(a, b), Q::S(c, d)) => a == c && b == d && self.k == o.k,
            _ => self == o,
        }
    }
    /// Enough to read: amount > (0, 0).
    #[inline]
    pub fn can_read(&self) -> bool {
        self.q.is_positive() || (self.q.is_zero() && self.k > 0)
    }
    /// Enough to write: exactly (1, 0).
    pub fn can_write(&self) -> bool {
        self.k == 0 && self.q.is_one()
    }
    pub fn is_negative(&self) -> bool {
        self.q.is_negative() || (self.q.is_zero() && self.k < 0)
    }
    pub fn add(&mut self, o: &Amt) {
        self.q = self.q.add(&o.q);
        self.k += o.k;
    }
    pub fn sub(&mut self, o: &Amt) {
        self.q = self.q.sub(&o.q);
        self.k -= o.k;
    }
    pub fn plus(&self, o: &Amt) -> Amt {
        Amt {
            q: self.q.add(&o.q),
            k: self.k + o.k,
        }
    }
    pub fn scaled(&self, s: &Q) -> Amt {
        Amt {
            q: self.q.mul(s),
            k: self.k,
        }
    }
}

impl PartialOrd for Amt {
    fn partial_cmp(&self, o: &Amt) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Amt {
    #[inline]
    fn cmp(&self, o: &Amt) -> Ordering {
        self.q.cmp(&o.q).then(self.k.cmp(&o.k))
    }
}

impl std::fmt::Display for Amt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.q.is_zero(), self.k) {
            (true, 0) => write!(f, "none"),
            (true, k) => write!(f, "{k}·read"),
            (false, 0) => write!(f, "{}", self.q),
            (false, k) => write!(
                f,
                "{} {} {}·read",
                self.q,
                if k < 0 { "-" } else { "+" },
                k.abs()
            ),
        }
    }
}

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

    /// Move the small entries of `l`'s object to a dense vector if that layout pays off.
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
        let mut d = DenseObj {
            obj,
            amts: vec![Amt::NONE; max + 1],
            ..DenseObj::default()
        };
        self.small.retain(|(k, a)| {
            if k.obj() == obj {
                d.amts[k.idx() as usize] = a.clone();
                d.nonzero += 1;
                false
            } else {
                true
            }
        });
        self.dense.push(d);
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
    pub fn take(&mut self, l: Loc, a: &Amt) -> bool {
        if a.is_zero() {
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
        let max = entries
            .iter()
            .map(|(i, _)| *i as usize + 1)
            .max()
            .unwrap_or(0);
        let mut d = DenseObj {
            obj,
            amts: vec![Amt::NONE; len.max(max)],
            ..DenseObj::default()
        };
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

/// A small deterministic PRNG (SplitMix64): inputs are reproducible from the seed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [lo, hi] (inclusive).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = (hi - lo) as u64 + 1;
        lo + (self.next_u64() % span) as i64
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
}

/// Seed of input `i` under global seed `s` (§10.3).
pub fn input_seed(global: u64, i: u64) -> u64 {
    let mut r =
        Rng::new(global.wrapping_mul(0x100_0000_01B3) ^ i.wrapping_mul(0xA24B_AED4_963E_E407));
    r.next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_rationals_match_big_ones() {
        let vals = [
            (0, 1),
            (1, 1),
            (1, 2),
            (-1, 3),
            (2, 4),
            (7, -21),
            (i64::MAX, 1),
            (1, i64::MAX),
            (i64::MIN + 1, 3),
            (i64::MAX, i64::MAX - 1),
        ];
        let big = |n: i64, d: i64| BigRational::new(BigInt::from(n), BigInt::from(d));
        for &(a, b) in &vals {
            for &(c, d) in &vals {
                let (x, y) = (Q::frac(a, b), Q::frac(c, d));
                let (bx, by) = (big(a, b), big(c, d));
                assert_eq!(x.add(&y).to_big(), &bx + &by);
                assert_eq!(x.sub(&y).to_big(), &bx - &by);
                assert_eq!(x.mul(&y).to_big(), &bx * &by);
                assert_eq!(x.cmp(&y), bx.cmp(&by));
                assert_eq!(x.to_string(), bx.to_string());
                // Canonical: a value that fits is always small, so equality is structural too.
                let s = x.add(&y).sub(&y);
                assert!(matches!(s, Q::S(..)), "{s:?}");
                assert_eq!(s, x);
            }
        }
    }

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
            let idx = if obj == 2 {
                rng.range(0, 100_000)
            } else {
                rng.range(0, 40)
            } as u32;
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
                assert_eq!(ok, r >= a && !r.is_zero() || a.is_zero());
                if ok {
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

    #[test]
    fn amount_algebra() {
        let mut h = Amt::write();
        h.sub(&Amt::read());
        assert!(h.can_read() && !h.can_write());
        assert!(h > Amt::frac(1, 2));
        h.add(&Amt::read());
        assert!(h.can_write());
        assert!(Amt::read() < Amt::frac(1, 1000));
        assert!(Amt::read() > Amt::none());
    }
}
