//! The runner: each partition's thread handling its events up to the others' clocks plus the
//! lookahead, publishing its own, and timing where its time goes.

use super::horizon::{others, Horizon, Status};
use super::mail::{Mail, Mailbox};
use super::{Inspect, Partitioned};
use crate::network::Network;
use crate::network::{Progress, Stopped, OBSERVE_EVERY};
use crossbeam_utils::CachePadded;
use rttlab_cc::Time;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};

/// Where a partition's thread spent a run, in seconds, estimated from one turn of its loop in
/// [`TIMED_EVERY`] (a span of events, or a wait for the others, with what follows it; timing
/// every turn would cost a few percent where a span is a microsecond):
/// handling its events, waiting for the others' clocks, and the mail (taking in what the others
/// sent, handing over what it sends, publishing its clock). A thread that waits long waits for
/// a busier partition.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct Phases {
    pub events: u64,
    pub events_s: f64,
    pub waiting_s: f64,
    pub mail_s: f64,
}

/// One turn in this many is timed (`Phases`).
pub const TIMED_EVERY: u64 = 16;

/// Times the phases of the turns it is started on (`Phases`).
struct Stopwatch {
    last: Option<std::time::Instant>,
    /// Events, waiting, mail.
    spent: [std::time::Duration; 3],
    turns: u64,
    timed: u64,
}

const EVENTS: usize = 0;
const WAITING: usize = 1;
const MAIL: usize = 2;

impl Stopwatch {
    fn new() -> Stopwatch {
        Stopwatch { last: None, spent: Default::default(), turns: 0, timed: 0 }
    }

    /// A turn begins; one in `TIMED_EVERY` is timed, drawn by a hash of its number: a run's
    /// work may repeat with a period (an incast's PFC cycles) that every 16th in turn would
    /// alias with.
    fn turn(&mut self) {
        let timed = crate::core::engine::splitmix64(self.turns).is_multiple_of(TIMED_EVERY);
        self.turns += 1;
        self.timed += timed as u64;
        self.last = timed.then(std::time::Instant::now);
    }

    /// The time since the last lap went to `phase` (if this turn is timed).
    fn lap(&mut self, phase: usize) {
        if let Some(last) = self.last {
            let now = std::time::Instant::now();
            self.spent[phase] += now - last;
            self.last = Some(now);
        }
    }

    /// The estimates for the whole run of a partition that handled `events` events.
    fn phases(&self, events: u64) -> Phases {
        let scale = self.turns as f64 / self.timed.max(1) as f64;
        let s = |phase: usize| self.spent[phase].as_secs_f64() * scale;
        Phases { events, events_s: s(EVENTS), waiting_s: s(WAITING), mail_s: s(MAIL) }
    }
}

impl Partitioned {
    /// Runs to the end, one thread per partition (the calling thread runs the first), calling
    /// `inspect(partition, network, event)` before each event a partition handles, and
    /// `observe` (on the calling thread) about every [`OBSERVE_EVERY`] events of the whole;
    /// when it breaks, every partition stops soon after with `Err(Stopped)`.
    ///
    /// No barrier: each partition publishes its clock (every event of its before that time is
    /// handled, and what they sent the others is posted) and runs up to the smallest of the
    /// others' clocks plus the lookahead, since nothing they send from then on arrives sooner.
    /// It handles its events in spans of a fraction of the lookahead (`SPANS_PER_LOOKAHEAD`)
    /// and publishes after each, and looks at the others' clocks only when its next span would
    /// pass what it last saw of them. A partition may so run up to a lookahead ahead of the
    /// slowest: the others' moments of more work, and the time to hear from them, are absorbed
    /// instead of waited for at a barrier every lookahead (the windows of YAWNS, which this
    /// replaced: `docs/speed.md`). Under
    /// `until = "flows_done"` a partition also runs no later than the run is known to go on
    /// (`Horizon`). The order of each partition's events is the same whenever it hears from
    /// the others, so the results are too.
    pub fn run(&mut self, inspect: Option<&Inspect<'_>>, mut observe: impl FnMut(Progress) -> ControlFlow<()>) -> Result<(), Stopped> {
        let shared = Shared::new(&self.of_node, self.lookahead.ps(), &mut self.parts);
        let flows_done = self.parts[0].hosts.flows.done.is_some();
        // Each thread returns the spans it ran and where its time went.
        let work = |q: usize, net: &mut Network, observe: &mut dyn FnMut(Progress) -> ControlFlow<()>| -> (u64, Phases) {
            // A thread that panics says so, so that the others end and the panic reaches the
            // caller instead of leaving them waiting.
            let _broken = BreakOnPanic(&shared.broken);
            let mut runner = Runner::new(q, net, &shared, flows_done);
            while let Turn::Handled | Turn::Waiting = runner.turn(net, &shared, inspect, observe) {}
            (runner.spans, runner.watch.phases(net.events_processed()))
        };
        let ran: Vec<(u64, Phases)> = std::thread::scope(|scope| {
            let (first, rest) = self.parts.split_first_mut().expect("a partition");
            let others: Vec<_> = rest
                .iter_mut()
                .enumerate()
                .map(|(i, net)| {
                    let work = &work;
                    scope.spawn(move || work(i + 1, net, &mut |_| ControlFlow::Continue(())))
                })
                .collect();
            let mine = work(0, first, &mut observe);
            std::iter::once(mine).chain(others.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))).collect()
        });
        self.spans = ran[0].0;
        self.phases = ran.into_iter().map(|(_, p)| p).collect();
        if shared.stop.load(Ordering::Relaxed) {
            return Err(Stopped);
        }
        // Packets still in flight at the end are the receivers'.
        let p = self.parts.len();
        let mut inbox = Mail::default();
        for (i, m) in shared.mail.iter().enumerate() {
            m.take(&mut self.parts[i % p], &mut inbox);
        }
        for net in &mut self.parts {
            net.finish();
        }
        Ok(())
    }
}

/// What every partition's runner shares: the statuses they publish and the mailboxes between
/// them, each on cache lines of its own (written by one thread, read by the others), and the
/// flags that end the run.
pub(super) struct Shared<'a> {
    p: usize,
    lookahead: u64,
    /// A span of events, in ps: a fraction of the lookahead (`SPANS_PER_LOOKAHEAD`).
    span: u64,
    spins: u32,
    of_node: &'a [usize],
    /// From partition `q` to `o` at `q * p + o`.
    mail: Vec<CachePadded<Mailbox>>,
    status: Vec<CachePadded<Status>>,
    stop: CachePadded<AtomicBool>,
    broken: CachePadded<AtomicBool>,
}

impl<'a> Shared<'a> {
    /// For `parts` cut as `of_node` with `lookahead` ps, each partition's clock published at 0.
    pub(super) fn new(of_node: &'a [usize], lookahead: u64, parts: &mut [Network]) -> Shared<'a> {
        let p = parts.len();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let shared = Shared {
            p,
            lookahead,
            span: (lookahead / SPANS_PER_LOOKAHEAD).max(1),
            spins: if p > cores { SPINS_BEFORE_YIELD_OVERSUBSCRIBED } else { SPINS_BEFORE_YIELD },
            of_node,
            mail: (0..p * p).map(|_| CachePadded::default()).collect(),
            status: (0..p).map(|_| CachePadded::default()).collect(),
            stop: CachePadded::new(AtomicBool::new(false)),
            broken: CachePadded::new(AtomicBool::new(false)),
        };
        for (q, net) in parts.iter_mut().enumerate() {
            shared.status[q].publish(0, net, None);
        }
        shared
    }
}

/// What one turn of a runner did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Turn {
    /// It handled a span of its events.
    Handled,
    /// It waited for the others.
    Waiting,
    /// It passed the run's end.
    Done,
    /// The run was stopped.
    Stopped,
}

/// One partition's runner: what it last saw of the others, how far it may go, its clock.
pub(super) struct Runner {
    q: usize,
    /// The others' clocks as last seen (its own entry unused).
    seen: Vec<u64>,
    clock: u64,
    /// The latest event this partition may handle as of the last look at the others.
    bound: u64,
    horizon: Horizon,
    out: Vec<Mail>,
    inbox: Mail,
    observed: u64,
    spans: u64,
    /// Turns spent waiting since the last span.
    idle: u32,
    watch: Stopwatch,
}

impl Runner {
    pub(super) fn new(q: usize, net: &Network, shared: &Shared, flows_done: bool) -> Runner {
        Runner {
            q,
            seen: vec![0; shared.p],
            clock: 0,
            bound: 0,
            horizon: Horizon::new(net, flows_done),
            out: (0..shared.p).map(|_| Mail::default()).collect(),
            inbox: Mail::default(),
            observed: 0,
            spans: 0,
            idle: 0,
            watch: Stopwatch::new(),
        }
    }

    /// One turn: when the next span would pass what it last saw of the others, look at their
    /// clocks and take their mail; handle a span of events if there is one before the bound,
    /// and post what it sent; publish its clock; wait a little if it could not go on. It never
    /// handles an event at or past `safe`, the others' clocks plus the lookahead (nothing they
    /// send from then on arrives sooner), nor past the run's end.
    #[inline]
    pub(super) fn turn(
        &mut self,
        net: &mut Network,
        shared: &Shared,
        inspect: Option<&Inspect<'_>>,
        observe: &mut dyn FnMut(Progress) -> ControlFlow<()>,
    ) -> Turn {
        let (q, p, span, lookahead) = (self.q, shared.p, shared.span, shared.lookahead);
        // A wait for the others, however many turns it spins, is timed as one turn.
        if self.idle == 0 {
            self.watch.turn();
        }
        if shared.stop.load(Ordering::Relaxed) {
            return Turn::Stopped;
        }
        assert!(!shared.broken.load(Ordering::Relaxed), "another partition's thread panicked");
        let mut next = next_event_ps(net);
        let look = next.saturating_add(span - 1) > self.bound;
        if look {
            // The next span would end early: look how far the others have come, and take the
            // mail they posted before saying so. (Only then: each look at a clock another core
            // has moved waits for its line.)
            for o in (0..p).filter(|&o| o != q) {
                let c = shared.status[o].clock.load(Ordering::Acquire);
                if c != self.seen[o] {
                    self.seen[o] = c;
                    shared.mail[o * p + q].take(net, &mut self.inbox);
                }
            }
        }
        // Nothing can arrive from the others before `safe`.
        let safe = others(&self.seen, q).map(|&c| c.saturating_add(lookahead)).min().unwrap_or(u64::MAX);
        if look {
            let wanted = net.end().ps().min(safe - 1);
            let known = self.horizon.until(wanted, q, self.clock, &self.seen, &shared.status, net);
            // The horizon may have found the run's end.
            self.bound = wanted.min(known).min(net.end().ps());
            next = next_event_ps(net);
        }
        self.watch.lap(if next <= self.bound { MAIL } else { WAITING });
        if next <= self.bound {
            self.idle = 0;
            self.spans += 1;
            let until = Time(self.bound.min(next.saturating_add(span - 1)));
            match inspect {
                Some(f) => net.run_window(until, |n, ev| f(q, n, ev)),
                None => net.run_window(until, |_, _| {}),
            }
            self.watch.lap(EVENTS);
            net.take_crossings(until, &mut self.out);
            for (node, o) in net.cx.boundary.outbox.drain(..) {
                self.out[shared.of_node[node as usize]].other.push(o);
            }
            for (to, m) in self.out.iter_mut().enumerate().filter(|(_, m)| !(m.crossings.is_empty() && m.other.is_empty())) {
                shared.mail[q * p + to].post(m);
            }
        } else {
            self.idle += 1;
        }
        // Every event before the next one is handled, and nothing can arrive from the others
        // before `safe`.
        let now = next_event_ps(net).min(safe);
        if now > self.clock {
            self.clock = now;
            shared.status[q].publish(self.clock, net, self.horizon.proof(net, self.clock, lookahead));
        }
        self.watch.lap(if self.idle == 0 { MAIL } else { WAITING });
        if self.clock > net.end().ps() {
            shared.status[q].clock.store(u64::MAX, Ordering::Release);
            return Turn::Done;
        }
        // The first partition adds up the others' events when its own have gone up by their
        // share of `OBSERVE_EVERY`.
        if q == 0 && net.events_processed() - self.observed >= OBSERVE_EVERY / p as u64 {
            self.observed = net.events_processed();
            let events: u64 = shared.status.iter().skip(1).map(|s| s.handled.load(Ordering::Relaxed)).sum::<u64>() + self.observed;
            if observe(Progress { now: Time(self.clock), end: net.end(), events }).is_break() {
                shared.stop.store(true, Ordering::Relaxed);
            }
        }
        if self.idle == 0 {
            return Turn::Handled;
        }
        // Waiting for the others: spin, then yield the core in case threads outnumber cores.
        if self.idle < shared.spins {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
        self.watch.lap(WAITING);
        Turn::Waiting
    }
}

/// The time of `net`'s next event, in ps (`u64::MAX`: none).
fn next_event_ps(net: &mut Network) -> u64 {
    net.next_event_time().map_or(u64::MAX, |t| t.ps())
}

/// A partition handles its events in spans of this fraction of the lookahead, publishing its
/// clock after each, so that the others see it move while they run; each publication that
/// posts mail takes a lock, which waits for the span's stores. No other fraction did better
/// whatever the speed at which the cores passed lines (`docs/speed.md`).
pub const SPANS_PER_LOOKAHEAD: u64 = 2;
/// Turns a waiting thread spins before it yields its core (a span is microseconds of work: a
/// futex sleep and wake costs as much), and fewer where threads outnumber cores, so that a
/// waiting thread lets the one it waits for run (`docs/speed.md`).
const SPINS_BEFORE_YIELD: u32 = 1 << 8;
const SPINS_BEFORE_YIELD_OVERSUBSCRIBED: u32 = 1 << 4;

/// Tells the others that this thread panicked, if dropped while it does.
struct BreakOnPanic<'a>(&'a AtomicBool);

impl Drop for BreakOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    //! The runner of partition 0 driven turn by turn while the test plays the other partition,
    //! publishing clocks of its choosing: it must never handle an event at or past the other's
    //! clock plus the lookahead, must go on as that clock moves, and end past the run's end.

    use super::*;
    use crate::scenario::Scenario;
    use std::sync::atomic::AtomicU64;

    /// Eight hosts under one switch, 1 µs links (the lookahead), four senders to the other
    /// partition's receivers, 200 µs.
    fn cut() -> Partitioned {
        let s = Scenario::from_toml(
            r#"
            duration = "200us"
            [topology]
            kind = "star"
            hosts = 8
            link_rate = "10Gbps"
            link_delay = "1us"
            [[flows]]
            src = "0-3"
            dst = "4-7"
            "#,
        )
        .unwrap();
        Partitioned::new(&s, 2).unwrap()
    }

    /// Turns until the runner waits (or ends), recording the latest event it handled.
    fn turns(runner: &mut Runner, net: &mut Network, shared: &Shared, latest: &AtomicU64) -> Turn {
        let inspect = |_: usize, _: &Network, ev: &Event| {
            latest.fetch_max(ev.time.ps(), Ordering::Relaxed);
        };
        let mut observe = |_| ControlFlow::Continue(());
        loop {
            match runner.turn(net, shared, Some(&inspect), &mut observe) {
                Turn::Handled => continue,
                other => return other,
            }
        }
    }

    use crate::core::engine::Event;

    #[test]
    fn never_handles_an_event_past_the_others_clock_plus_the_lookahead() {
        let mut cut = cut();
        let lookahead = cut.lookahead.ps();
        assert_eq!(lookahead, 1_000_000);
        let shared = Shared::new(&cut.of_node, lookahead, &mut cut.parts);
        let net = &mut cut.parts[0];
        let mut runner = Runner::new(0, net, &shared, false);
        let latest = AtomicU64::new(0);
        // The other partition at 0: partition 0 may handle events before 1 µs only.
        assert_eq!(turns(&mut runner, net, &shared, &latest), Turn::Waiting);
        assert!(latest.load(Ordering::Relaxed) < lookahead, "handled an event at {} ps", latest.load(Ordering::Relaxed));
        assert!(runner.clock <= lookahead, "published {} ps", runner.clock);
        // The other moves in steps the test chooses, some not on the span's grid.
        // (A step of 1 ps may let no event through; the others open microseconds of traffic.)
        for (other, goes_on) in [(2_500_000u64, true), (2_500_001, false), (7_000_000, true), (50_123_456, true)] {
            shared.status[1].clock.store(other, Ordering::Release);
            let before = net.events_processed();
            assert_eq!(turns(&mut runner, net, &shared, &latest), Turn::Waiting);
            assert!(latest.load(Ordering::Relaxed) < other + lookahead, "at {other}: handled an event at {} ps", latest.load(Ordering::Relaxed));
            assert!(!goes_on || net.events_processed() > before, "at {other}: went no further");
            assert!(runner.clock <= other + lookahead && runner.clock > latest.load(Ordering::Relaxed), "at {other}: clock {}", runner.clock);
        }
    }

    #[test]
    fn ends_once_the_others_are_past_the_run_and_its_own_events_are_handled() {
        let mut cut = cut();
        let lookahead = cut.lookahead.ps();
        let shared = Shared::new(&cut.of_node, lookahead, &mut cut.parts);
        let net = &mut cut.parts[0];
        let end = net.end().ps();
        let mut runner = Runner::new(0, net, &shared, false);
        let latest = AtomicU64::new(0);
        shared.status[1].clock.store(u64::MAX, Ordering::Release);
        assert_eq!(turns(&mut runner, net, &shared, &latest), Turn::Done);
        assert!(latest.load(Ordering::Relaxed) <= end, "handled an event at {} ps, past the end {end}", latest.load(Ordering::Relaxed));
        assert_eq!(shared.status[0].clock.load(Ordering::Acquire), u64::MAX, "says it is done");
    }

    #[test]
    fn a_stopped_run_stops_at_the_next_turn() {
        let mut cut = cut();
        let shared = Shared::new(&cut.of_node, cut.lookahead.ps(), &mut cut.parts);
        let net = &mut cut.parts[0];
        let mut runner = Runner::new(0, net, &shared, false);
        shared.stop.store(true, Ordering::Relaxed);
        assert_eq!(turns(&mut runner, net, &shared, &AtomicU64::new(0)), Turn::Stopped);
        assert_eq!(net.events_processed(), 0);
    }
}
