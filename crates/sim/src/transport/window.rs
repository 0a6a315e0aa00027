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
//!   far are acknowledged at once with the old ECE value, and the packet itself at once with the
//!   new one (DCTCP §3.1; Linux `dctcp_ece_ack_update`, `ICSK_ACK_NOW`). ACKs go out in `nic.ack_class`, echoing the acknowledged packet's
//!   hop count and its remote queuing (NIC Rx queue plus processing at this host, Swift §3.1).
//! - **RTT samples** are what the kernel measures (RFC 7323): ACK arrival minus the echoed
//!   TSval of the earliest packet the ACK covers, so a delayed ACK's hold time is included, and
//!   every stack queue at the sender (host port queue) too. The controller also gets the
//!   endpoint delay: the echoed remote queuing plus the ACK's own NIC-Rx delay here.
//!
//! - **Ultra Ethernet** (`transport.kind = "uet"`, [`crate::scenario::UetConfig`]; UEC 1.0 §3.5's packet
//!   delivery as htsim's `htsim_uec` runs it, uet-htsim `sim/uec.cpp`): the receiver
//!   acknowledges once `sack_threshold` bytes arrived since its last ACK, at once on an ECN
//!   mark, a duplicate, the first packet and a packet the sender asks it to (`ack_now`: the last
//!   new packet, one that fills the window, every retransmission; `UecSink::processData`), and
//!   then once more when the packets out of order are all in; its ACK is cumulative with a
//!   bitmap of the 64 packets from a base (the packet that triggered it on an ECN mark or a
//!   request, else up to 63 below it and above the cumulative point: `sackBitmapBase`), echoing
//!   that packet's CE mark and send time. A trimmed packet's headers are NACKed at once,
//!   saying whether the last hop trimmed it. The sender counts a packet acknowledged by either;
//!   it resends a packet on its NACK (the controller's NACK response) or once `rto` has passed
//!   since the packet was sent (each such packet a timeout, no back-off), and on nothing else;
//!   the controller sees every ACK's newly acknowledged bytes, selective ones too, and its RTT.
//!
//! The two ends are two state machines, `WindowTx` at the sender and `WindowRx` at the
//! receiver, and neither does I/O (the smoltcp/quinn-proto pattern): each is fed packet
//! headers, timer expiries and the time, and pushes what the network must do (`Action`s: send a
//! data packet or an ACK, queue a timer event, record an RTT sample or a delivery) into a
//! caller-owned buffer, in the order they happen. [`crate::host`] applies them;
//! `tests/transport_window.rs` drives them from hand-made packet sequences.

use super::credit::{Credit, Sink};
use super::feedback::SampleFilter;
use super::onoff::OnOff;
use super::path::Acked;
use crate::core::engine::LazyTimer;
use crate::core::engine::Timer;
use crate::scenario::{LossDetection, WindowConfig};
use rttlab_cc::{AckEvent, Loss, Metrics, Rate, Time, WindowController};
use std::collections::VecDeque;

/// What a data packet tells its receiver.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DataHdr {
    /// Sequence number (packets, from 0).
    pub seq: u32,
    pub payload: u32,
    /// Bytes on the wire, headers included.
    pub wire: u32,
    /// Congestion Experienced.
    pub ce: bool,
    /// The sender's timestamp (RFC 7323 TSval).
    pub ts: Time,
    /// Switches crossed.
    pub hops: u8,
    /// Ultra Ethernet: the sender asks for an ACK at once (its `ar` flag).
    pub ack_now: bool,
    /// Ultra Ethernet with receiver credits: the sender's pull target (cumulative quanta,
    /// [`Credit::pull_target`]); 0 without.
    pub pull_target: u64,
}

/// What an ACK tells the sender.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AckHdr {
    /// The next packet expected (cumulative).
    pub ack: u32,
    /// One SACK block `[lo, hi)`, empty (`lo == hi`) when the ACK was for an in-order packet.
    pub sack: [u32; 2],
    /// ECN-Echo.
    pub ece: bool,
    /// Echoed timestamp (RFC 7323 TSecr).
    pub ts: Time,
    /// Forward hop count of the acknowledged packet.
    pub hops: u8,
    /// The receiver's queuing of the acknowledged packet (NIC Rx queue plus processing), ns.
    pub remote_queuing_ns: u32,
    /// The subflow of the acknowledged packet, as the path it came on echoes it
    /// (`transport.subflows`; read only with more than one).
    pub subflow: u16,
}

impl AckHdr {
    /// Ultra Ethernet's ACK: cumulative to `ack`, with bit i of `bitmap` acknowledging packet
    /// `base + i`, carried where TCP's ACK has its SACK block and remote queuing (`sack` =
    /// [base, the bitmap's low half], `remote_queuing_ns` its high half: 12 bytes, as in the
    /// specification's SACK header).
    pub fn uet(ack: u32, (base, bitmap): (u32, u64), ece: bool, ts: Time, hops: u8) -> AckHdr {
        AckHdr { ack, sack: [base, bitmap as u32], ece, ts, hops, remote_queuing_ns: (bitmap >> 32) as u32, subflow: 0 }
    }

    /// The base and bitmap of an Ultra Ethernet ACK (`AckHdr::uet`).
    pub fn bitmap(&self) -> (u32, u64) {
        (self.sack[0], (self.remote_queuing_ns as u64) << 32 | self.sack[1] as u64)
    }
}

/// What the network must do for a window connection, in order.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Send data packet `seq` of `payload` bytes on `subflow`'s path, stamped now (`ack_now`:
    /// asking for an ACK at once, Ultra Ethernet), carrying its sender's pull target (receiver
    /// credits).
    Data { seq: u32, payload: u32, retransmit: bool, ack_now: bool, pull_target: u64, subflow: u8 },
    /// Receiver credits: ask the receiver for credit to resend (an RTS), with this pull target.
    RequestToSend { pull_target: u64 },
    /// Receiver credits: the connection wants credit; its receiver's pull pacer serves it.
    RequestPull,
    /// Send this ACK to the sender.
    Ack(AckHdr),
    /// Ultra Ethernet: NACK packet `seq`, which a switch trimmed (at the last hop or not),
    /// echoing its send time.
    Nack { seq: u32, last_hop: bool, ts: Time },
    /// Queue an event for `timer` at `at` (the timer itself tells, when it comes, whether it
    /// still matters: `LazyTimer`).
    Timer { timer: Timer, at: Time },
    /// The sender measured this RTT.
    RttSample(Time),
    /// The receiver got `payload` new bytes (`wire` with headers).
    Delivered { payload: u32, wire: u32 },
    /// The receiver got `payload` bytes it already had.
    Duplicate { payload: u32 },
    /// The retransmission timer expired.
    TimedOut,
    /// The sender has everything acknowledged.
    Done,
    /// An acknowledgement, for the path chooser ([`super::path::Returned::Acked`]): on every
    /// ACK when it counts rounds (PLB), else when the controller asked for a new path.
    Acked(Acked),
}

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

/// A packet in `[una, nxt)`: its scoreboard state and when it was last sent, side by side, so
/// that an ACK reads one buffer.
#[derive(Copy, Clone, Debug)]
struct Unacked {
    state: Sent,
    /// The subflow it was last sent on.
    subflow: u8,
    sent_at: Time,
}

/// A window flow's sending end, its fields in the order an ACK reads them (`repr(C)`: `Flow`).
#[repr(C)]
pub struct WindowTx {
    una: u32,
    nxt: u32,
    pipe: u32,
    mss: u32,
    /// One past the highest SACKed packet.
    high_sacked: u32,
    /// Packets below this were checked for loss.
    lost_scan: u32,
    /// No packet below this is `Lost`.
    retx_hint: u32,
    /// The subflow a new send tries first (round robin).
    next_subflow: u8,
    /// Payload queued in the host's NIC, not yet serialized (TCP Small Queues).
    host_bytes: u64,
    /// Flow size in bytes (`u64::MAX`: unbounded) and in packets.
    size: u64,
    total: u32,
    /// The connection may send from `start`, and no new data from `stop` (`Time::MAX`: never).
    start: Time,
    stop: Time,
    rto: Time,
    /// Loss recovery in progress until `una` reaches the first value.
    recovery: Option<(u32, Loss)>,
    rto_timer: LazyTimer,
    /// The congestion controllers: one, or one per subflow (`transport.subflows`).
    subs: Vec<Subflow>,
    cfg: WindowConfig,
    /// State of each packet in `[una, nxt)`, and when it was last sent.
    board: VecDeque<Unacked>,
    srtt: Option<(f64, f64)>,
    pace_timer: LazyTimer,
    /// The application pacing new data (`None`: backlogged), and its timer.
    pub app: Option<OnOff>,
    app_timer: LazyTimer,
    /// `loss_detection = "rack"`: its state.
    rack: Option<Rack>,
    /// Every ACK is reported to the path chooser (`Action::Acked`).
    report_acks: bool,
    /// Receiver credits: whether the controller's window also limits the sender
    /// (`UetConfig::congestion`); beside the flag above, where it takes no more room.
    sender_window: bool,
    /// Ultra Ethernet: every packet's retransmission timeout (`UetConfig::rto`).
    uet_rto: Option<Time>,
    /// Ultra Ethernet's receiver credits.
    credit: Option<Box<Credit>>,
    /// A connection that carries messages (`offer`): where they begin and end.
    messages: Option<Box<Boundaries>>,
}

/// A subflow (`transport.subflows`; htsim `SwiftSubflowSrc`, MPTCP's uncoupled subflows): a
/// path of its own and a controller of its own, fed the RTT samples, acknowledged bytes and
/// losses of its packets and growing and shrinking its own window, while the connection keeps
/// one sequence space, one scoreboard and one retransmission timer. One subflow is the plain
/// connection.
struct Subflow {
    cc: Box<dyn WindowController>,
    /// Its packets in flight (RFC 6675 `pipe`).
    pipe: u32,
    /// What stopped its last send: its window (true), or the host queue or lack of data.
    cwnd_limited: bool,
    /// When it last sent (`Time::MAX`: never), for pacing.
    last_send: Time,
    /// Its fast-retransmit cut covers losses until `una` reaches this (RFC 6582's `recover`).
    recover: u32,
    /// Payload of its packets newly acknowledged by the ACK being taken.
    acked: u64,
    /// RACK: send time and RTT of its most recently sent packet delivered (RFC 8985 §6.1
    /// `RACK.xmit_ts`, `RACK.rtt`), per subflow as in a sequence space of its own: a packet is
    /// lost only when one sent after it on its own path was delivered.
    rack_delivered: (Time, Time),
    /// The filter on its controller's RTT samples.
    filter: SampleFilter,
}

impl Subflow {
    fn new(cc: Box<dyn WindowController>, filter: SampleFilter) -> Subflow {
        Subflow { cc, pipe: 0, cwnd_limited: false, last_send: Time::MAX, recover: 0, acked: 0, rack_delivered: (Time::ZERO, Time::ZERO), filter }
    }
}

/// The messages offered on a window connection, each from a packet of its own (its last packet
/// short), as an RDMA or Ultra Ethernet message is packetized: the (packet, byte) where each
/// ends, from the one holding `una` on, and where the first of them begins. (A TCP stream would
/// start the next message in the last one's short packet: at most a packet's difference a
/// message.)
#[derive(Debug, Default)]
struct Boundaries {
    base: (u32, u64),
    ends: VecDeque<(u32, u64)>,
}

impl Boundaries {
    /// Payload bytes before packet `seq`, at or above `base`.
    fn bytes_before(&self, seq: u32, mss: u32) -> u64 {
        let mut from = self.base;
        for &end in &self.ends {
            if seq <= end.0 {
                return from.1 + ((seq - from.0) as u64 * mss as u64).min(end.1 - from.1);
            }
            from = end;
        }
        from.1
    }
}

/// RACK's state (RFC 8985 §6.1).
#[derive(Debug)]
struct Rack {
    /// The least RTT seen: the reordering window is `reo_wnd_mult` quarters of it, at most
    /// SRTT.
    min_rtt: Time,
    reo_wnd_mult: u32,
    /// A spurious retransmission widened the window in the round ending when `una` reaches this.
    widened_until: u32,
    timer: LazyTimer,
    /// The tail-loss probe's timer (RFC 8985 §7), and while a probe is out, `nxt` when it went:
    /// one probe until the data sent before it is acknowledged.
    probe_timer: LazyTimer,
    probe_out: Option<u32>,
    /// Every transmission as (sent at, packet), in the order sent, so in time order: the loss
    /// scan stops at the first packet not yet due (as Linux's `tcp_rack_detect_loss` walks its
    /// time-sorted sent queue) instead of reading the whole scoreboard on every ACK. An entry
    /// is stale once its packet is acknowledged, SACKed, deemed lost or sent again; stale
    /// entries leave from the front.
    sent: VecDeque<(Time, u32)>,
}

impl Default for Rack {
    fn default() -> Self {
        Rack {
            min_rtt: Time::MAX,
            reo_wnd_mult: 1,
            widened_until: 0,
            timer: LazyTimer::default(),
            probe_timer: LazyTimer::default(),
            probe_out: None,
            sent: VecDeque::new(),
        }
    }
}

/// A window flow's receiving end: what it has received, and the ACK it owes.
pub struct WindowRx {
    /// `delayed_ack` and `delayed_ack_timeout` of the flow's `WindowConfig`.
    delayed_ack: Option<Time>,
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
    delack_timer: LazyTimer,
    /// Ultra Ethernet's acknowledgement state.
    uet: Option<UetRx>,
    /// Receiver credits: what the sender wants and was granted.
    pub sink: Option<Sink>,
}

/// What an Ultra Ethernet receiver keeps to decide when to acknowledge (`UecSink`).
struct UetRx {
    sack_threshold: u64,
    /// Wire bytes received since the last ACK (`_accepted_bytes`).
    accepted: u64,
    /// A packet has arrived (the first is acknowledged at once).
    any: bool,
    /// The sender asked for an ACK while packets were out of order: one more is owed when
    /// they are all in (`_ack_request`).
    ack_request: bool,
}

impl WindowTx {
    /// Sender: packets remain that were never sent.
    pub fn unsent(&self) -> bool {
        self.nxt < self.total
    }

    /// A connection of `size` bytes (`None`: unbounded) in packets of `mss` payload, sending
    /// from `start` and no new data from `stop`, paced by `app` if there is one.
    pub fn new(
        cc: Box<dyn WindowController>,
        cfg: WindowConfig,
        mss: u32,
        size: Option<u64>,
        (start, stop): (Time, Time),
        app: Option<OnOff>,
        (filter, report_acks): (SampleFilter, bool),
    ) -> WindowTx {
        let total = size.map_or(u32::MAX, |s| u32::try_from(s.div_ceil(mss as u64)).expect("validated: fewer than 2^32 packets"));
        let rack = (cfg.loss_detection == LossDetection::Rack && cfg.uet.is_none()).then(Rack::default);
        let uet_rto = cfg.uet.as_ref().map(|u| u.rto.expect("filled in when the connection opens"));
        WindowTx {
            subs: vec![Subflow::new(cc, filter)],
            next_subflow: 0,
            rto: cfg.min_rto,
            cfg,
            start,
            stop,
            mss,
            size: size.unwrap_or(u64::MAX),
            total,
            una: 0,
            nxt: 0,
            board: VecDeque::new(),
            rack,
            pipe: 0,
            high_sacked: 0,
            lost_scan: 0,
            retx_hint: 0,
            recovery: None,
            host_bytes: 0,
            srtt: None,
            rto_timer: LazyTimer::default(),
            pace_timer: LazyTimer::default(),
            app,
            app_timer: LazyTimer::default(),
            report_acks,
            uet_rto,
            credit: None,
            sender_window: true,
            messages: None,
        }
    }

    /// More subflows beside the first, each with its controller (`transport.subflows`): new
    /// data goes on the next one whose window has room, round robin.
    pub fn with_subflows(mut self, more: impl IntoIterator<Item = Box<dyn WindowController>>) -> WindowTx {
        let filter = self.subs[0].filter.clone();
        self.subs.extend(more.into_iter().map(|cc| Subflow::new(cc, filter.clone())));
        assert!(self.subs.len() <= 64, "validated: at most 64 subflows");
        self
    }

    /// A connection whose data comes as messages (`offer`), none yet.
    pub fn carrying_messages(mut self) -> WindowTx {
        (self.size, self.total) = (0, 0);
        self.messages = Some(Box::default());
        self
    }

    /// The application hands a message of `bytes` to send at `now` (`carrying_messages`): sends
    /// what the window allows and returns the packet the message ends before.
    pub fn offer(&mut self, now: Time, bytes: u64, out: &mut Vec<Action>) -> u32 {
        let packets = u32::try_from(bytes.div_ceil(self.mss as u64).max(1)).expect("validated: fewer than 2^32 packets");
        self.size += bytes;
        self.total += packets;
        self.messages.as_mut().expect("a connection carrying messages").ends.push_back((self.total, self.size));
        self.poll_transmit(now, out);
        self.total
    }

    /// Packets acknowledged cumulatively (every one before it).
    pub fn una(&self) -> u32 {
        self.una
    }

    /// Ultra Ethernet's receiver credits: the sender holds `credit`, and its controller's window
    /// limits it too when `sender_window` (`UetConfig::congestion`).
    pub fn with_credit(mut self, credit: Credit, sender_window: bool) -> WindowTx {
        self.credit = Some(Box::new(credit));
        self.sender_window = sender_window;
        self
    }

    /// Receiver credits: the pull target a packet sent now carries (0 without credits), from
    /// the wire bytes never sent, those marked lost to send again, and the window when it
    /// limits too (`UecSrc::computePullTarget`: `_backlog`, `_rtx_backlog`, `_cwnd`).
    fn pull_target(&self) -> u64 {
        let Some(c) = self.credit.as_ref() else { return 0 };
        let header = c.header() as u64;
        let unsent = (self.total - self.nxt) as u64;
        let backlog = (self.size - self.bytes_before(self.nxt)).saturating_add(unsent.saturating_mul(header));
        let resend: u64 = self.lost().map(|s| self.payload(s) as u64 + header).sum();
        c.pull_target(backlog, resend, self.sender_window.then(|| self.cwnd()))
    }

    /// The packets marked lost and not yet sent again.
    fn lost(&self) -> impl Iterator<Item = u32> + '_ {
        (self.retx_hint.max(self.una)..self.lost_scan.min(self.nxt)).filter(|&s| self.board[(s - self.una) as usize].state == Sent::Lost)
    }

    /// Payload bytes before packet `seq`.
    fn bytes_before(&self, seq: u32) -> u64 {
        if let Some(m) = &self.messages {
            return m.bytes_before(seq, self.mss);
        }
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

    /// The congestion window: the sum of the subflows'.
    pub fn cwnd(&self) -> u64 {
        self.subs.iter().map(|s| s.cc.cwnd()).sum()
    }

    /// `cwnd / SRTT`: the rate the window allows (0 before the first RTT sample).
    pub fn rate(&self) -> Rate {
        match self.srtt {
            Some((srtt, _)) if srtt > 0.0 => Rate::of(self.cwnd(), Time(srtt as u64)),
            _ => Rate::ZERO,
        }
    }

    /// What the controller reports of its state; with subflows, the first one's, its window
    /// the sum of theirs.
    pub fn metrics(&self) -> Metrics {
        let mut m = self.subs[0].cc.metrics();
        m.cwnd_bytes = Some(self.cwnd());
        m
    }

    /// Packet `seq`, in flight, no longer is (acknowledged, or deemed lost).
    fn leaves_pipe(&mut self, seq: u32) {
        let sub = self.board[(seq - self.una) as usize].subflow;
        self.pipe -= 1;
        self.subs[sub as usize].pipe -= 1;
    }

    /// Payload sent on subflow `s` and not yet cumulatively acknowledged (its FlightSize).
    fn flight_of(&self, s: usize) -> u64 {
        if self.subs.len() == 1 {
            return self.flight_bytes();
        }
        (self.una..self.nxt).filter(|&q| self.board[(q - self.una) as usize].subflow as usize == s).map(|q| self.payload(q) as u64).sum()
    }

    /// Subflows that lost packets (bit `s`: subflow `s`) take the controller's fast-retransmit
    /// response, each once per recovery of its own (RFC 6582), and the connection enters
    /// recovery.
    fn on_losses(&mut self, lost: u64, now: Time) {
        if lost == 0 {
            return;
        }
        if self.recovery.is_none() {
            self.recovery = Some((self.nxt, Loss::FastRetransmit));
        }
        for s in (0..self.subs.len()).filter(|s| lost >> s & 1 != 0) {
            if self.una >= self.subs[s].recover {
                let flight = self.flight_of(s);
                let sub = &mut self.subs[s];
                sub.cc.on_loss(Loss::FastRetransmit, flight, now);
                sub.recover = self.nxt;
            }
        }
    }

    fn state(&mut self, seq: u32) -> &mut Sent {
        &mut self.board[(seq - self.una) as usize].state
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

    /// Takes a SACK block `[lo, hi)` into the scoreboard; returns whether it SACKed any packet
    /// newly. Scans down from `hi` and stops at the first packet already SACKed: in order, an
    /// ACK's block grows at its top, where the packet that triggered it is. With subflows, on
    /// paths of different delays, a block also grows below or joins two: where the scan finds
    /// nothing new, the block is read whole.
    fn take_sack(&mut self, [lo, hi]: [u32; 2]) -> bool {
        let (lo, hi) = (lo.max(self.una), hi.min(self.nxt));
        let mut any = false;
        for seq in (lo..hi).rev() {
            if *self.state(seq) == Sent::Sacked {
                break;
            }
            self.sack(seq);
            any = true;
        }
        if !any && self.subs.len() > 1 {
            for seq in lo..hi {
                if *self.state(seq) != Sent::Sacked {
                    self.sack(seq);
                    any = true;
                }
            }
        }
        self.high_sacked = self.high_sacked.max(hi);
        any
    }

    /// Packet `seq`, not SACKed before, is. With subflows, that is its subflow's
    /// acknowledgement (in order on its own path, as in a subflow's own sequence space).
    fn sack(&mut self, seq: u32) {
        if matches!(*self.state(seq), Sent::InFlight | Sent::Retransmitted) {
            self.leaves_pipe(seq);
        }
        *self.state(seq) = Sent::Sacked;
        if self.subs.len() > 1 {
            let payload = self.payload(seq) as u64;
            self.subs[self.board[(seq - self.una) as usize].subflow as usize].acked += payload;
        }
    }

    /// Advances `una` to `ack`; returns the packets newly acknowledged, and the payload of
    /// those of them not SACKed before. With subflows, each one's share of that payload goes to
    /// its `acked`.
    fn take_cumulative(&mut self, ack: u32) -> (u32, u64) {
        let ack = ack.min(self.nxt);
        let n = ack.saturating_sub(self.una);
        let mut sacked = 0;
        let split = self.subs.len() > 1;
        for seq in self.una..self.una + n {
            let u = self.board.pop_front().expect("a packet in [una, nxt)");
            match u.state {
                Sent::InFlight | Sent::Retransmitted => {
                    self.pipe -= 1;
                    self.subs[u.subflow as usize].pipe -= 1;
                }
                Sent::Sacked => {
                    sacked += self.payload(seq) as u64;
                    continue;
                }
                Sent::Lost => {}
            }
            if split {
                self.subs[u.subflow as usize].acked += self.payload(seq) as u64;
            }
        }
        let unsacked = self.bytes_before(self.una + n) - self.bytes_before(self.una) - sacked;
        self.una += n;
        self.lost_scan = self.lost_scan.max(self.una);
        (n, unsacked)
    }

    /// Ultra Ethernet: takes an ACK's bitmap (bit i: packet `base + i`) into the scoreboard;
    /// returns the payload it newly acknowledges.
    fn take_bitmap(&mut self, (base, bitmap): (u32, u64)) -> u64 {
        let mut newly = 0;
        for i in (0..64).filter(|i| bitmap >> i & 1 != 0) {
            let seq = base.wrapping_add(i);
            if (self.una..self.nxt).contains(&seq) && *self.state(seq) != Sent::Sacked {
                newly += self.payload(seq) as u64;
                self.take_sack([seq, seq + 1]);
            }
        }
        newly
    }

    /// Packet `seq`, in flight, is lost: it goes first when the window next allows.
    fn mark_lost(&mut self, seq: u32) {
        self.leaves_pipe(seq);
        *self.state(seq) = Sent::Lost;
        self.retx_hint = self.retx_hint.min(seq);
        self.lost_scan = self.lost_scan.max(seq + 1);
    }

    /// Whether `ack` newly covers a packet retransmitted after the send time it echoes.
    fn covers_retransmission_after(&self, ack: &AckHdr) -> bool {
        let later = |seq: u32| self.board.get((seq - self.una) as usize).is_some_and(|u| u.state == Sent::Retransmitted && u.sent_at > ack.ts);
        let cumulative = self.una..ack.ack.min(self.nxt);
        let sacked = ack.sack[0].max(self.una)..ack.sack[1].min(self.nxt);
        cumulative.chain(sacked).any(later)
    }

    /// RFC 6675 `IsLost`: a packet still in flight with `dupthresh` SACKed packets above it is
    /// lost. Returns the subflows that lost packets newly marked (bit `s`: subflow `s`).
    fn mark_losses(&mut self) -> u64 {
        let limit = self.high_sacked.saturating_sub(self.cfg.dupthresh).min(self.nxt);
        let mut lost = 0;
        while self.lost_scan < limit {
            let s = self.lost_scan;
            if *self.state(s) == Sent::InFlight {
                self.leaves_pipe(s);
                *self.state(s) = Sent::Lost;
                self.retx_hint = self.retx_hint.min(s);
                lost |= 1 << self.board[(s - self.una) as usize].subflow;
            }
            self.lost_scan += 1;
        }
        lost
    }

    /// RACK (RFC 8985 §6.2): every packet in flight sent before the latest delivered one (of
    /// its subflow) is lost once `rack.rtt + reo_wnd` has passed since it was sent; the reorder
    /// timer is armed for the first one whose time has not come. Returns the subflows that
    /// lost packets newly marked (bit `s`: subflow `s`).
    fn rack_losses(&mut self, now: Time, out: &mut Vec<Action>) -> u64 {
        let Some(rack) = &mut self.rack else { return 0 };
        let srtt = self.srtt.map_or(u64::MAX, |(s, _)| s as u64);
        let reo_wnd = Time((rack.min_rtt.ps() / 4).saturating_mul(rack.reo_wnd_mult as u64).min(srtt));
        let newest = self.subs.iter().map(|s| s.rack_delivered.0).max().unwrap_or(Time::ZERO);
        let single = self.subs.len() == 1;
        let (mut lost, mut next) = (0, Time::MAX);
        // Entries from `i` on are still to be looked at; those before it are in flight and not
        // lost (only with subflows, whose waits differ, does the scan pass one).
        let mut i = 0;
        while let Some(&(sent, seq)) = rack.sent.get(i) {
            let in_flight = seq.checked_sub(self.una).and_then(|i| self.board.get_mut(i as usize));
            let Some(u) = in_flight.filter(|u| u.sent_at == sent && matches!(u.state, Sent::InFlight | Sent::Retransmitted)) else {
                if i == 0 {
                    rack.sent.pop_front();
                } else {
                    i += 1;
                }
                continue;
            };
            // Every entry after this one was sent no earlier: none is before the latest
            // delivery, or (one subflow) none is due.
            if sent >= newest {
                break;
            }
            let (xmit, rtt) = self.subs[u.subflow as usize].rack_delivered;
            let due = sent + rtt + reo_wnd;
            if sent >= xmit || now < due {
                if sent < xmit {
                    next = next.min(due);
                }
                if single {
                    break;
                }
                i += 1;
                continue;
            }
            u.state = Sent::Lost;
            if i == 0 {
                rack.sent.pop_front();
            }
            self.pipe -= 1;
            self.subs[u.subflow as usize].pipe -= 1;
            self.retx_hint = self.retx_hint.min(seq);
            self.lost_scan = self.lost_scan.max(seq + 1);
            lost |= 1 << u.subflow;
        }
        if next < Time::MAX {
            arm(out, Timer::Reorder, rack.timer.set(next));
        }
        lost
    }

    /// The subflow the next packet goes on, its window in packets, and when its pacing lets it
    /// send (`Time::ZERO`: unpaced): of the subflows whose window has room (each one looked at
    /// has its `cwnd_limited` set), the first from `next_subflow` on that may send now, else
    /// the one that may soonest; `None` when no window has room.
    fn subflow_to_send(&mut self, now: Time) -> Option<(usize, u64, Time)> {
        let n = self.subs.len();
        let mut soonest: Option<(usize, u64, Time)> = None;
        for i in 0..n {
            let s = self.next_subflow as usize + i;
            let s = if s >= n { s - n } else { s };
            let sub = &mut self.subs[s];
            let cwnd_packets = (sub.cc.cwnd() / self.mss as u64).max(1);
            sub.cwnd_limited = self.sender_window && sub.pipe as u64 >= cwnd_packets;
            if sub.cwnd_limited {
                continue;
            }
            let at = match sub.cc.pacing_delay() {
                Some(gap) if sub.last_send != Time::MAX => sub.last_send + gap,
                _ => Time::ZERO,
            };
            if at <= now {
                return Some((s, cwnd_packets, at));
            }
            if soonest.is_none_or(|(_, _, t)| at < t) {
                soonest = Some((s, cwnd_packets, at));
            }
        }
        soonest
    }

    /// Sends what the window allows: lost packets first, then new data (RFC 6675 §5 NextSeg).
    pub fn poll_transmit(&mut self, now: Time, out: &mut Vec<Action>) {
        if now < self.start {
            return;
        }
        loop {
            let room = self.subflow_to_send(now);
            let Some((sub, cwnd_packets, paced_until)) = room.filter(|_| !self.host_queue_full()) else { break };
            if self.credit.as_ref().is_some_and(|c| !c.may_send()) {
                // Waiting for credit with nothing in flight: if the pulls were lost, nothing
                // would wake the sender, so its timer asks again (`uet_timeout`).
                if self.pipe == 0 && !self.rto_timer.running() && self.next_to_send().is_some() {
                    let rto = self.uet_rto.expect("credits are Ultra Ethernet's");
                    arm(out, Timer::Rto, self.rto_timer.set(now + rto));
                }
                break;
            }
            let Some((seq, retransmit)) = self.next_to_send() else { break };
            if !retransmit && now >= self.stop {
                break; // the application closed the connection: repair, but send nothing new
            }
            if !retransmit && self.app.is_some() && !self.app_wrote(now, seq, out) {
                break;
            }
            if now < paced_until {
                arm(out, Timer::Pace, self.pace_timer.set(paced_until));
                break;
            }
            self.subs[sub].last_send = now;
            self.next_subflow = if sub + 1 == self.subs.len() { 0 } else { sub as u8 + 1 };
            if let Some(rack) = self.rack.as_mut() {
                rack.sent.push_back((now, seq));
            }
            let subflow = sub as u8;
            if retransmit {
                self.board[(seq - self.una) as usize] = Unacked { state: Sent::Retransmitted, subflow, sent_at: now };
            } else {
                self.board.push_back(Unacked { state: Sent::InFlight, subflow, sent_at: now });
                self.nxt += 1;
            }
            self.pipe += 1;
            self.subs[sub].pipe += 1;
            let payload = self.payload(seq);
            self.host_bytes += payload as u64;
            if !self.rto_timer.running() {
                arm(out, Timer::Rto, self.rto_timer.set(now + self.uet_rto.unwrap_or(self.rto)));
            }
            if let Some(c) = self.credit.as_mut() {
                c.spend(payload + c.header());
            }
            let pull_target = self.pull_target();
            // `UecSrc::sendNewPacket`, `sendRtxPacket`: the last packet, one that fills the
            // window or spends the last credit, and a retransmission ask for an ACK at once.
            let fills = (self.sender_window && self.subs[sub].pipe as u64 >= cwnd_packets) || self.credit.as_ref().is_some_and(|c| !c.may_send());
            let ack_now = self.uet_rto.is_some() && (retransmit || seq + 1 == self.total || fills);
            out.push(Action::Data { seq, payload, retransmit, ack_now, pull_target, subflow });
        }
        self.arm_probe(now, out);
    }

    /// RFC 8985 §7.2: with data in flight, no recovery and no probe out, the probe timeout is
    /// two smoothed RTTs (a delayed ACK's wait more when one packet is in flight), never past
    /// the retransmission timeout; with nothing in flight it stops.
    fn arm_probe(&mut self, now: Time, out: &mut Vec<Action>) {
        let in_flight = self.una < self.nxt;
        let Some(rack) = self.rack.as_mut() else { return };
        if !in_flight {
            return rack.probe_timer.stop();
        }
        if self.recovery.is_some() || rack.probe_out.is_some() {
            return;
        }
        let srtt = self.srtt.map_or(self.rto, |(s, _)| Time(s as u64));
        let delack = if self.pipe == 1 && self.cfg.delayed_ack { self.cfg.delayed_ack_timeout } else { Time::ZERO };
        let at = (now + Time(srtt.ps().saturating_mul(2)) + delack).min(self.rto_timer.deadline);
        arm(out, Timer::Probe, rack.probe_timer.set(at));
    }

    /// RFC 8985 §7.3: the probe timeout passed with nothing acknowledged: the last packet sent
    /// goes again, so that its acknowledgement (a SACK of it) lets RACK find what was lost
    /// before it. It keeps its place in the scoreboard as in flight, sent now: a probe that
    /// proves needless widens no reordering window. (The RFC may send new data instead; a
    /// sender with new data and window to send it has no tail to probe.)
    fn probe(&mut self, now: Time, out: &mut Vec<Action>) {
        let seq = self.nxt.wrapping_sub(1);
        if self.una >= self.nxt || self.recovery.is_some() || *self.state(seq) != Sent::InFlight {
            return;
        }
        let Some(rack) = self.rack.as_mut() else { return };
        if rack.probe_out.is_some() {
            return;
        }
        rack.probe_out = Some(self.nxt);
        rack.sent.push_back((now, seq));
        self.board[(seq - self.una) as usize].sent_at = now;
        let payload = self.payload(seq);
        self.host_bytes += payload as u64;
        let subflow = self.board[(seq - self.una) as usize].subflow;
        out.push(Action::Data { seq, payload, retransmit: true, ack_now: false, pull_target: 0, subflow });
        arm(out, Timer::Rto, self.rto_timer.set(now + self.rto));
    }

    /// Whether the application has written all of new packet `seq` (new data goes in whole
    /// packets); if not, its timer is armed for when it will have.
    fn app_wrote(&mut self, now: Time, seq: u32, out: &mut Vec<Action>) -> bool {
        let (need, acked) = (self.bytes_before(seq + 1), self.bytes_before(self.una));
        let app = self.app.as_mut().expect("called with an application");
        if app.written(now, acked) >= need {
            return true;
        }
        arm(out, Timer::App, self.app_timer.set(app.when_written(need)));
        false
    }

    /// The host's NIC finished serializing a data packet of `payload` bytes: its TCP Small
    /// Queues budget is free again.
    pub fn on_transmitted(&mut self, now: Time, payload: u32, out: &mut Vec<Action>) {
        let held = self.host_queue_full();
        self.host_bytes -= payload as u64;
        if held {
            self.poll_transmit(now, out);
        }
    }

    /// Sender: an ACK reached the stack `rx_delay` after it reached the NIC. `noise` turns the
    /// measured RTT into the sample the stack sees (`nic.rtt_noise`); it is called once per
    /// sample, only when the ACK acknowledges new data.
    pub fn on_ack(&mut self, now: Time, ack: &AckHdr, rx_delay: Time, noise: impl FnOnce(Time) -> Time, out: &mut Vec<Action>) {
        // The subflow of the packet the ACK echoes.
        let split = self.subs.len() > 1;
        let on = if split { ack.subflow as usize } else { 0 };
        // The ACK echoes a send time before the retransmission of a packet it covers: the
        // original arrived, and the retransmission was spurious (Eifel, RFC 3522).
        let spurious = self.rack.is_some() && self.covers_retransmission_after(ack);
        let uet = self.uet_rto.is_some();
        if let Some(c) = self.credit.as_mut() {
            c.stop_speculating();
        }
        let (mut newly, mut sacked) = (0, false);
        if uet {
            newly += self.take_bitmap(ack.bitmap());
        } else if ack.sack[1] > ack.sack[0] {
            sacked = self.take_sack(ack.sack);
        }
        let una_before = self.una;
        let (acked, unsacked) = self.take_cumulative(ack.ack);
        newly += unsacked;
        if self.recovery.is_some_and(|(end, _)| self.una >= end) {
            self.recovery = None;
        }
        let una = self.una;
        if let Some(rack) = self.rack.as_mut().filter(|r| r.probe_out.is_some_and(|end| una >= end)) {
            rack.probe_out = None;
        }
        if let Some(rack) = self.rack.as_mut().filter(|r| spurious && una >= r.widened_until) {
            // RFC 8985 §6.2 step 4: a spurious retransmission widens the reordering window by
            // a quarter of the least RTT, once per round trip (detected by its echoed
            // timestamp, RFC 3522, where the RFC uses DSACK).
            rack.reo_wnd_mult += 1;
            rack.widened_until = self.nxt;
        }
        if spurious && matches!(self.recovery, Some((_, Loss::FastRetransmit))) {
            // The recovery was for nothing: undo its cuts and leave it (Linux
            // `tcp_try_undo_recovery`); packets still marked lost are resent all the same.
            for sub in self.subs.iter_mut().filter(|s| una < s.recover) {
                sub.cc.undo();
                sub.recover = 0;
            }
            self.recovery = None;
        }
        if let Some(rack) = self.rack.as_mut().filter(|_| acked > 0 || ack.sack[1] > ack.sack[0]) {
            // The newest delivered packet's send time and RTT (RFC 8985 §6.2 step 2), its
            // subflow's.
            let (xmit, rtt) = &mut self.subs[on].rack_delivered;
            *xmit = (*xmit).max(ack.ts);
            *rtt = now.saturating_sub(ack.ts);
            rack.min_rtt = rack.min_rtt.min(*rtt);
        }
        let lost = match (uet, self.rack.is_some()) {
            (true, _) => 0,
            (false, true) => self.rack_losses(now, out),
            (false, false) => self.mark_losses(),
        };
        self.on_losses(lost, now);
        // Ultra Ethernet samples the RTT of every packet an ACK is for (its send time echoed),
        // and its controller counts every byte newly acknowledged (`UecSrc::processAck`).
        // With subflows, a packet SACKed is in order on its own path: its ACK is a sample too
        // (as Linux takes one from newly SACKed data, `tcp_sacktag_one`'s `sack_rtt_us`).
        let sampled = if uet { newly > 0 } else { acked > 0 || (split && sacked) };
        let rtt = sampled.then(|| noise(now - ack.ts));
        if let Some(r) = rtt {
            self.rtt_sample(r);
        }
        // The ACK's subflow (its packet's, which the ACK's path echoes) takes the RTT sample and
        // the ECN echo; with subflows, each other one whose packets it acknowledged takes those
        // bytes.
        let in_recovery = matches!(self.recovery, Some((_, Loss::FastRetransmit)));
        let (snd_una, snd_nxt) = (self.bytes_before(self.una), self.bytes_before(self.nxt));
        let acked_bytes = if uet { newly } else { snd_una - self.bytes_before(una_before) };
        for s in 0..self.subs.len() {
            let sub = &mut self.subs[s];
            let bytes = if split { std::mem::take(&mut sub.acked) } else { acked_bytes };
            if s != on && bytes == 0 {
                continue;
            }
            sub.cc.on_ack(&AckEvent {
                now,
                acked_bytes: bytes,
                ece: ack.ece && s == on,
                rtt: rtt.filter(|_| s == on).map(|r| sub.filter.feed(r)),
                snd_una,
                snd_nxt,
                in_recovery: in_recovery && self.una < sub.recover,
                cwnd_limited: sub.cwnd_limited,
                endpoint_delay: Time::from_ns(ack.remote_queuing_ns as u64) + rx_delay,
                hops: ack.hops,
            });
        }
        let cc = &mut self.subs[on].cc;
        let asked = cc.take_repath();
        if self.report_acks || asked {
            let over_target = cc.over_target();
            out.push(Action::Acked(Acked { bytes: acked_bytes, ece: ack.ece, over_target, snd_una, snd_nxt, asked }));
        }
        // RFC 6298 §5: restart the timer when new data is acknowledged, stop it when all is.
        // (Ultra Ethernet's runs from each packet's send: `uet_timeout` looks again.)
        if self.una == self.nxt {
            self.rto_timer.stop();
        } else if acked > 0 && !uet {
            arm(out, Timer::Rto, self.rto_timer.set(now + self.rto));
        }
        if let Some(r) = rtt {
            out.push(Action::RttSample(r));
        }
        if let Some(m) = self.messages.as_mut() {
            // Messages acknowledged whole no longer place bytes.
            while let Some(&end) = m.ends.front().filter(|e| e.0 <= self.una) {
                m.base = end;
                m.ends.pop_front();
            }
        }
        if self.una == self.total && self.messages.is_none() {
            out.push(Action::Done);
        } else {
            // Sends what the window allows and re-arms the probe from this ACK.
            self.poll_transmit(now, out);
        }
    }

    /// An event for `timer` came at `now`.
    pub fn on_timer(&mut self, now: Time, timer: Timer, out: &mut Vec<Action>) {
        let t = match timer {
            Timer::Start => return self.poll_transmit(now, out),
            Timer::Rto => &mut self.rto_timer,
            Timer::Pace => &mut self.pace_timer,
            Timer::App => &mut self.app_timer,
            Timer::Reorder => match &mut self.rack {
                Some(rack) => &mut rack.timer,
                None => return,
            },
            Timer::Probe => match &mut self.rack {
                Some(rack) => &mut rack.probe_timer,
                None => return,
            },
            // The receiving end's (`WindowRx::on_timer`).
            Timer::DelayedAck => return,
        };
        match t.fire(now) {
            Ok(false) => {}
            Err(at) => out.push(Action::Timer { timer, at }),
            Ok(true) => match timer {
                Timer::Rto => self.timeout(now, out),
                Timer::Probe => self.probe(now, out),
                Timer::Reorder => {
                    let lost = self.rack_losses(now, out);
                    self.on_losses(lost, now);
                    self.poll_transmit(now, out)
                }
                _ => self.poll_transmit(now, out),
            },
        }
    }

    /// Ultra Ethernet: packet `seq` was trimmed (its NACK came): it is resent first, and the
    /// controller takes its NACK response (`UecSrc::processNack`). A NACK of a packet
    /// acknowledged or already resent since asks nothing.
    pub fn on_nack(&mut self, now: Time, seq: u32, out: &mut Vec<Action>) {
        if !(self.una..self.nxt).contains(&seq) || !matches!(*self.state(seq), Sent::InFlight | Sent::Retransmitted) {
            return;
        }
        if let Some(c) = self.credit.as_mut() {
            c.stop_speculating();
        }
        self.mark_lost(seq);
        let flight = self.flight_bytes();
        self.subs[self.board[(seq - self.una) as usize].subflow as usize].cc.on_loss(Loss::FastRetransmit, flight, now);
        self.poll_transmit(now, out);
    }

    /// Receiver credits: a pull granting up to `pull` (cumulative quanta) came
    /// (`UecSrc::processPull`).
    pub fn on_pull(&mut self, now: Time, pull: u64, out: &mut Vec<Action>) {
        if let Some(c) = self.credit.as_mut() {
            c.on_pull(pull);
            self.poll_transmit(now, out);
        }
    }

    /// Ultra Ethernet's timeout (`UecSrc::rtxTimerExpired`): every packet in flight sent `rto`
    /// or more ago is lost, each a timeout the controller takes; the timer waits for the
    /// earliest of the others.
    fn uet_timeout(&mut self, now: Time, rto: Time, out: &mut Vec<Action>) {
        let mut next = Time::MAX;
        for seq in self.una..self.nxt {
            let u = self.board[(seq - self.una) as usize];
            if !matches!(u.state, Sent::InFlight | Sent::Retransmitted) {
                continue;
            }
            if u.sent_at + rto > now {
                next = next.min(u.sent_at + rto);
                continue;
            }
            self.mark_lost(seq);
            out.push(Action::TimedOut);
            let flight = self.flight_bytes();
            self.subs[u.subflow as usize].cc.on_loss(Loss::Timeout, flight, now);
        }
        if next < Time::MAX {
            arm(out, Timer::Rto, self.rto_timer.set(next));
        }
        self.poll_transmit(now, out);
        // Receiver credits: lost packets and no credit to resend them, or nothing in flight and
        // no credit to send: the receiver may not know (or its pulls were lost), so the sender
        // asks (`UecSrc::rtxTimerExpired`, `sendRTS`; htsim's sender waits on lost pulls for
        // good).
        if self.credit.as_ref().is_some_and(|c| !c.may_send()) && (self.lost().next().is_some() || (self.pipe == 0 && self.next_to_send().is_some())) {
            let pull_target = self.pull_target();
            let c = self.credit.as_mut().expect("checked");
            c.stop_speculating();
            if c.request_to_send(now) {
                out.push(Action::RequestToSend { pull_target });
            }
            // The request may be lost too: the timer asks again (htsim's RTS has its own).
            if !self.rto_timer.running() {
                arm(out, Timer::Rto, self.rto_timer.set(now + rto));
            }
        }
    }

    /// RFC 6298 §5.4–5.7 with RFC 6675 §5.1: every packet not SACKed is lost; back off the timer.
    fn timeout(&mut self, now: Time, out: &mut Vec<Action>) {
        if let Some(rto) = self.uet_rto {
            return self.uet_timeout(now, rto, out);
        }
        out.push(Action::TimedOut);
        for s in 0..self.subs.len() {
            let flight = self.flight_of(s);
            let sub = &mut self.subs[s];
            sub.cc.on_loss(Loss::Timeout, flight, now);
            (sub.pipe, sub.recover) = (0, self.nxt);
        }
        for u in self.board.iter_mut() {
            if u.state != Sent::Sacked {
                u.state = Sent::Lost;
            }
        }
        self.pipe = 0;
        self.retx_hint = self.una;
        self.lost_scan = self.nxt;
        self.recovery = Some((self.nxt, Loss::Timeout));
        if let Some(rack) = self.rack.as_mut() {
            rack.probe_out = None;
            rack.probe_timer.stop();
            // Nothing is in flight: every transmission's entry is stale.
            rack.sent.clear();
        }
        self.rto = Time(self.rto.ps().saturating_mul(2)).min(Time::from_us(60_000_000));
        // Nothing is in flight now: the timer restarts with the retransmission (RFC 6298 §5.5–5.6),
        // which pacing may hold back.
        self.rto_timer.stop();
        self.poll_transmit(now, out);
    }
}

impl WindowRx {
    pub fn new(cfg: &WindowConfig) -> WindowRx {
        WindowRx {
            delayed_ack: cfg.delayed_ack.then_some(cfg.delayed_ack_timeout),
            rcv_nxt: 0,
            ooo: Vec::new(),
            pending: 0,
            ce_state: false,
            ts_recent: Time::ZERO,
            echo: (0, 0),
            delack_timer: LazyTimer::default(),
            uet: cfg.uet.as_ref().map(|u| UetRx { sack_threshold: u.sack_threshold.0, accepted: 0, any: false, ack_request: false }),
            sink: cfg.uet.as_ref().filter(|u| u.congestion.credits()).map(|_| Sink::default()),
        }
    }

    /// Receiver credits: a packet carried pull target `target` (`UecSink::handlePullTarget`);
    /// with `resend` (a trimmed packet, a request to send) the sender has packets to send
    /// again, and the connection wants credit whatever its target.
    fn pull_target(&mut self, target: u64, resend: bool, out: &mut Vec<Action>) {
        let Some(sink) = self.sink.as_mut() else { return };
        if sink.on_target(target) || (resend && sink.join()) {
            out.push(Action::RequestPull);
        }
    }

    /// Packets received in order (every one before it).
    pub fn rcv_nxt(&self) -> u32 {
        self.rcv_nxt
    }

    /// Receiver credits: the sender asked for credit to resend (its RTS, `UecSink::processRts`).
    pub fn on_request_to_send(&mut self, pull_target: u64, out: &mut Vec<Action>) {
        self.pull_target(pull_target, true, out);
    }

    /// The delayed-ACK timer has an event at `now`: a held ACK goes out when it expired.
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Action>) {
        match self.delack_timer.fire(now) {
            Ok(true) if self.pending > 0 => self.send_ack(self.ce_state, self.ts_recent, [0, 0], out),
            Err(at) => out.push(Action::Timer { timer: Timer::DelayedAck, at }),
            _ => {}
        }
    }

    /// A data packet reached the stack `rx_delay` after it reached the NIC.
    pub fn on_data(&mut self, now: Time, pkt: &DataHdr, rx_delay: Time, out: &mut Vec<Action>) {
        self.echo = (pkt.hops, u32::try_from(rx_delay.ps() / 1000).unwrap_or(u32::MAX));
        if self.uet.is_some() {
            return self.uet_data(pkt, out);
        }
        let seq = pkt.seq;
        if self.received(seq) {
            out.push(Action::Duplicate { payload: pkt.payload });
            return self.send_ack(pkt.ce, pkt.ts, [0, 0], out);
        }
        if seq != self.rcv_nxt {
            let block = super::insert_seq(&mut self.ooo, seq);
            out.push(Action::Delivered { payload: pkt.payload, wire: pkt.wire });
            return self.send_ack(pkt.ce, pkt.ts, block, out);
        }
        let delayed = self.delayed_ack.is_some();
        let ce_changed = pkt.ce != self.ce_state;
        if delayed && self.pending > 0 && ce_changed {
            // DCTCP: acknowledge what was held with the old CE state before switching.
            self.send_ack(self.ce_state, self.ts_recent, [0, 0], out);
        }
        self.ce_state = pkt.ce;
        if self.pending == 0 {
            self.ts_recent = pkt.ts;
        }
        self.rcv_nxt += 1;
        let filled_hole = self.ooo.first().is_some_and(|r| r[0] == self.rcv_nxt);
        if filled_hole {
            self.rcv_nxt = self.ooo.remove(0)[1];
        }
        self.pending += 1;
        // A change of CE state is acknowledged at once (Linux `dctcp_ece_ack_update` sets
        // `ICSK_ACK_NOW`), so the sender learns of it without the delayed-ACK wait.
        let now_ack = !delayed || ce_changed || self.pending >= 2 || filled_hole || !self.ooo.is_empty();
        if let (false, Some(timeout)) = (now_ack, self.delayed_ack) {
            arm(out, Timer::DelayedAck, self.delack_timer.set(now + timeout));
        }
        out.push(Action::Delivered { payload: pkt.payload, wire: pkt.wire });
        if now_ack {
            self.send_ack(self.ce_state, self.ts_recent, [0, 0], out);
        }
    }

    /// The cumulative ACK now, echoing `ece` and TSval `ts`, with SACK block `sack`;
    /// nothing stays pending.
    fn send_ack(&mut self, ece: bool, ts: Time, sack: [u32; 2], out: &mut Vec<Action>) {
        self.pending = 0;
        self.delack_timer.stop();
        out.push(Action::Ack(AckHdr { ack: self.rcv_nxt, sack, ece, ts, hops: self.echo.0, remote_queuing_ns: self.echo.1, subflow: 0 }));
    }

    /// Ultra Ethernet's receiver (`UecSink::processData`): the packet is placed, and
    /// acknowledged when `UetConfig`'s rule says.
    fn uet_data(&mut self, pkt: &DataHdr, out: &mut Vec<Action>) {
        self.pull_target(pkt.pull_target, false, out);
        let seq = pkt.seq;
        if self.received(seq) {
            out.push(Action::Duplicate { payload: pkt.payload });
            let base = if pkt.ce { seq } else { self.sack_base(seq) };
            self.uet.as_mut().expect("Ultra Ethernet").accepted = 0;
            return self.uet_ack((base, pkt.ce), pkt.ts, out);
        }
        out.push(Action::Delivered { payload: pkt.payload, wire: pkt.wire });
        let u = self.uet.as_mut().expect("Ultra Ethernet");
        let mut now_ack = !std::mem::replace(&mut u.any, true);
        u.accepted += pkt.wire as u64;
        if pkt.ack_now {
            now_ack = true;
            u.ack_request = true;
        }
        if seq == self.rcv_nxt {
            self.rcv_nxt += 1;
            if self.ooo.first().is_some_and(|r| r[0] == self.rcv_nxt) {
                self.rcv_nxt = self.ooo.remove(0)[1];
            }
            if self.ooo.is_empty() && std::mem::take(&mut u.ack_request) {
                now_ack = true;
            }
        } else {
            super::insert_seq(&mut self.ooo, seq);
        }
        if pkt.ce || u.accepted >= u.sack_threshold || now_ack {
            u.accepted = 0;
            let base = if pkt.ce || pkt.ack_now { seq } else { self.sack_base(seq) };
            self.uet_ack((base, pkt.ce), pkt.ts, out);
        }
    }

    /// A trimmed packet's headers arrived (`switch.trimming`): Ultra Ethernet NACKs a packet
    /// it does not have at once (`UecSink::processTrimmed`), and acknowledges one it has;
    /// TCP reads no trimmed headers.
    /// With receiver credits, the connection wants credit for the resend.
    pub fn on_trimmed(&mut self, seq: u32, (last_hop, pull_target): (bool, u64), ts: Time, out: &mut Vec<Action>) {
        if self.uet.is_none() {
            return;
        }
        if self.received(seq) {
            return self.uet_ack((self.sack_base(seq), false), ts, out);
        }
        out.push(Action::Nack { seq, last_hop, ts });
        self.pull_target(pull_target, true, out);
    }

    /// Ultra Ethernet's bitmap base for an ACK triggered by packet `seq`: up to 63 packets
    /// below it, above the cumulative point (`UecSink::sackBitmapBase`).
    fn sack_base(&self, seq: u32) -> u32 {
        seq.saturating_sub(63).max(self.rcv_nxt + 1)
    }

    /// Ultra Ethernet's ACK: cumulative, with the bitmap of the 64 packets from `base`,
    /// echoing `ece` and the triggering packet's send time `ts`.
    fn uet_ack(&mut self, (base, ece): (u32, bool), ts: Time, out: &mut Vec<Action>) {
        let mut bitmap = 0u64;
        for r in &self.ooo {
            for seq in r[0].max(base)..r[1].min(base.saturating_add(64)) {
                bitmap |= 1 << (seq - base);
            }
        }
        out.push(Action::Ack(AckHdr::uet(self.rcv_nxt, (base, bitmap), ece, ts, self.echo.0)));
    }

    fn received(&self, seq: u32) -> bool {
        seq < self.rcv_nxt || self.ooo.iter().any(|r| r[0] <= seq && seq < r[1])
    }
}

/// Queues an event for `timer` when the timer asks for one.
fn arm(out: &mut Vec<Action>, timer: Timer, at: Option<Time>) {
    if let Some(at) = at {
        out.push(Action::Timer { timer, at });
    }
}
