//! What TIMELY's gradient runs on (`cc.signal`): the RTT it measures (the paper), or a function
//! of the round-trip hop-by-hop queue vector `q₁…q₂ₖ` that in-band telemetry reports (Arslan
//! and Voss, "Moving Beyond Proxy Signals", CS244 2019, §3.2), or the queues' true occupancy
//! (Fang and Orbay's "oracle" TIMELY, CS244 2016). The algorithm is unchanged; only its input
//! changes.
//!
//! Every signal other than `rtt` is a delay in the RTT's terms: the connection's unloaded round
//! trip (`base`) plus `f(q)`, with each `qᵢ` a queue's bytes over its link rate. `sum` is then
//! the RTT with no measurement noise and no host delay, so TIMELY's thresholds keep their
//! meaning across signals.

use crate::Time;
use serde::{Deserialize, Serialize};

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// The measured RTT sample, noise included (TIMELY §3.1).
    #[default]
    Rtt,
    /// `Σ qᵢ`: the queueing TIMELY's RTT estimates ("SUM / TIMELY").
    Sum,
    /// `max qᵢ`: the bottleneck's queue only.
    Max,
    /// `√(Σ qᵢ²)`: long queues weigh more without ignoring short ones.
    SumSqu,
    /// `1{∃ qᵢ > threshold}`, the ECN-like one-bit signal, as a delay: `threshold` when set,
    /// else 0 (the step is the size of the threshold, as `max` would show it crossing there).
    Ind,
    /// `Σ qᵢ` of the path's queues as they are at the completion, not as the packets saw them.
    Oracle,
}

impl Signal {
    /// Whether the signal needs the queue vector (and so in-band telemetry).
    pub fn uses_queues(self) -> bool {
        self != Signal::Rtt
    }

    /// What a controller fed this signal (with the `ind` signal's `threshold`) needs: the
    /// signal itself, and in-band telemetry for a queue signal.
    pub fn needs(self, threshold: Time) -> crate::Needs {
        crate::Needs { int: self.uses_queues(), delay: true, signal: self, signal_threshold: threshold, ..crate::Needs::default() }
    }

    /// The gradient's input for a round trip of unloaded delay `base` whose hops queued
    /// `queues`; `rtt` for [`Signal::Rtt`].
    pub fn value(self, rtt: Time, base: Time, queues: &[Time], threshold: Time) -> Time {
        let ps = || queues.iter().map(|q| q.ps());
        let f = match self {
            Signal::Rtt => return rtt,
            Signal::Sum | Signal::Oracle => ps().sum(),
            Signal::Max => ps().max().unwrap_or(0),
            Signal::SumSqu => ps().map(|q| (q as f64) * (q as f64)).sum::<f64>().sqrt().round() as u64,
            Signal::Ind => {
                if queues.iter().any(|&q| q > threshold) {
                    threshold.ps()
                } else {
                    0
                }
            }
        };
        base + Time(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_of_a_queue_vector() {
        let us = Time::from_us;
        let base = us(10);
        let q = [us(3), Time::ZERO, us(4), us(1)];
        assert_eq!(Signal::Rtt.value(us(99), base, &q, us(2)), us(99));
        assert_eq!(Signal::Sum.value(us(99), base, &q, us(2)), us(18));
        assert_eq!(Signal::Oracle.value(us(99), base, &q, us(2)), us(18));
        assert_eq!(Signal::Max.value(us(99), base, &q, us(2)), us(14));
        // √(9 + 16 + 1) = 5.099 us.
        assert_eq!(Signal::SumSqu.value(us(99), base, &q, us(2)), base + Time(5_099_020));
        assert_eq!(Signal::Ind.value(us(99), base, &q, us(2)), us(12));
        assert_eq!(Signal::Ind.value(us(99), base, &q, us(5)), us(10));
        assert_eq!(Signal::Max.value(us(99), base, &[], us(5)), us(10));
    }
}
