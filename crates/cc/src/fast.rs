//! FAST* — TCP FAST's equation driving a pacing rate, the TIMELY paper's delay-based baseline
//! (TIMELY §6.1 "Comparison with TCP FAST-like algorithm", Table 1).
//!
//! TCP FAST (Wei, Jin, Low, Hegde) updates its window as
//! `w ← min{2w, (1 − γ)·w + γ·(baseRTT/RTT·w + α)}` with α the packets each flow keeps queued.
//! FAST* converts α to a rate (the paper's "10M/50M/100M") and applies the rule to the rate:
//!
//! `R ← min{2R, (1 − γ)·R + γ·(baseRTT/RTT·R + α)}`
//!
//! The paper gives neither γ nor the cadence; this is the reconstruction of shared reference
//! algorithms.md §7, labelled as such: γ = 0.5 (FAST's usual value), one update per completion
//! event with the same RTT sample TIMELY uses (with 16 KB segments at a few hundred Mbps a
//! connection completes about once per RTT, FAST's own cadence), `baseRTT` the smallest sample
//! the connection has seen (FAST's definition). At equilibrium `R·(1 − baseRTT/RTT) = α`: each
//! connection keeps `α·RTT` bits queued, so throughput and RTT both grow with α.

use crate::registry::{Algorithm, Controller, Kind, Path};
use crate::timely::rate_bounds;
use crate::{Completion, Metrics, ParamError, Rate, RateController, Time};
use serde::{Deserialize, Serialize};

/// FAST*'s parameters; the defaults are the reconstruction above with the paper's smallest α.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FastParams {
    /// FAST's α as a rate: the traffic each connection keeps buffered in the network.
    pub alpha: Rate,
    /// Smoothing weight γ of each update, in (0, 1].
    pub gamma: f64,
    /// Cap on the rate; absent: the NIC line rate.
    pub max_rate: Option<Rate>,
    /// Floor on the rate.
    pub min_rate: Rate,
    /// A new flow's rate; absent: the line rate.
    pub initial_rate: Option<Rate>,
}

impl Default for FastParams {
    fn default() -> Self {
        FastParams { alpha: Rate::from_mbps(10), gamma: 0.5, max_rate: None, min_rate: Rate::from_mbps(10), initial_rate: None }
    }
}

impl FastParams {
    /// Checks the parameters; the error names the field and what is allowed.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.alpha == Rate::ZERO {
            return Err(ParamError::new("alpha", self.alpha, "a positive rate, e.g. \"10Mbps\""));
        }
        if !(self.gamma > 0.0 && self.gamma <= 1.0) {
            return Err(ParamError::new("gamma", self.gamma, "a weight in (0, 1]"));
        }
        if self.min_rate == Rate::ZERO {
            return Err(ParamError::new("min_rate", self.min_rate, "must be positive"));
        }
        crate::timely::check_rate_bounds(self.initial_rate, self.max_rate)?;
        Ok(())
    }
}

impl Algorithm for FastParams {
    const KIND: Kind = Kind::Rate;
    fn validate(&self) -> Result<(), ParamError> {
        FastParams::validate(self)
    }
    fn build(&self, path: &Path) -> Controller {
        Controller::Rate(Box::new(Fast::new(self.clone(), path.line_rate)))
    }
}

#[derive(Clone, Debug)]
pub struct Fast {
    pub params: FastParams,
    rate: f64,
    max_rate: f64,
    /// The rate it starts from (and restarts from after idle, when asked).
    start_rate: f64,
    /// Smallest RTT sample so far (FAST's baseRTT).
    base_rtt: Option<Time>,
}

impl Fast {
    pub fn new(params: FastParams, line_rate: Rate) -> Fast {
        let (rate, max_rate) = rate_bounds(params.initial_rate, params.max_rate, line_rate);
        Fast { params, rate, max_rate, start_rate: rate, base_rtt: None }
    }

    pub fn base_rtt(&self) -> Option<Time> {
        self.base_rtt
    }
}

impl RateController for Fast {
    fn on_completion(&mut self, c: &Completion) {
        // A sample of zero (no queuing at all, pacing delay subtracted) counts as 1 ps so that
        // the ratio stays defined.
        let rtt = c.rtt.max(Time(1));
        let base = self.base_rtt.map_or(rtt, |b| b.min(rtt));
        self.base_rtt = Some(base);
        let p = &self.params;
        let old = self.rate;
        let target = base.ps() as f64 / rtt.ps() as f64 * old + p.alpha.bps() as f64;
        let new = (2.0 * old).min((1.0 - p.gamma) * old + p.gamma * target);
        self.rate = new.min(self.max_rate).max(p.min_rate.bps() as f64);
    }

    fn rate(&self) -> Rate {
        Rate(self.rate as u64)
    }

    fn metrics(&self) -> Metrics {
        Metrics { rate: Some(self.rate()), at_min_rate: Some(self.rate <= self.params.min_rate.bps() as f64), ..Metrics::default() }
    }
    /// Back to the starting rate with a fresh gradient filter.
    fn restart(&mut self) {
        *self = Fast { rate: self.start_rate, base_rtt: None, ..self.clone() };
    }
}
