//! The network: ports, switches, hosts and flows built from a scenario, and the event loop
//! that runs them.

use crate::engine::{rng_stream, EventKind, EventQueue, Stream};
use crate::flow::{Flow, FlowSpec, FlowStats, Tx};
use crate::nic::Host;
use crate::packet::{PacketKind, Slab};
use crate::port::{port_name, Owner, Port, NO_PACKET};
use crate::routing::Routing;
use crate::scenario::{Arrivals, CcConfig, HostConfig, MarkAt, Scenario, ScenarioError, TransportConfig, Until, Workload};
use crate::stats::{histogram, FlowRecord, GroupStats, QueueSampler};
use crate::switch::{Switch, SwitchParams};
use crate::topology::Graph;
use crate::transport::message::App;
use crate::transport::window::Action;
use crate::transport::Timer;
use crate::workload::Generator;
use hdrhistogram::Histogram;
use rttlab_cc::{Rate, Time};

pub struct Network {
    pub now: Time,
    /// The place in the event order of the event being handled (0 before the first).
    pub(crate) seq_now: u64,
    pub end: Time,
    pub warmup: Time,
    pub(crate) seed: u64,
    pub(crate) events: EventQueue,
    pub(crate) pkts: Slab,
    pub graph: Graph,
    pub routing: Routing,
    pub ports: Vec<Port>,
    pub switches: Vec<Switch>,
    pub hosts: Vec<Host>,
    /// Connection slots; a retired workload flow's slot is on `free_flows` until reused.
    pub flows: Vec<Flow>,
    pub(crate) free_flows: Vec<u32>,
    /// Connections opened so far (also the serial number of the next one's random stream).
    pub flows_opened: u64,
    /// Counters of retired workload flows, and how many there were.
    pub retired: FlowStats,
    pub retired_flows: u64,
    /// Per traffic group: the `[[flows]]` groups, then the `[[workloads]]` generators.
    pub groups: Vec<GroupStats>,
    pub(crate) generators: Vec<Generator>,
    pub(crate) fct_buckets: Vec<u64>,
    pub flow_records: Option<Vec<FlowRecord>>,
    pub(crate) transport: TransportConfig,
    pub(crate) cc: CcConfig,
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
    pub(crate) host_config: HostConfig,
    /// Data packets sent (first transmissions and retransmissions), and dropped anywhere.
    pub(crate) data_sent: u64,
    pub(crate) data_drops: u64,
    /// `until = "flows_done"`: sized `[[flows]]` connections whose last byte has not arrived.
    pub(crate) flows_pending: Option<u64>,
    pub rtt_hist: Histogram<u64>,
    pub samplers: Vec<QueueSampler>,
    timeseries_interval: Option<Time>,
    pub timeseries: TimeSeries,
    /// Counters as they stood when the warm-up ended.
    pub at_warmup: Counters,
    /// The window transport's action buffer, reused by every step (`crate::endpoint`).
    pub(crate) window_actions: Vec<Action>,
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
    /// Drops at hosts' full NIC Rx queues.
    pub host_drops: u64,
    /// Data packets sent, and dropped anywhere.
    pub data_sent: u64,
    pub data_drops: u64,
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
    /// Swift flows' fabric and endpoint windows, in packets.
    pub fcwnd: Vec<Option<f64>>,
    pub ecwnd: Vec<Option<f64>>,
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
        let routing = Routing::build(graph.hosts, &ports, &node_ports);
        let mut hosts = Vec::with_capacity(graph.hosts as usize);
        for h in 0..graph.hosts {
            let p = node_ports[h as usize][0];
            hosts.push(Host::new(h, p, ports[p as usize].rate, rng_stream(s.seed, Stream::Host(h))));
        }
        let mut switches = Vec::with_capacity(graph.switches as usize);
        for sw in 0..graph.switches {
            switches.push(Switch {
                node: graph.hosts + sw,
                used: 0,
                rng: rng_stream(s.seed, Stream::Switch(sw)),
                drops: 0,
                dropped_payload: 0,
                marks: 0,
            });
        }
        let buckets = s.measure.fct_buckets.len();
        let mut groups: Vec<GroupStats> = (0..s.flows.len()).map(|i| GroupStats::new(format!("flows[{i}]"), "flows", buckets)).collect();
        let line_rates: Vec<u64> = hosts.iter().map(|h| h.line_rate.bps()).collect();
        let mut generators = Vec::with_capacity(s.workloads.len());
        for (w, cfg) in s.workloads.iter().enumerate() {
            let group = groups.len() as u16;
            groups.push(GroupStats::new(format!("workloads[{w}]"), cfg.kind(), buckets));
            generators.push(Generator::new(s, w, group, &routing, &line_rates)?);
        }

        let mut samplers = Vec::new();
        let names: Vec<String> = match &s.measure.queue_ports {
            Some(v) => v.clone(),
            None => {
                let incast = s.workloads.iter().filter_map(|w| if let Workload::Incast(c) = w { Some(c.receiver) } else { None });
                let mut dsts: Vec<u32> = s.flows.iter().map(|g| g.dst).chain(incast).collect();
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
            seq_now: 0,
            end: s.duration,
            warmup: s.warmup,
            seed: s.seed,
            events: EventQueue::default(),
            pkts: Slab::default(),
            graph,
            routing,
            ports,
            switches,
            hosts,
            flows: Vec::new(),
            free_flows: Vec::new(),
            flows_opened: 0,
            retired: FlowStats::default(),
            retired_flows: 0,
            groups,
            generators,
            fct_buckets: s.measure.fct_buckets.iter().map(|b| b.0).collect(),
            flow_records: s.measure.flow_records.then(Vec::new),
            transport: s.transport.clone(),
            cc: s.cc.clone(),
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
            segment_bytes: nic.segment().0,
            max_outstanding: nic.max_outstanding().0,
            rtt_noise: nic.rtt_noise,
            pacing_rate: nic.pacing_rate,
            host_config: s.host.clone(),
            data_sent: 0,
            data_drops: 0,
            flows_pending: None,
            rtt_hist: histogram(),
            samplers,
            timeseries_interval: s.measure.timeseries_interval,
            timeseries: TimeSeries::default(),
            at_warmup: Counters::default(),
            window_actions: Vec::new(),
        };
        net.events.push(net.warmup, EventKind::WarmupEnd, 0, 0);
        for (gi, g) in s.flows.iter().enumerate() {
            for h in g.src.hosts().expect("validated") {
                for _ in 0..g.connections {
                    let app = g.rate.map(|rate| App {
                        rate,
                        message: g.message.unwrap_or(s.nic.segment()).0,
                        poisson: g.arrivals == Arrivals::Poisson,
                        next_message: g.start,
                    });
                    let (start, start_jitter, stop) = (g.start, g.start_jitter, g.stop.unwrap_or(Time::MAX));
                    let spec = FlowSpec { src: h, dst: g.dst, class: g.class, group: gi as u16, start, start_jitter, stop, size: g.size.map(|b| b.0), write: g.write.map(|b| b.0), app, ephemeral: false, demand: false };
                    let f = net.open_flow(spec);
                    net.start_flow(f);
                }
            }
        }
        // Every connection so far is a `[[flows]]` one.
        net.flows_pending = (s.until == Until::FlowsDone).then_some(net.flows.len() as u64);
        for g in 0..net.generators.len() {
            for (t, i) in net.generators[g].first_events() {
                net.events.push(t, EventKind::Arrival, g as u32, i);
            }
        }
        if let Some(dt) = net.timeseries_interval {
            net.events.push(dt, EventKind::Sample, 0, 0);
        }
        Ok(net)
    }

    /// Runs until the scenario's duration; events at exactly the end still happen.
    pub fn run(&mut self) {
        while let Some(ev) = self.events.pop_until(self.end) {
            debug_assert!(ev.time >= self.now, "time went back from {:?} to {:?}", self.now, ev.time);
            self.now = ev.time;
            self.seq_now = ev.seq;
            match ev.kind {
                EventKind::TxDone => {
                    self.ports[ev.a as usize].tx_done();
                    if ev.b != NO_PACKET {
                        self.host_tx_done(ev.b);
                    }
                    self.try_tx(ev.a);
                }
                EventKind::Arrive => self.link_arrive(ev.a, ev.b),
                EventKind::HostWake => self.host_wake(ev.a, ev.time),
                EventKind::Kick => {
                    if let Owner::Host(h) = self.ports[ev.a as usize].owner {
                        self.hosts[h as usize].pacer_kick_done(ev.time);
                    }
                    self.try_tx(ev.a)
                }
                EventKind::Sample => self.sample(),
                EventKind::WarmupEnd => self.at_warmup = self.counters(),
                EventKind::Timer => self.window_timer(ev.a, Timer::from_u32(ev.b)),
                EventKind::Arrival => self.workload_event(ev.a, ev.b),
                EventKind::HostRx => self.host_rx_done(ev.a),
            }
        }
        self.now = self.end;
        for s in &mut self.samplers {
            s.observe(self.end, self.ports[s.port as usize].queue_bytes);
        }
    }

    fn sample(&mut self) {
        let ts = &mut self.timeseries;
        for (i, f) in self.flows.iter_mut().enumerate().filter(|(_, f)| f.listed()) {
            ts.time.push(self.now);
            ts.flow.push(i as u32);
            ts.delivered_bytes.push(f.stats.delivered_bytes);
            ts.rate_bps.push(f.rate().bps());
            let m = f.cc_metrics();
            ts.cwnd_bytes.push(m.cwnd_bytes);
            ts.fcwnd.push(m.fcwnd_pkts);
            ts.ecwnd.push(m.ecwnd_pkts);
            let st = &mut f.stats;
            ts.rtt.push((st.interval_rtt_samples > 0).then(|| Time((st.interval_rtt_sum / st.interval_rtt_samples as u128) as u64)));
            (st.interval_rtt_sum, st.interval_rtt_samples) = (0, 0);
        }
        let dt = self.timeseries_interval.expect("sampling is on");
        self.events.push(self.now + dt, EventKind::Sample, 0, 0);
    }

    /// Lets connection `f` send from its start: a message flow joins its host's scheduler, a
    /// window flow sends its first window (at once, or by a timer at its start).
    pub(crate) fn start_flow(&mut self, f: u32) {
        let start = self.flows[f as usize].start;
        match &self.flows[f as usize].tx {
            Tx::Message(_) => self.schedule_flow(f),
            Tx::Window(_) if start <= self.now => self.window_send(f),
            Tx::Window(_) => self.events.push(start, EventKind::Timer, f, Timer::Start as u32),
        }
    }

    /// The egress ports a packet of a flow with ECMP hash `hash` crosses from host `src` to
    /// host `dst`: the source NIC's, then each switch's.
    pub fn path(&self, src: u32, dst: u32, hash: u32) -> Vec<u32> {
        let mut p = self.hosts[src as usize].port;
        let mut path = vec![p];
        loop {
            let node = self.ports[self.ports[p as usize].peer as usize].node;
            if node == dst || node < self.graph.hosts || path.len() > self.graph.nodes() as usize {
                return path;
            }
            p = self.routing.next_port(node - self.graph.hosts, dst, hash);
            path.push(p);
        }
    }

    /// PFC frames sent, time ports spent paused, drops and ECN marks, so far.
    pub fn counters(&self) -> Counters {
        Counters {
            pauses: self.ports.iter().map(|p| p.pauses_sent).sum(),
            paused: Time(self.ports.iter().map(|p| p.paused_time_at(self.now).ps()).sum()),
            drops: self.switches.iter().map(|s| s.drops).sum(),
            marks: self.switches.iter().map(|s| s.marks).sum(),
            retransmits: self.all_stats().map(|s| s.retransmits).sum(),
            timeouts: self.all_stats().map(|s| s.timeouts).sum(),
            host_drops: self.hosts.iter().map(|h| h.rx_drops).sum(),
            data_sent: self.data_sent,
            data_drops: self.data_drops,
        }
    }

    /// Counters of every connection: the open ones, and the retired workload flows' totals.
    pub fn all_stats(&self) -> impl Iterator<Item = &FlowStats> {
        self.flows.iter().filter(|f| f.open).map(|f| &f.stats).chain(std::iter::once(&self.retired))
    }

    pub fn events_processed(&self) -> u64 {
        self.events.processed()
    }

    /// The most events pending at once (the event queue's memory high-water mark).
    pub fn events_pending_peak(&self) -> usize {
        self.events.peak()
    }

    /// Data packets sent so far, retransmissions included.
    pub fn data_packets_sent(&self) -> u64 {
        self.data_sent
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
