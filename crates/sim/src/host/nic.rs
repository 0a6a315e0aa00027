//! Hosts and their NICs: the per-host pacing scheduler of the message transport (TIMELY §3.3's
//! rate control engine), and the segmenter.
//!
//! A segment released by the message transport is handed to the NIC (`t_send`), which sends it
//! as MTU packets at line rate, or, with `nic.pacing_rate`, one packet every `wire bytes /
//! pacing rate` while other flows' segments use the gaps (TIMELY §5 "Additional pacing
//! opportunities", Fig. 16). Between connections the NIC goes round-robin per packet
//! (`nic.arbitration = "qp_round_robin"`, as RDMA NICs schedule queue pairs) or sends whole
//! segments in order (`"segment_fifo"`). With `nic.rate_pacing = "packet"` each connection's
//! packets are spaced at its rate controller's rate (a per-connection hardware rate limiter).
//! Window-transport packets go straight to the host port's
//! class queues (the kernel's queueing discipline). Arriving packets are handed to their
//! flow's transport; with a host model (`HostConfig`), window-transport packets first wait in
//! the NIC Rx queue for the stack to process them one at a time (Swift §3.1, Fig. 2).

use super::Hosts;
use crate::core::engine::{EventKind, Rng, Timers};
use crate::core::ids::{HostId, PktId, PortId};
use crate::core::packet::{Packet, PacketKind, FLAG_CREDIT, FLAG_FIRST, FLAG_LAST, FLAG_RETRANSMIT};
use crate::ctx::Ctx;
use crate::fabric::port::MAX_CLASSES;
use crate::fabric::Fabric;
use crate::host::flow::Tx;
use crate::scenario::{NicArbitration, RateAfterIdle, RatePacing};
use crate::transport::credit::PullPacer;
use crate::transport::message::psn_before;
use rttlab_cc::{Rate, Time};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A segment handed to the NIC, sent packet by packet from its front.
#[derive(Copy, Clone, Debug)]
pub struct Segment {
    pub flow: u32,
    pub bytes: u32,
    pub sent: u32,
    /// PSN of its first packet (`transport::message`).
    pub psn: u32,
    /// The oldest segment of its flow in the NIC: only that one may send.
    pub first: bool,
    /// Its next packet may not start before this (NIC pacing).
    pub next_at: Time,
}

impl Segment {
    /// Wire bytes of the packets it has still to send, in packets of `payload_per_packet`
    /// with `header` bytes each.
    pub(crate) fn wire_left(&self, payload_per_packet: u32, header: u32) -> u64 {
        let left = (self.bytes - self.sent) as u64;
        left + left.div_ceil(payload_per_packet as u64) * header as u64
    }
}

/// A host: its NIC and stack. Laid out (`repr(C)`) with what each packet it sends reads in
/// its first cache line: its port and, of a host with one class, that class's segments.
#[repr(C, align(64))]
pub struct Host {
    pub port: PortId,
    pub node: u32,
    /// Time of the pending `HostWake` event (`Time::MAX`: none).
    pub(crate) wake_at: Time,
    /// Time of the pending pacer `Kick` of this host's port (`Time::MAX`: none).
    pacer_kick_at: Time,
    /// Segments handed to the NIC, per priority class.
    pub nic: [VecDeque<Segment>; MAX_CLASSES],
    pub line_rate: Rate,
    pub(crate) sched_seq: u64,
    /// Flows waiting for their next send time: (time, insertion order, flow).
    pub(crate) sched: BinaryHeap<Reverse<(Time, u64, u32)>>,
    /// RTT-noise draws.
    pub rng: Rng,
    /// Host model: packets waiting for the stack, with their NIC arrival time (`t2`, `t5`);
    /// the front one is being processed.
    rx: VecDeque<(PktId, Time)>,
    /// Packets dropped at a full NIC Rx queue.
    pub rx_drops: u64,
    pub rx_dropped_payload: u64,
    /// Its message connections' local ACK timeout events, one main-queue event at a time.
    pub(crate) rtos: Timers,
    /// Ultra Ethernet's receiver credits: the pacer granting them to its senders, once one
    /// asked.
    pub(crate) pulls: Option<Box<PullPacer>>,
}

impl Host {
    pub fn new(node: u32, port: PortId, line_rate: Rate, rng: Rng) -> Host {
        Host {
            node,
            port,
            line_rate,
            sched: BinaryHeap::new(),
            sched_seq: 0,
            wake_at: Time::MAX,
            nic: Default::default(),
            pacer_kick_at: Time::MAX,
            rng,
            rx: VecDeque::new(),
            rx_drops: 0,
            rx_dropped_payload: 0,
            rtos: Timers::default(),
            pulls: None,
        }
    }

    /// The pacer's wake-up at `at` happened (or was another kick).
    pub(crate) fn pacer_kick_done(&mut self, at: Time) {
        if at >= self.pacer_kick_at {
            self.pacer_kick_at = Time::MAX;
        }
    }
}

impl Hosts {
    /// When message flow `f` may release its next segment (`MessageTx::release_time`).
    fn release_time(&mut self, f: u32, cx: &mut Ctx) -> Option<Time> {
        let flow = &mut self.flows.slots[f];
        let Tx::Message(m) = &mut flow.tx else { unreachable!("a message-transport path reached a window flow") };
        if m.nic_segments >= cx.cfg.send_queue {
            return None; // the send queue is full: a segment leaving re-arms it
        }
        m.release_time(cx.now, cx.cfg.segment_bytes, cx.cfg.max_outstanding, &mut flow.rng)
    }

    /// Puts message flow `f` in its host's scheduler if it is not there and has something to
    /// send (TIMELY §3.3: the rate control engine).
    pub(crate) fn schedule_flow(&mut self, f: u32, cx: &mut Ctx) {
        if self.flows.slots[f].message().in_sched {
            return;
        }
        if let Some(t) = self.release_time(f, cx) {
            let h = self.flows.slots[f].src;
            self.requeue(h, f, t);
            self.arm_wake(h, cx);
        }
    }

    fn arm_wake(&mut self, h: u32, cx: &mut Ctx) {
        let host = &mut self.nodes[h as usize];
        if let Some(Reverse((t, _, _))) = host.sched.peek() {
            if *t < host.wake_at {
                host.wake_at = *t;
                cx.events.push(*t, EventKind::HostWake(HostId(h)));
            }
        }
    }

    /// Host `h`'s scheduler: release every segment whose time has come, round-robin.
    pub(crate) fn host_wake(&mut self, h: u32, at: Time, fabric: &mut Fabric, cx: &mut Ctx) {
        let host = &mut self.nodes[h as usize];
        if at != host.wake_at {
            return; // superseded by an earlier wake-up
        }
        host.wake_at = Time::MAX;
        while let Some(&Reverse((t, _, f))) = self.nodes[h as usize].sched.peek() {
            if t > cx.now {
                break;
            }
            self.nodes[h as usize].sched.pop();
            self.flows.slots[f].message().in_sched = false;
            match self.release_time(f, cx) {
                None => {}
                // The rate fell since the time was computed: re-queue (TIMELY §5, lazy update).
                Some(t) if t > cx.now => self.requeue(h, f, t),
                Some(_) => {
                    self.release_segment(f, fabric, cx);
                    self.schedule_flow(f, cx);
                }
            }
        }
        self.arm_wake(h, cx);
        let port = self.nodes[h as usize].port;
        fabric.try_tx(port, self, cx);
    }

    /// Puts flow `f` in host `h`'s scheduler for time `t`.
    fn requeue(&mut self, h: u32, f: u32, t: Time) {
        self.flows.slots[f].message().in_sched = true;
        let host = &mut self.nodes[h as usize];
        host.sched.push(Reverse((t, host.sched_seq, f)));
        host.sched_seq += 1;
    }

    /// Hands flow `f`'s next segment to its NIC (the segmenter); its `t_send` is now
    /// (`MessageTx::release` keeps it).
    fn release_segment(&mut self, f: u32, fabric: &mut Fabric, cx: &mut Ctx) {
        let now = cx.now;
        let flow = &mut self.flows.slots[f];
        let (src, class) = (flow.src, flow.class);
        let m = flow.message();
        if cx.cfg.rate_after_idle == RateAfterIdle::Reset && m.idle() {
            m.cc.restart();
        }
        let u = m.release(now, cx.cfg.segment_bytes, cx.cfg.payload_per_packet);
        let outstanding_before = m.outstanding_bytes() - u.bytes as u64;
        let seg = Segment { flow: f, bytes: u.bytes, sent: 0, psn: u.first_psn, first: m.nic_segments == 0, next_at: now };
        m.nic_segments += 1;
        flow.stats.credit_inflight(now, cx.cfg.warmup, outstanding_before);
        self.nodes[src as usize].nic[class as usize].push_back(seg);
        self.nic_holds(src, class as usize, seg.wire_left(cx.cfg.payload_per_packet, cx.cfg.header_bytes) as i64, fabric, cx);
    }

    /// Host `h`'s NIC holds `delta` more wire bytes of class `c` in segments (fewer if
    /// negative): the host port's queue statistics count them.
    fn nic_holds(&mut self, h: u32, c: usize, delta: i64, fabric: &mut Fabric, cx: &mut Ctx) {
        let p = self.nodes[h as usize].port;
        fabric.queue_changes(p, cx);
        let q = fabric.queues.at_mut(p, c);
        q.nic_bytes = q.nic_bytes.checked_add_signed(delta).expect("a NIC never sends more than it holds");
        q.occupancy_changed(cx.now, delta, true);
    }

    /// The next data packet of class `c` from host `h`'s NIC, if it has one: the next
    /// MTU-sized piece of the oldest segment free to send. Without NIC pacing that is always
    /// the head segment, sent back to back; with it, a segment waits `wire / pacing rate`
    /// between packets and the NIC serves other flows' segments meanwhile.
    pub(crate) fn next_data_packet(&mut self, h: u32, c: usize, fabric: &mut Fabric, cx: &mut Ctx) -> Option<PktId> {
        let now = cx.now;
        let host = &mut self.nodes[h as usize];
        let mut wait = Time::MAX;
        let idx = host.nic[c].iter().position(|s| {
            if s.first && s.next_at > now {
                wait = wait.min(s.next_at);
            }
            s.first && s.next_at <= now
        });
        let Some(idx) = idx else {
            if wait < host.pacer_kick_at {
                host.pacer_kick_at = wait;
                cx.events.push(wait, EventKind::Kick(host.port));
            }
            return None;
        };
        let seg = &mut host.nic[c][idx];
        let psn = seg.psn.wrapping_add(seg.sent / cx.cfg.payload_per_packet);
        let payload = (seg.bytes - seg.sent).min(cx.cfg.payload_per_packet);
        let first = seg.sent == 0;
        seg.sent += payload;
        let pace = match (cx.cfg.pacing_rate, cx.cfg.rate_pacing) {
            (Some(fixed), _) => Some(fixed),
            (None, RatePacing::Packet) => Some(self.flows.slots[seg.flow].rate()),
            (None, RatePacing::Segment) => None,
        };
        if let Some(pace) = pace {
            seg.next_at = now + pace.serialization((payload + cx.cfg.header_bytes) as u64);
        }
        let last = seg.sent == seg.bytes;
        let s = *seg;
        let queue = &mut host.nic[c];
        if last {
            queue.remove(idx);
            // The connection's next segment (its segments stay in order) may send now.
            if let Some(next) = queue.iter_mut().find(|x| x.flow == s.flow) {
                next.first = true;
            }
        } else if cx.cfg.arbitration == NicArbitration::QpRoundRobin && queue.len() > 1 {
            // Round-robin: the segment served goes behind every other one.
            let served = queue.remove(idx).expect("the segment just served");
            queue.push_back(served);
        }
        let flow = &mut self.flows.slots[s.flow];
        let dst = flow.dst;
        let (hash, entropy) = flow.path.next(flow.hash[0], 0, &mut flow.rng);
        let Tx::Message(m) = &mut flow.tx else { unreachable!("a message-transport path reached a window flow") };
        let (again, arm) = m.on_transmit(now, psn, cx.cfg.retransmit_timeout);
        flow.stats.tx_bytes += payload as u64;
        flow.stats.retransmits += again as u64;
        flow.stats.retransmitted_bytes += again as u64 * payload as u64;
        if let Some(at) = arm {
            self.arm_rto(s.flow, at, cx);
        }
        let m = self.flows.slots[s.flow].message();
        m.nic_segments -= last as u32;
        let reopened = last && m.nic_segments + 1 == cx.cfg.send_queue;
        let pkt = Packet {
            flags: if first { FLAG_FIRST } else { 0 } | if last { FLAG_LAST } else { 0 } | if again { FLAG_RETRANSMIT } else { 0 },
            entropy,
            flow: s.flow,
            serial: self.flows.slots[s.flow].serial,
            dst_host: dst,
            hash,
            payload_bytes: payload as u16,
            seq: psn,
            ..Packet::new(PacketKind::Data, c as u8, (payload + cx.cfg.header_bytes) as u16)
        };
        let i = self.alloc_packet(pkt, cx);
        self.nic_holds(h, c, -((payload + cx.cfg.header_bytes) as i64), fabric, cx);
        if reopened {
            self.schedule_flow(s.flow, cx);
        }
        Some(i)
    }

    /// Queues message flow `f`'s local ACK timeout event at `at` (`LazyTimer` asks rarely).
    pub(crate) fn arm_rto(&mut self, f: u32, at: Time, cx: &mut Ctx) {
        let h = self.flows.slots[f].src;
        self.nodes[h as usize].rtos.push(&mut cx.events, at, f, EventKind::MessageRto(HostId(h)));
    }

    /// Go-back-N: message flow `f`'s NIC drops what it still had of the flow and sends every
    /// unacknowledged segment again from packet `psn` on (`MessageTx::rewind`), behind the
    /// other flows' segments.
    pub(crate) fn message_rewind(&mut self, f: u32, psn: u32, fabric: &mut Fabric, cx: &mut Ctx) {
        let now = cx.now;
        let ppp = cx.cfg.payload_per_packet;
        let flow = &mut self.flows.slots[f];
        let (src, class) = (flow.src as usize, flow.class as usize);
        let Tx::Message(m) = &mut flow.tx else { unreachable!("a message-transport path reached a window flow") };
        let mut held = -Self::nic_drop_segments(&mut self.nodes[src].nic[class], f, ppp, cx.cfg.header_bytes);
        let (queue, header) = (&mut self.nodes[src].nic[class], cx.cfg.header_bytes);
        let mut n = 0;
        for u in m.rewind(psn) {
            let sent = if psn_before(u.first_psn, psn) { psn.wrapping_sub(u.first_psn) * ppp } else { 0 };
            let seg = Segment { flow: f, bytes: u.bytes, sent, psn: u.first_psn, first: n == 0, next_at: now };
            held += seg.wire_left(ppp, header) as i64;
            queue.push_back(seg);
            n += 1;
        }
        m.nic_segments = n;
        self.nic_holds(src as u32, class, held, fabric, cx);
        let port = self.nodes[src].port;
        self.schedule_flow(f, cx);
        fabric.try_tx(port, self, cx);
    }

    /// Takes message flow `f`'s segments out of a NIC queue; the wire bytes they held.
    fn nic_drop_segments(queue: &mut std::collections::VecDeque<Segment>, f: u32, ppp: u32, header: u32) -> i64 {
        let mut held = 0;
        queue.retain(|s| {
            if s.flow == f {
                held += s.wire_left(ppp, header) as i64;
            }
            s.flow != f
        });
        held
    }

    /// Message flow `f` has everything acknowledged: what its NIC still holds of it (packets
    /// queued to go again, since acknowledged) is not sent.
    pub(crate) fn message_forget(&mut self, f: u32, fabric: &mut Fabric, cx: &mut Ctx) {
        let (src, class) = (self.flows.slots[f].src, self.flows.slots[f].class as usize);
        let held = Self::nic_drop_segments(&mut self.nodes[src as usize].nic[class], f, cx.cfg.payload_per_packet, cx.cfg.header_bytes);
        if held > 0 {
            self.flows.slots[f].message().nic_segments = 0;
            self.nic_holds(src, class, -held, fabric, cx);
        }
    }

    /// Selective repeat: message flow `f`'s NIC sends packets `psns` again, each as a segment of
    /// its own, ahead of the flow's other segments in the NIC (a packet acknowledged since is
    /// skipped).
    pub(crate) fn message_resend(&mut self, f: u32, psns: &[u32], fabric: &mut Fabric, cx: &mut Ctx) {
        let (now, ppp, header) = (cx.now, cx.cfg.payload_per_packet, cx.cfg.header_bytes);
        let flow = &mut self.flows.slots[f];
        let (src, class) = (flow.src as usize, flow.class as usize);
        let Tx::Message(m) = &mut flow.tx else { unreachable!("a message-transport path reached a window flow") };
        let resend: Vec<Segment> = psns
            .iter()
            .filter_map(|&psn| m.packet_payload(psn, ppp).map(|bytes| Segment { flow: f, bytes, sent: 0, psn, first: false, next_at: now }))
            .collect();
        if resend.is_empty() {
            return;
        }
        m.nic_segments += resend.len() as u32;
        let held: i64 = resend.iter().map(|s| s.wire_left(ppp, header) as i64).sum();
        let queue = &mut self.nodes[src].nic[class];
        let at = queue.iter().position(|s| s.flow == f).unwrap_or(queue.len());
        if let Some(s) = queue.get_mut(at) {
            s.first = false;
        }
        for (k, mut s) in resend.into_iter().enumerate() {
            s.first = k == 0;
            queue.insert(at + k, s);
        }
        self.nic_holds(src as u32, class, held, fabric, cx);
        let port = self.nodes[src].port;
        self.schedule_flow(f, cx);
        fabric.try_tx(port, self, cx);
    }

    /// Whether the transmit completion of packet `i` at its host matters to its transport: a
    /// window-transport data packet leaves the host's send queue (TSQ accounting).
    pub(crate) fn tx_done_matters(&self, i: PktId, cx: &Ctx) -> bool {
        let pkt = cx.pkts.get(i);
        pkt.kind == PacketKind::Data && pkt.window()
    }

    /// The host's NIC finished sending window-transport data packet `i` (a transmit completion
    /// that `tx_done_matters`).
    pub(crate) fn host_tx_done(&mut self, i: PktId, fabric: &mut Fabric, cx: &mut Ctx) {
        let pkt = *cx.pkts.get(i);
        if self.flows.sending(pkt.flow, pkt.serial, u32::MAX) {
            self.window_tx_done(pkt, fabric, cx);
        }
    }

    /// Packet `i` arrived at host `h`'s NIC. Without a host model, or for a packet the NIC
    /// handles itself (message transport, pings), it is processed now; otherwise it joins the
    /// NIC Rx queue, or is dropped when the queue is full.
    pub(crate) fn host_arrive(&mut self, h: u32, i: PktId, fabric: &mut Fabric, cx: &mut Ctx) {
        if !cx.cfg.host_config.enabled() {
            return self.host_receive(h, i, Time::ZERO, fabric, cx);
        }
        let pkt = *cx.pkts.get(i);
        if !pkt.window() {
            return self.host_receive(h, i, Time::ZERO, fabric, cx);
        }
        let host = &mut self.nodes[h as usize];
        if host.rx.len() >= cx.cfg.host_config.rx_queue_packets as usize {
            host.rx_drops += 1;
            host.rx_dropped_payload += pkt.payload_bytes as u64;
            self.count_drop(&pkt, None, cx);
            return cx.pkts.free(i);
        }
        host.rx.push_back((i, cx.now));
        if host.rx.len() == 1 {
            self.host_rx_start(h, cx);
        }
    }

    /// Host `h`'s stack starts on the packet at the head of its NIC Rx queue (`t3`).
    fn host_rx_start(&mut self, h: u32, cx: &mut Ctx) {
        let (i, _) = self.nodes[h as usize].rx[0];
        let done = cx.now + cx.cfg.host_config.processing(cx.pkts.get(i).payload_bytes as u32);
        cx.events.push(done, EventKind::HostRx(HostId(h)));
    }

    /// Host `h`'s stack finished the head packet (`t4`, `t6`): it goes to its transport with
    /// the time it spent since reaching the NIC, and the next one starts.
    pub(crate) fn host_rx_done(&mut self, h: u32, fabric: &mut Fabric, cx: &mut Ctx) {
        let (i, arrived) = self.nodes[h as usize].rx.pop_front().expect("a packet in processing");
        if !self.nodes[h as usize].rx.is_empty() {
            self.host_rx_start(h, cx);
        }
        self.host_receive(h, i, cx.now - arrived, fabric, cx);
    }

    /// Fetches into the cache the connection record that a data packet or ACK arriving at a
    /// host reads first (`host_receive`): the receiving end's, or the sender's.
    #[inline(always)]
    pub(crate) fn prefetch_connection(&self, pkt: &Packet) {
        match pkt.kind {
            PacketKind::Data => {
                if let Some(end) = self.flows.rx.get(pkt.flow) {
                    crate::core::engine::prefetch(&end.serial);
                    crate::core::engine::prefetch(&end.rx);
                }
            }
            PacketKind::Ack => {
                if let Some(flow) = self.flows.slots.get(pkt.flow) {
                    crate::core::engine::prefetch(&flow.serial);
                    crate::core::engine::prefetch(&flow.tx);
                }
            }
            _ => {}
        }
    }

    /// Packet `i` reaches host `h`'s stack `rx_delay` after it reached the NIC: data and ACKs go
    /// to their flow's transport, pings are echoed, echoes recorded.
    pub(crate) fn host_receive(&mut self, h: u32, i: PktId, rx_delay: Time, fabric: &mut Fabric, cx: &mut Ctx) {
        let pkt = *cx.pkts.get(i);
        match pkt.kind {
            PacketKind::Ping => return self.ping_echo(h, i, fabric, cx),
            PacketKind::Pong => return self.pong(i, pkt, cx),
            _ => {}
        }
        let current = match pkt.kind {
            PacketKind::Data => self.receiving(pkt.flow, pkt.serial),
            _ => self.flows.sending(pkt.flow, pkt.serial, u32::MAX),
        };
        if !current {
            return self.stale(i, cx);
        }
        match (pkt.kind, !pkt.window()) {
            (PacketKind::Data, true) => self.message_deliver(h, i, pkt, fabric, cx),
            (_, true) => {
                let int = cx.pkts.int(i).copied();
                cx.pkts.free(i);
                self.message_ack(pkt, int.as_ref(), fabric, cx);
            }
            (PacketKind::Data, false) if pkt.trimmed() => self.window_trimmed(i, pkt, fabric, cx),
            (PacketKind::Data, false) if pkt.flags & FLAG_CREDIT != 0 => self.window_request_to_send(i, pkt, fabric, cx),
            (PacketKind::Data, false) => self.window_deliver(i, pkt, rx_delay, fabric, cx),
            (_, false) => {
                cx.pkts.free(i);
                self.window_ack(pkt, rx_delay, fabric, cx);
            }
        }
    }

    /// Whether data of connection `serial` of flow `f` is its receiver's to take: the
    /// connection its end is for, or the slot's next one (whose end then takes over, the one
    /// before joining the retired totals).
    fn receiving(&mut self, f: u32, serial: u32) -> bool {
        let Some(end) = self.flows.rx.get(f) else { return false };
        if end.serial == serial {
            return !end.closed;
        }
        if end.next.as_ref().is_none_or(|n| n.serial != serial) {
            return false;
        }
        let end = &mut self.flows.rx[f];
        let next = end.next.take().expect("checked");
        let old = std::mem::replace(end, *next);
        self.flows.retired.absorb(&old.stats);
        true
    }

    /// Packet `i` belongs to a connection no longer in its slot (a copy sent again before its
    /// sender had everything acknowledged, or such a copy's ACK): it is discarded, a data
    /// packet's payload counted as a duplicate.
    fn stale(&mut self, i: PktId, cx: &mut Ctx) {
        let pkt = cx.pkts.get(i);
        if pkt.kind == PacketKind::Data {
            self.flows.retired.duplicate_bytes += pkt.payload_bytes as u64;
        }
        cx.pkts.free(i);
    }
}
