//! TCP Vegas (Brakmo & Peterson, SIGCOMM 1994 / JSAC 1995), with Linux `tcp_vegas.c`'s
//! mechanics (reference algorithms.md §8). The baseline the CS244'16 TIMELY reproduction
//! compared against.
//!
//! - **baseRTT** is the smallest RTT sample seen (Linux: a running minimum of every sample).
//! - **Once per RTT** (when the ACKs reach what was sent at the start of the previous round,
//!   Linux `beg_snd_nxt`), with the **smallest** sample of that round as its RTT (Linux: the
//!   minimum filters delayed ACKs' inflation), Vegas computes how many packets it keeps queued:
//!   `diff = cwnd · (rtt − baseRTT) / rtt` in packets (the paper: `(Expected − Actual)·baseRTT`);
//!   `diff_denominator = "base_rtt"` divides by baseRTT instead, as Linux does. Then, out of slow
//!   start: `cwnd += 1` packet if `diff < alpha`, `−= 1` if `diff > beta`, else hold.
//! - **Slow start** grows as Reno's on every ACK and ends when `diff > gamma`: the window drops
//!   to what the path holds, `min(cwnd, cwnd·baseRTT/rtt + 1)` (Linux), and `ssthresh` below it.
//! - A round with **fewer than 3 samples** (Linux: "we can't do Vegas calculations") behaves as
//!   Reno for that round; **losses** are Reno's (RFC 5681), and the window floor is `min_cwnd`.
//!
//! Defaults are the paper's α = 1, β = 3, γ = 1 packets with `diff` over the round's RTT;
//! Linux (and ns-3, which CS244'16 ran) use α = 2, β = 4 and divide by baseRTT.

use crate::registry::{Algorithm, Controller, Kind, Path};
use crate::reno::Reno;
use crate::{AckEvent, Loss, Metrics, ParamError, RenoParams, Time, WindowController};
use serde::{Deserialize, Serialize};

/// What `diff`, the packets Vegas estimates it keeps queued, is divided by.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiffDenominator {
    /// The round's RTT: `(Expected − Actual)·baseRTT`, the paper's definition.
    Rtt,
    /// baseRTT, as Linux `tcp_vegas.c` computes it.
    BaseRtt,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VegasParams {
    /// Below this many queued packets the window grows by one packet per RTT.
    pub alpha: f64,
    /// Above this many it shrinks by one packet per RTT.
    pub beta: f64,
    /// Above this many slow start ends.
    pub gamma: f64,
    pub diff_denominator: DiffDenominator,
    /// Initial window and floor in segments, as Reno's.
    pub init_cwnd: u32,
    pub min_cwnd: u32,
}

impl Default for VegasParams {
    fn default() -> Self {
        let reno = RenoParams::default();
        VegasParams { alpha: 1.0, beta: 3.0, gamma: 1.0, diff_denominator: DiffDenominator::Rtt, init_cwnd: reno.init_cwnd, min_cwnd: reno.min_cwnd }
    }
}

impl VegasParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.alpha.is_finite() && self.alpha >= 0.0) {
            return Err(ParamError::new("alpha", self.alpha, "a finite number of packets ≥ 0"));
        }
        if !(self.beta.is_finite() && self.beta >= self.alpha) {
            return Err(ParamError::new("beta", self.beta, format!("a finite number of packets ≥ alpha ({})", self.alpha)));
        }
        if !(self.gamma.is_finite() && self.gamma >= 0.0) {
            return Err(ParamError::new("gamma", self.gamma, "a finite number of packets ≥ 0"));
        }
        RenoParams { init_cwnd: self.init_cwnd, min_cwnd: self.min_cwnd }.validate()
    }
}

impl Algorithm for VegasParams {
    const KIND: Kind = Kind::Window;
    fn validate(&self) -> Result<(), ParamError> {
        VegasParams::validate(self)
    }
    fn build(&self, path: &Path) -> Controller {
        Controller::Window(Box::new(Vegas::new(self.clone(), path.mss)))
    }
}

#[derive(Clone, Debug)]
pub struct Vegas {
    pub params: VegasParams,
    /// The window, ssthresh and loss response.
    pub reno: Reno,
    /// Smallest RTT ever sampled (`Time::MAX`: none yet).
    pub base_rtt: Time,
    /// Smallest sample of this round, and how many it had.
    min_rtt: Time,
    samples: u32,
    /// The round ends when `snd_una` reaches this (bytes).
    round_end: u64,
}

/// Samples a round needs before Vegas acts on it (Linux: more than 2).
const MIN_SAMPLES: u32 = 3;

impl Vegas {
    pub fn new(params: VegasParams, mss: u64) -> Vegas {
        let reno = Reno::new(RenoParams { init_cwnd: params.init_cwnd, min_cwnd: params.min_cwnd }, mss);
        Vegas { params, reno, base_rtt: Time::MAX, min_rtt: Time::MAX, samples: 0, round_end: 0 }
    }

    /// Packets Vegas estimates it keeps in the network's queues, from the round's RTT.
    pub fn diff(&self, rtt: Time) -> f64 {
        let cwnd = self.reno.cwnd / self.reno.mss;
        let (rtt_ps, base_ps) = (rtt.ps() as f64, self.base_rtt.ps() as f64);
        let denominator = match self.params.diff_denominator {
            DiffDenominator::Rtt => rtt_ps,
            DiffDenominator::BaseRtt => base_ps,
        };
        cwnd * (rtt_ps - base_ps) / denominator
    }

    fn in_slow_start(&self) -> bool {
        self.reno.cwnd < self.reno.ssthresh
    }

    /// The once-per-round decision on the round's smallest RTT.
    fn end_of_round(&mut self, rtt: Time) {
        let mss = self.reno.mss;
        let diff = self.diff(rtt);
        if self.in_slow_start() {
            if diff > self.params.gamma {
                let fits = (self.reno.cwnd / mss) * self.base_rtt.ps() as f64 / rtt.ps() as f64 + 1.0;
                self.reno.cwnd = self.reno.cwnd.min(fits.floor() * mss);
                self.reno.ssthresh = self.reno.cwnd - mss;
            }
        } else if diff > self.params.beta {
            self.reno.cwnd -= mss;
            self.reno.ssthresh = self.reno.ssthresh.min(self.reno.cwnd - mss);
        } else if diff < self.params.alpha {
            self.reno.cwnd += mss;
        }
        self.reno.cwnd = self.reno.cwnd.max(self.reno.floor());
    }
}

impl WindowController for Vegas {
    fn on_ack(&mut self, a: &AckEvent) {
        if let Some(rtt) = a.rtt {
            self.base_rtt = self.base_rtt.min(rtt);
            self.min_rtt = self.min_rtt.min(rtt);
            self.samples += 1;
        }
        if a.snd_una >= self.round_end {
            self.round_end = a.snd_nxt;
            if self.samples >= MIN_SAMPLES {
                if !a.in_recovery {
                    self.end_of_round(self.min_rtt);
                }
            } else if !a.in_recovery && a.cwnd_limited {
                self.reno.grow(a.acked_bytes);
            }
            self.min_rtt = Time::MAX;
            self.samples = 0;
        } else if self.in_slow_start() && !a.in_recovery && a.cwnd_limited {
            self.reno.grow(a.acked_bytes);
        }
    }

    fn on_loss(&mut self, loss: Loss, flight_bytes: u64, now: Time) {
        self.reno.on_loss(loss, flight_bytes, now);
    }

    fn cwnd(&self) -> u64 {
        self.reno.cwnd()
    }

    fn metrics(&self) -> Metrics {
        self.reno.metrics()
    }
}
