//! The window transport: a TCP-like stack over a lossy fabric, with its congestion controller
//! (`rttlab_cc::WindowController`: Reno, DCTCP, Swift) behind a trait.
//!
//! Sequence numbers count packets of one MSS (`nic.mtu − nic.header` payload, or the flow's
//! write size when smaller; a sized flow's last packet is shorter); controllers see bytes.
//!
//! - **Sender.** Sends while the packets in flight (`pipe`, RFC 6675) are fewer than
//!   `cwnd / MSS` and its packets queued in the host's NIC stay within `tsq_limit` (Linux TCP
//!   Small Queues; the NIC's transmit completion frees the budget): first packets marked lost,
//!   then new data. The window grows only when it was the limit (RFC 7661). Each packet is stamped with its
//!   send time (RFC 7323 TSval). A SACK scoreboard marks a packet lost once `dupthresh` packets
//!   above it are SACKed (RFC 6675 `IsLost`, counted from the highest SACK as in FACK) — which is
//!   also the three-duplicate-ACK rule, since every duplicate ACK SACKs one packet more. The
//!   first loss starts fast recovery (the controller's `FastRetransmit` response; no growth until
//!   everything sent before it is acknowledged). Retransmission timer per RFC 6298:
//!   `RTO = max(min_rto, SRTT + 4·RTTVAR)`, doubled on each expiry; an expiry marks everything
//!   not SACKed lost and calls the controller's `Timeout` response. When the controller asks
//!   for pacing (Swift below one packet, §3.4), consecutive sends are at least its
//!   `pacing_delay` apart.
//! - **Receiver.** Cumulative ACKs with one SACK block, the one holding the packet that
//!   triggered the ACK (RFC 2018). Out-of-order, duplicate and hole-filling packets are
//!   acknowledged at once (RFC 5681 §4.2). With `delayed_ack`, in-order packets are acknowledged
//!   every second packet or after `delayed_ack_timeout`, and the CE echo follows DCTCP's
//!   two-state machine: when a packet's CE bit differs from the previous one, the packets held so
//!   far are acknowledged at once with the old ECE value (DCTCP §3.1; Linux
//!   `dctcp_ece_ack_update`). ACKs go out in `nic.ack_class`, echoing the acknowledged packet's
//!   hop count and its remote queuing (NIC Rx queue plus processing at this host, Swift §3.1).
//! - **RTT samples** are what the kernel measures (RFC 7323): ACK arrival minus the echoed
//!   TSval of the earliest packet the ACK covers, so a delayed ACK's hold time is included, and
//!   every stack queue at the sender (host port queue) too. The controller also gets the
//!   endpoint delay: the echoed remote queuing plus the ACK's own NIC-Rx delay here.

use crate::engine::{EventKind, LazyTimer};
use crate::flow::Tx;
use crate::network::Network;
use crate::packet::{Packet, PacketKind};
use crate::scenario::WindowConfig;
use rttlab_cc::{AckEvent, Loss, Rate, Time, WindowController};
use std::collections::VecDeque;

/// The timers of a window flow, as the `b` of its `Timer` events.
pub const TIMER_RTO: u32 = 0;
pub const TIMER_DELACK: u32 = 1;
pub const TIMER_START: u32 = 2;
pub const TIMER_PACE: u32 = 3;

/// Scoreboard state of a packet the sender has sent and not yet seen acknowledged cumulatively.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Sent {
    InFlight,
    Sacked,
    /// Deemed lost, waiting for retransmission.
    Lost,
    /// Retransmitted and in flight again.
    Retransmitted,
}

/// A window flow's sender and receiver state.
pub struct WindowTx {
    pub cc: Box<dyn WindowController>,
    cfg: WindowConfig,
    mss: u32,
    /// Flow size in bytes (`u64::MAX`: unbounded) and in packets.
    size: u64,
    total: u32,
    // Sender.
    una: u32,
    nxt: u32,
    /// State of each packet in `[una, nxt)`.
    board: VecDeque<Sent>,
    pipe: u32,
    /// One past the highest SACKed packet.
    high_sacked: u32,
    /// Packets below this were checked for loss.
    lost_scan: u32,
    /// No packet below this is `Lost`.
    retx_hint: u32,
    /// Loss recovery in progress until `una` reaches the first value.
    recovery: Option<(u32, Loss)>,
    /// Payload queued in the host's NIC, not yet serialized (TCP Small Queues).
    host_bytes: u64,
    /// What stopped the last send: the window (true), or the host queue or lack of data.
    cwnd_limited: bool,
    srtt: Option<(f64, f64)>,
    rto: Time,
    pub rto_timer: LazyTimer,
    /// When the last packet was sent (`Time::MAX`: never), for pacing.
    last_send: Time,
    pub pace_timer: LazyTimer,
    // Receiver.
    rcv_nxt: u32,
    /// Out-of-order ranges `[lo, hi)` above `rcv_nxt`, sorted, disjoint.
    ooo: Vec<[u32; 2]>,
    /// In-order packets received and not yet acknowledged (delayed ACK).
    pending: u32,
    ce_state: bool,
    /// TSval of the earliest unacknowledged in-order packet (RFC 7323 TS.Recent).
    ts_recent: Time,
    /// Hop count and remote queuing (ns) of the last data packet, for the next ACK to echo.
    echo: (u8, u32),
    pub delack_timer: LazyTimer,
}

impl WindowTx {
    pub fn new(cc: Box<dyn WindowController>, cfg: WindowConfig, mss: u32, size: Option<u64>) -> WindowTx {
        let total = size.map_or(u32::MAX, |s| u32::try_from(s.div_ceil(mss as u64)).expect("validated: fewer than 2^32 packets"));
        WindowTx {
            cc,
            rto: cfg.min_rto,
            cfg,
            mss,
            size: size.unwrap_or(u64::MAX),
            total,
            una: 0,
            nxt: 0,
            board: VecDeque::new(),
            pipe: 0,
            high_sacked: 0,
            lost_scan: 0,
            retx_hint: 0,
            recovery: None,
            host_bytes: 0,
            cwnd_limited: false,
            srtt: None,
            rto_timer: LazyTimer::default(),
            last_send: Time::MAX,
            pace_timer: LazyTimer::default(),
            rcv_nxt: 0,
            ooo: Vec::new(),
            pending: 0,
            ce_state: false,
            ts_recent: Time::ZERO,
            echo: (0, 0),
            delack_timer: LazyTimer::default(),
        }
    }

    /// Payload bytes before packet `seq`.
    fn bytes_before(&self, seq: u32) -> u64 {
        (seq as u64 * self.mss as u64).min(self.size)
    }

    /// Payload sent and not yet cumulatively acknowledged (RFC 5681 FlightSize).
    fn flight_bytes(&self) -> u64 {
        self.bytes_before(self.nxt) - self.bytes_before(self.una)
    }

    /// TCP Small Queues: another full packet would exceed `tsq_limit` (one packet always may go).
    fn host_queue_full(&self) -> bool {
        self.host_bytes > 0 && self.host_bytes + self.mss as u64 > self.cfg.tsq_limit.0
    }

    fn payload(&self, seq: u32) -> u32 {
        (self.bytes_before(seq + 1) - self.bytes_before(seq)) as u32
    }

    /// `cwnd / SRTT`: the rate the window allows (0 before the first RTT sample).
    pub fn rate(&self) -> Rate {
        match self.srtt {
            Some((srtt, _)) if srtt > 0.0 => Rate::of(self.cc.cwnd(), Time(srtt as u64)),
            _ => Rate::ZERO,
        }
    }

    fn state(&mut self, seq: u32) -> &mut Sent {
        &mut self.board[(seq - self.una) as usize]
    }

    /// The next packet to send: the first `Lost` one, else new data; `None` when neither.
    fn next_to_send(&mut self) -> Option<(u32, bool)> {
        let end = self.lost_scan.min(self.nxt);
        let mut s = self.retx_hint.max(self.una);
        while s < end && *self.state(s) != Sent::Lost {
            s += 1;
        }
        self.retx_hint = s;
        if s < end {
            return Some((s, true));
        }
        (self.nxt < self.total).then_some((self.nxt, false))
    }

    /// RFC 6298 §2: an RTT sample updates SRTT, RTTVAR and the RTO (and ends any backoff).
    fn rtt_sample(&mut self, r: Time) {
        let r = r.ps() as f64;
        let (srtt, rttvar) = match self.srtt {
            None => (r, r / 2.0),
            Some((s, v)) => (0.875 * s + 0.125 * r, 0.75 * v + 0.25 * (s - r).abs()),
        };
        self.srtt = Some((srtt, rttvar));
        self.rto = Time((srtt + 4.0 * rttvar) as u64).max(self.cfg.min_rto);
    }

    /// Takes a SACK block `[lo, hi)` into the scoreboard. Scans down from `hi` and stops at the
    /// first packet already SACKed: earlier ACKs reported the rest of a growing block.
    fn take_sack(&mut self, [lo, hi]: [u32; 2]) {
        let (lo, hi) = (lo.max(self.una), hi.min(self.nxt));
        for seq in (lo..hi).rev() {
            match *self.state(seq) {
                Sent::Sacked => break,
                Sent::InFlight | Sent::Retransmitted => self.pipe -= 1,
                Sent::Lost => {}
            }
            *self.state(seq) = Sent::Sacked;
        }
        self.high_sacked = self.high_sacked.max(hi);
    }

    /// Advances `una` to `ack`; returns the packets newly acknowledged.
    fn take_cumulative(&mut self, ack: u32) -> u32 {
        let ack = ack.min(self.nxt);
        let n = ack.saturating_sub(self.una);
        for _ in 0..n {
            if matches!(self.board.pop_front(), Some(Sent::InFlight | Sent::Retransmitted)) {
                self.pipe -= 1;
            }
        }
        self.una += n;
        self.lost_scan = self.lost_scan.max(self.una);
        n
    }

    /// RFC 6675 `IsLost`: a packet still in flight with `dupthresh` SACKed packets above it is
    /// lost. Returns whether any packet was newly marked.
    fn mark_losses(&mut self) -> bool {
        let limit = self.high_sacked.saturating_sub(self.cfg.dupthresh).min(self.nxt);
        let mut any = false;
        while self.lost_scan < limit {
            let s = self.lost_scan;
            if *self.state(s) == Sent::InFlight {
                *self.state(s) = Sent::Lost;
                self.pipe -= 1;
                self.retx_hint = self.retx_hint.min(s);
                any = true;
            }
            self.lost_scan += 1;
        }
        any
    }

    /// Receiver: records out-of-order packet `seq`; returns the block now holding it.
    fn insert_ooo(&mut self, seq: u32) -> [u32; 2] {
        let i = self.ooo.partition_point(|r| r[1] < seq);
        if i < self.ooo.len() && self.ooo[i][1] == seq {
            self.ooo[i][1] += 1;
            if i + 1 < self.ooo.len() && self.ooo[i + 1][0] == seq + 1 {
                self.ooo[i][1] = self.ooo[i + 1][1];
                self.ooo.remove(i + 1);
            }
        } else if i < self.ooo.len() && self.ooo[i][0] == seq + 1 {
            self.ooo[i][0] = seq;
        } else {
            self.ooo.insert(i, [seq, seq + 1]);
        }
        self.ooo[i]
    }

    fn received(&self, seq: u32) -> bool {
        seq < self.rcv_nxt || self.ooo.iter().any(|r| r[0] <= seq && seq < r[1])
    }
}

impl Network {
    /// Sends what flow `f`'s window allows: lost packets first, then new data.
    pub(crate) fn window_send(&mut self, f: u32) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        if now < flow.start {
            return;
        }
        let (src, dst, class, hash) = (flow.src, flow.dst, flow.class, flow.hash[0]);
        let port = self.hosts[src as usize].port;
        loop {
            let flow = &mut self.flows[f as usize];
            let Tx::Window(w) = &mut flow.tx else { unreachable!("window flow") };
            let cwnd_packets = (w.cc.cwnd() / w.mss as u64).max(1);
            w.cwnd_limited = w.pipe as u64 >= cwnd_packets;
            if w.cwnd_limited || w.host_queue_full() {
                break;
            }
            let Some((seq, retransmit)) = w.next_to_send() else { break };
            if !retransmit && now >= flow.stop {
                break; // the application closed the connection: repair, but send nothing new
            }
            if let Some(gap) = w.cc.pacing_delay().filter(|_| w.last_send != Time::MAX) {
                let at = w.last_send + gap;
                if now < at {
                    let timer = w.pace_timer.set(at);
                    self.push_timer(timer, f, TIMER_PACE);
                    break;
                }
            }
            w.last_send = now;
            if retransmit {
                *w.state(seq) = Sent::Retransmitted;
                flow.stats.retransmits += 1;
            } else {
                w.board.push_back(Sent::InFlight);
                w.nxt += 1;
            }
            w.pipe += 1;
            let payload = w.payload(seq);
            w.host_bytes += payload as u64;
            flow.stats.tx_bytes += payload as u64;
            if !w.rto_timer.running() {
                let at = w.rto_timer.set(now + w.rto);
                self.push_timer(at, f, TIMER_RTO);
            }
            let pkt = Packet {
                flow: f,
                dst_host: dst,
                hash,
                payload_bytes: payload,
                seq,
                t_send: now,
                ..Packet::new(PacketKind::Data, class, payload + self.header_bytes)
            };
            let i = self.alloc_packet(pkt);
            self.enqueue(port, class as usize, i);
        }
    }

    /// The host's NIC finished sending data packet `pkt`: its TCP Small Queues budget is free.
    pub(crate) fn window_tx_done(&mut self, pkt: Packet) {
        let w = self.flows[pkt.flow as usize].window();
        let held = w.host_queue_full();
        w.host_bytes -= pkt.payload_bytes as u64;
        if held {
            self.window_send(pkt.flow);
        }
    }

    fn push_timer(&mut self, at: Option<Time>, f: u32, timer: u32) {
        if let Some(t) = at {
            self.events.push(t, EventKind::Timer, f, timer);
        }
    }

    /// Sender: an ACK of flow `f` reached the stack `rx_delay` after it reached the NIC.
    pub(crate) fn window_ack(&mut self, ack: Packet, rx_delay: Time) {
        let now = self.now;
        let f = ack.flow;
        let flow = &mut self.flows[f as usize];
        let w = flow.window();
        if ack.sack[1] > ack.sack[0] {
            w.take_sack(ack.sack);
        }
        let una_before = w.una;
        let acked = w.take_cumulative(ack.seq);
        if w.recovery.is_some_and(|(end, _)| w.una >= end) {
            w.recovery = None;
        }
        if w.mark_losses() && w.recovery.is_none() {
            w.cc.on_loss(Loss::FastRetransmit, w.flight_bytes(), now);
            w.recovery = Some((w.nxt, Loss::FastRetransmit));
        }
        let rtt = (acked > 0).then(|| self.noisy_rtt(f, now - ack.t_send));
        let w = self.flows[f as usize].window();
        if let Some(r) = rtt {
            w.rtt_sample(r);
        }
        let event = AckEvent {
            now,
            acked_bytes: w.bytes_before(w.una) - w.bytes_before(una_before),
            ece: ack.ecn,
            rtt,
            snd_una: w.bytes_before(w.una),
            snd_nxt: w.bytes_before(w.nxt),
            in_recovery: matches!(w.recovery, Some((_, Loss::FastRetransmit))),
            cwnd_limited: w.cwnd_limited,
            endpoint_delay: Time::from_ns(ack.remote_queuing_ns as u64) + rx_delay,
            hops: ack.echo_hops,
        };
        w.cc.on_ack(&event);
        // RFC 6298 §5: restart the timer when new data is acknowledged, stop it when all is.
        let timer = if w.una == w.nxt {
            w.rto_timer.stop();
            None
        } else if acked > 0 {
            w.rto_timer.set(now + w.rto)
        } else {
            None
        };
        let done = w.una == w.total;
        self.push_timer(timer, f, TIMER_RTO);
        if let Some(r) = rtt {
            self.record_rtt(f, r);
        }
        if done {
            self.sender_done(f);
        } else {
            self.window_send(f);
        }
    }

    /// Flow `f`'s timer `timer` has an event now.
    pub(crate) fn window_timer(&mut self, f: u32, timer: u32) {
        let now = self.now;
        if timer == TIMER_START {
            return self.window_send(f);
        }
        // A stale event of a slot now holding another flow finds its timers not armed then.
        let Tx::Window(w) = &mut self.flows[f as usize].tx else { return };
        let t = match timer {
            TIMER_RTO => &mut w.rto_timer,
            TIMER_PACE => &mut w.pace_timer,
            _ => &mut w.delack_timer,
        };
        match t.fire(now) {
            Ok(false) => {}
            Err(at) => self.push_timer(Some(at), f, timer),
            Ok(true) if timer == TIMER_RTO => self.window_timeout(f),
            Ok(true) if timer == TIMER_PACE => self.window_send(f),
            Ok(true) => {
                let (ce, ts) = (w.ce_state, w.ts_recent);
                if w.pending > 0 {
                    self.window_send_ack(f, ce, ts, [0, 0]);
                }
            }
        }
    }

    /// RFC 6298 §5.4–5.7 with RFC 6675 §5.1: every packet not SACKed is lost; back off the timer.
    fn window_timeout(&mut self, f: u32) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        flow.stats.timeouts += 1;
        let w = flow.window();
        w.cc.on_loss(Loss::Timeout, w.flight_bytes(), now);
        for s in w.board.iter_mut() {
            if *s != Sent::Sacked {
                *s = Sent::Lost;
            }
        }
        w.pipe = 0;
        w.retx_hint = w.una;
        w.lost_scan = w.nxt;
        w.recovery = Some((w.nxt, Loss::Timeout));
        w.rto = Time(w.rto.ps().saturating_mul(2)).min(Time::from_us(60_000_000));
        // Nothing is in flight now: the timer restarts with the retransmission (RFC 6298 §5.5–5.6),
        // which pacing may hold back.
        w.rto_timer.stop();
        self.window_send(f);
    }

    /// Receiver: data packet `i` of a window flow reached the stack `rx_delay` after the NIC.
    pub(crate) fn window_deliver(&mut self, i: u32, pkt: Packet, rx_delay: Time) {
        self.free_packet(i);
        let now = self.now;
        let f = pkt.flow;
        let flow = &mut self.flows[f as usize];
        let w = flow.window();
        w.echo = (pkt.hops, u32::try_from(rx_delay.ps() / 1000).unwrap_or(u32::MAX));
        let seq = pkt.seq;
        if w.received(seq) {
            flow.stats.duplicate_bytes += pkt.payload_bytes as u64;
            return self.window_send_ack(f, pkt.ecn, pkt.t_send, [0, 0]);
        }
        if seq != w.rcv_nxt {
            let block = w.insert_ooo(seq);
            self.record_delivery(f, pkt.payload_bytes, pkt.wire_bytes);
            return self.window_send_ack(f, pkt.ecn, pkt.t_send, block);
        }
        let delayed = w.cfg.delayed_ack;
        if delayed && w.pending > 0 && pkt.ecn != w.ce_state {
            // DCTCP: acknowledge what was held with the old CE state before switching.
            let (ce, ts) = (w.ce_state, w.ts_recent);
            self.window_send_ack(f, ce, ts, [0, 0]);
        }
        let w = self.flows[f as usize].window();
        w.ce_state = pkt.ecn;
        if w.pending == 0 {
            w.ts_recent = pkt.t_send;
        }
        w.rcv_nxt += 1;
        let filled_hole = w.ooo.first().is_some_and(|r| r[0] == w.rcv_nxt);
        if filled_hole {
            w.rcv_nxt = w.ooo.remove(0)[1];
        }
        w.pending += 1;
        let (ce, ts) = (w.ce_state, w.ts_recent);
        let now_ack = !delayed || w.pending >= 2 || filled_hole || !w.ooo.is_empty();
        let timer = if now_ack {
            None
        } else {
            let timeout = w.cfg.delayed_ack_timeout;
            w.delack_timer.set(now + timeout)
        };
        self.push_timer(timer, f, TIMER_DELACK);
        self.record_delivery(f, pkt.payload_bytes, pkt.wire_bytes);
        if now_ack {
            self.window_send_ack(f, ce, ts, [0, 0]);
        }
    }

    /// Receiver: sends flow `f`'s cumulative ACK now, echoing `ece` and TSval `ts`, with SACK
    /// block `sack`; nothing stays pending.
    fn window_send_ack(&mut self, f: u32, ece: bool, ts: Time, sack: [u32; 2]) {
        let flow = &mut self.flows[f as usize];
        let (src, dst, hash) = (flow.src, flow.dst, flow.hash[1]);
        let w = flow.window();
        w.pending = 0;
        w.delack_timer.stop();
        let pkt = Packet {
            ecn: ece,
            echo_hops: w.echo.0,
            remote_queuing_ns: w.echo.1,
            flow: f,
            dst_host: src,
            hash,
            seq: w.rcv_nxt,
            sack,
            t_send: ts,
            ..Packet::new(PacketKind::Ack, self.ack_class as u8, self.ack_bytes)
        };
        let i = self.alloc_packet(pkt);
        let port = self.hosts[dst as usize].port;
        self.enqueue(port, self.ack_class, i);
    }
}
