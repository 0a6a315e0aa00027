//! The hosts: their NICs (the message transport's scheduler and segmenter, the receive queue
//! and stack), their connections with the transports that move them ([`crate::transport`]'s
//! state machines, fed and carried out here), and the workloads' applications. The hosts
//! reach the fabric ([`crate::fabric`]) only through their own NIC ports: a packet into a port's
//! queue, a port started, a NIC's held bytes counted in its port's queue.
//!
//! - `nic`: the hosts' NICs and stacks;
//! - `transport`: the transports' state machines driven and their actions carried out;
//! - `flow`: a connection's state, its two ends, and the table of them all;
//! - `connections`: connections opened, counted, finished and retired;
//! - `apps`: the workloads' RPCs, flows, incasts and pings;
//! - `telemetry`: INT records echoed by receivers and read by senders.

mod apps;
mod connections;
pub mod flow;
pub mod nic;
mod telemetry;
pub mod timestamps;
mod transport;

use crate::core::engine::Timer;
use crate::core::engine::{rng_stream, EventKind, Stream};
use crate::core::external::Controllers;
use crate::core::ids::FlowId;
use crate::core::ids::PktId;
use crate::core::packet::{Packet, PacketKind};
use crate::ctx::Ctx;
use crate::fabric::{Fabric, HostPorts};
use crate::host::flow::{FlowSpec, FlowTable, Tx};
use crate::report::capture::Endpoints;
use crate::scenario::{Arrivals, Scenario, TransportConfig, Until};
use crate::transport::message::App;
use crate::transport::onoff::OnOff;
use crate::transport::window::Action;
use crate::workload::Generator;
use nic::Host;
use rttlab_cc::Time;

/// Every host's NIC and stack, every connection, and the workloads' generators.
pub(crate) struct Hosts {
    pub nodes: Vec<Host>,
    pub flows: FlowTable,
    pub generators: Vec<Generator>,
    /// The window transport's action buffer, reused by every step (`transport`).
    pub(crate) window_actions: Vec<Action>,
    /// The workloads' acts, reused by every event (`apps`).
    pub(crate) workload_acts: Vec<crate::workload::act::Act>,
    /// Builds `cc.algorithm = "python"`'s controllers ([`crate::core::external`]).
    pub(crate) external: Option<Box<dyn Controllers>>,
}

impl Hosts {
    /// Each host on its NIC port of the fabric, with its random stream; the workloads'
    /// generators.
    pub fn new(s: &Scenario, fabric: &Fabric, generators: Vec<Generator>, external: Option<Box<dyn Controllers>>) -> Hosts {
        let nodes = (0..fabric.graph.hosts)
            .map(|h| {
                let p = fabric.host_ports[h as usize];
                Host::new(h, p, fabric.ports[p.idx()].rate, rng_stream(s.seed, Stream::Host(h)))
            })
            .collect();
        Hosts { nodes, flows: FlowTable::new(fabric.graph.hosts), generators, window_actions: Vec::new(), workload_acts: Vec::new(), external }
    }

    /// Lets connection `f` send from its start: a message flow joins its host's scheduler, a
    /// window flow sends its first window (at once, or by a timer at its start).
    pub(crate) fn start_flow(&mut self, f: u32, fabric: &mut Fabric, cx: &mut Ctx) {
        let start = self.flows.slots[f].start;
        match &self.flows.slots[f].tx {
            Tx::Message(_) => self.schedule_flow(f, cx),
            Tx::Window(_) if start <= cx.now => self.window_send(f, fabric, cx),
            Tx::Window(_) => {
                let serial = self.flows.slots[f].serial & transport::TIMER_SERIAL;
                cx.events.push(start, EventKind::Timer { flow: FlowId(f), timer: Timer::Start, serial })
            }
        }
    }

    /// Opens and starts every `[[flows]]` connection.
    pub(crate) fn open_flow_groups(&mut self, s: &Scenario, fabric: &mut Fabric, cx: &mut Ctx) {
        // One context for every group: a graph's host names are looked up in one map.
        let ctx = s.context();
        let mut order = 0;
        for (gi, g) in s.flows.iter().enumerate() {
            let sources = ctx.host_set("", Some(&g.src)).expect("validated");
            let dsts = ctx.host_set("", Some(&g.dst)).expect("validated");
            for (i, &h) in sources.iter().enumerate() {
                let dst = dsts[i.min(dsts.len() - 1)];
                let start = Time(g.start.ps() + g.start_step.ps() * i as u64);
                for _ in 0..g.connections {
                    order += 1;
                    // A partition opens its own hosts' connections (`crate::parallel`), each
                    // host's events ranking as its own.
                    if cx.foreign(h) {
                        continue;
                    }
                    cx.events.set_origin(h + 1);
                    let onoff = match (&s.transport, g.rate) {
                        (TransportConfig::Window(w), Some(rate)) => {
                            Some(OnOff::new(rate, g.on.unwrap_or_default(), g.off, start, g.send_buffer.unwrap_or(w.send_buffer).0))
                        }
                        _ => None,
                    };
                    let app = g.rate.filter(|_| onoff.is_none()).map(|rate| App {
                        rate,
                        message: g.message.unwrap_or(s.nic.segment()).0,
                        poisson: g.arrivals == Arrivals::Poisson,
                        next_message: start,
                    });
                    let (start_jitter, stop) = (g.start_jitter, g.stop.unwrap_or(Time::MAX));
                    let spec = FlowSpec {
                        src: h,
                        dst,
                        class: g.class,
                        group: gi as u16,
                        start,
                        start_jitter,
                        stop,
                        size: g.size.map(|b| b.0),
                        write: g.write.map(|b| b.0),
                        app,
                        onoff,
                        ephemeral: None,
                        feed: None,
                    };
                    let f = self.open_flow(spec, fabric, cx);
                    self.flows.slots[f].order = order - 1;
                    self.start_flow(f, fabric, cx);
                    cx.events.set_origin(0);
                }
            }
        }
        // Every connection so far is a `[[flows]]` one; a run that ends with its flows waits
        // for every transfer of its matrices and jobs as for them.
        let transfers: usize = self.generators.iter().map(|g| g.transfers()).sum();
        self.flows.done =
            (s.until == Until::FlowsDone).then_some(crate::host::flow::FlowsDone { total: order as u64 + transfers as u64, ..Default::default() });
    }
}

impl HostPorts for Hosts {
    fn next_data_packet(&mut self, h: u32, c: usize, fabric: &mut Fabric, cx: &mut Ctx) -> Option<PktId> {
        Hosts::next_data_packet(self, h, c, fabric, cx)
    }

    fn tx_done_matters(&self, i: PktId, cx: &Ctx) -> bool {
        Hosts::tx_done_matters(self, i, cx)
    }

    fn nic_holds_segments(&self, h: u32, cx: &Ctx) -> bool {
        self.nodes[h as usize].nic[..cx.cfg.classes].iter().any(|q| !q.is_empty())
    }

    fn arrive(&mut self, h: u32, i: PktId, fabric: &mut Fabric, cx: &mut Ctx) {
        self.host_arrive(h, i, fabric, cx)
    }

    fn dropped(&mut self, pkt: &Packet, i: PktId, lost: Option<crate::core::packet::Lost>, cx: &mut Ctx) {
        self.count_drop(pkt, lost, cx);
        match pkt.kind {
            PacketKind::Ping | PacketKind::Pong => {
                let source = self.generators[pkt.seq as usize].sources[pkt.flow as usize];
                cx.notify(source, EventKind::PingLost { generator: pkt.seq, source: pkt.flow });
                cx.pkts.free(i);
            }
            _ => cx.pkts.free(i),
        }
    }

    fn endpoints(&self, pkt: &Packet, cx: &Ctx) -> Endpoints {
        match pkt.kind {
            k if k.of_flow() => {
                let sender = self.flows.slots.host_of(pkt.flow);
                let receiver = self.flows.rx.get(pkt.flow).map_or(pkt.dst_host, |e| e.dst);
                let (src, dst) = if pkt.kind == PacketKind::Data { (sender, pkt.dst_host) } else { (receiver, sender) };
                let message = !pkt.window();
                Endpoints {
                    src: Some(src),
                    dst,
                    flow: pkt.flow,
                    message,
                    payload_per_packet: cx.cfg.payload_per_packet,
                    first_of_segment: pkt.first_of_segment(),
                }
            }
            PacketKind::Ping => {
                let src = self.generators[pkt.seq as usize].sources[pkt.flow as usize];
                Endpoints { src: Some(src), dst: pkt.dst_host, flow: pkt.flow, message: false, payload_per_packet: 0, first_of_segment: false }
            }
            _ => Endpoints { src: None, dst: pkt.dst_host, flow: pkt.flow, message: false, payload_per_packet: 0, first_of_segment: false },
        }
    }
}
