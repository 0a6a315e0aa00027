//! The network: the fabric, the hosts and the run's context built from a scenario, and the
//! event loop that hands each event to the part it belongs to.
//!
//! The parts own their state: the fabric ([`crate::fabric`]: ports, switches, routes), the hosts
//! ([`crate::host`]: NICs, connections, applications) and the context (`ctx`: clock,
//! event queue, packets, measurements, configuration). The packet path is their methods,
//! each taking the parts it reaches as arguments; reports read them ([`crate::report::output`]).

use crate::core::engine::{Event, EventKind, EventQueue};
use crate::core::external::Controllers;
use crate::core::ids::PortId;
use crate::core::packet::{PacketKind, Slab};
use crate::ctx::{Ctx, RunConfig};
use crate::fabric::port::{Owner, Port};
use crate::fabric::routing::Routing;
use crate::fabric::topology::Graph;
use crate::fabric::Fabric;
use crate::host::flow::{FlowStats, Tx};
use crate::host::nic::Host;
use crate::host::Hosts;
use crate::parallel::boundary::Boundary;
use crate::report::measure::{Counters, Measurements, TimeSeries};
use crate::report::output::Summary;
use crate::report::stats::GroupStats;
use crate::report::table::Tables;
use crate::scenario::{invalid, CcConfig, Scenario, ScenarioError};
use crate::workload::Generator;
use rttlab_cc::hpcc::BaseRtt;
use rttlab_cc::Time;
use std::ops::ControlFlow;

/// Events handled between two calls of a run's observer: often enough to stop within
/// milliseconds (about 10 ms at 6 M events/s), rarely enough to cost nothing.
pub const OBSERVE_EVERY: u64 = 1 << 16;
/// How many events ahead the main loop fetches an arrival's packet and port (`prefetch_upcoming`).
const PREFETCH_AHEAD: usize = 3;
/// The fewest ports for which fetching ahead pays: below it the ports fit in a core's cache and
/// the fetches only cost (measured in `docs/speed.md`).
const PREFETCH_FROM_PORTS: usize = 2048;

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

/// The simulation: the run's context, the fabric and the hosts, each built by its own
/// constructor from the scenario.
pub struct Network {
    pub(crate) cx: Ctx,
    pub(crate) fabric: Fabric,
    pub(crate) hosts: Hosts,
}

impl Network {
    pub fn new(s: &Scenario) -> Result<Network, ScenarioError> {
        Network::with_controllers(s, None)
    }

    /// The network of `s`, whose `cc.algorithm = "python"` controllers `controllers` builds
    /// (required then, unused otherwise).
    pub fn with_controllers(s: &Scenario, controllers: Option<Box<dyn Controllers>>) -> Result<Network, ScenarioError> {
        Network::build(s, controllers, None)
    }

    /// The network of `s`, as partition `part.0` of a cut (`part.1`: each node's partition,
    /// [`crate::parallel`]) when given: its own nodes' connections are opened, and the links to
    /// other partitions' nodes lead there.
    pub(crate) fn build(
        s: &Scenario,
        controllers: Option<Box<dyn Controllers>>,
        part: Option<(usize, std::sync::Arc<[usize]>)>,
    ) -> Result<Network, ScenarioError> {
        if matches!(s.cc.controller, CcConfig::Python(_)) && controllers.is_none() {
            return Err(invalid(
                "cc.algorithm",
                "python",
                "a controller written in Python runs from Python: rttlab.run(...) or the rttlab command, not the simulator alone",
            ));
        }
        let mut fabric = Fabric::new(s);
        let queue_params = fabric.queue_params(s)?;
        fabric.faults = crate::fabric::faults::Faults::build(s, &fabric.graph, &fabric.ports)?;
        let measure = Measurements::new(s, &mut fabric)?;
        let line_rates: Vec<u64> = fabric.host_ports.iter().map(|p| fabric.ports[p.idx()].rate.bps()).collect();
        let first_workload_group = s.flows.len();
        let mut generators = (0..s.workloads.len())
            .map(|w| Generator::new(s, w, (first_workload_group + w) as u16, &fabric.routing, &line_rates))
            .collect::<Result<Vec<_>, _>>()?;
        let mut measure = measure;
        for j in 0..s.jobs.len() {
            let gen = Generator::job(s, j, (first_workload_group + s.workloads.len() + j) as u16, &line_rates)?;
            let job = gen.job_run();
            measure.steps.push(vec![Default::default(); (job.iterations * job.steps) as usize]);
            generators.push(gen);
        }
        let hosts = Hosts::new(s, &fabric, generators, controllers);
        let mut cx = Ctx {
            now: Time::ZERO,
            seq_now: 0,
            events: EventQueue::new(Time(slowest_crossing(&fabric.graph, s.nic.mtu.0).ps().saturating_mul(2)))
                .with_origins((fabric.graph.hosts + fabric.graph.switches) as usize + 1),
            pkts: Slab::new(s.switch.int == Some(true)),
            cfg: RunConfig {
                lossless: if s.switch.pfc_alpha.is_some() || queue_params.iter().any(|q| q.pfc.is_some()) { s.switch.lossless_classes() } else { 0 },
                queue_params,
                ..RunConfig::new(s)
            },
            measure,
            end: s.duration,
            boundary: Boundary::default(),
            notice_delay: fabric.graph.links.iter().map(|l| l.delay).min().unwrap_or(Time::ZERO),
        };
        let controllers = std::iter::once(&s.cc.controller).chain(s.jobs.iter().filter_map(|j| j.cc.as_ref()));
        // Ultra Ethernet's default timeout counts queue drains of one BDP at that RTT.
        if controllers.into_iter().any(|cc| cc.needs().base_rtt == Some(BaseRtt::Max)) || cx.cfg.conns.iter().any(|c| c.transport.is_uet()) {
            cx.cfg.max_base_rtt = fabric.max_base_rtt(&cx.cfg);
        }
        cx.events.push(cx.cfg.warmup, EventKind::WarmupEnd);
        // Queued first, a fault's edge comes before anything else at its instant.
        for (t, p) in fabric.faults.as_ref().map(|f| f.edges(&fabric.ports)).unwrap_or_default() {
            cx.events.push(t, EventKind::Fault(p));
        }
        let mut net = Network { cx, fabric, hosts };
        if let Some((me, of_node)) = part {
            net.set_partition(me, &of_node);
        }
        let Network { cx, fabric, hosts, .. } = &mut net;
        hosts.open_flow_groups(s, fabric, cx);
        for g in 0..hosts.generators.len() {
            for (t, i) in hosts.generators[g].first_events() {
                cx.events.push(t, EventKind::Arrival { generator: g as u32, host: i });
            }
        }
        if let Some(dt) = cx.cfg.timeseries_interval {
            cx.events.push(dt, EventKind::Sample);
        }
        Ok(net)
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
                let Some(ev) = self.cx.events.pop_until(self.cx.end) else {
                    self.finish();
                    return Ok(());
                };
                self.prefetch_upcoming();
                self.handle(ev);
            }
            if observe(Progress { now: self.cx.now, end: self.cx.end, events: self.cx.events.processed() }).is_break() {
                return Err(Stopped);
            }
        }
    }

    /// Runs like [`Network::run`], showing `inspect` every event (with the state before it is
    /// handled): for tools that study the event stream (`rttlab-bench partition`).
    pub fn run_inspected(&mut self, mut inspect: impl FnMut(&Network, &Event)) {
        while let Some(ev) = self.cx.events.pop_until(self.cx.end) {
            inspect(self, &ev);
            self.handle(ev);
        }
        self.finish();
    }

    /// Makes this network partition `me` of a cut (`of_node`: each node's partition): it
    /// handles only its own nodes' events, and sends packets toward another partition's
    /// nodes as crossings.
    fn set_partition(&mut self, me: usize, of_node: &std::sync::Arc<[usize]>) {
        for i in 0..self.fabric.ports.len() {
            let peer = self.fabric.ports[i].peer;
            let to = of_node[self.fabric.ports[peer.idx()].node as usize];
            self.fabric.ports[i].crosses_to = (to != me).then(|| u16::try_from(to).expect("at most 65 536 partitions"));
        }
        self.cx.boundary.part = Some((me, of_node.clone()));
    }

    /// When the next pending event happens.
    pub(crate) fn next_event_time(&mut self) -> Option<Time> {
        self.cx.events.next_time()
    }

    /// Handles this partition's events up to `until` (included), showing `inspect` each;
    /// another partition's (queued when every partition was built alike) are dropped.
    pub(crate) fn run_window(&mut self, until: Time, mut inspect: impl FnMut(&Network, &Event)) {
        while let Some(ev) = self.cx.events.pop_until(until) {
            let owner = self.owner(&ev.kind);
            if owner.is_some_and(|n| self.cx.foreign(n)) {
                self.cx.boundary.events_not_counted += 1;
                continue;
            }
            inspect(self, &ev);
            self.prefetch_upcoming();
            self.dispatch(ev, owner);
        }
    }

    /// The packets sent toward other partitions in the span (`until` its last instant),
    /// copied out of this one into the mail for their partitions (`out`, by partition); each
    /// leaves its slab once its transmission is done. (A closure per packet instead changed what
    /// the compiler inlined elsewhere and slowed one thread: `docs/speed.md`.)
    pub(crate) fn take_crossings(&mut self, until: Time, out: &mut [crate::parallel::Mail]) {
        let cx = &mut self.cx;
        for c in &cx.boundary.crossings {
            let int = cx.pkts.int(c.pkt).map(|s| Box::new(*s));
            out[c.to as usize].crossings.push(crate::parallel::Crossing { time: c.arrive, seq: c.seq, port: c.port, pkt: *cx.pkts.get(c.pkt), int });
        }
        cx.boundary.handed_over.append(&mut cx.boundary.crossings);
        cx.boundary.handed_over.retain(|c| {
            if c.done > until {
                return true;
            }
            cx.pkts.free(c.pkt);
            false
        });
    }

    /// What another partition told this one.
    pub(crate) fn receive_outgoing(&mut self, o: crate::parallel::boundary::Outgoing) {
        match o {
            crate::parallel::boundary::Outgoing::RxEnd(f, end) => self.hosts.flows.install_rx(f, *end),
            crate::parallel::boundary::Outgoing::Message(f, serial, m) => self.hosts.expect_message(f, serial, m),
            crate::parallel::boundary::Outgoing::Event(t, seq, kind) => self.cx.events.push_reserved(t, seq, kind),
        }
    }

    /// A packet from another partition: it arrives as its sender scheduled it.
    pub(crate) fn receive_crossing(&mut self, c: crate::parallel::Crossing) {
        let cx = &mut self.cx;
        let i = cx.pkts.alloc(c.pkt);
        if let (Some(s), Some(to)) = (c.int.as_deref(), cx.pkts.int_mut(i)) {
            *to = *s;
        }
        cx.events.push_reserved(c.time, c.seq, EventKind::Arrive { port: c.port, pkt: i });
    }

    /// Brings what an event reads first into the cache `PREFETCH_AHEAD` events before it is
    /// handled (and, when a bucket starts, for the events before that): an arriving packet and,
    /// with PFC, the port it arrives through, or the port that finished a packet and its class queues;
    /// then, for the next event, the egress port the packet leaves a switch by (routed when it
    /// left for the switch, so read from the packet now in the cache). At a thousand hosts the
    /// packets in flight and the ports no longer fit in the cache, and these loads were a third
    /// of the run's time (how far ahead, and what to fetch, measured in `docs/speed.md`).
    #[inline(always)]
    fn prefetch_upcoming(&self) {
        if self.fabric.ports.len() < PREFETCH_FROM_PORTS {
            return;
        }
        let events = &self.cx.events;
        let first = if events.bucket_started() { 0 } else { PREFETCH_AHEAD };
        for n in first..=PREFETCH_AHEAD {
            match events.upcoming(n) {
                Some(EventKind::Arrive { port, pkt }) => {
                    crate::core::engine::prefetch(self.cx.pkts.get(pkt));
                    // Only PFC reads the port a packet arrives through (`Fabric::arrival_node`).
                    if self.cx.cfg.lossless != 0 {
                        crate::core::engine::prefetch(&self.fabric.ports[port.idx()]);
                    }
                }
                Some(EventKind::TxDone { port, .. }) => self.fabric.prefetch_port(port, 0..self.cx.cfg.classes),
                _ => {}
            }
        }
        if let Some(EventKind::Arrive { port, pkt }) = events.upcoming(0) {
            let pkt = self.cx.pkts.get(pkt);
            if !self.fabric.prefetch_egress(port, pkt, self.cx.cfg.switch_chooses) {
                self.hosts.prefetch_connection(pkt);
            }
        }
    }

    /// Hands the event to the part it belongs to.
    #[inline]
    fn handle(&mut self, ev: Event) {
        let owner = self.owner(&ev.kind);
        self.dispatch(ev, owner);
    }

    /// `handle` for an event whose owner (`owner`) is known.
    #[inline(always)]
    fn dispatch(&mut self, ev: Event, owner: Option<u32>) {
        let Network { cx, fabric, hosts, .. } = self;
        debug_assert!(ev.time >= cx.now, "time went back from {:?} to {:?}", cx.now, ev.time);
        cx.now = ev.time;
        cx.seq_now = ev.seq;
        cx.events.set_origin(owner.map_or(0, |n| n + 1));
        match ev.kind {
            EventKind::TxDone { port, pkt } => {
                fabric.ports[port.idx()].tx_done();
                if let Some(pkt) = pkt {
                    hosts.host_tx_done(pkt, fabric, cx);
                }
                fabric.try_tx(port, hosts, cx);
            }
            EventKind::Arrive { port, pkt } => fabric.link_arrive(port, pkt, owner.expect("an arrival has a node"), hosts, cx),
            EventKind::HostWake(h) => hosts.host_wake(h.0, ev.time, fabric, cx),
            EventKind::Kick(port) => {
                if let Owner::Host(h) = fabric.owner(port) {
                    hosts.nodes[h as usize].pacer_kick_done(ev.time);
                }
                fabric.try_tx(port, hosts, cx)
            }
            EventKind::Sample => self.sample(),
            EventKind::WarmupEnd => self.warmup_end(),
            EventKind::MessageRto(h) => hosts.message_rto_event(h.0, &ev, fabric, cx),
            EventKind::Pull(h) => hosts.pull_event(h.0, fabric, cx),
            EventKind::PullRate(h) => hosts.pull_rate_event(h.0, cx),
            EventKind::Timer { flow, timer, serial } => hosts.window_timer(flow.0, timer, serial, fabric, cx),
            EventKind::Dropped { flow, serial, lost } => hosts.dropped_notice(flow.0, serial, lost, cx),
            EventKind::Closed { flow, serial } => hosts.receiver_closed(flow.0, serial),
            EventKind::Fault(port) => fabric.fault_edge(port, hosts, cx),
            EventKind::Lost { pkt, silent, .. } => {
                fabric.lose(pkt, if silent { crate::core::packet::Lost::Silent } else { crate::core::packet::Lost::Down }, hosts, cx)
            }
            EventKind::PingLost { generator, source } => hosts.ping_lost(generator, source, cx),
            EventKind::Arrival { generator, host } => hosts.workload_event(generator, host, fabric, cx),
            EventKind::HostRx(h) => hosts.host_rx_done(h.0, fabric, cx),
        }
    }

    /// The warm-up ends: counters are noted, from which the results count.
    fn warmup_end(&mut self) {
        self.cx.run_event_handled();
        self.cx.measure.at_warmup = self.counters();
        for p in 0..self.fabric.ports.len() {
            let at_host = matches!(self.fabric.owner(PortId(p as u32)), Owner::Host(_));
            for q in self.fabric.queues.of_mut(PortId(p as u32)) {
                q.start_measuring(self.cx.now, at_host);
            }
        }
        self.cx.measure.ports_at_warmup = self.fabric.port_views().map(|p| p.stats_at(self.cx.now)).collect();
    }

    /// The end of the run: queue samplers see the last interval, and drops their senders had
    /// yet to hear of (`EventKind::Dropped`) count against their connections.
    pub(crate) fn finish(&mut self) {
        self.cx.now = self.cx.end;
        for ev in self.cx.events.drain() {
            if let EventKind::Dropped { flow, serial, lost } = ev.kind {
                if !self.cx.foreign(self.hosts.flows.slots.host_of(flow.0)) {
                    self.hosts.dropped_notice(flow.0, serial, lost, &mut self.cx);
                }
            }
        }
        for s in &mut self.cx.measure.samplers {
            s.observe(self.cx.end, &self.fabric.port(s.port).occupancies()[..self.cx.cfg.classes]);
        }
    }

    fn sample(&mut self) {
        self.cx.run_event_handled();
        let ts = &mut self.cx.measure.timeseries;
        let flows = &mut self.hosts.flows;
        let listed: Vec<u32> = flows.listed().iter().map(|f| f.id).collect();
        for i in listed {
            let end = flows.rx.get(i).filter(|e| e.serial == flows.slots[i].serial);
            let (delivered, echoed) = end.map_or((0, 0), |e| (e.stats.delivered_bytes, e.stats.ecn_echoed_bytes));
            let f = &mut flows.slots[i];
            ts.time.push(self.cx.now);
            ts.flow.push(i);
            ts.delivered_bytes.push(delivered);
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
            ts.ecn_echoed_bytes.push(echoed);
            ts.rtt.push((st.interval_rtt_samples > 0).then(|| Time((st.interval_rtt_sum / st.interval_rtt_samples as u128) as u64)));
            (st.interval_rtt_sum, st.interval_rtt_samples) = (0, 0);
        }
        let dt = self.cx.cfg.timeseries_interval.expect("sampling is on");
        self.cx.events.push(self.cx.now + dt, EventKind::Sample);
    }

    /// PFC frames sent, time ports spent paused, drops and ECN marks, so far.
    pub fn counters(&self) -> Counters {
        Counters {
            pauses: self.fabric.port_views().map(|p| p.pauses_sent()).sum(),
            paused: Time(self.fabric.port_views().map(|p| p.paused_time_at(self.cx.now).ps()).sum()),
            drops: self.fabric.switches.iter().map(|s| s.drops).sum(),
            marks: self.fabric.switches.iter().map(|s| s.marks).sum(),
            retransmits: self.all_stats().map(|s| s.retransmits).sum(),
            timeouts: self.all_stats().map(|s| s.timeouts).sum(),
            naks: self.all_stats().map(|s| s.naks).sum(),
            acks: self.all_stats().map(|s| s.acks).sum(),
            trims: self.fabric.switches.iter().map(|s| s.trims).sum(),
            host_drops: self.hosts.nodes.iter().map(|h| h.rx_drops).sum(),
            data_sent: self.cx.measure.data_sent,
            data_drops: self.cx.measure.data_drops,
            // Saturating: a controller may be given rates near the 64-bit limit.
            rates_bps: self.hosts.flows.listed().iter().fold(0u64, |sum, f| sum.saturating_add(f.rate().bps())),
        }
    }

    /// Counters of every connection: the open ones, and the retired workload flows' totals.
    pub fn all_stats(&self) -> impl Iterator<Item = &FlowStats> {
        self.hosts.flows.all_stats()
    }

    pub fn events_processed(&self) -> u64 {
        self.cx.events.processed() + self.cx.boundary.events_elsewhere - self.cx.boundary.events_not_counted
    }

    /// The most events pending at once (the event queue's memory high-water mark).
    pub fn events_pending_peak(&self) -> usize {
        self.cx.events.peak()
    }

    /// Data packets sent so far, retransmissions included.
    pub fn data_packets_sent(&self) -> u64 {
        self.cx.measure.data_sent
    }

    /// Payload of data packets still in the network (queues and links).
    pub fn payload_in_flight(&self) -> u64 {
        self.cx.pkts.iter_live().filter(|p| p.kind == PacketKind::Data).map(|p| p.payload_bytes as u64).sum()
    }

    /// The most packets alive at once.
    pub fn packet_high_water(&self) -> usize {
        self.cx.pkts.capacity()
    }
}

/// Read access to the network's state, for tests, benchmarks and tools.
impl Network {
    /// The simulated time now (the end, once run).
    pub fn now(&self) -> Time {
        self.cx.now
    }

    /// When the run ends at the latest (`duration`).
    pub fn end(&self) -> Time {
        self.cx.end
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

    /// Port `p` with its class queues and statistics.
    pub fn port(&self, p: PortId) -> crate::fabric::port::PortView<'_> {
        self.fabric.port(p)
    }

    pub fn hosts(&self) -> &[Host] {
        &self.hosts.nodes
    }

    /// The connection slots, in the flows table's order (`FlowTable::listed`; a retired
    /// workload flow's slot may hold a closed flow).
    pub fn flows(&self) -> Vec<crate::host::flow::FlowView<'_>> {
        let mut v: Vec<_> = self.hosts.flows.views().collect();
        v.sort_by_key(crate::host::flow::FlowView::listing_order);
        v
    }

    /// Connection `id` (as the tables and time series name it).
    pub fn flow(&self, id: u32) -> crate::host::flow::FlowView<'_> {
        crate::host::flow::FlowView { id, stats: self.hosts.flows.stats(id), flow: &self.hosts.flows.slots[id] }
    }

    /// Fault injection: the next data packet of flow `flow` with sequence number `seq` (the
    /// window transport's packet number, the message transport's PSN) is dropped at the first
    /// switch it reaches, and counted as a drop there.
    pub fn lose_once(&mut self, flow: u32, seq: u32) {
        self.fabric.lose_once.push((flow, seq));
    }

    /// The packet captures (`measure.pcap`) as pcap files by port name; they are handed over
    /// once.
    pub fn take_captures(&mut self) -> Vec<(String, Vec<u8>)> {
        std::mem::take(&mut self.cx.measure.captures).into_iter().map(|c| (c.name.clone(), c.into_bytes())).collect()
    }

    /// Workload flows retired so far, their slots reused.
    pub fn retired_flows(&self) -> u64 {
        self.hosts.flows.retired_count
    }

    /// Per traffic group: the `[[flows]]` groups, then the `[[workloads]]` generators.
    pub fn groups(&self) -> &[GroupStats] {
        &self.cx.measure.groups
    }

    /// The `[[workloads]]` generators, in order.
    pub fn generators(&self) -> &[Generator] {
        &self.hosts.generators
    }

    pub fn timeseries(&self) -> &TimeSeries {
        &self.cx.measure.timeseries
    }

    /// The egress ports a packet of a flow with ECMP hash `hash` crosses from host `src` to
    /// host `dst`: the source NIC's, then each switch's.
    pub fn path(&self, src: u32, dst: u32, hash: u32) -> Vec<PortId> {
        self.fabric.path(src, dst, hash)
    }

    /// The run's summary: headline numbers over the measured period ([`crate::report::output`]).
    pub fn summary(&self) -> Summary {
        crate::report::output::summary(self)
    }

    /// The result tables ([`crate::report::output`]).
    pub fn tables(&self) -> Tables {
        crate::report::output::tables(self, self.cx.measure.timeseries.clone())
    }

    /// The result tables, the time series moved into them rather than copied (a million rows
    /// are tens of megabytes of fresh memory): the network keeps none.
    pub fn take_tables(&mut self) -> Tables {
        let ts = std::mem::take(&mut self.cx.measure.timeseries);
        crate::report::output::tables(self, ts)
    }

    /// What a reader of the results should be told ([`crate::report::output`]).
    pub fn warnings(&self, summary: &Summary) -> Vec<String> {
        crate::report::output::warnings(self, summary)
    }

    /// Every invariant of the state, or the first that fails ([`crate::report::invariants`]).
    pub fn check_invariants(&self) -> Result<(), String> {
        crate::report::invariants::check(self)
    }
}

impl Network {
    /// The node whose state an event changes first, whose event it is: a port's event the
    /// port's node's, a host's the host's, a connection's timer its sender's (a delayed ACK its
    /// receiver's), a workload's arrival its source host's; `None` for the run's own (the
    /// warm-up's end, time-series samples). Always inlined: it runs for every event, and the
    /// compiler once moved it out of line (`docs/speed.md`).
    #[inline(always)]
    pub fn owner(&self, kind: &EventKind) -> Option<u32> {
        let hosts = &self.hosts;
        match *kind {
            EventKind::Arrive { port, pkt } => Some(self.fabric.arrival_node(port, self.cx.pkts.get(pkt), self.cx.cfg.switch_chooses)),
            EventKind::TxDone { port, .. } | EventKind::Kick(port) | EventKind::Fault(port) | EventKind::Lost { port, .. } => {
                Some(self.fabric.ports[port.idx()].node)
            }
            EventKind::HostWake(h) | EventKind::HostRx(h) | EventKind::MessageRto(h) | EventKind::Pull(h) | EventKind::PullRate(h) => Some(h.0),
            EventKind::Timer { flow, timer, .. } => Some(match timer {
                crate::core::engine::Timer::DelayedAck => hosts.flows.rx[flow.0].dst,
                _ => hosts.flows.slots.host_of(flow.0),
            }),
            EventKind::Dropped { flow, .. } => Some(hosts.flows.slots.host_of(flow.0)),
            // The receiver's: its end is in the slot still (`Hosts::sender_done`).
            EventKind::Closed { flow, .. } => Some(hosts.flows.rx[flow.0].dst),
            EventKind::PingLost { generator, source } => Some(hosts.generators[generator as usize].sources[source as usize]),
            EventKind::Arrival { generator, host } => {
                let gen = &hosts.generators[generator as usize];
                // An incast acts for many senders at once: every partition draws it alike and
                // starts its own senders' flows (`Generator::act`).
                (!gen.acts_for_all()).then(|| gen.sources[host as usize])
            }
            EventKind::Sample | EventKind::WarmupEnd => None,
        }
    }
}

/// The longest a full-size packet takes to cross a link of `graph`: its serialization at the
/// link's slower direction, and the propagation delay.
fn slowest_crossing(graph: &Graph, mtu: u64) -> Time {
    graph.links.iter().map(|l| l.delay + l.rate_ab.min(l.rate_ba).serialization(mtu)).max().unwrap_or(Time::ZERO)
}
