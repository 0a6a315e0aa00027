//! Ultra Ethernet's receiver credits (RCCC, `transport.congestion = "rccc"` or `"both"`), as
//! htsim's `htsim_uec` runs them (uet-htsim `sim/uec.cpp`: `UecSrc`'s credit, `UecSink::pull`,
//! `UecPullPacer`): three state machines without I/O.
//!
//! - [`Credit`], the sender's: it starts with a credit window (1.5 BDP) of *speculative*
//!   credit, which it drops at its first ACK, NACK or pull; it sends only with credit left (any
//!   credit: a packet may overspend it), and each packet carries its *pull target*, the
//!   cumulative credit it wants: what it has left to send and to resend (capped by the window
//!   and, with NSCC too, by its congestion window), beyond the credit it holds.
//! - [`Sink`], the receiver's per connection: the highest pull target heard and the credit
//!   granted so far (`latest_pull`), both in 256-byte quanta.
//! - [`PullPacer`], the receiving host's: it grants credit at 0.99 of its line rate, one pull
//!   of at most 4 MTUs' payload at a time, round-robin over the connections whose target is
//!   above their grant; a connection satisfied moves to a slower round that grants it one pull
//!   at a time until it holds a credit window beyond its target.
//! - [`Oversubscribed`], the receiving host's on an oversubscribed fabric: every 1.5 RTTs or so
//!   it scales the pacer's rate to the congestion the host's arrivals saw, ECN marks and packets
//!   trimmed before the last hop (`OversubscribedCC`).

use rttlab_cc::{Rate, Time};
use std::collections::VecDeque;

/// Credit is counted in quanta of this many bytes (`UEC_PULL_QUANTUM`).
pub const QUANTUM: i64 = 256;
/// A pull grants at most this many quanta: four MTUs of htsim's default 4096-byte payload
/// (`UecSink::_credit_per_pull`, fixed before the command line sets the MTU).
pub const PULL_QUANTA: u64 = 4 * 4096 / QUANTUM as u64;
/// The pacer grants credit at this fraction of the receiver's line rate (`main_uec.cpp`).
pub const PULL_RATE: f64 = 0.99;
/// A pull that grants nothing still holds the pacer this many quanta (1024 bytes).
const EMPTY_PULL_QUANTA: u64 = 4;

/// Bytes rounded up to whole quanta (`quantize_ceil`, C's division: a negative value rounds
/// towards zero).
fn quanta_ceil(bytes: i64) -> i64 {
    (bytes + QUANTUM - 1) / QUANTUM
}

/// The sender's credit (`UecSrc::_credit`, `_pull`, `_speculating`).
#[derive(Clone, Debug)]
pub struct Credit {
    /// Bytes the sender may still send; negative when the last packet overspent it.
    credit: i64,
    /// Sending on the credit it started with: no ACK, NACK or pull has come yet.
    speculating: bool,
    /// The highest pull heard (cumulative quanta).
    pull: i64,
    /// The credit window, bytes: the most credit held, and the most a target asks for.
    window: i64,
    /// A full packet on the wire, and a packet's headers.
    mtu: i64,
    header: u32,
    /// When the last request to send went (`Time::MAX`: never), and the least time between two
    /// (the fabric's largest unloaded RTT, `_network_rtt`).
    last_rts: Time,
    rts_gap: Time,
}

impl Credit {
    /// A sender with `window` bytes of speculative credit, sending packets of at most `mtu`
    /// bytes on the wire with `header` bytes of headers, asking again to send no more often
    /// than every `rts_gap`.
    pub fn new(window: u64, (mtu, header): (u32, u32), rts_gap: Time) -> Credit {
        Credit { credit: window as i64, speculating: true, pull: 0, window: window as i64, mtu: mtu as i64, header, last_rts: Time::MAX, rts_gap }
    }

    /// A packet's headers, bytes: its wire size is its payload and these.
    pub fn header(&self) -> u32 {
        self.header
    }

    /// Any credit left (`can_send_RCCC`).
    pub fn may_send(&self) -> bool {
        self.credit > 0
    }

    /// A packet of `wire` bytes went (`spendCredit`).
    pub fn spend(&mut self, wire: u32) {
        self.credit -= wire as i64;
    }

    /// The first ACK, NACK or pull: speculative credit left is dropped (`stopSpeculating`).
    pub fn stop_speculating(&mut self) {
        if self.speculating {
            self.speculating = false;
            self.credit = self.credit.min(0);
        }
    }

    /// A pull granting up to `pull` (cumulative quanta) came (`processPull`, `handlePull`).
    pub fn on_pull(&mut self, pull: u64) {
        self.stop_speculating();
        let pull = pull as i64;
        if pull > self.pull {
            self.credit = (self.credit + (pull - self.pull) * QUANTUM).min(self.window);
            self.pull = pull;
        }
    }

    /// The pull target a packet carries (`computePullTarget`), cumulative quanta: `backlog`
    /// bytes never sent and `resend` bytes to send again, at most `cwnd` and an MTU (NSCC's
    /// window, when it runs too) and the credit window, less the credit held; while
    /// speculating, at least an MTU when anything is left to send.
    pub fn pull_target(&self, backlog: u64, resend: u64, cwnd: Option<u64>) -> u64 {
        let mut want = (backlog.saturating_add(resend)).min(i64::MAX as u64) as i64;
        if let Some(cwnd) = cwnd {
            want = want.min(cwnd as i64 + self.mtu);
        }
        want = want.min(self.window) - self.credit;
        if self.speculating && want < self.mtu && backlog > 0 {
            want = self.mtu;
        }
        quanta_ceil(want + self.pull * QUANTUM).max(0) as u64
    }

    /// Whether a request to send (RTS) may go now: the sender has packets to resend, no
    /// credit, and sent none in the last `rts_gap` (`sendRTS`: no incast of RTSs). Taken
    /// when it is.
    pub fn request_to_send(&mut self, now: Time) -> bool {
        if self.may_send() || (self.last_rts != Time::MAX && now < self.last_rts + self.rts_gap) {
            return false;
        }
        self.last_rts = now;
        true
    }
}

/// A connection's receiver: what its sender wants and what it was granted (`UecSink`'s
/// `_highest_pull_target`, `_latest_pull`, `_in_pull`, `_in_slow_pull`).
#[derive(Clone, Debug, Default)]
pub struct Sink {
    highest_target: u64,
    latest_pull: u64,
    in_pull: bool,
    in_slow_pull: bool,
    /// In the pacer's queue of connections wanting credit.
    queued: bool,
}

impl Sink {
    /// Quanta wanted beyond those granted (`backlog`).
    fn backlog(&self) -> u64 {
        self.highest_target.saturating_sub(self.latest_pull)
    }

    /// Quanta granted beyond those wanted (`slowCredit`).
    fn slow_credit(&self) -> u64 {
        self.latest_pull.saturating_sub(self.highest_target)
    }

    /// A packet carrying pull target `target` arrived (`handlePullTarget`); true when the
    /// connection must join the pacer's queue.
    pub fn on_target(&mut self, target: u64) -> bool {
        if target <= self.highest_target {
            return false;
        }
        self.highest_target = target;
        self.join()
    }

    /// A trimmed packet or a request to send arrived: the sender has packets to resend, so the
    /// connection joins the pacer's queue if it is not in it (`processTrimmed`, `processRts`).
    pub fn join(&mut self) -> bool {
        if self.in_pull {
            return false;
        }
        self.in_pull = true;
        true
    }
}

/// Where the pacer finds a connection's receiver state.
pub trait Sinks {
    /// Connection `serial` of flow `f`'s receiver state, `None` once its slot holds another.
    fn sink(&mut self, f: u32, serial: u32) -> Option<&mut Sink>;
}

/// A pull the pacer sends: flow `f`'s connection `serial` may send up to `pull` (cumulative
/// quanta); the pacer acts next at `next`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Pull {
    pub flow: u32,
    pub serial: u32,
    pub pull: u64,
    pub next: Time,
}

/// A receiving host's pull pacer (`UecPullPacer`).
#[derive(Clone, Debug)]
pub struct PullPacer {
    /// Connections wanting credit, served in turn, and those satisfied, granted more slowly.
    active: VecDeque<(u32, u32)>,
    idle: VecDeque<(u32, u32)>,
    /// An event is queued for the pacer.
    running: bool,
    /// Picoseconds per quantum at the pull rate (`_time_per_quanta`, truncated as htsim's), and
    /// at that rate scaled by the oversubscription controller (`_actual_time_per_quanta`).
    quantum_time: u64,
    actual_quantum_time: u64,
    /// A slow round's limit: a credit window's worth, in whole quanta.
    window: u64,
    /// The oversubscription controller scaling its rate, when one runs.
    pub oversubscribed: Option<Oversubscribed>,
}

impl PullPacer {
    /// The pacer of a host at `line_rate`, its senders' credit window `window` bytes.
    pub fn new(line_rate: Rate, window: u64) -> PullPacer {
        let quantum_time = (8.0 * QUANTUM as f64 * 1e12 / line_rate.bps() as f64 / PULL_RATE) as u64;
        PullPacer {
            active: VecDeque::new(),
            idle: VecDeque::new(),
            running: false,
            quantum_time,
            actual_quantum_time: quantum_time,
            window: window / QUANTUM as u64,
            oversubscribed: None,
        }
    }

    /// Connection `serial` of flow `f` wants credit (its `Sink` said so); true when the pacer
    /// was idle and needs an event now (`requestPull`).
    pub fn request(&mut self, f: u32, serial: u32, sink: &mut Sink) -> bool {
        if !sink.queued {
            sink.queued = true;
            self.active.push_back((f, serial));
        }
        !std::mem::replace(&mut self.running, true)
    }

    /// The pacer's event at `now` (`doNextEvent`): the next pull, or `None` when no connection
    /// is left and the pacer stops.
    pub fn serve(&mut self, now: Time, sinks: &mut impl Sinks) -> Option<Pull> {
        loop {
            let (fast, (f, serial)) = match self.active.pop_front() {
                Some(c) => (true, c),
                None => match self.idle.pop_front() {
                    Some(c) => (false, c),
                    None => {
                        self.running = false;
                        return None;
                    }
                },
            };
            let Some(sink) = sinks.sink(f, serial) else { continue };
            let granted = if fast {
                sink.queued = false;
                let before = sink.latest_pull;
                // Only what the sender asked for, and never backwards.
                sink.latest_pull = (before + PULL_QUANTA).min(sink.highest_target.max(before));
                if sink.backlog() > 0 {
                    sink.queued = true;
                    self.active.push_back((f, serial));
                } else {
                    self.idle.push_back((f, serial));
                    (sink.in_pull, sink.in_slow_pull) = (false, true);
                }
                sink.latest_pull - before
            } else {
                if !sink.in_slow_pull {
                    (sink.in_pull, sink.in_slow_pull) = (false, true);
                }
                sink.latest_pull += PULL_QUANTA;
                if sink.backlog() == 0 && sink.slow_credit() < self.window {
                    self.idle.push_back((f, serial));
                } else {
                    (sink.in_pull, sink.in_slow_pull) = (false, false);
                }
                PULL_QUANTA
            };
            let quanta = if granted == 0 { EMPTY_PULL_QUANTA } else { granted };
            return Some(Pull { flow: f, serial, pull: sink.latest_pull, next: now + Time(self.actual_quantum_time * quanta) });
        }
    }

    /// Pulls at `rate` of the pull rate from now (`updatePullRate`).
    pub fn scale(&mut self, rate: f64) {
        self.actual_quantum_time = (self.quantum_time as f64 / rate) as u64;
    }
}

/// What arrived at a receiving host since its controller last looked.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Arrivals {
    /// Packets of its connections: data, trimmed headers, requests to send.
    pub packets: u64,
    /// Data packets marked CE.
    pub marked: u64,
    /// Headers trimmed at the switch before the host, and elsewhere.
    pub trimmed_last_hop: u64,
    pub trimmed_other: u64,
}

/// A receiving host's oversubscription controller (`OversubscribedCC`, uet-htsim
/// `sim/oversubscribed_cc.cpp`): the pacer's rate, a fraction of its line rate's 0.99, cut by the
/// fraction of the trimmed packets that were not trimmed at the last hop and by the marked
/// fraction's average above 0.3, else raised by 1 % (doubling with each quiet interval).
#[derive(Clone, Debug)]
pub struct Oversubscribed {
    rate: f64,
    /// The marked fraction's moving average.
    g: f64,
    increases: i32,
    min_rate: f64,
    pub arrivals: Arrivals,
}

/// `OversubscribedCC`'s constants: the marked fraction it aims under, its additive increase,
/// its multiplicative decrease, the average's gain.
const TARGET_CONGESTION: f64 = 0.3;
const AI: f64 = 0.01;
const MD: f64 = 0.5;
const ALPHA: f64 = 0.5;

impl Oversubscribed {
    /// A controller of a fabric oversubscribed `ratio` to 1: the rate never falls below 0.9 /
    /// `ratio` (`setOversubscriptionRatio`), nor 1 %.
    pub fn new(ratio: f64) -> Oversubscribed {
        Oversubscribed { rate: 1.0, g: 0.0, increases: 0, min_rate: (0.9 / ratio).max(0.01), arrivals: Arrivals::default() }
    }

    /// When it looks next: 0.75 to 1.25 (`u` in [0, 1)) times 1.5 base RTTs (`nextInterval`).
    pub fn interval(base_rtt: Time, u: f64) -> Time {
        Time(((0.75 + u / 2.0) * 1.5 * base_rtt.ps() as f64) as u64)
    }

    /// An interval passed: the pacer's new rate from what arrived in it (`doCongestionControl`).
    pub fn update(&mut self) -> f64 {
        let a = std::mem::take(&mut self.arrivals);
        let untrimmed = a.packets - a.trimmed_last_hop - a.trimmed_other;
        let fraction = if untrimmed != 0 { a.marked as f64 / untrimmed as f64 } else { 0.0 };
        let mut decrease = false;
        if a.trimmed_other > 0 {
            self.rate -= a.trimmed_other as f64 / a.packets as f64;
            decrease = true;
        }
        self.g = self.g * (1.0 - ALPHA) + ALPHA * fraction;
        if self.g > TARGET_CONGESTION {
            self.rate *= 1.0 - (self.g - TARGET_CONGESTION) * MD;
            decrease = true;
        }
        if decrease {
            self.increases = 0;
        } else {
            self.rate += if a.marked == 0 { AI * 2f64.powi(self.increases) } else { AI };
            self.increases += 1;
        }
        self.rate = self.rate.clamp(self.min_rate, 1.0);
        self.rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct One(Option<Sink>);
    impl Sinks for One {
        fn sink(&mut self, _: u32, _: u32) -> Option<&mut Sink> {
            self.0.as_mut()
        }
    }

    /// htsim's numbers at 100 Gbps: a quantum takes 20 686 ps at 0.99 of the line rate
    /// (20 480 / 0.99, truncated), a pull grants 64 quanta.
    #[test]
    fn a_sender_pulled_to_its_target_then_slowly_to_a_window_beyond_it() {
        let window = 262_144; // 1024 quanta
        let mut pacer = PullPacer::new(Rate::from_gbps(100), window);
        assert_eq!((pacer.quantum_time, PULL_QUANTA, pacer.window), (20_686, 64, 1024));
        let mut sinks = One(Some(Sink::default()));
        let sink = sinks.0.as_mut().expect("one");
        assert!(sink.on_target(100));
        assert!(pacer.request(7, 1, sink));
        assert!(!sink.on_target(90), "a lower target is old news");
        // 64 quanta, then the 36 left: the connection is satisfied and moves to the slow round.
        let p = pacer.serve(Time(0), &mut sinks).expect("a pull");
        assert_eq!(p, Pull { flow: 7, serial: 1, pull: 64, next: Time(64 * 20_686) });
        let p = pacer.serve(p.next, &mut sinks).expect("a pull");
        assert_eq!((p.pull, p.next.ps() - 64 * 20_686), (100, 36 * 20_686));
        // Slow pulls of 64 quanta until 1024 are granted beyond the target.
        let mut pulls = vec![];
        while let Some(p) = pacer.serve(Time(0), &mut sinks) {
            pulls.push(p.pull);
        }
        assert_eq!(pulls, (1..=16).map(|n| 100 + n * 64).collect::<Vec<_>>());
        // A new target brings it back to the fast round.
        let sink = sinks.0.as_mut().expect("one");
        assert!(sink.on_target(2000));
        assert!(pacer.request(7, 1, sink), "the pacer had stopped");
        assert_eq!(pacer.serve(Time(0), &mut sinks).map(|p| p.pull), Some(100 + 17 * 64));
    }

    #[test]
    fn a_connection_gone_from_its_slot_is_skipped() {
        let mut pacer = PullPacer::new(Rate::from_gbps(100), 262_144);
        let mut sinks = One(Some(Sink::default()));
        assert!(pacer.request(1, 1, sinks.0.as_mut().expect("one")));
        sinks.0 = None;
        assert_eq!(pacer.serve(Time(0), &mut sinks), None);
        assert!(!pacer.running);
    }

    /// The sender's side: speculative credit, spent with overdraft, dropped at the first pull,
    /// refilled by pulls up to the window; targets in quanta.
    #[test]
    fn credit_speculates_then_follows_pulls() {
        let mut c = Credit::new(20_000, (4150, 64), Time::from_us(14));
        // Speculating with plenty of credit: at least an MTU is asked for (17 quanta).
        assert_eq!(c.pull_target(1_000_000, 0, None), 17);
        for _ in 0..5 {
            c.spend(4150);
        }
        assert!(!c.may_send(), "20 000 − 5 × 4150 = −750");
        assert_eq!(c.pull_target(1_000_000, 0, None), quanta_ceil(20_000 + 750) as u64);
        c.on_pull(10);
        assert_eq!(c.credit, -750 + 2560, "overdraft kept, speculation over");
        c.on_pull(9);
        assert_eq!(c.credit, 1810, "an older pull grants nothing");
        c.on_pull(1000);
        assert_eq!(c.credit, 20_000, "capped at the window");
        assert_eq!(c.pull_target(5000, 0, Some(1000)), quanta_ceil(5150 - 20_000 + 1000 * 256) as u64);
    }

    #[test]
    fn requests_to_send_are_an_rtt_apart_and_only_without_credit() {
        let mut c = Credit::new(1000, (4150, 64), Time::from_us(14));
        assert!(!c.request_to_send(Time(0)), "credit left");
        c.spend(4150);
        assert!(c.request_to_send(Time(0)));
        assert!(!c.request_to_send(Time::from_us(13)));
        assert!(c.request_to_send(Time::from_us(14)));
    }
}

#[cfg(test)]
mod oversubscribed_tests {
    use super::*;

    /// By hand, from `doCongestionControl`: 100 packets, 10 trimmed before the last hop: the
    /// rate falls by 10/100 and the average takes half of 45/90 marked, 0.25 (under 0.3, no
    /// cut); then 60 of 100 marked: g = 0.125 + 0.3 = 0.425, the rate cut by (0.425 − 0.3) / 2;
    /// then quiet intervals raise it by 1 %, 2 %, 4 % ...; never below 0.9 / ratio.
    #[test]
    fn the_rate_follows_trims_and_marks() {
        let mut c = Oversubscribed::new(4.0);
        c.arrivals = Arrivals { packets: 100, marked: 45, trimmed_last_hop: 0, trimmed_other: 10 };
        assert_eq!(c.update(), 0.9);
        assert_eq!(c.g, 0.25);
        c.arrivals = Arrivals { packets: 100, marked: 60, ..Arrivals::default() };
        assert!((c.update() - 0.9 * (1.0 - 0.125 * 0.5)).abs() < 1e-12);
        let r = c.rate;
        c.g = 0.0;
        let rates: Vec<f64> = (0..3).map(|_| c.update()).collect();
        assert!((rates[0] - (r + 0.01)).abs() < 1e-12 && (rates[2] - (r + 0.07)).abs() < 1e-12, "{rates:?}");
        c.arrivals = Arrivals { packets: 10, trimmed_other: 10, ..Arrivals::default() };
        assert_eq!(c.update(), 0.225, "the floor: 0.9 / 4");
        let mut pacer = PullPacer::new(Rate::from_gbps(100), 262_144);
        pacer.scale(0.5);
        assert_eq!(pacer.actual_quantum_time, 41_372);
        assert_eq!(Oversubscribed::interval(Time::from_us(10), 0.5), Time::from_us(15));
    }
}
