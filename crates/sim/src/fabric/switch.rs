//! Switches: a shared buffer, forwarding by ECMP on precomputed routes (`routing`), tail drop at the buffer limit,
//! ECN marking (step or RED) at dequeue or enqueue, and PFC per ingress port and class.

use crate::core::engine::Rng;
use crate::fabric::port::ClassQueue;
use crate::scenario::{EcnConfig, MarkAt, QueueLen, Spacing};
use rttlab_cc::Rate;

pub struct Switch {
    pub node: u32,
    /// Bytes of the buffer in use, headroom included.
    pub used: u64,
    /// Bytes held in ingress headroom, and the headroom every port reserves in all: the shared
    /// buffer is `buffer − reserved`, of which `used − headroom_used` is in use.
    pub headroom_used: u64,
    pub reserved: u64,
    pub rng: Rng,
    /// Its choices among equal-cost ports, in the modes where a switch chooses.
    pub chooser: crate::fabric::routing::Chooser,
    pub drops: u64,
    pub dropped_payload: u64,
    pub marks: u64,
}

impl Switch {
    /// The dynamic PFC threshold: `alpha` times the shared buffer (`buffer` less every reserve)
    /// not in use (the HPCC simulator's `GetPfcThreshold`, reference §9.1).
    pub(crate) fn dynamic_xoff(&self, alpha: f64, buffer: u64) -> u64 {
        (alpha * (buffer - self.reserved).saturating_sub(self.used - self.headroom_used) as f64) as u64
    }
}

/// What the queues of one switch egress port do, resolved from `[switch]` and its
/// `[[switch.ports]]` overrides; ports share these through an index (`Port::params`).
#[derive(Clone, Debug, PartialEq)]
pub struct QueueParams {
    /// (XOFF, XON) in bytes per class of this port's ingress; `None` without PFC.
    pub pfc: Option<(u64, u64)>,
    /// PFC headroom of this port's ingress, per class.
    pub pfc_headroom: u64,
    pub ecn: Option<Red>,
    pub limit: Option<QueueLen>,
    /// Dynamic threshold factor of the shared buffer.
    pub alpha: Option<f64>,
    /// Packets of the queue in the transmit ring, unseen by marking and the limit.
    pub device_queue: u64,
}

/// ECN marking of a class queue: the RED curve (a step when `kmin == kmax`) in bytes or
/// packets, gentle or not, with its spacing of marks.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Red {
    pub kmin: u64,
    pub kmax: u64,
    pub pmax: f64,
    pub packets: bool,
    pub gentle: bool,
    pub spacing: Spacing,
    pub mark_at: MarkAt,
    /// The thresholds are for a port of this rate (`EcnConfig::scale_rate`).
    pub scale_rate: Option<Rate>,
}

impl Red {
    pub fn new(e: &EcnConfig) -> Red {
        let (kmin, kmax) = e.thresholds();
        Red {
            kmin: kmin.amount(),
            kmax: kmax.amount(),
            pmax: e.pmax,
            packets: kmin.packets(),
            gentle: e.gentle,
            spacing: e.spacing,
            mark_at: e.mark_at,
            scale_rate: e.scale_rate,
        }
    }

    /// The curve for a port of `rate`, if its thresholds scale with the rate.
    pub fn scaled_for(&self, rate: Rate) -> Option<Red> {
        let at = self.scale_rate?;
        let scale = |k: u64| (k as u128 * rate.bps() as u128 / at.bps() as u128) as u64;
        Some(Red { kmin: scale(self.kmin), kmax: scale(self.kmax), scale_rate: None, ..*self })
    }

    /// RED's marking probability for a queue of `q` (algorithms.md §5.1; Floyd and Jacobson
    /// 1993): 0 up to Kmin, rising linearly to Pmax at Kmax, then 1 — or, gentle, rising on
    /// linearly to 1 at 2·Kmax. With Kmin = Kmax = K it is DCTCP's step: mark when the queue
    /// exceeds K (algorithms.md §4.1).
    pub fn curve(&self, q: u64) -> f64 {
        if q <= self.kmin {
            0.0
        } else if q <= self.kmax {
            self.pmax * (q - self.kmin) as f64 / (self.kmax - self.kmin) as f64
        } else if self.gentle && q < 2 * self.kmax {
            self.pmax + (1.0 - self.pmax) * (q - self.kmax) as f64 / self.kmax as f64
        } else {
            1.0
        }
    }
}

/// A class queue's RED spacing state (ns-2 `red.cc` `count` and `old`): packets since the last
/// mark while the queue is above Kmin.
#[derive(Copy, Clone, Debug, Default)]
pub struct RedState {
    count: u32,
    above: bool,
}

impl RedState {
    /// Whether to mark the next packet at a queue of `q`, drawing from `uniform` when the
    /// probability is strictly between 0 and 1 (Floyd and Jacobson §7; `Spacing` says which
    /// rule). Above the curve's 1 every packet is marked (a forced mark, which leaves the count
    /// alone); the first packet after the queue rises above Kmin is not marked; any other mark
    /// restarts the count (ns-2 `red.cc`, ns-3 `RedQueueDisc::DoEnqueue`).
    pub fn mark(&mut self, q: u64, red: &Red, uniform: impl FnOnce() -> f64) -> bool {
        let p = red.curve(q);
        let p = match red.spacing {
            _ if p >= 1.0 => return true,
            Spacing::Independent => p,
            _ => {
                self.count = self.count.saturating_add(1);
                if p == 0.0 {
                    self.above = false;
                    return false;
                }
                if !self.above {
                    (self.above, self.count) = (true, 1);
                    return false;
                }
                let cp = self.count as f64 * p;
                match red.spacing {
                    Spacing::Uniform if cp < 1.0 => p / (1.0 - cp),
                    Spacing::Wait if cp < 1.0 => 0.0,
                    Spacing::Wait if cp < 2.0 => p / (2.0 - cp),
                    _ => 1.0,
                }
            }
        };
        let marked = p >= 1.0 || (p > 0.0 && uniform() < p);
        if marked {
            self.count = 0;
        }
        marked
    }
}

/// Whether class queue `q` of an egress takes a packet of `w` bytes under its queue limit and
/// the dynamic threshold, with `free` bytes of the shared buffer left: the queue above the
/// device ring stays within `limit`, and the class queue within `alpha · free` (Choudhury
/// and Hahne 1998).
#[inline]
pub(crate) fn admits(q: &ClassQueue, w: u64, params: &QueueParams, free: u64) -> bool {
    let within_limit = match params.limit {
        None => true,
        Some(QueueLen::Packets(n)) => (q.queue.len() as u64).saturating_sub(params.device_queue) < n,
        Some(QueueLen::Bytes(b)) => q.bytes + w <= b,
    };
    within_limit && params.alpha.is_none_or(|a| (q.bytes + w) as f64 <= a * free as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red(kmin: u64, kmax: u64, pmax: f64, gentle: bool, spacing: Spacing) -> Red {
        Red { kmin, kmax, pmax, packets: false, gentle, spacing, mark_at: MarkAt::Dequeue, scale_rate: None }
    }

    #[test]
    fn red_and_step_marking() {
        let r = red(100, 200, 0.2, false, Spacing::Independent);
        assert_eq!(r.curve(100), 0.0);
        assert!((r.curve(150) - 0.1).abs() < 1e-12);
        assert!((r.curve(200) - 0.2).abs() < 1e-12);
        assert_eq!(r.curve(201), 1.0);
        let step = red(80_000, 80_000, 1.0, false, Spacing::Independent);
        assert_eq!(step.curve(80_000), 0.0);
        assert_eq!(step.curve(80_001), 1.0);
    }

    #[test]
    fn gentle_red_rises_to_one_at_twice_kmax() {
        let r = red(20, 60, 0.02, true, Spacing::Independent);
        assert!((r.curve(60) - 0.02).abs() < 1e-12);
        assert!((r.curve(90) - 0.51).abs() < 1e-12);
        assert!((r.curve(119) - (0.02 + 0.98 * 59.0 / 60.0)).abs() < 1e-12);
        assert_eq!(r.curve(120), 1.0);
    }

    #[test]
    fn spacing_rules() {
        // At p = 0.1 with every draw 0.45, packet k after the queue rose above Kmin has count k
        // (the first, k = 1, is never marked). Uniform spacing marks once 0.1 / (1 − 0.1·k) >
        // 0.45, at k = 8; wait marks nothing until 0.1·k ≥ 1, then once 0.1 / (2 − 0.1·k) >
        // 0.45, at k = 18. A mark restarts the count: 5 uniform marks in 40 packets (8, 16, 24,
        // 32, 40), 2 with wait (18, 36).
        let marks = |spacing| {
            let r = red(0, 10, 1.0, false, spacing);
            let mut st = RedState::default();
            (1..=40).filter(|_| st.mark(1, &r, || 0.45)).count()
        };
        let first = |spacing| {
            let r = red(0, 10, 1.0, false, spacing);
            let mut st = RedState::default();
            (1..=40).position(|_| st.mark(1, &r, || 0.45)).map(|i| i + 1)
        };
        assert_eq!(first(Spacing::Uniform), Some(8));
        assert_eq!(first(Spacing::Wait), Some(18));
        assert_eq!(first(Spacing::Independent), None, "0.45 > 0.1");
        assert_eq!(marks(Spacing::Uniform), 5);
        assert_eq!(marks(Spacing::Wait), 2);
        let r = red(0, 10, 1.0, false, Spacing::Wait);
        let mut st = RedState::default();
        assert!(st.mark(20, &r, || 0.99), "above kmax: forced");
        assert!(!st.mark(0, &r, || 0.0), "at kmin: never");
    }
}
