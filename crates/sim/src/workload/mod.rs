//! Workloads: traffic generated while the run goes (`[[workloads]]` of a scenario).
//!
//! Each generator holds one pending `Arrival` event per source host (one in all for an
//! incast), so its memory is bounded by the hosts, not by the run length:
//! - `rpc`: a client issues RPCs as a Poisson process; the request rides a persistent
//!   connection to the server, whose NIC answers on the reverse connection when the whole
//!   request has arrived (TIMELY §6.2); the latency is recorded when the response completes.
//! - `flow_sizes`: each host starts sized flows as a Poisson process at a target load, sizes
//!   from a CDF (reference algorithms.md §9.3); each flow is a fresh connection whose FCT and
//!   slowdown are recorded when its last byte arrives.
//! - `incast`: every sender starts sized flows to one receiver at once, at `start` and then at
//!   Poisson events.
//! - `pinger`: probes echoed by the peer's NIC; their round trips are the fabric RTT.

pub mod act;
pub mod cdf;
pub mod collective;
pub mod matrix;

use crate::core::engine::{exponential, rng_stream, Rng, Stream};
use crate::fabric::routing::Routing;
use crate::scenario::{Peers, Placement, Scenario, ScenarioError, ServerAssignment, Workload};
use cdf::Cdf;
use rand::Rng as _;
use rttlab_cc::Time;
use std::collections::HashMap;

/// Candidate peers of each source host.
pub struct PeerTable {
    lists: Vec<Vec<u32>>,
    /// Index into `lists` per source.
    of_source: Vec<u32>,
}

impl PeerTable {
    /// `Uniform`: every candidate; `LongestPath`: per edge switch of a source, the candidates
    /// farthest from it in hops (hosts of the same edge switch are 2 hops apart). A source drawn
    /// as its own peer draws again; a source with no other candidate is an error.
    fn build(routing: &Routing, sources: &[u32], candidates: Vec<u32>, peers: Peers) -> Result<PeerTable, u32> {
        let mut lists = Vec::new();
        let mut of_source = Vec::with_capacity(sources.len());
        let mut by_edge: HashMap<u32, u32> = HashMap::new();
        for &h in sources {
            let key = match peers {
                Peers::Uniform => 0,
                Peers::LongestPath => routing.edge_of[h as usize],
            };
            let idx = *by_edge.entry(key).or_insert_with(|| {
                let list = match peers {
                    Peers::Uniform => candidates.clone(),
                    Peers::LongestPath => {
                        let hops = |c: u32| routing.hops(h, c).unwrap_or(0);
                        let far = candidates.iter().filter(|&&c| c != h).map(|&c| hops(c)).max().unwrap_or(0);
                        candidates.iter().copied().filter(|&c| hops(c) == far).collect()
                    }
                };
                lists.push(list);
                lists.len() as u32 - 1
            });
            if lists[idx as usize].iter().all(|&c| c == h) {
                return Err(h);
            }
            of_source.push(idx);
        }
        Ok(PeerTable { lists, of_source })
    }

    /// Keeps, for each source, `n` distinct candidates chosen once (all when it has fewer):
    /// drawn independently (`Random`), or (`Balanced`) so that every candidate is chosen by
    /// as many sources as the candidate lists allow (`balance`).
    fn narrow(&mut self, sources: &[u32], n: u32, assignment: ServerAssignment, rngs: &mut [Rng]) {
        let mut lists: Vec<Vec<u32>> = Vec::with_capacity(sources.len());
        for (i, &h) in sources.iter().enumerate() {
            let mut list: Vec<u32> = self.lists[self.of_source[i] as usize].iter().copied().filter(|&c| c != h).collect();
            let shuffled = match assignment {
                ServerAssignment::Random => (n as usize).min(list.len()),
                ServerAssignment::Balanced => list.len(),
            };
            for j in 0..shuffled {
                let k = rngs[i].random_range(j..list.len());
                list.swap(j, k);
            }
            lists.push(list);
        }
        self.lists = match assignment {
            ServerAssignment::Random => lists
                .into_iter()
                .map(|mut l| {
                    l.truncate(n as usize);
                    l
                })
                .collect(),
            ServerAssignment::Balanced => balance(&lists, n as usize),
        };
        self.of_source = (0..sources.len() as u32).collect();
    }

    /// The candidates kept for source `i`.
    pub fn of(&self, i: usize) -> &[u32] {
        &self.lists[self.of_source[i] as usize]
    }

    pub(crate) fn pick(&self, i: usize, h: u32, rng: &mut Rng) -> u32 {
        let list = &self.lists[self.of_source[i] as usize];
        loop {
            let c = list[rng.random_range(0..list.len())];
            if c != h {
                return c;
            }
        }
    }
}

/// For each source, `n` of its candidates (`candidates[i]`, in a random order; all of them when
/// it has fewer) such that every candidate is chosen by at most `⌈choices / candidates⌉`
/// sources, or one more where the lists allow no better: a b-matching of the bipartite graph
/// of sources and candidates, grown one choice at a time along shortest augmenting paths (a
/// source takes a candidate with room, or one that another source gives up for a candidate of
/// its own with room), each source's candidates looked at in its random order.
fn balance(candidates: &[Vec<u32>], n: usize) -> Vec<Vec<u32>> {
    let wanted: Vec<usize> = candidates.iter().map(|l| n.min(l.len())).collect();
    let mut servers: Vec<u32> = candidates.iter().flatten().copied().collect();
    servers.sort_unstable();
    servers.dedup();
    let index: HashMap<u32, usize> = servers.iter().enumerate().map(|(i, &s)| (s, i)).collect();
    let lists: Vec<Vec<usize>> = candidates.iter().map(|l| l.iter().map(|s| index[s]).collect()).collect();
    let mut m = Matching {
        chosen: vec![Vec::new(); lists.len()],
        holders: vec![Vec::new(); servers.len()],
        cap: wanted.iter().sum::<usize>().div_ceil(servers.len().max(1)),
    };
    for (src, &want) in wanted.iter().enumerate() {
        while m.chosen[src].len() < want {
            if !m.augment(src, &lists) {
                m.cap += 1; // the lists allow no assignment this even
            }
        }
    }
    m.chosen.into_iter().map(|l| l.into_iter().map(|si| servers[si]).collect()).collect()
}

/// A partial assignment of servers (by index) to sources, each server held by at most `cap`.
struct Matching {
    chosen: Vec<Vec<usize>>,
    holders: Vec<Vec<usize>>,
    cap: usize,
}

impl Matching {
    /// Gives source `src` one more server along a shortest augmenting path; false if no path
    /// reaches a server with room.
    fn augment(&mut self, src: usize, lists: &[Vec<usize>]) -> bool {
        // `from[server]`: the source that reached it; `through[source]`: the server it holds
        // and was reached through (none for `src`).
        let mut from: HashMap<usize, usize> = HashMap::new();
        let mut through: Vec<Option<usize>> = vec![None; lists.len()];
        let mut seen = vec![false; lists.len()];
        let mut queue = std::collections::VecDeque::from([src]);
        seen[src] = true;
        while let Some(x) = queue.pop_front() {
            for &si in &lists[x] {
                if self.chosen[x].contains(&si) || from.contains_key(&si) {
                    continue;
                }
                from.insert(si, x);
                if self.holders[si].len() < self.cap {
                    self.shift(src, si, x, &from, &through);
                    return true;
                }
                for &y in &self.holders[si] {
                    if !seen[y] {
                        (seen[y], through[y]) = (true, Some(si));
                        queue.push_back(y);
                    }
                }
            }
        }
        false
    }

    /// Applies the path ending with source `x` taking server `si`: each source on it takes the
    /// server after it and gives up the one it was reached through, back to `src`.
    fn shift(&mut self, src: usize, mut si: usize, mut x: usize, from: &HashMap<usize, usize>, through: &[Option<usize>]) {
        loop {
            self.chosen[x].push(si);
            self.holders[si].push(x);
            let Some(held) = through[x].filter(|_| x != src) else { return };
            self.chosen[x].retain(|&c| c != held);
            self.holders[held].retain(|&h| h != x);
            (si, x) = (held, from[&held]);
        }
    }
}

/// What a generator does at each event (the scenario's settings it needs while running).
#[derive(Clone, Debug)]
pub(crate) enum Kind {
    Rpc {
        size: u64,
        response: u64,
        max_pending: u32,
    },
    FlowSizes {
        max_active: u32,
    },
    Incast {
        size: u64,
        connections: u32,
        max_active: u32,
        senders_per_incast: Option<u32>,
    },
    Pinger {
        bytes: u32,
        max_pending: u32,
    },
    /// A connection matrix: its sources are its transfers, and a source's `pending` counts the
    /// activations of the trigger it waits for.
    Matrix(std::sync::Arc<matrix::Matrix>),
    /// A `[[jobs]]` entry: its sources are its ranks' hosts.
    Job(Box<collective::JobRun>),
}

/// Which of a generator's kept connections (`Generator::conns`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ConnKey {
    /// From the first host to the second.
    Hosts(u32, u32),
    /// A matrix's connection, by its id.
    Matrix(u32),
}

/// What an activation of a matrix's transfer does (`Generator::activated`).
pub(crate) enum Activation {
    Wait,
    Start,
    /// Start once this has passed.
    After(Time),
}

/// A running `[[workloads]]` entry.
pub struct Generator {
    pub(crate) kind: Kind,
    pub(crate) class: u8,
    pub group: u16,
    /// Hosts that act (clients, hosts, senders); an incast acts once for all of them.
    pub sources: Vec<u32>,
    /// An incast's receivers: one, or several to draw from at each incast.
    pub(crate) receivers: Vec<u32>,
    pub(crate) rngs: Vec<Rng>,
    pub peers: Option<PeerTable>,
    pub(crate) cdf: Option<Cdf>,
    /// Mean gap between a source's arrivals, in ps.
    gap_ps: Vec<f64>,
    start: Time,
    stop: Time,
    /// The connections it keeps: an RPC's request connection of each (client, server) pair, a
    /// job's of each pair of ranks, a matrix's of each connection id that outlives a transfer.
    pub(crate) conns: HashMap<ConnKey, u32>,
    /// RPC: the response connection of each request connection, opened by the server when the
    /// first request arrives.
    pub(crate) responses: HashMap<u32, u32>,
    /// Per source, what it has outstanding against its limit: RPCs, unfinished flows or
    /// unanswered probes (a matrix's transfer: the activations it has heard of).
    pending: Vec<u32>,
    /// What its connections run (`RunConfig::conns`): a job's own controller and transport,
    /// else 0, the run's.
    pub(crate) conn: u16,
}

impl Generator {
    pub fn new(s: &Scenario, w: usize, group: u16, routing: &Routing, line_rate_bps: &[u64]) -> Result<Generator, ScenarioError> {
        let cfg = &s.workloads[w];
        let at = |k: &str| format!("workloads[{w}].{k}");
        let (sources, candidates, peers, start, stop) = match cfg {
            Workload::Rpc(c) => {
                (s.host_set(&at("clients"), c.clients.as_ref())?, Some(s.host_set(&at("servers"), c.servers.as_ref())?), c.peers, c.start, c.stop)
            }
            Workload::FlowSizes(c) => {
                let hosts = s.host_set(&at("hosts"), c.hosts.as_ref())?;
                (hosts.clone(), Some(hosts), c.peers, c.start, c.stop)
            }
            Workload::Incast(c) => (s.host_set(&at("senders"), Some(&c.senders))?, None, Peers::Uniform, c.start, c.stop),
            Workload::Pinger(c) => {
                let hosts = s.host_set(&at("hosts"), c.hosts.as_ref())?;
                (hosts.clone(), Some(hosts), c.peers, c.start, c.stop)
            }
            // A matrix's sources are its transfers, each acting at its sending host.
            Workload::Matrix(c) => (c.matrix.transfers.iter().map(|t| t.src).collect(), None, Peers::Uniform, Time::ZERO, None),
        };
        let mut peers = match candidates {
            Some(cands) => Some(PeerTable::build(routing, &sources, cands, peers).map_err(|h| ScenarioError::Invalid {
                field: at("peers"),
                value: serde_json::to_string(&peers).unwrap_or_default(),
                allowed: format!("host {h} has no candidate peer other than itself"),
            })?),
            None => None,
        };
        let (kind, class, cdf) = match cfg {
            Workload::Rpc(c) => (Kind::Rpc { size: c.size.0, response: c.response.unwrap_or(c.size).0, max_pending: c.max_pending }, c.class, None),
            Workload::FlowSizes(c) => (Kind::FlowSizes { max_active: c.max_active }, c.class, Some(Cdf::from_spec(&c.cdf).expect("validated"))),
            Workload::Incast(c) => {
                (Kind::Incast { size: c.size.0, connections: c.connections, max_active: c.max_active, senders_per_incast: c.senders_per_incast }, c.class, None)
            }
            Workload::Pinger(c) => (Kind::Pinger { bytes: c.size.0 as u32, max_pending: c.max_pending }, c.class, None),
            Workload::Matrix(c) => (Kind::Matrix(c.matrix.clone()), c.class, None),
        };
        let gap_ps = sources
            .iter()
            .map(|&h| match cfg {
                Workload::Rpc(c) => 1e12 / c.rate,
                Workload::FlowSizes(c) => cdf.as_ref().expect("flow sizes have a CDF").mean() * 8e12 / (line_rate_bps[h as usize] as f64 * c.load),
                Workload::Incast(c) => c.rate.map_or(f64::INFINITY, |r| 1e12 / r),
                Workload::Pinger(c) => c.interval.ps() as f64,
                Workload::Matrix(_) => f64::INFINITY,
            })
            .collect();
        let mut rngs: Vec<Rng> = sources.iter().map(|&h| rng_stream(s.seed, Stream::Workload(w as u32, h))).collect();
        if let (Workload::Rpc(c), Some(p)) = (cfg, peers.as_mut()) {
            if let Some(n) = c.servers_per_client {
                p.narrow(&sources, n, c.server_assignment, &mut rngs);
            }
        }
        let receivers = match cfg {
            Workload::Incast(c) => s.host_set(&at("receiver"), Some(&c.receiver))?,
            _ => Vec::new(),
        };
        let n = sources.len();
        Ok(Generator {
            kind,
            class,
            group,
            sources,
            receivers,
            rngs,
            peers,
            cdf,
            gap_ps,
            start,
            stop: stop.unwrap_or(Time::MAX),
            conns: HashMap::new(),
            responses: HashMap::new(),
            pending: vec![0; n],
            conn: 0,
        })
    }

    /// `[[jobs]]` entry `j`: its ranks placed on its hosts (`jobs.placement`), running its
    /// collective (`collective::JobRun`).
    pub fn job(s: &Scenario, j: usize, group: u16, line_rate_bps: &[u64]) -> Result<Generator, ScenarioError> {
        let job = &s.jobs[j];
        let hosts = s.host_set(&format!("jobs[{j}].hosts"), Some(&job.hosts))?;
        let n = job.ranks.unwrap_or(hosts.len() as u32) as usize;
        let ranks: Vec<u32> = match job.placement {
            Placement::Packed => hosts[..n].to_vec(),
            Placement::Strided => (0..n).map(|i| hosts[i * hosts.len() / n]).collect(),
            Placement::Random => {
                let mut rng = rng_stream(s.seed, Stream::Workload((s.workloads.len() + j) as u32, u32::MAX));
                rand::seq::SliceRandom::partial_shuffle(hosts.clone().as_mut_slice(), &mut rng, n).0.to_vec()
            }
        };
        let slowest = ranks.iter().map(|&h| line_rate_bps[h as usize]).min().unwrap_or(1);
        let count = ranks.len();
        Ok(Generator {
            kind: Kind::Job(Box::new(collective::JobRun::new(job, n as u32, slowest))),
            class: job.class,
            group,
            sources: ranks,
            receivers: Vec::new(),
            rngs: Vec::new(),
            peers: None,
            cdf: None,
            gap_ps: vec![f64::INFINITY; count],
            start: job.start,
            stop: Time::MAX,
            conns: HashMap::new(),
            responses: HashMap::new(),
            pending: vec![0; count],
            conn: crate::ctx::job_conn(s, j),
        })
    }

    /// The first event of each source: Poisson processes start at `start` (their first arrival
    /// one gap later), an incast at `start`, pingers at a uniform phase within one interval.
    pub fn first_events(&mut self) -> Vec<(Time, u32)> {
        match &mut self.kind {
            Kind::Matrix(m) => return m.transfers.iter().enumerate().filter_map(|(i, t)| t.start.map(|s| (s, i as u32))).collect(),
            Kind::Job(job) => return job.first_events(),
            _ => {}
        }
        let n = match self.kind {
            Kind::Incast { .. } => 1,
            _ => self.sources.len(),
        };
        (0..n)
            .map(|i| {
                let (rng, gap) = (&mut self.rngs[i], self.gap_ps[i]);
                let t = match self.kind {
                    Kind::Incast { .. } => self.start,
                    Kind::Pinger { .. } => self.start + Time(rng.random_range(0..gap as u64)),
                    _ => self.start + exponential(rng, gap),
                };
                (t, i as u32)
            })
            .filter(|&(t, _)| t < self.stop)
            .collect()
    }

    /// The time of source `i`'s next event after one at `now` (`None`: past `stop`).
    pub(crate) fn next_event(&mut self, i: usize, now: Time) -> Option<Time> {
        let gap = self.gap_ps[i];
        let t = match self.kind {
            Kind::Pinger { .. } => now + Time(gap as u64),
            _ if gap.is_infinite() => return None,
            _ => now + exponential(&mut self.rngs[i], gap),
        };
        (t < self.stop).then_some(t)
    }

    /// Source `i` has one thing less outstanding: a flow finished, a probe came back or was lost.
    pub(crate) fn finished(&mut self, i: u32) {
        self.pending[i as usize] -= 1;
    }

    /// A matrix's transfer `i` hears of one more activation of the trigger it waits for (its
    /// start time counts as one): whether it starts now, or after a wait (its `after`, which
    /// ends with one more activation of its own). Later activations start nothing (a transfer
    /// runs once, whatever its trigger's kind).
    pub(crate) fn activated(&mut self, i: usize) -> Activation {
        let Kind::Matrix(m) = &self.kind else { return Activation::Wait };
        self.pending[i] += 1;
        let (need, after) = (m.needed(i).max(1), m.transfers[i].after);
        match self.pending[i] {
            p if p == need && after > Time::ZERO => Activation::After(after),
            p if p == need + (after > Time::ZERO) as u32 => Activation::Start,
            _ => Activation::Wait,
        }
    }

    /// A `[[jobs]]` entry's running collective.
    pub fn job_run(&self) -> &collective::JobRun {
        let Kind::Job(job) = &self.kind else { panic!("a job's generator") };
        job
    }

    /// The transfers of a connection matrix or job (0 for other generators).
    pub(crate) fn transfers(&self) -> usize {
        match &self.kind {
            Kind::Matrix(m) => m.transfers.len(),
            Kind::Job(job) => job.transfers() as usize,
            _ => 0,
        }
    }

    /// Takes one more outstanding item for source `i` if it is under `limit`.
    pub(crate) fn admit(&mut self, i: usize, limit: u32) -> bool {
        let ok = self.pending[i] < limit;
        self.pending[i] += ok as u32;
        ok
    }
}
