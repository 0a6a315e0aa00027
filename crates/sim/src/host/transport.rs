//! The network side of the transports: hands a connection's state machine its packets, timer
//! events and the time, and carries out what it asks. For the window transport: the actions it
//! returns — packets into the host's port queues, timer events into the event queue, RTT
//! samples and deliveries into the measurements — in the order it returned them. For the
//! message transport: the receiving NIC's ACK or NAK, the completions' RTT samples, and
//! go-back-N's rewinds and timeout (its segments are released by the host's scheduler,
//! [`crate::host::nic`]).

use super::Hosts;
use crate::core::engine::Timer;
use crate::core::engine::{Event, EventKind};
use crate::core::ids::HostId;
use crate::core::ids::{FlowId, PktId};
use crate::core::packet::{IntStack, Packet, PacketKind, FLAG_CREDIT, FLAG_LAST, FLAG_RETRANSMIT, FLAG_TRIMMED, FLAG_TRIMMED_LAST_HOP, FLAG_WINDOW};
use crate::ctx::Ctx;
use crate::fabric::routing::labelled_hash;
use crate::fabric::Fabric;
use crate::host::flow::{Rx, RxEnd, Slots, Tx};
use crate::host::timestamps::RttNoise;
use crate::scenario::RatePacing;
use crate::transport::credit::{Arrivals, Oversubscribed, PullPacer, Sink, Sinks};
use crate::transport::message::{completion_rtt, Arrival};
use crate::transport::path::Returned;
use crate::transport::window::{AckHdr, Action, DataHdr, WindowRx, WindowTx};
use rand::Rng as _;
use rttlab_cc::Time;

/// The bits of a connection's serial number its timer events carry (`EventKind::Timer`).
pub(crate) const TIMER_SERIAL: u32 = u32::MAX >> 3;

impl Hosts {
    /// Runs `step` on window flow `f`'s sending end with the network's action buffer, then
    /// applies the actions. The buffer is reused, so a step allocates nothing.
    fn window_step(
        &mut self,
        f: u32,
        step: impl FnOnce(&mut WindowTx, &mut crate::core::engine::Rng, &RttNoise, &mut Vec<Action>),
        fabric: &mut Fabric,
        cx: &mut Ctx,
    ) {
        let mut out = std::mem::take(&mut self.window_actions);
        let flow = &mut self.flows.slots[f];
        let Tx::Window(w) = &mut flow.tx else { unreachable!("a window-transport path reached a message flow") };
        step(w, &mut self.nodes[flow.src as usize].rng, &cx.cfg.rtt_noise, &mut out);
        self.apply_all(f, out, fabric, cx);
    }

    /// `window_step` for the flow's receiving end.
    fn window_rx_step(&mut self, f: u32, step: impl FnOnce(&mut WindowRx, &mut Vec<Action>), fabric: &mut Fabric, cx: &mut Ctx) {
        let mut out = std::mem::take(&mut self.window_actions);
        let Rx::Window(w) = &mut self.flows.rx[f].rx else { unreachable!("a window-transport path reached a message flow") };
        step(w, &mut out);
        self.apply_all(f, out, fabric, cx);
    }

    /// Applies a step's actions in order and gives the buffer back.
    fn apply_all(&mut self, f: u32, mut out: Vec<Action>, fabric: &mut Fabric, cx: &mut Ctx) {
        for a in out.drain(..) {
            self.apply(f, a, fabric, cx);
        }
        self.window_actions = out;
    }

    /// Carries out one action of flow `f`'s sending end, or its receiving end's (`Ack`,
    /// `Delivered`, `Duplicate`, the delayed ACK's timer): each end touches only its own record.
    fn apply(&mut self, f: u32, a: Action, fabric: &mut Fabric, cx: &mut Ctx) {
        match a {
            Action::Data { seq, payload, retransmit, ack_now, pull_target, subflow } => {
                let flow = &mut self.flows.slots[f];
                let serial = flow.serial;
                flow.stats.retransmits += retransmit as u64;
                flow.stats.retransmitted_bytes += retransmit as u64 * payload as u64;
                flow.stats.tx_bytes += payload as u64;
                let (class, port) = (flow.class, self.nodes[flow.src as usize].port);
                let (hash, entropy) = flow.path.next(flow.hash[0], subflow, &mut flow.rng);
                let pkt = Packet {
                    // Ultra Ethernet's ACK request rides where a message's last packet says so.
                    flags: FLAG_WINDOW | if retransmit { FLAG_RETRANSMIT } else { 0 } | if ack_now { FLAG_LAST } else { 0 },
                    flow: f,
                    serial,
                    dst_host: flow.dst,
                    hash,
                    entropy,
                    payload_bytes: payload as u16,
                    seq,
                    sack: Packet::credit_words(pull_target),
                    t_send: cx.now,
                    ..Packet::new(PacketKind::Data, class, (payload + cx.cfg.header_bytes) as u16)
                };
                let i = self.alloc_packet(pkt, cx);
                fabric.enqueue(port, class as usize, i, self, cx);
            }
            Action::Ack(h) => {
                let end = &self.flows.rx[f];
                let port = self.nodes[end.dst as usize].port;
                let pkt = Packet {
                    flags: FLAG_WINDOW,
                    ecn: h.ece,
                    echo_hops: h.hops,
                    remote_queuing_ns: h.remote_queuing_ns,
                    flow: f,
                    serial: end.serial,
                    dst_host: end.src,
                    // REPS: the ACK rides the entropy it echoes, so ACKs spread as the data does.
                    hash: labelled_hash(end.hash, end.echo_entropy as u32),
                    entropy: end.echo_entropy,
                    seq: h.ack,
                    sack: h.sack,
                    t_send: h.ts,
                    ..Packet::new(PacketKind::Ack, cx.cfg.ack_class as u8, cx.cfg.ack_bytes as u16)
                };
                let i = self.alloc_packet(pkt, cx);
                cx.pkts.get_mut(i).wire_bytes += self.int_echo_into(f, i, cx) as u16;
                fabric.enqueue(port, cx.cfg.ack_class, i, self, cx);
            }
            Action::Nack { seq, last_hop, ts } => {
                let end = &self.flows.rx[f];
                let port = self.nodes[end.dst as usize].port;
                let pkt = Packet {
                    flags: FLAG_WINDOW | if last_hop { FLAG_TRIMMED_LAST_HOP } else { 0 },
                    flow: f,
                    serial: end.serial,
                    dst_host: end.src,
                    hash: labelled_hash(end.hash, end.echo_entropy as u32),
                    entropy: end.echo_entropy,
                    seq,
                    t_send: ts,
                    ..Packet::new(PacketKind::Nak, cx.cfg.ack_class as u8, cx.cfg.ack_bytes as u16)
                };
                let i = self.alloc_packet(pkt, cx);
                fabric.enqueue(port, cx.cfg.ack_class, i, self, cx);
            }
            Action::RequestToSend { pull_target } => {
                let flow = &self.flows.slots[f];
                let pkt = Packet {
                    flags: FLAG_WINDOW | FLAG_CREDIT,
                    flow: f,
                    serial: flow.serial,
                    dst_host: flow.dst,
                    hash: flow.hash[0],
                    sack: Packet::credit_words(pull_target),
                    t_send: cx.now,
                    ..Packet::new(PacketKind::Data, cx.cfg.ack_class as u8, cx.cfg.ack_bytes as u16)
                };
                let port = self.nodes[flow.src as usize].port;
                let i = self.alloc_packet(pkt, cx);
                fabric.enqueue(port, cx.cfg.ack_class, i, self, cx);
            }
            Action::RequestPull => self.request_pull(f, cx),
            Action::Timer { timer, at } => {
                let serial = if timer == Timer::DelayedAck { self.flows.rx[f].serial } else { self.flows.slots[f].serial };
                cx.events.push(at, EventKind::Timer { flow: FlowId(f), timer, serial: serial & TIMER_SERIAL });
            }
            Action::RttSample(r) => self.record_rtt(f, r, cx),
            Action::Delivered { payload, wire } => self.record_delivery(f, payload, wire, fabric, cx),
            Action::Duplicate { payload } => {
                self.flows.rx[f].stats.duplicate_bytes += payload as u64;
                self.duplicate_received(f);
            }
            Action::TimedOut => {
                self.flows.slots[f].stats.timeouts += 1;
                // What follows the timeout, its retransmission first, may take a new path (PRR).
                self.path_returned(f, Returned::Timeout, cx.now);
            }
            Action::Done => self.sender_done(f, fabric, cx),
            Action::Acked(a) => self.path_returned(f, Returned::Acked(a), cx.now),
        }
    }

    /// Sends what flow `f`'s window allows.
    pub(crate) fn window_send(&mut self, f: u32, fabric: &mut Fabric, cx: &mut Ctx) {
        let now = cx.now;
        self.window_step(f, |w, _, _, out| w.poll_transmit(now, out), fabric, cx);
    }

    /// The host's NIC finished sending window data packet `pkt` (TCP Small Queues).
    pub(crate) fn window_tx_done(&mut self, pkt: Packet, fabric: &mut Fabric, cx: &mut Ctx) {
        let now = cx.now;
        self.window_step(pkt.flow, |w, _, _, out| w.on_transmitted(now, pkt.payload_bytes as u32, out), fabric, cx);
    }

    /// Sender: an ACK reached the stack `rx_delay` after it reached the NIC; or, Ultra
    /// Ethernet, a NACK of a trimmed packet or a pull of credit.
    pub(crate) fn window_ack(&mut self, ack: Packet, rx_delay: Time, fabric: &mut Fabric, cx: &mut Ctx) {
        let now = cx.now;
        if ack.flags & FLAG_CREDIT != 0 {
            return self.window_step(ack.flow, |w, _, _, out| w.on_pull(now, ack.credit(), out), fabric, cx);
        }
        if ack.kind == PacketKind::Nak {
            self.flows.slots[ack.flow].stats.naks += 1;
            self.path_returned(ack.flow, Returned::Nack { entropy: ack.entropy, last_hop: ack.flags & FLAG_TRIMMED_LAST_HOP != 0 }, now);
            return self.window_step(ack.flow, |w, _, _, out| w.on_nack(now, ack.seq, out), fabric, cx);
        }
        self.flows.slots[ack.flow].stats.acks += 1;
        self.path_returned(ack.flow, Returned::Echo { entropy: ack.entropy, marked: ack.ecn }, now);
        let hdr = AckHdr {
            ack: ack.seq,
            sack: ack.sack,
            ece: ack.ecn,
            ts: ack.t_send,
            hops: ack.echo_hops,
            remote_queuing_ns: ack.remote_queuing_ns,
            subflow: ack.entropy,
        };
        self.window_step(ack.flow, |w, rng, noise, out| w.on_ack(now, &hdr, rx_delay, |r| noise.apply(r, rng), out), fabric, cx);
        if self.flows.slots[ack.flow].unacked_messages.is_some() {
            self.messages_acked(ack.flow, fabric, cx);
        }
    }

    /// Window connection `f` carrying messages: offers one of `bytes` and sends what the window
    /// allows; returns the packet it ends before.
    pub(crate) fn window_offer(&mut self, f: u32, bytes: u64, fabric: &mut Fabric, cx: &mut Ctx) -> u64 {
        let (now, mut end) = (cx.now, 0);
        self.window_step(f, |w, _, _, out| end = w.offer(now, bytes, out), fabric, cx);
        end as u64
    }

    /// Flow `f`'s timer `timer` of connection `serial` (its low bits) has an event now: a stale
    /// one, of a connection no longer in the slot, does nothing.
    pub(crate) fn window_timer(&mut self, f: u32, timer: Timer, serial: u32, fabric: &mut Fabric, cx: &mut Ctx) {
        let current = if timer == Timer::DelayedAck {
            self.flows.rx.get(f).is_some_and(|e| e.serial & TIMER_SERIAL == serial && !e.closed)
        } else {
            self.flows.sending(f, serial, TIMER_SERIAL)
        };
        if !current {
            return;
        }
        let now = cx.now;
        if timer == Timer::DelayedAck {
            self.window_rx_step(f, |w, out| w.on_timer(now, out), fabric, cx);
        } else {
            self.window_step(f, |w, _, _, out| w.on_timer(now, timer, out), fabric, cx);
        }
    }

    /// Receiver: the headers of window flow `f`'s data packet `pkt`, trimmed by a switch,
    /// arrived (`WindowRx::on_trimmed`).
    pub(crate) fn window_trimmed(&mut self, i: PktId, pkt: Packet, fabric: &mut Fabric, cx: &mut Ctx) {
        cx.pkts.free(i);
        let end = &mut self.flows.rx[pkt.flow];
        end.stats.trims += 1;
        // The NACK echoes the trimmed packet's EV: the path chooser penalises that one.
        end.echo_entropy = pkt.entropy;
        let last_hop = pkt.flags & FLAG_TRIMMED_LAST_HOP != 0;
        self.credit_arrival(pkt.dst_host, |a| if last_hop { a.trimmed_last_hop += 1 } else { a.trimmed_other += 1 });
        self.window_rx_step(pkt.flow, |w, out| w.on_trimmed(pkt.seq, (last_hop, pkt.credit()), pkt.t_send, out), fabric, cx);
    }

    /// Receiver: window flow `f`'s sender asks for credit to resend (its RTS, receiver
    /// credits).
    pub(crate) fn window_request_to_send(&mut self, i: PktId, pkt: Packet, fabric: &mut Fabric, cx: &mut Ctx) {
        cx.pkts.free(i);
        self.credit_arrival(pkt.dst_host, |_| {});
        self.window_rx_step(pkt.flow, |w, out| w.on_request_to_send(pkt.credit(), out), fabric, cx);
    }

    /// Flow `f`'s receiver wants credit for its sender: its host's pull pacer (made at the
    /// first such request) queues it, and acts now if it was idle.
    fn request_pull(&mut self, f: u32, cx: &mut Ctx) {
        let (h, serial) = (self.flows.rx[f].dst, self.flows.rx[f].serial);
        if self.nodes[h as usize].pulls.is_none() {
            self.make_pacer(h, f, cx);
        }
        let Rx::Window(w) = &mut self.flows.rx[f].rx else { unreachable!("credits are the window transport's") };
        let sink = w.sink.as_mut().expect("a connection with receiver credits");
        if self.nodes[h as usize].pulls.as_mut().expect("made").request(f, serial, sink) {
            cx.events.push(cx.now, EventKind::Pull(HostId(h)));
        }
    }

    /// Host `h`'s pull pacer, made when its first connection `f` wants credit, with the
    /// oversubscription controller `f`'s transport asks for.
    fn make_pacer(&mut self, h: u32, f: u32, cx: &mut Ctx) {
        let line_rate = self.nodes[h as usize].line_rate;
        let mut pacer = PullPacer::new(line_rate, crate::host::connections::credit_window(line_rate, cx).0);
        let conn = &cx.cfg.conns[self.conn_of(self.flows.rx[f].ephemeral) as usize];
        if let Some(ratio) = conn.transport.uet().and_then(|u| u.oversubscription) {
            pacer.oversubscribed = Some(Oversubscribed::new(ratio));
            let u: f64 = self.nodes[h as usize].rng.random();
            cx.events.push(cx.now + Oversubscribed::interval(cx.cfg.max_base_rtt, u), EventKind::PullRate(HostId(h)));
        }
        self.nodes[h as usize].pulls = Some(Box::new(pacer));
    }

    /// Host `h`'s oversubscription controller sets its pacer's rate from what arrived since it
    /// last did, and looks again 0.75 to 1.25 × 1.5 unloaded RTTs later.
    pub(crate) fn pull_rate_event(&mut self, h: u32, cx: &mut Ctx) {
        let node = &mut self.nodes[h as usize];
        let pacer = node.pulls.as_mut().expect("an event of a pacer");
        let rate = pacer.oversubscribed.as_mut().expect("an event of its controller").update();
        pacer.scale(rate);
        let u: f64 = node.rng.random();
        cx.events.push(cx.now + Oversubscribed::interval(cx.cfg.max_base_rtt, u), EventKind::PullRate(HostId(h)));
    }

    /// A packet of a connection with receiver credits reached host `h`: its oversubscription
    /// controller, if one runs, counts it.
    fn credit_arrival(&mut self, h: u32, count: impl FnOnce(&mut Arrivals)) {
        if let Some(o) = self.nodes[h as usize].pulls.as_mut().and_then(|p| p.oversubscribed.as_mut()) {
            o.arrivals.packets += 1;
            count(&mut o.arrivals);
        }
    }

    /// Host `h`'s pull pacer acts: it sends its next pull, and acts again when that pull's
    /// credit has had its time at the pull rate.
    pub(crate) fn pull_event(&mut self, h: u32, fabric: &mut Fabric, cx: &mut Ctx) {
        let pacer = self.nodes[h as usize].pulls.as_mut().expect("an event of a pacer");
        let Some(pull) = pacer.serve(cx.now, &mut ReceivingEnds(&mut self.flows.rx)) else { return };
        cx.events.push(pull.next, EventKind::Pull(HostId(h)));
        let end = &self.flows.rx[pull.flow];
        let pkt = Packet {
            flags: FLAG_WINDOW | FLAG_CREDIT,
            flow: pull.flow,
            serial: end.serial,
            dst_host: end.src,
            hash: labelled_hash(end.hash, end.echo_entropy as u32),
            entropy: end.echo_entropy,
            sack: Packet::credit_words(pull.pull),
            t_send: cx.now,
            ..Packet::new(PacketKind::Ack, cx.cfg.ack_class as u8, cx.cfg.ack_bytes as u16)
        };
        let port = self.nodes[h as usize].port;
        let i = self.alloc_packet(pkt, cx);
        fabric.enqueue(port, cx.cfg.ack_class, i, self, cx);
    }

    /// Receiver: data packet `i` of a window flow reached the stack `rx_delay` after the NIC.
    pub(crate) fn window_deliver(&mut self, i: PktId, pkt: Packet, rx_delay: Time, fabric: &mut Fabric, cx: &mut Ctx) {
        self.int_keep(pkt.flow, i, cx);
        cx.pkts.free(i);
        self.credit_arrival(pkt.dst_host, |a| a.marked += pkt.ecn as u64);
        let end = &mut self.flows.rx[pkt.flow];
        end.stats.ecn_echoed_bytes += pkt.ecn as u64 * pkt.payload_bytes as u64;
        end.arrival_order(&pkt);
        end.echo_entropy = pkt.entropy;
        let duplicates_before = end.stats.duplicate_bytes;
        let now = cx.now;
        let hdr = DataHdr {
            seq: pkt.seq,
            payload: pkt.payload_bytes as u32,
            wire: pkt.wire_bytes as u32,
            ce: pkt.ecn,
            ts: pkt.t_send,
            hops: pkt.hops,
            ack_now: pkt.last_of_segment(),
            pull_target: pkt.credit(),
        };
        self.window_rx_step(pkt.flow, |w, out| w.on_data(now, &hdr, rx_delay, out), fabric, cx);
        let end = &mut self.flows.rx[pkt.flow];
        end.stats.spurious_retransmits += (pkt.retransmit() && end.stats.duplicate_bytes > duplicates_before) as u64;
    }

    /// Flow `f`'s receiver got data it already had: with PRR its ACKs take a new path, since
    /// the sender sending it again means they may not be getting through (Linux
    /// `tcp_rcv_spurious_retrans` rethinks the receiver's hash).
    fn duplicate_received(&mut self, f: u32) {
        let end = &mut self.flows.rx[f];
        if end.prr {
            end.hash = labelled_hash(end.hash, 1);
            end.stats.repaths += 1;
        }
    }

    /// Flow `f`'s path chooser reads what came back at `now`, and counts a new path.
    fn path_returned(&mut self, f: u32, what: Returned, now: Time) {
        let flow = &mut self.flows.slots[f];
        // Counted only when it happens: most ACKs leave the counters' cache line alone.
        if flow.path.on_return(what, now, &mut flow.rng) {
            flow.stats.repaths += 1;
        }
    }

    /// Message receiver: data packet `i` arrived (`MessageTx::on_data`). Payload in order is
    /// delivered; anything else is discarded. An answer turns the packet into the ACK or NAK in
    /// place (TIMELY §3.1, prompt ACK generation).
    pub(crate) fn message_deliver(&mut self, h: u32, i: PktId, pkt: Packet, fabric: &mut Fabric, cx: &mut Ctx) {
        let end = &mut self.flows.rx[pkt.flow];
        end.stats.ecn_echoed_bytes += pkt.ecn as u64 * pkt.payload_bytes as u64;
        end.arrival_order(&pkt);
        let arrival = if pkt.trimmed() {
            end.stats.trims += 1;
            end.message_rx().on_trimmed(pkt.seq, pkt.last_of_segment())
        } else {
            end.message_rx().on_data(pkt.seq, pkt.ecn, pkt.last_of_segment())
        };
        if !matches!(arrival, Arrival::Deliver { .. } | Arrival::Placed { .. }) {
            end.stats.duplicate_bytes += pkt.payload_bytes as u64;
        }
        end.stats.spurious_retransmits += (pkt.retransmit() && matches!(arrival, Arrival::Duplicate { .. })) as u64;
        if matches!(arrival, Arrival::Duplicate { .. }) {
            self.duplicate_received(pkt.flow);
        }
        let answer = match arrival {
            Arrival::Deliver { ack } => {
                self.record_delivery(pkt.flow, pkt.payload_bytes as u32, pkt.wire_bytes as u32, fabric, cx);
                ack.map(|(psn, ece)| (PacketKind::Ack, psn, ece))
            }
            Arrival::Duplicate { ack } => ack.map(|psn| (PacketKind::Ack, psn, false)),
            Arrival::Nak(psn) => Some((PacketKind::Nak, psn, false)),
            Arrival::Discard => None,
            Arrival::Placed { nak, psn, below } => {
                self.record_delivery(pkt.flow, pkt.payload_bytes as u32, pkt.wire_bytes as u32, fabric, cx);
                // The placed packet's PSN and the bitmap below it ride as the NAK's selective
                // acknowledgement.
                cx.pkts.get_mut(i).sack = [psn, below];
                Some((PacketKind::Nak, nak, false))
            }
            // The trimmed packet's PSN rides as the NAK's, which keeps its trim flags.
            Arrival::Trimmed { nak, psn } => {
                cx.pkts.get_mut(i).sack = [psn, psn.wrapping_add(1)];
                Some((PacketKind::Nak, nak, false))
            }
        };
        let trim_flags = FLAG_TRIMMED | FLAG_TRIMMED_LAST_HOP;
        if !matches!(arrival, Arrival::Trimmed { .. }) {
            cx.pkts.get_mut(i).flags &= !trim_flags;
        }
        let Some((kind, psn, ece)) = answer else {
            return cx.pkts.free(i);
        };
        // DCQCN's notification point: the ACK carries the CNP, at most one per interval.
        let ece = ece
            && match cx.cfg.conns[self.conn_of(self.flows.rx[pkt.flow].ephemeral) as usize].cnp_interval {
                Some(interval) => self.flows.rx[pkt.flow].message_rx().cnp_due(cx.now, interval),
                None => true,
            };
        let end = &self.flows.rx[pkt.flow];
        let (src, hash) = (end.src, end.hash);
        let ack = cx.pkts.get_mut(i);
        ack.kind = kind;
        ack.class = cx.cfg.ack_class as u8;
        ack.ecn = ece;
        ack.seq = psn;
        ack.dst_host = src;
        ack.hash = labelled_hash(hash, ack.entropy as u32);
        ack.wire_bytes = cx.cfg.ack_bytes as u16;
        ack.payload_bytes = 0;
        cx.pkts.get_mut(i).wire_bytes += self.int_echo(i, cx) as u16;
        let port = self.nodes[h as usize].port;
        fabric.enqueue(port, cx.cfg.ack_class, i, self, cx);
    }

    /// Message sender: an ACK or NAK of every PSN before `ack.seq`. Each segment it completes
    /// gives an RTT sample to the controller; a NAK (or an ACK the NIC is behind) sends the NIC
    /// back (`message_rewind`); the local ACK timeout restarts; the flow may send again if the
    /// outstanding cap held it.
    pub(crate) fn message_ack(&mut self, ack: Packet, int: Option<&IntStack>, fabric: &mut Fabric, cx: &mut Ctx) {
        let now = cx.now;
        let f = ack.flow;
        let nak = ack.kind == PacketKind::Nak;
        let flow = &mut self.flows.slots[f];
        if flow.message().stale(ack.seq) {
            return;
        }
        flow.stats.naks += nak as u64;
        flow.stats.acks += !nak as u64;
        self.path_returned(f, Returned::Echo { entropy: ack.entropy, marked: ack.ecn }, now);
        let flow = &mut self.flows.slots[f];
        if ack.ecn {
            // A CNP (DCQCN), or an ECN echo a rate controller may take as one.
            flow.message().cc.on_congestion_notification(now);
        }
        // §3.1 and §5: the segment's own time on the wire is left out of the sample, at the
        // rate it left at (a pacing rate, the connection's rate under per-packet rate pacing,
        // else the line rate).
        let line_rate = self.nodes[flow.src as usize].line_rate;
        let fixed = cx.cfg.pacing_rate.unwrap_or(line_rate);
        let per_packet = cx.cfg.pacing_rate.is_none() && cx.cfg.rate_pacing == RatePacing::Packet;
        let outstanding = flow.message().outstanding_bytes();
        flow.stats.credit_inflight(now, cx.cfg.warmup, outstanding);
        while let Some(u) = self.flows.slots[f].message().pop_acked(ack.seq) {
            let rate = if per_packet { u.rate.min(line_rate) } else { fixed };
            let clean = completion_rtt(now, u.t_send, u.bytes as u64, rate);
            let rtt = self.noisy_rtt(f, clean, cx);
            // Only a run whose ACKs collect telemetry has a connection whose signal reads queues.
            let queues = cx.cfg.acks_collect_int && cx.cfg.conns[self.conn_of(self.flows.slots[f].ephemeral) as usize].signal.0.uses_queues();
            let input = if queues { self.signal_input(f, clean, int, fabric, cx) } else { rtt };
            let records = int.map_or(&[][..], |st| st.forward());
            let acked = self.flows.slots[f].message().on_completion(now, input, ack.ecn, &u, records);
            self.path_returned(f, Returned::Acked(acked), now);
            self.record_rtt(f, rtt, cx);
        }
        let m = self.flows.slots[f].message();
        if m.must_rewind(ack.seq, nak) {
            self.message_rewind(f, ack.seq, fabric, cx);
        }
        let trimmed = nak && ack.trimmed() && self.flows.slots[f].message().on_trimmed(ack.seq, ack.sack[0]);
        let placed = (nak && !ack.trimmed()).then_some((ack.sack[0], ack.sack[1]));
        let mut lost = self.flows.slots[f].message().selective_ack(ack.seq, placed);
        if trimmed {
            lost.push(ack.sack[0]);
        }
        if !lost.is_empty() {
            self.message_resend(f, &lost, fabric, cx);
        }
        self.message_rto_restart(f, cx);
        if self.flows.slots[f].unacked_messages.is_some() {
            self.messages_acked(f, fabric, cx);
        }
        if self.flows.slots[f].message().done() {
            self.message_forget(f, fabric, cx);
            self.sender_done(f, fabric, cx);
        } else {
            self.schedule_flow(f, cx);
        }
    }

    /// Restarts or stops message flow `f`'s local ACK timeout (`MessageTx::restart_rto`).
    fn message_rto_restart(&mut self, f: u32, cx: &mut Ctx) {
        let now = cx.now;
        if let Some(at) = self.flows.slots[f].message().restart_rto(now, cx.cfg.retransmit_timeout) {
            self.arm_rto(f, at, cx);
        }
    }

    /// Host `h`'s message timeout queue has its event `ev` now: the connection whose timeout it
    /// is, if any, looks at its timer (`message_timer`).
    pub(crate) fn message_rto_event(&mut self, h: u32, ev: &Event, fabric: &mut Fabric, cx: &mut Ctx) {
        if let Some(f) = self.nodes[h as usize].rtos.pop(&mut cx.events, ev) {
            self.message_timer(f, fabric, cx);
        }
    }

    /// Message flow `f`'s local ACK timeout has an event now: on expiry the NIC goes back to the
    /// oldest unacknowledged packet. A stale event of a slot now holding a window flow does
    /// nothing.
    pub(crate) fn message_timer(&mut self, f: u32, fabric: &mut Fabric, cx: &mut Ctx) {
        let now = cx.now;
        let Tx::Message(m) = &mut self.flows.slots[f].tx else { return };
        match m.rto_fire(now) {
            Ok(false) => {}
            Err(at) => self.arm_rto(f, at, cx),
            Ok(true) => {
                let Some(una) = m.una_psn() else { return };
                self.flows.slots[f].stats.timeouts += 1;
                self.path_returned(f, Returned::Timeout, now);
                match self.flows.slots[f].message().selective_timeout(una) {
                    Some(lost) => self.message_resend(f, &lost, fabric, cx),
                    None => self.message_rewind(f, una, fabric, cx),
                }
            }
        }
    }
}

/// The receiving ends of a host's connections, as its pull pacer reads them: a connection
/// whose slot holds another, or whose sender has closed, has none.
struct ReceivingEnds<'a>(&'a mut Slots<RxEnd>);

impl Sinks for ReceivingEnds<'_> {
    fn sink(&mut self, f: u32, serial: u32) -> Option<&mut Sink> {
        let end = self.0.get_mut(f).filter(|e| e.serial == serial && !e.closed)?;
        match &mut end.rx {
            Rx::Window(w) => w.sink.as_mut(),
            _ => None,
        }
    }
}
