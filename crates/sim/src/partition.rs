//! One simulation cut into partitions (logical processes) that run in windows of the
//! lookahead, with conservative synchronization (Chandy–Misra–Bryant, windowed as in YAWNS):
//! no packet sent in a window can arrive in it at another partition, so each partition handles
//! a window's events alone, and the packets that cross between partitions are handed over at
//! the window's end.
//!
//! The cut: each ToR (a switch with hosts) goes with its hosts, in contiguous blocks, so that a
//! fat-tree's pods stay whole; with more partitions than ToRs a ToR's hosts are split among
//! several. Every other switch goes to the partition it has most links into (ties: the one with
//! fewest such switches so far). The windows last the fabric's shortest link delay: a packet
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
use crate::network::{Progress, Stopped, OBSERVE_EVERY};
use std::ops::ControlFlow;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use crate::ids::PortId;
use crate::network::Network;
use crate::packet::{IntStack, Packet};
use crate::flow::FlowsDone;
use crate::scenario::{Scenario, ScenarioError, Threads, AUTO_THREADS_HOSTS};
use crate::topology::Graph;
use rttlab_cc::Time;

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
    /// Windows run.
    pub windows: u64,
    /// Where each partition's thread spent the run.
    pub phases: Vec<Phases>,
}

/// Where a partition's thread spent a run, in seconds, estimated from one window in
/// [`TIMED_EVERY`] (timing every window would cost a few percent where windows are a few
/// microseconds): handling its events, waiting at the barrier for the others, and the mail
/// (taking in what the others sent, handing over what it sends). A thread that waits long
/// waits for a busier partition, in windows where its own work was short.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct Phases {
    pub events: u64,
    pub events_s: f64,
    pub waiting_s: f64,
    pub mail_s: f64,
}

/// One window in this many is timed (`Phases`).
pub const TIMED_EVERY: u64 = 16;

/// Times the phases of the windows it is started on (`Phases`).
struct Stopwatch {
    last: Option<std::time::Instant>,
    /// Events, waiting, mail.
    spent: [std::time::Duration; 3],
    windows: u64,
    timed: u64,
}

const EVENTS: usize = 0;
const WAITING: usize = 1;
const MAIL: usize = 2;

impl Stopwatch {
    fn new() -> Stopwatch {
        Stopwatch { last: None, spent: Default::default(), windows: 0, timed: 0 }
    }

    /// A window begins; one in `TIMED_EVERY` is timed, drawn by a hash of its number (every
    /// 16th window in turn gave estimates 15 % off the run's length: the incast's windows
    /// repeat with its PFC cycles).
    fn window(&mut self) {
        let timed = crate::engine::splitmix64(self.windows).is_multiple_of(TIMED_EVERY);
        self.windows += 1;
        self.timed += timed as u64;
        self.last = timed.then(std::time::Instant::now);
    }

    /// The time since the last lap went to `phase` (if this window is timed).
    fn lap(&mut self, phase: usize) {
        if let Some(last) = self.last {
            let now = std::time::Instant::now();
            self.spent[phase] += now - last;
            self.last = Some(now);
        }
    }

    /// The estimates for the whole run of a partition that handled `events` events.
    fn phases(&self, events: u64) -> Phases {
        let scale = self.windows as f64 / self.timed.max(1) as f64;
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
        Ok(Partitioned { parts, of_node: of_node.to_vec(), lookahead, windows: 0, phases: Vec::new() })
    }

    /// Runs to the end, one thread per partition (the calling thread runs the first), calling
    /// `inspect(partition, network, event)` before each event a partition handles, and
    /// `observe` (on the calling thread) about every [`OBSERVE_EVERY`] events of the whole;
    /// when it breaks, the run stops at the next window's end with `Err(Stopped)`.
    ///
    /// A window runs from the earliest pending event of any partition for one lookahead. Each
    /// thread then posts what it sends to each other partition, and the earliest time of its
    /// own next event or of anything it sent; after a barrier every thread knows the next
    /// window and takes its mail. Posts alternate between two sets of mailboxes by window
    /// parity, so that one barrier a window suffices.
    pub fn run(&mut self, inspect: Option<&Inspect<'_>>, mut observe: impl FnMut(Progress) -> ControlFlow<()>) -> Result<(), Stopped> {
        let p = self.parts.len();
        // Under `until = "flows_done"` windows are the cells of a grid of the fabric's shortest
        // link delay, on which the run's end falls however the network is cut (`FlowsDone`).
        let cx = &self.parts[0].cx;
        let flows_done = self.parts[0].hosts.flows.done.is_some();
        let (step, fct_until, warmup) = (self.lookahead.ps(), cx.cfg.fct_until, cx.cfg.warmup);
        let grid = Time(step);
        let of_node: &[usize] = &self.of_node;
        // What each partition shares, each on cache lines of its own: written by one thread in
        // a window, read by the others after the barrier. (Side by side, two partitions' counters
        // shared a line that moved between the cores at every write.)
        let mail: [Vec<CachePadded<Mutex<Mail>>>; 2] = std::array::from_fn(|_| (0..p * p).map(|_| CachePadded::new(Mutex::default())).collect());
        let status: [Vec<CachePadded<Status>>; 2] = std::array::from_fn(|_| (0..p).map(|_| CachePadded::default()).collect());
        // Stopping is decided, like the rest, by window parity: every thread reads the flag set
        // before the barrier it has just passed, so that all of them stop at the same window (a
        // thread reading a flag set during its window would stop alone, leaving the others
        // waiting at the next barrier).
        let stop: CachePadded<[AtomicBool; 2]> = CachePadded::new(std::array::from_fn(|_| AtomicBool::new(false)));
        let barrier = CachePadded::new(SpinBarrier::new(p));
        // Each thread returns the windows it ran (all run the same ones) and where its time went.
        let work = |q: usize, net: &mut Network, observe: &mut dyn FnMut(Progress) -> ControlFlow<()>| -> (u64, Phases) {
            // A thread that panics breaks the barrier, so that the others end and the panic
            // reaches the caller instead of leaving them waiting.
            let _broken = BreakOnPanic(&barrier);
            status[0][q].publish(net.next_event_time().map_or(u64::MAX, |t| t.ps()), net, 0);
            let mut observed = 0;
            let mut sense = false;
            let mut out: Vec<Mail> = (0..p).map(|_| Mail::default()).collect();
            let mut watch = Stopwatch::new();
            for w in 0usize.. {
                watch.window();
                barrier.wait(&mut sense);
                watch.lap(WAITING);
                // The last window's mail is taken too: packets still in flight at the end are
                // the receivers'. A mailbox keeps its buffers, which its sender swaps back two
                // windows on: windows allocate nothing once the buffers have grown.
                for from in (0..p).filter(|&from| status[w % 2][from].posted_to(q)) {
                    let m = &mut *mail[w % 2][from * p + q].lock().expect("unpoisoned");
                    m.crossings.drain(..).for_each(|c| net.receive_crossing(c));
                    m.other.drain(..).for_each(|o| net.receive_outgoing(o));
                }
                if flows_done {
                    let all = status[w % 2].iter().map(|s| s.done());
                    if let Some(t) = FlowsDone::end(all, fct_until, warmup, grid) {
                        net.cx.cfg.end = net.cx.cfg.end.min(t);
                    }
                }
                let end = net.end();
                let start = status[w % 2].iter().map(|s| s.next.load(Ordering::Relaxed)).min().unwrap_or(u64::MAX);
                watch.lap(MAIL);
                if stop[w % 2].load(Ordering::Relaxed) || start > end.ps() {
                    return (w as u64, watch.phases(net.events_processed()));
                }
                let first = if flows_done { start / step * step } else { start };
                let until = Time(first.saturating_add(step - 1)).min(end);
                match inspect {
                    Some(f) => net.run_window(until, |n, ev| f(q, n, ev)),
                    None => net.run_window(until, |_, _| {}),
                }
                watch.lap(EVENTS);
                let next = net.next_event_time().into_iter().chain(net.take_crossings(until, &mut out));
                let mut earliest = next.min().map_or(u64::MAX, |t| t.ps());
                for (node, o) in net.cx.outbox.drain(..) {
                    if let Outgoing::Event(t, ..) = &o {
                        earliest = earliest.min(t.ps());
                    }
                    out[of_node[node as usize]].other.push(o);
                }
                let mut posted = 0;
                for (to, m) in out.iter_mut().enumerate().filter(|(_, m)| !(m.crossings.is_empty() && m.other.is_empty())) {
                    std::mem::swap(&mut *mail[(w + 1) % 2][q * p + to].lock().expect("unpoisoned"), m);
                    posted |= Status::bit(to);
                }
                status[(w + 1) % 2][q].publish(earliest, net, posted);
                watch.lap(MAIL);
                if q == 0 {
                    // The events handled up to the window before, as the partitions told at its end.
                    let events: u64 = status[w % 2].iter().map(|s| s.handled.load(Ordering::Relaxed)).sum();
                    if events - observed >= OBSERVE_EVERY {
                        observed = events;
                        if observe(Progress { now: until, end, events }).is_break() {
                            stop[(w + 1) % 2].store(true, Ordering::Relaxed);
                        }
                    }
                }
            }
            unreachable!("the windows end by returning")
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
        self.windows = ran[0].0;
        self.phases = ran.into_iter().map(|(_, p)| p).collect();
        if stop.iter().any(|s| s.load(Ordering::Relaxed)) {
            return Err(Stopped);
        }
        for net in &mut self.parts {
            net.finish();
        }
        Ok(())
    }
}

/// A sense-reversing barrier that spins (a window is microseconds of work: a futex sleep and
/// wake costs as much), yielding the core after a few hundred spins in case threads outnumber
/// cores. WebSearch k = 8 on 2 threads, this project's machine: 1.58-1.60x with
/// `std::sync::Barrier`, 1.75-1.79x with this one; 3 threads on 2 cores took 100 times as
/// long with 16 384 spins before yielding as with 256.
struct SpinBarrier {
    n: usize,
    arrived: AtomicUsize,
    sense: AtomicBool,
    /// A thread panicked: waiting would never end.
    broken: AtomicBool,
}

impl SpinBarrier {
    fn new(n: usize) -> SpinBarrier {
        SpinBarrier { n, arrived: AtomicUsize::new(0), sense: AtomicBool::new(false), broken: AtomicBool::new(false) }
    }

    /// Waits for every thread; `local` is the caller's own sense, flipped each time.
    fn wait(&self, local: &mut bool) {
        *local = !*local;
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Relaxed);
            self.sense.store(*local, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.sense.load(Ordering::Acquire) != *local {
            assert!(!self.broken.load(Ordering::Acquire), "another partition's thread panicked");
            spins += 1;
            if spins < 1 << 8 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Breaks its barrier if dropped while its thread panics.
struct BreakOnPanic<'a>(&'a SpinBarrier);

impl Drop for BreakOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.broken.store(true, Ordering::Release);
        }
    }
}

/// What a partition tells the others at a window's end: the time of its next event or of the
/// earliest packet it sent, its `FlowsDone` counts, the events it has handled, and which
/// mailboxes it posted to (bit `to % 64`: exact up to 64 partitions; beyond, a set bit may
/// send a partition to an empty mailbox, never past a full one). Relaxed: the barrier orders
/// the writes before the reads.
#[derive(Default)]
struct Status {
    next: AtomicU64,
    handled: AtomicU64,
    posted: AtomicU64,
    total: AtomicU64,
    finished: AtomicU64,
    counted: AtomicI64,
    last: AtomicU64,
}

impl Status {
    fn bit(to: usize) -> u64 {
        1 << (to % 64)
    }

    fn posted_to(&self, q: usize) -> bool {
        self.posted.load(Ordering::Relaxed) & Status::bit(q) != 0
    }

    fn publish(&self, next: u64, net: &Network, posted: u64) {
        let d = net.hosts.flows.done.unwrap_or_default();
        self.next.store(next, Ordering::Relaxed);
        self.handled.store(net.events_processed(), Ordering::Relaxed);
        self.posted.store(posted, Ordering::Relaxed);
        self.total.store(d.total, Ordering::Relaxed);
        self.finished.store(d.finished, Ordering::Relaxed);
        self.counted.store(d.counted, Ordering::Relaxed);
        self.last.store(d.last.ps(), Ordering::Relaxed);
    }

    fn done(&self) -> FlowsDone {
        FlowsDone {
            total: self.total.load(Ordering::Relaxed),
            finished: self.finished.load(Ordering::Relaxed),
            counted: self.counted.load(Ordering::Relaxed),
            last: Time(self.last.load(Ordering::Relaxed)),
        }
    }
}

/// What one partition sends another at a window's end.
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
