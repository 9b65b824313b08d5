//! Runtime values, locations and permission amounts (semantics.md §3.1, §3.3).

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Signed;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::rc::Rc;

/// A runtime value. `int` is mathematical; we use `i64` with checked arithmetic and report
/// overflow as inconclusive (R-INT-RANGE), as semantics.md §4.8 allows; only an integer literal
/// outside that range is a [`Value::Big`].
///
/// Equality and order are those of the values, not of the representation: the numbers `Int`,
/// `Big` and `Perm` compare by their value (`1 == 1\1`), and sets, bags and maps are kept in
/// a canonical (sorted) form, so that `==` is extensional. The order ([`Ord`]) is total, which
/// the canonical forms rely on; between kinds it is arbitrary but fixed.
#[derive(Clone, Debug)]
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
    /// A `frac`, `zfrac` or `rational` value, or a permission amount used as a value
    /// (`write`, `1\2`, `perm(x)`): q + k·ε (§3.3).
    Perm(Rc<Amt>),
    /// An integer outside the `i64` range (from a literal); never one that fits.
    Big(Rc<BigInt>),
    /// `set<T>`: sorted, without duplicates.
    Set(Rc<Vec<Value>>),
    /// `bag<T>`: sorted, an element repeated as often as it occurs.
    Bag(Rc<Vec<Value>>),
    /// `map<K,V>`.
    Map(Rc<MapVal>),
    /// `option<T>`: `None` or `Some(v)`.
    Opt(Option<Rc<Value>>),
    /// A tuple: the `(k, v)` of `m ++ (k, v)`, the items of `itemsMap`, `tuple<A,B>{a, b}`.
    Tuple(Rc<Vec<Value>>),
}

/// A map value: entries sorted by key, keys distinct. `dflt` is what a lookup of a key outside
/// the domain gives: VerCors' `getFromMap` is total, with an unspecified value outside the
/// domain, and the interpreter fixes that value to the default of the map's value type (`0`,
/// `false`, `null`, an empty collection), so that every run (ORIG's and OPT's alike) sees the
/// same one. It takes no part in equality: maps are equal when their entries are.
#[derive(Clone, Debug)]
pub struct MapVal {
    pub entries: Vec<(Value, Value)>,
    pub dflt: Value,
}

impl MapVal {
    /// The position of key `k`, or where it would go.
    pub fn find(&self, k: &Value) -> Result<usize, usize> {
        self.entries.binary_search_by(|(x, _)| x.cmp(k))
    }
    /// The value at key `k`; the default outside the domain (see [`MapVal`]).
    pub fn get(&self, k: &Value) -> Value {
        match self.find(k) {
            Ok(i) => self.entries[i].1.clone(),
            Err(_) => self.dflt.clone(),
        }
    }
    /// The map with `k` bound to `v`.
    pub fn with(&self, k: Value, v: Value) -> MapVal {
        let mut m = self.clone();
        match m.find(&k) {
            Ok(i) => m.entries[i].1 = v,
            Err(i) => m.entries.insert(i, (k, v)),
        }
        m
    }
    /// The map without key `k`.
    pub fn without(&self, k: &Value) -> MapVal {
        let mut m = self.clone();
        if let Ok(i) = m.find(k) {
            m.entries.remove(i);
        }
        m
    }
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
    /// A permission amount as a value.
    pub fn perm(a: Amt) -> Value {
        Value::Perm(Rc::new(a))
    }
    /// An integer of any size: `Int` when it fits, `Big` otherwise.
    pub fn big(b: BigInt) -> Value {
        use num_traits::ToPrimitive;
        match b.to_i64() {
            Some(i) => Value::Int(i),
            None => Value::Big(Rc::new(b)),
        }
    }
    /// A set of `elems` in canonical form.
    pub fn set(mut elems: Vec<Value>) -> Value {
        elems.sort();
        elems.dedup();
        Value::Set(Rc::new(elems))
    }
    /// A bag of `elems` in canonical form.
    pub fn bag(mut elems: Vec<Value>) -> Value {
        elems.sort();
        Value::Bag(Rc::new(elems))
    }
    /// A map of `entries` (a later entry for a key overrides an earlier one).
    pub fn map(entries: Vec<(Value, Value)>, dflt: Value) -> Value {
        let mut m = MapVal { entries: Vec::with_capacity(entries.len()), dflt };
        for (k, v) in entries {
            m = m.with(k, v);
        }
        Value::Map(Rc::new(m))
    }
    /// The value as an exact amount, when it is a number (an integer or an amount).
    pub fn amount(&self) -> Option<Amt> {
        match self {
            Value::Int(i) => Some(Amt { q: Q::int(*i), k: 0 }),
            Value::Perm(a) => Some((**a).clone()),
            Value::Big(b) => {
                Some(Amt { q: Q::from_big(BigRational::from_integer((**b).clone())), k: 0 })
            }
            _ => None,
        }
    }
    /// The rank of the value's kind in the total order; the numbers share one.
    fn rank(&self) -> u8 {
        match self {
            Value::Null => 0,
            Value::Unit => 1,
            Value::Bool(_) => 2,
            Value::Int(_) | Value::Big(_) | Value::Perm(_) => 3,
            Value::Ref(_) => 4,
            Value::Seq(_) => 5,
            Value::Set(_) => 6,
            Value::Bag(_) => 7,
            Value::Map(_) => 8,
            Value::Opt(_) => 9,
            Value::Tuple(_) => 10,
        }
    }
    /// Compare two numbers (both of rank 3).
    #[inline(never)]
    fn cmp_num(&self, o: &Value) -> Ordering {
        match (self, o) {
            (Value::Int(a), Value::Int(b)) => a.cmp(b),
            (Value::Big(a), Value::Big(b)) => a.cmp(b),
            (Value::Int(a), Value::Big(b)) => BigInt::from(*a).cmp(b),
            (Value::Big(a), Value::Int(b)) => (**a).cmp(&BigInt::from(*b)),
            _ => match (self.amount(), o.amount()) {
                (Some(a), Some(b)) => a.cmp(&b),
                _ => Ordering::Equal,
            },
        }
    }
}

impl PartialEq for Value {
    #[inline]
    fn eq(&self, o: &Value) -> bool {
        match (self, o) {
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Ref(a), Value::Ref(b)) => a == b,
            (Value::Null, Value::Null) | (Value::Unit, Value::Unit) => true,
            _ => self.cmp(o) == Ordering::Equal,
        }
    }
}
impl Eq for Value {}
impl PartialOrd for Value {
    fn partial_cmp(&self, o: &Value) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Value {
    fn cmp(&self, o: &Value) -> Ordering {
        match (self, o) {
            (Value::Int(a), Value::Int(b)) => a.cmp(b),
            (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
            (Value::Ref(a), Value::Ref(b)) => a.cmp(b),
            (Value::Seq(a), Value::Seq(b))
            | (Value::Set(a), Value::Set(b))
            | (Value::Bag(a), Value::Bag(b))
            | (Value::Tuple(a), Value::Tuple(b)) => a.cmp(b),
            (Value::Map(a), Value::Map(b)) => a.entries.cmp(&b.entries),
            (Value::Opt(a), Value::Opt(b)) => a.cmp(b),
            _ => match self.rank().cmp(&o.rank()) {
                Ordering::Equal if self.rank() == 3 => self.cmp_num(o),
                r => r,
            },
        }
    }
}

impl Hash for Value {
    /// Consistent with equality: an integral amount hashes as the integer it equals.
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u8(self.rank());
        match self {
            Value::Int(i) => h.write_i64(*i),
            Value::Bool(b) => h.write_u8(*b as u8),
            Value::Ref(r) => h.write_u32(*r),
            Value::Perm(a) => match (&a.q, a.k) {
                (Q::S(n, 1), 0) => h.write_i64(*n),
                (Q::S(n, d), k) => {
                    h.write_i64(*n);
                    h.write_i64(*d);
                    h.write_i64(k);
                }
                // Equal to a `Big` perhaps: the rank alone.
                (Q::B(_), _) => {}
            },
            Value::Null | Value::Unit | Value::Big(_) => {}
            Value::Seq(v) | Value::Set(v) | Value::Bag(v) | Value::Tuple(v) => v.hash(h),
            Value::Map(m) => m.entries.hash(h),
            Value::Opt(o) => o.hash(h),
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

    pub fn from_big(r: BigRational) -> Q {
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
        let n = if minus { x.checked_sub(y)? } else { x.checked_add(y)? };
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

    /// `self / o`; `None` for `o == 0`.
    pub fn div(&self, o: &Q) -> Option<Q> {
        match o {
            Q::S(0, _) => None,
            Q::S(n, d) => Some(self.mul(&Q::from_i128(*d as i128, *n as i128))),
            Q::B(b) => Some(Q::from_big(self.to_big() / (**b).clone())),
        }
    }

    /// Is this an integer (denominator 1)?
    pub fn is_integer(&self) -> bool {
        match self {
            Q::S(_, d) => *d == 1,
            Q::B(b) => b.is_integer(),
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
        Amt { q: Q::frac(n, d), k: 0 }
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
    /// Reads and no fraction: `k·read` with `k > 0`.
    #[inline]
    pub fn is_read_only(&self) -> bool {
        self.q.is_zero() && self.k > 0
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
        Amt { q: self.q.add(&o.q), k: self.k + o.k }
    }
    pub fn scaled(&self, s: &Q) -> Amt {
        Amt { q: self.q.mul(s), k: self.k }
    }
    pub fn minus(&self, o: &Amt) -> Amt {
        Amt { q: self.q.sub(&o.q), k: self.k - o.k }
    }
    pub fn negated(&self) -> Amt {
        Amt { q: self.q.neg(), k: -self.k }
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
            (false, k) => {
                write!(f, "{} {} {}·read", self.q, if k < 0 { "-" } else { "+" }, k.abs())
            }
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
    fn values_stay_two_words() {
        assert_eq!(std::mem::size_of::<Value>(), 16);
    }

    #[test]
    fn value_equality_is_by_value_and_hashes_agree() {
        use std::hash::BuildHasher;
        let h = |v: &Value| std::hash::BuildHasherDefault::<FxHasher>::default().hash_one(v);
        let pairs = [
            (Value::Int(1), Value::perm(Amt::write())),
            (Value::Int(-3), Value::perm(Amt::frac(-6, 2))),
            (
                Value::set(vec![Value::Int(2), Value::Int(1), Value::Int(2)]),
                Value::set(vec![Value::Int(1), Value::Int(2)]),
            ),
            (
                Value::bag(vec![Value::Int(2), Value::Int(1)]),
                Value::bag(vec![Value::Int(1), Value::Int(2)]),
            ),
            (
                Value::map(
                    vec![(Value::Int(1), Value::Int(5)), (Value::Int(1), Value::Int(6))],
                    Value::Int(0),
                ),
                Value::map(vec![(Value::Int(1), Value::Int(6))], Value::Null),
            ),
            (Value::big(BigInt::from(7)), Value::Int(7)),
        ];
        for (a, b) in &pairs {
            assert_eq!(a, b);
            assert_eq!(a.cmp(b), Ordering::Equal);
            assert_eq!(h(a), h(b), "{a:?} {b:?}");
        }
        let unequal = [
            (Value::Int(1), Value::perm(Amt::frac(1, 2))),
            (Value::perm(Amt::read()), Value::perm(Amt::none())),
            (Value::bag(vec![Value::Int(1), Value::Int(1)]), Value::bag(vec![Value::Int(1)])),
            (Value::set(vec![Value::Int(1)]), Value::bag(vec![Value::Int(1)])),
            (Value::Opt(None), Value::Null),
            (Value::big(BigInt::from(i64::MAX) + 1), Value::Int(i64::MAX)),
        ];
        for (a, b) in &unequal {
            assert_ne!(a, b);
            // The order is total and antisymmetric.
            assert_eq!(a.cmp(b), b.cmp(a).reverse());
        }
        assert!(Value::Int(1) < Value::perm(Amt::frac(3, 2)));
        assert!(Value::perm(Amt::read()) < Value::Int(1));
        assert!(Value::big(BigInt::from(i64::MAX) * 2) > Value::perm(Amt::write()));
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
