//! The network: ports, switches, hosts and flows built from a scenario, and the event loop
//! that runs them.

use crate::engine::{rng_stream, EventKind, EventQueue, Stream};
use crate::flow::{Flow, FlowStats, Tx};
use crate::nic::Host;
use crate::transport::message::{App, MessageTx};
use crate::transport::window::{WindowTx, TIMER_START};
use crate::packet::{PacketKind, Slab};
use crate::port::{port_name, Owner, Port};
use crate::scenario::{Arrivals, CcConfig, FlowGroup, MarkAt, Scenario, ScenarioError, TransportConfig};
use crate::stats::{histogram, QueueSampler};
use crate::switch::{Switch, SwitchParams};
use crate::topology::Graph;
use hdrhistogram::Histogram;
use rand::Rng as _;
use rttlab_cc::{Dctcp, Fast, LineRate, PatchedTimely, Rate, RateController, Reno, Time, Timely, WindowController};

pub struct Network {
    pub now: Time,
    pub end: Time,
    pub warmup: Time,
    pub(crate) events: EventQueue,
    pub(crate) pkts: Slab,
    pub graph: Graph,
    pub ports: Vec<Port>,
    pub switches: Vec<Switch>,
    pub hosts: Vec<Host>,
    pub flows: Vec<Flow>,
    pub(crate) switch_params: SwitchParams,
    pub(crate) classes: usize,
    pub(crate) ack_class: usize,
    pub(crate) payload_per_packet: u32,
    pub(crate) header_bytes: u32,
    pub(crate) ack_bytes: u32,
    pub(crate) pfc_frame_bytes: u32,
    pub(crate) segment_bytes: u64,
    pub(crate) max_outstanding: u64,
    pub(crate) rtt_noise: Time,
    pub(crate) pacing_rate: Option<Rate>,
    pub rtt_hist: Histogram<u64>,
    pub samplers: Vec<QueueSampler>,
    timeseries_interval: Option<Time>,
    pub timeseries: TimeSeries,
    /// Counters as they stood when the warm-up ended.
    pub at_warmup: Counters,
}

/// Whole-network event counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counters {
    pub pauses: u64,
    pub paused: Time,
    pub drops: u64,
    pub marks: u64,
    pub retransmits: u64,
    pub timeouts: u64,
}

/// The transport and controller of one connection of group `g`, as the scenario says
/// (validation guarantees the controller fits the transport).
fn flow_transport(s: &Scenario, g: &FlowGroup, line_rate: Rate, start: Time, size: Option<u64>) -> Tx {
    let mss = s.nic.payload_per_packet();
    match &s.transport {
        TransportConfig::Window(w) => {
            let cc: Box<dyn WindowController> = match &s.cc {
                CcConfig::Reno(p) => Box::new(Reno::new(p.clone(), mss)),
                CcConfig::Dctcp(p) => Box::new(Dctcp::new(p.clone(), mss)),
                _ => unreachable!("validated: window controller"),
            };
            Tx::Window(Box::new(WindowTx::new(cc, w.clone(), mss as u32, size)))
        }
        TransportConfig::Message => {
            let cc: Box<dyn RateController> = match &s.cc {
                CcConfig::None => Box::new(LineRate(line_rate)),
                CcConfig::Timely(p) => Box::new(Timely::new(p.clone(), line_rate)),
                CcConfig::PatchedTimely(p) => Box::new(PatchedTimely::new(p.clone(), line_rate)),
                CcConfig::Fast(p) => Box::new(Fast::new(p.clone(), line_rate)),
                _ => unreachable!("validated: rate controller"),
            };
            let app = g.rate.map(|rate| App {
                rate,
                message: g.message.unwrap_or(s.nic.segment).0,
                poisson: g.arrivals == Arrivals::Poisson,
                next_message: start,
            });
            Tx::Message(Box::new(MessageTx::new(cc, size, app)))
        }
    }
}

/// Per-connection samples taken every `measure.timeseries_interval`.
#[derive(Default)]
pub struct TimeSeries {
    pub time: Vec<Time>,
    pub flow: Vec<u32>,
    pub delivered_bytes: Vec<u64>,
    pub rate_bps: Vec<u64>,
    /// Window flows' congestion window (`None` for message flows).
    pub cwnd_bytes: Vec<Option<u64>>,
    /// Mean of the RTT samples taken since the previous sample (`None`: none).
    pub rtt: Vec<Option<Time>>,
}

impl Network {
    pub fn new(s: &Scenario) -> Result<Network, ScenarioError> {
        let graph = Graph::from_scenario(s);
        let mut ports = Vec::with_capacity(graph.links.len() * 2);
        let mut node_ports: Vec<Vec<u32>> = vec![Vec::new(); graph.nodes() as usize];
        let owner = |n: u32| if n < graph.hosts { Owner::Host(n) } else { Owner::Switch(n - graph.hosts) };
        for l in &graph.links {
            let (pa, pb) = (ports.len() as u32, ports.len() as u32 + 1);
            let mut a = Port::new(owner(l.a), l.a, l.rate, l.delay);
            let mut b = Port::new(owner(l.b), l.b, l.rate, l.delay);
            a.peer = pb;
            b.peer = pa;
            ports.push(a);
            ports.push(b);
            node_ports[l.a as usize].push(pa);
            node_ports[l.b as usize].push(pb);
        }
        let peer_node = |p: u32, ports: &Vec<Port>| ports[ports[p as usize].peer as usize].node;
        let adj: Vec<Vec<u32>> = node_ports.iter().map(|ps| ps.iter().map(|&p| peer_node(p, &ports)).collect()).collect();

        let mut hosts = Vec::with_capacity(graph.hosts as usize);
        for h in 0..graph.hosts {
            let p = match node_ports[h as usize].as_slice() {
                [p] => *p,
                _ => unreachable!("topologies give each host one NIC port"),
            };
            hosts.push(Host::new(h, p, ports[p as usize].rate, rng_stream(s.seed, Stream::Host(h))));
        }
        let mut switches = Vec::with_capacity(graph.switches as usize);
        for sw in 0..graph.switches {
            let n = graph.hosts + sw;
            switches.push(Switch {
                node: n,
                route: vec![u32::MAX; graph.hosts as usize],
                used: 0,
                rng: rng_stream(s.seed, Stream::Switch(sw)),
                drops: 0,
                dropped_payload: 0,
                marks: 0,
            });
        }
        // Routes: from each switch, the first port towards the destination on a shortest path.
        for dst in 0..graph.hosts {
            let dist = graph.distances_to(dst, &adj);
            for (sw, switch) in switches.iter_mut().enumerate() {
                let n = graph.hosts as usize + sw;
                if dist[n] == u32::MAX {
                    continue;
                }
                switch.route[dst as usize] = *node_ports[n]
                    .iter()
                    .find(|&&p| dist[peer_node(p, &ports) as usize] + 1 == dist[n])
                    .expect("a shortest path has a next hop");
            }
        }

        let mut flows = Vec::new();
        for g in &s.flows {
            let src = g.src.hosts().expect("validated");
            for &h in &src {
                for _ in 0..g.connections {
                    let id = flows.len() as u32;
                    let mut rng = rng_stream(s.seed, Stream::Flow(id));
                    let start = g.start + Time(rng.random_range(0..=g.start_jitter.ps()));
                    let line_rate = hosts[h as usize].line_rate;
                    let size = g.size.map(|b| b.0);
                    let tx = flow_transport(s, g, line_rate, start, size);
                    let stats = FlowStats { size, ..Default::default() };
                    let stop = g.stop.unwrap_or(Time::MAX);
                    flows.push(Flow { src: h, dst: g.dst, class: g.class, start, stop, rng, stats, tx });
                    hosts[h as usize].flows.push(id);
                }
            }
        }

        let mut samplers = Vec::new();
        let names: Vec<String> = match &s.measure.queue_ports {
            Some(v) => v.clone(),
            None => {
                let mut dsts: Vec<u32> = flows.iter().map(|f| f.dst).collect();
                dsts.sort_unstable();
                dsts.dedup();
                // The switch port towards each destination is the peer of that host's NIC port.
                dsts.iter().map(|&d| port_name(&graph, &ports, ports[hosts[d as usize].port as usize].peer)).collect()
            }
        };
        for (i, name) in names.iter().enumerate() {
            let p = (0..ports.len() as u32)
                .find(|&p| port_name(&graph, &ports, p) == *name)
                .ok_or_else(|| ScenarioError::Invalid {
                    field: format!("measure.queue_ports[{i}]"),
                    value: name.clone(),
                    allowed: "an egress port named NODE-PEER of linked nodes, e.g. \"s0-h0\" (hosts h0.., switches s0..)".into(),
                })?;
            ports[p as usize].sampler = samplers.len() as u32;
            samplers.push(QueueSampler::new(p, name.clone(), s.measure.queue_interval, s.warmup, s.measure.queue_trace));
        }

        let nic = &s.nic;
        let sw = &s.switch;
        let mut net = Network {
            now: Time::ZERO,
            end: s.duration,
            warmup: s.warmup,
            events: EventQueue::default(),
            pkts: Slab::default(),
            graph,
            ports,
            switches,
            hosts,
            flows,
            switch_params: SwitchParams {
                buffer: sw.buffer.0,
                pfc: sw.pfc.then_some((sw.pfc_xoff.0, sw.pfc_xon.0)),
                ecn: sw.ecn.as_ref().map(|e| e.thresholds()),
                mark_at: sw.ecn.as_ref().map_or(MarkAt::Dequeue, |e| e.mark_at),
            },
            classes: sw.classes as usize,
            ack_class: nic.ack_class as usize,
            payload_per_packet: nic.payload_per_packet() as u32,
            header_bytes: nic.header.0 as u32,
            ack_bytes: nic.ack.0 as u32,
            pfc_frame_bytes: nic.ack.0 as u32,
            segment_bytes: nic.segment.0,
            max_outstanding: nic.max_outstanding.0,
            rtt_noise: nic.rtt_noise,
            pacing_rate: nic.pacing_rate,
            rtt_hist: histogram(),
            samplers,
            timeseries_interval: s.measure.timeseries_interval,
            timeseries: TimeSeries::default(),
            at_warmup: Counters::default(),
        };
        net.events.push(net.warmup, EventKind::WarmupEnd, 0, 0);
        for f in 0..net.flows.len() as u32 {
            match &net.flows[f as usize].tx {
                Tx::Message(_) => net.schedule_flow(f),
                Tx::Window(_) => net.events.push(net.flows[f as usize].start, EventKind::Timer, f, TIMER_START),
            }
        }
        if let Some(dt) = net.timeseries_interval {
            net.events.push(dt, EventKind::Sample, 0, 0);
        }
        Ok(net)
    }

    /// Runs until the scenario's duration; events at exactly the end still happen.
    pub fn run(&mut self) {
        while let Some(t) = self.events.peek_time() {
            if t > self.end {
                break;
            }
            let ev = self.events.pop().expect("peeked");
            debug_assert!(ev.time >= self.now, "time went back from {:?} to {:?}", self.now, ev.time);
            self.now = ev.time;
            match ev.kind {
                EventKind::TxDone => {
                    self.ports[ev.a as usize].busy = false;
                    if let Owner::Host(_) = self.ports[ev.a as usize].owner {
                        self.host_tx_done(ev.b);
                    }
                    self.try_tx(ev.a);
                }
                EventKind::Arrive => match (self.pkts.get(ev.b).kind, self.ports[ev.a as usize].owner) {
                    (PacketKind::Pause | PacketKind::Resume, _) => self.receive_pfc(ev.a, ev.b),
                    (_, Owner::Switch(s)) => self.switch_receive(s, ev.a, ev.b),
                    (_, Owner::Host(h)) => self.host_receive(h, ev.b),
                },
                EventKind::HostWake => self.host_wake(ev.a, ev.time),
                EventKind::Kick => {
                    if let Owner::Host(h) = self.ports[ev.a as usize].owner {
                        self.hosts[h as usize].pacer_kick_done(ev.time);
                    }
                    self.try_tx(ev.a)
                }
                EventKind::Sample => self.sample(),
                EventKind::WarmupEnd => self.at_warmup = self.counters(),
                EventKind::Timer => self.window_timer(ev.a, ev.b),
            }
        }
        self.now = self.end;
        for s in &mut self.samplers {
            s.observe(self.end, self.ports[s.port as usize].queue_bytes);
        }
    }

    fn sample(&mut self) {
        let ts = &mut self.timeseries;
        for (i, f) in self.flows.iter_mut().enumerate() {
            ts.time.push(self.now);
            ts.flow.push(i as u32);
            ts.delivered_bytes.push(f.stats.delivered_bytes);
            ts.rate_bps.push(f.rate().bps());
            ts.cwnd_bytes.push(f.window_cc().map(|c| c.cwnd()));
            let st = &mut f.stats;
            ts.rtt.push((st.interval_rtt_samples > 0).then(|| Time((st.interval_rtt_sum / st.interval_rtt_samples as u128) as u64)));
            (st.interval_rtt_sum, st.interval_rtt_samples) = (0, 0);
        }
        let dt = self.timeseries_interval.expect("sampling is on");
        self.events.push(self.now + dt, EventKind::Sample, 0, 0);
    }

    /// PFC frames sent, time ports spent paused, drops and ECN marks, so far.
    pub fn counters(&self) -> Counters {
        Counters {
            pauses: self.ports.iter().map(|p| p.pauses_sent).sum(),
            paused: Time(self.ports.iter().map(|p| p.paused_time_at(self.now).ps()).sum()),
            drops: self.switches.iter().map(|s| s.drops).sum(),
            marks: self.switches.iter().map(|s| s.marks).sum(),
            retransmits: self.flows.iter().map(|f| f.stats.retransmits).sum(),
            timeouts: self.flows.iter().map(|f| f.stats.timeouts).sum(),
        }
    }

    pub fn events_processed(&self) -> u64 {
        self.events.processed()
    }

    /// Payload of data packets still in the network (queues and links).
    pub fn payload_in_flight(&self) -> u64 {
        self.pkts.iter_live().filter(|p| p.kind == PacketKind::Data).map(|p| p.payload_bytes as u64).sum()
    }

    /// The most packets alive at once.
    pub fn packet_high_water(&self) -> usize {
        self.pkts.capacity()
    }
}
