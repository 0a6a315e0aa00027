//! HPCC (Li et al., SIGCOMM 2019, Algorithm 1; shared reference algorithms.md §6.2–6.3).
//!
//! A window controller driven by in-band telemetry, on the message transport with an ACK per
//! packet: each ACK echoes the INT records its data packet collected, one per hop. Against the
//! records the previous ACK brought, each hop's utilisation is
//! `uᵢ = min(qlen, qlen_prev)/(Bᵢ·T) + txRate/Bᵢ`; the largest, smoothed over `τ/T` (`τ` its
//! records' interval, at most `T`), is `U`. Then `W = W_c/(U/η) + W_AI` when `U ≥ η` or after
//! `max_stage` additive steps, else `W = W_c + W_AI`. The reference window `W_c` and the stage
//! are committed once per round trip — on the first ACK of data sent after the last commit —
//! and with `fast_react` every ACK applies its `W` in between. The connection keeps at most `W`
//! bytes in flight and paces at `W/T`.
//!
//! Where the paper is silent this follows the HPCC simulator's choices (reference §6.3), each a
//! named option: `max_stage = 0` (its authors: what the paper's simulations used), fast react,
//! `W_AI` set as a rate (`rate_ai`, `W_AI = rate_ai·T`; its published runs use 50 Mbps), `T` the
//! topology's largest base RTT, the first ACK only storing the records and `U` starting at 1,
//! a floor `min_rate` on `W/T`. A hop whose two records carry the same timestamp is skipped
//! (the simulator would divide by zero). A change of hop count (a new path) stores the new
//! records and waits for the next ACK.

use crate::registry::{Algorithm, Controller, Kind, Needs, Path};
use crate::int::IntHop;
use crate::{Completion, Metrics, ParamError, Rate, RateController, Time};
use serde::{Deserialize, Serialize};

/// The most hops HPCC keeps records of (the INT header's limit in the HPCC simulator is 5).
pub const MAX_HOPS: usize = 8;

/// Which base RTT `T` a connection uses.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum BaseRtt {
    /// The topology's largest unloaded round trip (the HPCC simulator's `GLOBAL_T = 1`).
    #[default]
    Max,
    /// The connection's own path's unloaded round trip.
    Path,
    /// A fixed value.
    Fixed(Time),
}

impl Serialize for BaseRtt {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            BaseRtt::Max => s.serialize_str("max"),
            BaseRtt::Path => s.serialize_str("path"),
            BaseRtt::Fixed(t) => t.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for BaseRtt {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<BaseRtt, D::Error> {
        let text = String::deserialize(d)?;
        match text.as_str() {
            "max" => Ok(BaseRtt::Max),
            "path" => Ok(BaseRtt::Path),
            t => t.parse().map(BaseRtt::Fixed).map_err(|e| serde::de::Error::custom(format!("\"max\", \"path\" or a time: {e}"))),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HpccParams {
    /// Target utilisation η (paper: 95 %; its authors' later runs use 99 %).
    pub eta: f64,
    /// Additive steps before a multiplicative one is forced (paper text: 5; the simulations,
    /// per its authors: 0).
    pub max_stage: u32,
    /// The additive increase as a rate: `W_AI = rate_ai · T`.
    pub rate_ai: Rate,
    /// Apply each ACK's window at once, committing the reference window once per RTT.
    pub fast_react: bool,
    pub base_rtt: BaseRtt,
    /// Floor on `W/T`.
    pub min_rate: Rate,
}

impl Default for HpccParams {
    fn default() -> Self {
        HpccParams { eta: 0.95, max_stage: 0, rate_ai: Rate::from_mbps(50), fast_react: true, base_rtt: BaseRtt::Max, min_rate: Rate::from_mbps(100) }
    }
}

impl HpccParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return Err(ParamError::new("eta", self.eta, "a target utilisation in (0, 1]"));
        }
        if self.min_rate == Rate::ZERO {
            return Err(ParamError::new("min_rate", self.min_rate, "must be positive"));
        }
        if self.base_rtt == BaseRtt::Fixed(Time::ZERO) {
            return Err(ParamError::new("base_rtt", Time::ZERO, "\"max\", \"path\" or a positive time"));
        }
        Ok(())
    }
}

impl Algorithm for HpccParams {
    const KIND: Kind = Kind::Rate;
    /// HPCC acknowledges every packet, and its window alone limits what is in flight
    /// (reference §6.3); it reads every hop's telemetry.
    fn needs(&self) -> Needs {
        Needs { int: true, ack_per_packet: true, rate_limiter: true, base_rtt: Some(self.base_rtt), ..Needs::default() }
    }
    fn validate(&self) -> Result<(), ParamError> {
        HpccParams::validate(self)
    }
    fn build(&self, path: &Path) -> Controller {
        let base_rtt = match self.base_rtt {
            BaseRtt::Max => path.max_base_rtt,
            BaseRtt::Path => path.base_rtt,
            BaseRtt::Fixed(t) => t,
        };
        Controller::Rate(Box::new(Hpcc::new(self.clone(), path.line_rate, base_rtt)))
    }
}

#[derive(Clone, Debug)]
pub struct Hpcc {
    pub params: HpccParams,
    line_rate: Rate,
    base_rtt: Time,
    /// `T`, in seconds.
    t: f64,
    /// Line rate, bytes per second.
    line: f64,
    /// Window and reference window, bytes.
    w: f64,
    wc: f64,
    u: f64,
    inc_stage: u32,
    /// Bytes sent when the reference window was last committed; `None` before the first ACK.
    last_update_seq: Option<u64>,
    /// The records the previous ACK brought.
    hops: [IntHop; MAX_HOPS],
    n_hops: usize,
}

impl Hpcc {
    /// A connection at `line_rate` with base RTT `t`, starting at `W_init = line_rate · T`.
    pub fn new(params: HpccParams, line_rate: Rate, base_rtt: Time) -> Hpcc {
        let t = base_rtt.as_secs();
        let line = line_rate.bps() as f64 / 8.0;
        let w = line * t;
        Hpcc { params, line_rate, base_rtt, t, line, w, wc: w, u: 1.0, inc_stage: 0, last_update_seq: None, hops: [IntHop::default(); MAX_HOPS], n_hops: 0 }
    }

    /// The smoothed utilisation `U`.
    pub fn utilization(&self) -> f64 {
        self.u
    }

    /// `MeasureInflight`: updates `U` from `hops` against the stored records.
    fn measure(&mut self, hops: &[IntHop]) {
        let mut worst: Option<(f64, f64)> = None;
        for (now, prev) in hops.iter().zip(&self.hops) {
            let tau = now.ts_delta(prev).as_secs();
            if tau == 0.0 {
                continue;
            }
            let b = now.rate.bps() as f64 / 8.0;
            let tx_rate = now.tx_delta(prev) as f64 / tau;
            let q = now.queue_bytes().min(prev.queue_bytes()) as f64;
            let u = q / (b * self.t) + tx_rate / b;
            if worst.is_none_or(|(w, _)| u > w) {
                worst = Some((u, tau));
            }
        }
        if let Some((u, tau)) = worst {
            let tau = tau.min(self.t);
            self.u = (1.0 - tau / self.t) * self.u + tau / self.t * u;
        }
    }

    /// `ComputeWind`: the window for `U`, committing it as the reference when `commit`.
    fn compute_window(&mut self, commit: bool) -> f64 {
        let p = &self.params;
        let w_ai = p.rate_ai.bps() as f64 / 8.0 * self.t;
        let multiplicative = self.u >= p.eta || self.inc_stage >= p.max_stage;
        let w = if multiplicative { self.wc / (self.u / p.eta) + w_ai } else { self.wc + w_ai };
        let w = w.clamp(p.min_rate.bps() as f64 / 8.0 * self.t, self.line * self.t);
        if commit {
            self.inc_stage = if multiplicative { 0 } else { self.inc_stage + 1 };
            self.wc = w;
        }
        w
    }

    /// Keeps `hops` (at most `MAX_HOPS`) as the records the next ACK is measured against.
    fn store(&mut self, hops: &[IntHop]) {
        self.n_hops = hops.len();
        self.hops[..self.n_hops].copy_from_slice(hops);
    }
}

impl RateController for Hpcc {
    /// `NewAck`, on each acknowledged packet (segment) with the records it echoes.
    fn on_completion(&mut self, c: &Completion) {
        let hops = &c.int[..c.int.len().min(MAX_HOPS)];
        let Some(last) = self.last_update_seq else {
            self.last_update_seq = Some(c.snd_nxt);
            return self.store(hops);
        };
        if hops.len() != self.n_hops {
            return self.store(hops);
        }
        self.measure(hops);
        let commit = c.snd_una > last;
        let w = self.compute_window(commit);
        if commit {
            self.last_update_seq = Some(c.snd_nxt);
        }
        if commit || self.params.fast_react {
            self.w = w;
        }
        self.store(hops);
    }

    /// `R = W/T`.
    fn rate(&self) -> Rate {
        Rate((self.w * 8.0 / self.t) as u64)
    }

    fn window(&self) -> Option<u64> {
        Some(self.w as u64)
    }

    fn metrics(&self) -> Metrics {
        Metrics { rate: Some(self.rate()), cwnd_bytes: self.window(), ..Metrics::default() }
    }

    /// Back to `W_init` with no stored records.
    fn restart(&mut self) {
        *self = Hpcc::new(self.params.clone(), self.line_rate, self.base_rtt);
    }
}
