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

pub(crate) mod boundary;
mod cut;
mod horizon;
mod mail;
mod merge;
mod runner;

pub use cut::{lookahead, partition};
pub(crate) use mail::{Crossing, Mail};
pub use runner::{Phases, SPANS_PER_LOOKAHEAD, TIMED_EVERY};

use crate::core::engine::Event;
use crate::fabric::topology::Graph;
use crate::network::Network;
use crate::scenario::{Scenario, ScenarioError, Threads, AUTO_THREADS_HOSTS};
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

/// What sees every event a partition handles: `(partition, network, event)`.
pub type Inspect<'a> = dyn Fn(usize, &Network, &Event) + Sync + 'a;

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

impl Partitioned {
    /// The network of `s` cut into `p` partitions.
    pub fn new(s: &Scenario, p: usize) -> Result<Partitioned, ScenarioError> {
        let graph = Graph::from_scenario(s);
        let of_node: std::sync::Arc<[usize]> = partition(&graph, p).into();
        let lookahead = graph.links.iter().map(|l| l.delay).min().unwrap_or(Time(1)).max(Time(1));
        let parts = (0..p).map(|me| Network::build(s, None, Some((me, of_node.clone())))).collect::<Result<_, _>>()?;
        Ok(Partitioned { parts, of_node: of_node.to_vec(), lookahead, spans: 0, phases: Vec::new() })
    }
}
