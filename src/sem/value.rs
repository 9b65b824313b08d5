//! Runtime values, locations and permission amounts (semantics.md §3.1, §3.3).

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};
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

/// A permission amount q + k·ε (§3.3): `q` exact, ε the infinitesimal of `read`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Amt {
    pub q: BigRational,
    pub k: i64,
}

impl Amt {
    pub fn none() -> Amt {
        Amt {
            q: BigRational::zero(),
            k: 0,
        }
    }
    pub fn write() -> Amt {
        Amt {
            q: BigRational::one(),
            k: 0,
        }
    }
    pub fn read() -> Amt {
        Amt {
            q: BigRational::zero(),
            k: 1,
        }
    }
    pub fn frac(n: i64, d: i64) -> Amt {
        Amt {
            q: BigRational::new(BigInt::from(n), BigInt::from(d)),
            k: 0,
        }
    }
    pub fn is_zero(&self) -> bool {
        self.q.is_zero() && self.k == 0
    }
    /// Enough to read: amount > (0, 0).
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
        self.q += &o.q;
        self.k += o.k;
    }
    pub fn sub(&mut self, o: &Amt) {
        self.q -= &o.q;
        self.k -= o.k;
    }
    pub fn scaled(&self, s: &BigRational) -> Amt {
        Amt {
            q: &self.q * s,
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

/// A permission holder (§3.4): a map from locations to amounts. Zero entries are removed so that
/// `len` and leftovers stay meaningful.
#[derive(Clone, Debug, Default)]
pub struct Holder {
    pub map: FxMap<Loc, Amt>,
}

impl Holder {
    pub fn get(&self, l: Loc) -> Option<&Amt> {
        self.map.get(&l)
    }
    pub fn can_read(&self, l: Loc) -> bool {
        self.map.get(&l).is_some_and(Amt::can_read)
    }
    pub fn can_write(&self, l: Loc) -> bool {
        self.map.get(&l).is_some_and(Amt::can_write)
    }
    pub fn amount(&self, l: Loc) -> Amt {
        self.map.get(&l).cloned().unwrap_or_else(Amt::none)
    }
    pub fn add(&mut self, l: Loc, a: &Amt) {
        if a.is_zero() {
            return;
        }
        let e = self.map.entry(l).or_insert_with(Amt::none);
        e.add(a);
        if e.is_zero() {
            self.map.remove(&l);
        }
    }
    /// Remove `a` from `l`; returns false (and removes nothing) when not enough is held.
    pub fn take(&mut self, l: Loc, a: &Amt) -> bool {
        if a.is_zero() {
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
    /// Move everything into `dst` (loop exit, frame collapse).
    pub fn drain_into(&mut self, dst: &mut Holder) {
        for (l, a) in self.map.drain() {
            dst.add(l, &a);
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
