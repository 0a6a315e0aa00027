//! Swift (Kumar et al., SIGCOMM 2020): target-delay AIMD on a congestion window counted in
//! packets (paper Algorithm 1; shared reference algorithms.md §3).
//!
//! - **Per ACK** with delay below the target, additive increase: `cwnd += ai·num_acked/cwnd`
//!   (`ai` packets per RTT), or `cwnd += ai·num_acked` when `cwnd < 1`. At or above the target,
//!   multiplicative decrease `cwnd *= max(1 − β·(delay − target)/delay, 1 − max_mdf)`, at most
//!   once per RTT (Algorithm 1 lines 2–14).
//! - **Losses**: a retransmission timeout counts `retransmit_cnt`; at `retx_reset_threshold`
//!   the window falls to `min_cwnd`, before that it is cut by `max_mdf` if it may decrease; fast
//!   recovery cuts by `max_mdf` if it may decrease (lines 15–24).
//! - **Bounds and guard**: the window is clamped to `[min_cwnd, max_cwnd]`; the decrease guard
//!   restarts whenever the window fell or sits at its minimum (lines 25–28, with isekai's
//!   "or hit the minimum"; reference §3.1, §10). This departs from the paper's line 27, which
//!   tests `cwnd ≤ prev_cwnd`: there a window that did not move (held at `max_cwnd`) would also
//!   restart the guard and hold off the next decrease; here only a decrease (`<`) or the
//!   minimum does.
//! - **Every ACK** resets `retransmit_cnt` (line 2), SACK-only ACKs that carry no RTT sample
//!   included.
//! - **Pacing**: below one packet the sender sends one packet every `rtt/cwnd` (lines 29–32,
//!   §3.4), with `rtt` the smoothed RTT.
//! - **Target scaling** (§3.5): `base_target + hops·ℏ + clamp(α/√fcwnd + β', 0, fs_range)` with
//!   `α = fs_range / (1/√fs_min_cwnd − 1/√fs_max_cwnd)` and `β' = −α/√fs_max_cwnd`.
//! - **Two windows** (§3.3): `fcwnd` runs Algorithm 1 on the fabric delay (RTT minus endpoint
//!   delay) against the scaled target; `ecwnd` on the EWMA-filtered endpoint delay (remote
//!   queuing echoed by the receiver plus local NIC-Rx delay) against `endpoint_target`. The
//!   effective window is `min(fcwnd, ecwnd)`. With `decompose = false` this is the paper's
//!   Swift-v0 (§5.4): one window on the end-to-end RTT.

use crate::registry::{Advice, Algorithm, Controller, Kind, Needs, Path, Route};
use crate::units::Time;
use crate::{AckEvent, Loss, Metrics, ParamError, WindowController};
use serde::{Deserialize, Serialize};

/// Where a parameter set comes from (reference algorithms.md §3.4).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// isekai's values (Google's Falcon simulator, "from Swift in Pony") with the paper's one
    /// stated number, `min_cwnd = 0.001` packets (§3.4), and flow-based scaling down to that
    /// floor (`fs_min_cwnd = 0.001`): Fig. 21 shows the scaling separating 5000 flows whose fair
    /// window is about 0.02 packets, which it can only do if `fs_min_cwnd` lies below that
    /// (isekai's 0.1 gives every such flow the same, clamped, target).
    #[default]
    Paper,
    /// isekai exactly: `min_cwnd = 0.01` packets.
    Isekai,
    /// htsim's Swift ("guesses" by its authors): base 20 µs, ℏ = base/6.55, fs_range = 5·base,
    /// fs_max_cwnd 100, reset threshold 5, the decrease guard on the smoothed RTT.
    Htsim,
}

/// Which RTT the once-per-RTT decrease guard compares with (reference §3.1).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GuardRtt {
    /// The current ACK's RTT sample (isekai).
    #[default]
    Sample,
    /// The smoothed RTT (htsim).
    Smoothed,
}

/// Swift's parameters. Windows are in packets, delays in time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwiftParams {
    /// The profile the other values' defaults come from.
    pub profile: Profile,
    /// Additive increment, packets per RTT.
    pub ai: f64,
    /// Multiplicative-decrease constant β.
    pub beta: f64,
    /// Largest fraction one decrease removes.
    pub max_mdf: f64,
    /// Fabric target on a one-hop path with few flows (§3.5).
    pub base_target: Time,
    /// ℏ: target added per switch on the forward path (topology-based scaling).
    pub per_hop: Time,
    /// Extra target at `fs_min_cwnd` and below (flow-based scaling).
    pub fs_range: Time,
    pub fs_min_cwnd: f64,
    pub fs_max_cwnd: f64,
    /// Fabric window bounds; `min_cwnd = 1` is the paper's "Swift without cwnd < 1" (Table 3).
    pub min_cwnd: f64,
    pub max_cwnd: f64,
    /// Window of a new flow.
    pub initial_cwnd: f64,
    /// Consecutive timeouts after which the window falls to `min_cwnd`.
    pub retx_reset_threshold: u32,
    pub flow_scaling: bool,
    pub topology_scaling: bool,
    /// Separate fabric and endpoint windows (Swift); false: one window on the end-to-end
    /// RTT against the fabric target (Swift-v0, §5.4).
    pub decompose: bool,
    /// Endpoint window target (Table 4 uses 100 µs) and bounds (isekai: 1 to 256 packets).
    pub endpoint_target: Time,
    pub endpoint_min_cwnd: f64,
    pub endpoint_max_cwnd: f64,
    /// Weight of a new endpoint-delay sample in its EWMA (§3.3 filters endpoint delay; the
    /// weight is not published).
    pub endpoint_ewma: f64,
    /// `srtt ← rtt_smoothing·srtt + (1 − rtt_smoothing)·sample`, for pacing (isekai 0.75).
    pub rtt_smoothing: f64,
    pub guard_rtt: GuardRtt,
}

impl Default for SwiftParams {
    fn default() -> Self {
        SwiftParams::profile(Profile::Paper)
    }
}

impl SwiftParams {
    /// The values of a profile (reference algorithms.md §3.4).
    pub fn profile(profile: Profile) -> SwiftParams {
        let isekai = SwiftParams {
            profile,
            ai: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            base_target: Time::from_us(25),
            per_hop: Time::from_us(1),
            fs_range: Time::from_us(100),
            fs_min_cwnd: 0.1,
            fs_max_cwnd: 256.0,
            min_cwnd: 0.01,
            max_cwnd: 256.0,
            initial_cwnd: 1.0,
            retx_reset_threshold: 3,
            flow_scaling: true,
            topology_scaling: true,
            decompose: true,
            endpoint_target: Time::from_us(100),
            endpoint_min_cwnd: 1.0,
            endpoint_max_cwnd: 256.0,
            endpoint_ewma: 0.25,
            rtt_smoothing: 0.75,
            guard_rtt: GuardRtt::Sample,
        };
        match profile {
            Profile::Isekai => isekai,
            Profile::Paper => SwiftParams { min_cwnd: 0.001, fs_min_cwnd: 0.001, ..isekai },
            Profile::Htsim => {
                let base = Time::from_us(20);
                SwiftParams {
                    base_target: base,
                    per_hop: Time((base.ps() as f64 / 6.55).round() as u64),
                    fs_range: Time(5 * base.ps()),
                    fs_max_cwnd: 100.0,
                    // htsim's floor is 10 bytes: 0.0067 packets of 1500 B.
                    min_cwnd: 10.0 / 1500.0,
                    max_cwnd: 1000.0,
                    retx_reset_threshold: 5,
                    guard_rtt: GuardRtt::Smoothed,
                    ..isekai
                }
            }
        }
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        let positive = |v: f64| v > 0.0 && v.is_finite();
        if !positive(self.ai) {
            return Err(ParamError::new("ai", self.ai, "positive packets per RTT"));
        }
        if !(self.beta > 0.0 && self.beta <= 1.0) {
            return Err(ParamError::new("beta", self.beta, "in (0, 1]"));
        }
        if !(self.max_mdf > 0.0 && self.max_mdf < 1.0) {
            return Err(ParamError::new("max_mdf", self.max_mdf, "in (0, 1)"));
        }
        if self.base_target == Time::ZERO {
            return Err(ParamError::new("base_target", self.base_target, "positive"));
        }
        if !(positive(self.min_cwnd) && self.min_cwnd <= self.max_cwnd && self.max_cwnd.is_finite()) {
            return Err(ParamError::new("min_cwnd", self.min_cwnd, format!("positive and at most max_cwnd ({})", self.max_cwnd)));
        }
        if !(self.min_cwnd..=self.max_cwnd).contains(&self.initial_cwnd) {
            return Err(ParamError::new("initial_cwnd", self.initial_cwnd, format!("between min_cwnd ({}) and max_cwnd ({})", self.min_cwnd, self.max_cwnd)));
        }
        if !(positive(self.fs_min_cwnd) && self.fs_min_cwnd < self.fs_max_cwnd && self.fs_max_cwnd.is_finite()) {
            return Err(ParamError::new("fs_min_cwnd", self.fs_min_cwnd, format!("positive and below fs_max_cwnd ({})", self.fs_max_cwnd)));
        }
        if self.retx_reset_threshold == 0 {
            return Err(ParamError::new("retx_reset_threshold", self.retx_reset_threshold, "at least 1"));
        }
        if !(positive(self.endpoint_min_cwnd) && self.endpoint_min_cwnd <= self.endpoint_max_cwnd && self.endpoint_max_cwnd.is_finite()) {
            return Err(ParamError::new(
                "endpoint_min_cwnd",
                self.endpoint_min_cwnd,
                format!("positive and at most endpoint_max_cwnd ({})", self.endpoint_max_cwnd),
            ));
        }
        if self.decompose && self.endpoint_target == Time::ZERO {
            return Err(ParamError::new("endpoint_target", self.endpoint_target, "positive"));
        }
        if !(self.endpoint_ewma > 0.0 && self.endpoint_ewma <= 1.0) {
            return Err(ParamError::new("endpoint_ewma", self.endpoint_ewma, "a weight in (0, 1]"));
        }
        if !(0.0..1.0).contains(&self.rtt_smoothing) {
            return Err(ParamError::new("rtt_smoothing", self.rtt_smoothing, "a weight in [0, 1)"));
        }
        Ok(())
    }

    /// The flow-based scaling term `clamp(α/√cwnd + β', 0, fs_range)` in picoseconds (§3.5).
    pub fn flow_scaling_ps(&self, fcwnd: f64) -> f64 {
        let range = self.fs_range.ps() as f64;
        let alpha = range / (1.0 / self.fs_min_cwnd.sqrt() - 1.0 / self.fs_max_cwnd.sqrt());
        let beta = -alpha / self.fs_max_cwnd.sqrt();
        (alpha / fcwnd.sqrt() + beta).clamp(0.0, range)
    }

    /// The fabric target for a path of `hops` switches and a window of `fcwnd` packets (§3.5).
    pub fn target_delay(&self, hops: u8, fcwnd: f64) -> Time {
        let mut t = self.base_target.ps() as f64;
        if self.topology_scaling {
            t += hops as f64 * self.per_hop.ps() as f64;
        }
        if self.flow_scaling {
            t += self.flow_scaling_ps(fcwnd);
        }
        Time(t.round() as u64)
    }
}

impl Algorithm for SwiftParams {
    const KIND: Kind = Kind::Window;
    /// Swift acknowledges every packet at once (§3.6).
    fn needs(&self) -> Needs {
        Needs { ack_per_packet: true, delay: true, ..Needs::default() }
    }
    fn validate(&self) -> Result<(), ParamError> {
        SwiftParams::validate(self)
    }
    fn build(&self, path: &Path) -> Controller {
        Controller::Window(Box::new(Swift::new(self.clone(), path.mss)))
    }
    fn defaults_like(&self) -> Self {
        SwiftParams::profile(self.profile)
    }
    /// The fabric target with few flows (§3.5: `base_target + hops·ℏ`) must exceed the path's
    /// unloaded RTT, or every RTT sample is above it and the window only shrinks until flow
    /// scaling lifts the target (measured in `docs/speed.md`, "What the advice is for").
    fn advise(&self, route: &Route) -> Vec<Advice> {
        let path = &route.path;
        let per_hop = if self.topology_scaling { self.per_hop.ps() * route.hops as u64 } else { 0 };
        let target = self.base_target.ps() + per_hop;
        if path.base_rtt.ps() < target {
            return Vec::new();
        }
        let above = Time((path.base_rtt.ps() - per_hop).div_ceil(1_000_000) * 1_000_000 + self.base_target.ps());
        vec![Advice {
            field: "base_target",
            value: self.base_target.to_string(),
            problem: format!("the fabric target with few flows ({}) is not above the path's unloaded RTT ({}): Swift only shrinks its window", Time(target), path.base_rtt),
            try_value: above.to_string(),
        }]
    }
}

/// One window under Algorithm 1: its value, bounds and decrease guard.
#[derive(Clone, Debug)]
pub struct Aimd {
    pub cwnd: f64,
    min: f64,
    max: f64,
    t_last_decrease: Time,
}

impl Aimd {
    fn new(cwnd: f64, min: f64, max: f64) -> Aimd {
        Aimd { cwnd, min, max, t_last_decrease: Time::ZERO }
    }

    /// Algorithm 1 line 3: at most one decrease per `rtt`.
    fn can_decrease(&self, now: Time, rtt: Time) -> bool {
        now.saturating_sub(self.t_last_decrease) >= rtt
    }

    /// Lines 25–28: clamp, and restart the guard if the window fell or sits at its minimum.
    fn bound(&mut self, prev: f64, now: Time) {
        self.cwnd = self.cwnd.clamp(self.min, self.max);
        if self.cwnd < prev || self.cwnd <= self.min {
            self.t_last_decrease = now;
        }
    }

    /// Lines 4–14 for one ACK acknowledging `num_acked` packets with `delay` against `target`.
    fn on_delay(&mut self, p: &SwiftParams, delay: Time, target: Time, num_acked: f64, now: Time, guard: Time) {
        let prev = self.cwnd;
        if delay < target {
            self.cwnd += if self.cwnd >= 1.0 { p.ai * num_acked / self.cwnd } else { p.ai * num_acked };
        } else if self.can_decrease(now, guard) {
            let excess = (delay.ps() - target.ps()) as f64 / delay.ps() as f64;
            self.cwnd *= (1.0 - p.beta * excess).max(1.0 - p.max_mdf);
        }
        self.bound(prev, now);
    }

    /// Lines 15–24: multiplicative decrease by `max_mdf` if the guard allows; or, `reset`, to
    /// the minimum.
    fn on_loss(&mut self, p: &SwiftParams, reset: bool, now: Time, guard: Time) {
        let prev = self.cwnd;
        if reset {
            self.cwnd = self.min;
        } else if self.can_decrease(now, guard) {
            self.cwnd *= 1.0 - p.max_mdf;
        }
        self.bound(prev, now);
    }
}

#[derive(Clone, Debug)]
pub struct Swift {
    pub params: SwiftParams,
    /// Payload bytes in one of this flow's packets: windows in packets become bytes with it.
    packet_bytes: u64,
    pub fabric: Aimd,
    /// Unbounded (never the limit) when the delay is not decomposed.
    pub endpoint: Aimd,
    retransmit_cnt: u32,
    /// Smoothed RTT in picoseconds (0 before the first sample).
    srtt: f64,
    last_rtt: Time,
    endpoint_delay: Option<f64>,
    /// The last sample's fabric delay was at or above its target (PLB's signal, §3.4).
    over_target: bool,
}

/// What Swift's fabric window carries from one ACK to the next: another implementation's
/// state (rttlab.host's kernel program logs its), from which `Swift::resume` replays its next
/// decision.
#[derive(Clone, Debug, PartialEq)]
pub struct SwiftState {
    /// The fabric window, packets.
    pub fcwnd: f64,
    pub t_last_decrease: Time,
    /// The smoothed RTT, ps (0 before the first sample).
    pub srtt_ps: f64,
    pub last_rtt: Time,
    pub retransmit_cnt: u32,
}

impl Swift {
    /// The controller in state `st`, its endpoint window where `new` starts it.
    pub fn resume(params: SwiftParams, packet_bytes: u64, st: SwiftState) -> Swift {
        let mut s = Swift::new(params, packet_bytes);
        s.fabric.cwnd = st.fcwnd;
        s.fabric.t_last_decrease = st.t_last_decrease;
        s.srtt = st.srtt_ps;
        s.last_rtt = st.last_rtt;
        s.retransmit_cnt = st.retransmit_cnt;
        s
    }

    pub fn state(&self) -> SwiftState {
        SwiftState {
            fcwnd: self.fabric.cwnd,
            t_last_decrease: self.fabric.t_last_decrease,
            srtt_ps: self.srtt,
            last_rtt: self.last_rtt,
            retransmit_cnt: self.retransmit_cnt,
        }
    }

    /// The fabric target for the current window on a path of `hops` switches (§3.5).
    pub fn target(&self, hops: u8) -> Time {
        self.params.target_delay(hops, self.fabric.cwnd)
    }

    pub fn new(params: SwiftParams, packet_bytes: u64) -> Swift {
        let endpoint = if params.decompose {
            Aimd::new(params.endpoint_max_cwnd, params.endpoint_min_cwnd, params.endpoint_max_cwnd)
        } else {
            Aimd::new(f64::INFINITY, f64::INFINITY, f64::INFINITY)
        };
        Swift {
            fabric: Aimd::new(params.initial_cwnd, params.min_cwnd, params.max_cwnd),
            endpoint,
            params,
            packet_bytes,
            retransmit_cnt: 0,
            srtt: 0.0,
            last_rtt: Time::ZERO,
            endpoint_delay: None,
            over_target: false,
        }
    }

    /// The effective window in packets: `min(fcwnd, ecwnd)` (§3.3).
    pub fn cwnd_packets(&self) -> f64 {
        self.fabric.cwnd.min(self.endpoint.cwnd)
    }

    /// The RTT the decrease guard compares with.
    fn guard(&self) -> Time {
        match self.params.guard_rtt {
            GuardRtt::Sample => self.last_rtt,
            GuardRtt::Smoothed => Time(self.srtt as u64),
        }
    }
}

impl WindowController for Swift {
    fn on_ack(&mut self, a: &AckEvent) {
        self.retransmit_cnt = 0;
        let Some(rtt) = a.rtt else { return };
        self.last_rtt = rtt;
        let s = self.params.rtt_smoothing;
        self.srtt = if self.srtt == 0.0 { rtt.ps() as f64 } else { s * self.srtt + (1.0 - s) * rtt.ps() as f64 };
        let num_acked = (a.acked_bytes as f64 / self.packet_bytes as f64).ceil().max(1.0);
        let guard = self.guard();
        let p = &self.params;
        // Swift-v0 holds the whole RTT to the fabric target.
        let fabric_delay = if p.decompose { rtt.saturating_sub(a.endpoint_delay) } else { rtt };
        let target = p.target_delay(a.hops, self.fabric.cwnd);
        self.over_target = fabric_delay >= target;
        self.fabric.on_delay(p, fabric_delay, target, num_acked, a.now, guard);
        if p.decompose {
            let w = p.endpoint_ewma;
            let e = a.endpoint_delay.ps() as f64;
            let avg = self.endpoint_delay.map_or(e, |old| (1.0 - w) * old + w * e);
            self.endpoint_delay = Some(avg);
            self.endpoint.on_delay(p, Time(avg.round() as u64), p.endpoint_target, num_acked, a.now, guard);
        }
    }

    fn on_loss(&mut self, loss: Loss, _flight_bytes: u64, now: Time) {
        let guard = self.guard();
        let reset = match loss {
            Loss::Timeout => {
                self.retransmit_cnt += 1;
                self.retransmit_cnt >= self.params.retx_reset_threshold
            }
            Loss::FastRetransmit => {
                self.retransmit_cnt = 0;
                false
            }
        };
        self.fabric.on_loss(&self.params, reset, now, guard);
    }

    fn cwnd(&self) -> u64 {
        (self.cwnd_packets() * self.packet_bytes as f64).round() as u64
    }

    fn over_target(&self) -> Option<bool> {
        Some(self.over_target)
    }

    /// Lines 29–32: below one packet, one packet every `srtt / cwnd`.
    fn pacing_delay(&self) -> Option<Time> {
        let w = self.cwnd_packets();
        (w < 1.0 && self.srtt > 0.0).then(|| Time((self.srtt / w).round() as u64))
    }

    fn metrics(&self) -> Metrics {
        Metrics { cwnd_bytes: Some(self.cwnd()), fcwnd_pkts: Some(self.fabric.cwnd), ecwnd_pkts: Some(self.endpoint.cwnd), ..Metrics::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000_000;

    fn ack(now_us: u64, rtt_us: f64, endpoint_us: f64, hops: u8) -> AckEvent {
        AckEvent {
            now: Time(now_us * US),
            acked_bytes: 1000,
            ece: false,
            rtt: Some(Time((rtt_us * US as f64) as u64)),
            snd_una: 0,
            snd_nxt: 0,
            in_recovery: false,
            cwnd_limited: true,
            endpoint_delay: Time((endpoint_us * US as f64) as u64),
            hops,
        }
    }

    fn fixed_target(base_us: u64, cwnd: f64) -> Swift {
        let p = SwiftParams { base_target: Time::from_us(base_us), flow_scaling: false, topology_scaling: false, initial_cwnd: cwnd, ..SwiftParams::default() };
        Swift::new(p, 1000)
    }

    #[test]
    fn additive_increase_is_ai_over_cwnd_per_packet_and_ai_below_one() {
        let mut s = fixed_target(50, 10.0);
        s.on_ack(&ack(100, 30.0, 0.0, 1));
        assert!((s.fabric.cwnd - 10.1).abs() < 1e-12, "10 + 1/10 = {}", s.fabric.cwnd);
        let mut s = fixed_target(50, 0.25);
        s.on_ack(&ack(100, 30.0, 0.0, 1));
        assert!((s.fabric.cwnd - 1.25).abs() < 1e-12, "0.25 + 1 = {}", s.fabric.cwnd);
        // Two packets acknowledged at once: twice the increment.
        let mut s = fixed_target(50, 10.0);
        s.on_ack(&AckEvent { acked_bytes: 2000, ..ack(100, 30.0, 0.0, 1) });
        assert!((s.fabric.cwnd - 10.2).abs() < 1e-12);
    }

    #[test]
    fn decrease_is_proportional_to_excess_and_bounded_by_max_mdf() {
        // delay 80 µs, target 50: cwnd·(1 − 0.8·30/80) = 10·0.7 = 7.
        let mut s = fixed_target(50, 10.0);
        s.on_ack(&ack(1000, 80.0, 0.0, 1));
        assert!((s.fabric.cwnd - 7.0).abs() < 1e-12, "{}", s.fabric.cwnd);
        // delay 500 µs: 1 − 0.8·450/500 = 0.28 < 0.5, so max_mdf: 10·0.5 = 5.
        let mut s = fixed_target(50, 10.0);
        s.on_ack(&ack(1000, 500.0, 0.0, 1));
        assert!((s.fabric.cwnd - 5.0).abs() < 1e-12, "{}", s.fabric.cwnd);
        // Delay equal to the target decreases (Algorithm 1: increase only when below).
        let mut s = fixed_target(50, 10.0);
        s.on_ack(&ack(1000, 50.0, 0.0, 1));
        assert!((s.fabric.cwnd - 10.0).abs() < 1e-12, "excess 0 → factor 1, {}", s.fabric.cwnd);
    }

    #[test]
    fn decrease_happens_at_most_once_per_rtt() {
        let mut s = fixed_target(50, 10.0);
        s.on_ack(&ack(1000, 100.0, 0.0, 1)); // 10 · max(1 − 0.8·0.5, 0.5) = 6
        assert!((s.fabric.cwnd - 6.0).abs() < 1e-12);
        s.on_ack(&ack(1050, 100.0, 0.0, 1)); // 50 µs later < one RTT: no decrease
        assert!((s.fabric.cwnd - 6.0).abs() < 1e-12);
        s.on_ack(&ack(1099, 100.0, 0.0, 1)); // 99 µs: still not
        assert!((s.fabric.cwnd - 6.0).abs() < 1e-12);
        s.on_ack(&ack(1100, 100.0, 0.0, 1)); // exactly one RTT: decrease to 3.6
        assert!((s.fabric.cwnd - 3.6).abs() < 1e-12, "{}", s.fabric.cwnd);
        // Increases are not guarded.
        s.on_ack(&ack(1101, 20.0, 0.0, 1));
        assert!((s.fabric.cwnd - (3.6 + 1.0 / 3.6)).abs() < 1e-12);
    }

    #[test]
    fn window_is_clamped_and_a_window_at_its_minimum_restarts_the_guard() {
        let mut s = fixed_target(50, 0.0015);
        s.on_ack(&ack(1000, 500.0, 0.0, 1)); // 0.00075 → clamped to min_cwnd = 0.001
        assert!((s.fabric.cwnd - 0.001).abs() < 1e-15);
        let mut s = Swift::new(SwiftParams { max_cwnd: 10.0, initial_cwnd: 10.0, flow_scaling: false, ..SwiftParams::default() }, 1000);
        s.on_ack(&ack(1000, 5.0, 0.0, 1));
        assert_eq!(s.fabric.cwnd, 10.0);
        // Without cwnd < 1 (Table 3): the floor is one packet.
        let mut s = Swift::new(SwiftParams { min_cwnd: 1.0, initial_cwnd: 1.0, flow_scaling: false, ..SwiftParams::default() }, 1000);
        s.on_ack(&ack(1000, 500.0, 0.0, 1));
        assert_eq!(s.fabric.cwnd, 1.0);
        assert_eq!(s.pacing_delay(), None);
    }

    #[test]
    fn timeouts_cut_by_max_mdf_then_reset_to_min_cwnd() {
        let mut s = fixed_target(50, 8.0);
        s.on_ack(&ack(1000, 20.0, 0.0, 1)); // 8.125, last RTT 20 µs
        s.on_loss(Loss::Timeout, 0, Time(2000 * US));
        assert!((s.fabric.cwnd - 4.0625).abs() < 1e-12);
        s.on_loss(Loss::Timeout, 0, Time(2010 * US)); // within one RTT: no cut
        assert!((s.fabric.cwnd - 4.0625).abs() < 1e-12);
        s.on_loss(Loss::Timeout, 0, Time(2011 * US)); // third consecutive timeout: reset
        assert_eq!(s.fabric.cwnd, s.params.min_cwnd);
        // An ACK without an RTT sample (SACK-only) clears the count too (line 2): two timeouts,
        // a SACK, two more, and no reset.
        let mut s = fixed_target(50, 8.0);
        s.on_loss(Loss::Timeout, 0, Time(2000 * US));
        s.on_loss(Loss::Timeout, 0, Time(3000 * US));
        s.on_ack(&AckEvent { rtt: None, ..ack(3500, 20.0, 0.0, 1) });
        s.on_loss(Loss::Timeout, 0, Time(4000 * US));
        s.on_loss(Loss::Timeout, 0, Time(5000 * US));
        assert!(s.fabric.cwnd > s.params.min_cwnd, "{}", s.fabric.cwnd);
        // An ACK clears the count; fast recovery cuts by max_mdf.
        let mut s = fixed_target(50, 8.0);
        s.on_ack(&ack(1000, 20.0, 0.0, 1));
        s.on_loss(Loss::FastRetransmit, 0, Time(2000 * US));
        assert!((s.fabric.cwnd - 4.0625).abs() < 1e-12);
    }

    #[test]
    fn pacing_delay_is_rtt_over_cwnd_below_one_packet() {
        let mut s = fixed_target(50, 0.5);
        s.on_ack(&ack(1000, 80.0, 0.0, 1)); // 0.5 · 0.7 = 0.35; srtt = 80 µs
        assert!((s.fabric.cwnd - 0.35).abs() < 1e-12);
        assert_eq!(s.pacing_delay(), Some(Time((80.0 * US as f64 / 0.35).round() as u64)));
        assert_eq!(s.cwnd(), 350);
    }

    #[test]
    fn target_scaling_formula() {
        let p = SwiftParams::profile(Profile::Isekai); // base 25, ℏ 1 µs, fs_range 100 µs over [0.1, 256]
                                                       // At fs_min_cwnd the flow term is the whole range; at fs_max_cwnd zero.
        assert_eq!(p.target_delay(0, 0.1), Time::from_us(125));
        assert_eq!(p.target_delay(0, 256.0), Time::from_us(25));
        assert_eq!(p.target_delay(0, 0.01), Time::from_us(125), "clamped above");
        assert_eq!(p.target_delay(0, 1000.0), Time::from_us(25), "clamped below");
        // Between: α = 100/(1/√0.1 − 1/16) = 32.2604…, β' = −α/16; at cwnd 4 and 3 hops: 25 + 3 + 7α/16 = 42.1139 µs.
        let alpha = 100.0 / (1.0 / 0.1f64.sqrt() - 1.0 / 16.0);
        let expect = 25.0 + 3.0 + alpha / 2.0 - alpha / 16.0;
        let got = p.target_delay(3, 4.0).ps() as f64 / US as f64;
        assert!((got - expect).abs() < 1e-6, "{got} vs {expect}");
        assert!((expect - 42.1139).abs() < 1e-4);
        let off = SwiftParams { flow_scaling: false, topology_scaling: false, ..p.clone() };
        assert_eq!(off.target_delay(5, 0.01), Time::from_us(25));
        // The paper profile scales over [0.001, 256]: α = 100/(1/√0.001 − 1/16) = 3.16856…; at
        // Fig. 21's fair window of 0.02 packets the flow term is α/√0.02 − α/16 = 22.2069 µs.
        let paper = SwiftParams::default();
        assert_eq!(paper.target_delay(0, 0.001), Time::from_us(125));
        assert_eq!(paper.target_delay(0, 256.0), Time::from_us(25));
        let got = paper.target_delay(0, 0.02).ps() as f64 / US as f64;
        assert!((got - 47.2069).abs() < 1e-4, "{got}");
    }

    #[test]
    fn fabric_and_endpoint_windows_take_their_own_delay() {
        // RTT 140 µs of which 100 endpoint: fabric delay 40 < 50 grows fcwnd; endpoint 100 ≥
        // target 60 cuts ecwnd by 1 − 0.8·40/100 = 0.68.
        let p = SwiftParams {
            base_target: Time::from_us(50),
            endpoint_target: Time::from_us(60),
            flow_scaling: false,
            topology_scaling: false,
            initial_cwnd: 10.0,
            ..SwiftParams::default()
        };
        let mut s = Swift::new(p.clone(), 1000);
        s.on_ack(&ack(1000, 140.0, 100.0, 1));
        assert!((s.fabric.cwnd - 10.1).abs() < 1e-12);
        assert!((s.endpoint.cwnd - 256.0 * 0.68).abs() < 1e-9, "{}", s.endpoint.cwnd);
        assert_eq!(s.cwnd_packets(), 10.1);
        // Swift-v0: one window on the whole RTT (140 vs 50): cut by max_mdf.
        let mut v0 = Swift::new(SwiftParams { decompose: false, ..p }, 1000);
        v0.on_ack(&ack(1000, 140.0, 100.0, 1));
        assert!((v0.cwnd_packets() - 5.0).abs() < 1e-12);
    }

    #[test]
    fn profiles_differ_where_the_reference_says() {
        let h = SwiftParams::profile(Profile::Htsim);
        assert_eq!(h.base_target, Time::from_us(20));
        assert_eq!(h.fs_range, Time::from_us(100));
        assert_eq!(h.per_hop, Time(3_053_435));
        assert_eq!(h.retx_reset_threshold, 5);
        assert_eq!(SwiftParams::profile(Profile::Isekai).min_cwnd, 0.01);
        assert_eq!(SwiftParams::default().min_cwnd, 0.001);
        assert_eq!(SwiftParams::default().fs_min_cwnd, 0.001);
        assert_eq!(SwiftParams::profile(Profile::Isekai).fs_min_cwnd, 0.1);
        assert!(h.validate().is_ok() && SwiftParams::default().validate().is_ok());
    }
}
