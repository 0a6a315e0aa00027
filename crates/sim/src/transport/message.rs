//! The message transport (TIMELY §3, Fig. 6).
//!
//! - **Rate control engine** (§3.3): one scheduler per host for all its flows. Each flow's next
//!   segment gets a send time from its size, the flow's current rate and the last transmission;
//!   segments whose time has come are served round-robin; a rate change is applied lazily when
//!   the time comes (recompute, re-queue if now too early). A static cap on a flow's outstanding
//!   bytes is the safeguard.
//! - **Segmenter**: a released segment is handed to the NIC (`t_send`), which sends it as MTU
//!   packets ([`crate::host::nic`]).
//! - **Receiver**: the NIC acknowledges each whole segment when its last packet arrives, at
//!   once, with a high-priority ACK (§3.1 "prompt ACK generation").
//! - **RTT measurement engine** (§3.1): on the completion,
//!   `rtt = t_completion − t_send − segment_bytes / NIC line rate`, plus optional uniform noise;
//!   with NIC pacing the pacer's serialization (`segment_bytes / pacing rate`) is subtracted
//!   instead, "treating it as a lower transmission line rate" (§5).
//!
//! - **Loss recovery**: go-back-N as an RDMA reliable connection does it (InfiniBand
//!   Architecture Specification vol. 1, §9.7). Each packet carries a packet sequence number
//!   (PSN); the receiver accepts only the next one expected and answers a segment's last packet
//!   with a cumulative ACK. A packet beyond a gap is discarded, the first one of each gap
//!   answered with a NAK naming the expected PSN (a "PSN sequence error", sent once per gap); a
//!   copy of an accepted packet is discarded and, on a segment's last packet, acknowledged again.
//!   The sender goes back to the NAK's PSN and sends everything from there again; when nothing
//!   is acknowledged for `nic.retransmit_timeout` while packets are on the wire (the local ACK
//!   timeout, §9.7.6.1.3), it goes back to the oldest unacknowledged packet. The timeout does
//!   not back off, and retries are unlimited (a real queue pair fails after `retry_cnt`, at most
//!   7). A completion's RTT sample is what the host sees: from the segment's first release to
//!   its completion, recovery included.
//! - **Selective repeat** (`nic.recovery = "selective_repeat"`, IRN, SIGCOMM'18 §4): the
//!   receiver places every new packet, in order or not; a packet beyond a gap is answered with a
//!   NAK naming the expected PSN and, as its selective acknowledgement, its own and a bitmap of
//!   which of the `SACK_BITS` PSNs before it are placed (so that a NAK that comes late, as
//!   sprayed NAKs do, or not at all is covered by the next one); a segment's last
//!   packet, or one that closes a gap, with a cumulative ACK. The sender keeps the PSNs NAKs
//!   reported and resends a missing packet once `SR_DUPTHRESH` packets beyond it have arrived
//!   (a reordering allowance, as TCP's three duplicate ACKs), each once until its timeout,
//!   which resends every packet not reported.
//!
//! The two ends are two state machines, `MessageTx` at the sender and `MessageRx` in the
//! receiving NIC, and neither does I/O: the host's scheduler ([`crate::host::nic`]) asks
//! `MessageTx` when its next segment may go (`release_time`) and takes it (`release`); the
//! receiving NIC feeds `MessageRx` each packet (`on_data`, which says how to answer); an ACK or
//! NAK hands back the segments it completes (`pop_acked`), each of which feeds the rate
//! controller (`on_completion`), and says where the NIC must go back to (`rewind`).
//! [`crate::host`] does the rest.

use super::feedback::SampleFilter;
use super::path::Acked;
use crate::core::engine::{exponential, LazyTimer, Rng};
use rttlab_cc::{Completion, IntHop, Rate, RateController, Time};
use std::collections::VecDeque;

/// Whether PSN `a` comes before `b`: serial-number order (RFC 1982), so that PSNs may wrap.
pub fn psn_before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// A segment released and not yet acknowledged: its packets carry PSNs `[first_psn, end_psn)`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Unacked {
    pub first_psn: u32,
    pub end_psn: u32,
    pub bytes: u32,
    /// When it was first handed to the NIC.
    pub t_send: Time,
    /// Bytes the connection had handed to the NIC before it.
    pub released_before: u64,
    /// The connection's rate when it was released.
    pub rate: Rate,
}

/// What the receiver does with a data packet (IBA §9.7.5).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// The PSN expected: deliver it; on a segment's last packet, acknowledge every PSN before
    /// `ack` with the ECN echo `ece` (any accepted packet of the segment marked).
    Deliver { ack: Option<(u32, bool)> },
    /// A copy of a delivered packet: discard it; on a segment's last packet, acknowledge again.
    Duplicate { ack: Option<u32> },
    /// Beyond a gap, the first since the gap opened: discard it and NAK the expected PSN.
    Nak(u32),
    /// Beyond a gap already NAKed: discard it.
    Discard,
    /// Selective repeat: beyond a gap, new: place it, and NAK the expected PSN with the
    /// packet's own and the bitmap `below` of the PSNs placed before it (bit b: PSN psn − 1 − b)
    /// as its selective acknowledgement.
    Placed { nak: u32, psn: u32, below: u32 },
    /// Selective repeat: the packet was trimmed (its headers came, `switch.trimming`): NAK the
    /// expected PSN (the first) naming the trimmed one (the second), for the sender to resend
    /// at once.
    Trimmed { nak: u32, psn: u32 },
}

/// Selective repeat: a missing packet is resent once this many packets beyond it have arrived.
pub const SR_DUPTHRESH: u32 = 3;

/// Selective repeat: the PSNs before its own whose placement a NAK reports, a bit each (the
/// 32-bit word the NAK has room for).
pub const SACK_BITS: u32 = 32;

/// An application-limited source: messages of `message` bytes offered at `rate`.
pub struct App {
    pub rate: Rate,
    pub message: u64,
    pub poisson: bool,
    /// Arrival time of the next message.
    pub next_message: Time,
}

/// What a connection's host holds back, counted from `from` (the warm-up's end): TIMELY's
/// large-scale result rests on it ("low network queuing is maintained by moving queuing from the
/// shared network to the end-host", §6.2).
#[derive(Clone, Copy, Debug)]
pub struct HostWait {
    from: Time,
    /// The connection's line rate, which a rate below counts as binding.
    line_rate: Rate,
    /// Segments released, and those released while the rate was below the line rate.
    pub segments: u64,
    pub below_line_rate: u64,
    /// Σ over segments of the time each waited for the rate alone: from when its data was
    /// there, the outstanding cap and the send queue let it go, to its release.
    pub rate_wait: Time,
    /// ∫ (bytes the application handed over and the transport has not released) dt, byte·ps,
    /// credited up to `since`.
    queue_area: u128,
    since: Time,
}

impl HostWait {
    pub fn new(from: Time, line_rate: Rate) -> HostWait {
        HostWait { from, line_rate, segments: 0, below_line_rate: 0, rate_wait: Time::ZERO, queue_area: 0, since: Time::ZERO }
    }

    /// Credits the queue integral with `bytes` waiting from `at` (no earlier than the last
    /// credit) to `now`.
    fn credit(&mut self, at: Time, now: Time, bytes: u64) {
        let since = at.max(self.from);
        if now > since {
            self.queue_area += bytes as u128 * (now - since).ps() as u128;
        }
    }

    /// The queue holds `bytes` until `now`, when it changes: credit since the last change.
    fn changes(&mut self, now: Time, bytes: u64) {
        self.credit(self.since, now, bytes);
        self.since = now;
    }
}

/// A message-transport flow's sender and receiver state.
pub struct MessageTx {
    pub cc: Box<dyn RateController>,
    /// The connection may send from `start`, and no new data from `stop` (`Time::MAX`: never).
    start: Time,
    stop: Time,
    /// Bytes the connection may still hand to the NIC (`u64::MAX`: unbounded).
    unsent: u64,
    app: Option<App>,
    /// Application bytes that arrived and are not yet handed to the NIC.
    ready: u64,
    last_release: Time,
    last_release_bytes: u64,
    /// Bytes handed to the NIC so far.
    released: u64,
    outstanding: u64,
    pub(crate) in_sched: bool,
    /// Segments of this flow in the NIC.
    pub(crate) nic_segments: u32,
    /// Released segments not yet acknowledged, oldest first.
    unacked: VecDeque<Unacked>,
    /// PSN of the next segment's first packet.
    next_psn: u32,
    /// PSN of the next packet the NIC puts on the wire.
    wire_psn: u32,
    /// Every PSN before this has been on the wire at least once.
    sent_psn: u32,
    /// The local ACK timeout's timer.
    rto: LazyTimer,
    /// Selective repeat: PSNs the receiver reported placed beyond the cumulative ACK (sorted
    /// ranges), and the PSN below which missing packets were resent already.
    sacked: Option<Vec<[u32; 2]>>,
    resent_below: u32,
    /// Selective repeat: packets resent on the receiver's report that a switch trimmed them,
    /// which the reordering allowance is not to resend again.
    trim_resent: Vec<u32>,
    /// Data exists only when offered (`offer`): an RPC connection.
    demand: bool,
    /// When the next segment was free to go but for the rate (`release_time` said so first).
    eligible_at: Option<Time>,
    pub wait: HostWait,
    /// The filter on the controller's RTT samples.
    filter: SampleFilter,
}

impl MessageTx {
    /// A connection of `size` bytes (`None`: unbounded, or on demand when `demand`), fed by `app`
    /// if application-limited, sending from `start` and no new data from `stop`, counting what
    /// its host holds back in `wait`.
    pub fn new(
        cc: Box<dyn RateController>,
        size: Option<u64>,
        app: Option<App>,
        demand: bool,
        (start, stop): (Time, Time),
        wait: HostWait,
        (filter, selective): (SampleFilter, bool),
    ) -> MessageTx {
        MessageTx {
            cc,
            start,
            stop,
            unsent: size.unwrap_or(u64::MAX),
            app,
            ready: 0,
            last_release: Time::ZERO,
            last_release_bytes: 0,
            released: 0,
            outstanding: 0,
            in_sched: false,
            nic_segments: 0,
            unacked: VecDeque::new(),
            next_psn: 0,
            wire_psn: 0,
            sent_psn: 0,
            rto: LazyTimer::default(),
            sacked: selective.then(Vec::new),
            resent_below: 0,
            trim_resent: Vec::new(),
            demand,
            eligible_at: None,
            wait,
            filter,
        }
    }

    /// The application hands `bytes` more to send at `now` (on-demand connections).
    pub fn offer(&mut self, now: Time, bytes: u64) {
        self.wait.changes(now, self.ready);
        self.ready += bytes;
    }

    /// Moves application messages that have arrived by `now` into `ready`, crediting the host
    /// queue from each one's arrival.
    fn refill(&mut self, now: Time, rng: &mut Rng) {
        let Some(app) = &mut self.app else { return };
        self.wait.changes(now, self.ready);
        while app.next_message <= now && self.ready < self.unsent {
            let bytes = app.message.min(self.unsent - self.ready);
            self.wait.credit(app.next_message, now, bytes);
            self.ready += bytes;
            let mean = app.rate.serialization(app.message);
            let gap = if app.poisson { exponential(rng, mean.ps() as f64) } else { mean };
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

    /// When the next segment (at most `segment` bytes) may be released, with the rate the
    /// controller has now; `None` while there is nothing to send or the outstanding bytes would
    /// exceed `max_outstanding` (a completion re-arms it). Application messages that have
    /// arrived by `now` are taken in first (`rng`: Poisson arrivals).
    ///
    /// A controller with timers of its own (DCQCN) is brought to `now` first, and when one of
    /// them may raise the rate before the paced time, that is the time returned: the host's
    /// scheduler then looks again (TIMELY §5's lazy update, for increases too).
    pub fn release_time(&mut self, now: Time, segment: u64, max_outstanding: u64, rng: &mut Rng) -> Option<Time> {
        self.cc.advance(now);
        self.refill(now, rng);
        if self.unsent == 0 || (self.demand && self.ready == 0) {
            return None;
        }
        let (bytes, data_at) = self.next_segment(segment);
        // A controller's window (HPCC) caps what is in flight too, but never below one segment.
        let cap = self.cc.window().map_or(max_outstanding, |w| w.max(bytes).min(max_outstanding));
        if self.outstanding + bytes > cap {
            return None;
        }
        let paced = if self.last_release_bytes == 0 { self.start } else { self.last_release + self.cc.rate().serialization(self.last_release_bytes) };
        let at = paced.max(data_at).max(self.start).max(now);
        let at = match self.cc.next_change() {
            Some(change) if change < at && data_at <= change => change,
            _ => at,
        };
        let at = Some(at).filter(|&t| t < self.stop)?;
        self.eligible_at.get_or_insert(data_at.max(self.start).max(now));
        Some(at)
    }

    /// Releases the next segment (at most `segment` bytes, in packets of `payload_per_packet`)
    /// to the NIC at `now`, numbering its packets.
    pub fn release(&mut self, now: Time, segment: u64, payload_per_packet: u32) -> Unacked {
        let (bytes, _) = self.next_segment(segment);
        if let Some(eligible) = self.eligible_at.take().filter(|_| now >= self.wait.from) {
            self.wait.segments += 1;
            self.wait.below_line_rate += u64::from(self.cc.rate() < self.wait.line_rate);
            self.wait.rate_wait += now - eligible;
        }
        if self.app.is_some() || self.demand {
            self.wait.changes(now, self.ready);
            self.ready -= bytes;
        }
        if self.unsent != u64::MAX {
            self.unsent -= bytes;
        }
        self.outstanding += bytes;
        self.cc.on_sent(now, bytes);
        self.last_release = now;
        self.last_release_bytes = bytes;
        let packets = bytes.div_ceil(payload_per_packet as u64) as u32;
        let u = Unacked {
            first_psn: self.next_psn,
            end_psn: self.next_psn.wrapping_add(packets),
            bytes: bytes as u32,
            t_send: now,
            released_before: self.released,
            rate: self.cc.rate(),
        };
        self.released += bytes;
        self.next_psn = u.end_psn;
        self.unacked.push_back(u);
        u
    }

    /// Sender: the NIC puts packet `psn` on the wire at `now`. Returns whether it is a
    /// retransmission, and the time of a timer event to queue if the local ACK timeout starts.
    pub fn on_transmit(&mut self, now: Time, psn: u32, timeout: Time) -> (bool, Option<Time>) {
        // A selective repeat's resend of an older packet leaves the NIC where it was (a
        // go-back-N rewind moves it back itself, `rewind`): else the timeout would stop with
        // later packets unacknowledged.
        if !psn_before(psn, self.wire_psn) {
            self.wire_psn = psn.wrapping_add(1);
        }
        let again = psn_before(psn, self.sent_psn);
        if !again {
            self.sent_psn = self.wire_psn;
        }
        let arm = if self.rto.running() { None } else { self.rto.set(now + timeout) };
        (again, arm)
    }

    /// Sender: whether an ACK or NAK of `psn` is older than what is acknowledged already (a
    /// NAK then asks for nothing).
    pub fn stale(&self, psn: u32) -> bool {
        psn_before(psn, self.unacked.front().map_or(self.next_psn, |u| u.first_psn))
    }

    /// Sender: the oldest segment an ACK (or NAK) of every PSN before `psn` completes, if any.
    pub fn pop_acked(&mut self, psn: u32) -> Option<Unacked> {
        let u = *self.unacked.front().filter(|u| !psn_before(psn, u.end_psn))?;
        self.unacked.pop_front();
        self.outstanding -= u.bytes as u64;
        Some(u)
    }

    /// Sender: the completion of segment `u` with RTT sample `rtt` (§3.1: completion time minus
    /// send time minus serialization, noise included; or the signal `cc.signal` asks for) and
    /// the telemetry records its ACK echoed feeds the rate controller, with the rate the
    /// connection sent at over the segment's round trip: what it handed to the NIC from the
    /// segment's release on, over the time since (§5 "Application limited behavior"); the
    /// sample goes through the feedback filter first. `ece`: the ACK echoed a mark. Returns
    /// the acknowledgement as the path chooser reads it.
    pub fn on_completion(&mut self, now: Time, rtt: Time, ece: bool, u: &Unacked, int: &[IntHop]) -> Acked {
        let elapsed = now.saturating_sub(u.t_send);
        let sending_rate = (elapsed > Time::ZERO).then(|| Rate::of(self.released - u.released_before, elapsed));
        let snd_una = u.released_before + u.bytes as u64;
        let rtt = self.filter.feed(rtt);
        self.cc.on_completion(&Completion { now, rtt, acked_bytes: u.bytes as u64, sending_rate, snd_una, snd_nxt: self.released, int });
        let asked = self.cc.take_repath();
        Acked { bytes: u.bytes as u64, ece, over_target: self.cc.over_target(), snd_una, snd_nxt: self.released, asked }
    }

    /// Sender: the bytes acknowledged cumulatively (every segment before them).
    pub fn snd_una(&self) -> u64 {
        self.unacked.front().map_or(self.released, |u| u.released_before)
    }

    /// Sender: bytes remain that were never handed to the NIC.
    pub fn unsent(&self) -> bool {
        self.unsent > 0
    }

    /// Sender: everything is sent and acknowledged.
    pub fn done(&self) -> bool {
        self.unsent == 0 && self.unacked.is_empty()
    }

    /// Sender: whether the NIC must go back to `psn` after an ACK of every PSN before it: on a
    /// NAK (`nak`), or when a recovery has left the NIC behind what the receiver has.
    pub fn must_rewind(&self, psn: u32, nak: bool) -> bool {
        self.sacked.is_none() && (nak || psn_before(self.wire_psn, psn))
    }

    /// Selective repeat: an ACK or NAK of every PSN before `ack`, a NAK also reporting `placed`:
    /// a PSN and the bitmap of those placed before it (`Arrival::Placed`). Returns the packets
    /// to resend: those missing with `SR_DUPTHRESH` reported beyond them, not resent before.
    /// Go-back-N: none.
    pub fn selective_ack(&mut self, ack: u32, placed: Option<(u32, u32)>) -> Vec<u32> {
        let Some(sacked) = &mut self.sacked else { return Vec::new() };
        sacked.retain(|r| psn_before(ack, r[1]));
        self.trim_resent.retain(|&p| !psn_before(p, ack));
        if let Some((psn, below)) = placed {
            // Each run of set bits, from the packet's own down, is a range of placed PSNs.
            let mut bits = (below as u64) << 1 | 1;
            while bits != 0 {
                let b = bits.trailing_zeros();
                let run = (bits >> b).trailing_ones();
                let (lo, hi) = (psn.wrapping_sub(b + run - 1), psn.wrapping_sub(b).wrapping_add(1));
                if psn_before(ack, hi) {
                    super::insert_range(sacked, [if psn_before(lo, ack) { ack } else { lo }, hi]);
                }
                bits &= !(((1u64 << run) - 1) << b);
            }
        }
        let Some(&[_, high]) = sacked.last() else { return Vec::new() };
        let from = if psn_before(self.resent_below, ack) { ack } else { self.resent_below };
        let until = high.wrapping_sub(SR_DUPTHRESH);
        let mut lost = missing(sacked, from, until);
        lost.retain(|p| !self.trim_resent.contains(p));
        if psn_before(self.resent_below, until) {
            self.resent_below = until;
        }
        lost
    }

    /// Selective repeat: the receiver reports packet `psn` trimmed (its NAK of every PSN
    /// before `ack`): whether to resend it at once — not when it is acknowledged already.
    /// Go-back-N rewinds to the NAK's PSN instead.
    pub fn on_trimmed(&mut self, ack: u32, psn: u32) -> bool {
        let Some(sacked) = &self.sacked else { return false };
        let known = psn_before(psn, ack) || sacked.iter().any(|r| !psn_before(psn, r[0]) && psn_before(psn, r[1]));
        if !known && !self.trim_resent.contains(&psn) {
            self.trim_resent.push(psn);
        }
        !known
    }

    /// Selective repeat's timeout: every packet on the wire from `una` not reported placed,
    /// to resend; `None` for go-back-N (which rewinds instead).
    pub fn selective_timeout(&mut self, una: u32) -> Option<Vec<u32>> {
        let sacked = self.sacked.as_ref()?;
        self.trim_resent.clear();
        self.resent_below = self.sent_psn;
        Some(missing(sacked, una, self.sent_psn))
    }

    /// The payload of packet `psn` of an unacknowledged segment (`None`: acknowledged).
    pub fn packet_payload(&self, psn: u32, payload_per_packet: u32) -> Option<u32> {
        let u = self.unacked.iter().find(|u| !psn_before(psn, u.first_psn) && psn_before(psn, u.end_psn))?;
        let offset = psn.wrapping_sub(u.first_psn) * payload_per_packet;
        Some((u.bytes - offset).min(payload_per_packet))
    }

    /// Sender: the NIC goes back to `psn`; returns the unacknowledged segments from there on,
    /// which it sends again from their packet `psn` on.
    pub fn rewind(&mut self, psn: u32) -> impl Iterator<Item = &Unacked> {
        self.wire_psn = psn;
        self.unacked.iter()
    }

    /// Sender: the oldest unacknowledged PSN, where a timeout goes back to; `None` when
    /// everything is acknowledged.
    pub fn una_psn(&self) -> Option<u32> {
        self.unacked.front().map(|u| u.first_psn)
    }

    /// Sender: after an ACK, the local ACK timeout restarts while packets are on the wire
    /// unacknowledged and stops otherwise; returns the time of a timer event to queue, if any.
    pub fn restart_rto(&mut self, now: Time, timeout: Time) -> Option<Time> {
        match self.una_psn() {
            Some(una) if psn_before(una, self.wire_psn) => self.rto.set(now + timeout),
            _ => {
                self.rto.stop();
                None
            }
        }
    }

    /// Sender: the timer's event at `now`: `Ok(true)` if the timeout expired (`LazyTimer::fire`).
    pub fn rto_fire(&mut self, now: Time) -> Result<bool, Time> {
        self.rto.fire(now)
    }

    /// Bytes released and not yet completed.
    pub fn outstanding_bytes(&self) -> u64 {
        self.outstanding
    }

    /// The time average of the bytes the application handed over and the transport had not
    /// released, from the warm-up to `end`; `None` for a connection without an application
    /// (backlogged or sized), whose data is all there from the start.
    pub fn host_queue_avg_bytes(&self, end: Time) -> Option<f64> {
        if self.app.is_none() && !self.demand {
            return None;
        }
        let mut w = self.wait;
        w.changes(end, self.ready);
        let span = end.saturating_sub(w.from);
        (span > Time::ZERO).then(|| w.queue_area as f64 / span.ps() as f64)
    }

    /// Sender: it has sent before and nothing is outstanding (`nic.rate_after_idle`).
    pub fn idle(&self) -> bool {
        self.last_release_bytes > 0 && self.outstanding == 0
    }
}

/// The PSNs in `[from, until)` not in `ranges`.
fn missing(ranges: &[[u32; 2]], from: u32, until: u32) -> Vec<u32> {
    let mut lost = Vec::new();
    let mut p = from;
    while psn_before(p, until) {
        if !ranges.iter().any(|r| !psn_before(p, r[0]) && psn_before(p, r[1])) {
            lost.push(p);
        }
        p = p.wrapping_add(1);
    }
    lost
}

/// Which of the `SACK_BITS` PSNs before `psn` the sorted ranges `placed` hold: bit b for
/// PSN psn − 1 − b.
fn sack_bitmap(placed: &[[u32; 2]], psn: u32) -> u32 {
    let lo = psn.saturating_sub(SACK_BITS);
    let mut bits = 0u32;
    for r in placed.iter().filter(|r| r[1] > lo && r[0] < psn) {
        for p in r[0].max(lo)..r[1].min(psn) {
            bits |= 1 << (psn - 1 - p);
        }
    }
    bits
}

/// A message flow's receiving end, in the receiving NIC: the PSN it expects, and what it owes
/// the sender.
#[derive(Default)]
pub struct MessageRx {
    /// Selective repeat: the PSNs placed beyond the expected one (sorted ranges).
    placed: Option<Vec<[u32; 2]>>,
    /// The PSN expected next, and whether the gap before it has been NAKed.
    expected_psn: u32,
    nak_sent: bool,
    /// A CE mark arrived on the current segment.
    ce_seen: bool,
    /// DCQCN's NP: when it last sent a CNP.
    last_cnp: Option<Time>,
}

impl MessageRx {
    /// A receiving end that places packets out of order (`selective`), or takes only the next.
    pub fn new(selective: bool) -> MessageRx {
        MessageRx { placed: selective.then(Vec::new), ..MessageRx::default() }
    }

    /// Data packet `psn`, with CE mark `ce`, arrived (IBA §9.7.5.1; with selective repeat,
    /// IRN §4.2).
    pub fn on_data(&mut self, psn: u32, ce: bool, last_of_segment: bool) -> Arrival {
        if let Some(placed) = &mut self.placed {
            if psn_before(psn, self.expected_psn) || placed.iter().any(|r| r[0] <= psn && psn < r[1]) {
                return Arrival::Duplicate { ack: last_of_segment.then_some(self.expected_psn) };
            }
            self.ce_seen |= ce;
            if psn != self.expected_psn {
                super::insert_seq(placed, psn);
                return Arrival::Placed { nak: self.expected_psn, psn, below: sack_bitmap(placed, psn) };
            }
            self.expected_psn = psn.wrapping_add(1);
            let closed = placed.first().is_some_and(|r| r[0] == self.expected_psn);
            if closed {
                self.expected_psn = placed.remove(0)[1];
            }
            let ece = (last_of_segment || closed).then(|| std::mem::take(&mut self.ce_seen));
            return Arrival::Deliver { ack: ece.map(|e| (self.expected_psn, e)) };
        }
        if psn == self.expected_psn {
            self.expected_psn = psn.wrapping_add(1);
            self.nak_sent = false;
            self.ce_seen |= ce;
            let ece = last_of_segment.then(|| std::mem::take(&mut self.ce_seen));
            Arrival::Deliver { ack: ece.map(|e| (self.expected_psn, e)) }
        } else if psn_before(psn, self.expected_psn) {
            Arrival::Duplicate { ack: last_of_segment.then_some(self.expected_psn) }
        } else if !std::mem::replace(&mut self.nak_sent, true) {
            Arrival::Nak(self.expected_psn)
        } else {
            Arrival::Discard
        }
    }

    /// The headers of data packet `psn`, trimmed by a switch (`switch.trimming`), arrived:
    /// the packet is lost, and the receiver says so at once (NDP §3.2's NACK; Ultra Ethernet's
    /// NACK of a trimmed packet). A packet it has already is acknowledged as a copy would
    /// be; go-back-N NAKs the expected PSN, once per gap unless the trimmed packet is the
    /// expected one itself (its resend, lost again).
    pub fn on_trimmed(&mut self, psn: u32, last_of_segment: bool) -> Arrival {
        let expected = self.expected_psn;
        let placed = self.placed.as_ref().is_some_and(|p| p.iter().any(|r| r[0] <= psn && psn < r[1]));
        if psn_before(psn, expected) || placed {
            return Arrival::Duplicate { ack: last_of_segment.then_some(expected) };
        }
        if self.placed.is_some() {
            return Arrival::Trimmed { nak: expected, psn };
        }
        if psn == expected || !self.nak_sent {
            self.nak_sent = true;
            Arrival::Nak(expected)
        } else {
            Arrival::Discard
        }
    }

    /// DCQCN's notification point (reference §5.1): a marked packet arrived at `now`;
    /// whether to send a CNP, at most one per `interval`.
    pub fn cnp_due(&mut self, now: Time, interval: Time) -> bool {
        let due = self.last_cnp.is_none_or(|t| now >= t + interval);
        if due {
            self.last_cnp = Some(now);
        }
        due
    }
}

/// §3.1: the RTT of a segment sent at `t_send` and completed at `now`: the time minus the
/// segment's serialization at `rate` (the NIC line rate, or the pacing rate with NIC pacing).
pub fn completion_rtt(now: Time, t_send: Time, bytes: u64, rate: Rate) -> Time {
    (now - t_send).saturating_sub(rate.serialization(bytes))
}
