//! Units shared by every layer: time in integer picoseconds, rates in bits per second, sizes in
//! bytes. Simulated time is never a float (architecture.md, "What stays true").
//!
//! Text forms carry their unit: `"50us"`, `"10Gbps"`, `"16KB"`. Sizes use SI prefixes
//! (1 KB = 1000 B) and binary ones (1 KiB = 1024 B).

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::str::FromStr;

/// An instant or a duration of simulated time, in integer picoseconds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A data rate in bits per second.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

/// A size in bytes, written with a unit in scenarios (`"16KB"`, `"1500B"`, `"64KiB"`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

pub const PS_PER_NS: u64 = 1_000;
pub const PS_PER_US: u64 = 1_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;
pub const PS_PER_S: u64 = 1_000_000_000_000;

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);
    pub const fn ps(self) -> u64 {
        self.0
    }
    pub const fn from_ns(ns: u64) -> Time {
        Time(ns * PS_PER_NS)
    }
    pub const fn from_us(us: u64) -> Time {
        Time(us * PS_PER_US)
    }
    pub const fn from_ms(ms: u64) -> Time {
        Time(ms * PS_PER_MS)
    }
    pub fn as_us(self) -> f64 {
        self.0 as f64 / PS_PER_US as f64
    }
    pub fn as_secs(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    pub fn saturating_sub(self, other: Time) -> Time {
        Time(self.0.saturating_sub(other.0))
    }
}

/// Sums of times saturate at [`Time::MAX`], "never": an event that far away does not happen
/// within any run (scenario durations are far shorter), whatever delays a scenario configures.
impl Add for Time {
    type Output = Time;
    #[inline]
    fn add(self, o: Time) -> Time {
        Time(self.0.saturating_add(o.0))
    }
}
impl AddAssign for Time {
    #[inline]
    fn add_assign(&mut self, o: Time) {
        *self = *self + o
    }
}
impl Sub for Time {
    type Output = Time;
    fn sub(self, o: Time) -> Time {
        Time(self.0 - o.0)
    }
}

impl Rate {
    pub const ZERO: Rate = Rate(0);
    pub const fn bps(self) -> u64 {
        self.0
    }
    pub const fn from_mbps(mbps: u64) -> Rate {
        Rate(mbps * 1_000_000)
    }
    pub const fn from_gbps(gbps: u64) -> Rate {
        Rate(gbps * 1_000_000_000)
    }
    pub fn as_gbps(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Time to put `bytes` on the wire at this rate, rounded up to the next picosecond.
    /// Exact for the usual cases (1500 B at 10 Gbps is 1 200 000 ps).
    pub fn serialization(self, bytes: u64) -> Time {
        // In 64 bits while bytes · 8e12 fits (up to 2.3 MB): the same result, without the
        // 128-bit division every packet would otherwise pay for.
        match bytes.checked_mul(8 * PS_PER_S) {
            Some(bits) => Time(bits.div_ceil(self.0)),
            None => Time((bytes as u128 * 8 * PS_PER_S as u128).div_ceil(self.0 as u128) as u64),
        }
    }
    /// The rate that moves `bytes` in `time` (rounded down); zero time gives zero.
    pub fn of(bytes: u64, time: Time) -> Rate {
        if time.0 == 0 {
            return Rate::ZERO;
        }
        Rate((bytes as u128 * 8 * PS_PER_S as u128 / time.0 as u128) as u64)
    }
}

/// Why a unit string could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("'{text}' is not a {}: expected a number followed by one of {} (e.g. \"{}\")", .kind.what, .kind.units, .kind.example)]
    Malformed { text: String, kind: UnitKind },
    /// Beyond the 64-bit integer of the base unit (ps, bps, B).
    #[error("'{text}' is too large for a {}: the largest is {}", .kind.what, .kind.largest())]
    Overflow { text: String, kind: UnitKind },
}

/// What a unit string describes: its name, units and an example, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitKind {
    pub what: &'static str,
    pub units: &'static str,
    pub example: &'static str,
    table: &'static [(&'static str, u64)],
    /// The units values are written in (the others are only read).
    shown: &'static [(&'static str, u64)],
}

impl UnitKind {
    /// The largest value, in whole units of the largest unit.
    fn largest(&self) -> String {
        let (unit, mult) = self.shown[self.shown.len() - 1];
        format!("{}{unit}", u64::MAX / mult)
    }
}

/// Splits `"12.5us"` into (12.5 as an exact decimal scaled by `scale`, "us") and looks the unit
/// up in `table`. Decimal digits are handled exactly so that "1.2us" is 1 200 000 ps, not a
/// float rounding of it.
fn parse_with_units(text: &str, kind: UnitKind) -> Result<u64, UnitError> {
    let err = || UnitError::Malformed { text: text.into(), kind };
    let overflow = || UnitError::Overflow { text: text.into(), kind };
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim();
    let mult = kind.table.iter().find(|(u, _)| *u == unit).map(|(_, m)| *m).ok_or_else(err)?;
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if int.is_empty() && frac.is_empty() || !frac.chars().all(|c| c.is_ascii_digit()) {
        return Err(err());
    }
    // Digits only by now: a failed parse is a number beyond u128.
    let int: u128 = if int.is_empty() { 0 } else { int.parse().map_err(|_| overflow())? };
    let mut value = int.checked_mul(mult as u128).ok_or_else(overflow)?;
    let mut scale = mult as u128;
    for d in frac.chars() {
        let d = d.to_digit(10).ok_or_else(err)? as u128;
        scale /= 10;
        if scale == 0 && d != 0 {
            return Err(err()); // finer than the base unit
        }
        value += d * scale;
    }
    u64::try_from(value).map_err(|_| overflow())
}

const TIME_UNITS: &[(&str, u64)] = &[("ps", 1), ("ns", PS_PER_NS), ("us", PS_PER_US), ("ms", PS_PER_MS), ("s", PS_PER_S), ("µs", PS_PER_US)];
const RATE_UNITS: &[(&str, u64)] = &[("bps", 1), ("Kbps", 1_000), ("Mbps", 1_000_000), ("Gbps", 1_000_000_000), ("Tbps", 1_000_000_000_000)];
const SIZE_UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
];

/// A quantity written as text with a unit.
pub trait WithUnit: FromStr<Err = UnitError> {
    const KIND: UnitKind;
}
impl WithUnit for Time {
    const KIND: UnitKind = UnitKind { what: "duration", units: "ps, ns, us, ms, s", example: "50us", table: TIME_UNITS, shown: TIME_UNITS.split_at(5).0 };
}
impl WithUnit for Rate {
    const KIND: UnitKind = UnitKind { what: "rate", units: "bps, Kbps, Mbps, Gbps, Tbps", example: "10Gbps", table: RATE_UNITS, shown: RATE_UNITS };
}
impl WithUnit for Bytes {
    const KIND: UnitKind =
        UnitKind { what: "size", units: "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB", example: "16KB", table: SIZE_UNITS, shown: SIZE_UNITS.split_at(5).0 };
}

impl FromStr for Time {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, UnitError> {
        parse_with_units(s, Time::KIND).map(Time)
    }
}
impl FromStr for Rate {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, UnitError> {
        parse_with_units(s, Rate::KIND).map(Rate)
    }
}
impl FromStr for Bytes {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, UnitError> {
        parse_with_units(s, Bytes::KIND).map(Bytes)
    }
}

/// Writes `v` with the largest unit `kind` shows that divides it exactly.
fn fmt_exact(f: &mut fmt::Formatter<'_>, v: u64, kind: UnitKind) -> fmt::Result {
    let (unit, mult) = kind.shown.iter().rev().find(|(_, m)| v.is_multiple_of(*m) && (v > 0 || *m == 1)).copied().unwrap_or(kind.shown[0]);
    write!(f, "{}{}", v / mult, unit)
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_exact(f, self.0, Time::KIND)
    }
}
impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_exact(f, self.0, Rate::KIND)
    }
}
impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_exact(f, self.0, Bytes::KIND)
    }
}

macro_rules! serde_as_text {
    ($t:ty) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any(TextVisitor::<$t>(std::marker::PhantomData))
            }
        }
    };
}
/// Reads a unit string; a bare number is an error that says the unit is missing.
struct TextVisitor<T>(std::marker::PhantomData<T>);

impl<T: WithUnit> TextVisitor<T> {
    fn bare<E: de::Error>(number: impl fmt::Display) -> E {
        let k = T::KIND;
        E::custom(format_args!("{number} has no unit: a {} is written with one of {} (e.g. \"{}\")", k.what, k.units, k.example))
    }
}

impl<T: WithUnit> de::Visitor<'_> for TextVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a {} with its unit, e.g. \"{}\"", T::KIND.what, T::KIND.example)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        v.parse().map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        Err(Self::bare(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        Err(Self::bare(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Err(Self::bare(v))
    }
}

serde_as_text!(Time);
serde_as_text!(Rate);
serde_as_text!(Bytes);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_exactly() {
        assert_eq!("1.2us".parse::<Time>().unwrap(), Time(1_200_000));
        assert_eq!("20ms".parse::<Time>().unwrap(), Time(20 * PS_PER_MS));
        assert_eq!("0.5s".parse::<Time>().unwrap(), Time(PS_PER_S / 2));
        assert_eq!("10Gbps".parse::<Rate>().unwrap(), Rate(10_000_000_000));
        assert_eq!("700Mbps".parse::<Rate>().unwrap(), Rate(700_000_000));
        assert_eq!("16KB".parse::<Bytes>().unwrap(), Bytes(16_000));
        assert_eq!("64KiB".parse::<Bytes>().unwrap(), Bytes(65_536));
        assert_eq!("1500B".parse::<Bytes>().unwrap(), Bytes(1500));
    }

    #[test]
    fn rejects_missing_or_unknown_units() {
        for bad in ["10", "10Gbs", "", "us", "1.2.3us", "-5us", "0.5ps"] {
            assert!(bad.parse::<Time>().is_err(), "{bad}");
        }
        let e = "10Gbs".parse::<Rate>().unwrap_err();
        assert!(e.to_string().contains("'10Gbs' is not a rate"), "{e}");
    }

    #[test]
    fn overflow_says_so_and_names_the_largest_value() {
        // u64::MAX ps is 18 446 744.07 s.
        assert_eq!("18446744s".parse::<Time>().unwrap(), Time(18_446_744 * PS_PER_S));
        let e = "1000000000000s".parse::<Time>().unwrap_err();
        assert_eq!(e.to_string(), "'1000000000000s' is too large for a duration: the largest is 18446744s");
        let e = "99999999999999999999999999999999999999999Gbps".parse::<Rate>().unwrap_err();
        assert!(matches!(e, UnitError::Overflow { .. }), "{e}");
        assert!(e.to_string().ends_with("the largest is 18446744Tbps"), "{e}");
    }

    #[test]
    fn a_bare_number_is_an_error_asking_for_a_unit() {
        let e = serde_json::from_str::<Time>("10").unwrap_err().to_string();
        assert!(e.starts_with("10 has no unit: a duration is written with one of ps, ns, us, ms, s"), "{e}");
        let e = serde_json::from_str::<Bytes>("1.5").unwrap_err().to_string();
        assert!(e.starts_with("1.5 has no unit: a size"), "{e}");
        assert_eq!(serde_json::from_str::<Rate>("\"10Gbps\"").unwrap(), Rate::from_gbps(10));
    }

    #[test]
    fn display_round_trips() {
        for t in ["50us", "1200ns", "20ms", "3s", "0ps"] {
            assert_eq!(t.parse::<Time>().unwrap().to_string(), t);
        }
        assert_eq!(Rate::from_gbps(20).to_string(), "20Gbps");
        assert_eq!(Bytes(16_000).to_string(), "16KB");
    }

    #[test]
    fn serialization_delay_is_exact() {
        assert_eq!(Rate::from_gbps(10).serialization(1500), Time(1_200_000));
        assert_eq!(Rate::from_gbps(100).serialization(1000), Time(80_000));
        // 1 byte at 3 bps: 8/3 s, rounded up.
        assert_eq!(Rate(3).serialization(1), Time(2_666_666_666_667));
        // Past 64 bits (3 MB · 8e12 bits·ps): the 128-bit path, still exact.
        assert_eq!(Rate::from_gbps(100).serialization(3_000_000), Time(240_000_000));
        assert_eq!(Rate(7).serialization(3_000_000), Time((3_000_000u128 * 8_000_000_000_000).div_ceil(7) as u64));
        assert_eq!(Rate::of(1500, Time(1_200_000)), Rate::from_gbps(10));
    }
}
