//! A host's connections over their life: opening one (its transport and controller, its
//! 5-tuple and ideal FCT), its packets counted alive, what it delivers and the RTT samples it
//! takes, finishing, and for workload flows retiring its slot.

use super::Hosts;
use crate::core::engine::{rng_stream, splitmix64, Stream};
use crate::core::engine::{EventKind, DROPPED_SERIAL};
use crate::core::ids::FlowId;
use crate::core::ids::PktId;
use crate::core::packet::Lost;
use crate::core::packet::{Packet, PacketKind};
use crate::ctx::Ctx;
use crate::fabric::routing::five_tuple_hash;
use crate::fabric::Fabric;
use crate::host::flow::{Feed, Flow, FlowSpec, FlowStats, FlowsDone, Inbox, Rx, RxEnd, Tx, ROCEV2_PORT, TCP_PORT};
use crate::parallel::boundary::Outgoing;
use crate::scenario::{CcConfig, Recovery, TransportConfig};
use crate::transport::credit::Credit;
use crate::transport::feedback::SampleFilter;
use crate::transport::message::{HostWait, MessageRx, MessageTx};
use crate::transport::path::PathChooser;
use crate::transport::window::{WindowRx, WindowTx};
use rttlab_cc::{Bytes, Controller, Path, Rate, Time};

/// Ultra Ethernet's retransmission timeout without `transport.rto`: 15 µs plus six drains of a
/// switch's data queue at the sender's `line_rate` (htsim `main_uec.cpp`); the queue is
/// `switch.queue_limit`, or one BDP at the fabric's largest unloaded RTT (htsim's queue with
/// trimming) without one.
fn uet_rto(line_rate: Rate, cx: &Ctx) -> Time {
    let drain = cx.cfg.queue_params[0].limit.map_or(cx.cfg.max_base_rtt, |l| line_rate.serialization(l.bytes(cx.cfg.mtu())));
    Time::from_us(15) + Time(drain.ps() * 6)
}

/// Ultra Ethernet's credit window without `transport.credit_window`: 1.5 BDP at the sender's
/// `line_rate` and the fabric's largest unloaded RTT (htsim `UecSrc::initRccc`).
pub(crate) fn credit_window(line_rate: Rate, cx: &Ctx) -> Bytes {
    Bytes((line_rate.bps() as u128 * cx.cfg.max_base_rtt.ps() as u128 * 3 / (2 * 8 * 1_000_000_000_000)) as u64)
}

/// A transfer that arrived whole (`Hosts::arrived_whole`): its traffic group, ends, bytes,
/// start, FCT alone on the idle network, longest outage, and whether the run waits for it.
pub(crate) struct Whole {
    pub group: u16,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: Time,
    pub ideal: Time,
    pub outage: Time,
    pub waited_for: bool,
}

impl Hosts {
    /// The transport of a new connection's two ends as its configuration `conn` gives them
    /// (`RunConfig::conns`: a job's own, else `[cc]` and `[transport]`'s; validation guarantees
    /// the controller fits the transport and the run).
    fn make_transport(&mut self, conn: u16, line_rate: Rate, base_rtt: Time, spec: &mut FlowSpec, cx: &Ctx) -> (Tx, Rx) {
        let conn = &cx.cfg.conns[conn as usize];
        let window = conn.transport.is_window();
        let mss = if window { spec.packet_bytes(cx.cfg.payload_per_packet as u64) } else { cx.cfg.payload_per_packet as u64 };
        let filter = SampleFilter::new(conn.median_of);
        let segment_bytes = if window { mss } else { cx.cfg.segment_bytes };
        let path = Path { line_rate, mss, segment_bytes, base_rtt, max_base_rtt: cx.cfg.max_base_rtt };
        let controller = match &conn.cc {
            CcConfig::Native(cc) => cc.build(&path),
            CcConfig::Python(_) => {
                let external = self.external.as_mut().expect("checked by Network::with_controllers");
                if window {
                    Controller::Window(external.window(mss))
                } else {
                    Controller::Rate(external.rate(line_rate))
                }
            }
        };
        match (&conn.transport, controller) {
            (TransportConfig::Window(w), Controller::Window(cc)) => {
                let report_acks = conn.path.counts_rounds();
                let mut w = w.clone();
                if let Some(u) = w.uet.as_mut() {
                    u.rto.get_or_insert_with(|| uet_rto(line_rate, cx));
                    u.credit_window.get_or_insert_with(|| credit_window(line_rate, cx));
                }
                let mut tx = WindowTx::new(cc, w.clone(), mss as u32, spec.size, (spec.start, spec.stop), spec.onoff.take(), (filter, report_acks));
                if spec.feed.is_some() {
                    tx = tx.carrying_messages();
                }
                if let (CcConfig::Native(cc), 2..) = (&conn.cc, w.subflows) {
                    let window = |c| match c {
                        Controller::Window(c) => c,
                        Controller::Rate(_) => unreachable!("validated: a window controller"),
                    };
                    tx = tx.with_subflows((1..w.subflows).map(|_| window(cc.build(&path))));
                }
                if let Some(u) = w.uet.as_ref().filter(|u| u.congestion.credits()) {
                    let window = u.credit_window.expect("filled in above").0;
                    let header = cx.cfg.header_bytes;
                    tx = tx.with_credit(Credit::new(window, (mss as u32 + header, header), cx.cfg.max_base_rtt), u.congestion.sender_window());
                }
                (Tx::Window(tx), Rx::Window(WindowRx::new(&w)))
            }
            (TransportConfig::Message { .. }, Controller::Rate(cc)) => {
                let selective = cx.cfg.recovery == Recovery::SelectiveRepeat;
                let wait = HostWait::new(cx.cfg.warmup, line_rate);
                let tx = MessageTx::new(cc, spec.size, spec.app.take(), spec.feed.is_some(), (spec.start, spec.stop), wait, (filter, selective));
                (Tx::Message(tx), Rx::Message(MessageRx::new(selective)))
            }
            _ => unreachable!("validated: the controller fits the transport"),
        }
    }

    /// What a connection started by `origin` runs (`RunConfig::conns`): its job's own, else
    /// the run's (0). Looked up, not kept in the connection: its ends read it only for a marked
    /// packet (CNP pacing) and where a signal reads queues.
    pub(crate) fn conn_of(&self, origin: Option<crate::host::flow::Origin>) -> u16 {
        origin.map_or(0, |o| self.generators[o.generator as usize].conn)
    }

    /// Opens a connection in a free slot of its sender's (or a new one) and returns its id.
    /// The 5-tuple's source port is an ephemeral port (49152–65535) drawn from the seed, the
    /// sender and the connection's serial number at the sender, so ECMP paths change with
    /// the seed.
    pub(crate) fn open_flow(&mut self, mut spec: FlowSpec, fabric: &mut Fabric, cx: &mut Ctx) -> u32 {
        let serial = self.flows.slots.next_serial(spec.src);
        let mut rng = rng_stream(cx.cfg.seed, Stream::Flow(spec.src, serial));
        spec.start += Time(rand::Rng::random_range(&mut rng, 0..=spec.start_jitter.ps()));
        if let Some(app) = &mut spec.app {
            app.next_message = spec.start;
        }
        if let Some(onoff) = &mut spec.onoff {
            onoff.start = spec.start;
        }
        let sport = 49152 + (splitmix64(cx.cfg.seed ^ ((spec.src as u64) << 32 | serial as u64) ^ 0x5eed_f10f) % 16384) as u16;
        // A job's own transport and controller (`jobs.transport`, `jobs.cc`), else the run's.
        let conn = self.conn_of(spec.ephemeral);
        let transport = &cx.cfg.conns[conn as usize].transport;
        let dport = if transport.is_window() { TCP_PORT } else { ROCEV2_PORT };
        let hash = [five_tuple_hash(cx.cfg.seed, spec.src, spec.dst, sport, dport), five_tuple_hash(cx.cfg.seed, spec.dst, spec.src, dport, sport)];
        let mss = spec.packet_bytes(cx.cfg.payload_per_packet as u64);
        let ideal = spec.size.map_or(Time::ZERO, |size| fabric.ideal_fct((spec.src, spec.dst, hash[0]), size, mss, cx.cfg.header_bytes as u64));
        let base_rtt = if cx.cfg.int.is_some() { fabric.base_rtt(spec.src, spec.dst, hash, &cx.cfg) } else { Time::ZERO };
        let line_rate = self.nodes[spec.src as usize].line_rate;
        let (tx, rx) = self.make_transport(conn, line_rate, base_rtt, &mut spec, cx);
        // A connection carrying a generator's transfers counts them as they start
        // (`transfer_message`).
        let carries_transfers = matches!(spec.feed, Some(Feed::Transfers { .. }));
        if spec.start >= cx.cfg.warmup && !carries_transfers {
            let sized = spec.size.filter(|_| spec.start < cx.cfg.fct_until);
            cx.measure.groups[spec.group as usize].record_start(&cx.measure.fct_buckets, sized);
            if let Some(done) = self.flows.done.as_mut().filter(|_| sized.is_some() && spec.ephemeral.is_some() && cx.cfg.fct_until != Time::MAX) {
                done.counted += 1;
            }
        }
        let rx_end = RxEnd {
            serial,
            src: spec.src,
            dst: spec.dst,
            start: spec.start,
            group: spec.group,
            ephemeral: spec.ephemeral,
            ideal,
            hash: hash[1],
            prr: cx.cfg.conns[conn as usize].path.prr,
            closed: false,
            high_seq: 0,
            echo_entropy: 0,
            rx,
            stats: FlowStats { size: spec.size, ..Default::default() },
            int_echo: None,
            messages: spec.feed.map(|feed| Box::new(Inbox { queue: Default::default(), feed, outage: Time::ZERO })),
            next: None,
        };
        let flow = Flow {
            serial,
            src: spec.src,
            dst: spec.dst,
            class: spec.class,
            start: spec.start,
            stop: spec.stop,
            hash,
            // PLB's pause draws from the connection's own seed, so its stream is the same with
            // PLB or without.
            path: PathChooser::new(&cx.cfg.conns[conn as usize].path, (hash[0] as u64) << 32 | serial as u64),
            group: spec.group,
            ephemeral: spec.ephemeral,
            open: true,
            ideal,
            base_rtt,
            offered: spec.feed.map(|_| 0),
            unacked_messages: carries_transfers.then(Box::default),
            order: u32::MAX,
            rng,
            stats: FlowStats { size: spec.size, ..Default::default() },
            tx,
        };
        let f = self.flows.slots.insert(flow);
        match cx.foreign(spec.dst) {
            true => cx.boundary.outbox.push((spec.dst, Outgoing::RxEnd(f, Box::new(rx_end)))),
            false => self.flows.install_rx(f, rx_end),
        }
        f
    }

    /// The sender of flow `f` has everything acknowledged. A workload flow is retired: its
    /// generator's source has one flow less outstanding, its counters join the totals and its
    /// slot is free for the host's next connection. Its packets still in the network (copies
    /// sent again, their ACKs) and its timer events are stale from then on: they carry the
    /// serial number of a connection no longer in the slot. Its receiver hears of it one
    /// notice delay later (`receiver_closed`), before any later connection of the slot can
    /// reach its own receiver, so that whether it answers a late copy does not depend on where
    /// that one is.
    pub(crate) fn sender_done(&mut self, f: u32, fabric: &mut Fabric, cx: &mut Ctx) {
        let flow = &mut self.flows.slots[f];
        let Some(origin) = flow.ephemeral.filter(|_| flow.open) else { return };
        flow.open = false;
        cx.notify(flow.dst, EventKind::Closed { flow: FlowId(f), serial: flow.serial });
        self.flows.retired.absorb(&flow.stats);
        self.flows.retired_count += 1;
        self.flows.slots.free(f);
        self.transfer_done(origin, false, fabric, cx);
    }

    /// Allocates a data or ACK packet of its flow.
    pub(crate) fn alloc_packet(&mut self, p: Packet, cx: &mut Ctx) -> PktId {
        cx.measure.data_sent += (p.kind == crate::core::packet::PacketKind::Data) as u64;
        cx.pkts.alloc(p)
    }

    /// Receiver side of either transport: `payload` new bytes of flow `f` arrived.
    pub(crate) fn record_delivery(&mut self, f: u32, payload: u32, wire: u32, fabric: &mut Fabric, cx: &mut Ctx) {
        let now = cx.now;
        let end = &mut self.flows.rx[f];
        let st = &mut end.stats;
        st.delivered_bytes += payload as u64;
        let gap = now - st.last_delivery.max(end.start);
        st.outage = st.outage.max(gap);
        st.last_delivery = now;
        if now >= cx.cfg.warmup {
            st.measured_bytes += payload as u64;
            st.measured_wire_bytes += wire as u64;
            cx.measure.groups[end.group as usize].delivered_bytes += payload as u64;
        }
        if st.size == Some(st.delivered_bytes) {
            st.finish = Some(now);
            let (size, outage) = (st.delivered_bytes, st.outage);
            // A matrix's or job's transfer is waited for as a `[[flows]]` connection is.
            let waited_for = end.ephemeral.is_none_or(|o| self.generators[o.generator as usize].transfers() > 0);
            let whole = Whole { group: end.group, src: end.src, dst: end.dst, size, start: end.start, ideal: end.ideal, outage, waited_for };
            let origin = end.ephemeral;
            self.arrived_whole(whole, cx);
            if let Some(origin) = origin {
                return self.transfer_done(origin, true, fabric, cx);
            }
        }
        let end = &mut self.flows.rx[f];
        if end.messages.is_none() {
            return;
        }
        let in_order = end.in_order();
        let inbox = end.messages.as_mut().expect("checked above");
        inbox.outage = inbox.outage.max(gap);
        if inbox.queue.front().is_some_and(|m| m.end <= in_order) {
            self.messages_delivered(f, fabric, cx);
        }
    }

    /// Transfer `w` arrived whole now (a sized connection, or a job's transfer on its
    /// persistent connection): the end of a run that waits for it, and its FCT when counted.
    pub(crate) fn arrived_whole(&mut self, w: Whole, cx: &mut Ctx) {
        let now = cx.now;
        let counted = w.start >= cx.cfg.warmup && w.start < cx.cfg.fct_until;
        if let Some(done) = &mut self.flows.done {
            done.finish(now, !w.waited_for, counted, cx.cfg.fct_until);
            // On one partition the counts are the whole run's, and any finished flow may
            // be the one that ends it (a cut network adds up the partitions' counts,
            // `crate::parallel::Horizon`).
            if cx.boundary.part.is_none() {
                if let Some(t) = FlowsDone::end([*done], cx.cfg.fct_until, cx.cfg.warmup, cx.notice_delay) {
                    cx.end = t.min(cx.end);
                }
            }
        }
        if counted {
            let fct = now - w.start;
            cx.measure.groups[w.group as usize].record_fct(&cx.measure.fct_buckets, w.size, fct, w.ideal);
            if let Some(r) = &mut cx.measure.flow_records {
                let (group, src, dst, size, start, ideal, outage) = (w.group, w.src, w.dst, w.size, w.start, w.ideal, w.outage);
                r.push(crate::report::stats::FlowRecord { group, src, dst, size, start, fct, ideal, outage });
            }
        }
    }

    /// Sender side of either transport: flow `f`'s measured RTT `rtt` as its stack sees it
    /// (`RttNoise`, drawn from the sending host's stream).
    pub(crate) fn noisy_rtt(&mut self, f: u32, rtt: Time, cx: &mut Ctx) -> Time {
        cx.cfg.rtt_noise.apply(rtt, &mut self.nodes[self.flows.slots[f].src as usize].rng)
    }

    /// Sender side of either transport: an RTT sample of flow `f`, counted after the warm-up.
    pub(crate) fn record_rtt(&mut self, f: u32, rtt: Time, cx: &mut Ctx) {
        let st = &mut self.flows.slots[f].stats;
        st.interval_rtt_sum += rtt.ps() as u128;
        st.interval_rtt_samples += 1;
        if cx.now >= cx.cfg.warmup {
            st.rtt_sum += rtt.ps() as u128;
            st.rtt_samples += 1;
            cx.measure.rtt_hist.record(crate::report::stats::ns(rtt)).expect("auto-resizing histogram");
        }
    }

    /// A packet was dropped, for want of buffer or to a fault (`lost`): a data packet counts
    /// against the loss rate, and against its flow when its sender hears of it
    /// (`EventKind::Dropped`).
    pub(crate) fn count_drop(&mut self, pkt: &Packet, lost: Option<Lost>, cx: &mut Ctx) {
        if pkt.kind == PacketKind::Data {
            cx.measure.data_drops += 1;
            cx.measure.drop_notices += 1;
            let h = self.flows.slots.host_of(pkt.flow);
            cx.notify(h, EventKind::Dropped { flow: FlowId(pkt.flow), serial: pkt.serial, lost });
        }
    }

    /// Flow `f`'s data packet of connection `serial` (its low bits, `DROPPED_SERIAL`) was
    /// dropped: it counts against the connection if it is still in the slot, else against
    /// the retired ones.
    /// The sender of flow `f`'s connection `serial` is done (`sender_done`): its receiving end,
    /// still in the slot, answers none of its packets from now.
    pub(crate) fn receiver_closed(&mut self, f: u32, serial: u32) {
        let end = &mut self.flows.rx[f];
        end.closed |= end.serial == serial;
    }

    pub(crate) fn dropped_notice(&mut self, f: u32, serial: u32, lost: Option<Lost>, cx: &mut Ctx) {
        cx.measure.drop_notices -= 1;
        let st = if self.flows.sending(f, serial, DROPPED_SERIAL) { &mut self.flows.slots[f].stats } else { &mut self.flows.retired };
        st.drops += 1;
        st.drops_down += (lost == Some(Lost::Down)) as u64;
        st.drops_silent += (lost == Some(Lost::Silent)) as u64;
    }
}
