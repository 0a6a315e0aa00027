//! `[switch]`: the shared buffer, priority classes, PFC thresholds, ECN marking and queue limits
//! of every switch, and `[[switch.ports]]` overrides of them for some egress ports
//! ([`crate::fabric::switch`], [`crate::fabric::port`]).

use super::{invalid, ScenarioError};
use rttlab_cc::{Bytes, Rate};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    /// Shared buffer of the whole switch.
    pub buffer: Bytes,
    /// Priority classes per egress port, strict priority, class 0 first.
    pub classes: u8,
    /// Priority flow control (IEEE 802.1Qbb). Off: tail drop at the buffer limit.
    pub pfc: bool,
    /// The classes PFC makes lossless (absent: every class): RoCE's priority paused, TCP's
    /// beside it dropped, as datacenters run the two on one fabric.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc_classes: Option<Vec<u8>>,
    /// Bytes held from one ingress port in one class above which a PAUSE is sent upstream.
    pub pfc_xoff: Bytes,
    /// ... and below which a RESUME follows.
    pub pfc_xon: Bytes,
    /// Dynamic PFC thresholds (the HPCC simulator's Broadcom-style MMU, reference §9.1): XOFF is
    /// this fraction of the shared buffer still free (the simulator: 1/8), evaluated as packets
    /// arrive, and RESUME follows once the ingress is `pfc_resume_offset` below it; `pfc_xoff`
    /// and `pfc_xon` are then unused. Absent: the static thresholds.
    pub pfc_alpha: Option<f64>,
    /// With `pfc_alpha`: how far below the dynamic XOFF an ingress must fall to resume (the
    /// simulator: 3 KB).
    pub pfc_resume_offset: Bytes,
    /// Buffer reserved per ingress port and class for what arrives after its PAUSE (the
    /// packets in flight on the link and in the peer's transmitter): a packet that no longer
    /// fits in the shared buffer is held in its ingress's headroom once that ingress has sent
    /// PAUSE. The shared buffer is `buffer` less every port's reserve. 0: no reserve.
    pub pfc_headroom: Bytes,
    /// ECN marking at dequeue; absent means no marking.
    pub ecn: Option<EcnConfig>,
    /// Most a class queue of an egress port may hold (`"2666p"` packets or `"4MB"`); more is
    /// dropped. Absent: only the shared buffer limits it.
    pub queue_limit: Option<QueueLen>,
    /// Dynamic threshold of the shared buffer (Choudhury and Hahne, as Broadcom switches do; the
    /// HPCC simulator's buffer, reference §9.1): a class queue of an egress port may hold at most
    /// `alpha × (buffer − bytes in use)`. Absent: static sharing.
    pub alpha: Option<f64>,
    /// Packets of an egress queue held in the port's transmit ring beneath the queue discipline
    /// (ns-3's NetDevice queue, 100 packets by default; Linux's driver ring): ECN marking and
    /// `queue_limit` see only the queue above them, in packets. 0: the discipline sees all.
    pub device_queue: u32,
    /// In-band network telemetry (HPCC §4.1, reference §6.1; `rttlab_cc::int`): at dequeue
    /// every switch pushes its egress port's record onto data packets (and onto ACKs when the
    /// sender asks for the reverse path's queues, `cc.signal`). Absent: on exactly when the
    /// congestion control reads it (`cc.algorithm = "hpcc"`, `cc.signal` other than `rtt`).
    pub int: Option<bool>,
    /// Records a packet collects in one direction; further switches push none (the HPCC
    /// simulator's header holds 5).
    pub int_max_hops: u8,
    /// Packet trimming (NDP, SIGCOMM'17 §3.1; Ultra Ethernet's transport, htsim's
    /// `CompositeQueue`): a data packet a class queue cannot take is cut to its first
    /// `trim_bytes` and sent on ahead of every class, so that its receiver learns of the loss
    /// at once. Off: tail drop.
    pub trimming: Trimming,
    /// What is left of a trimmed packet: its headers (Ultra Ethernet's 64 B).
    pub trim_bytes: Bytes,
    /// Overrides for some egress ports, applied in order over the settings above.
    pub ports: Vec<PortOverride>,
}

/// Which packet a full queue trims (`switch.trimming`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trimming {
    /// No trimming: the packet is dropped.
    #[default]
    Off,
    /// The arriving packet (NDP §3.1).
    Arriving,
    /// The arriving packet or the queue's last one, with probability 1/2 each from the
    /// switch's own random stream; the arriving packet then takes the last one's place
    /// (htsim's `CompositeQueue::receivePacket`, so that a flow whose packets keep arriving at
    /// a full queue is not the only one trimmed).
    Either,
}

/// A queue size in bytes (`"30KB"`) or packets (`"20p"`, as ns-3's `QueueSize`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum QueueLen {
    Bytes(u64),
    Packets(u64),
}

impl QueueLen {
    /// The size in its unit.
    pub fn amount(self) -> u64 {
        match self {
            QueueLen::Bytes(b) | QueueLen::Packets(b) => b,
        }
    }

    pub fn packets(self) -> bool {
        matches!(self, QueueLen::Packets(_))
    }

    /// The size in bytes, a limit in packets counting packets of `mtu` bytes.
    pub fn bytes(self, mtu: u64) -> u64 {
        match self {
            QueueLen::Bytes(b) => b,
            QueueLen::Packets(n) => n * mtu,
        }
    }
}

impl FromStr for QueueLen {
    type Err = String;
    fn from_str(s: &str) -> Result<QueueLen, String> {
        let t = s.trim();
        if let Some(n) = t.strip_suffix('p').or_else(|| t.strip_suffix("pkt")).or_else(|| t.strip_suffix("packets")) {
            return n.trim().parse().map(QueueLen::Packets).map_err(|_| format!("{s:?}: packets are a whole number, e.g. \"20p\""));
        }
        t.parse::<Bytes>().map(|b| QueueLen::Bytes(b.0)).map_err(|e| format!("{e} (or packets, e.g. \"20p\")"))
    }
}

impl fmt::Display for QueueLen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueLen::Bytes(b) => write!(f, "{}", Bytes(*b)),
            QueueLen::Packets(n) => write!(f, "{n}p"),
        }
    }
}

impl Serialize for QueueLen {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for QueueLen {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<QueueLen, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Settings of the egress ports a `[[switch.ports]]` entry selects: those of `switches` (by
/// name), those named in `ports` ("NODE-PEER"), and those of links of `link_rate`; every
/// selector given must match.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortOverride {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub switches: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_rate: Option<Rate>,
    pub ecn: Option<PortEcn>,
    pub queue_limit: Option<QueueLen>,
    pub alpha: Option<f64>,
    pub device_queue: Option<u32>,
    pub pfc_xoff: Option<Bytes>,
    pub pfc_xon: Option<Bytes>,
    pub pfc_headroom: Option<Bytes>,
}

/// `[[switch.ports]]`'s `ecn`: a whole `[switch.ecn]` table, or `false`: the ports mark nothing
/// (as htsim leaves the ToR downlinks unmarked under Ultra Ethernet's receiver credits,
/// `FatTreeTopologyCfg::_enable_ecn_on_tor_downlink`).
#[derive(Clone, Debug)]
pub enum PortEcn {
    Off,
    On(EcnConfig),
}

impl PortEcn {
    /// The marking it sets.
    pub fn marking(&self) -> Option<&EcnConfig> {
        match self {
            PortEcn::Off => None,
            PortEcn::On(e) => Some(e),
        }
    }
}

impl Serialize for PortEcn {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PortEcn::Off => s.serialize_bool(false),
            PortEcn::On(e) => e.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for PortEcn {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Bool(false) => Ok(PortEcn::Off),
            serde_json::Value::Bool(true) => {
                Err(D::Error::custom("ecn = true: give the marking as a table ({ k = ... } or { kmin = ..., kmax = ... }), or false for none"))
            }
            v => EcnConfig::deserialize(v).map(PortEcn::On).map_err(D::Error::custom),
        }
    }
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer: Bytes(12_000_000),
            classes: 2,
            pfc: true,
            pfc_classes: None,
            pfc_xoff: Bytes(100_000),
            pfc_xon: Bytes(80_000),
            pfc_alpha: None,
            pfc_resume_offset: Bytes(3_000),
            pfc_headroom: Bytes(0),
            ecn: None,
            queue_limit: None,
            alpha: None,
            device_queue: 0,
            int: None,
            int_max_hops: 5,
            trimming: Trimming::Off,
            trim_bytes: Bytes(64),
            ports: Vec::new(),
        }
    }
}

/// ECN marking on the egress queue of a class: a step at `k`, or RED from `kmin` to `kmax`
/// (Floyd and Jacobson 1993), on the instantaneous queue, in bytes or packets.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcnConfig {
    /// Step marking: mark every packet that leaves a queue holding more than `k`.
    pub k: Option<QueueLen>,
    pub kmin: Option<QueueLen>,
    pub kmax: Option<QueueLen>,
    /// Marking probability at `kmax` (RED); 1 for a step.
    #[serde(default = "one_f64")]
    pub pmax: f64,
    /// RED's gentle mode: above `kmax` the probability rises on from `pmax` to 1 at `2·kmax`
    /// instead of jumping to 1 (ns-3's and Linux's default).
    #[serde(default)]
    pub gentle: bool,
    /// How marks are spread at a given probability (`Spacing`).
    #[serde(default)]
    pub spacing: Spacing,
    /// Where a packet is judged against the queue: at `dequeue` (modern switches, HPCC's
    /// ns-3; the queue it leaves) or at `enqueue` (the DCTCP paper, ns-3's RED; the queue it
    /// joins).
    #[serde(default)]
    pub mark_at: MarkAt,
    /// The thresholds are for a port of this rate and scale with each port's rate (the HPCC
    /// simulator: DCQCN's Kmin = 100 KB·bw/25 Gbps, DCTCP's K = 30 KB·bw/10 Gbps; reference
    /// §5.2, §9.1). Absent: as given on every port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_rate: Option<Rate>,
}

/// How RED spreads its marks (Floyd and Jacobson 1993 §7; ns-2/ns-3 `RedQueueDisc`'s `Wait`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Spacing {
    /// Each packet is marked with the curve's probability p, independently (switch ASICs,
    /// DCQCN's RED).
    #[default]
    Independent,
    /// With `count` packets since the last mark, probability `p / (1 − count·p)`: marks about
    /// `1/p` packets apart, uniformly (Floyd and Jacobson §7).
    Uniform,
    /// No mark until `count·p ≥ 1`, then `p / (2 − count·p)`: marks `1/p` to `2/p` apart
    /// (ns-2's and ns-3's default, `Wait = true`).
    Wait,
}

/// Where ECN marking looks at the queue (shared reference algorithms.md §4.1, §10).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkAt {
    #[default]
    Dequeue,
    Enqueue,
}

fn one_f64() -> f64 {
    1.0
}

impl EcnConfig {
    /// A controller's declared marking, RED on each packet independently, at dequeue
    /// (DCQCN §5.1).
    pub fn declared(m: rttlab_cc::registry::EcnMarking) -> EcnConfig {
        EcnConfig {
            k: None,
            kmin: Some(QueueLen::Bytes(m.kmin.0)),
            kmax: Some(QueueLen::Bytes(m.kmax.0)),
            pmax: m.pmax,
            gentle: false,
            spacing: Spacing::Independent,
            mark_at: MarkAt::Dequeue,
            scale_rate: m.scale_rate,
        }
    }

    /// (kmin, kmax) with `k` as kmin = kmax.
    pub fn thresholds(&self) -> (QueueLen, QueueLen) {
        match (self.k, self.kmin, self.kmax) {
            (Some(k), _, _) => (k, k),
            (None, Some(a), Some(b)) => (a, b),
            _ => unreachable!("validated"),
        }
    }
}

impl SwitchConfig {
    /// The classes PFC makes lossless, a bit each (`pfc_classes`; every class when absent).
    pub fn lossless_classes(&self) -> u8 {
        self.pfc_classes.as_ref().map_or(u8::MAX, |cs| cs.iter().fold(0, |m, &c| m | 1 << c))
    }

    pub(crate) fn validate(&self) -> Result<(), ScenarioError> {
        if !(1..=8).contains(&self.classes) {
            return Err(invalid("switch.classes", self.classes, "1 to 8 priority classes"));
        }
        if let Some(a) = self.pfc_alpha.filter(|a| !(a.is_finite() && *a > 0.0)) {
            return Err(invalid("switch.pfc_alpha", a, "a positive fraction of the free shared buffer (the HPCC simulator: 0.125)"));
        }
        if let (false, Some(a)) = (self.pfc, self.pfc_alpha) {
            return Err(invalid("switch.pfc_alpha", a, "dynamic PFC thresholds need switch.pfc = true"));
        }
        if let Some(classes) = &self.pfc_classes {
            let listed = serde_json::to_string(classes).unwrap_or_default();
            if !self.pfc {
                return Err(invalid("switch.pfc_classes", listed, "lossless classes need switch.pfc = true"));
            }
            if classes.is_empty() || classes.iter().any(|&c| c >= self.classes) || (1..classes.len()).any(|i| classes[..i].contains(&classes[i])) {
                return Err(invalid(
                    "switch.pfc_classes",
                    listed,
                    format!("distinct classes from 0 to {} (switch.classes = {}), at least one", self.classes - 1, self.classes),
                ));
            }
        }
        if !self.pfc && self.pfc_headroom > Bytes(0) {
            return Err(invalid("switch.pfc_headroom", self.pfc_headroom, "PFC headroom needs switch.pfc = true"));
        }
        if !(1..=crate::core::packet::MAX_INT_HOPS as u8).contains(&self.int_max_hops) {
            return Err(invalid("switch.int_max_hops", self.int_max_hops, format!("1 to {} records per direction", crate::core::packet::MAX_INT_HOPS)));
        }
        check_queue(
            "switch",
            self.pfc.then_some((self.pfc_xoff, self.pfc_xon)),
            self.buffer,
            self.ecn.as_ref(),
            self.queue_limit,
            self.alpha,
            self.device_queue,
        )?;
        for (i, o) in self.ports.iter().enumerate() {
            let at = format!("switch.ports[{i}]");
            if o.switches.is_empty() && o.ports.is_empty() && o.link_rate.is_none() {
                return Err(invalid(at, "no selector", "select ports by switches = [names], ports = [\"NODE-PEER\", ...] or link_rate"));
            }
            if !self.pfc && (o.pfc_xoff.is_some() || o.pfc_xon.is_some() || o.pfc_headroom.is_some()) {
                return Err(invalid(format!("{at}.pfc_xoff"), "set", "PFC thresholds need switch.pfc = true"));
            }
            let pfc = self.pfc.then_some((o.pfc_xoff.unwrap_or(self.pfc_xoff), o.pfc_xon.unwrap_or(self.pfc_xon)));
            let ecn = o.ecn.as_ref().map_or(self.ecn.as_ref(), PortEcn::marking);
            check_queue(&at, pfc, self.buffer, ecn, o.queue_limit.or(self.queue_limit), o.alpha.or(self.alpha), o.device_queue.unwrap_or(self.device_queue))?;
        }
        Ok(())
    }
}

/// The settings of one egress port (or the defaults, `at` = "switch") hang together.
fn check_queue(
    at: &str,
    pfc: Option<(Bytes, Bytes)>,
    buffer: Bytes,
    ecn: Option<&EcnConfig>,
    limit: Option<QueueLen>,
    alpha: Option<f64>,
    device_queue: u32,
) -> Result<(), ScenarioError> {
    if let Some((xoff, xon)) = pfc {
        if !(xon < xoff && xoff < buffer) {
            return Err(invalid(format!("{at}.pfc_xoff"), xoff, format!("need pfc_xon ({xon}) < pfc_xoff < buffer ({buffer})")));
        }
    }
    if let Some(e) = ecn {
        e.validate(at)?;
    }
    if limit.is_some_and(|l| l.amount() == 0) {
        return Err(invalid(format!("{at}.queue_limit"), limit.expect("set"), "positive, or absent for no limit beyond the buffer"));
    }
    if let Some(a) = alpha.filter(|a| !(a.is_finite() && *a > 0.0)) {
        return Err(invalid(format!("{at}.alpha"), a, "a positive factor (Broadcom: 1/128 to 8; the HPCC simulator: 1/8)"));
    }
    if device_queue > 0 && (ecn.is_some_and(|e| !e.thresholds().0.packets()) || limit.is_some_and(|l| !l.packets())) {
        return Err(invalid(format!("{at}.device_queue"), device_queue, "ECN thresholds and queue_limit in packets (\"20p\"): the device queue holds packets"));
    }
    Ok(())
}

impl EcnConfig {
    fn validate(&self, at: &str) -> Result<(), ScenarioError> {
        match (self.k, self.kmin, self.kmax) {
            (Some(_), None, None) => {}
            (None, Some(a), Some(b)) if a.packets() != b.packets() => return Err(invalid(format!("{at}.ecn.kmax"), b, format!("in the unit of kmin ({a})"))),
            (None, Some(a), Some(b)) if a.amount() <= b.amount() => {}
            (None, Some(a), Some(b)) => return Err(invalid(format!("{at}.ecn.kmin"), a, format!("must not exceed kmax ({b})"))),
            _ => return Err(invalid(format!("{at}.ecn"), "?", "give either k, or both kmin and kmax")),
        }
        if !(self.pmax > 0.0 && self.pmax <= 1.0) {
            return Err(invalid(format!("{at}.ecn.pmax"), self.pmax, "a probability in (0, 1]"));
        }
        if self.scale_rate == Some(Rate::ZERO) {
            return Err(invalid(format!("{at}.ecn.scale_rate"), Rate::ZERO, "a positive rate, or absent"));
        }
        Ok(())
    }
}
