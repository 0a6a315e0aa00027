//! One simulation cut into partitions (logical processes) that run in parallel with
//! conservative synchronization (Chandy–Misra–Bryant, without null messages or windows): each
//! partition publishes a clock, before which it has handled every event of its own and posted
//! what they sent the others, and handles its events up to the smallest of the others' clocks
//! plus the lookahead (nothing they send from then on can arrive sooner).
//!
//! The cut: each ToR (a switch with hosts) goes with its hosts, in contiguous blocks, so that a
//! fat-tree's pods stay whole; with more partitions than ToRs a ToR's hosts are split among
//! several. Every other switch goes to the partition it has most links into (ties: the one with
//! fewest such switches so far). The lookahead is the fabric's shortest link delay: a packet
//! crossing to another partition takes at least its link's, and what one node tells another
//! (a drop its sender counts, `Ctx::notify`) takes exactly that. (The cut's own lookahead, the
//! smallest delay of a link between partitions, is as long on a fabric whose links all have one
//! delay, as the shipped fat-trees do; `lookahead` gives it to the speed model.)
//!
//! A partition is a whole `Network` built from the scenario, that handles only its own nodes'
//! events (`Network::owner`) and sends a packet leaving through a link to another partition's
//! node as a `Crossing`. Ties at one picosecond go by the origin that scheduled the events
//! (`EventQueue::reserve`), so the events of a partition happen in the same order whatever
//! the cut, one partition included.

use crate::ctx::Outgoing;
use crate::engine::Event;
use crate::flow::{grid_end, FlowsDone};
use crate::ids::PortId;
use crate::network::Network;
use crate::network::{Progress, Stopped, OBSERVE_EVERY};
use crate::packet::{IntStack, Packet};
use crate::scenario::{Scenario, ScenarioError, Threads, AUTO_THREADS_HOSTS};
use crate::topology::Graph;
use crossbeam_utils::CachePadded;
use rttlab_cc::Time;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;

/// The threads a run of `s` uses (`run.threads`; `python`: its controllers are Python's), and
/// why it uses one where more were asked for. One thread is one partition.
pub fn threads(s: &Scenario, python: bool) -> (usize, Option<String>) {
    let asked = match s.run.threads {
        Threads::Count(n) => n as usize,
        Threads::Auto if s.hosts() >= AUTO_THREADS_HOSTS => std::thread::available_parallelism().map_or(1, |n| n.get()),
        Threads::Auto => 1,
    };
    let graph = Graph::from_scenario(s);
    let one = |why: &str| (1, (s.run.threads != Threads::Auto).then(|| format!("run.threads = {asked}: ran on one thread, {why}")));
    if asked <= 1 {
        (1, None)
    } else if python {
        one("as Python controllers do")
    } else if s.measure.timeseries_interval.is_some() || s.measure.pfc_trace || s.measure.pcap.is_some() {
        one("as time series, PFC traces and packet captures do")
    } else if graph.links.iter().any(|l| l.delay == Time::ZERO) {
        one("as a fabric with a link of no delay does (a partition could not run ahead)")
    } else {
        (asked.min(graph.hosts as usize), None)
    }
}

/// Node → partition for `p` partitions of `graph` (hosts are nodes `0..hosts`, switches after).
pub fn partition(graph: &Graph, p: usize) -> Vec<usize> {
    let n = (graph.hosts + graph.switches) as usize;
    let mut adj = vec![Vec::new(); n];
    for l in &graph.links {
        adj[l.a as usize].push(l.b as usize);
        adj[l.b as usize].push(l.a as usize);
    }
    let hosts = graph.hosts as usize;
    let mut part = vec![usize::MAX; n];
    // ToRs in id order, each with its hosts; hosts in that order, cut into p contiguous blocks.
    let tors: Vec<usize> = (hosts..n).filter(|&s| adj[s].iter().any(|&x| x < hosts)).collect();
    let ordered: Vec<usize> = tors.iter().flat_map(|&t| adj[t].iter().copied().filter(|&x| x < hosts)).collect();
    for (j, &h) in ordered.iter().enumerate() {
        part[h] = j * p / ordered.len().max(1);
    }
    let loose: Vec<usize> = (0..hosts).filter(|&h| part[h] == usize::MAX).collect();
    for (j, h) in loose.into_iter().enumerate() {
        part[h] = j % p;
    }
    for &t in &tors {
        part[t] = adj[t].iter().filter(|&&x| x < hosts).map(|&x| part[x]).min().expect("a ToR has hosts");
    }
    let mut placed = vec![0usize; p];
    for s in hosts..n {
        if part[s] != usize::MAX {
            continue;
        }
        let mut links = vec![0usize; p];
        for &x in &adj[s] {
            if part[x] != usize::MAX {
                links[part[x]] += 1;
            }
        }
        let best = (0..p).max_by_key(|&q| (links[q], std::cmp::Reverse(placed[q]), std::cmp::Reverse(q))).expect("p > 0");
        part[s] = best;
        placed[best] += 1;
    }
    part
}

/// The smallest propagation delay, in ps, of a link between two partitions (`u64::MAX`: none).
pub fn lookahead(graph: &Graph, part: &[usize]) -> u64 {
    graph.links.iter().filter(|l| part[l.a as usize] != part[l.b as usize]).map(|l| l.delay.ps()).min().unwrap_or(u64::MAX)
}

/// What sees every event a partition handles: `(partition, network, event)`.
pub type Inspect<'a> = dyn Fn(usize, &Network, &Event) + Sync + 'a;

/// A packet on its way to another partition: it arrives through `port` at `time`, at the place
/// in the event order its sender reserved.
pub(crate) struct Crossing {
    pub time: Time,
    pub seq: u64,
    pub port: PortId,
    pub pkt: Packet,
    pub int: Option<Box<IntStack>>,
}

/// A network cut into partitions, each a `Network` of its own.
pub struct Partitioned {
    pub parts: Vec<Network>,
    /// Node → partition.
    pub of_node: Vec<usize>,
    pub lookahead: Time,
    /// Spans of events the first partition handled, each followed by a publication of its clock.
    pub spans: u64,
    /// Where each partition's thread spent the run.
    pub phases: Vec<Phases>,
}

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
        let timed = crate::engine::splitmix64(self.turns).is_multiple_of(TIMED_EVERY);
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
    /// The network of `s` cut into `p` partitions.
    pub fn new(s: &Scenario, p: usize) -> Result<Partitioned, ScenarioError> {
        let graph = Graph::from_scenario(s);
        let of_node: std::sync::Arc<[usize]> = partition(&graph, p).into();
        let lookahead = graph.links.iter().map(|l| l.delay).min().unwrap_or(Time(1)).max(Time(1));
        let parts = (0..p).map(|me| Network::build(s, None, Some((me, of_node.clone())))).collect::<Result<_, _>>()?;
        Ok(Partitioned { parts, of_node: of_node.to_vec(), lookahead, spans: 0, phases: Vec::new() })
    }

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
        let p = self.parts.len();
        let lookahead = self.lookahead.ps();
        let span = (lookahead / SPANS_PER_LOOKAHEAD).max(1);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let spins = if p > cores { SPINS_BEFORE_YIELD_OVERSUBSCRIBED } else { SPINS_BEFORE_YIELD };
        let flows_done = self.parts[0].hosts.flows.done.is_some();
        // Each partition's status and each mailbox on cache lines of their own: written by one
        // thread, read by the others.
        let mail: Vec<CachePadded<Mailbox>> = (0..p * p).map(|_| CachePadded::default()).collect();
        let status: Vec<CachePadded<Status>> = (0..p).map(|_| CachePadded::default()).collect();
        let stop = CachePadded::new(AtomicBool::new(false));
        let broken = CachePadded::new(AtomicBool::new(false));
        for (q, net) in self.parts.iter_mut().enumerate() {
            status[q].publish(0, net, None);
        }
        let of_node: &[usize] = &self.of_node;
        // Each thread returns the spans it ran and where its time went.
        let work = |q: usize, net: &mut Network, observe: &mut dyn FnMut(Progress) -> ControlFlow<()>| -> (u64, Phases) {
            // A thread that panics says so, so that the others end and the panic reaches the
            // caller instead of leaving them waiting.
            let _broken = BreakOnPanic(&broken);
            let mut seen = vec![0u64; p];
            let mut clock = 0u64;
            // The latest event this partition may handle as of the last look at the others.
            let mut bound = 0u64;
            let mut horizon = Horizon::new(net, flows_done);
            let mut out: Vec<Mail> = (0..p).map(|_| Mail::default()).collect();
            let mut inbox = Mail::default();
            let (mut observed, mut spans, mut idle) = (0u64, 0u64, 0u32);
            let mut watch = Stopwatch::new();
            loop {
                // A wait for the others, however many turns it spins, is timed as one turn.
                if idle == 0 {
                    watch.turn();
                }
                if stop.load(Ordering::Relaxed) {
                    return (spans, watch.phases(net.events_processed()));
                }
                assert!(!broken.load(Ordering::Relaxed), "another partition's thread panicked");
                let mut next = next_event_ps(net);
                let look = next.saturating_add(span - 1) > bound;
                if look {
                    // The next span would end early: look how far the others have come, and
                    // take the mail they posted before saying so. (Only then: each look at a
                    // clock another core has moved waits for its line.)
                    for o in (0..p).filter(|&o| o != q) {
                        let c = status[o].clock.load(Ordering::Acquire);
                        if c != seen[o] {
                            seen[o] = c;
                            mail[o * p + q].take(net, &mut inbox);
                        }
                    }
                }
                // Nothing can arrive from the others before `safe`.
                let safe = others(&seen, q).map(|&c| c.saturating_add(lookahead)).min().unwrap_or(u64::MAX);
                if look {
                    let wanted = net.end().ps().min(safe - 1);
                    let known = horizon.until(wanted, q, clock, &seen, &status, net);
                    // The horizon may have found the run's end.
                    bound = wanted.min(known).min(net.end().ps());
                    next = next_event_ps(net);
                }
                watch.lap(if next <= bound { MAIL } else { WAITING });
                if next <= bound {
                    idle = 0;
                    spans += 1;
                    let until = Time(bound.min(next.saturating_add(span - 1)));
                    match inspect {
                        Some(f) => net.run_window(until, |n, ev| f(q, n, ev)),
                        None => net.run_window(until, |_, _| {}),
                    }
                    watch.lap(EVENTS);
                    net.take_crossings(until, &mut out);
                    for (node, o) in net.cx.outbox.drain(..) {
                        out[of_node[node as usize]].other.push(o);
                    }
                    for (to, m) in out.iter_mut().enumerate().filter(|(_, m)| !(m.crossings.is_empty() && m.other.is_empty())) {
                        mail[q * p + to].post(m);
                    }
                } else {
                    idle += 1;
                }
                // Every event before the next one is handled, and nothing can arrive from the
                // others before `safe`.
                let now = next_event_ps(net).min(safe);
                if now > clock {
                    clock = now;
                    status[q].publish(clock, net, horizon.proof(net, clock, lookahead));
                }
                watch.lap(if idle == 0 { MAIL } else { WAITING });
                if clock > net.end().ps() {
                    status[q].clock.store(u64::MAX, Ordering::Release);
                    return (spans, watch.phases(net.events_processed()));
                }
                // The first partition adds up the others' events when its own have gone up by
                // their share of `OBSERVE_EVERY`.
                if q == 0 && net.events_processed() - observed >= OBSERVE_EVERY / p as u64 {
                    observed = net.events_processed();
                    let events: u64 = status.iter().skip(1).map(|s| s.handled.load(Ordering::Relaxed)).sum::<u64>() + observed;
                    if observe(Progress { now: Time(clock), end: net.end(), events }).is_break() {
                        stop.store(true, Ordering::Relaxed);
                    }
                }
                if idle > 0 {
                    // Waiting for the others: spin, then yield the core in case threads
                    // outnumber cores.
                    if idle < spins {
                        std::hint::spin_loop();
                    } else {
                        std::thread::yield_now();
                    }
                    watch.lap(WAITING);
                }
            }
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
        if stop.load(Ordering::Relaxed) {
            return Err(Stopped);
        }
        // Packets still in flight at the end are the receivers'.
        let mut inbox = Mail::default();
        for (i, m) in mail.iter().enumerate() {
            m.take(&mut self.parts[i % p], &mut inbox);
        }
        for net in &mut self.parts {
            net.finish();
        }
        Ok(())
    }
}

/// The time of `net`'s next event, in ps (`u64::MAX`: none).
fn next_event_ps(net: &mut Network) -> u64 {
    net.next_event_time().map_or(u64::MAX, |t| t.ps())
}

/// What partition `q` knows of the others: every entry of `of_all` but its own.
fn others<T>(of_all: &[T], q: usize) -> impl Iterator<Item = &T> {
    of_all.iter().enumerate().filter(move |&(o, _)| o != q).map(|(_, x)| x)
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

/// What a partition tells the others: its clock (every event of its before this time, in ps,
/// is handled, and its mail from them posted), written last with `Release`; the events it has
/// handled; its `FlowsDone` counts and the time until which its own senders prove the run
/// goes on (`Horizon`), as of that clock or later.
#[derive(Default)]
struct Status {
    clock: AtomicU64,
    handled: AtomicU64,
    finished: AtomicU64,
    counted: AtomicI64,
    last: AtomicU64,
    first_over: AtomicU64,
    proof: AtomicU64,
}

impl Status {
    fn publish(&self, clock: u64, net: &Network, proof: Option<u64>) {
        let d = net.hosts.flows.done.unwrap_or_default();
        self.handled.store(net.events_processed(), Ordering::Relaxed);
        self.finished.store(d.finished, Ordering::Relaxed);
        self.counted.store(d.counted, Ordering::Relaxed);
        self.last.store(d.last.ps(), Ordering::Relaxed);
        self.first_over.store(d.first_over.ps(), Ordering::Relaxed);
        self.proof.store(proof.unwrap_or(0), Ordering::Relaxed);
        self.clock.store(clock, Ordering::Release);
    }

    /// The counts published with (or after) the clock last read.
    fn done(&self, total: u64) -> FlowsDone {
        FlowsDone {
            total,
            finished: self.finished.load(Ordering::Relaxed),
            counted: self.counted.load(Ordering::Relaxed),
            last: Time(self.last.load(Ordering::Relaxed)),
            first_over: Time(self.first_over.load(Ordering::Relaxed)),
        }
    }
}

/// Under `until = "flows_done"`, how late a partition may run before it knows the run's end:
/// the end is the last instant of the lookahead grid's cell that holds the moment the
/// connections were all done (`FlowsDone::end`), and no partition may handle an event past it.
/// What proves the run goes on at least until a time:
/// - every partition's counts, as of its clock or later: while they do not say all done, or
///   say it of a moment some partition has not reached, the run goes on to the end of the cell
///   of the smallest clock (an unfinished connection finishes after it);
/// - a sender with data it has never sent (`Flow::unsent`) at a partition's clock: that
///   connection finishes at least a lookahead later (its last byte crosses a link at least).
///
/// Once the counts say all done at a moment every clock has passed, the end is known.
struct Horizon {
    /// This partition's `[[flows]]` connections whose senders may hold unsent data (the
    /// last one is checked; those that have sent everything are dropped).
    unsent: Vec<u32>,
    /// The latest instant the run is proven to reach (a proof stays true: looked at again only
    /// when the partition would go further).
    proven: u64,
    known: bool,
}

impl Horizon {
    fn new(net: &Network, flows_done: bool) -> Horizon {
        let flows = &net.hosts.flows.slots;
        let unsent = if flows_done { flows.iter().filter(|(_, f)| f.order != u32::MAX).map(|(id, _)| id).collect() } else { Vec::new() };
        Horizon { unsent, proven: 0, known: !flows_done }
    }

    /// The time until which this partition's senders prove the run goes on, at `clock`.
    fn proof(&mut self, net: &Network, clock: u64, lookahead: u64) -> Option<u64> {
        let flows = &net.hosts.flows.slots;
        while let Some(&f) = self.unsent.last() {
            if flows.get(f).is_some_and(|f| f.unsent()) {
                return Some(clock.saturating_add(lookahead - 1));
            }
            self.unsent.pop();
        }
        None
    }

    /// The latest event partition `q` (at `clock`, the others at `seen`) may handle, looked at
    /// anew if that is before `wanted`; sets the run's end once it is known.
    fn until(&mut self, wanted: u64, q: usize, clock: u64, seen: &[u64], status: &[CachePadded<Status>], net: &mut Network) -> u64 {
        if self.known {
            return u64::MAX;
        }
        if self.proven >= wanted {
            return self.proven;
        }
        // The grid a one-thread run ends on too (`FlowsDone::end`): the shortest link delay.
        let (fct_until, warmup, step) = (net.cx.cfg.fct_until, net.cx.cfg.warmup, net.cx.notice_delay);
        let mine = net.hosts.flows.done.unwrap_or_default();
        let smallest = others(seen, q).copied().fold(clock, u64::min);
        let counts = status.iter().enumerate().map(|(o, s)| if o == q { mine } else { s.done(mine.total) });
        if let Some(t) = FlowsDone::done_at(counts, fct_until).filter(|t| t.ps() < smallest) {
            net.cx.cfg.end = net.cx.cfg.end.min(FlowsDone::end_at(t, warmup, step));
            self.known = true;
            return u64::MAX;
        }
        let proofs = others(status, q).map(|s| s.proof.load(Ordering::Relaxed));
        let own = self.proof(net, clock, step.ps()).unwrap_or(0);
        self.proven = proofs.fold(own.max(grid_end(Time(smallest), step).ps()), u64::max).max(self.proven);
        self.proven
    }
}

/// A mailbox from one partition to another: what the sender posted and the receiver has not
/// taken. Its buffers go back and forth, so that posting allocates nothing once they have grown.
#[derive(Default)]
struct Mailbox {
    full: AtomicBool,
    mail: Mutex<Mail>,
}

impl Mailbox {
    fn post(&self, out: &mut Mail) {
        let mut m = self.mail.lock().expect("unpoisoned");
        if m.crossings.is_empty() && m.other.is_empty() {
            std::mem::swap(&mut *m, out);
        } else {
            m.crossings.append(&mut out.crossings);
            m.other.append(&mut out.other);
        }
        drop(m);
        self.full.store(true, Ordering::Release);
    }

    /// Hands what was posted to `net` (`inbox`: an empty buffer to leave in its place).
    fn take(&self, net: &mut Network, inbox: &mut Mail) {
        if !self.full.load(Ordering::Acquire) || !self.full.swap(false, Ordering::Acquire) {
            return;
        }
        std::mem::swap(&mut *self.mail.lock().expect("unpoisoned"), inbox);
        inbox.crossings.drain(..).for_each(|c| net.receive_crossing(c));
        inbox.other.drain(..).for_each(|o| net.receive_outgoing(o));
    }
}

/// What one partition sends another.
#[derive(Default)]
pub(crate) struct Mail {
    pub crossings: Vec<Crossing>,
    other: Vec<Outgoing>,
}

impl Partitioned {
    /// One network holding what each partition owns (its ports, switches, hosts, connections
    /// and their receiving ends, its measurements added up), whose summary and tables are the
    /// whole network's: the same as one partition's run gives (`tests/partitions.rs`).
    pub fn merge(self) -> Network {
        let Partitioned { parts, of_node, .. } = self;
        let mut parts: Vec<Option<Network>> = parts.into_iter().map(Some).collect();
        let mut base = parts[0].take().expect("a partition");
        let hosts = base.hosts.nodes.len();
        let mut ends: Vec<(u32, crate::flow::RxEnd)> = Vec::new();
        let mut absorbed = Vec::new();
        for (q, other) in parts.iter_mut().enumerate() {
            let net = other.as_mut().unwrap_or(&mut base);
            // Packets handed over are the receivers' now.
            let cx = &mut net.cx;
            for c in cx.handed_over.drain(..) {
                cx.pkts.free(c.pkt);
            }
            for (id, mut end) in net.hosts.flows.rx.drain() {
                if end.serial == u32::MAX || of_node[end.dst as usize] != q {
                    continue;
                }
                if let Some(next) = end.next.take() {
                    ends.push((id, *next));
                }
                ends.push((id, end));
            }
            let Some(net) = other.as_mut() else { continue };
            for p in 0..base.fabric.ports.len() {
                if of_node[base.fabric.ports[p].node as usize] == q {
                    std::mem::swap(&mut base.fabric.ports[p], &mut net.fabric.ports[p]);
                    base.fabric.queues.of_mut(PortId(p as u32)).swap_with_slice(net.fabric.queues.of_mut(PortId(p as u32)));
                    std::mem::swap(&mut base.cx.measure.ports_at_warmup[p], &mut net.cx.measure.ports_at_warmup[p]);
                    if let Some(s) = base.fabric.ports[p].sampler {
                        std::mem::swap(&mut base.cx.measure.samplers[s as usize], &mut net.cx.measure.samplers[s as usize]);
                    }
                }
            }
            for s in 0..base.fabric.switches.len() {
                if of_node[hosts + s] == q {
                    std::mem::swap(&mut base.fabric.switches[s], &mut net.fabric.switches[s]);
                }
            }
            for (h, _) in of_node[..hosts].iter().enumerate().filter(|&(_, &o)| o == q) {
                std::mem::swap(&mut base.hosts.nodes[h], &mut net.hosts.nodes[h]);
                base.hosts.flows.slots.swap_host(&mut net.hosts.flows.slots, h);
            }
            let (b, o) = (&mut base.hosts.flows, &net.hosts.flows);
            b.retired.absorb(&o.retired);
            b.retired_count += o.retired_count;
            let (b, o) = (&mut base.cx.measure, &net.cx.measure);
            for (g, x) in b.groups.iter_mut().zip(&o.groups) {
                g.absorb(x);
            }
            if let (Some(r), Some(x)) = (&mut b.flow_records, &o.flow_records) {
                r.extend_from_slice(x);
            }
            b.rtt_hist.add(&o.rtt_hist).expect("auto-resizing histogram");
            b.at_warmup += &o.at_warmup;
            b.data_sent += o.data_sent;
            b.data_drops += o.data_drops;
            let live: Vec<Packet> = net.cx.pkts.iter_live().copied().collect();
            for p in live {
                base.cx.pkts.alloc(p);
            }
            base.cx.events_elsewhere += net.events_processed();
        }
        // A slot's receiving end is its latest connection's that has received anything (the
        // next one waits), as on one partition; the ends before it join the retired totals.
        ends.sort_by_key(|(id, e)| (*id, e.serial));
        let mut i = 0;
        while i < ends.len() {
            let id = ends[i].0;
            let j = i + ends[i..].iter().take_while(|(x, _)| *x == id).count();
            let started = |e: &crate::flow::RxEnd| e.stats.delivered_bytes + e.stats.duplicate_bytes > 0;
            let current = (i..j).rev().find(|&k| started(&ends[k].1)).unwrap_or(i);
            absorbed.extend(i..current);
            let mut group: Vec<_> = ends[current..j].iter_mut().map(|(_, e)| std::mem::take(e)).collect();
            let mut end = group.remove(0);
            end.next = group.into_iter().next().map(Box::new);
            *base.hosts.flows.rx.entry(id) = end;
            i = j;
        }
        for k in absorbed {
            base.hosts.flows.retired.absorb(&ends[k].1.stats);
        }
        base.cx.part = None;
        base
    }
}
