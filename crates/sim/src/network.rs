//! The network: ports, switches, hosts and flows built from a scenario, and the event loop
//! that runs them.

use crate::capture::{Capture, Endpoints};
use crate::engine::{rng_stream, Event, EventKind, EventQueue, Stream, Timers};
use crate::flow::{Flow, FlowSpec, FlowStats, Tx};
use crate::nic::Host;
use crate::packet::{PacketKind, Slab};
use crate::ids::{FlowId, PktId, PortId, SwitchId};
use crate::port::{port_name, ClassStats, Owner, Port};
use crate::routing::Routing;
use crate::scenario::{invalid, Arrivals, CcConfig, HostConfig, NicArbitration, RateAfterIdle, RatePacing, Scenario, ScenarioError, TransportConfig, Until, Workload};
use crate::scenario::{MAX_CAPTURE_BYTES, MAX_TRACE_SAMPLES};
use crate::stats::{histogram, FlowRecord, GroupStats, QueueSampler};
use crate::switch::{QueueParams, Red, Switch};
use crate::topology::Graph;
use crate::transport::message::App;
use crate::transport::onoff::OnOff;
use crate::transport::window::Action;
use crate::transport::Timer;
use crate::workload::Generator;
use hdrhistogram::Histogram;
use crate::telemetry::IntRun;
use rttlab_cc::hpcc::BaseRtt;
use rttlab_cc::{Rate, Signal, Time};
use std::ops::ControlFlow;

/// Events handled between two calls of a run's observer: often enough to stop within
/// milliseconds (about 10 ms at 6 M events/s), rarely enough to cost nothing.
pub const OBSERVE_EVERY: u64 = 1 << 16;

/// How far a run has come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub now: Time,
    /// The run's end (under `until = "flows_done"`, the latest it may end).
    pub end: Time,
    pub events: u64,
}

/// A run its observer stopped before the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the run was stopped before its end")]
pub struct Stopped;

/// The simulation: the event loop's state, and the network's parts, each built by its own
/// constructor from the scenario.
pub struct Network {
    pub(crate) now: Time,
    /// The place in the event order of the event being handled (0 before the first).
    pub(crate) seq_now: u64,
    pub(crate) events: EventQueue,
    pub(crate) pkts: Slab,
    pub(crate) cfg: RunConfig,
    pub(crate) fabric: Fabric,
    pub(crate) flows: FlowTable,
    pub(crate) generators: Vec<Generator>,
    pub(crate) measure: Measurements,
    /// The window transport's action buffer, reused by every step (`crate::endpoint`).
    pub(crate) window_actions: Vec<Action>,
    /// The message transport's local ACK timeout events (`transport::message`).
    pub(crate) message_rtos: Timers,
    /// Data packets the first switch they reach drops once (`lose_once`): (flow, seq).
    pub(crate) faults: Vec<(u32, u32)>,
}

/// What the scenario fixes for the whole run, in the units the packet path uses.
pub(crate) struct RunConfig {
    pub end: Time,
    pub warmup: Time,
    pub seed: u64,
    pub transport: TransportConfig,
    pub cc: CcConfig,
    /// Shared buffer of every switch.
    pub buffer: u64,
    /// Dynamic PFC thresholds (`switch.pfc_alpha`) and their resume offset.
    pub pfc_alpha: Option<f64>,
    pub pfc_resume_offset: u64,
    /// Queue settings of switch egress ports, by `Port::params` (0: `[switch]`'s own).
    pub queue_params: Vec<QueueParams>,
    pub classes: usize,
    pub ack_class: usize,
    pub payload_per_packet: u32,
    pub header_bytes: u32,
    pub ack_bytes: u32,
    pub pfc_frame_bytes: u32,
    pub segment_bytes: u64,
    pub max_outstanding: u64,
    pub send_queue: u32,
    pub retransmit_timeout: Time,
    pub rtt_noise: Time,
    pub pacing_rate: Option<Rate>,
    pub arbitration: NicArbitration,
    pub rate_pacing: RatePacing,
    pub rate_after_idle: RateAfterIdle,
    pub host_config: HostConfig,
    pub timeseries_interval: Option<Time>,
    /// In-band telemetry (`switch.int`); `None`: off.
    pub int: Option<IntRun>,
    /// DCQCN's notification point: at most one CNP per flow per this interval.
    pub cnp_interval: Option<Time>,
    /// TIMELY's input and the `ind` threshold (`cc.signal`).
    pub signal: (Signal, Time),
    /// HPCC's `T` with `base_rtt = "max"`: the topology's largest unloaded round trip.
    pub max_base_rtt: Time,
}

impl RunConfig {
    fn new(s: &Scenario) -> RunConfig {
        let (nic, sw) = (&s.nic, &s.switch);
        RunConfig {
            end: s.duration,
            warmup: s.warmup,
            seed: s.seed,
            transport: s.transport.clone(),
            cc: s.cc.clone(),
            buffer: sw.buffer.0,
            pfc_alpha: sw.pfc_alpha,
            pfc_resume_offset: sw.pfc_resume_offset.0,
            queue_params: Vec::new(),
            classes: sw.classes as usize,
            ack_class: nic.ack_class as usize,
            payload_per_packet: nic.payload_per_packet() as u32,
            // With telemetry each data packet carries the INT header's hop count.
            header_bytes: nic.header.0 as u32 + if sw.int == Some(true) { rttlab_cc::int::HEADER_BYTES } else { 0 },
            ack_bytes: nic.ack.0 as u32,
            pfc_frame_bytes: nic.ack.0 as u32,
            segment_bytes: nic.segment().0,
            max_outstanding: nic.max_outstanding().0,
            send_queue: nic.send_queue(),
            retransmit_timeout: nic.retransmit_timeout(),
            rtt_noise: nic.rtt_noise,
            pacing_rate: nic.pacing_rate,
            arbitration: nic.arbitration.unwrap_or_default(),
            rate_pacing: nic.rate_pacing.unwrap_or_default(),
            rate_after_idle: nic.rate_after_idle.unwrap_or_default(),
            host_config: s.host.clone(),
            timeseries_interval: s.measure.timeseries_interval,
            int: (sw.int == Some(true)).then_some(IntRun { max_hops: sw.int_max_hops }),
            signal: s.cc.signal(),
            cnp_interval: match &s.cc {
                CcConfig::Dcqcn(p) => Some(p.cnp_interval),
                _ => None,
            },
            max_base_rtt: Time::ZERO,
        }
    }
}

/// The fabric: the graph, its routes, every port (two per link), switch and host.
pub(crate) struct Fabric {
    pub graph: Graph,
    pub routing: Routing,
    pub ports: Vec<Port>,
    pub switches: Vec<Switch>,
    pub hosts: Vec<Host>,
}

impl Fabric {
    fn new(s: &Scenario) -> Fabric {
        let graph = Graph::from_scenario(s);
        let mut ports = Vec::with_capacity(graph.links.len() * 2);
        let mut node_ports: Vec<Vec<PortId>> = vec![Vec::new(); graph.nodes() as usize];
        let owner = |n: u32| if n < graph.hosts { Owner::Host(n) } else { Owner::Switch(SwitchId(n - graph.hosts)) };
        for l in &graph.links {
            let (pa, pb) = (ports.len() as u32, ports.len() as u32 + 1);
            ports.push(Port::new(owner(l.a), l.a, PortId(pb), l.rate_ab, l.delay, s.switch.classes as usize));
            ports.push(Port::new(owner(l.b), l.b, PortId(pa), l.rate_ba, l.delay, s.switch.classes as usize));
            node_ports[l.a as usize].push(PortId(pa));
            node_ports[l.b as usize].push(PortId(pb));
        }
        let routing = Routing::build(graph.hosts, &ports, &node_ports);
        let hosts = (0..graph.hosts)
            .map(|h| {
                let p = node_ports[h as usize][0];
                Host::new(h, p, ports[p.idx()].rate, rng_stream(s.seed, Stream::Host(h)))
            })
            .collect();
        let switches = (0..graph.switches)
            .map(|sw| Switch { node: graph.hosts + sw, used: 0, headroom_used: 0, reserved: 0, rng: rng_stream(s.seed, Stream::Switch(sw)), drops: 0, dropped_payload: 0, marks: 0 })
            .collect();
        Fabric { graph, routing, ports, switches, hosts }
    }

    /// The ports `measure.queue_ports` names, a name with `*` naming every port it matches;
    /// absent: the switch port towards every flow destination (the peer of that host's NIC port).
    fn sampled_ports(&self, s: &Scenario) -> Result<Vec<(PortId, String)>, ScenarioError> {
        let names: Vec<String> = match &s.measure.queue_ports {
            Some(v) => v.clone(),
            None => {
                let ctx = s.context();
                let incast = s.workloads.iter().filter_map(|w| if let Workload::Incast(c) = w { Some(&c.receiver) } else { None });
                let incast = incast.flat_map(|r| ctx.host_set("", Some(r)).expect("validated"));
                let flow_dsts = s.flows.iter().flat_map(|g| ctx.host_set("", Some(&g.dst)).expect("validated"));
                let mut dsts: Vec<u32> = flow_dsts.chain(incast).collect();
                dsts.sort_unstable();
                dsts.dedup();
                dsts.iter().map(|&d| port_name(&self.graph, &self.ports, self.ports[self.hosts[d as usize].port.idx()].peer)).collect()
            }
        };
        let mut ports = Vec::new();
        for (i, name) in names.into_iter().enumerate() {
            let field = format!("measure.queue_ports[{i}]");
            if !name.contains('*') {
                ports.push((self.port_named(&name, &field)?, name));
                continue;
            }
            let all = (0..self.ports.len() as u32).map(|p| (PortId(p), port_name(&self.graph, &self.ports, PortId(p))));
            let matched: Vec<(PortId, String)> = all.filter(|(p, n)| wildcard_match(&name, n) && ports.iter().all(|(q, _)| q != p)).collect();
            if matched.is_empty() {
                return Err(invalid(field, name, "a pattern that matches at least one egress port not already named (`*` matches any characters, e.g. \"s*-s*\")"));
            }
            ports.extend(matched);
        }
        Ok(ports)
    }

    /// Resolves `[switch]` and its `[[switch.ports]]` overrides into the queue settings of every
    /// switch port (`Port::params` indexes the distinct ones); an override that names an unknown
    /// switch or port, or selects no port, is an error naming it.
    fn queue_params(&mut self, s: &Scenario) -> Result<Vec<QueueParams>, ScenarioError> {
        let sw = &s.switch;
        let mut params = vec![QueueParams {
            pfc: sw.pfc.then_some((sw.pfc_xoff.0, sw.pfc_xon.0)),
            pfc_headroom: sw.pfc_headroom.0,
            ecn: sw.ecn.as_ref().map(Red::new),
            limit: sw.queue_limit,
            alpha: sw.alpha,
            device_queue: sw.device_queue as u64,
        }];
        for (i, o) in sw.ports.iter().enumerate() {
            let at = format!("switch.ports[{i}]");
            let mut selected = vec![true; self.ports.len()];
            if !o.switches.is_empty() {
                let mut wanted = std::collections::HashSet::new();
                for (j, name) in o.switches.iter().enumerate() {
                    let node = (self.graph.hosts..self.graph.nodes()).find(|&n| self.graph.node_name(n) == *name);
                    wanted.insert(node.ok_or_else(|| invalid(format!("{at}.switches[{j}]"), name, "the name of a switch (s0, s1, ... or a graph topology's names)"))?);
                }
                selected.iter_mut().zip(&self.ports).for_each(|(sel, p)| *sel &= wanted.contains(&p.node));
            }
            if !o.ports.is_empty() {
                let mut named = vec![false; self.ports.len()];
                for (j, name) in o.ports.iter().enumerate() {
                    named[self.port_named(name, &format!("{at}.ports[{j}]"))?.idx()] = true;
                }
                selected.iter_mut().zip(named).for_each(|(sel, n)| *sel &= n);
            }
            if let Some(rate) = o.link_rate {
                selected.iter_mut().zip(&self.ports).for_each(|(sel, p)| *sel &= p.rate == rate);
            }
            let mut any = false;
            for port in self.ports.iter_mut().zip(&selected).filter_map(|(p, &sel)| (sel && matches!(p.owner, Owner::Switch(_))).then_some(p)) {
                // Only what this override gives replaces the port's settings so far.
                let mut q = params[port.params as usize].clone();
                if let Some(e) = &o.ecn {
                    q.ecn = Some(Red::new(e));
                }
                q.limit = o.queue_limit.or(q.limit);
                q.alpha = o.alpha.or(q.alpha);
                q.device_queue = o.device_queue.map_or(q.device_queue, u64::from);
                q.pfc = q.pfc.map(|(xoff, xon)| (o.pfc_xoff.map_or(xoff, |b| b.0), o.pfc_xon.map_or(xon, |b| b.0)));
                q.pfc_headroom = o.pfc_headroom.map_or(q.pfc_headroom, |b| b.0);
                if let Some((xoff, xon)) = q.pfc.filter(|&(xoff, xon)| !(xon < xoff && xoff < sw.buffer.0)) {
                    return Err(invalid(format!("{at}.pfc_xoff"), rttlab_cc::Bytes(xoff), format!("need pfc_xon ({}) < pfc_xoff < buffer ({})", rttlab_cc::Bytes(xon), sw.buffer)));
                }
                port.params = intern(&mut params, q);
                any = true;
            }
            if !any {
                return Err(invalid(at, "no port", "selectors that match at least one switch egress port"));
            }
        }
        let classes = sw.classes as u64;
        for port in self.ports.iter_mut() {
            if let Owner::Switch(s) = port.owner {
                // Thresholds given for one rate, as this port's rate makes them.
                if let Some(red) = params[port.params as usize].ecn.and_then(|r| r.scaled_for(port.rate)) {
                    let q = QueueParams { ecn: Some(red), ..params[port.params as usize].clone() };
                    port.params = intern(&mut params, q);
                }
                port.set_queue_params(&params[port.params as usize]);
                self.switches[s.idx()].reserved += port.pfc_headroom * classes;
            }
        }
        if let Some(s) = self.switches.iter().position(|x| x.reserved >= sw.buffer.0) {
            let reserved = rttlab_cc::Bytes(self.switches[s].reserved);
            return Err(invalid("switch.pfc_headroom", reserved, format!("the headroom {} reserves ({reserved} over its ports and classes) must leave shared buffer (buffer = {})", self.graph.node_name(self.switches[s].node), sw.buffer)));
        }
        Ok(params)
    }

    /// The egress port called `name` ("NODE-PEER"); otherwise an error naming `field`.
    fn port_named(&self, name: &str, field: &str) -> Result<PortId, ScenarioError> {
        (0..self.ports.len() as u32).map(PortId).find(|&p| port_name(&self.graph, &self.ports, p) == name).ok_or_else(|| ScenarioError::Invalid {
            field: field.to_string(),
            value: name.to_string(),
            allowed: "an egress port named NODE-PEER of linked nodes, e.g. \"s0-h0\" (hosts h0.., switches s0..)".into(),
        })
    }
}

/// The longest a full-size packet takes to cross a link of `graph`: its serialization at the
/// link's slower direction, and the propagation delay.
fn slowest_crossing(graph: &Graph, mtu: u64) -> Time {
    graph.links.iter().map(|l| l.delay + l.rate_ab.min(l.rate_ba).serialization(mtu)).max().unwrap_or(Time::ZERO)
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters: the text
/// before the first `*` starts it, the text after the last ends it, and the pieces between
/// occur in order in what is left.
fn wildcard_match(pattern: &str, name: &str) -> bool {
    let pieces: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if pieces.len() == 1 {
        return name == pattern;
    }
    let Some(mut rest) = name.strip_prefix(first).and_then(|r| r.strip_suffix(last)) else { return false };
    for piece in &pieces[1..pieces.len() - 1] {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

/// The index of `q` among the distinct queue settings, adding it if new.
fn intern(params: &mut Vec<QueueParams>, q: QueueParams) -> u16 {
    let k = params.iter().position(|x| *x == q).unwrap_or_else(|| {
        params.push(q);
        params.len() - 1
    });
    k as u16
}

/// Connection slots: a retired workload flow's slot goes on `free` until reused, and its
/// counters into `retired`.
#[derive(Default)]
pub(crate) struct FlowTable {
    pub slots: Vec<Flow>,
    pub free: Vec<u32>,
    /// Connections opened so far (also the serial number of the next one's random stream).
    pub opened: u64,
    /// Counters of retired workload flows, and how many there were.
    pub retired: FlowStats,
    pub retired_count: u64,
    /// `until = "flows_done"`: sized `[[flows]]` connections whose last byte has not arrived.
    pub pending: Option<u64>,
}

/// What the run measures as it goes.
pub(crate) struct Measurements {
    /// Per traffic group: the `[[flows]]` groups, then the `[[workloads]]` generators.
    pub groups: Vec<GroupStats>,
    pub fct_buckets: Vec<u64>,
    pub flow_records: Option<Vec<FlowRecord>>,
    pub rtt_hist: Histogram<u64>,
    pub samplers: Vec<QueueSampler>,
    pub timeseries: TimeSeries,
    /// Counters as they stood when the warm-up ended, overall and per port.
    pub at_warmup: Counters,
    pub ports_at_warmup: Vec<Vec<ClassStats>>,
    /// `measure.pfc_trace`: every PFC frame as it reached the egress it pauses or resumes
    /// (time, port, class, pause), up to `MAX_TRACE_SAMPLES`; the frames beyond are counted.
    pub pfc_trace: Option<Vec<(Time, PortId, u8, bool)>>,
    pub pfc_trace_refused: u64,
    /// `measure.pcap`: one capture per port named.
    pub captures: Vec<Capture>,
    /// Data packets sent (first transmissions and retransmissions), and dropped anywhere.
    pub data_sent: u64,
    pub data_drops: u64,
}

impl Measurements {
    /// The groups' statistics and a queue sampler on each sampled port.
    fn new(s: &Scenario, fabric: &mut Fabric) -> Result<Measurements, ScenarioError> {
        let buckets = s.measure.fct_buckets.len();
        let flows = s.flows.iter().enumerate().map(|(i, g)| GroupStats::new(g.name.clone().unwrap_or_else(|| format!("flows[{i}]")), "flows", buckets));
        let workloads = s.workloads.iter().enumerate().map(|(w, cfg)| GroupStats::new(format!("workloads[{w}]"), cfg.kind(), buckets));
        let mut samplers = Vec::new();
        for (p, name) in fabric.sampled_ports(s)? {
            fabric.ports[p.idx()].sampler = Some(samplers.len() as u32);
            samplers.push(QueueSampler::new(p, name, s.measure.queue_interval, s.warmup, s.measure.queue_trace, s.switch.classes as usize));
        }
        let mut captures = Vec::new();
        if let Some(pcap) = &s.measure.pcap {
            for (i, name) in pcap.ports.iter().enumerate() {
                let p = fabric.port_named(name, &format!("measure.pcap.ports[{i}]"))?;
                if fabric.ports[p.idx()].capture.is_some() {
                    return Err(ScenarioError::Invalid { field: format!("measure.pcap.ports[{i}]"), value: name.clone(), allowed: "each port once".into() });
                }
                fabric.ports[p.idx()].capture = Some(captures.len() as u32);
                let share = MAX_CAPTURE_BYTES / pcap.ports.len() as u64;
                captures.push(Capture::new(p, name.clone(), pcap.snaplen.0 as u32, pcap.max_packets, share));
            }
        }
        Ok(Measurements {
            groups: flows.chain(workloads).collect(),
            fct_buckets: s.measure.fct_buckets.iter().map(|b| b.0).collect(),
            flow_records: s.measure.flow_records.then(Vec::new),
            rtt_hist: histogram(),
            samplers,
            timeseries: TimeSeries::default(),
            at_warmup: Counters::default(),
            ports_at_warmup: Vec::new(),
            pfc_trace: s.measure.pfc_trace.then(Vec::new),
            pfc_trace_refused: 0,
            captures,
            data_sent: 0,
            data_drops: 0,
        })
    }
}

impl Network {
    /// Packet `i` starts leaving a captured port: capture `c` records it.
    #[cold]
    pub(crate) fn capture(&mut self, c: u32, i: PktId) {
        let pkt = self.pkts.get(i);
        let ends = match pkt.kind {
            k if k.of_flow() => {
                let f = &self.flows.slots[pkt.flow as usize];
                let (src, dst) = if pkt.kind == PacketKind::Data { (f.src, f.dst) } else { (f.dst, f.src) };
                Endpoints { src: Some(src), dst, flow: pkt.flow, message: matches!(f.tx, Tx::Message(_)), payload_per_packet: self.cfg.payload_per_packet, first_of_segment: pkt.first_of_segment }
            }
            PacketKind::Ping => {
                let src = self.generators[pkt.seq as usize].sources[pkt.flow as usize];
                Endpoints { src: Some(src), dst: pkt.dst_host, flow: pkt.flow, message: false, payload_per_packet: 0, first_of_segment: false }
            }
            _ => Endpoints { src: None, dst: pkt.dst_host, flow: pkt.flow, message: false, payload_per_packet: 0, first_of_segment: false },
        };
        self.measure.captures[c as usize].record(self.now, pkt, ends);
    }
}

impl Measurements {
    /// Notes a PFC frame that reached egress `port` at `now`, when the PFC timeline is kept.
    pub fn record_pfc(&mut self, now: Time, port: PortId, class: u8, pause: bool) {
        if let Some(t) = &mut self.pfc_trace {
            if (t.len() as u64) < MAX_TRACE_SAMPLES {
                t.push((now, port, class, pause));
            } else {
                self.pfc_trace_refused += 1;
            }
        }
    }
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
    pub naks: u64,
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
    pub at_min_rate: Vec<Option<bool>>,
    /// Window flows' congestion window (`None` for message flows).
    pub cwnd_bytes: Vec<Option<u64>>,
    /// Swift flows' fabric and endpoint windows, in packets.
    pub fcwnd: Vec<Option<f64>>,
    pub ecwnd: Vec<Option<f64>>,
    /// Mean of the RTT samples taken since the previous sample (`None`: none).
    pub rtt: Vec<Option<Time>>,
    /// Message flows' outstanding payload (`None` for window flows).
    pub inflight_bytes: Vec<Option<u64>>,
    /// Counters from the connection's start: retransmitted packets, dropped data packets, and
    /// payload that arrived marked CE.
    pub retransmits: Vec<u64>,
    pub drops: Vec<u64>,
    pub ecn_echoed_bytes: Vec<u64>,
}

impl Network {
    pub fn new(s: &Scenario) -> Result<Network, ScenarioError> {
        let mut fabric = Fabric::new(s);
        let queue_params = fabric.queue_params(s)?;
        let measure = Measurements::new(s, &mut fabric)?;
        let line_rates: Vec<u64> = fabric.hosts.iter().map(|h| h.line_rate.bps()).collect();
        let first_workload_group = s.flows.len();
        let generators = (0..s.workloads.len())
            .map(|w| Generator::new(s, w, (first_workload_group + w) as u16, &fabric.routing, &line_rates))
            .collect::<Result<Vec<_>, _>>()?;
        let mut net = Network {
            now: Time::ZERO,
            seq_now: 0,
            events: EventQueue::new(Time(2 * slowest_crossing(&fabric.graph, s.nic.mtu.0).ps())),
            pkts: Slab::new(s.switch.int == Some(true)),
            cfg: RunConfig { queue_params, ..RunConfig::new(s) },
            fabric,
            flows: FlowTable::default(),
            generators,
            measure,
            window_actions: Vec::new(),
            message_rtos: Timers::default(),
            faults: Vec::new(),
        };
        if matches!(&s.cc, CcConfig::Hpcc(p) if p.base_rtt == BaseRtt::Max) {
            net.cfg.max_base_rtt = net.max_base_rtt();
        }
        net.events.push(net.cfg.warmup, EventKind::WarmupEnd);
        net.open_flow_groups(s);
        for g in 0..net.generators.len() {
            for (t, i) in net.generators[g].first_events() {
                net.events.push(t, EventKind::Arrival { generator: g as u32, host: i });
            }
        }
        if let Some(dt) = net.cfg.timeseries_interval {
            net.events.push(dt, EventKind::Sample);
        }
        Ok(net)
    }

    /// Opens and starts every `[[flows]]` connection.
    fn open_flow_groups(&mut self, s: &Scenario) {
        // One context for every group: a graph's host names are looked up in one map.
        let ctx = s.context();
        for (gi, g) in s.flows.iter().enumerate() {
            let sources = ctx.host_set("", Some(&g.src)).expect("validated");
            let dsts = ctx.host_set("", Some(&g.dst)).expect("validated");
            for (i, &h) in sources.iter().enumerate() {
                let dst = dsts[i.min(dsts.len() - 1)];
                let start = Time(g.start.ps() + g.start_step.ps() * i as u64);
                for _ in 0..g.connections {
                    let onoff = match (&s.transport, g.rate) {
                        (TransportConfig::Window(w), Some(rate)) => Some(OnOff::new(rate, g.on.unwrap_or_default(), g.off, start, g.send_buffer.unwrap_or(w.send_buffer).0)),
                        _ => None,
                    };
                    let app = g.rate.filter(|_| onoff.is_none()).map(|rate| App {
                        rate,
                        message: g.message.unwrap_or(s.nic.segment()).0,
                        poisson: g.arrivals == Arrivals::Poisson,
                        next_message: start,
                    });
                    let (start_jitter, stop) = (g.start_jitter, g.stop.unwrap_or(Time::MAX));
                    let spec = FlowSpec { src: h, dst, class: g.class, group: gi as u16, start, start_jitter, stop, size: g.size.map(|b| b.0), write: g.write.map(|b| b.0), app, onoff, ephemeral: None, demand: false };
                    let f = self.open_flow(spec);
                    self.start_flow(f);
                }
            }
        }
        // Every connection so far is a `[[flows]]` one.
        self.flows.pending = (s.until == Until::FlowsDone).then_some(self.flows.slots.len() as u64);
    }

    /// Runs until the scenario's duration; events at exactly the end still happen.
    pub fn run(&mut self) {
        let finished = self.run_observed(|_| ControlFlow::Continue(()));
        debug_assert!(finished.is_ok());
    }

    /// Runs like [`Network::run`], calling `observe` every [`OBSERVE_EVERY`] events with how far
    /// the run has come; when it breaks, the run stops there with `Err(Stopped)` and its state
    /// is not a complete result.
    pub fn run_observed(&mut self, mut observe: impl FnMut(Progress) -> ControlFlow<()>) -> Result<(), Stopped> {
        loop {
            for _ in 0..OBSERVE_EVERY {
                let Some(ev) = self.events.pop_until(self.cfg.end) else {
                    self.finish();
                    return Ok(());
                };
                self.prefetch_upcoming();
                self.handle(ev);
            }
            if observe(Progress { now: self.now, end: self.cfg.end, events: self.events.processed() }).is_break() {
                return Err(Stopped);
            }
        }
    }

    /// Brings what the next event reads first into the cache while this one is handled: an
    /// arriving packet and the port it arrives through. At a thousand hosts the packets in
    /// flight and the ports no longer fit in the cache, and these two loads were a third of
    /// the run's time.
    #[inline(always)]
    fn prefetch_upcoming(&self) {
        if let Some(EventKind::Arrive { port, pkt }) = self.events.upcoming() {
            crate::engine::prefetch(self.pkts.get(pkt));
            crate::engine::prefetch(&self.fabric.ports[port.idx()]);
        }
    }

    #[inline]
    fn handle(&mut self, ev: Event) {
        debug_assert!(ev.time >= self.now, "time went back from {:?} to {:?}", self.now, ev.time);
        self.now = ev.time;
        self.seq_now = ev.seq;
        match ev.kind {
            EventKind::TxDone { port, pkt } => {
                self.fabric.ports[port.idx()].tx_done();
                if let Some(pkt) = pkt {
                    self.host_tx_done(pkt);
                }
                self.try_tx(port);
            }
            EventKind::Arrive { port, pkt } => self.link_arrive(port, pkt),
            EventKind::HostWake(h) => self.host_wake(h.0, ev.time),
            EventKind::Kick(port) => {
                if let Owner::Host(h) = self.fabric.ports[port.idx()].owner {
                    self.fabric.hosts[h as usize].pacer_kick_done(ev.time);
                }
                self.try_tx(port)
            }
            EventKind::Sample => self.sample(),
            EventKind::WarmupEnd => self.warmup_end(),
            EventKind::MessageRto => {
                if let Some(f) = self.message_rtos.pop(&mut self.events, &ev) {
                    self.message_timer(f);
                }
            }
            EventKind::Timer { flow, timer } => self.window_timer(flow.0, timer),
            EventKind::Arrival { generator, host } => self.workload_event(generator, host),
            EventKind::HostRx(h) => self.host_rx_done(h.0),
        }
    }

    /// The warm-up ends: counters are noted, from which the results count.
    fn warmup_end(&mut self) {
        self.measure.at_warmup = self.counters();
        for p in &mut self.fabric.ports {
            p.start_measuring(self.now);
        }
        self.measure.ports_at_warmup = self.fabric.ports.iter().map(|p| p.stats_at(self.now)).collect();
    }

    /// The end of the run: queue samplers see the last interval.
    fn finish(&mut self) {
        self.now = self.cfg.end;
        for s in &mut self.measure.samplers {
            let port = &self.fabric.ports[s.port.idx()];
            s.observe(self.cfg.end, &port.occupancies()[..self.cfg.classes]);
        }
    }

    fn sample(&mut self) {
        let ts = &mut self.measure.timeseries;
        for (i, f) in self.flows.slots.iter_mut().enumerate().filter(|(_, f)| f.listed()) {
            ts.time.push(self.now);
            ts.flow.push(i as u32);
            ts.delivered_bytes.push(f.stats.delivered_bytes);
            ts.rate_bps.push(f.rate().bps());
            let m = f.cc_metrics();
            ts.at_min_rate.push(m.at_min_rate);
            ts.cwnd_bytes.push(m.cwnd_bytes);
            ts.fcwnd.push(m.fcwnd_pkts);
            ts.ecwnd.push(m.ecwnd_pkts);
            ts.inflight_bytes.push(if let Tx::Message(m) = &f.tx { Some(m.outstanding_bytes()) } else { None });
            let st = &mut f.stats;
            ts.retransmits.push(st.retransmits);
            ts.drops.push(st.drops);
            ts.ecn_echoed_bytes.push(st.ecn_echoed_bytes);
            ts.rtt.push((st.interval_rtt_samples > 0).then(|| Time((st.interval_rtt_sum / st.interval_rtt_samples as u128) as u64)));
            (st.interval_rtt_sum, st.interval_rtt_samples) = (0, 0);
        }
        let dt = self.cfg.timeseries_interval.expect("sampling is on");
        self.events.push(self.now + dt, EventKind::Sample);
    }

    /// Lets connection `f` send from its start: a message flow joins its host's scheduler, a
    /// window flow sends its first window (at once, or by a timer at its start).
    pub(crate) fn start_flow(&mut self, f: u32) {
        let start = self.flows.slots[f as usize].start;
        match &self.flows.slots[f as usize].tx {
            Tx::Message(_) => self.schedule_flow(f),
            Tx::Window(_) if start <= self.now => self.window_send(f),
            Tx::Window(_) => self.events.push(start, EventKind::Timer { flow: FlowId(f), timer: Timer::Start }),
        }
    }

    /// The egress ports a packet of a flow with ECMP hash `hash` crosses from host `src` to
    /// host `dst`: the source NIC's, then each switch's.
    pub fn path(&self, src: u32, dst: u32, hash: u32) -> Vec<PortId> {
        let mut p = self.fabric.hosts[src as usize].port;
        let mut path = vec![p];
        loop {
            let node = self.fabric.ports[self.fabric.ports[p.idx()].peer.idx()].node;
            if node == dst || node < self.fabric.graph.hosts || path.len() > self.fabric.graph.nodes() as usize {
                return path;
            }
            p = self.fabric.routing.next_port(SwitchId(node - self.fabric.graph.hosts), dst, hash);
            path.push(p);
        }
    }

    /// PFC frames sent, time ports spent paused, drops and ECN marks, so far.
    pub fn counters(&self) -> Counters {
        Counters {
            pauses: self.fabric.ports.iter().map(|p| p.pauses_sent()).sum(),
            paused: Time(self.fabric.ports.iter().map(|p| p.paused_time_at(self.now).ps()).sum()),
            drops: self.fabric.switches.iter().map(|s| s.drops).sum(),
            marks: self.fabric.switches.iter().map(|s| s.marks).sum(),
            retransmits: self.all_stats().map(|s| s.retransmits).sum(),
            timeouts: self.all_stats().map(|s| s.timeouts).sum(),
            naks: self.all_stats().map(|s| s.naks).sum(),
            host_drops: self.fabric.hosts.iter().map(|h| h.rx_drops).sum(),
            data_sent: self.measure.data_sent,
            data_drops: self.measure.data_drops,
        }
    }

    /// Counters of every connection: the open ones, and the retired workload flows' totals.
    pub fn all_stats(&self) -> impl Iterator<Item = &FlowStats> {
        self.flows.slots.iter().filter(|f| f.open).map(|f| &f.stats).chain(std::iter::once(&self.flows.retired))
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
        self.measure.data_sent
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

/// Read access to the network's state, for tests, benchmarks and tools.
impl Network {
    /// The simulated time now (the end, once run).
    pub fn now(&self) -> Time {
        self.now
    }

    /// When the run ends at the latest (`duration`).
    pub fn end(&self) -> Time {
        self.cfg.end
    }

    pub fn graph(&self) -> &Graph {
        &self.fabric.graph
    }

    pub fn routing(&self) -> &Routing {
        &self.fabric.routing
    }

    /// Every port, two per link (see `Port::peer`).
    pub fn ports(&self) -> &[Port] {
        &self.fabric.ports
    }

    pub fn hosts(&self) -> &[Host] {
        &self.fabric.hosts
    }

    /// The connection slots (a retired workload flow's slot may hold a closed flow).
    pub fn flows(&self) -> &[Flow] {
        &self.flows.slots
    }

    /// Fault injection: the next data packet of flow `flow` with sequence number `seq` (the
    /// window transport's packet number, the message transport's PSN) is dropped at the first
    /// switch it reaches, and counted as a drop there.
    pub fn lose_once(&mut self, flow: u32, seq: u32) {
        self.faults.push((flow, seq));
    }

    /// The packet captures (`measure.pcap`) as pcap files by port name; they are handed over
    /// once.
    pub fn take_captures(&mut self) -> Vec<(String, Vec<u8>)> {
        std::mem::take(&mut self.measure.captures).into_iter().map(|c| (c.name.clone(), c.into_bytes())).collect()
    }

    /// Workload flows retired so far, their slots reused.
    pub fn retired_flows(&self) -> u64 {
        self.flows.retired_count
    }

    /// Per traffic group: the `[[flows]]` groups, then the `[[workloads]]` generators.
    pub fn groups(&self) -> &[GroupStats] {
        &self.measure.groups
    }

    pub fn timeseries(&self) -> &TimeSeries {
        &self.measure.timeseries
    }
}

#[cfg(test)]
mod tests {
    use super::wildcard_match;

    #[test]
    fn wildcard_patterns() {
        assert!(wildcard_match("s*-s*", "s12-s40"));
        assert!(!wildcard_match("s*-s*", "s12-h3"));
        assert!(wildcard_match("*", "h0-s0") && wildcard_match("s0-h0", "s0-h0") && !wildcard_match("s0-h0", "s0-h01"));
        assert!(wildcard_match("a*b*b", "abb"));
        assert!(!wildcard_match("a*a", "a"), "prefix and suffix may not overlap");
        assert!(!wildcard_match("ab*b", "ab"));
    }
}
