//! In-band network telemetry (INT) as HPCC carries it (Li et al., SIGCOMM 2019, §4.1; shared
//! reference algorithms.md §6.1, after the HPCC simulator's `int-header.h`).
//!
//! At dequeue of a packet each switch pushes one record for its egress port: the egress
//! timestamp (24 bits, ns), the port's cumulative transmitted bytes (20 bits, in units of
//! 128 B × `multi`), its queue (17 bits, in units of 80 B × `multi`) and its line rate (3 bits
//! on the wire). `multi = max(1, ⌈rate / 25 Gbps⌉)` keeps the counters' ranges fit for fast
//! links (the simulator's `INT_MULTI = bw / 25G`). An INT header is 2 bytes (hop count) plus
//! 8 bytes per hop: 42 bytes for 5 hops.
//!
//! The counters wrap, as on the wire: a reader takes differences modulo 2^width
//! ([`IntHop::ts_delta`], [`IntHop::tx_delta`]), exact while consecutive readings of one hop are
//! less than one wrap apart (16.8 ms for the timestamp; 2^20 × 512 B ≈ 43 ms at 100 Gbps). The
//! queue saturates at its largest code instead of wrapping. The line rate is kept exactly: the
//! wire's 3-bit code names only 25–400 Gbps, and rttlab also simulates other speeds.

use crate::{Rate, Time};

/// Bytes of the INT header before the hop records (the hop count).
pub const HEADER_BYTES: u32 = 2;
/// Bytes of one hop's record on the wire (24 + 20 + 17 + 3 bits).
pub const HOP_BYTES: u32 = 8;

const TS_BITS: u32 = 24;
const TX_BITS: u32 = 20;
const QLEN_BITS: u32 = 17;
const TX_UNIT: u64 = 128;
const QLEN_UNIT: u64 = 80;

/// One hop's record, in its wire encoding.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// Egress timestamp, ns modulo 2^24.
    pub ts: u32,
    /// Cumulative bytes sent by the port before this packet, in units of `128·multi` B,
    /// modulo 2^20.
    pub tx: u32,
    /// The port's queue after this packet left, in units of `80·multi` B, saturating at
    /// 2^17 − 1.
    pub qlen: u32,
    /// The port's line rate.
    pub rate: Rate,
}

impl IntHop {
    /// The record a port of line rate `rate` writes at `now`, having sent `tx_bytes` in all
    /// and holding `queue_bytes`.
    pub fn encode(now: Time, tx_bytes: u64, queue_bytes: u64, rate: Rate) -> IntHop {
        let m = multi(rate);
        IntHop {
            ts: ((now.ps() / 1_000) & mask(TS_BITS)) as u32,
            tx: ((tx_bytes / (TX_UNIT * m)) & mask(TX_BITS)) as u32,
            qlen: (queue_bytes / (QLEN_UNIT * m)).min(mask(QLEN_BITS)) as u32,
            rate,
        }
    }

    /// The queue in bytes (to the encoding's resolution).
    pub fn queue_bytes(&self) -> u64 {
        self.qlen as u64 * QLEN_UNIT * multi(self.rate)
    }

    /// The queue as a delay: its bytes at the line rate.
    pub fn queue_delay(&self) -> Time {
        self.rate.serialization(self.queue_bytes())
    }

    /// Time from the `earlier` record of the same hop to this one, modulo the counter's wrap.
    pub fn ts_delta(&self, earlier: &IntHop) -> Time {
        Time::from_ns((self.ts.wrapping_sub(earlier.ts) as u64) & mask(TS_BITS))
    }

    /// Bytes the hop sent from the `earlier` record to this one, modulo the counter's wrap.
    pub fn tx_delta(&self, earlier: &IntHop) -> u64 {
        ((self.tx.wrapping_sub(earlier.tx) as u64) & mask(TX_BITS)) * TX_UNIT * multi(self.rate)
    }
}

/// The counters' unit multiplier of a port at `rate`: `max(1, ⌈rate / 25 Gbps⌉)`.
pub fn multi(rate: Rate) -> u64 {
    rate.bps().div_ceil(25_000_000_000).max(1)
}

fn mask(bits: u32) -> u64 {
    (1 << bits) - 1
}

/// Bytes an INT header with `hops` records adds to a packet.
pub fn header_bytes(hops: usize) -> u32 {
    HEADER_BYTES + HOP_BYTES * hops as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_units_and_multiplier() {
        let g100 = Rate::from_gbps(100);
        assert_eq!(multi(g100), 4);
        assert_eq!(multi(Rate::from_gbps(10)), 1);
        assert_eq!(multi(Rate::from_gbps(400)), 16);
        // 100 Gbps: tx in 512 B units, queue in 320 B units.
        let h = IntHop::encode(Time::from_ns(1_234), 5_120, 32_000, g100);
        assert_eq!((h.ts, h.tx, h.qlen), (1_234, 10, 100));
        assert_eq!(h.queue_bytes(), 32_000);
        // 32 000 B at 100 Gbps: 2.56 us.
        assert_eq!(h.queue_delay(), Time::from_ns(2_560));
        assert_eq!(header_bytes(5), 42);
    }

    #[test]
    fn counters_wrap_and_queue_saturates() {
        let r = Rate::from_gbps(10);
        // The timestamp wraps at 2^24 ns = 16.777216 ms: 1 us before and 2 us after.
        let a = IntHop::encode(Time::from_ns((1 << 24) - 1_000), 0, 0, r);
        let b = IntHop::encode(Time::from_ns((1 << 24) + 2_000), 0, 0, r);
        assert_eq!(b.ts_delta(&a), Time::from_ns(3_000));
        // tx wraps at 2^20 units of 128 B.
        let wrap = (1u64 << 20) * 128;
        let a = IntHop::encode(Time::ZERO, wrap - 1_280, 0, r);
        let b = IntHop::encode(Time::ZERO, wrap + 2_560, 0, r);
        assert_eq!(b.tx_delta(&a), 3_840);
        let full = IntHop::encode(Time::ZERO, 0, u64::MAX / 2, r);
        assert_eq!(full.qlen, (1 << 17) - 1);
    }
}
