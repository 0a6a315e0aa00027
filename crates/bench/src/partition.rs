//! `rttlab-bench partition`: what one simulation could gain from P threads, predicted from its
//! own event stream before any of it runs in parallel (issue: scale, part 2).
//!
//! The model (conservative synchronization, as `../shared/design/architecture.md` plans it):
//! - **Partitions.** The fabric is cut into P logical processes. Each ToR (a switch with hosts)
//!   goes with its hosts, in contiguous blocks, so that a fat-tree's pods stay whole; with more
//!   partitions than ToRs a ToR's hosts are split among several. Every other switch goes to the
//!   partition it has most links into (ties: the one with fewest such switches so far).
//! - **Windows.** Partitions run in windows of the lookahead, the smallest propagation delay of
//!   a link between two partitions: nothing sent in a window can arrive in it elsewhere.
//! - **Ownership.** An event belongs to the node whose state it changes first: a port's event to
//!   the port's node, a host's to the host, a connection's timer to its sender (a delayed ACK
//!   to its receiver), a workload's arrival to its host. The run-wide events (time-series
//!   samples, the warm-up's end) are serial.
//! - **Critical path.** A window takes as long as its busiest partition: with `n(w, p)` events
//!   of window w in partition p, the parallel run handles `C = Σ_w max_p n(w, p)` events in
//!   sequence (plus the serial ones) where the single thread handles `E = Σ n`.
//! - **Without windows.** The same cut run asynchronously, each partition up to the others'
//!   clocks plus the lookahead, as in Chandy–Misra–Bryant without windows: the scheme
//!   `rttlab_sim::parallel::Partitioned::run` runs since it replaced the windows. An event of
//!   partition p at time τ starts once p's event before it is done and every event of any
//!   partition at τ − lookahead or earlier is done (one unit each). `C_async` is when the last
//!   is done, and `E / C_async` (`bound_without_windows`) bounds the speed-up with free
//!   synchronization (the mail counted, below).
//! - **The runner** (`predicted_speedup`). It publishes a partition's clock at the end of each
//!   span of half a lookahead (`SPANS_PER_LOOKAHEAD`), so an event at τ waits for every event
//!   at τ − (lookahead − span) or earlier, and each span a partition handles events in costs it
//!   `b(2)` (publishing its clock and reading the others', taken as a two-thread barrier's
//!   time whatever P: the others' clocks are loaded side by side): the prediction is
//!   `S(P) = E / C_runner` in events of `t_e`. A run that ends when its flows finish may also
//!   wait to learn the run goes on (`parallel::Horizon`); that is left out.
//! - **Mail.** A packet that crosses from one partition to another is copied out by its sender
//!   at the end of a window (the runner: of a span) and taken in by its receiver at the start
//!   of the next: each side pays `t_x` for it (`--crossing-ns`, default 40 ns: on this
//!   project's machine a 2-thread incast took 45 ns a packet to copy out and 42 ns to take in,
//!   2-thread WebSearch at k = 8 about 33 ns either way), `κ = t_x / t_e` events. Both are
//!   counted in the window of the packet's arrival, so the work of a partition in a window is
//!   `n(w, p) + κ·x(w, p)`, with
//!   `x` the packets it sent or received across the cut, and the critical path with the mail
//!   is `C_m = Σ_w max_p` of that.
//! - **Cost.** Every event costs the single-threaded run's mean `t_e`; `b(P) = b(2)·log2 P`
//!   (a tree barrier), `b(2)` a spin barrier of two threads measured on this machine. With
//!   windows (`windowed_speedup`, the runner before; kept to compare) each window that holds
//!   events ends at a barrier (empty windows are skipped: the next window starts at the
//!   earliest pending event of any partition): `S(P) = E·t_e / (C_m·t_e + W·b(P))`.
//!
//! What it leaves out: caches (a partition's working set is smaller than the whole's, which
//! helps), events whose cost differs by kind (a sender's cost more than a switch's), what
//! partitions tell each other beside packets (rare), and any zero-delay interaction the
//! simulator has today between nodes (a drop at a switch that a sender's statistics count at
//! once); the parallel simulator must remove those, and this model assumes it has.

use rttlab_sim::core::engine::EventKind;
use rttlab_sim::fabric::topology::Graph;
use rttlab_sim::parallel::{lookahead, partition};
use rttlab_sim::Network;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// One partition count's tally, updated event by event.
struct Tally {
    p: usize,
    part: Vec<usize>,
    lookahead_ps: u64,
    window: u64,
    /// The window's events and packets crossing the cut, per partition.
    counts: Vec<u64>,
    crossed: Vec<u64>,
    /// `C`, and `C_m` (events and the mail's event-equivalents, `κ` each).
    critical: u64,
    critical_work: f64,
    crossing_cost: f64,
    crossings: u64,
    windows: u64,
    per_partition: Vec<u64>,
    /// Without windows, synchronization free; and as the runner runs (`Unwindowed`).
    free: Unwindowed,
    runner: Unwindowed,
}

/// A cut run without windows (`C_async`): an event of partition p at τ is done one unit (plus
/// `κ` for a packet that crossed) after p's event before it and after every event at
/// τ − `lag_ps` or earlier. With spans (`span_ps`, 0: none), a partition also pays
/// `span_cost` units for each span of simulated time it handles events in.
struct Unwindowed {
    lag_ps: u64,
    span_ps: u64,
    span_cost: f64,
    /// When each partition's last event is done, and the span it was in.
    done: Vec<f64>,
    span: Vec<u64>,
    /// The events of the last `lag_ps` in time order with when each is done, and the latest
    /// an event before them is.
    recent: std::collections::VecDeque<(u64, f64)>,
    done_before: f64,
}

impl Unwindowed {
    fn new(p: usize, lag_ps: u64, span_ps: u64, span_cost: f64) -> Unwindowed {
        Unwindowed { lag_ps, span_ps, span_cost, done: vec![0.0; p], span: vec![u64::MAX; p], recent: Default::default(), done_before: 0.0 }
    }

    /// The event at `t_ps` of partition `q` (`None`: run-wide), a packet from partition
    /// `sender` if it crossed the cut (then each side also pays `crossing_cost`).
    fn add(&mut self, t_ps: u64, q: Option<usize>, sender: Option<usize>, crossing_cost: f64) {
        while let Some(&(_, done)) = self.recent.front().filter(|&&(t, _)| t.saturating_add(self.lag_ps) <= t_ps) {
            self.done_before = self.done_before.max(done);
            self.recent.pop_front();
        }
        if let Some(s) = sender {
            self.done[s] += crossing_cost;
        }
        let done = match q {
            Some(q) => {
                let mail = sender.map_or(0.0, |_| crossing_cost);
                let span = t_ps.checked_div(self.span_ps).unwrap_or(0);
                let sync = if self.span_ps > 0 && span != self.span[q] { self.span_cost } else { 0.0 };
                self.span[q] = span;
                self.done[q] = self.done[q].max(self.done_before) + 1.0 + mail + sync;
                self.done[q]
            }
            None => {
                let d = self.done.iter().copied().fold(0.0, f64::max) + 1.0;
                self.done.fill(d);
                d
            }
        };
        self.recent.push_back((t_ps, done));
    }

    /// When the last event is done.
    fn total(&self) -> f64 {
        self.done.iter().copied().fold(0.0, f64::max)
    }
}

impl Tally {
    /// `crossing_cost`: `κ`, what a packet crossing the cut costs each side, in events;
    /// `span_cost`: what publishing a span's end costs the runner, in events.
    fn new(graph: &Graph, p: usize, crossing_cost: f64, span_cost: f64) -> Tally {
        let part = partition(graph, p);
        let lookahead_ps = lookahead(graph, &part);
        let span_ps = lookahead_ps / rttlab_sim::parallel::SPANS_PER_LOOKAHEAD;
        Tally {
            p,
            part,
            lookahead_ps,
            window: u64::MAX,
            counts: vec![0; p],
            crossed: vec![0; p],
            critical: 0,
            critical_work: 0.0,
            crossing_cost,
            crossings: 0,
            windows: 0,
            per_partition: vec![0; p],
            free: Unwindowed::new(p, lookahead_ps, 0, 0.0),
            runner: Unwindowed::new(p, lookahead_ps - span_ps, span_ps, span_cost),
        }
    }

    fn close_window(&mut self) {
        if let Some(&m) = self.counts.iter().max().filter(|&&m| m > 0) {
            self.critical += m;
            self.critical_work += self.counts.iter().zip(&self.crossed).map(|(&n, &x)| n as f64 + self.crossing_cost * x as f64).fold(0.0, f64::max);
            self.windows += 1;
        }
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.crossed.iter_mut().for_each(|c| *c = 0);
    }

    /// The event at `t_ps` of `node` (`None`: run-wide), a packet's arrival from node `from`
    /// if it is one. Events come in time order (`Unwindowed::add` needs it).
    fn add(&mut self, t_ps: u64, node: Option<u32>, from: Option<u32>) {
        let q = node.map(|n| self.part[n as usize]);
        let sender = from.map(|n| self.part[n as usize]).filter(|&s| Some(s) != q && q.is_some());
        self.free.add(t_ps, q, sender, self.crossing_cost);
        self.runner.add(t_ps, q, sender, self.crossing_cost);
        let w = t_ps.checked_div(self.lookahead_ps).unwrap_or(0);
        if w != self.window {
            self.close_window();
            self.window = w;
        }
        match q {
            Some(q) => {
                self.counts[q] += 1;
                self.per_partition[q] += 1;
                if let Some(s) = sender {
                    self.crossed[q] += 1;
                    self.crossed[s] += 1;
                    self.crossings += 1;
                }
            }
            // A run-wide event runs alone, between windows.
            None => {
                self.close_window();
                self.critical += 1;
            }
        }
    }
}

/// What the model predicts for one partition count.
#[derive(Serialize)]
pub struct Prediction {
    pub partitions: usize,
    pub lookahead_us: f64,
    /// Windows that held events (each ends at a barrier).
    pub windows: u64,
    pub events_per_window: f64,
    /// Events handled in sequence: the busiest partition of each window, and the serial ones.
    pub critical_path_events: u64,
    /// Packets that cross the cut, and what each costs each side (`κ`, in events).
    pub crossings: u64,
    pub crossing_events: f64,
    /// `C_m`: the critical path with the mail, in events.
    pub critical_path_with_mail: f64,
    /// The busiest partition's share of all events, against 1/P.
    pub busiest_share: f64,
    /// `E / C`: the speed-up with free barriers and free mail.
    pub bound: f64,
    /// `E / C_m`: with free barriers.
    pub bound_with_mail: f64,
    /// `E / C_async`: the speed-up of the same cut without windows, with free synchronization
    /// (the mail counted).
    pub bound_without_windows: f64,
    pub barrier_us: f64,
    /// As the runner runs: without windows, others' progress seen at span ends, each span
    /// costing a two-thread barrier's time, the mail counted.
    pub predicted_speedup: f64,
    /// As the runner ran before: in windows, each ending at a barrier, the mail counted.
    pub windowed_speedup: f64,
}

/// A sense-reversing spin barrier's cost in µs per crossing, two threads, measured here.
pub fn barrier_us() -> f64 {
    const ROUNDS: usize = 200_000;
    let count = Arc::new(AtomicUsize::new(0));
    let sense = Arc::new(AtomicUsize::new(0));
    let cross = |count: &AtomicUsize, sense: &AtomicUsize, local: &mut usize| {
        *local ^= 1;
        if count.fetch_add(1, Ordering::AcqRel) == 1 {
            count.store(0, Ordering::Relaxed);
            sense.store(*local, Ordering::Release);
        } else {
            while sense.load(Ordering::Acquire) != *local {
                std::hint::spin_loop();
            }
        }
    };
    let (c2, s2) = (count.clone(), sense.clone());
    let other = std::thread::spawn(move || {
        let mut local = 0;
        for _ in 0..ROUNDS {
            cross(&c2, &s2, &mut local);
        }
    });
    let start = Instant::now();
    let mut local = 0;
    for _ in 0..ROUNDS {
        cross(&count, &sense, &mut local);
    }
    let t = start.elapsed().as_secs_f64();
    other.join().expect("barrier thread");
    t / ROUNDS as f64 * 1e6
}

/// The kinds of event `events_by_kind` counts, by `kind`'s index.
const KINDS: [&str; 18] = [
    "transmit completions",
    "arrivals at hosts",
    "arrivals at switches",
    "host pacing wake-ups",
    "time-series samples",
    "port kicks (PFC frames queued)",
    "warm-up end",
    "connection timers",
    "workload arrivals",
    "host receive processing",
    "message transport timeouts",
    "drop notices",
    "lost pings",
    "fault edges",
    "packets lost on links",
    "senders done, told to receivers",
    "receiver credit pulls",
    "receiver credit rate updates",
];

/// What an event is, as an index into `KINDS`: a packet's arrival is told apart by what it
/// arrives at, a switch or a host (the two cost differently).
fn kind(net: &Network, kind: &EventKind) -> usize {
    match kind {
        EventKind::TxDone { .. } => 0,
        EventKind::Arrive { port, .. } if net.ports()[port.idx()].node < net.graph().hosts => 1,
        EventKind::Arrive { .. } => 2,
        EventKind::HostWake(_) => 3,
        EventKind::Sample => 4,
        EventKind::Kick(_) => 5,
        EventKind::WarmupEnd => 6,
        EventKind::Timer { .. } => 7,
        EventKind::Arrival { .. } => 8,
        EventKind::HostRx(_) => 9,
        EventKind::MessageRto(_) => 10,
        EventKind::Dropped { .. } => 11,
        EventKind::PingLost { .. } => 12,
        EventKind::Fault(_) => 13,
        EventKind::Lost { .. } => 14,
        EventKind::Closed { .. } => 15,
        EventKind::Pull(_) => 16,
        EventKind::PullRate(_) => 17,
    }
}

/// Runs `net` through, tallying its events for each partition count and by kind, and predicts
/// each count's speed-up from `event_us`, the single-threaded run's time per event, `b2_us`,
/// the two-thread barrier, and `crossing_cost` (`κ`, in events).
pub fn predict(mut net: Network, counts: &[usize], event_us: f64, b2_us: f64, crossing_cost: f64) -> (u64, BTreeMap<&'static str, u64>, Vec<Prediction>) {
    let barrier = |p: usize| if p > 1 { b2_us * (p as f64).log2() } else { 0.0 };
    let span_cost = |p: usize| if event_us > 0.0 && p > 1 { b2_us / event_us } else { 0.0 };
    let mut tallies: Vec<Tally> = counts.iter().map(|&p| Tally::new(net.graph(), p, crossing_cost, span_cost(p))).collect();
    let mut events = 0u64;
    let mut counts = [0u64; KINDS.len()];
    net.run_inspected(|net, ev| {
        events += 1;
        counts[kind(net, &ev.kind)] += 1;
        let node = net.owner(&ev.kind);
        let from = match ev.kind {
            EventKind::Arrive { port, .. } => Some(net.ports()[net.ports()[port.idx()].peer.idx()].node),
            _ => None,
        };
        for t in &mut tallies {
            t.add(ev.time.ps(), node, from);
        }
    });
    let predictions = tallies
        .into_iter()
        .map(|mut t| {
            t.close_window();
            let barrier = barrier(t.p);
            let serial = events as f64 * event_us;
            Prediction {
                partitions: t.p,
                lookahead_us: t.lookahead_ps as f64 / 1e6,
                windows: t.windows,
                events_per_window: events as f64 / t.windows.max(1) as f64,
                critical_path_events: t.critical,
                crossings: t.crossings,
                crossing_events: t.crossing_cost,
                critical_path_with_mail: t.critical_work,
                busiest_share: *t.per_partition.iter().max().unwrap_or(&0) as f64 / events.max(1) as f64,
                bound: events as f64 / t.critical.max(1) as f64,
                bound_with_mail: events as f64 / t.critical_work.max(1.0),
                bound_without_windows: events as f64 / t.free.total().max(1.0),
                barrier_us: barrier,
                predicted_speedup: events as f64 / t.runner.total().max(1.0),
                windowed_speedup: serial / (t.critical_work * event_us + t.windows as f64 * barrier),
            }
        })
        .collect();
    let by_kind = KINDS.into_iter().zip(counts).filter(|&(_, n)| n > 0).collect();
    (events, by_kind, predictions)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fat_tree(k: u32) -> Graph {
        let text = format!(
            "duration = \"1ms\"\n[topology]\nkind = \"fat_tree\"\nk = {k}\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n[[flows]]\nsrc = \"1-2\"\ndst = 0\n"
        );
        Graph::from_scenario(&rttlab_sim::Scenario::from_toml(&text).expect("scenario"))
    }

    /// A k = 4 fat-tree in two: pods 0–1 and 2–3 whole (16 hosts; edges 16–23, aggregation
    /// 24–31, cores 32–35), the cores two a side, the lookahead the links' 1 µs.
    #[test]
    fn two_partitions_keep_pods_whole_and_share_the_cores() {
        let g = fat_tree(4);
        let part = partition(&g, 2);
        assert_eq!(&part[..16], &[0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
        assert_eq!(&part[16..24], &[0, 0, 0, 0, 1, 1, 1, 1], "edges follow their hosts");
        assert_eq!(&part[24..32], &[0, 0, 0, 0, 1, 1, 1, 1], "aggregation follows its pod");
        assert_eq!(&part[32..36], &[0, 1, 0, 1], "cores alternate");
        assert_eq!(lookahead(&g, &part), 1_000_000);
        let one = partition(&g, 1);
        assert!(one.iter().all(|&p| p == 0));
        assert_eq!(lookahead(&g, &one), u64::MAX);
        // More partitions than ToRs: each host alone or nearly, every node placed.
        let many = partition(&g, 32);
        assert!(many.iter().all(|&p| p < 32));
    }

    /// The critical path by hand: window 0 holds 3 events in partition 0 and 1 in partition 1
    /// (3 in sequence), window 1 holds 2 in partition 1 (2), then a run-wide event (1): 6 of 7.
    #[test]
    fn the_critical_path_is_each_windows_busiest_partition() {
        let g = fat_tree(4);
        let mut t = Tally::new(&g, 2, 1.0, 0.0);
        let (a, b) = (Some(0), Some(15)); // a host of each partition
        for (time, node) in [(0, a), (10, a), (500_000, a), (999_999, b), (1_000_000, b), (1_500_000, b), (1_600_000, None)] {
            t.add(time, node, None);
        }
        t.close_window();
        assert_eq!((t.critical, t.windows), (6, 2));
        assert_eq!(t.per_partition, vec![3, 3]);
    }

    /// Hosts 1 and 0 of a k = 4 fat-tree share their edge switch: every packet, data or ACK,
    /// arrives at that switch and then at a host, so the two kinds of arrival count alike, and
    /// the kinds add up to every event.
    #[test]
    fn events_by_kind_tell_a_switch_arrival_from_a_host_arrival() {
        let text = "duration = \"1ms\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n[[flows]]\nsrc = 1\ndst = 0\nsize = \"100KB\"\n";
        let net = Network::new(&rttlab_sim::Scenario::from_toml(text).expect("scenario")).expect("network");
        let (events, by_kind, _) = predict(net, &[1], 0.0, 0.0, 1.0);
        let (at_switches, at_hosts) = (by_kind["arrivals at switches"], by_kind["arrivals at hosts"]);
        assert!(at_switches > 67, "100 KB is at least 67 data packets of 1500 B, and some ACKs: {by_kind:?}");
        assert_eq!(at_switches, at_hosts);
        assert_eq!(by_kind.values().sum::<u64>(), events);
    }

    /// Without windows, by hand (lookahead 1 µs): a's events at 0 and 10 ps take units 1 and
    /// 2 while b's at 20 ps takes unit 1 beside them; b's at 1 µs + 5 ps waits for a's at 0
    /// (unit 2), b's at 1 µs + 10 ps for a's at 10 (unit 3); the run-wide event comes last
    /// (unit 4). Windowed, the same events take 5: each window as long as its busiest side.
    #[test]
    fn without_windows_an_event_waits_only_for_what_could_reach_it() {
        let g = fat_tree(4);
        let mut t = Tally::new(&g, 2, 1.0, 0.0);
        let (a, b) = (Some(0), Some(15));
        for (time, node) in [(0, a), (10, a), (20, b), (1_000_005, b), (1_000_010, b), (1_500_000, None)] {
            t.add(time, node, None);
        }
        t.close_window();
        assert_eq!(t.free.total(), 4.0);
        assert_eq!(t.critical, 5);
    }

    /// As the runner runs, by hand (lookahead 1 µs, spans of 0.5 µs costing 0.5 each): a's
    /// events at 0 and 10 ps are done at 1.5 and 2.5 (the first opens a's span), b's at 20 ps
    /// at 1.5; b's at 0.6 µs opens its next span and waits for every event up to 0.1 µs, since
    /// the others' progress shows only at their spans' ends: 2.5 + 1 + 0.5 = 4. Free, it waits
    /// for nothing a lookahead back and is done at 2.
    #[test]
    fn the_runner_sees_the_others_at_their_spans_ends_and_pays_for_each_span() {
        let g = fat_tree(4);
        let mut t = Tally::new(&g, 2, 0.0, 0.5);
        let (a, b) = (Some(0), Some(15));
        for (time, node) in [(0, a), (10, a), (20, b), (600_000, b)] {
            t.add(time, node, None);
        }
        assert_eq!((t.runner.total(), t.free.total()), (4.0, 2.0));
    }

    /// The mail by hand (κ = 0.5): in window 0, a packet from b arrives at a (a: 1 event and
    /// a crossing, 1.5; b: the crossing alone, 0.5) and b handles 2 events of its own (2.5): the
    /// window's work is 2.5 where its events alone were 2. In window 1 a packet goes from a to a
    /// switch of a's own partition (no crossing): 1.
    #[test]
    fn a_packet_crossing_the_cut_costs_both_sides() {
        let g = fat_tree(4);
        let mut t = Tally::new(&g, 2, 0.5, 0.0);
        let (a, b, edge_a) = (Some(0), Some(15), Some(16));
        for (time, node, from) in [(0, a, b), (10, b, None), (20, b, None), (1_000_000, edge_a, a)] {
            t.add(time, node, from);
        }
        t.close_window();
        assert_eq!((t.critical, t.critical_work, t.crossings), (3, 3.5, 1));
    }
}
