//! DCQCN's reaction point (Zhu et al., SIGCOMM 2015; shared reference algorithms.md §5): the
//! sending NIC's rate limiter per flow, cut by congestion notification packets (CNPs) and
//! raised by a timer and a byte counter. The congestion point (RED marking at the switch) and
//! the notification point (the receiving NIC's CNPs, at most one per `cnp_interval`) live in
//! the simulator; this state machine takes the CNPs, the bytes sent and the time.
//!
//! - **Cut**: `R_T = R_C; R_C = R_C·(1 − α/2)`, then the increase stages restart.
//! - **α**: raised towards 1 by CNPs, `α = (1 − g)·α + g`, and decayed by `(1 − g)` every `τ′`
//!   without one.
//! - **Increase**: on each expiry of the timer (every `T` from the last cut) or the byte counter
//!   (every `B` bytes sent), fast recovery `R_C = (R_T + R_C)/2` first, then additive increase
//!   (`R_T += R_AI`), then hyper increase (`R_T += R_HAI`), with `R_C` halfway to `R_T` each time;
//!   both at most the line rate, `R_C` at least `min_rate`.
//!
//! Two profiles set the structure and the defaults of the numbers, every number overridable:
//! - `paper`: the paper's RP. Each CNP cuts at once (the NP spaces them by 50 µs), using the α
//!   from before it, then raises α; α decays every τ′ = 55 µs after the last CNP; timer T =
//!   55 µs and byte counter B = 10 MB with their stages counted separately: fast recovery while
//!   both stand below F = 5 expiries, additive while one does, hyper (`R_HAI` times the
//!   smaller stage's excess over F, plus one, as QCN grows it) once both are past F.
//! - `mellanox`: the HPCC simulator's `CC_MODE 1`, which its authors say production NICs run
//!   (reference §5.2). A CNP only sets flags: α ticks every τ′ = 1 µs from the first CNP
//!   (`α = (1 − g)α + g` if a CNP came since the last tick, else `(1 − g)α`), and a decrease check
//!   every 4 µs cuts if one came; the first CNP sets α = 1. Timer only (T = 300 µs); with F = 1 the
//!   first expiry after a cut is fast recovery, the second additive, the rest hyper (a constant
//!   `R_HAI`); `R_T` is reset to `R_C` at a cut only if the rate rose since the last cut.
//!   `R_AI`/`R_HAI` are 5/50 Mbps at 25 Gbps, scaled with the line rate (`scale_rate`).
//!
//! Before the first CNP no timer runs: the flow sends at line rate and α keeps `alpha_init`.
//! Timers are processed lazily, in time order, whenever the controller is told the time
//! (`advance`, which the transport calls before it asks for the rate), and `next_change` says
//! when the next rate change is due, so that a flow waiting for its pacer hears of an increase
//! on time.

use crate::registry::{Algorithm, Controller, EcnMarking, Kind, Needs, Path};
use crate::{Bytes, Completion, Metrics, ParamError, Rate, RateController, Time};
use serde::{Deserialize, Serialize};

/// Which reaction point (and default numbers) a DCQCN connection runs.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// The DCQCN paper (reference §5.1, §5.2 "DCQCN paper defaults").
    #[default]
    Paper,
    /// The HPCC simulator's Mellanox-style DCQCN (reference §5.2, `CC_MODE 1`).
    Mellanox,
}

impl Profile {
    /// Its switches' marking (reference §5.2): the paper's Kmin 5 KB, Kmax 200 KB, Pmax 1 %;
    /// the HPCC simulator's Kmin 100 KB and Kmax 400 KB at 25 Gbps, scaled with the port's rate,
    /// Pmax 0.2.
    pub fn marking(self) -> EcnMarking {
        match self {
            Profile::Paper => EcnMarking { kmin: Bytes(5_000), kmax: Bytes(200_000), pmax: 0.01, scale_rate: None },
            Profile::Mellanox => EcnMarking { kmin: Bytes(100_000), kmax: Bytes(400_000), pmax: 0.2, scale_rate: Some(Rate::from_gbps(25)) },
        }
    }
}

/// DCQCN's parameters (reference §5.2). Switch marking (Kmin, Kmax, Pmax) is `switch.ecn`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DcqcnParams {
    /// The profile the structure and the other values' defaults come from.
    pub profile: Profile,
    /// α's gain g.
    pub g: f64,
    /// α before the first CNP (the first CNP sets it under `mellanox`).
    pub alpha_init: f64,
    /// τ′: α's timer.
    pub alpha_timer: Time,
    /// T: the rate-increase timer.
    pub increase_timer: Time,
    /// B: the rate-increase byte counter; 0: off.
    pub byte_counter: Bytes,
    /// F: fast-recovery steps.
    pub fast_recovery: u32,
    /// R_AI and R_HAI: additive and hyper increase of the target rate.
    pub rate_ai: Rate,
    pub rate_hai: Rate,
    /// `rate_ai` and `rate_hai` are for a NIC of this line rate and scale with the line rate
    /// (the HPCC simulator: 25 Gbps); absent: as given.
    pub scale_rate: Option<Rate>,
    /// Floor on the rate.
    pub min_rate: Rate,
    /// How often the RP checks for CNPs and cuts (`mellanox`: 4 µs); 0: at each CNP (`paper`).
    pub decrease_interval: Time,
    /// NP: at most one CNP per flow per this interval (paper: 50 µs); 0: one for every marked
    /// packet (the HPCC simulator's CNP flag on each ACK).
    pub cnp_interval: Time,
}

impl Default for DcqcnParams {
    fn default() -> Self {
        DcqcnParams::profile(Profile::Paper)
    }
}

impl DcqcnParams {
    /// The values of a profile (reference §5.2). The paper publishes no R_HAI; 200 Mbps is the
    /// DCQCN authors' simulator's sample configuration (Zhu-ns3), as is `min_rate` 100 Mbps.
    pub fn profile(profile: Profile) -> DcqcnParams {
        match profile {
            Profile::Paper => DcqcnParams {
                profile,
                g: 1.0 / 256.0,
                alpha_init: 1.0,
                alpha_timer: Time::from_us(55),
                increase_timer: Time::from_us(55),
                byte_counter: Bytes(10_000_000),
                fast_recovery: 5,
                rate_ai: Rate::from_mbps(40),
                rate_hai: Rate::from_mbps(200),
                scale_rate: None,
                min_rate: Rate::from_mbps(100),
                decrease_interval: Time::ZERO,
                cnp_interval: Time::from_us(50),
            },
            Profile::Mellanox => DcqcnParams {
                profile,
                g: 1.0 / 256.0,
                alpha_init: 1.0,
                alpha_timer: Time::from_us(1),
                increase_timer: Time::from_us(300),
                byte_counter: Bytes(0),
                fast_recovery: 1,
                rate_ai: Rate::from_mbps(5),
                rate_hai: Rate::from_mbps(50),
                scale_rate: Some(Rate::from_gbps(25)),
                min_rate: Rate::from_gbps(1),
                decrease_interval: Time::from_us(4),
                cnp_interval: Time::ZERO,
            },
        }
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(ParamError::new("g", self.g, "a gain in (0, 1]"));
        }
        if !(0.0..=1.0).contains(&self.alpha_init) {
            return Err(ParamError::new("alpha_init", self.alpha_init, "in [0, 1]"));
        }
        for (field, t) in [("alpha_timer", self.alpha_timer), ("increase_timer", self.increase_timer)] {
            if t == Time::ZERO {
                return Err(ParamError::new(field, t, "a positive time"));
            }
        }
        if self.min_rate == Rate::ZERO {
            return Err(ParamError::new("min_rate", self.min_rate, "must be positive"));
        }
        if self.scale_rate == Some(Rate::ZERO) {
            return Err(ParamError::new("scale_rate", Rate::ZERO, "a positive rate, or absent"));
        }
        Ok(())
    }
}

impl Algorithm for DcqcnParams {
    const KIND: Kind = Kind::Rate;
    /// DCQCN paces every packet with its NIC's rate limiter and keeps no window (the HPCC
    /// simulator's `dcqcn`); it acts on CNPs, which ECN marks by its profile's thresholds cause.
    fn needs(&self) -> Needs {
        Needs {
            ecn: true,
            ecn_profile: Some(self.profile.marking()),
            ack_per_packet: true,
            rate_limiter: true,
            cnp_interval: Some(self.cnp_interval),
            ..Needs::default()
        }
    }
    fn validate(&self) -> Result<(), ParamError> {
        DcqcnParams::validate(self)
    }
    fn build(&self, path: &Path) -> Controller {
        Controller::Rate(Box::new(Dcqcn::new(self.clone(), path.line_rate)))
    }
    fn defaults_like(&self) -> Self {
        DcqcnParams::profile(self.profile)
    }
}

/// One DCQCN reaction point.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    pub params: DcqcnParams,
    line: f64,
    rate_ai: f64,
    rate_hai: f64,
    min_rate: f64,
    /// Current and target rate, bits per second.
    rc: f64,
    rt: f64,
    alpha: f64,
    /// Timer and byte-counter expiries since the last cut.
    t_stage: u32,
    b_stage: u32,
    /// Bytes sent since the byte counter last expired or was reset.
    bytes: u64,
    /// Next expiry of α's timer, the decrease check and the increase timer (`Time::MAX`: not
    /// running).
    next_alpha: Time,
    next_decrease: Time,
    next_increase: Time,
    /// `mellanox`: a CNP came since α's last tick, since the last decrease check.
    cnp_for_alpha: bool,
    cnp_for_decrease: bool,
    cuts: u64,
}

impl Dcqcn {
    /// A connection at `line_rate`, starting at it.
    pub fn new(params: DcqcnParams, line_rate: Rate) -> Dcqcn {
        let line = line_rate.bps() as f64;
        let scale = params.scale_rate.map_or(1.0, |r| line / r.bps() as f64);
        Dcqcn {
            line,
            rate_ai: params.rate_ai.bps() as f64 * scale,
            rate_hai: params.rate_hai.bps() as f64 * scale,
            min_rate: (params.min_rate.bps() as f64).min(line),
            rc: line,
            rt: line,
            alpha: params.alpha_init,
            t_stage: 0,
            b_stage: 0,
            bytes: 0,
            next_alpha: Time::MAX,
            next_decrease: Time::MAX,
            next_increase: Time::MAX,
            cnp_for_alpha: false,
            cnp_for_decrease: false,
            cuts: 0,
            params,
        }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    pub fn target_rate(&self) -> Rate {
        Rate(self.rt.round() as u64)
    }

    /// Cuts so far.
    pub fn cuts(&self) -> u64 {
        self.cuts
    }

    fn mellanox(&self) -> bool {
        self.params.profile == Profile::Mellanox
    }

    /// The cut, at `at`: `R_T = R_C` (under `mellanox` only if the rate rose since the last
    /// cut), `R_C = R_C·(1 − α/2)`, and the increase stages restart; under `paper` α then rises
    /// and its decay timer restarts.
    fn decrease(&mut self, at: Time) {
        if !self.mellanox() || self.t_stage > 0 || self.b_stage > 0 {
            self.rt = self.rc;
        }
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(self.min_rate);
        self.t_stage = 0;
        self.b_stage = 0;
        self.bytes = 0;
        self.next_increase = at + self.params.increase_timer;
        self.cuts += 1;
        if !self.mellanox() {
            self.alpha = (1.0 - self.params.g) * self.alpha + self.params.g;
            self.next_alpha = at + self.params.alpha_timer;
        }
    }

    /// One increase event (a timer or byte-counter expiry, already counted in its stage).
    fn increase(&mut self) {
        let f = self.params.fast_recovery;
        let step = if self.mellanox() {
            // HPCC simulator: the stage before this expiry against F.
            match (self.t_stage - 1).cmp(&f) {
                std::cmp::Ordering::Less => 0.0,
                std::cmp::Ordering::Equal => self.rate_ai,
                std::cmp::Ordering::Greater => self.rate_hai,
            }
        } else {
            let counted =
                if self.params.byte_counter.0 > 0 { (self.t_stage.min(self.b_stage), self.t_stage.max(self.b_stage)) } else { (self.t_stage, self.t_stage) };
            match counted {
                (_, hi) if hi < f => 0.0,
                (lo, _) if lo < f => self.rate_ai,
                (lo, _) => self.rate_hai * (lo - f + 1) as f64,
            }
        };
        self.rt = (self.rt + step).min(self.line);
        self.rc = ((self.rt + self.rc) / 2.0).min(self.line);
    }

    /// Whether nothing an increase does can change the rates any more (both at line rate):
    /// the increase timer's expiries are then only counted.
    fn saturated(&self) -> bool {
        self.rc >= self.line && self.rt >= self.line
    }

    /// Runs every timer expiry up to and including `now`, in time order (α's tick before a
    /// decrease check before an increase at the same instant, as the HPCC simulator orders
    /// them).
    pub fn advance(&mut self, now: Time) {
        loop {
            let next = self.next_alpha.min(self.next_decrease).min(self.next_increase);
            if next > now {
                break;
            }
            if next == self.next_alpha {
                self.alpha_ticks(now.min(self.next_decrease).min(self.next_increase));
            } else if next == self.next_decrease {
                if std::mem::take(&mut self.cnp_for_decrease) {
                    self.decrease(next);
                    self.next_decrease = next + self.params.decrease_interval;
                } else {
                    // Checks without a CNP do nothing: skip to the first one after `now`.
                    let d = self.params.decrease_interval.ps();
                    self.next_decrease = Time(next.ps() + ((now.ps() - next.ps()) / d + 1) * d);
                }
            } else if self.saturated() {
                let t = self.params.increase_timer.ps();
                let k = (now.ps() - next.ps()) / t + 1;
                self.t_stage = self.t_stage.saturating_add(k.min(u32::MAX as u64) as u32);
                self.next_increase = Time(next.ps() + k * t);
            } else {
                self.t_stage = self.t_stage.saturating_add(1);
                self.increase();
                self.next_increase = next + self.params.increase_timer;
            }
        }
    }

    /// α's ticks from `next_alpha` up to `until`: the first takes a pending CNP (`mellanox`),
    /// the rest decay it, in closed form.
    fn alpha_ticks(&mut self, until: Time) {
        let g = self.params.g;
        let tau = self.params.alpha_timer.ps();
        let mut ticks = (until.ps() - self.next_alpha.ps()) / tau + 1;
        if std::mem::take(&mut self.cnp_for_alpha) {
            self.alpha = (1.0 - g) * self.alpha + g;
            ticks -= 1;
        }
        self.alpha *= (1.0 - g).powf(ticks as f64);
        self.next_alpha = Time(self.next_alpha.ps() + (until.ps() - self.next_alpha.ps()) / tau * tau + tau);
    }
}

impl RateController for Dcqcn {
    /// Completions carry nothing DCQCN uses: its feedback is CNPs.
    fn on_completion(&mut self, c: &Completion) {
        self.advance(c.now);
    }

    fn rate(&self) -> Rate {
        Rate(self.rc.round() as u64)
    }

    fn metrics(&self) -> Metrics {
        Metrics { rate: Some(self.rate()), at_min_rate: Some(self.rc <= self.min_rate), ..Metrics::default() }
    }

    fn advance(&mut self, now: Time) {
        Dcqcn::advance(self, now)
    }

    /// A CNP arrived: a cut now (`decrease_interval` 0) or at the next decrease check.
    fn on_congestion_notification(&mut self, now: Time) {
        self.advance(now);
        let first = self.next_alpha == Time::MAX;
        if self.mellanox() {
            if first {
                // The HPCC simulator's first CNP: α = 1 and α's timer starts; its rate on the
                // first CNP is the rate (no extra cut).
                self.alpha = 1.0;
                self.next_alpha = now + self.params.alpha_timer;
            } else {
                self.cnp_for_alpha = true;
            }
        }
        if self.params.decrease_interval == Time::ZERO {
            self.decrease(now);
        } else {
            if self.next_decrease == Time::MAX {
                self.next_decrease = now + self.params.decrease_interval;
            }
            self.cnp_for_decrease = true;
        }
    }

    /// Bytes handed to the NIC: the byte counter.
    fn on_sent(&mut self, now: Time, bytes: u64) {
        self.advance(now);
        let b = self.params.byte_counter.0;
        if b == 0 || self.cuts == 0 {
            return;
        }
        self.bytes += bytes;
        while self.bytes >= b {
            self.bytes -= b;
            self.b_stage = self.b_stage.saturating_add(1);
            self.increase();
        }
    }

    fn next_change(&self) -> Option<Time> {
        let decrease = if self.cnp_for_decrease { self.next_decrease } else { Time::MAX };
        let increase = if self.saturated() { Time::MAX } else { self.next_increase };
        Some(decrease.min(increase)).filter(|&t| t < Time::MAX)
    }
}
