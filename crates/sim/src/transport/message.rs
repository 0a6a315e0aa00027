//! The message transport (TIMELY §3, Fig. 6).
//!
//! - **Rate control engine** (§3.3): one scheduler per host for all its flows. Each flow's next
//!   segment gets a send time from its size, the flow's current rate and the last transmission;
//!   segments whose time has come are served round-robin; a rate change is applied lazily when
//!   the time comes (recompute, re-queue if now too early). A static cap on a flow's outstanding
//!   bytes is the safeguard.
//! - **Segmenter**: a released segment is handed to the NIC (`t_send`), which sends it as MTU
//!   packets (`crate::nic`).
//! - **Receiver**: the NIC acknowledges each whole segment when its last packet arrives, at
//!   once, with a high-priority ACK (§3.1 "prompt ACK generation").
//! - **RTT measurement engine** (§3.1): on the completion,
//!   `rtt = t_completion − t_send − segment_bytes / NIC line rate`, plus optional uniform noise;
//!   with NIC pacing the pacer's serialization (`segment_bytes / pacing rate`) is subtracted
//!   instead, "treating it as a lower transmission line rate" (§5).

use crate::engine::{exponential, EventKind};
use crate::flow::Tx;
use crate::network::Network;
use crate::nic::Segment;
use crate::packet::{Packet, PacketKind};
use rttlab_cc::{Completion, Rate, RateController, Time};
use std::cmp::Reverse;

/// An application-limited source: messages of `message` bytes offered at `rate`.
pub struct App {
    pub rate: Rate,
    pub message: u64,
    pub poisson: bool,
    /// Arrival time of the next message.
    pub next_message: Time,
}

/// A message-transport flow's sender and receiver state.
pub struct MessageTx {
    pub cc: Box<dyn RateController>,
    /// Bytes the connection may still hand to the NIC (`u64::MAX`: unbounded).
    pub unsent: u64,
    pub app: Option<App>,
    /// Application bytes that arrived and are not yet handed to the NIC.
    pub ready: u64,
    last_release: Time,
    last_release_bytes: u64,
    pub outstanding: u64,
    pub(crate) in_sched: bool,
    /// Segments of this flow in the NIC.
    pub(crate) nic_segments: u32,
    /// Receiver: a CE mark arrived on the current segment.
    ce_seen: bool,
    /// Data exists only when offered (`offer`): an RPC connection.
    demand: bool,
}

impl MessageTx {
    pub fn new(cc: Box<dyn RateController>, size: Option<u64>, app: Option<App>, demand: bool) -> MessageTx {
        MessageTx {
            cc,
            unsent: size.unwrap_or(u64::MAX),
            app,
            ready: 0,
            last_release: Time::ZERO,
            last_release_bytes: 0,
            outstanding: 0,
            in_sched: false,
            nic_segments: 0,
            ce_seen: false,
            demand,
        }
    }

    /// The application hands `bytes` more to send (on-demand connections).
    pub fn offer(&mut self, bytes: u64) {
        self.ready += bytes;
    }

    /// Moves application messages that have arrived by `now` into `ready`.
    fn refill(&mut self, now: Time, rng: &mut crate::engine::Rng) {
        let Some(app) = &mut self.app else { return };
        while app.next_message <= now && self.ready < self.unsent {
            self.ready = (self.ready + app.message).min(self.unsent);
            let mean = app.rate.serialization(app.message);
            let gap = if app.poisson {
                exponential(rng, mean.ps() as f64)
            } else {
                mean
            };
            app.next_message += gap;
        }
    }

    /// Bytes of the next segment, and when its data is there.
    fn next_segment(&self, segment: u64) -> (u64, Time) {
        match &self.app {
            None if self.demand => (segment.min(self.ready), Time::ZERO),
            None => (segment.min(self.unsent), Time::ZERO),
            Some(_) if self.ready > 0 => (segment.min(self.ready), Time::ZERO),
            Some(app) => (segment.min(app.message).min(self.unsent), app.next_message),
        }
    }
}

impl Network {
    /// When flow `f` may release its next segment, with the rate it has now; `None` while it has
    /// nothing left to send or its outstanding bytes are at the cap (an ACK re-arms it).
    fn release_time(&mut self, f: u32) -> Option<Time> {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        let (start, stop) = (flow.start, flow.stop);
        let rng = &mut flow.rng;
        let Tx::Message(m) = &mut flow.tx else { unreachable!("message flow") };
        m.refill(now, rng);
        if m.unsent == 0 || (m.demand && m.ready == 0) {
            return None;
        }
        let (bytes, data_at) = m.next_segment(self.segment_bytes);
        if m.outstanding + bytes > self.max_outstanding {
            return None;
        }
        let paced = if m.last_release_bytes == 0 {
            start
        } else {
            m.last_release + m.cc.rate().serialization(m.last_release_bytes)
        };
        Some(paced.max(data_at).max(start).max(now)).filter(|&t| t < stop)
    }

    /// Puts flow `f` in its host's scheduler if it is not there and has something to send.
    pub(crate) fn schedule_flow(&mut self, f: u32) {
        if self.flows[f as usize].message().in_sched {
            return;
        }
        if let Some(t) = self.release_time(f) {
            let h = self.flows[f as usize].src;
            self.requeue(h, f, t);
            self.arm_wake(h);
        }
    }

    fn arm_wake(&mut self, h: u32) {
        let host = &mut self.hosts[h as usize];
        if let Some(Reverse((t, _, _))) = host.sched.peek() {
            if *t < host.wake_at {
                host.wake_at = *t;
                self.events.push(*t, EventKind::HostWake, h, 0);
            }
        }
    }

    /// Host `h`'s scheduler: release every segment whose time has come, round-robin.
    pub(crate) fn host_wake(&mut self, h: u32, at: Time) {
        let host = &mut self.hosts[h as usize];
        if at != host.wake_at {
            return; // superseded by an earlier wake-up
        }
        host.wake_at = Time::MAX;
        while let Some(&Reverse((t, _, f))) = self.hosts[h as usize].sched.peek() {
            if t > self.now {
                break;
            }
            self.hosts[h as usize].sched.pop();
            self.flows[f as usize].message().in_sched = false;
            match self.release_time(f) {
                None => {}
                // The rate fell since the time was computed: re-queue (TIMELY §5, lazy update).
                Some(t) if t > self.now => self.requeue(h, f, t),
                Some(_) => {
                    self.release_segment(f);
                    self.schedule_flow(f);
                }
            }
        }
        self.arm_wake(h);
        let port = self.hosts[h as usize].port;
        self.try_tx(port);
    }

    /// Puts flow `f` in host `h`'s scheduler for time `t`.
    fn requeue(&mut self, h: u32, f: u32, t: Time) {
        self.flows[f as usize].message().in_sched = true;
        let host = &mut self.hosts[h as usize];
        host.sched.push(Reverse((t, host.sched_seq, f)));
        host.sched_seq += 1;
    }

    /// Hands flow `f`'s next segment to its NIC; `t_send` is now.
    fn release_segment(&mut self, f: u32) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        let (src, class) = (flow.src, flow.class);
        let m = flow.message();
        let (bytes, _) = m.next_segment(self.segment_bytes);
        if m.app.is_some() || m.demand {
            m.ready -= bytes;
        }
        if m.unsent != u64::MAX {
            m.unsent -= bytes;
        }
        m.outstanding += bytes;
        m.last_release = now;
        m.last_release_bytes = bytes;
        let seg = Segment { flow: f, bytes: bytes as u32, sent: 0, t_send: now, first: m.nic_segments == 0, next_at: now };
        m.nic_segments += 1;
        self.hosts[src as usize].nic[class as usize].push_back(seg);
    }

    /// Receiver side: count the payload, and acknowledge the segment on its last packet by
    /// turning that packet into the ACK in place.
    pub(crate) fn message_deliver(&mut self, h: u32, i: u32, pkt: Packet) {
        self.record_delivery(pkt.flow, pkt.payload_bytes, pkt.wire_bytes);
        let flow = &mut self.flows[pkt.flow as usize];
        let (src, hash) = (flow.src, flow.hash[1]);
        let m = flow.message();
        m.ce_seen |= pkt.ecn;
        if !pkt.last_of_segment {
            self.free_packet(i);
            return;
        }
        let ack = self.pkts.get_mut(i);
        ack.kind = PacketKind::Ack;
        ack.class = self.ack_class as u8;
        ack.ecn = m.ce_seen;
        ack.dst_host = src;
        ack.hash = hash;
        ack.wire_bytes = self.ack_bytes;
        ack.payload_bytes = 0;
        m.ce_seen = false;
        let port = self.hosts[h as usize].port;
        self.enqueue(port, self.ack_class, i);
    }

    /// Sender side: a completion event. Take the RTT sample, feed the controller, and let the
    /// flow send again if the cap held it.
    pub(crate) fn message_complete(&mut self, ack: Packet) {
        let now = self.now;
        let f = ack.flow;
        let line_rate = self.hosts[self.flows[f as usize].src as usize].line_rate;
        let serialization = self.pacing_rate.unwrap_or(line_rate).serialization(ack.segment_bytes as u64);
        let rtt = self.noisy_rtt(f, (now - ack.t_send).saturating_sub(serialization));
        let m = self.flows[f as usize].message();
        m.outstanding -= ack.segment_bytes as u64;
        let app_rate = m.app.as_ref().map(|a| a.rate);
        m.cc.on_completion(&Completion { now, rtt, acked_bytes: ack.segment_bytes as u64, app_rate });
        let done = m.unsent == 0 && m.outstanding == 0;
        self.record_rtt(f, rtt);
        if done {
            self.sender_done(f);
        } else {
            self.schedule_flow(f);
        }
    }
}
