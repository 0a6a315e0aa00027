//! Patched TIMELY (Zhu et al., "ECN or Delay", CoNEXT 2016; shared reference algorithms.md
//! §2.2). Between the thresholds the gradient no longer picks increase *or* decrease; it weighs
//! an additive increase against a decrease in proportion to the RTT error from a reference:
//!
//! `rate ← δ·(1 − w) + rate·(1 − β·w·(RTT − RTT_ref)/RTT_ref)`, with `w(g) = 0` for
//! `g ≤ −¼`, `2g + ½` for `|g| < ¼`, `1` for `g ≥ ¼`, and `RTT_ref = T_low`.
//!
//! That gives a unique fixed point: all flows at C/N with queue `q* = N·δ·q'/(β·C) + q'`,
//! `q' = C·T_low`. Updates are weighted by `df` as in TIMELY §5 (the fluid model applies them
//! once per `max(Seg/R, minRTT)`), the thresholds and caps are TIMELY's.

use crate::registry::{Advice, Algorithm, Controller, Kind, Needs, Path, Route};
use crate::timely::{
    check_common, check_rate_bounds, check_signal, rate_bounds, settle_rate, update_weight, GradientFilter, RateState, UpdateScaling,
    DEFAULT_SIGNAL_THRESHOLD,
};
use crate::{Completion, Metrics, ParamError, Rate, RateController, Signal, Time};
use serde::{Deserialize, Serialize};

/// Patched TIMELY's parameters; `Default` is Zhu et al.'s (β = 0.008, α = 0.875).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PatchedTimelyParams {
    pub alpha: f64,
    pub beta: f64,
    pub delta: Rate,
    pub t_low: Time,
    pub t_high: Time,
    pub min_rtt: Time,
    /// Reference RTT of the error term; absent: `t_low`.
    pub rtt_ref: Option<Time>,
    pub max_rate: Option<Rate>,
    pub min_rate: Rate,
    pub initial_rate: Option<Rate>,
    pub app_limited_fraction: f64,
    pub update_scaling: UpdateScaling,
    /// As TIMELY's (`TimelyParams::signal`).
    pub signal: Signal,
    pub signal_threshold: Time,
}

impl Default for PatchedTimelyParams {
    fn default() -> Self {
        PatchedTimelyParams {
            alpha: 0.875,
            beta: 0.008,
            delta: Rate::from_mbps(10),
            t_low: Time::from_us(50),
            t_high: Time::from_us(500),
            min_rtt: Time::from_us(20),
            rtt_ref: None,
            max_rate: None,
            min_rate: Rate::from_mbps(10),
            initial_rate: None,
            app_limited_fraction: 0.8,
            update_scaling: UpdateScaling::All,
            signal: Signal::Rtt,
            signal_threshold: DEFAULT_SIGNAL_THRESHOLD,
        }
    }
}

impl PatchedTimelyParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        check_common(self.alpha, self.beta, self.t_low, self.t_high, self.min_rtt, self.min_rate)?;
        check_rate_bounds(self.initial_rate, self.max_rate)?;
        check_signal(self.signal, self.signal_threshold)?;
        if self.rtt_ref.unwrap_or(self.t_low) == Time::ZERO {
            return Err(ParamError::new("rtt_ref", self.rtt_ref.unwrap_or(self.t_low), "the reference RTT (rtt_ref, else t_low) must be positive"));
        }
        Ok(())
    }
}

impl Algorithm for PatchedTimelyParams {
    const KIND: Kind = Kind::Rate;
    fn needs(&self) -> Needs {
        self.signal.needs(self.signal_threshold)
    }
    fn validate(&self) -> Result<(), ParamError> {
        PatchedTimelyParams::validate(self)
    }
    fn build(&self, path: &Path) -> Controller {
        Controller::Rate(Box::new(PatchedTimely::new(self.clone(), path.line_rate)))
    }
    fn advise(&self, route: &Route) -> Vec<Advice> {
        crate::timely::advise_t_high(self.t_high, route)
    }
}

/// The weight of the decrease, `w(g)` (algorithms.md §2.2).
pub fn decrease_weight(g: f64) -> f64 {
    if g <= -0.25 {
        0.0
    } else if g >= 0.25 {
        1.0
    } else {
        2.0 * g + 0.5
    }
}

#[derive(Clone, Debug)]
pub struct PatchedTimely {
    pub params: PatchedTimelyParams,
    rate: f64,
    max_rate: f64,
    /// The rate it starts from (and restarts from after idle, when asked).
    start_rate: f64,
    filter: GradientFilter,
    last_update: Option<Time>,
    /// The last sample was above `t_low`, past which TIMELY no longer increases regardless
    /// of the gradient (§4.3): PLB's signal for it.
    over_target: bool,
}

impl PatchedTimely {
    pub fn new(params: PatchedTimelyParams, line_rate: Rate) -> PatchedTimely {
        let (rate, max_rate) = rate_bounds(params.initial_rate, params.max_rate, line_rate);
        PatchedTimely { params, rate, max_rate, start_rate: rate, filter: GradientFilter::default(), last_update: None, over_target: false }
    }

    /// The controller in state `st` (its `hai_count` unused).
    pub fn resume(params: PatchedTimelyParams, line_rate: Rate, st: RateState) -> PatchedTimely {
        PatchedTimely { rate: st.rate_bps, filter: st.filter, last_update: st.last_update, ..PatchedTimely::new(params, line_rate) }
    }

    pub fn state(&self) -> RateState {
        RateState { rate_bps: self.rate, filter: self.filter.clone(), hai_count: 0, last_update: self.last_update }
    }
}

impl RateController for PatchedTimely {
    fn on_completion(&mut self, c: &Completion) {
        self.over_target = c.rtt > self.params.t_low;
        let p = &self.params;
        let (_, g) = self.filter.update(c.rtt, p.alpha, p.min_rtt);
        let df = update_weight(c.now, self.last_update, p.min_rtt);
        self.last_update = Some(c.now);
        let (df_increase, df_decrease) = match p.update_scaling {
            UpdateScaling::All => (df, df),
            UpdateScaling::Snippet => (df, 1.0),
            UpdateScaling::None => (1.0, 1.0),
        };
        let rtt = c.rtt.ps() as f64;
        let delta = p.delta.bps() as f64;
        let old = self.rate;
        let new = if c.rtt < p.t_low {
            old + delta * df_increase
        } else if c.rtt > p.t_high {
            old * (1.0 - df_increase * p.beta * (1.0 - p.t_high.ps() as f64 / rtt))
        } else {
            let w = decrease_weight(g);
            let rtt_ref = p.rtt_ref.unwrap_or(p.t_low).ps() as f64;
            let error = (rtt - rtt_ref) / rtt_ref;
            old + delta * (1.0 - w) * df_increase - old * p.beta * w * error * df_decrease
        };
        self.rate = settle_rate(old, new, c.sending_rate, p.app_limited_fraction, p.min_rate, self.max_rate);
    }

    fn rate(&self) -> Rate {
        Rate(self.rate as u64)
    }

    fn over_target(&self) -> Option<bool> {
        Some(self.over_target)
    }

    fn metrics(&self) -> Metrics {
        Metrics { rate: Some(self.rate()), at_min_rate: Some(self.rate <= self.params.min_rate.bps() as f64), ..Metrics::default() }
    }
    /// Back to the starting rate with a fresh gradient filter.
    fn restart(&mut self) {
        *self = PatchedTimely { rate: self.start_rate, filter: GradientFilter::default(), last_update: None, ..self.clone() };
    }
}
