//! Host NICs and the message transport (TIMELY §3, Fig. 6).
//!
//! - **Rate control engine** (§3.3): one scheduler per host for all its flows. Each flow's next
//!   segment gets a send time from its size, the flow's current rate and the last transmission;
//!   segments whose time has come are served round-robin; a rate change is applied lazily when
//!   the time comes (recompute, re-queue if now too early). A static cap on a flow's outstanding
//!   bytes is the safeguard.
//! - **Segmenter**: a released segment is handed to the NIC (`t_send`), which sends it as MTU
//!   packets back to back at line rate, or, with `nic.pacing_rate`, one packet every
//!   `wire bytes / pacing rate` while other flows' segments use the gaps (§5 "Additional pacing
//!   opportunities", Fig. 16).
//! - **Receiver**: the NIC acknowledges each whole segment when its last packet arrives, at
//!   once, with a high-priority ACK (§3.1 "prompt ACK generation").
//! - **RTT measurement engine** (§3.1): on the completion,
//!   `rtt = t_completion − t_send − segment_bytes / NIC line rate`, plus optional uniform noise;
//!   with NIC pacing the pacer's serialization (`segment_bytes / pacing rate`) is subtracted
//!   instead, "treating it as a lower transmission line rate" (§5).

use crate::engine::{EventKind, Rng};
use crate::network::Network;
use crate::packet::{Packet, PacketKind};
use crate::port::MAX_CLASSES;
use rand::Rng as _;
use rand_distr::{Distribution, Exp1};
use rttlab_cc::{Completion, LineRate, PatchedTimely, Rate, RateController, Time, Timely};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A segment handed to the NIC, sent packet by packet from its front.
#[derive(Copy, Clone, Debug)]
pub struct Segment {
    pub flow: u32,
    pub bytes: u32,
    pub sent: u32,
    pub t_send: Time,
    /// The oldest segment of its flow in the NIC: only that one may send.
    pub first: bool,
    /// Its next packet may not start before this (NIC pacing).
    pub next_at: Time,
}

pub struct Host {
    pub node: u32,
    pub port: u32,
    pub line_rate: Rate,
    pub flows: Vec<u32>,
    /// Flows waiting for their next send time: (time, insertion order, flow).
    sched: BinaryHeap<Reverse<(Time, u64, u32)>>,
    sched_seq: u64,
    /// Time of the pending `HostWake` event (`Time::MAX`: none).
    wake_at: Time,
    /// Segments handed to the NIC, per priority class.
    pub nic: [VecDeque<Segment>; MAX_CLASSES],
    /// Time of the pending pacer `Kick` of this host's port (`Time::MAX`: none).
    pacer_kick_at: Time,
    /// RTT-noise draws.
    pub rng: Rng,
}

impl Host {
    pub fn new(node: u32, port: u32, line_rate: Rate, rng: Rng) -> Host {
        Host {
            node,
            port,
            line_rate,
            flows: Vec::new(),
            sched: BinaryHeap::new(),
            sched_seq: 0,
            wake_at: Time::MAX,
            nic: Default::default(),
            pacer_kick_at: Time::MAX,
            rng,
        }
    }

    /// The pacer's wake-up at `at` happened (or was another kick).
    pub(crate) fn pacer_kick_done(&mut self, at: Time) {
        if at >= self.pacer_kick_at {
            self.pacer_kick_at = Time::MAX;
        }
    }
}

/// The flow's congestion controller, dispatched by `match`.
pub enum Cc {
    LineRate(LineRate),
    Timely(Box<Timely>),
    PatchedTimely(Box<PatchedTimely>),
}

impl Cc {
    fn on_completion(&mut self, c: &Completion) {
        match self {
            Cc::LineRate(x) => x.on_completion(c),
            Cc::Timely(x) => x.on_completion(c),
            Cc::PatchedTimely(x) => x.on_completion(c),
        }
    }
    pub fn rate(&self) -> Rate {
        match self {
            Cc::LineRate(x) => x.rate(),
            Cc::Timely(x) => x.rate(),
            Cc::PatchedTimely(x) => x.rate(),
        }
    }
}

/// An application-limited source: messages of `message` bytes offered at `rate`.
pub struct App {
    pub rate: Rate,
    pub message: u64,
    pub poisson: bool,
    /// Arrival time of the next message.
    pub next_message: Time,
}

pub struct Flow {
    pub src: u32,
    pub dst: u32,
    pub class: u8,
    pub cc: Cc,
    pub start: Time,
    /// Bytes the connection may still hand to the NIC (`u64::MAX`: unbounded).
    pub unsent: u64,
    pub app: Option<App>,
    /// Application bytes that arrived and are not yet handed to the NIC.
    pub ready: u64,
    last_release: Time,
    last_release_bytes: u64,
    pub outstanding: u64,
    in_sched: bool,
    /// Segments of this flow in the NIC.
    nic_segments: u32,
    pub rng: Rng,
    /// Receiver: a CE mark arrived on the current segment.
    ce_seen: bool,
    pub stats: FlowStats,
}

#[derive(Default, Clone, Debug)]
pub struct FlowStats {
    /// Payload put on the wire by the sender.
    pub tx_bytes: u64,
    pub delivered_bytes: u64,
    /// Delivered after the warm-up: payload, and wire bytes with headers.
    pub measured_bytes: u64,
    pub measured_wire_bytes: u64,
    pub acked_bytes: u64,
    pub rtt_sum: u128,
    pub rtt_samples: u64,
    /// When the last byte of a sized flow was delivered.
    pub finish: Option<Time>,
    pub size: Option<u64>,
}

impl Flow {
    pub fn new(src: u32, dst: u32, class: u8, cc: Cc, start: Time, size: Option<u64>, app: Option<App>, rng: Rng) -> Flow {
        Flow {
            src,
            dst,
            class,
            cc,
            start,
            unsent: size.unwrap_or(u64::MAX),
            app,
            ready: 0,
            last_release: Time::ZERO,
            last_release_bytes: 0,
            outstanding: 0,
            in_sched: false,
            nic_segments: 0,
            rng,
            ce_seen: false,
            stats: FlowStats { size, ..Default::default() },
        }
    }

    /// Moves application messages that have arrived by `now` into `ready`.
    fn refill(&mut self, now: Time) {
        let Some(app) = &mut self.app else { return };
        while app.next_message <= now && self.ready < self.unsent {
            self.ready = (self.ready + app.message).min(self.unsent);
            let mean = app.rate.serialization(app.message);
            let gap = if app.poisson {
                let x: f64 = Exp1.sample(&mut self.rng);
                Time((x * mean.ps() as f64).round().max(1.0) as u64)
            } else {
                mean
            };
            app.next_message += gap;
        }
    }

    /// Bytes of the next segment, and when its data is there.
    fn next_segment(&self, segment: u64) -> (u64, Time) {
        match &self.app {
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
        flow.refill(now);
        if flow.unsent == 0 {
            return None;
        }
        let (bytes, data_at) = flow.next_segment(self.segment_bytes);
        if flow.outstanding + bytes > self.max_outstanding {
            return None;
        }
        let paced = if flow.last_release_bytes == 0 {
            flow.start
        } else {
            flow.last_release + flow.cc.rate().serialization(flow.last_release_bytes)
        };
        Some(paced.max(data_at).max(flow.start).max(now))
    }

    /// Puts flow `f` in its host's scheduler if it is not there and has something to send.
    pub(crate) fn schedule_flow(&mut self, f: u32) {
        if self.flows[f as usize].in_sched {
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
            self.flows[f as usize].in_sched = false;
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
        self.flows[f as usize].in_sched = true;
        let host = &mut self.hosts[h as usize];
        host.sched.push(Reverse((t, host.sched_seq, f)));
        host.sched_seq += 1;
    }

    /// Hands flow `f`'s next segment to its NIC; `t_send` is now.
    fn release_segment(&mut self, f: u32) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        let (bytes, _) = flow.next_segment(self.segment_bytes);
        if flow.app.is_some() {
            flow.ready -= bytes;
        }
        if flow.unsent != u64::MAX {
            flow.unsent -= bytes;
        }
        flow.outstanding += bytes;
        flow.last_release = now;
        flow.last_release_bytes = bytes;
        let seg = Segment { flow: f, bytes: bytes as u32, sent: 0, t_send: now, first: flow.nic_segments == 0, next_at: now };
        flow.nic_segments += 1;
        self.hosts[flow.src as usize].nic[flow.class as usize].push_back(seg);
    }

    /// The next data packet of class `c` from host `h`'s NIC, if it has one: the next
    /// MTU-sized piece of the oldest segment free to send. Without NIC pacing that is always
    /// the head segment, sent back to back; with it, a segment waits `wire / pacing rate`
    /// between packets and the NIC serves other flows' segments meanwhile.
    pub(crate) fn next_data_packet(&mut self, h: u32, c: usize) -> Option<u32> {
        let now = self.now;
        let host = &mut self.hosts[h as usize];
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
                self.events.push(wait, EventKind::Kick, host.port, 0);
            }
            return None;
        };
        let seg = &mut host.nic[c][idx];
        let payload = (seg.bytes - seg.sent).min(self.payload_per_packet);
        seg.sent += payload;
        if let Some(pacing) = self.pacing_rate {
            seg.next_at = now + pacing.serialization((payload + self.header_bytes) as u64);
        }
        let last = seg.sent == seg.bytes;
        let s = *seg;
        if last {
            let queue = &mut host.nic[c];
            queue.remove(idx);
            if let Some(next) = queue.iter_mut().skip(idx).find(|x| x.flow == s.flow) {
                next.first = true;
            }
        }
        let flow = &mut self.flows[s.flow as usize];
        flow.nic_segments -= last as u32;
        flow.stats.tx_bytes += payload as u64;
        let pkt = Packet {
            kind: PacketKind::Data,
            class: c as u8,
            ecn: false,
            last_of_segment: last,
            flow: s.flow,
            dst_host: flow.dst,
            wire_bytes: payload + self.header_bytes,
            payload_bytes: payload,
            segment_bytes: s.bytes,
            in_port: u32::MAX,
            t_send: s.t_send,
        };
        Some(self.pkts.alloc(pkt))
    }

    /// Data or ACK packet `i` arrived at host `h`.
    pub(crate) fn host_receive(&mut self, h: u32, i: u32) {
        let pkt = *self.pkts.get(i);
        if pkt.kind == PacketKind::Data {
            self.deliver(h, i, pkt);
        } else {
            self.pkts.free(i);
            self.complete(pkt);
        }
    }

    /// Receiver side: count the payload, and acknowledge the segment on its last packet by
    /// turning that packet into the ACK in place.
    fn deliver(&mut self, h: u32, i: u32, pkt: Packet) {
        let now = self.now;
        let flow = &mut self.flows[pkt.flow as usize];
        let st = &mut flow.stats;
        st.delivered_bytes += pkt.payload_bytes as u64;
        if now >= self.warmup {
            st.measured_bytes += pkt.payload_bytes as u64;
            st.measured_wire_bytes += pkt.wire_bytes as u64;
        }
        if st.size == Some(st.delivered_bytes) {
            st.finish = Some(now);
        }
        flow.ce_seen |= pkt.ecn;
        if !pkt.last_of_segment {
            self.pkts.free(i);
            return;
        }
        let ack = self.pkts.get_mut(i);
        ack.kind = PacketKind::Ack;
        ack.class = self.ack_class as u8;
        ack.ecn = flow.ce_seen;
        ack.dst_host = flow.src;
        ack.wire_bytes = self.ack_bytes;
        ack.payload_bytes = 0;
        flow.ce_seen = false;
        let port = self.hosts[h as usize].port;
        self.enqueue(port, self.ack_class, i);
    }

    /// Sender side: a completion event. Take the RTT sample, feed the controller, and let the
    /// flow send again if the cap held it.
    fn complete(&mut self, ack: Packet) {
        let now = self.now;
        let f = ack.flow;
        let flow = &mut self.flows[f as usize];
        let host = &mut self.hosts[flow.src as usize];
        flow.outstanding -= ack.segment_bytes as u64;
        let serialization = self.pacing_rate.unwrap_or(host.line_rate).serialization(ack.segment_bytes as u64);
        let mut rtt = (now - ack.t_send).saturating_sub(serialization);
        if self.rtt_noise > Time::ZERO {
            rtt += Time(host.rng.random_range(0..=self.rtt_noise.ps()));
        }
        let app_rate = flow.app.as_ref().map(|a| a.rate);
        flow.cc.on_completion(&Completion { now, rtt, acked_bytes: ack.segment_bytes as u64, app_rate });
        flow.stats.acked_bytes += ack.segment_bytes as u64;
        if now >= self.warmup {
            flow.stats.rtt_sum += rtt.ps() as u128;
            flow.stats.rtt_samples += 1;
            self.rtt_hist.record(rtt.ps().div_ceil(1000).max(1)).expect("auto-resizing histogram");
        }
        self.schedule_flow(f);
    }
}
