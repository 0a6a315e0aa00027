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

pub mod cdf;

use crate::ids::PktId;
use crate::engine::{exponential, rng_stream, EventKind, Rng, Stream};
use crate::flow::{FlowSpec, Message, Messages, Origin};
use crate::network::Network;
use crate::packet::{Packet, PacketKind};
use crate::routing::Routing;
use crate::scenario::{Peers, Scenario, ScenarioError, Workload};
use crate::stats::ns;
use cdf::Cdf;
use rand::Rng as _;
use rttlab_cc::Time;
use std::collections::HashMap;

/// Candidate peers of each source host.
struct PeerTable {
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

    /// Keeps, for each source, `n` distinct candidates drawn once (all when it has fewer).
    fn narrow(&mut self, sources: &[u32], n: u32, rngs: &mut [Rng]) {
        let mut lists = Vec::with_capacity(sources.len());
        for (i, &h) in sources.iter().enumerate() {
            let mut list: Vec<u32> = self.lists[self.of_source[i] as usize].iter().copied().filter(|&c| c != h).collect();
            let keep = (n as usize).min(list.len());
            for j in 0..keep {
                let k = rngs[i].random_range(j..list.len());
                list.swap(j, k);
            }
            list.truncate(keep);
            lists.push(list);
        }
        self.of_source = (0..sources.len() as u32).collect();
        self.lists = lists;
    }

    fn pick(&self, i: usize, h: u32, rng: &mut Rng) -> u32 {
        let list = &self.lists[self.of_source[i] as usize];
        loop {
            let c = list[rng.random_range(0..list.len())];
            if c != h {
                return c;
            }
        }
    }
}

/// What a generator does at each event (the scenario's settings it needs while running).
#[derive(Copy, Clone, Debug)]
enum Kind {
    Rpc { size: u64, response: u64, max_pending: u32 },
    FlowSizes { max_active: u32 },
    Incast { size: u64, connections: u32, max_active: u32, senders_per_incast: Option<u32> },
    Pinger { bytes: u32, max_pending: u32 },
}

/// A running `[[workloads]]` entry.
pub struct Generator {
    kind: Kind,
    class: u8,
    pub group: u16,
    /// Hosts that act (clients, hosts, senders); an incast acts once for all of them.
    pub sources: Vec<u32>,
    /// An incast's receivers: one, or several to draw from at each incast.
    receivers: Vec<u32>,
    rngs: Vec<Rng>,
    peers: Option<PeerTable>,
    cdf: Option<Cdf>,
    /// Mean gap between a source's arrivals, in ps.
    gap_ps: Vec<f64>,
    start: Time,
    stop: Time,
    /// RPC: the request connection of each (client, server) pair.
    conns: HashMap<(u32, u32), u32>,
    /// Per source, what it has outstanding against its limit: RPCs, unfinished flows or
    /// unanswered probes.
    pending: Vec<u32>,
}

impl Generator {
    pub fn new(s: &Scenario, w: usize, group: u16, routing: &Routing, line_rate_bps: &[u64]) -> Result<Generator, ScenarioError> {
        let cfg = &s.workloads[w];
        let at = |k: &str| format!("workloads[{w}].{k}");
        let (sources, candidates, peers, start, stop) = match cfg {
            Workload::Rpc(c) => (s.host_set(&at("clients"), c.clients.as_ref())?, Some(s.host_set(&at("servers"), c.servers.as_ref())?), c.peers, c.start, c.stop),
            Workload::FlowSizes(c) => {
                let hosts = s.host_set(&at("hosts"), c.hosts.as_ref())?;
                (hosts.clone(), Some(hosts), c.peers, c.start, c.stop)
            }
            Workload::Incast(c) => (s.host_set(&at("senders"), Some(&c.senders))?, None, Peers::Uniform, c.start, c.stop),
            Workload::Pinger(c) => {
                let hosts = s.host_set(&at("hosts"), c.hosts.as_ref())?;
                (hosts.clone(), Some(hosts), c.peers, c.start, c.stop)
            }
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
            Workload::Incast(c) => (Kind::Incast { size: c.size.0, connections: c.connections, max_active: c.max_active, senders_per_incast: c.senders_per_incast }, c.class, None),
            Workload::Pinger(c) => (Kind::Pinger { bytes: c.size.0 as u32, max_pending: c.max_pending }, c.class, None),
        };
        let gap_ps = sources
            .iter()
            .map(|&h| match cfg {
                Workload::Rpc(c) => 1e12 / c.rate,
                Workload::FlowSizes(c) => {
                    cdf.as_ref().expect("flow sizes have a CDF").mean() * 8e12 / (line_rate_bps[h as usize] as f64 * c.load)
                }
                Workload::Incast(c) => c.rate.map_or(f64::INFINITY, |r| 1e12 / r),
                Workload::Pinger(c) => c.interval.ps() as f64,
            })
            .collect();
        let mut rngs: Vec<Rng> = sources.iter().map(|&h| rng_stream(s.seed, Stream::Workload(w as u32, h))).collect();
        if let (Workload::Rpc(c), Some(p)) = (cfg, peers.as_mut()) {
            if let Some(n) = c.servers_per_client {
                p.narrow(&sources, n, &mut rngs);
            }
        }
        let receivers = match cfg {
            Workload::Incast(c) => s.host_set(&at("receiver"), Some(&c.receiver))?,
            _ => Vec::new(),
        };
        let n = sources.len();
        Ok(Generator { kind, class, group, sources, receivers, rngs, peers, cdf, gap_ps, start, stop: stop.unwrap_or(Time::MAX), conns: HashMap::new(), pending: vec![0; n] })
    }

    /// The first event of each source: Poisson processes start at `start` (their first arrival
    /// one gap later), an incast at `start`, pingers at a uniform phase within one interval.
    pub fn first_events(&mut self) -> Vec<(Time, u32)> {
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
    fn next_event(&mut self, i: usize, now: Time) -> Option<Time> {
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

    /// Takes one more outstanding item for source `i` if it is under `limit`.
    fn admit(&mut self, i: usize, limit: u32) -> bool {
        let ok = self.pending[i] < limit;
        self.pending[i] += ok as u32;
        ok
    }
}

impl Network {
    /// Generator `g` acts for its source `i` now.
    pub(crate) fn workload_event(&mut self, g: u32, i: u32) {
        let (now, measured) = (self.now, self.now >= self.cfg.warmup);
        let gen = &mut self.generators[g as usize];
        let (i, group) = (i as usize, gen.group);
        let h = gen.sources[i];
        if let Some(t) = gen.next_event(i, now) {
            self.events.push(t, EventKind::Arrival { generator: g, host: i as u32 });
        }
        let gen = &mut self.generators[g as usize];
        let (class, stats) = (gen.class, &mut self.measure.groups[group as usize]);
        let peer = |gen: &mut Generator| gen.peers.as_ref().expect("a generator with peers").pick(i, h, &mut gen.rngs[i]);
        match gen.kind {
            Kind::Rpc { size, response, max_pending } => {
                let server = peer(gen);
                if !gen.admit(i, max_pending) {
                    stats.rpcs_refused += measured as u64;
                    return;
                }
                if measured {
                    stats.rpcs_issued += 1;
                    stats.offered_bytes += size + response;
                }
                let f = self.rpc_connection(g, h, server, class);
                self.offer_message(f, size, Message { end: 0, issued: now, client: i as u32 });
            }
            Kind::FlowSizes { max_active } => {
                let dst = peer(gen);
                let size = gen.cdf.as_ref().expect("flow sizes have a CDF").sample(&mut gen.rngs[i]);
                if !gen.admit(i, max_active) {
                    stats.flows_refused += measured as u64;
                    return;
                }
                stats.offered_bytes += if measured { size } else { 0 };
                self.start_ephemeral(h, dst, class, group, size, Origin { generator: g, source: i as u32 });
            }
            Kind::Incast { size, connections, max_active, senders_per_incast } => {
                // One receiver and every sender take no draw, so that such runs keep their
                // random streams.
                let receiver = match gen.receivers.as_slice() {
                    &[r] => r,
                    rs => rs[gen.rngs[i].random_range(0..rs.len())],
                };
                let mut chosen: Vec<usize> = (0..gen.sources.len()).filter(|&s| gen.sources[s] != receiver).collect();
                if let Some(k) = senders_per_incast {
                    let (picked, _) = rand::seq::SliceRandom::partial_shuffle(chosen.as_mut_slice(), &mut gen.rngs[i], k as usize);
                    chosen = picked.to_vec();
                }
                for s in chosen {
                    for _ in 0..connections {
                        let gen = &mut self.generators[g as usize];
                        let stats = &mut self.measure.groups[group as usize];
                        if !gen.admit(s, max_active) {
                            stats.flows_refused += measured as u64;
                            continue;
                        }
                        stats.offered_bytes += if measured { size } else { 0 };
                        let src = gen.sources[s];
                        self.start_ephemeral(src, receiver, class, group, size, Origin { generator: g, source: s as u32 });
                    }
                }
            }
            Kind::Pinger { bytes, max_pending } => {
                let dst = peer(gen);
                let hash = gen.rngs[i].random();
                if !gen.admit(i, max_pending) {
                    stats.pings_refused += measured as u64;
                    return;
                }
                stats.pings_sent += measured as u64;
                let ping = Packet { flow: i as u32, dst_host: dst, hash, seq: g, t_send: now, ..Packet::new(PacketKind::Ping, class, bytes) };
                let p = self.pkts.alloc(ping);
                let port = self.fabric.hosts[h as usize].port;
                self.enqueue(port, class as usize, p);
            }
        }
    }

    /// A fresh connection for one sized transfer, started now.
    fn start_ephemeral(&mut self, src: u32, dst: u32, class: u8, group: u16, size: u64, origin: Origin) {
        let spec = FlowSpec { src, dst, class, group, start: self.now, start_jitter: Time::ZERO, stop: Time::MAX, size: Some(size), write: None, app: None, onoff: None, ephemeral: Some(origin), demand: false };
        let f = self.open_flow(spec);
        self.start_flow(f);
    }

    /// The request connection from `client` to `server` of RPC generator `g`, opened with its
    /// response connection on first use.
    fn rpc_connection(&mut self, g: u32, client: u32, server: u32, class: u8) -> u32 {
        if let Some(&f) = self.generators[g as usize].conns.get(&(client, server)) {
            return f;
        }
        let group = self.generators[g as usize].group;
        let spec = |src, dst| FlowSpec { src, dst, class, group, start: self.now, start_jitter: Time::ZERO, stop: Time::MAX, size: None, write: None, app: None, onoff: None, ephemeral: None, demand: true };
        let (a, b) = (spec(client, server), spec(server, client));
        let req = self.open_flow(a);
        let resp = self.open_flow(b);
        for (f, peer, request) in [(req, resp, true), (resp, req, false)] {
            self.flows.slots[f as usize].messages = Some(Box::new(Messages { queue: Default::default(), offered: 0, peer, request, generator: g }));
        }
        self.generators[g as usize].conns.insert((client, server), req);
        req
    }

    /// Queues message `m` of `bytes` on connection `f` and lets it send.
    fn offer_message(&mut self, f: u32, bytes: u64, mut m: Message) {
        let flow = &mut self.flows.slots[f as usize];
        let msgs = flow.messages.as_mut().expect("an RPC connection");
        msgs.offered += bytes;
        m.end = msgs.offered;
        msgs.queue.push_back(m);
        flow.message().offer(bytes);
        self.schedule_flow(f);
    }

    /// Connection `f` delivered one or more whole messages: a server answers a request, a
    /// client completes an RPC.
    pub(crate) fn messages_delivered(&mut self, f: u32) {
        let now = self.now;
        loop {
            let flow = &mut self.flows.slots[f as usize];
            let delivered = flow.stats.delivered_bytes;
            let msgs = flow.messages.as_mut().expect("an RPC connection");
            let Some(m) = msgs.queue.front().copied().filter(|m| m.end <= delivered) else { return };
            msgs.queue.pop_front();
            let (peer, request, g, group) = (msgs.peer, msgs.request, msgs.generator, flow.group);
            let gen = &mut self.generators[g as usize];
            if request {
                let Kind::Rpc { response, .. } = gen.kind else { unreachable!("RPC connections belong to RPC generators") };
                self.offer_message(peer, response, m);
            } else {
                gen.finished(m.client);
                if m.issued >= self.cfg.warmup {
                    let stats = &mut self.measure.groups[group as usize];
                    stats.rpcs_completed += 1;
                    stats.rpc_latency.record(ns(now - m.issued)).expect("auto-resizing histogram");
                    stats.rpc_latency_sum += now - m.issued;
                }
            }
        }
    }

    /// A ping arrived at host `h`: its NIC echoes it at once, in the same class.
    pub(crate) fn ping_echo(&mut self, h: u32, i: PktId) {
        let p = self.pkts.get_mut(i);
        p.kind = PacketKind::Pong;
        p.dst_host = self.generators[p.seq as usize].sources[p.flow as usize];
        let c = p.class as usize;
        let port = self.fabric.hosts[h as usize].port;
        self.enqueue(port, c, i);
    }

    /// An echo came back to its pinger: one round trip.
    pub(crate) fn pong(&mut self, i: PktId, p: Packet) {
        self.pkts.free(i);
        let gen = &mut self.generators[p.seq as usize];
        gen.finished(p.flow);
        if p.t_send >= self.cfg.warmup {
            self.measure.groups[gen.group as usize].ping_rtt.record(ns(self.now - p.t_send)).expect("auto-resizing histogram");
        }
    }

    /// A probe or its echo was dropped: it is no longer outstanding.
    pub(crate) fn ping_lost(&mut self, p: &Packet) {
        self.generators[p.seq as usize].finished(p.flow);
    }
}
