//! NSCC, Ultra Ethernet's network-signal congestion control (UEC 1.0 specification §3.6.13;
//! SMaRTT, Bonato et al., 2024, its basis): a window driven by queuing delay (the RTT sample
//! less the connection's base RTT) and ECN together, read here as htsim's `htsim_uec` runs it
//! (uet-htsim `sim/uec.cpp`: `updateCwndOnAck_NSCC`, `updateCwndOnNack_NSCC`, `quick_adapt`,
//! `initNsccParams`). Each ACK falls in one of four quadrants:
//!
//! | | delay below the target | delay at or above it |
//! |---|---|---|
//! | no ECN echo | proportional increase, `α · bytes · (target − delay)`, or fast increase while the delay stays under 1 µs for a window | fair increase, `fi · bytes` |
//! | ECN echo | nothing (the packet's path was congested, not the connection: the load balancer moves it) | multiplicative decrease by the average delay's excess, at most once per base RTT |
//!
//! Increases accumulate and are applied together (the *fulfilment*: the window grows by the
//! accumulated bytes over the window) once 8 MTU have been acknowledged or a fabric RTT has
//! passed, with an extra `η` once per fabric RTT. **QuickAdapt**: once per base RTT plus target,
//! if a NACK came or the delay exceeded four targets and less than `maxwnd >> qa_gate` was
//! delivered in that time, the window drops to what was delivered, and the marks of the
//! packets then in flight are ignored. A NACK takes its bytes off the window.
//!
//! The constants scale with the fabric as `initNsccParams` scales them: against a reference
//! fabric of 100 Gbps and 12 µs, by the ratio of BDPs (`a`) and of the target to 12 µs (`b`).

use crate::hpcc::BaseRtt;
use crate::registry::{Algorithm, Controller, Kind, Needs, Path};
use crate::{AckEvent, Loss, ParamError, Rate, Time, WindowController};
use serde::{Deserialize, Serialize};

/// `cc` parameters of NSCC (htsim_uec's defaults).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NsccParams {
    /// The queuing delay NSCC aims at; `None`: the fabric's largest unloaded RTT (htsim's
    /// default without trimming; with trimming it takes three quarters of it).
    pub target_delay: Option<Time>,
    /// QuickAdapt acts only when less than `maxwnd >> qa_gate` was delivered in its period
    /// (htsim `-qa_gate`: 3).
    pub qa_gate: u32,
    pub quick_adapt: bool,
    /// The multiplicative decrease's weight of the delay's excess (htsim `_gamma`).
    pub gamma: f64,
    /// The weight of a new sample in the average delay (htsim `_delay_alpha`).
    pub delay_alpha: f64,
    /// The first window; `None`: the most it may reach, 1.5 base BDP (htsim `-cwnd`).
    pub initial_cwnd: Option<u64>,
}

impl Default for NsccParams {
    fn default() -> Self {
        NsccParams { target_delay: None, qa_gate: 3, quick_adapt: true, gamma: 0.8, delay_alpha: 0.0125, initial_cwnd: None }
    }
}

impl NsccParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.target_delay == Some(Time::ZERO) {
            return Err(ParamError::new("target_delay", "0ns", "a positive time (or absent: the fabric's RTT)"));
        }
        if self.qa_gate > 16 {
            return Err(ParamError::new("qa_gate", self.qa_gate, "0 to 16 (QuickAdapt below maxwnd / 2^qa_gate)"));
        }
        if !(self.gamma > 0.0 && self.gamma <= 1.0) {
            return Err(ParamError::new("gamma", self.gamma, "a fraction in (0, 1]"));
        }
        if !(self.delay_alpha > 0.0 && self.delay_alpha <= 1.0) {
            return Err(ParamError::new("delay_alpha", self.delay_alpha, "a fraction in (0, 1]"));
        }
        if self.initial_cwnd == Some(0) {
            return Err(ParamError::new("initial_cwnd", 0, "a positive number of bytes (or absent: 1.5 BDP)"));
        }
        Ok(())
    }
}

/// The reference fabric the constants are given for (`initNsccParams`): 100 Gbps, 12 µs.
const REFERENCE_RATE: Rate = Rate(100_000_000_000);
const REFERENCE_RTT: Time = Time::from_us(12);
/// Fast increase runs while the delay stays below this (`fast_increase`).
const FAST_INCREASE_BELOW: Time = Time::from_us(1);

/// The bandwidth-delay product of `rtt` at `rate`, in bytes.
fn bdp(rtt: Time, rate: Rate) -> f64 {
    rtt.ps() as f64 * 1e-12 * rate.0 as f64 / 8.0
}

/// One connection's NSCC state. Windows are in bytes, as htsim keeps them (whole bytes: each
/// step truncates as its integer arithmetic does).
#[derive(Clone, Debug)]
pub struct Nscc {
    p: NsccParams,
    mtu: u64,
    target: Time,
    /// The fabric's largest unloaded RTT: the fulfilment and η's period.
    network_rtt: Time,
    line_rate: Rate,
    /// Proportional increase per byte per picosecond below the target, fair increase per byte,
    /// η, and fast increase per byte (`_alpha`, `_fi`, `_eta`, `_fi_scale`).
    alpha: f64,
    fi: f64,
    eta: u64,
    fi_scale: f64,
    /// The connection's least RTT seen, and the most its window may reach (1.5 BDP at it).
    base_rtt: Time,
    maxwnd: u64,
    pub cwnd: u64,
    /// The average queuing delay (ps), and whether the last sample was at or above the target.
    avg_delay: f64,
    over_target: bool,
    /// Increases accumulated for the next fulfilment, and the bytes acknowledged towards it.
    inc_bytes: u64,
    received_bytes: u64,
    last_adjust: Time,
    last_decrease: Time,
    fast_count: u64,
    fast_increasing: bool,
    /// QuickAdapt: bytes delivered in its period, the period's end (`None` before the first),
    /// a NACK asks for it, and the bytes whose marks it ignores after acting.
    achieved_bytes: u64,
    qa_end: Option<Time>,
    qa_triggered: bool,
    bytes_to_ignore: u64,
    bytes_ignored: u64,
}

impl Nscc {
    /// NSCC for a connection on `path`: `mtu` its full packet's payload; the connection's base
    /// RTT is `path.base_rtt` when known, else the fabric's (`initNscc`).
    pub fn new(p: NsccParams, path: &Path) -> Nscc {
        // A fabric without any delay still gets finite constants.
        let network_rtt = path.max_base_rtt.max(path.base_rtt).max(Time::from_ns(1));
        let base_rtt = if path.base_rtt > Time::ZERO { path.base_rtt } else { network_rtt };
        let target = p.target_delay.unwrap_or(network_rtt);
        let a = bdp(network_rtt, path.line_rate) / bdp(REFERENCE_RTT, REFERENCE_RATE);
        let b = target.ps() as f64 / REFERENCE_RTT.ps() as f64;
        let mtu = path.mss;
        let maxwnd = (1.5 * bdp(base_rtt, path.line_rate)) as u64;
        Nscc {
            alpha: 4.0 * mtu as f64 * a * b / target.ps() as f64,
            fi: 5.0 * mtu as f64 * a,
            eta: (0.15 * mtu as f64 * a) as u64,
            fi_scale: 0.25 * a,
            cwnd: p.initial_cwnd.unwrap_or(maxwnd),
            p,
            mtu,
            target,
            network_rtt,
            line_rate: path.line_rate,
            base_rtt,
            maxwnd,
            avg_delay: 0.0,
            over_target: false,
            inc_bytes: 0,
            received_bytes: 0,
            last_adjust: Time::ZERO,
            last_decrease: Time::ZERO,
            fast_count: 0,
            fast_increasing: false,
            achieved_bytes: 0,
            qa_end: None,
            qa_triggered: false,
            bytes_to_ignore: 0,
            bytes_ignored: 0,
        }
    }

    /// An acknowledgement at `now` of `bytes` newly delivered, with its ECN echo and RTT sample
    /// (`None`: the sample is not valid, a retransmission's), `in_flight` bytes outstanding
    /// after it (`processAck`, `updateCwndOnAck_NSCC`).
    pub fn on_ack(&mut self, now: Time, bytes: u64, ecn: bool, rtt: Option<Time>, in_flight: u64) {
        self.achieved_bytes += bytes;
        self.received_bytes += bytes;
        self.bytes_ignored += bytes;
        let delay = match rtt {
            Some(rtt) => {
                self.lower_base_rtt(rtt);
                if rtt >= self.base_rtt {
                    self.average_delay(rtt - self.base_rtt, ecn);
                    (rtt - self.base_rtt).ps() as f64
                } else {
                    self.avg_delay
                }
            }
            None => self.avg_delay,
        };
        let target = self.target.ps() as f64;
        self.over_target = delay >= target;
        if self.quick_adapt(false, ecn, delay, now, in_flight) {
            return;
        }
        match (ecn, delay >= target) {
            (false, true) => self.inc_bytes += (self.fi * bytes as f64) as u64,
            (false, false) => self.proportional_increase(bytes, delay),
            (true, true) => self.multiplicative_decrease(now),
            (true, false) => {}
        }
        self.bound();
        if self.received_bytes > 8 * self.mtu || now - self.last_adjust.min(now) > self.network_rtt {
            self.fulfil(now);
        }
        self.bound();
    }

    /// A NACK at `now` of `bytes` (a trimmed packet's), `in_flight` bytes outstanding
    /// (`updateCwndOnNack_NSCC`): the delay is taken to be a fabric RTT above the base, and
    /// QuickAdapt acts, else the window loses the NACKed bytes.
    pub fn on_nack(&mut self, now: Time, bytes: u64, in_flight: u64) {
        self.bytes_ignored += bytes;
        self.average_delay(self.network_rtt, true);
        self.qa_triggered = true;
        if !self.quick_adapt(true, true, 0.0, now, in_flight) {
            self.cwnd = self.cwnd.saturating_sub(bytes);
            self.bound();
        }
    }

    /// The average delay (`update_delay`): a sample above the target without a mark pulls it
    /// towards a quarter of the base RTT (the queue was another path's), any other towards the
    /// sample.
    fn average_delay(&mut self, delay: Time, ecn: bool) {
        let w = self.p.delay_alpha;
        let toward = if !ecn && delay > self.target { self.base_rtt.ps() as f64 * 0.25 } else { delay.ps() as f64 };
        self.avg_delay = w * toward + (1.0 - w) * self.avg_delay;
    }

    /// A lower RTT than any before is the new base, and 1.5 times its BDP the most the window
    /// may reach (`update_base_rtt`).
    fn lower_base_rtt(&mut self, rtt: Time) {
        if rtt < self.base_rtt {
            self.base_rtt = rtt;
            self.maxwnd = (1.5 * bdp(rtt, self.line_rate)) as u64;
        }
    }

    /// QuickAdapt (`quick_adapt`): true if it acted or the ACK's mark is one it ignores, and
    /// the accumulated increase is dropped.
    fn quick_adapt(&mut self, loss: bool, ecn: bool, delay: f64, now: Time, in_flight: u64) -> bool {
        if !self.p.quick_adapt {
            return false;
        }
        let mut done = false;
        if self.bytes_ignored < self.bytes_to_ignore && ecn {
            done = true;
        } else if self.qa_end.is_none_or(|end| now > end) {
            let slow = self.achieved_bytes < self.maxwnd >> self.p.qa_gate;
            if self.qa_end.is_some() && (self.qa_triggered || loss || delay > 4.0 * self.target.ps() as f64) && slow {
                self.cwnd = self.achieved_bytes.max(self.mtu);
                (self.bytes_to_ignore, self.bytes_ignored, self.qa_triggered) = (in_flight, 0, false);
                done = true;
            }
            self.achieved_bytes = 0;
            self.qa_end = Some(now + self.base_rtt + self.target);
        }
        if done {
            (self.inc_bytes, self.received_bytes) = (0, 0);
        }
        done
    }

    /// Below the target: fast increase while the delay stays under 1 µs for a window, else
    /// `α · bytes · (target − delay)` (`proportional_increase`, `fast_increase`).
    fn proportional_increase(&mut self, bytes: u64, delay: f64) {
        if delay < FAST_INCREASE_BELOW.ps() as f64 {
            self.fast_count += bytes;
            if self.fast_count > self.cwnd || self.fast_increasing {
                self.cwnd += (bytes as f64 * self.fi_scale) as u64;
                self.fast_increasing = true;
                return;
            }
        } else {
            self.fast_count = 0;
        }
        self.fast_increasing = false;
        self.inc_bytes += (self.alpha * bytes as f64 * (self.target.ps() as f64 - delay)) as u64;
    }

    /// With a mark and the delay at or above the target: at most once per base RTT, the window
    /// shrinks by `γ` times the average delay's excess over it, at most by half
    /// (`multiplicative_decrease`).
    fn multiplicative_decrease(&mut self, now: Time) {
        (self.fast_increasing, self.fast_count) = (false, 0);
        let (avg, target) = (self.avg_delay, self.target.ps() as f64);
        if avg > target && now - self.last_decrease.min(now) > self.base_rtt {
            let factor = (1.0 - self.p.gamma * (avg - target) / avg).max(0.5);
            self.cwnd = ((self.cwnd as f64 * factor) as u64).max(self.mtu);
            self.last_decrease = now;
        }
    }

    /// The accumulated increase over the window, and η once per fabric RTT
    /// (`fulfill_adjustment`).
    fn fulfil(&mut self, now: Time) {
        self.cwnd += self.inc_bytes / self.cwnd;
        if now - self.last_adjust.min(now) >= self.network_rtt {
            self.cwnd += self.eta;
            self.last_adjust = now;
        }
        (self.inc_bytes, self.received_bytes) = (0, 0);
    }

    fn bound(&mut self) {
        self.cwnd = self.cwnd.clamp(self.mtu, self.maxwnd.max(self.mtu));
    }
}

impl WindowController for Nscc {
    fn on_ack(&mut self, a: &AckEvent) {
        Nscc::on_ack(self, a.now, a.acked_bytes, a.ece, a.rtt, a.snd_nxt - a.snd_una);
    }

    /// On the window transport a loss it repairs stands for a NACK of one packet; a timeout
    /// takes one packet off the window as htsim's retransmission does
    /// (`mark_packet_for_retransmission`).
    fn on_loss(&mut self, loss: Loss, flight_bytes: u64, now: Time) {
        match loss {
            Loss::FastRetransmit => self.on_nack(now, self.mtu, flight_bytes),
            Loss::Timeout => self.cwnd = self.cwnd.saturating_sub(self.mtu).max(self.mtu),
        }
    }

    fn cwnd(&self) -> u64 {
        self.cwnd
    }

    fn over_target(&self) -> Option<bool> {
        Some(self.over_target)
    }
}

impl Algorithm for NsccParams {
    const KIND: Kind = Kind::Window;
    /// Every packet acknowledged at once (UET's SACK per packet at most 16 KB apart), ECN
    /// marking and RTT samples both, and the fabric's largest unloaded RTT, which its constants
    /// scale with.
    fn needs(&self) -> Needs {
        Needs { ack_per_packet: true, ecn: true, delay: true, base_rtt: Some(BaseRtt::Max), ..Needs::default() }
    }
    fn validate(&self) -> Result<(), ParamError> {
        NsccParams::validate(self)
    }
    fn build(&self, path: &Path) -> Controller {
        Controller::Window(Box::new(Nscc::new(self.clone(), path)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u64 = 4096;
    const US: fn(u64) -> Time = Time::from_us;

    /// 100 Gbps and 12 µs, the reference fabric: `a = b = 1`, the target 12 µs, `α = 4·MTU /
    /// 12 µs`, `fi = 5·MTU`, `η = 614 B`, fast increase a quarter of each ACK's bytes, and
    /// `maxwnd` 1.5 × 150 000 B; starting from 100 000 B.
    fn nscc(p: NsccParams) -> Nscc {
        let path = Path { line_rate: Rate(100_000_000_000), mss: MTU, segment_bytes: MTU, base_rtt: US(12), max_base_rtt: US(12) };
        Nscc::new(NsccParams { initial_cwnd: Some(100_000), ..p }, &path)
    }

    /// An ACK of one MTU at `at` µs whose RTT is the base plus `delay_ns`.
    fn ack(n: &mut Nscc, at: u64, delay_ns: u64, ecn: bool) {
        n.on_ack(US(at), MTU, ecn, Some(US(12) + Time::from_ns(delay_ns)), 50_000);
    }

    #[test]
    fn the_constants_scale_with_the_fabric() {
        let n = nscc(NsccParams::default());
        assert_eq!((n.target, n.maxwnd, n.eta, n.fi, n.fi_scale), (US(12), 225_000, 614, 20_480.0, 0.25));
        assert!((n.alpha * 12e6 - 4.0 * MTU as f64).abs() < 1e-6);
        let path = Path { line_rate: Rate(400_000_000_000), mss: MTU, segment_bytes: MTU, base_rtt: US(6), max_base_rtt: US(6) };
        let n = Nscc::new(NsccParams::default(), &path);
        assert_eq!((n.target, n.cwnd, n.eta), (US(6), 450_000, 1228), "twice the BDP: a = 2; the first window 1.5 BDP");
    }

    /// No mark, delay at or above the target: each ACK adds `fi · bytes` = 5·4096·4096 B² to
    /// the increase, applied when more than 8 MTU have come back (the 9th ACK):
    /// 9 × 83 886 080 / 100 000 = 7 549 B.
    #[test]
    fn unmarked_above_the_target_is_a_fair_increase() {
        let mut n = nscc(NsccParams::default());
        for at in 1..=8 {
            ack(&mut n, at, 15_000, false);
            assert_eq!(n.cwnd, 100_000, "accumulated, not yet applied");
        }
        ack(&mut n, 9, 15_000, false);
        assert_eq!(n.cwnd, 107_549);
    }

    /// No mark, 3 µs of delay against 12: each ACK adds `α · bytes · (target − delay)` =
    /// 4·4096·4096·9/12 B²; nine of them over 100 000 B are 4 529 B.
    #[test]
    fn unmarked_below_the_target_is_a_proportional_increase() {
        let mut n = nscc(NsccParams::default());
        for at in 1..=9 {
            ack(&mut n, at, 3_000, false);
        }
        assert_eq!(n.cwnd, 104_529);
    }

    /// Under 1 µs of delay for a window's worth of ACKs (more than 8 192 B at a window of
    /// 8 192), each ACK adds a quarter of its bytes at once; a sample above 1 µs ends it.
    #[test]
    fn a_window_under_one_microsecond_is_a_fast_increase() {
        let mut n = nscc(NsccParams { initial_cwnd: Some(8192), ..NsccParams::default() });
        n.cwnd = 8192;
        ack(&mut n, 1, 500, false);
        ack(&mut n, 2, 500, false);
        assert_eq!(n.cwnd, 8192);
        ack(&mut n, 3, 500, false);
        assert_eq!(n.cwnd, 9216, "12 288 B came back under 1 µs: a quarter of the ACK's 4 096");
        ack(&mut n, 4, 500, false);
        assert_eq!(n.cwnd, 10_240);
        ack(&mut n, 5, 3_000, false);
        assert!(!n.fast_increasing);
        assert_eq!(n.cwnd, 10_240, "back to the proportional increase, accumulated");
    }

    /// Marked, with the average delay 24 µs against a target of 12 (each sample taken whole):
    /// the window shrinks by `γ · (24 − 12) / 24` = 40 %, once per base RTT. At 20 µs a fabric
    /// RTT has passed since the start, so η (614 B) is added after the cut.
    #[test]
    fn marked_above_the_target_is_a_multiplicative_decrease_once_per_base_rtt() {
        let mut n = nscc(NsccParams { delay_alpha: 1.0, ..NsccParams::default() });
        ack(&mut n, 20, 24_000, true);
        assert_eq!(n.cwnd, 60_000 + 614);
        ack(&mut n, 25, 24_000, true);
        assert_eq!(n.cwnd, 60_614, "within a base RTT of the last cut");
        ack(&mut n, 33, 24_000, true);
        assert_eq!(n.cwnd, 60_614 * 6 / 10 + 614);
    }

    /// Marked but below the target: the mark is the path's, not the connection's; the window
    /// stays.
    #[test]
    fn marked_below_the_target_changes_nothing() {
        let mut n = nscc(NsccParams::default());
        for at in 1..=9 {
            ack(&mut n, at, 3_000, true);
        }
        assert_eq!(n.cwnd, 100_000);
    }

    /// A NACK after QuickAdapt's first period (12 + 12 µs from the first ACK at 1 µs), in which
    /// 4 096 B were delivered, below `maxwnd >> 3` = 28 125 B: the window drops to them, and
    /// the NACKs of the 20 000 B then in flight are ignored. Within a period a NACK takes its
    /// bytes off instead.
    #[test]
    fn a_nack_is_a_quick_adapt_or_a_decrease() {
        let mut n = nscc(NsccParams::default());
        ack(&mut n, 1, 3_000, false);
        ack(&mut n, 2, 3_000, false);
        n.on_nack(US(30), MTU, 20_000);
        assert_eq!(n.cwnd, MTU);
        n.cwnd = 50_000;
        n.on_nack(US(31), MTU, 20_000);
        assert_eq!(n.cwnd, 50_000, "a packet that was in flight at the cut");
        let mut n = nscc(NsccParams::default());
        ack(&mut n, 1, 3_000, false);
        n.on_nack(US(5), MTU, 20_000);
        assert_eq!(n.cwnd, 100_000 - MTU);
        let mut off = nscc(NsccParams { quick_adapt: false, ..NsccParams::default() });
        off.on_nack(US(30), MTU, 20_000);
        assert_eq!(off.cwnd, 100_000 - MTU);
    }
}
