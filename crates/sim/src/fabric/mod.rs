//! The switching fabric: ports (queues, serialization, propagation, PFC state), switches
//! (shared buffer, forwarding by ECMP, tail drop, ECN marking, PFC generation) and in-band
//! telemetry's records, as functions of the fabric's own state, the run's context (`Ctx`:
//! clock, events, packets, measurements) and, at host ports only, the hosts.

pub mod faults;
pub mod port;
pub mod routing;
pub mod switch;
pub mod topology;

use crate::core::engine::{rng_stream, EventKind, Stream};
use crate::core::ids::{PktId, PortId, SwitchId};
use crate::core::packet::Lost;
use crate::core::packet::{Packet, PacketKind};
use crate::ctx::{Ctx, RunConfig};
use crate::fabric::faults::Faults;
use crate::fabric::port::{port_name, ClassQueues, Owner, Port, PortView};
use crate::fabric::routing::{Chooser, Routing};
use crate::fabric::switch::{Decided, QueueParams, Red, Switch};
use crate::fabric::topology::Graph;
use crate::report::capture::Endpoints;
use crate::scenario::{invalid, Scenario, ScenarioError, Workload};
use rttlab_cc::{Rate, Time};

/// What the fabric asks of the hosts at their NIC ports, and all it knows of them
/// ([`crate::host::Hosts`] answers).
pub(crate) trait HostPorts {
    /// Host `h`'s NIC's next data packet of class `c`, if one may leave now.
    fn next_data_packet(&mut self, h: u32, c: usize, fabric: &mut Fabric, cx: &mut Ctx) -> Option<PktId>;
    /// Whether the transmit completion of packet `i` at its host matters to its transport.
    fn tx_done_matters(&self, i: PktId, cx: &Ctx) -> bool;
    /// Whether host `h`'s NIC holds segments not yet cut into packets.
    fn nic_holds_segments(&self, h: u32, cx: &Ctx) -> bool;
    /// Packet `i` has fully arrived at host `h`'s NIC.
    fn arrive(&mut self, h: u32, i: PktId, fabric: &mut Fabric, cx: &mut Ctx);
    /// The fabric dropped packet `pkt` (slot `i`): a switch for want of buffer (`lost`
    /// `None`), or a fault; it is counted against its flow and freed.
    fn dropped(&mut self, pkt: &Packet, i: PktId, lost: Option<Lost>, cx: &mut Ctx);
    /// The endpoints a packet capture writes for `pkt`.
    fn endpoints(&self, pkt: &Packet, cx: &Ctx) -> Endpoints;
}

/// The fabric: the graph, its routes, every port (two per link) and switch. It owns the
/// switching path: ports' queues and transmissions, switches' buffers, marking and PFC. It
/// reaches the hosts ([`crate::host::Hosts`]) only at host ports: for a host port's next
/// packet, and to hand up what arrives there or is dropped.
pub(crate) struct Fabric {
    pub graph: Graph,
    pub routing: Routing,
    pub ports: Vec<Port>,
    /// Their class queues.
    pub queues: ClassQueues,
    pub switches: Vec<Switch>,
    /// Each host's NIC port.
    pub host_ports: Vec<PortId>,
    /// Data packets the first switch they reach drops once (`Network::lose_once`): (flow, seq).
    pub lose_once: Vec<(u32, u32)>,
    /// The run's `[[faults]]` (`None`: there are none).
    pub faults: Option<Faults>,
}

impl Fabric {
    pub fn new(s: &Scenario) -> Fabric {
        let graph = Graph::from_scenario(s);
        let mut ports = Vec::with_capacity(graph.links.len() * 2);
        let mut node_ports: Vec<Vec<PortId>> = vec![Vec::new(); graph.nodes() as usize];
        let switch = |n: u32| (n >= graph.hosts).then(|| SwitchId(n - graph.hosts));
        let classes = s.switch.classes as usize;
        for l in &graph.links {
            let (pa, pb) = (ports.len() as u32, ports.len() as u32 + 1);
            ports.push(Port::new(l.a, (PortId(pb), switch(l.b)), l.rate_ab, l.delay));
            ports.push(Port::new(l.b, (PortId(pa), switch(l.a)), l.rate_ba, l.delay));
            node_ports[l.a as usize].push(PortId(pa));
            node_ports[l.b as usize].push(PortId(pb));
        }
        let routing = Routing::build(graph.hosts, &ports, &node_ports);
        let host_ports = (0..graph.hosts).map(|h| node_ports[h as usize][0]).collect();
        let switches = (0..graph.switches)
            .map(|sw| Switch {
                node: graph.hosts + sw,
                used: 0,
                headroom_used: 0,
                reserved: 0,
                rng: rng_stream(s.seed, Stream::Switch(sw)),
                chooser: Chooser::new(rng_stream(s.seed, Stream::Routing(sw)), &s.routing),
                drops: 0,
                dropped_payload: 0,
                marks: 0,
                trims: 0,
            })
            .collect();
        let queues = ClassQueues::new(ports.len(), classes);
        Fabric { graph, routing, ports, queues, switches, host_ports, lose_once: Vec::new(), faults: None }
    }

    /// Port `p`'s rate without faults (its link's, `Fabric::new` makes ports 2l and 2l + 1 of
    /// link l): what an idle, healthy fabric's ideal times are computed from, the same in
    /// every partition whatever a degraded port's owner has set.
    pub fn nominal_rate(&self, p: PortId) -> rttlab_cc::Rate {
        let link = &self.graph.links[p.idx() / 2];
        if p.idx().is_multiple_of(2) {
            link.rate_ab
        } else {
            link.rate_ba
        }
    }

    /// The host or switch that owns port `p`.
    #[inline]
    pub fn owner(&self, p: PortId) -> Owner {
        let node = self.ports[p.idx()].node;
        node.checked_sub(self.graph.hosts).map_or(Owner::Host(node), |s| Owner::Switch(SwitchId(s)))
    }

    /// Port `p` with its class queues.
    pub fn port(&self, p: PortId) -> PortView<'_> {
        PortView { port: &self.ports[p.idx()], class: self.queues.of(p), at_host: self.ports[p.idx()].node < self.graph.hosts }
    }

    /// Every port with its class queues, in id order.
    pub fn port_views(&self) -> impl Iterator<Item = PortView<'_>> {
        (0..self.ports.len() as u32).map(|p| self.port(PortId(p)))
    }

    /// Fetches into the cache what sending a packet of the classes `classes` from port `p`
    /// reads: the port's first line, and each class's queue with its counters.
    #[inline(always)]
    pub(crate) fn prefetch_port(&self, p: PortId, classes: std::ops::Range<usize>) {
        crate::core::engine::prefetch(&self.ports[p.idx()]);
        for class in &self.queues.of(p)[classes] {
            crate::core::engine::prefetch(class);
        }
    }

    /// The ports `measure.queue_ports` names, a name with `*` naming every port it matches;
    /// absent: the switch port towards every flow destination (the peer of that host's NIC port;
    /// for a bonded host, switch 0's ports into the bond).
    pub(crate) fn sampled_ports(&self, s: &Scenario) -> Result<Vec<(PortId, String)>, ScenarioError> {
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
                let towards = |d: u32| -> Vec<String> {
                    let Some(b) = self.graph.bonds.iter().find(|b| b.host == d) else {
                        return vec![port_name(&self.graph, &self.ports, self.ports[self.host_ports[d as usize].idx()].peer)];
                    };
                    // A bond's queues are switch 0's ports into it.
                    let into = |p: &Port| p.node == self.graph.hosts && (b.nic + 1..=b.nic + b.ports).contains(&self.ports[p.peer.idx()].node);
                    (0..self.ports.len() as u32).map(PortId).filter(|p| into(&self.ports[p.idx()])).map(|p| port_name(&self.graph, &self.ports, p)).collect()
                };
                dsts.into_iter().flat_map(towards).collect()
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
                return Err(invalid(
                    field,
                    name,
                    "a pattern that matches at least one egress port not already named (`*` matches any characters, e.g. \"s*-s*\")",
                ));
            }
            ports.extend(matched);
        }
        Ok(ports)
    }

    /// Resolves `[switch]` and its `[[switch.ports]]` overrides into the queue settings of every
    /// switch port (`Port::params` indexes the distinct ones); an override that names an unknown
    /// switch or port, or selects no port, is an error naming it.
    pub(crate) fn queue_params(&mut self, s: &Scenario) -> Result<Vec<QueueParams>, ScenarioError> {
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
                    wanted.insert(
                        node.ok_or_else(|| invalid(format!("{at}.switches[{j}]"), name, "the name of a switch (s0, s1, ... or a graph topology's names)"))?,
                    );
                }
                selected.iter_mut().zip(&self.ports).for_each(|(sel, p)| *sel &= wanted.contains(&p.node));
            }
            if !o.ports.is_empty() {
                let mut named = vec![false; self.ports.len()];
                for (j, name) in o.ports.iter().enumerate() {
                    for p in self.ports_named(name, &format!("{at}.ports[{j}]"))? {
                        named[p.idx()] = true;
                    }
                }
                selected.iter_mut().zip(named).for_each(|(sel, n)| *sel &= n);
            }
            if let Some(rate) = o.link_rate {
                selected.iter_mut().zip(&self.ports).for_each(|(sel, p)| *sel &= p.rate == rate);
            }
            let mut any = false;
            for port in self.ports.iter_mut().zip(&selected).filter_map(|(p, &sel)| (sel && p.node >= self.graph.hosts).then_some(p)) {
                // Only what this override gives replaces the port's settings so far.
                let mut q = params[port.params as usize].clone();
                if let Some(e) = &o.ecn {
                    q.ecn = e.marking().map(Red::new);
                }
                q.limit = o.queue_limit.or(q.limit);
                q.alpha = o.alpha.or(q.alpha);
                q.device_queue = o.device_queue.map_or(q.device_queue, u64::from);
                q.pfc = q.pfc.map(|(xoff, xon)| (o.pfc_xoff.map_or(xoff, |b| b.0), o.pfc_xon.map_or(xon, |b| b.0)));
                q.pfc_headroom = o.pfc_headroom.map_or(q.pfc_headroom, |b| b.0);
                if let Some((xoff, xon)) = q.pfc.filter(|&(xoff, xon)| !(xon < xoff && xoff < sw.buffer.0)) {
                    return Err(invalid(
                        format!("{at}.pfc_xoff"),
                        rttlab_cc::Bytes(xoff),
                        format!("need pfc_xon ({}) < pfc_xoff < buffer ({})", rttlab_cc::Bytes(xon), sw.buffer),
                    ));
                }
                port.params = intern(&mut params, q);
                any = true;
            }
            if !any {
                return Err(invalid(at, "no port", "selectors that match at least one switch egress port"));
            }
        }
        // Headroom is reserved for the lossless classes only.
        let classes = (sw.lossless_classes() & ((1u16 << sw.classes) - 1) as u8).count_ones() as u64;
        for port in self.ports.iter_mut() {
            if let Some(s) = port.node.checked_sub(self.graph.hosts).map(SwitchId) {
                // Thresholds given for one rate, as this port's rate makes them.
                if let Some(red) = params[port.params as usize].ecn.and_then(|r| r.scaled_for(port.rate)) {
                    let q = QueueParams { ecn: Some(red), ..params[port.params as usize].clone() };
                    port.params = intern(&mut params, q);
                }
                port.set_queue_params(&params[port.params as usize]);
                // Saturating: a headroom near 2^64 bytes is an error below, not a wrapped sum.
                let sw = &mut self.switches[s.idx()];
                sw.reserved = sw.reserved.saturating_add(port.pfc_headroom.saturating_mul(classes));
            }
        }
        if let Some(s) = self.switches.iter().position(|x| x.reserved >= sw.buffer.0) {
            let reserved = rttlab_cc::Bytes(self.switches[s].reserved);
            return Err(invalid(
                "switch.pfc_headroom",
                reserved,
                format!(
                    "the headroom {} reserves ({reserved} over its ports and classes) must leave shared buffer (buffer = {})",
                    self.graph.node_name(self.switches[s].node),
                    sw.buffer
                ),
            ));
        }
        Ok(params)
    }

    /// The egress port called `name` ("NODE-PEER"); otherwise an error naming `field`.
    pub(crate) fn port_named(&self, name: &str, field: &str) -> Result<PortId, ScenarioError> {
        (0..self.ports.len() as u32).map(PortId).find(|&p| port_name(&self.graph, &self.ports, p) == name).ok_or_else(|| ScenarioError::Invalid {
            field: field.to_string(),
            value: name.to_string(),
            allowed: "an egress port named NODE-PEER of linked nodes, e.g. \"s0-h0\" (hosts h0.., switches s0..)".into(),
        })
    }

    /// The egress ports `name` names: the one named NODE-PEER, or every one a pattern with `*`
    /// matches ("s*-h*": every switch port towards a host); none is an error naming `field`.
    pub(crate) fn ports_named(&self, name: &str, field: &str) -> Result<Vec<PortId>, ScenarioError> {
        if !name.contains('*') {
            return Ok(vec![self.port_named(name, field)?]);
        }
        let matched: Vec<PortId> =
            (0..self.ports.len() as u32).map(PortId).filter(|&p| wildcard_match(name, &port_name(&self.graph, &self.ports, p))).collect();
        if matched.is_empty() {
            return Err(invalid(field, name, "a pattern that matches at least one egress port (`*` matches any characters, e.g. \"s*-h*\")"));
        }
        Ok(matched)
    }

    /// The egress ports a packet of a flow with ECMP hash `hash` crosses from host `src` to
    /// host `dst`: the source NIC's, then each switch's.
    pub fn path(&self, src: u32, dst: u32, hash: u32) -> Vec<PortId> {
        let mut p = self.host_ports[src as usize];
        let mut path = vec![p];
        loop {
            let node = self.ports[self.ports[p.idx()].peer.idx()].node;
            if node == dst || node < self.graph.hosts || path.len() > self.graph.nodes() as usize {
                return path;
            }
            p = self.routing.next_port(SwitchId(node - self.graph.hosts), dst, hash);
            path.push(p);
        }
    }

    /// The FCT of `size` payload bytes from `src` to `dst` with ECMP hash `hash`, alone on
    /// the idle fabric in packets of `mss` payload and `header` more ([`crate::host::flow::ideal_fct`]).
    pub fn ideal_fct(&self, (src, dst, hash): (u32, u32, u32), size: u64, mss: u64, header: u64) -> Time {
        let links: Vec<(Rate, Time)> = self.path(src, dst, hash).iter().map(|&p| (self.nominal_rate(p), self.ports[p.idx()].delay)).collect();
        crate::host::flow::ideal_fct(size, mss, header, &links)
    }

    /// Starts serializing the next packet on port `p` if the port is idle: PFC frames first,
    /// then the classes in strict priority (class 0 first), skipping paused classes. A host port
    /// draws data packets from its NIC's segment queues in the same class order.
    pub(crate) fn try_tx(&mut self, p: PortId, hosts: &mut impl HostPorts, cx: &mut Ctx) {
        let port = &mut self.ports[p.idx()];
        if port.busy(&cx.events, cx.now, cx.seq_now) {
            // Something may be waiting for the port: its completion must happen as an event.
            if !port.done_queued {
                port.done_queued = true;
                cx.events.push_reserved(port.busy_until, port.done_seq, EventKind::TxDone { port: p, pkt: None });
            }
            return;
        }
        // A port whose link is down sends nothing (`fault_edge` starts it again).
        if self.faults.as_ref().is_some_and(|f| f.down(p, cx.now)) {
            return;
        }
        let mut next = None;
        if port.control_queued {
            next = port.control.pop_front(&cx.pkts);
            port.control_queued = !port.control.is_empty();
            let pkt = cx.pkts.get(next.expect("a control packet"));
            if pkt.trimmed() {
                port.trimmed_bytes -= pkt.wire_bytes as u64;
            }
        }
        if next.is_none() {
            for c in 0..cx.cfg.classes {
                if self.ports[p.idx()].paused(c) {
                    continue;
                }
                if let Some(i) = self.queues.at_mut(p, c).queue.pop_front(&cx.pkts) {
                    next = Some(self.dequeued(p, c, i, cx));
                    break;
                }
                if let Owner::Host(h) = self.owner(p) {
                    if let Some(i) = hosts.next_data_packet(h, c, self, cx) {
                        next = Some(i);
                        break;
                    }
                }
            }
        }
        let Some(i) = next else { return };
        if let Some(c) = self.ports[p.idx()].capture() {
            self.capture(c, i, hosts, cx);
        }
        // The completion happens as an event when something waits for the port already; at a
        // host, also when its NIC holds segments or its transport counts the packet's
        // completion (`host_tx_done`).
        let port = &self.ports[p.idx()];
        let (matters, nic_holds) = match self.owner(p) {
            Owner::Switch(_) => (false, false),
            Owner::Host(h) => (hosts.tx_done_matters(i, cx), hosts.nic_holds_segments(h, cx)),
        };
        let queue_completion = matters || nic_holds || port.queue_bytes > 0 || port.control_queued;
        let pkt = cx.pkts.get(i);
        let pfc_frame = matches!(pkt.kind, PacketKind::Pause | PacketKind::Resume);
        let (wire, payload, class) = (pkt.wire_bytes as u64, pkt.payload_bytes as u64, pkt.class as usize);
        let port = &self.ports[p.idx()];
        let done = cx.now + port.rate.serialization(wire);
        let (peer, arrive) = (port.peer, done + port.delay);
        let egress = match port.far_switch() {
            Some(s) if !pfc_frame => self.route(s, pkt, Decided::AtDeparture { arrive }, cx),
            _ => TO_HOST,
        };
        cx.pkts.get_mut(i).egress = egress;
        if !pfc_frame {
            self.queues.at_mut(p, class).sent(wire, payload);
        }
        let port = &mut self.ports[p.idx()];
        port.busy_until = done;
        port.done_seq = cx.events.reserve();
        port.done_queued = queue_completion;
        if queue_completion {
            cx.events.push_reserved(done, port.done_seq, EventKind::TxDone { port: p, pkt: matters.then_some(i) });
        }
        if self.faults.is_some() {
            if let Some(lost) = self.faults_on_the_way(p, i, arrive, cx) {
                // Lost on the way: when it would have arrived, this partition drops it.
                return cx.events.push(arrive, EventKind::Lost { port: p, pkt: i, silent: lost == Lost::Silent });
            }
        }
        let port = &self.ports[p.idx()];
        if let Some(to) = port.crosses_to {
            // To another partition: handed over with its next clock (`crate::parallel`).
            let seq = cx.events.reserve();
            cx.boundary.crossings.push(crate::parallel::boundary::Crossed { arrive, seq, port: peer, pkt: i, done, to });
        } else {
            cx.events.push(arrive, EventKind::Arrive { port: peer, pkt: i });
        }
    }

    /// Packet `i` starts leaving port `p` toward an arrival at `arrive` on a fabric with faults:
    /// whether its link goes down meanwhile or a silent loss draws it, and why: this egress
    /// counts it now, its flow when it would have arrived (`EventKind::Lost`). Out of line: a
    /// run without faults never calls it.
    #[cold]
    #[inline(never)]
    fn faults_on_the_way(&mut self, p: PortId, i: PktId, arrive: Time, cx: &mut Ctx) -> Option<Lost> {
        let pkt = cx.pkts.get(i);
        let pfc_frame = matches!(pkt.kind, PacketKind::Pause | PacketKind::Resume);
        let lost = self.faults.as_mut()?.lost_on_wire(p, cx.now, arrive)?;
        if !pfc_frame {
            self.queues.at_mut(p, pkt.class as usize).counts.count_lost(lost);
        }
        Some(lost)
    }

    /// Bookkeeping for packet `i` leaving class `c` of port `p`'s queue.
    fn dequeued(&mut self, p: PortId, c: usize, i: PktId, cx: &mut Ctx) -> PktId {
        self.queue_changes(p, cx);
        let w = cx.pkts.get(i).wire_bytes as u64;
        let port = &mut self.ports[p.idx()];
        port.queue_bytes -= w;
        let switch = port.node.checked_sub(self.graph.hosts);
        let q = self.queues.at_mut(p, c);
        let queued_before = q.bytes;
        q.bytes -= w;
        q.occupancy_changed(cx.now, -(w as i64), switch.is_none());
        if let Some(s) = switch {
            self.switch_dequeued(SwitchId(s), p, c, i, queued_before, cx);
            self.int_push(p, i, cx);
        }
        i
    }

    /// Queues packet `i` on class `c` of port `p` and starts it if the port is idle.
    pub(crate) fn enqueue(&mut self, p: PortId, c: usize, i: PktId, hosts: &mut impl HostPorts, cx: &mut Ctx) {
        self.queue_changes(p, cx);
        let w = cx.pkts.get(i).wire_bytes as u64;
        let port = &mut self.ports[p.idx()];
        port.queue_bytes += w;
        let at_host = port.node < self.graph.hosts;
        let q = self.queues.at_mut(p, c);
        q.queue.push_back(&mut cx.pkts, i);
        q.bytes += w;
        q.occupancy_changed(cx.now, w as i64, at_host);
        self.try_tx(p, hosts, cx);
    }

    /// Sends a PFC frame for `class` out of port `p`, ahead of any queued data. The port is
    /// started by a `Kick` event rather than directly, because this runs in the middle of
    /// another port's dequeue.
    pub(crate) fn send_pfc(&mut self, p: PortId, class: usize, pause: bool, cx: &mut Ctx) {
        let kind = if pause { PacketKind::Pause } else { PacketKind::Resume };
        let i = cx.pkts.alloc(Packet::new(kind, class as u8, cx.cfg.pfc_frame_bytes as u16));
        let port = &mut self.ports[p.idx()];
        port.control.push_back(&mut cx.pkts, i);
        port.control_queued = true;
        let st = &mut self.queues.at_mut(p, class).counts;
        st.pauses_sent += pause as u64;
        st.resumes_sent += !pause as u64;
        cx.events.push(cx.now, EventKind::Kick(p));
    }

    /// Packet `i` has fully arrived through port `p` at `node` (`arrival_node`; store and
    /// forward): it goes to that switch or host, or, a PFC frame, to the port's own egress.
    pub(crate) fn link_arrive(&mut self, p: PortId, i: PktId, node: u32, hosts: &mut impl HostPorts, cx: &mut Ctx) {
        if matches!(cx.pkts.get(i).kind, PacketKind::Pause | PacketKind::Resume) {
            return self.receive_pfc(p, i, hosts, cx);
        }
        match node.checked_sub(self.graph.hosts) {
            Some(s) => self.switch_receive(SwitchId(s), p, i, hosts, cx),
            None => hosts.arrive(node, i, self, cx),
        }
    }

    /// The node packet `pkt` arrives at through port `p`, read where it can be from what the
    /// arrival reads anyway — the far switch's egress it was routed to as it left
    /// (`try_tx`), or the destination host of a connection's packet that left for a host —
    /// so that without PFC an arrival never reads the port it comes through: at a thousand
    /// hosts that port is a cache miss per hop. The port itself tells otherwise (a PFC
    /// frame, a ping, a switch that chooses its egress, a route lost to a fault).
    #[inline(always)]
    pub(crate) fn arrival_node(&self, p: PortId, pkt: &Packet, switch_chooses: bool) -> u32 {
        let node = if let Some(out) = self.ports.get(pkt.egress.idx()) {
            out.node
        } else if pkt.egress == TO_HOST && !switch_chooses && pkt.kind.of_flow() {
            pkt.dst_host
        } else {
            self.ports[p.idx()].node
        };
        debug_assert_eq!(node, self.ports[p.idx()].node, "{pkt:?} arriving through {p:?}");
        node
    }

    /// PFC frame `i` arrived through port `p`: pause or restart that port's egress class.
    pub(crate) fn receive_pfc(&mut self, p: PortId, i: PktId, hosts: &mut impl HostPorts, cx: &mut Ctx) {
        let pkt = *cx.pkts.get(i);
        cx.pkts.free(i);
        let pause = pkt.kind == PacketKind::Pause;
        let resumed = self.ports[p.idx()].apply_pfc(self.queues.at_mut(p, pkt.class as usize), pkt.class as usize, pause, cx.now);
        cx.measure.record_pfc(cx.now, p, pkt.class, pause);
        if resumed {
            self.try_tx(p, hosts, cx);
        }
    }

    /// Port `p`'s occupancy is about to change: its queue sampler, if any, is credited with
    /// the occupancy that held until now.
    #[inline(always)]
    pub(crate) fn queue_changes(&mut self, p: PortId, cx: &mut Ctx) {
        if let Some(sampler) = self.ports[p.idx()].sampler() {
            cx.measure.samplers[sampler as usize].observe(cx.now, &self.port(p).occupancies()[..cx.cfg.classes]);
        }
    }

    /// Whether `pkt` is a data packet that `Network::lose_once` asked to drop; the fault is
    /// used up.
    fn injected_loss(&mut self, pkt: &Packet) -> bool {
        if self.lose_once.is_empty() || pkt.kind != PacketKind::Data {
            return false;
        }
        let at = self.lose_once.iter().position(|&f| f == (pkt.flow, pkt.seq));
        at.map(|i| self.lose_once.swap_remove(i)).is_some()
    }

    /// Packet `i` is lost to a fault (`lost`): freed, its payload counted as dropped, and a data
    /// packet counted against its flow. (Its egress counted it when it was lost there.)
    pub(crate) fn lose(&mut self, i: PktId, lost: Lost, hosts: &mut impl HostPorts, cx: &mut Ctx) {
        let pkt = *cx.pkts.get(i);
        if matches!(pkt.kind, PacketKind::Pause | PacketKind::Resume) {
            return cx.pkts.free(i);
        }
        cx.measure.lost_payload += pkt.payload_bytes as u64;
        hosts.dropped(&pkt, i, Some(lost), cx);
    }

    /// A fault starts or ends on egress `p` or on the link's other direction now
    /// (`Faults::edges`): the port takes the rate it runs at now; PFC pauses its peer sent
    /// lapse when either direction is down (no frame can lift them, and 802.1Qbb's pause
    /// timers expire); a switch egress going down loses what it holds; one coming up (or
    /// unpaused) starts sending.
    pub(crate) fn fault_edge(&mut self, p: PortId, hosts: &mut impl HostPorts, cx: &mut Ctx) {
        let Some(faults) = &self.faults else { return };
        let (now, peer) = (cx.now, self.ports[p.idx()].peer);
        let (down, peer_down) = (faults.down(p, now), faults.down(peer, now));
        self.ports[p.idx()].rate = faults.rate(p, self.nominal_rate(p), now);
        if down || peer_down {
            self.ports[p.idx()].lift_pauses(self.queues.of_mut(p), now);
        }
        if !down {
            return self.try_tx(p, hosts, cx);
        }
        if let Owner::Switch(_) = self.owner(p) {
            for c in 0..cx.cfg.classes {
                while let Some(i) = self.queues.at_mut(p, c).queue.pop_front(&cx.pkts) {
                    self.dequeued(p, c, i, cx);
                    self.queues.at_mut(p, c).counts.count_lost(Lost::Down);
                    self.lose(i, Lost::Down, hosts, cx);
                }
            }
        }
    }

    /// Fetches into the cache what a packet arriving through port `at` will touch at its
    /// egress: the egress, or where the switch chooses (`routing.mode`), every port it chooses
    /// among; false (and nothing fetched) for a packet arriving at a host, or a PFC frame.
    #[inline(always)]
    pub(crate) fn prefetch_egress(&self, at: PortId, pkt: &Packet, switch_chooses: bool) -> bool {
        if pkt.egress.idx() >= self.ports.len() {
            // Under ECMP an unrouted packet goes to a host: no port to read.
            if !switch_chooses || !pkt.kind.of_flow() {
                return false;
            }
            let Owner::Switch(s) = self.owner(at) else { return false };
            for p in self.routing.choices(s, pkt.dst_host) {
                crate::core::engine::prefetch(&self.ports[p.idx()]);
            }
            return true;
        }
        let c = pkt.class as usize;
        self.prefetch_port(pkt.egress, c..c + 1);
        true
    }

    /// The unloaded round trip from host `src` to `dst` on ECMP hashes `hash`: a full data
    /// packet's serialization and propagation on each link there, an ACK's on the way back.
    pub(crate) fn base_rtt(&self, src: u32, dst: u32, hash: [u32; 2], cfg: &RunConfig) -> Time {
        let data = (cfg.payload_per_packet + cfg.header_bytes) as u64;
        let leg =
            |a, b, h, bytes| self.path(a, b, h).iter().fold(Time::ZERO, |t, &p| t + self.nominal_rate(p).serialization(bytes) + self.ports[p.idx()].delay);
        leg(src, dst, hash[0], data) + leg(dst, src, hash[1], cfg.ack_bytes as u64)
    }

    /// The largest unloaded round trip between any two hosts (HPCC's `T`, the HPCC simulator's
    /// `GLOBAL_T`).
    pub(crate) fn max_base_rtt(&self, cfg: &RunConfig) -> Time {
        let hosts = self.graph.hosts;
        (0..hosts)
            .flat_map(|a| (0..hosts).filter(move |&b| b != a).map(move |b| (a, b)))
            .map(|(a, b)| self.base_rtt(a, b, [0, 0], cfg))
            .max()
            .unwrap_or(Time::ZERO)
    }

    /// Packet `i` starts leaving a captured port: capture `c` records it.
    #[cold]
    pub(crate) fn capture(&self, c: u32, i: PktId, hosts: &impl HostPorts, cx: &mut Ctx) {
        let pkt = cx.pkts.get(i);
        let ends = hosts.endpoints(pkt, cx);
        cx.measure.captures[c as usize].record(cx.now, pkt, ends);
    }
}

/// A packet's egress where faults leave its switch no route to its destination.
pub(crate) const NO_ROUTE: PortId = PortId(u32::MAX - 1);
/// `Packet::egress` of a packet leaving for a host (or unrouted: a PFC frame, or where the far
/// switch chooses as it arrives).
pub(crate) const TO_HOST: PortId = PortId(u32::MAX);

/// Whether `name` matches `pattern`, where `*` stands for any run of characters: the text
/// before the first `*` starts it, the text after the last ends it, and the pieces between
/// occur in order in what is left.
pub(crate) fn wildcard_match(pattern: &str, name: &str) -> bool {
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
