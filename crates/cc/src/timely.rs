//! TIMELY's rate computation engine (Mittal et al., SIGCOMM 2015, Algorithm 1 and §5).
//!
//! On every completion event: the RTT difference to the previous sample is smoothed by an EWMA
//! (weight `alpha`) and normalised by a fixed `min_rtt` into the gradient `g`; then
//! - RTT < `t_low`: additive increase by `delta`;
//! - RTT > `t_high`: decrease by `1 − beta·(1 − t_high/RTT)`, on the instantaneous RTT;
//! - `g ≤ 0`: increase by `N·delta`, `N = hai_factor` once the gradient was negative for
//!   `hai_threshold` consecutive completions (HAI), else 1;
//! - `g > 0`: decrease by `1 − beta·g`.
//!
//! With `t_low == t_high` it is the queue-size (target) controller of §4.4 / Fig. 9: increase
//! below the target, decrease in proportion to the excess above it.
//!
//! Where sources disagree (shared reference algorithms.md §1.4–§1.8) the paper's form is the
//! default and the others are named options, recorded with every result.

use crate::registry::{Advice, Algorithm, Controller, Kind, Needs, Path, Route};
use crate::{Completion, Metrics, ParamError, Rate, RateController, Signal, Time};
use serde::{Deserialize, Serialize};

/// How updates are scaled when several completions arrive within one `min_rtt` (TIMELY §5
/// "Rate update frequency"). `df = min((now − last update) / min_rtt, 1)`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UpdateScaling {
    /// Paper §5: every update, increase and decrease, is scaled by `df`.
    #[default]
    All,
    /// Authors' reference code: only the additive increase and the T_high decrease.
    Snippet,
    /// No scaling.
    None,
}

/// What counts towards the HAI threshold.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HaiCounter {
    /// Paper Algorithm 1: completions whose smoothed gradient is negative, consecutively.
    #[default]
    Gradient,
    /// Authors' reference code: consecutive raw RTT differences below zero.
    RawDiff,
    /// HPCC's ns-3: consecutive increase updates of any branch (T_low included); HAI then
    /// multiplies every increase, the T_low branch's too.
    AnyIncrease,
}

/// A bound on one update's decrease. The default is the authors' reference code's (shared
/// reference algorithms.md §1.4, recommended in §1.8): the paper states no bound, and without
/// one a single gradient sample above `1/beta` makes `rate·(1 − beta·g)` negative, which only
/// the `min_rate` clamp stops — a collapse to the floor the paper never shows (with
/// `alpha = 0.875` on the §6.1 testbed: 9.3 Gbps, Jain 0.39 and 10 of 40 connections at 10 Mbps,
/// against 14.9 Gbps, Jain 0.88 and none with the bound; at the paper's `alpha = 0.02` the two
/// agree).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecreaseFloor {
    /// The paper's Algorithm 1 as written: no bound (only `min_rate`).
    None,
    /// Authors' reference code: never below half the rate before the update.
    #[default]
    Half,
}

/// What a gradient of exactly zero does.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZeroGradient {
    /// Paper Algorithm 1: `g ≤ 0` increases.
    #[default]
    Increase,
    /// Zhu et al.'s ns-3: only `g < 0` increases; `g = 0` takes the (null) decrease.
    Hold,
}

/// TIMELY's parameters; `Default` is the paper's §6 setting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimelyParams {
    /// EWMA weight of the newest RTT difference. The paper gives no value; the default is the
    /// authors' reference code's (0.02); Zhu et al. and HPCC's ns-3 use 0.875, eRPC 0.46.
    pub alpha: f64,
    /// Multiplicative decrement factor β.
    pub beta: f64,
    /// Additive increment δ.
    pub delta: Rate,
    pub t_low: Time,
    pub t_high: Time,
    /// Fixed minimum RTT that normalises the gradient (and sets `df`).
    pub min_rtt: Time,
    /// Consecutive completions before HAI.
    pub hai_threshold: u32,
    /// HAI's increment multiplier N.
    pub hai_factor: f64,
    /// Cap on the rate; absent: the NIC line rate (§5).
    pub max_rate: Option<Rate>,
    /// Floor on the rate. The paper states none; a floor keeps the gradient decrease, which
    /// can exceed the rate, from stopping a flow.
    pub min_rate: Rate,
    /// A new flow's rate; absent: the line rate.
    pub initial_rate: Option<Rate>,
    /// The rate may increase only while the connection sends at more than this fraction of it,
    /// as its transport measures (§5 "Application limited behavior": 80 %).
    pub app_limited_fraction: f64,
    pub update_scaling: UpdateScaling,
    pub hai_counter: HaiCounter,
    pub decrease_floor: DecreaseFloor,
    pub zero_gradient: ZeroGradient,
    /// What the gradient runs on: the RTT (the paper) or a function of the hop-by-hop queues
    /// from in-band telemetry (`crate::signal`). The transport computes it; the algorithm
    /// is the same.
    pub signal: Signal,
    /// The `ind` signal's queue threshold, as a delay.
    pub signal_threshold: Time,
}

impl Default for TimelyParams {
    fn default() -> Self {
        TimelyParams {
            alpha: 0.02,
            beta: 0.8,
            delta: Rate::from_mbps(10),
            t_low: Time::from_us(50),
            t_high: Time::from_us(500),
            min_rtt: Time::from_us(20),
            hai_threshold: 5,
            hai_factor: 5.0,
            max_rate: None,
            min_rate: Rate::from_mbps(10),
            initial_rate: None,
            app_limited_fraction: 0.8,
            update_scaling: UpdateScaling::All,
            hai_counter: HaiCounter::Gradient,
            decrease_floor: DecreaseFloor::Half,
            zero_gradient: ZeroGradient::Increase,
            signal: Signal::Rtt,
            signal_threshold: DEFAULT_SIGNAL_THRESHOLD,
        }
    }
}

impl TimelyParams {
    /// Checks the parameters; the error names the field, its value and what is allowed.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_common(self.alpha, self.beta, self.t_low, self.t_high, self.min_rtt, self.min_rate)?;
        check_rate_bounds(self.initial_rate, self.max_rate)?;
        check_signal(self.signal, self.signal_threshold)?;
        if self.hai_factor < 1.0 {
            return Err(ParamError::new("hai_factor", self.hai_factor, "at least 1"));
        }
        if !(0.0..=1.0).contains(&self.app_limited_fraction) {
            return Err(ParamError::new("app_limited_fraction", self.app_limited_fraction, "a fraction in [0, 1]"));
        }
        Ok(())
    }
}

impl Algorithm for TimelyParams {
    const KIND: Kind = Kind::Rate;
    fn needs(&self) -> Needs {
        self.signal.needs(self.signal_threshold)
    }
    fn validate(&self) -> Result<(), ParamError> {
        TimelyParams::validate(self)
    }
    fn build(&self, path: &Path) -> Controller {
        Controller::Rate(Box::new(Timely::new(self.clone(), path.line_rate)))
    }
    fn advise(&self, route: &Route) -> Vec<Advice> {
        advise_t_high(self.t_high, route)
    }
}

/// A segment is the unit TIMELY paces (§3.3): when the segments of `fan_in` senders meet at
/// one port, the last waits for the others' serialization however low the rates, and if that
/// alone passes `t_high` every sample does, so the rate only falls to `min_rate` (measured in
/// `docs/speed.md`, "What the advice is for"). The value offered is twice that queue plus the
/// base RTT, where the gradient can act.
pub fn advise_t_high(t_high: Time, route: &Route) -> Vec<Advice> {
    let path = &route.path;
    let burst = path.line_rate.serialization(path.segment_bytes * route.fan_in.saturating_sub(1) as u64);
    if route.fan_in < 2 || burst + path.base_rtt <= t_high {
        return Vec::new();
    }
    let works = Time((2 * (burst + path.base_rtt).ps()).div_ceil(100_000_000) * 100_000_000);
    vec![Advice {
        field: "t_high",
        value: t_high.to_string(),
        problem: format!(
            "{} senders' segments of {} B meeting at a {} port queue {} behind the first, above t_high with the base RTT: every sample is, and the rate only falls",
            route.fan_in, path.segment_bytes, path.line_rate, burst
        ),
        try_value: format!("{works} (or a smaller nic.segment)"),
    }]
}

/// Checks what TIMELY and Patched TIMELY share.
pub fn check_common(alpha: f64, beta: f64, t_low: Time, t_high: Time, min_rtt: Time, min_rate: Rate) -> Result<(), ParamError> {
    if !(alpha > 0.0 && alpha <= 1.0) {
        return Err(ParamError::new("alpha", alpha, "an EWMA weight in (0, 1]"));
    }
    if !(beta > 0.0 && beta <= 1.0) {
        return Err(ParamError::new("beta", beta, "a factor in (0, 1]"));
    }
    if t_low > t_high {
        return Err(ParamError::new("t_low", t_low, format!("must not exceed t_high ({t_high}; t_low = t_high is the queue-size controller of §4.4)")));
    }
    if min_rtt == Time::ZERO {
        return Err(ParamError::new("min_rtt", min_rtt, "must be positive"));
    }
    if min_rate == Rate::ZERO {
        return Err(ParamError::new("min_rate", min_rate, "must be positive"));
    }
    Ok(())
}

/// The `ind` signal's default threshold: 5 us of queue (6 KB at 10 Gbps). CS244'19 names the
/// signal without a value.
pub const DEFAULT_SIGNAL_THRESHOLD: Time = Time::from_us(5);

/// The `ind` signal needs a positive threshold.
pub fn check_signal(signal: Signal, threshold: Time) -> Result<(), ParamError> {
    if signal == Signal::Ind && threshold == Time::ZERO {
        return Err(ParamError::new("signal_threshold", threshold, "a positive queue delay for signal = \"ind\""));
    }
    Ok(())
}

/// A rate controller's optional start and cap, when given, must be positive: a zero rate would
/// never send (and the pacing gap `1/rate` would be infinite).
pub fn check_rate_bounds(initial_rate: Option<Rate>, max_rate: Option<Rate>) -> Result<(), ParamError> {
    for (field, rate) in [("initial_rate", initial_rate), ("max_rate", max_rate)] {
        if rate == Some(Rate::ZERO) {
            return Err(ParamError::new(field, Rate::ZERO, "positive, or absent for the NIC line rate"));
        }
    }
    Ok(())
}

/// (starting rate, cap) in bit/s: the cap is `max_rate` or the line rate, whichever is lower
/// (§5: "cap the maximum target rate"); a flow starts at `initial_rate` or the cap.
pub fn rate_bounds(initial_rate: Option<Rate>, max_rate: Option<Rate>, line_rate: Rate) -> (f64, f64) {
    let max = max_rate.unwrap_or(line_rate).min(line_rate).bps() as f64;
    (initial_rate.map_or(max, |r| (r.bps() as f64).min(max)), max)
}

/// The RTT-gradient filter shared by TIMELY and Patched TIMELY: EWMA of consecutive RTT
/// differences, normalised by the fixed minimum RTT (Algorithm 1, lines 1–4).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GradientFilter {
    prev_rtt: Option<f64>,
    rtt_diff: f64,
}

impl GradientFilter {
    /// A filter whose last sample was `prev_rtt` and whose smoothed difference is
    /// `rtt_diff_ps`: another implementation's state, to replay its next update.
    pub fn resume(prev_rtt: Option<Time>, rtt_diff_ps: f64) -> GradientFilter {
        GradientFilter { prev_rtt: prev_rtt.map(|t| t.ps() as f64), rtt_diff: rtt_diff_ps }
    }

    /// The smoothed RTT difference in picoseconds.
    pub fn rtt_diff_ps(&self) -> f64 {
        self.rtt_diff
    }

    /// Takes a sample; returns (raw difference to the previous sample in ps, normalised
    /// gradient). The first sample has no predecessor and counts as a zero difference.
    pub fn update(&mut self, rtt: Time, alpha: f64, min_rtt: Time) -> (f64, f64) {
        let rtt = rtt.ps() as f64;
        let new_diff = rtt - self.prev_rtt.unwrap_or(rtt);
        self.prev_rtt = Some(rtt);
        self.rtt_diff = (1.0 - alpha) * self.rtt_diff + alpha * new_diff;
        (new_diff, self.rtt_diff / min_rtt.ps() as f64)
    }
}

/// `df = min((now − last_update) / min_rtt, 1)`: the weight of one update when several
/// completions share a minimum RTT (§5); 1 for the first update.
pub fn update_weight(now: Time, last_update: Option<Time>, min_rtt: Time) -> f64 {
    match last_update {
        Some(t) => ((now.saturating_sub(t)).ps() as f64 / min_rtt.ps() as f64).min(1.0),
        None => 1.0,
    }
}

/// The rate a completion's update leaves, from `old` to the computed `new` (bit/s), shared by
/// TIMELY and Patched TIMELY: no increase while the connection sends at no more than
/// `app_limited_fraction` of its rate (§5: the rate may only grow while it sends at more than
/// 80 % of it), then within [`min_rate`, `max_rate`].
pub fn settle_rate(old: f64, new: f64, sending_rate: Option<Rate>, app_limited_fraction: f64, min_rate: Rate, max_rate: f64) -> f64 {
    let held = new > old && sending_rate.is_some_and(|a| (a.bps() as f64) <= app_limited_fraction * old);
    (if held { old } else { new }).min(max_rate).max(min_rate.bps() as f64)
}

#[derive(Clone, Debug)]
pub struct Timely {
    pub params: TimelyParams,
    /// Rate in bits per second, kept as a float between updates.
    rate: f64,
    max_rate: f64,
    /// The rate it starts from (and restarts from after idle, when asked).
    start_rate: f64,
    filter: GradientFilter,
    /// Consecutive completions counting towards HAI.
    hai_count: u32,
    last_update: Option<Time>,
    /// The last sample was above `t_low`, past which TIMELY no longer increases regardless
    /// of the gradient (§4.3): PLB's signal for it.
    over_target: bool,
}

/// What TIMELY and Patched TIMELY carry from one completion to the next: another
/// implementation's state (rttlab.host's kernel programs log theirs), from which
/// `Timely::resume` replays its next decision.
#[derive(Clone, Debug, PartialEq)]
pub struct RateState {
    pub rate_bps: f64,
    pub filter: GradientFilter,
    /// TIMELY's HAI counter (Patched TIMELY has none).
    pub hai_count: u32,
    pub last_update: Option<Time>,
}

impl Timely {
    pub fn new(params: TimelyParams, line_rate: Rate) -> Timely {
        let (rate, max_rate) = rate_bounds(params.initial_rate, params.max_rate, line_rate);
        Timely { params, rate, max_rate, start_rate: rate, filter: GradientFilter::default(), hai_count: 0, last_update: None, over_target: false }
    }

    /// The controller in state `st`.
    pub fn resume(params: TimelyParams, line_rate: Rate, st: RateState) -> Timely {
        Timely { rate: st.rate_bps, filter: st.filter, hai_count: st.hai_count, last_update: st.last_update, ..Timely::new(params, line_rate) }
    }

    pub fn state(&self) -> RateState {
        RateState { rate_bps: self.rate, filter: self.filter.clone(), hai_count: self.hai_count, last_update: self.last_update }
    }

    /// True while HAI is in force (the last `hai_threshold` completions counted).
    pub fn hai_active(&self) -> bool {
        self.hai_count >= self.params.hai_threshold
    }
}

impl RateController for Timely {
    fn on_completion(&mut self, c: &Completion) {
        self.over_target = c.rtt > self.params.t_low;
        let p = &self.params;
        let (raw_diff, g) = self.filter.update(c.rtt, p.alpha, p.min_rtt);
        let df = update_weight(c.now, self.last_update, p.min_rtt);
        self.last_update = Some(c.now);
        let (df_increase, df_high, df_gradient) = match p.update_scaling {
            UpdateScaling::All => (df, df, df),
            UpdateScaling::Snippet => (df, df, 1.0),
            UpdateScaling::None => (1.0, 1.0, 1.0),
        };
        let rtt = c.rtt.ps() as f64;
        let delta = p.delta.bps() as f64;
        let gradient_increases = match p.zero_gradient {
            ZeroGradient::Increase => g <= 0.0,
            ZeroGradient::Hold => g < 0.0,
        };
        // The HAI counter sees every completion (Algorithm 1: "gradient < 0 for five
        // completion events"), whichever branch the RTT takes.
        let counts = match p.hai_counter {
            HaiCounter::Gradient => g < 0.0,
            HaiCounter::RawDiff => raw_diff < 0.0,
            HaiCounter::AnyIncrease => c.rtt < p.t_low || (c.rtt <= p.t_high && gradient_increases),
        };
        self.hai_count = if counts { self.hai_count.saturating_add(1) } else { 0 };

        let old = self.rate;
        let new = if c.rtt < p.t_low {
            // HPCC's ns-3 applies HAI to every increase, the T_low branch included; the paper
            // and the authors' code only to the gradient branch.
            let n = if self.hai_active() && p.hai_counter == HaiCounter::AnyIncrease { p.hai_factor } else { 1.0 };
            old + n * delta * df_increase
        } else if c.rtt > p.t_high {
            old * (1.0 - df_high * p.beta * (1.0 - p.t_high.ps() as f64 / rtt))
        } else if gradient_increases {
            let n = if self.hai_active() { p.hai_factor } else { 1.0 };
            old + n * delta * df_increase
        } else {
            old * (1.0 - df_gradient * p.beta * g)
        };
        let new = if p.decrease_floor == DecreaseFloor::Half { new.max(0.5 * old) } else { new };
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
        *self = Timely { rate: self.start_rate, filter: GradientFilter::default(), hai_count: 0, last_update: None, ..self.clone() };
    }
}
