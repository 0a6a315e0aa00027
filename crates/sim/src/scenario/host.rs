//! The hosts' side: `[nic]` (wire sizes, segment offload, ACK class, pacing), `[host]` (the
//! receive stack's costs), `[transport]` and `[cc]`.

use super::de::{join, parse, Table};
use super::validate::Context;
use super::{invalid, variant_name, ScenarioError};
use rttlab_cc::plb::PlbParams;
use rttlab_cc::registry::ReadParams;
use rttlab_cc::{Algorithm, Bytes, Cc, Kind, Needs, ParamError, Rate, Signal, Time};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NicConfig {
    /// Largest data packet on the wire, per-packet overhead included.
    pub mtu: Bytes,
    /// Per-packet overhead on the wire (Ethernet, IP, transport headers, preamble, gap).
    pub header: Bytes,
    /// Wire size of an ACK and of a PFC frame.
    pub ack: Bytes,
    /// Largest segment handed to the NIC at once (TIMELY §3.3: up to 64 KB). Message
    /// transport only; absent: 16 KB there (and none on the window transport).
    pub segment: Option<Bytes>,
    /// Static cap on a flow's unacknowledged bytes (TIMELY §3.3 "safeguard"). Message
    /// transport only; absent: 64 KB there.
    pub max_outstanding: Option<Bytes>,
    /// Segments a connection may have in the NIC waiting to be sent: its send queue's depth
    /// (work requests of an RDMA queue pair; perftest's default is 128). A connection at the
    /// limit releases its next segment when one leaves, which bounds the NIC's memory when
    /// releases outrun the link. Message transport only; absent: 128 there.
    pub send_queue: Option<u32>,
    /// The local ACK timeout of go-back-N (`transport::message`; InfiniBand vol. 1 §9.7.6.1.3:
    /// 4.096 µs × 2^n). Message transport only; absent there: 67.108864ms, n = 14, the
    /// default of perftest (as `send_queue`'s).
    pub retransmit_timeout: Option<Time>,
    /// RTT samples of either transport get uniform noise in [0, rtt_noise] added (TIMELY §6.1,
    /// Fig. 12), on top of `timestamps`'.
    pub rtt_noise: Time,
    /// How the hosts timestamp round trips (`Timestamps`).
    pub timestamps: Timestamps,
    /// The hosts' load with software timestamps (`HostLoad`); absent: `idle`.
    pub host_load: Option<HostLoad>,
    /// Priority class of ACKs (TIMELY §2 "ACK prioritization": the highest, 0).
    pub ack_class: u8,
    /// NIC per-packet pacing inside a segment at this fixed rate (TIMELY §5, Fig. 16);
    /// absent: packets leave back to back at line rate.
    pub pacing_rate: Option<Rate>,
    /// How the NIC shares its link between the connections (queue pairs) with segments in it
    /// (`NicArbitration`). Message transport only; absent: `qp_round_robin` there.
    pub arbitration: Option<NicArbitration>,
    /// What a connection's rate paces (`RatePacing`). Message transport only; absent:
    /// `segment` there.
    pub rate_pacing: Option<RatePacing>,
    /// What becomes of a connection's rate over an idle period (`RateAfterIdle`). Message
    /// transport only; absent: `keep` there.
    pub rate_after_idle: Option<RateAfterIdle>,
    /// How the NIC repairs a lost packet (`Recovery`). Message transport only; absent:
    /// `go_back_n` there.
    pub recovery: Option<Recovery>,
}

/// `nic.timestamps`: the clock of a connection's RTT samples (TIMELY §3.1, Figs. 1 and 11).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Timestamps {
    /// The NIC's hardware timestamps (and hardware ACKs): the simulator's own clock. TIMELY's
    /// calibrated host-to-NIC mapping is "just as accurate" (Fig. 11), so it is this too.
    #[default]
    Nic,
    /// Software timestamps: each sample also holds the host's delay from the ACK's arrival to
    /// the stack running, drawn from the delays measured on this project's kernel at
    /// `host_load` (`host::timestamps`).
    Software,
}

/// `nic.host_load`: what else the hosts run, for software timestamps (Fig. 11: their variance
/// "increases as load on the host increases").
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostLoad {
    /// Nothing else.
    #[default]
    Idle = 0,
    /// One CPU-bound process per core.
    Busy = 1,
}

/// `nic.recovery`: the message transport's loss recovery.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// An RDMA reliable connection's (IBA vol. 1 §9.7): the receiver takes only the next PSN,
    /// and the sender goes back to the first missing one.
    #[default]
    GoBackN,
    /// IRN (Mittal et al., SIGCOMM'18) and Ultra Ethernet: the receiver places packets out of
    /// order and answers each one beyond a gap with a NAK naming it (a selective
    /// acknowledgement); the sender resends only the packets it counts lost.
    SelectiveRepeat,
}

/// A connection's rate when it sends again with nothing outstanding: an unpublished detail of
/// TIMELY (the paper does not say), both readings offered.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateAfterIdle {
    /// The rate the controller last computed carries over the idle period.
    #[default]
    Keep,
    /// The controller starts over (its initial rate, a fresh gradient filter).
    Reset,
}

/// What the rate controller's rate paces on the message transport.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RatePacing {
    /// The rate engine spaces segments, and each segment leaves as a burst at line rate (TIMELY
    /// §3.3): a segment released after an idle gap goes at line rate whatever the rate.
    #[default]
    Segment,
    /// A per-connection hardware rate limiter also spaces the segment's packets at the
    /// connection's rate, as the HPCC simulator's NIC does for TIMELY and DCQCN (reference
    /// algorithms.md §1.7: "per-packet rate limiter"); the completion's RTT sample then leaves
    /// out the segment's time at that rate (as with `pacing_rate`, TIMELY §5).
    Packet,
}

/// How a host's NIC chooses the next packet among the segments it holds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NicArbitration {
    /// One packet per connection in turn: RDMA NICs schedule their send queues per packet, as
    /// the HPCC simulator's NIC does (`RdmaEgressQueue::GetNextQindex`, round-robin over queue
    /// pairs from the last one served). A connection's segments still go in order.
    #[default]
    QpRoundRobin,
    /// Whole segments in the order they were handed to the NIC: a segment goes out as one
    /// burst at line rate before the next one starts (TIMELY §3.3 for one flow; rttlab's
    /// model before this option).
    SegmentFifo,
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            mtu: Bytes(1500),
            header: Bytes(64),
            ack: Bytes(64),
            segment: None,
            max_outstanding: None,
            send_queue: None,
            retransmit_timeout: None,
            rtt_noise: Time::ZERO,
            timestamps: Timestamps::Nic,
            host_load: None,
            ack_class: 0,
            pacing_rate: None,
            arbitration: None,
            rate_pacing: None,
            rate_after_idle: None,
            recovery: None,
        }
    }
}

/// The largest MTU: an IP packet's 64 KiB less room for the INT records a packet may collect.
pub const MAX_MTU: Bytes = Bytes(63 * 1024);

impl NicConfig {
    pub const DEFAULT_SEGMENT: Bytes = Bytes(16_000);
    pub const DEFAULT_MAX_OUTSTANDING: Bytes = Bytes(64_000);
    /// HPCC's default: no cap beyond its window.
    pub const UNLIMITED_OUTSTANDING: Bytes = Bytes(1 << 40);
    pub const DEFAULT_SEND_QUEUE: u32 = 128;
    /// 4.096 µs × 2^14.
    pub const DEFAULT_RETRANSMIT_TIMEOUT: Time = Time::from_ns(4096 << 14);

    pub fn payload_per_packet(&self) -> u64 {
        self.mtu.0 - self.header.0
    }

    /// The message transport's segment size.
    pub fn segment(&self) -> Bytes {
        self.segment.unwrap_or(Self::DEFAULT_SEGMENT)
    }

    /// The message transport's cap on outstanding bytes.
    pub fn max_outstanding(&self) -> Bytes {
        self.max_outstanding.unwrap_or(Self::DEFAULT_MAX_OUTSTANDING)
    }

    /// The message transport's send queue depth, in segments.
    pub fn send_queue(&self) -> u32 {
        self.send_queue.unwrap_or(Self::DEFAULT_SEND_QUEUE)
    }

    /// The message transport's local ACK timeout.
    pub fn retransmit_timeout(&self) -> Time {
        self.retransmit_timeout.unwrap_or(Self::DEFAULT_RETRANSMIT_TIMEOUT)
    }
}

/// The receiving host's network stack (Swift §3.1, Fig. 2): packets of the window transport
/// wait in a bounded NIC Rx queue and are processed one at a time, each taking
/// `rx_packet_time` plus its payload at `rx_copy_rate`. The time from NIC arrival to the end of
/// processing is the packet's remote queuing (`t4 − t2`) or, for an ACK, the local NIC-Rx delay
/// (`t6 − t5`). Message-transport packets are the NIC's business (RDMA) and skip it. Without
/// costs (the default) packets are processed the moment they arrive.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    pub rx_packet_time: Time,
    /// Absent: no per-byte cost.
    pub rx_copy_rate: Option<Rate>,
    /// Packets the NIC Rx queue holds, the one in processing included; more are dropped.
    pub rx_queue_packets: u32,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig { rx_packet_time: Time::ZERO, rx_copy_rate: None, rx_queue_packets: 4096 }
    }
}

impl HostConfig {
    /// Processing packets takes time at all.
    pub fn enabled(&self) -> bool {
        self.rx_packet_time > Time::ZERO || self.rx_copy_rate.is_some()
    }

    /// Time to process a packet carrying `payload` bytes.
    pub fn processing(&self, payload: u32) -> Time {
        self.rx_packet_time + self.rx_copy_rate.map_or(Time::ZERO, |r| r.serialization(payload as u64))
    }
}

/// How flows move their data ([`crate::transport`]).
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TransportConfig {
    /// OS-bypass messaging: NIC-offloaded segments paced by a rate controller (TIMELY §3).
    Message {
        /// Protective ReRoute (PRR, Wetherall et al., SIGCOMM'23): on a retransmission timeout
        /// the connection takes a new path label, as Linux redraws its flow label
        /// (`sk_rethink_txhash`).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        prr: bool,
    },
    /// A TCP-like stack with a congestion window and loss recovery (`transport::window`).
    Window(WindowConfig),
}

/// The window transport's stack settings. Defaults are a datacenter-tuned Linux stack.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WindowConfig {
    /// Floor of the retransmission timeout (RFC 6298 says 1 s, Linux 200 ms; datacenter stacks
    /// lower it to about a millisecond). Also the timeout before the first RTT sample.
    pub min_rto: Time,
    /// Acknowledge every second in-order packet, or after `delayed_ack_timeout` (RFC 5681
    /// §4.2), with DCTCP's CE state machine. Off: every packet is acknowledged at once.
    pub delayed_ack: bool,
    pub delayed_ack_timeout: Time,
    /// SACKed packets above a hole that make it a loss (RFC 6675 DupThresh), with
    /// `loss_detection = "dupthresh"`.
    pub dupthresh: u32,
    /// How the sender decides a packet is lost before its timeout.
    pub loss_detection: LossDetection,
    /// Most payload one connection may have queued in its host's NIC, sent but not yet
    /// serialized (Linux TCP Small Queues, `tcp_limit_output_bytes`); at least one packet.
    pub tsq_limit: Bytes,
    /// Socket send buffer of a connection whose application writes at a rate (`flows.rate`):
    /// written data not yet acknowledged; writes beyond it are refused. Linux autotunes up to
    /// 4 MB (`tcp_wmem`); ns-3's default is 128 KiB.
    pub send_buffer: Bytes,
    /// Protective ReRoute (PRR, SIGCOMM'23): a retransmission timeout takes a new path label.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub prr: bool,
    /// Subflows of a connection, each on a path of its own with a congestion controller of its
    /// own (htsim's multipath Swift, `-subflows`; MPTCP's uncoupled subflows); 1: one path.
    #[serde(skip_serializing_if = "is_one")]
    pub subflows: u8,
    /// Ultra Ethernet's packet delivery instead of TCP's (`transport.kind = "uet"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uet: Option<UetConfig>,
}

fn is_one(n: &u8) -> bool {
    *n == 1
}

/// Ultra Ethernet's transport (`transport.kind = "uet"`; UEC 1.0 specification §3.5, the PDS,
/// as htsim's `htsim_uec` runs it, uet-htsim `sim/uec.cpp`) on the window transport's sender and
/// receiver: the receiver acknowledges every `sack_threshold` bytes, at once on an ECN mark,
/// on the first packet and on the sender's request, with a cumulative ACK and a 64-packet SACK
/// bitmap, and NACKs a trimmed packet at once; the sender resends a packet on its NACK or once
/// `rto` has passed since it was sent, and on nothing else (no duplicate-ACK or time-based
/// reordering rule: every packet may take its own path).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UetConfig {
    /// Bytes received since the last ACK that make the receiver acknowledge (htsim's
    /// `_bytes_unacked_threshold`, 16 KB).
    pub sack_threshold: Bytes,
    /// A packet not acknowledged this long after it was sent is resent. Absent: 15 µs plus six
    /// drains of a switch's data queue (`switch.queue_limit`, or one BDP at the largest
    /// unloaded RTT without one) at the sender's line rate, as `htsim_uec` sets it
    /// (`main_uec.cpp`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rto: Option<Time>,
    /// Which end controls congestion (UEC 1.0 §3.6; htsim's `-sender_cc_only`,
    /// `-receiver_cc_only`, both by default): [`UetCongestion`].
    pub congestion: UetCongestion,
    /// Receiver credits: the credit a sender starts with (speculative, before any pull) and
    /// the most it holds or asks for beyond what it has. Absent: 1.5 BDP at the sender's line
    /// rate and the fabric's largest unloaded RTT (htsim's `UecSrc::initRccc`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credit_window: Option<Bytes>,
    /// Receiver credits alone on a fabric oversubscribed this many to one: each receiver's
    /// pull rate follows the congestion its packets met (htsim's `OversubscribedCC`, which
    /// `htsim_uec` runs whenever its fabric is oversubscribed and NSCC is off), never below 0.9 /
    /// `oversubscription` of its line rate. Absent: the pull rate stays 0.99 of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oversubscription: Option<f64>,
}

/// `transport.congestion` of Ultra Ethernet's transport.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UetCongestion {
    /// The sender's window alone: NSCC (`cc`), network-signal congestion control.
    #[default]
    Nscc,
    /// The receiver's credits alone (RCCC, [`crate::transport::credit`]): each receiver's
    /// pacer grants credit at 0.99 of its line rate; the controller's window limits nothing.
    Rccc,
    /// Both: a packet goes when the window and credit both allow.
    Both,
}

impl UetCongestion {
    /// Receivers grant credit.
    pub fn credits(self) -> bool {
        self != UetCongestion::Nscc
    }

    /// The controller's window limits the sender.
    pub fn sender_window(self) -> bool {
        self != UetCongestion::Rccc
    }
}

impl Default for UetConfig {
    fn default() -> Self {
        UetConfig { sack_threshold: Bytes(16_384), rto: None, congestion: UetCongestion::Nscc, credit_window: None, oversubscription: None }
    }
}

impl Default for WindowConfig {
    fn default() -> Self {
        WindowConfig {
            min_rto: Time::from_us(1000),
            delayed_ack: true,
            delayed_ack_timeout: Time::from_us(1000),
            dupthresh: 3,
            loss_detection: LossDetection::Dupthresh,
            tsq_limit: Bytes(256_000),
            send_buffer: Bytes(4_000_000),
            prr: false,
            subflows: 1,
            uet: None,
        }
    }
}

/// `transport.loss_detection`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossDetection {
    /// `dupthresh` packets SACKed above it (RFC 6675): reordering deeper than that is taken
    /// for loss.
    #[default]
    Dupthresh,
    /// By time (RACK, RFC 8985 §6): a packet sent before one that was delivered is lost once
    /// that delivery's RTT plus a reordering window (a quarter of the least RTT) has passed
    /// since it was sent; reordering within the window costs nothing.
    Rack,
}

/// `[cc]`: the congestion controller, and what every connection does beside it whatever the
/// controller is: PLB's repathing and the filter on a delay controller's RTT samples.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CcSection {
    #[serde(flatten)]
    pub controller: CcConfig,
    /// Protective Load Balancing (`rttlab_cc::plb`): absent, connections keep their path.
    pub plb: Option<PlbParams>,
    /// Which RTT sample a delay controller (Swift, TIMELY) reacts to.
    pub feedback: Feedback,
    /// `feedback = "median"`: the samples the median is taken over.
    pub feedback_samples: u32,
}

impl Default for CcSection {
    fn default() -> Self {
        CcSection { controller: CcConfig::default(), plb: None, feedback: Feedback::Latest, feedback_samples: FEEDBACK_SAMPLES }
    }
}

/// `cc.feedback`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feedback {
    /// Each sample as it comes (the papers' controllers).
    #[default]
    Latest,
    /// The median of the connection's last `feedback_samples` samples: under multipath a
    /// sample from one slow path no longer sets the window (MSwift, 2025).
    Median,
}

/// `cc.feedback_samples`'s default: an odd count, so the median is one of the samples.
pub const FEEDBACK_SAMPLES: u32 = 5;

impl CcSection {
    /// `plb`, `feedback` and `feedback_samples`, then the controller from the keys left.
    pub(crate) fn read(at: &str, mut value: serde_json::Value) -> Result<CcSection, ScenarioError> {
        let mut take = |key: &str| value.as_object_mut().and_then(|m| m.remove(key)).map(|v| (join(at, key), v));
        // A resolved scenario writes an absent `plb` as null.
        let plb = take("plb").filter(|(_, v)| !v.is_null()).map(|(at, v)| parse(&at, v)).transpose()?;
        let feedback = take("feedback").map(|(at, v)| parse(&at, v)).transpose()?.unwrap_or_default();
        let feedback_samples = take("feedback_samples").map(|(at, v)| parse(&at, v)).transpose()?.unwrap_or(FEEDBACK_SAMPLES);
        Ok(CcSection { controller: CcConfig::read(at, value)?, plb, feedback, feedback_samples })
    }

    /// PLB and the feedback filter need a congestion signal of the controller's: an error
    /// names the controller that gives none.
    pub(crate) fn validate(&self) -> Result<(), ScenarioError> {
        self.controller.validate()?;
        let needs = self.controller.needs();
        let name = self.controller.name();
        if let Some(plb) = &self.plb {
            plb.validate().map_err(|ParamError { field, value, allowed }| invalid(format!("cc.{field}"), value, allowed))?;
            let python = matches!(self.controller, CcConfig::Python(_));
            if python && !needs.ecn {
                return Err(invalid(
                    "cc.plb",
                    format!("{{ rounds = {}, threshold = {} }}", plb.rounds, plb.threshold),
                    "a Python controller that declares needs.ecn (PLB counts its ECN-echoed rounds); one with a delay target calls self.repath() itself",
                ));
            }
            if !needs.ecn && !needs.delay {
                return Err(invalid(
                    "cc.plb",
                    format!("{{ rounds = {}, threshold = {} }}", plb.rounds, plb.threshold),
                    format!("a controller with a congestion signal (ECN marks or a delay target); cc.algorithm = \"{name}\" gives none"),
                ));
            }
        }
        if self.feedback == Feedback::Median && !needs.delay {
            return Err(invalid("cc.feedback", "median", format!("\"latest\": cc.algorithm = \"{name}\" keeps no delay target to filter samples for")));
        }
        if !(1..=1024).contains(&self.feedback_samples) {
            return Err(invalid("cc.feedback_samples", self.feedback_samples, "1 to 1024 samples"));
        }
        Ok(())
    }
}

/// The congestion controller of every flow: one of the cc crate's registry
/// (`rttlab_cc::Cc`, whose modules document every key), or a class written in Python.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum CcConfig {
    Native(Cc),
    /// A controller written in Python (`rttlab.RateController` or `rttlab.WindowController`),
    /// run through [`crate::Controllers`]: the front end that runs the simulation imports
    /// `class`, checks its parameters (the other keys) and its kind against the transport, and
    /// writes the needs the class declares.
    Python(PythonCc),
}

impl Default for CcConfig {
    fn default() -> Self {
        CcConfig::Native(Cc::default())
    }
}

/// `cc.algorithm = "python"`: the class, what it needs and its parameters, as the Python front
/// end resolved them (every default of the class written out).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(tag = "algorithm", rename = "python")]
pub struct PythonCc {
    /// `module:Class`, importable where the simulation runs.
    pub class: String,
    /// What the class declares it needs (its `needs`).
    pub needs: Needs,
    /// The class's parameters.
    #[serde(flatten)]
    pub params: serde_json::Map<String, serde_json::Value>,
}

impl CcConfig {
    pub fn name(&self) -> &'static str {
        match self {
            CcConfig::Native(c) => c.name(),
            CcConfig::Python(_) => "python",
        }
    }

    /// What the controller declares it needs of the transport and the fabric.
    pub fn needs(&self) -> Needs {
        match self {
            CcConfig::Native(c) => c.needs(),
            CcConfig::Python(p) => p.needs.clone(),
        }
    }

    /// The transport it drives; `None` for a Python class, whose kind the front end checks.
    pub fn kind(&self) -> Option<Kind> {
        match self {
            CcConfig::Native(c) => Some(c.kind()),
            CcConfig::Python(_) => None,
        }
    }

    /// What TIMELY's gradient runs on, and the `ind` signal's threshold (`rttlab_cc::signal`).
    pub fn signal(&self) -> (Signal, Time) {
        let n = self.needs();
        (n.signal, n.signal_threshold)
    }
}

impl NicConfig {
    pub(crate) fn validate(&self, ctx: &Context) -> Result<(), ScenarioError> {
        if self.mtu > MAX_MTU {
            return Err(invalid("nic.mtu", self.mtu, format!("at most {MAX_MTU} (a packet's size is 16 bits, with room for INT records)")));
        }
        if self.header >= self.mtu {
            return Err(invalid("nic.header", self.header, format!("must be smaller than nic.mtu ({})", self.mtu)));
        }
        if self.ack.0 == 0 || self.ack > self.mtu {
            return Err(invalid("nic.ack", self.ack, format!("1B to nic.mtu ({})", self.mtu)));
        }
        let segment = self.segment();
        if segment.0 == 0 || segment.0 > u32::MAX as u64 {
            return Err(invalid("nic.segment", segment, "1B to 4GB (TIMELY uses 16KB to 64KB)"));
        }
        if self.max_outstanding() < segment {
            return Err(invalid("nic.max_outstanding", self.max_outstanding(), format!("at least one segment (nic.segment = {segment})")));
        }
        if self.pacing_rate == Some(Rate::ZERO) {
            return Err(invalid("nic.pacing_rate", "0bps", "positive, or absent for line-rate bursts"));
        }
        if let (Some(r), Some(RatePacing::Packet)) = (self.pacing_rate, self.rate_pacing) {
            return Err(invalid("nic.pacing_rate", r, "a fixed NIC pacing rate, or rate_pacing = \"packet\" (the connection's rate): not both"));
        }
        if !(1..=1 << 16).contains(&self.send_queue()) {
            return Err(invalid("nic.send_queue", self.send_queue(), "1 to 65536 segments"));
        }
        if self.retransmit_timeout() == Time::ZERO {
            return Err(invalid("nic.retransmit_timeout", self.retransmit_timeout(), "positive (RDMA NICs: 4.096us × 2^n, n = 1 to 31)"));
        }
        if let (Some(load), Timestamps::Nic) = (self.host_load, self.timestamps) {
            return Err(invalid("nic.host_load", variant_name(load), "only with timestamps = \"software\" (NIC timestamps see no host load)"));
        }
        ctx.class("nic.ack_class", self.ack_class)
    }

    /// The segment offload, its cap and NIC pacing belong to the message transport's NIC
    /// (TIMELY §3.3, §5); a window stack hands the NIC single packets, so setting them is an
    /// error there.
    pub(crate) fn validate_window(&self) -> Result<(), ScenarioError> {
        let message_only = "a message-transport NIC setting (transport.kind = \"message\"); the window transport sends single packets";
        if let Some(r) = self.pacing_rate {
            return Err(invalid("nic.pacing_rate", r, message_only));
        }
        if let Some(b) = self.segment {
            return Err(invalid("nic.segment", b, message_only));
        }
        if let Some(b) = self.max_outstanding {
            return Err(invalid("nic.max_outstanding", b, message_only));
        }
        if let Some(d) = self.send_queue {
            return Err(invalid("nic.send_queue", d, message_only));
        }
        if let Some(t) = self.retransmit_timeout {
            return Err(invalid("nic.retransmit_timeout", t, message_only));
        }
        if let Some(a) = self.arbitration {
            return Err(invalid("nic.arbitration", variant_name(a), message_only));
        }
        if let Some(p) = self.rate_pacing {
            return Err(invalid("nic.rate_pacing", variant_name(p), message_only));
        }
        if let Some(r) = self.rate_after_idle {
            return Err(invalid("nic.rate_after_idle", variant_name(r), message_only));
        }
        if let Some(r) = self.recovery {
            return Err(invalid("nic.recovery", variant_name(r), message_only));
        }
        Ok(())
    }
}

impl HostConfig {
    pub(crate) fn validate(&self) -> Result<(), ScenarioError> {
        if self.rx_queue_packets == 0 {
            return Err(invalid("host.rx_queue_packets", 0, "at least 1"));
        }
        if self.rx_copy_rate == Some(Rate::ZERO) {
            return Err(invalid("host.rx_copy_rate", "0bps", "positive, or absent for no per-byte cost"));
        }
        Ok(())
    }
}

impl TransportConfig {
    pub const KINDS: &'static [&'static str] = &["message", "window", "uet"];

    /// A controller that needs every packet acknowledged at once (Swift §3.6) sets
    /// `delayed_ack`'s default to false. `kind = "uet"` is the window transport with
    /// [`UetConfig`] (written back as `kind = "window"` with its `uet` table).
    pub(crate) fn read(at: &str, value: serde_json::Value, cc: &CcConfig) -> Result<TransportConfig, ScenarioError> {
        let mut t = Table::new(at, value)?;
        match t.tag("kind", Self::KINDS)? {
            "message" => {
                let prr = t.take("prr")?.unwrap_or(false);
                t.finish(&["kind", "prr"])?;
                Ok(TransportConfig::Message { prr })
            }
            "uet" => {
                let prr = t.take("prr")?.unwrap_or(false);
                let uet: UetConfig = t.rest()?;
                // htsim's `UecNIC` asks a sender for its next packet when the NIC is free to send
                // it: a connection holds at most one packet in its NIC.
                let tsq_limit = Bytes(0);
                Ok(TransportConfig::Window(WindowConfig { delayed_ack: false, prr, tsq_limit, uet: Some(uet), ..WindowConfig::default() }))
            }
            _ => {
                let delayed_ack = t.take::<bool>("delayed_ack")?;
                let mut w: WindowConfig = t.rest()?;
                w.delayed_ack = delayed_ack.unwrap_or(!cc.needs().ack_per_packet);
                Ok(TransportConfig::Window(w))
            }
        }
    }

    pub fn is_window(&self) -> bool {
        matches!(self, TransportConfig::Window(_))
    }

    /// Ultra Ethernet's transport (`kind = "uet"`).
    pub fn is_uet(&self) -> bool {
        self.uet().is_some()
    }

    /// Ultra Ethernet's settings, when it runs.
    pub fn uet(&self) -> Option<&UetConfig> {
        match self {
            TransportConfig::Window(w) => w.uet.as_ref(),
            TransportConfig::Message { .. } => None,
        }
    }

    /// Its `kind`, as a scenario names it.
    pub fn kind(&self) -> &'static str {
        Self::KINDS[self.is_window() as usize + self.is_uet() as usize]
    }

    /// Whether a retransmission timeout takes a new path label (PRR).
    pub fn prr(&self) -> bool {
        match self {
            TransportConfig::Message { prr } => *prr,
            TransportConfig::Window(w) => w.prr,
        }
    }
}

impl WindowConfig {
    /// `at`: where the transport is written (`transport`, `jobs[0].transport`).
    pub(crate) fn validate(&self, at: &str, cc: &CcConfig) -> Result<(), ScenarioError> {
        if self.min_rto == Time::ZERO {
            return Err(invalid(format!("{at}.min_rto"), self.min_rto, "must be positive"));
        }
        if self.delayed_ack && self.delayed_ack_timeout == Time::ZERO {
            return Err(invalid(format!("{at}.delayed_ack_timeout"), self.delayed_ack_timeout, "must be positive with delayed_ack"));
        }
        if self.dupthresh == 0 {
            return Err(invalid(format!("{at}.dupthresh"), 0, "at least 1 (RFC 6675: 3)"));
        }
        if !(1..=64).contains(&self.subflows) {
            return Err(invalid(format!("{at}.subflows"), self.subflows, "1 to 64 subflows a connection"));
        }
        if self.subflows > 1 {
            if self.uet.is_some() {
                return Err(invalid(format!("{at}.subflows"), self.subflows, "1 on Ultra Ethernet, whose packets choose their paths by routing.spray"));
            }
            if self.delayed_ack {
                return Err(invalid(
                    format!("{at}.delayed_ack"),
                    true,
                    "false with subflows: each ACK then echoes one packet's send time, on its subflow's path",
                ));
            }
            if let CcConfig::Python(_) = cc {
                return Err(invalid(format!("{at}.subflows"), self.subflows, "1 with a Python controller (one instance a connection)"));
            }
        }
        if let Some(u) = &self.uet {
            if self.delayed_ack {
                return Err(invalid(format!("{at}.delayed_ack"), true, "Ultra Ethernet's receiver acknowledges by its own rule (uet.sack_threshold): false"));
            }
            if u.sack_threshold == Bytes(0) {
                return Err(invalid(format!("{at}.sack_threshold"), u.sack_threshold, "at least 1 byte (htsim: 16KB)"));
            }
            if u.rto == Some(Time::ZERO) {
                return Err(invalid(format!("{at}.rto"), "0s", "a positive time, or absent for htsim's (15 µs and six queue drains)"));
            }
            if u.credit_window.is_some_and(|w| w.0 < crate::transport::credit::QUANTUM as u64) {
                return Err(invalid(
                    format!("{at}.credit_window"),
                    u.credit_window.expect("checked"),
                    "at least 256B (a quantum of credit), or absent for 1.5 BDP",
                ));
            }
            if let Some(r) = u.oversubscription {
                if u.congestion != UetCongestion::Rccc {
                    return Err(invalid(format!("{at}.oversubscription"), r, "with congestion = \"rccc\" only (htsim's controller of receiver credits alone)"));
                }
                if !(r >= 1.0 && r.is_finite()) {
                    return Err(invalid(format!("{at}.oversubscription"), r, "a ratio of 1 or more"));
                }
            }
        }
        if self.delayed_ack && cc.needs().ack_per_packet {
            return Err(invalid(format!("{at}.delayed_ack"), true, format!("{} acknowledges every packet at once: false", cc.name())));
        }
        Ok(())
    }
}

/// Reads a registered algorithm's keys at `cc`, over the defaults of its profile when it has one.
struct CcTable(Table);

impl ReadParams for CcTable {
    type Error = ScenarioError;
    fn read<A: Algorithm>(self) -> Result<A, ScenarioError> {
        let given: A = self.0.peek_over(&A::default())?;
        self.0.rest_over(&given.defaults_like())
    }
}

impl CcConfig {
    pub(crate) fn read(at: &str, value: serde_json::Value) -> Result<CcConfig, ScenarioError> {
        let mut t = Table::new(at, value)?;
        let names: Vec<&'static str> = Cc::NAMES.iter().copied().chain(["python"]).collect();
        let name = t.tag("algorithm", &names)?;
        if name == "python" {
            let class = t.require("class")?;
            let needs = t.take("needs")?.unwrap_or_default();
            return Ok(CcConfig::Python(PythonCc { class, needs, params: t.rest()? }));
        }
        Cc::read(name, CcTable(t)).expect("a registered name").map(CcConfig::Native)
    }

    /// The controller's own parameter checks, named `cc.FIELD`; a Python class checks its own,
    /// in the front end that loads it.
    pub(crate) fn validate(&self) -> Result<(), ScenarioError> {
        let CcConfig::Native(c) = self else { return Ok(()) };
        c.validate().map_err(|ParamError { field, value, allowed }| invalid(format!("cc.{field}"), value, allowed))
    }
}
