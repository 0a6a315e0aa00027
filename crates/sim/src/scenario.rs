//! The scenario schema: what a TOML (or JSON) scenario may say, its defaults, and validation
//! with errors that name the field, the value and what is allowed.
//!
//! Values carry units (`"10Gbps"`, `"16KB"`, `"50us"`, see `rttlab_cc::units`). A scenario read
//! back from `Scenario::resolved()` has every default filled in: that is what a result records as
//! "the scenario as run".

use rttlab_cc::swift::Profile;
use rttlab_cc::{Bytes, DctcpParams, FastParams, PatchedTimelyParams, Rate, RenoParams, SwiftParams, Time, TimelyParams, VegasParams};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize};

/// Everything that defines one run.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub name: String,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated time to run.
    pub duration: Time,
    /// Statistics (throughput, RTT, Jain) count only what happens after the warm-up.
    #[serde(default)]
    pub warmup: Time,
    /// When the run ends: at `duration`, or as soon as every `[[flows]]` connection has
    /// delivered its `size` (`duration` is then a cap).
    #[serde(default)]
    pub until: Until,
    pub topology: Topology,
    #[serde(default)]
    pub switch: SwitchConfig,
    #[serde(default)]
    pub nic: NicConfig,
    #[serde(default)]
    pub host: HostConfig,
    #[serde(default)]
    pub transport: TransportConfig,
    #[serde(default)]
    pub cc: CcConfig,
    /// Connections that exist from the start (or a set time).
    #[serde(default)]
    pub flows: Vec<FlowGroup>,
    /// Traffic generated while the run goes: RPCs, flow sizes from a CDF, incasts, pingers.
    #[serde(default)]
    pub workloads: Vec<Workload>,
    #[serde(default)]
    pub measure: MeasureConfig,
}

fn default_seed() -> u64 {
    1
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Topology {
    /// N hosts on one switch (the TIMELY §6.1 incast testbed).
    Star(StarConfig),
    /// Three-tier k-ary fat-tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge and k/2
    /// aggregation switches, (k/2)² core switches, k³/4 hosts.
    FatTree(FatTreeConfig),
    /// Two-tier leaf-spine: every leaf linked to every spine.
    LeafSpine(LeafSpineConfig),
    /// A line of switches, each with its own hosts: the CS244'19 "skinny" topology, where a
    /// multi-hop path is crossed by cross traffic on every hop.
    Chain(ChainConfig),
}

/// Rate and one-way delay of one tier's links; absent values take the topology's defaults.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierLink {
    pub rate: Option<Rate>,
    pub delay: Option<Time>,
}

impl TierLink {
    /// (rate, delay) with the topology-wide defaults filled in.
    pub fn or(&self, rate: Rate, delay: Time) -> (Rate, Time) {
        (self.rate.unwrap_or(rate), self.delay.unwrap_or(delay))
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FatTreeConfig {
    /// Ports per switch; even, at least 2.
    pub k: u32,
    /// Rate and delay of every link unless a tier says otherwise.
    pub link_rate: Rate,
    pub link_delay: Time,
    /// Host–edge links.
    #[serde(default)]
    pub host_link: TierLink,
    /// Edge–aggregation links.
    #[serde(default)]
    pub agg_link: TierLink,
    /// Aggregation–core links.
    #[serde(default)]
    pub core_link: TierLink,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeafSpineConfig {
    pub leaves: u32,
    pub spines: u32,
    pub hosts_per_leaf: u32,
    /// Host–leaf links.
    pub link_rate: Rate,
    pub link_delay: Time,
    /// Leaf–spine links. Their rate defaults to what `oversubscription` implies.
    #[serde(default)]
    pub spine_link: TierLink,
    /// Host bandwidth of a leaf over its uplink bandwidth:
    /// `hosts_per_leaf · link_rate / (spines · spine rate)`. 1 is non-blocking. Only when
    /// `spine_link.rate` is absent.
    pub oversubscription: Option<f64>,
}

impl LeafSpineConfig {
    /// The leaf–spine rate: given, or `hosts_per_leaf · link_rate / (spines · oversubscription)`.
    pub fn spine_rate(&self) -> Rate {
        self.spine_link.rate.unwrap_or_else(|| {
            let host_bps = self.hosts_per_leaf as f64 * self.link_rate.bps() as f64;
            Rate((host_bps / (self.spines as f64 * self.oversubscription.unwrap_or(1.0))).round() as u64)
        })
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainConfig {
    /// Switches in the line, at least 2.
    pub switches: u32,
    /// Hosts on each switch: switch i has hosts i·hosts_per_switch .. (i+1)·hosts_per_switch − 1.
    pub hosts_per_switch: u32,
    /// Host links, and switch–switch links unless `chain_link` says otherwise.
    pub link_rate: Rate,
    pub link_delay: Time,
    #[serde(default)]
    pub chain_link: TierLink,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StarConfig {
    pub hosts: u32,
    /// Rate of every host link unless overridden in `host_links`.
    pub link_rate: Rate,
    /// One-way propagation delay of every host link unless overridden.
    pub link_delay: Time,
    #[serde(default)]
    pub host_links: Vec<HostLink>,
}

/// A host whose link differs from the default (e.g. the testbed server's 20 Gbps).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostLink {
    pub host: u32,
    pub rate: Option<Rate>,
    pub delay: Option<Time>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    /// Shared buffer of the whole switch.
    pub buffer: Bytes,
    /// Priority classes per egress port, strict priority, class 0 first.
    pub classes: u8,
    /// Priority flow control (IEEE 802.1Qbb). Off: tail drop at the buffer limit.
    pub pfc: bool,
    /// Bytes held from one ingress port in one class above which a PAUSE is sent upstream.
    pub pfc_xoff: Bytes,
    /// ... and below which a RESUME follows.
    pub pfc_xon: Bytes,
    /// ECN marking at dequeue; absent means no marking.
    pub ecn: Option<EcnConfig>,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer: Bytes(12_000_000),
            classes: 2,
            pfc: true,
            pfc_xoff: Bytes(100_000),
            pfc_xon: Bytes(80_000),
            ecn: None,
        }
    }
}

/// ECN marking on the egress queue of a class: a step at `k`, or RED from `kmin` to `kmax`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcnConfig {
    /// Step marking: mark every packet that leaves a queue holding more than `k`.
    pub k: Option<Bytes>,
    pub kmin: Option<Bytes>,
    pub kmax: Option<Bytes>,
    /// Marking probability at `kmax` (RED); 1 for a step.
    #[serde(default = "one_f64")]
    pub pmax: f64,
    /// Where a packet is judged against the queue: at `dequeue` (modern switches, HPCC's
    /// ns-3; the queue it leaves) or at `enqueue` (the DCTCP paper; the queue it joins).
    #[serde(default)]
    pub mark_at: MarkAt,
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
    /// (kmin, kmax, pmax) with `k` as kmin = kmax.
    pub fn thresholds(&self) -> (u64, u64, f64) {
        match (self.k, self.kmin, self.kmax) {
            (Some(k), _, _) => (k.0, k.0, self.pmax),
            (None, Some(a), Some(b)) => (a.0, b.0, self.pmax),
            _ => unreachable!("validated"),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NicConfig {
    /// Largest data packet on the wire, per-packet overhead included.
    pub mtu: Bytes,
    /// Per-packet overhead on the wire (Ethernet, IP, transport headers, preamble, gap).
    pub header: Bytes,
    /// Wire size of an ACK and of a PFC frame.
    pub ack: Bytes,
    /// Largest segment handed to the NIC at once (TIMELY §3.3: up to 64 KB).
    pub segment: Bytes,
    /// Static cap on a flow's unacknowledged bytes (TIMELY §3.3 "safeguard").
    pub max_outstanding: Bytes,
    /// RTT samples of either transport get uniform noise in [0, rtt_noise] added (TIMELY §6.1,
    /// Fig. 12).
    pub rtt_noise: Time,
    /// Priority class of ACKs (TIMELY §2 "ACK prioritization": the highest, 0).
    pub ack_class: u8,
    /// NIC per-packet pacing inside a segment at this fixed rate (TIMELY §5, Fig. 16);
    /// absent: packets leave back to back at line rate.
    pub pacing_rate: Option<Rate>,
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            mtu: Bytes(1500),
            header: Bytes(64),
            ack: Bytes(64),
            segment: Bytes(16_000),
            max_outstanding: Bytes(64_000),
            rtt_noise: Time::ZERO,
            ack_class: 0,
            pacing_rate: None,
        }
    }
}

impl NicConfig {
    pub fn payload_per_packet(&self) -> u64 {
        self.mtu.0 - self.header.0
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

/// How flows move their data (`crate::transport`).
#[derive(Clone, Debug, Default, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TransportConfig {
    /// OS-bypass messaging: NIC-offloaded segments paced by a rate controller (TIMELY §3).
    #[default]
    Message,
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
    /// SACKed packets above a hole that make it a loss (RFC 6675 DupThresh).
    pub dupthresh: u32,
    /// Most payload one connection may have queued in its host's NIC, sent but not yet
    /// serialized (Linux TCP Small Queues, `tcp_limit_output_bytes`); at least one packet.
    pub tsq_limit: Bytes,
}

impl Default for WindowConfig {
    fn default() -> Self {
        WindowConfig {
            min_rto: Time::from_us(1000),
            delayed_ack: true,
            delayed_ack_timeout: Time::from_us(1000),
            dupthresh: 3,
            tsq_limit: Bytes(256_000),
        }
    }
}

/// The congestion controller of every flow.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(tag = "algorithm", rename_all = "snake_case")]
pub enum CcConfig {
    /// Every connection sends at its NIC's line rate (Table 1's PFC column).
    #[default]
    None,
    /// TIMELY (SIGCOMM 2015, Algorithm 1); `rttlab_cc::timely` documents every key.
    Timely(TimelyParams),
    /// Patched TIMELY (Zhu et al., CoNEXT 2016).
    PatchedTimely(PatchedTimelyParams),
    /// FAST* (TIMELY §6.1): TCP FAST's equation on the pacing rate (`rttlab_cc::fast`).
    Fast(FastParams),
    /// TCP Reno/NewReno (window transport).
    Reno(RenoParams),
    /// DCTCP as in Linux (window transport).
    Dctcp(DctcpParams),
    /// TCP Vegas (window transport); `rttlab_cc::vegas` documents every key.
    Vegas(VegasParams),
    /// Swift (SIGCOMM 2020) (window transport); `profile` picks the defaults of the rest.
    Swift(SwiftParams),
}

impl CcConfig {
    pub fn name(&self) -> &'static str {
        match self {
            CcConfig::None => "none",
            CcConfig::Timely(_) => "timely",
            CcConfig::PatchedTimely(_) => "patched_timely",
            CcConfig::Fast(_) => "fast",
            CcConfig::Reno(_) => "reno",
            CcConfig::Dctcp(_) => "dctcp",
            CcConfig::Vegas(_) => "vegas",
            CcConfig::Swift(_) => "swift",
        }
    }

    /// Window controllers run on the window transport; rate controllers on the message one.
    pub fn is_window(&self) -> bool {
        matches!(self, CcConfig::Reno(_) | CcConfig::Dctcp(_) | CcConfig::Vegas(_) | CcConfig::Swift(_))
    }
}

/// Separates a field path found inside a tagged section from the message, so that the error
/// names the whole path (`topology.link_rate`), which serde loses inside tagged enums.
const INNER_PATH: char = '\u{1f}';

/// Splits an internally tagged table (`kind = "star"`, `algorithm = "timely"`) into its tag and
/// the rest, then reads the rest with `read(tag, rest)`, keeping the path of a bad field.
fn tagged<'de, D: Deserializer<'de>, T>(
    d: D,
    tag: &str,
    allowed: &[&str],
    read: impl FnOnce(&str, serde_json::Value) -> Option<Result<T, serde_path_to_error::Error<serde_json::Error>>>,
) -> Result<T, D::Error> {
    let mut table = serde_json::Map::deserialize(d)?;
    let name = match table.remove(tag) {
        Some(serde_json::Value::String(s)) => s,
        Some(other) => return Err(D::Error::custom(format!("{tag}{INNER_PATH}{other} is not a name: one of {}", allowed.join(", ")))),
        None => return Err(D::Error::custom(format!("{tag}{INNER_PATH}missing: one of {}", allowed.join(", ")))),
    };
    match read(&name, serde_json::Value::Object(table)) {
        Some(r) => r.map_err(|e| D::Error::custom(format!("{}{INNER_PATH}{}", e.path(), e.inner()))),
        None => Err(D::Error::custom(format!("{tag}{INNER_PATH}'{name}' is not one of {}", allowed.join(", ")))),
    }
}

fn section<T: DeserializeOwned>(v: serde_json::Value) -> Result<T, serde_path_to_error::Error<serde_json::Error>> {
    serde_path_to_error::deserialize(v)
}

impl<'de> Deserialize<'de> for Topology {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        tagged(d, "kind", &["star", "fat_tree", "leaf_spine", "chain"], |name, rest| match name {
            "star" => Some(section(rest).map(Topology::Star)),
            "fat_tree" => Some(section(rest).map(Topology::FatTree)),
            "leaf_spine" => Some(section(rest).map(Topology::LeafSpine)),
            "chain" => Some(section(rest).map(Topology::Chain)),
            _ => None,
        })
    }
}

impl<'de> Deserialize<'de> for CcConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        tagged(d, "algorithm", &["none", "timely", "patched_timely", "fast", "reno", "dctcp", "vegas", "swift"], |name, rest| match name {
            "none" => Some(section::<Empty>(rest).map(|_| CcConfig::None)),
            "timely" => Some(section(rest).map(CcConfig::Timely)),
            "patched_timely" => Some(section(rest).map(CcConfig::PatchedTimely)),
            "fast" => Some(section(rest).map(CcConfig::Fast)),
            "reno" => Some(section(rest).map(CcConfig::Reno)),
            "dctcp" => Some(section(rest).map(CcConfig::Dctcp)),
            "vegas" => Some(section(rest).map(CcConfig::Vegas)),
            "swift" => Some(swift_params(rest).map(CcConfig::Swift)),
            _ => None,
        })
    }
}

impl<'de> Deserialize<'de> for TransportConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        tagged(d, "kind", &["message", "window"], |name, rest| match name {
            "message" => Some(section::<Empty>(rest).map(|_| TransportConfig::Message)),
            "window" => Some(section(rest).map(TransportConfig::Window)),
            _ => None,
        })
    }
}

/// Swift's section: the keys given over the defaults of its `profile`.
fn swift_params(rest: serde_json::Value) -> Result<SwiftParams, serde_path_to_error::Error<serde_json::Error>> {
    #[derive(Deserialize)]
    struct ProfileOnly {
        #[serde(default)]
        profile: Profile,
    }
    let ProfileOnly { profile } = section(rest.clone())?;
    let mut full = serde_json::to_value(SwiftParams::profile(profile)).expect("parameters serialize");
    if let (Some(full), serde_json::Value::Object(given)) = (full.as_object_mut(), rest) {
        full.extend(given);
    }
    section(full)
}

/// A section with no keys besides its tag.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Empty {}

/// Hosts named as one index, a list, or an inclusive range "1-10".
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum HostSet {
    One(u32),
    List(Vec<u32>),
    Range(String),
}

impl HostSet {
    pub fn hosts(&self) -> Result<Vec<u32>, String> {
        match self {
            HostSet::One(h) => Ok(vec![*h]),
            HostSet::List(v) => Ok(v.clone()),
            HostSet::Range(r) => {
                let bad = || format!("'{r}' is not a host range: expected \"FIRST-LAST\", e.g. \"1-10\"");
                let (a, b) = r.split_once('-').ok_or_else(bad)?;
                let a: u32 = a.trim().parse().map_err(|_| bad())?;
                let b: u32 = b.trim().parse().map_err(|_| bad())?;
                if a > b {
                    return Err(bad());
                }
                Ok((a..=b).collect())
            }
        }
    }
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Until {
    /// The run lasts `duration`.
    #[default]
    Duration,
    /// The run ends when the last byte of the last sized `[[flows]]` connection arrives (an
    /// incast "until the last flow completes"), or at `duration` if that comes first.
    FlowsDone,
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Messages arrive evenly spaced at the application rate.
    #[default]
    Periodic,
    /// Messages arrive as a Poisson process of the application rate.
    Poisson,
}

/// `connections` connections from each host of `src` to `dst`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowGroup {
    pub src: HostSet,
    pub dst: u32,
    #[serde(default = "one_u32")]
    pub connections: u32,
    /// Bytes each connection sends in all; absent means unbounded.
    pub size: Option<Bytes>,
    /// Application-limited: the application offers this rate; absent means backlogged.
    pub rate: Option<Rate>,
    /// How application messages arrive (with `rate`).
    #[serde(default)]
    pub arrivals: Arrivals,
    /// Application message size (with `rate`); defaults to the NIC segment size.
    pub message: Option<Bytes>,
    /// Window transport: the application writes this many bytes at a time and a write smaller
    /// than a packet goes in a packet of its own (Swift §5.4's 64 B and 1 KB writes); absent or
    /// larger: full packets.
    pub write: Option<Bytes>,
    #[serde(default)]
    pub start: Time,
    /// Each connection starts at `start` plus a uniform draw in [0, start_jitter].
    #[serde(default)]
    pub start_jitter: Time,
    /// The application closes the connection at this time: no new data is sent after it (what
    /// is in flight completes). Absent: never (TIMELY §6.1 Fig. 18 closes 9 of 10 connections).
    pub stop: Option<Time>,
    /// Priority class of the data.
    #[serde(default = "one_u8")]
    pub class: u8,
}

fn one_u32() -> u32 {
    1
}
fn one_u8() -> u8 {
    1
}

/// A traffic generator (`crate::workload`).
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Workload {
    /// Request/response RPCs on persistent connections (TIMELY §6.2).
    Rpc(RpcConfig),
    /// Flows with sizes drawn from a CDF, Poisson arrivals at a target load (HPCC §5).
    FlowSizes(FlowSizesConfig),
    /// Many senders to one receiver, once or as a Poisson process of incast events.
    Incast(IncastConfig),
    /// Small probes that measure the fabric's RTT (TIMELY §6.2 Fig. 20).
    Pinger(PingerConfig),
}

impl<'de> Deserialize<'de> for Workload {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        tagged(d, "kind", &["rpc", "flow_sizes", "incast", "pinger"], |name, rest| match name {
            "rpc" => Some(section(rest).map(Workload::Rpc)),
            "flow_sizes" => Some(section(rest).map(Workload::FlowSizes)),
            "incast" => Some(section(rest).map(Workload::Incast)),
            "pinger" => Some(section(rest).map(Workload::Pinger)),
            _ => None,
        })
    }
}

impl Workload {
    pub fn kind(&self) -> &'static str {
        match self {
            Workload::Rpc(_) => "rpc",
            Workload::FlowSizes(_) => "flow_sizes",
            Workload::Incast(_) => "incast",
            Workload::Pinger(_) => "pinger",
        }
    }
}

/// How a host picks the peer of each RPC, flow or ping among the candidates.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Peers {
    /// Uniformly among the candidates other than itself.
    #[default]
    Uniform,
    /// Uniformly among the candidates farthest from it in hops: on a Clos fabric, those whose
    /// path crosses the core (TIMELY §6.2 "longest path uniform random").
    LongestPath,
}

/// A client sends a request of `size` bytes to a server, which answers with `response` bytes
/// as soon as the whole request has arrived; the RPC's latency is measured at the client from
/// the request's issue to the response's last byte. Each client–server pair has one persistent
/// connection each way (its congestion state lives across RPCs, like an RDMA queue pair).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RpcConfig {
    /// Hosts that issue RPCs; absent: every host.
    pub clients: Option<HostSet>,
    /// Hosts that serve them; absent: every host.
    pub servers: Option<HostSet>,
    #[serde(default)]
    pub peers: Peers,
    /// Each client keeps this many servers, drawn once among its candidates, and sends each RPC
    /// to one of them; absent: any candidate. Few servers per client mean few connections,
    /// each carrying many RPCs, so that its rate controller has something to pace.
    pub servers_per_client: Option<u32>,
    /// Request bytes.
    pub size: Bytes,
    /// Response bytes; absent: `size`.
    pub response: Option<Bytes>,
    /// RPCs issued per second by each client, as a Poisson process.
    pub rate: f64,
    #[serde(default)]
    pub start: Time,
    pub stop: Option<Time>,
    #[serde(default = "one_u8")]
    pub class: u8,
    /// RPCs a client may have outstanding; beyond it new ones are refused (counted as
    /// `rpcs_refused`), which bounds memory when the offered load exceeds what the network takes.
    #[serde(default = "default_max_pending")]
    pub max_pending: u32,
}

fn default_max_pending() -> u32 {
    1000
}

/// A flow-size distribution: a shipped one by name, or `[[size_bytes, cumulative_percent], ...]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CdfSpec {
    Named(String),
    Points(Vec<[f64; 2]>),
}

/// Each host starts flows as a Poisson process whose mean gap is
/// `mean size · 8 / (host link rate · load)`, sizes from `cdf`, to peers chosen by `peers`
/// (HPCC's traffic_gen.py; reference algorithms.md §9.3). `load` is payload over the host link.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSizesConfig {
    /// Hosts that start flows and receive them; absent: every host.
    pub hosts: Option<HostSet>,
    #[serde(default)]
    pub peers: Peers,
    pub cdf: CdfSpec,
    /// Offered load per host link, a fraction of its rate.
    pub load: f64,
    #[serde(default)]
    pub start: Time,
    pub stop: Option<Time>,
    #[serde(default = "one_u8")]
    pub class: u8,
}

/// Every sender starts `connections` flows of `size` bytes to `receiver`, at `start`, and again
/// at every event of a Poisson process of `rate` events per second when a rate is given.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IncastConfig {
    pub senders: HostSet,
    pub receiver: u32,
    pub size: Bytes,
    #[serde(default = "one_u32")]
    pub connections: u32,
    #[serde(default)]
    pub start: Time,
    /// Incast events per second after `start`; absent: only the one at `start`.
    pub rate: Option<f64>,
    pub stop: Option<Time>,
    #[serde(default = "one_u8")]
    pub class: u8,
}

/// Every host of `hosts` sends a probe of `size` wire bytes to a peer every `interval` (its
/// phase drawn uniformly); the peer's NIC echoes it at once in the same class, and the sender
/// records the round trip. Probes queue with the data of their class, so they see its queueing;
/// at 64 B per 100 µs they add 0.05 % load to a 10 Gbps link.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PingerConfig {
    pub hosts: Option<HostSet>,
    #[serde(default)]
    pub peers: Peers,
    pub interval: Time,
    #[serde(default = "default_ping_bytes")]
    pub size: Bytes,
    #[serde(default)]
    pub start: Time,
    pub stop: Option<Time>,
    #[serde(default = "one_u8")]
    pub class: u8,
}

fn default_ping_bytes() -> Bytes {
    Bytes(64)
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MeasureConfig {
    /// Queue occupancy sampling interval.
    pub queue_interval: Time,
    /// Egress ports to sample, named "NODE-PEER" (e.g. "s0-h0": switch 0 towards host 0).
    /// Absent: the switch ports towards every flow destination.
    pub queue_ports: Option<Vec<String>>,
    /// Keep every queue sample as a time series (memory grows with run length).
    pub queue_trace: bool,
    /// Sample every connection's delivered bytes and rate at this interval; absent: no series.
    pub timeseries_interval: Option<Time>,
    /// Upper edges of the flow-size buckets of the FCT table (the last bucket is open).
    pub fct_buckets: Vec<Bytes>,
    /// Keep one record per finished workload flow (memory grows with run length).
    pub flow_records: bool,
}

impl Default for MeasureConfig {
    fn default() -> Self {
        MeasureConfig {
            queue_interval: Time::from_us(1),
            queue_ports: None,
            queue_trace: false,
            timeseries_interval: None,
            fct_buckets: vec![Bytes(10_000), Bytes(100_000), Bytes(1_000_000), Bytes(10_000_000)],
            flow_records: false,
        }
    }
}

/// A scenario that cannot be run, with the field, the value and what is allowed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScenarioError {
    #[error("scenario is not valid {format}: {message}")]
    Syntax { format: &'static str, message: String },
    #[error("{field}: {message}")]
    Field { field: String, message: String },
    #[error("{field} = {value}: {allowed}")]
    Invalid { field: String, value: String, allowed: String },
}

fn invalid(field: impl Into<String>, value: impl ToString, allowed: impl Into<String>) -> ScenarioError {
    ScenarioError::Invalid { field: field.into(), value: value.to_string(), allowed: allowed.into() }
}

impl Scenario {
    pub fn from_toml(text: &str) -> Result<Scenario, ScenarioError> {
        let table: toml::Table =
            toml::from_str(text).map_err(|e| ScenarioError::Syntax { format: "TOML", message: e.to_string() })?;
        let value = serde_json::to_value(table).expect("TOML tables are JSON values");
        Self::from_value(value)
    }

    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ScenarioError::Syntax { format: "JSON", message: e.to_string() })?;
        Self::from_value(value)
    }

    fn from_value(mut value: serde_json::Value) -> Result<Scenario, ScenarioError> {
        // Swift acknowledges every packet at once (§3.6): its window transport defaults to that.
        if value.pointer("/cc/algorithm").and_then(|a| a.as_str()) == Some("swift") {
            if let Some(t) = value.pointer_mut("/transport").and_then(|t| t.as_object_mut()) {
                t.entry("delayed_ack").or_insert(serde_json::Value::Bool(false));
            }
        }
        let s: Scenario = serde_path_to_error::deserialize(value).map_err(|e| {
            let outer = e.path().to_string();
            let message = e.into_inner().to_string();
            let (field, message) = match message.split_once(INNER_PATH) {
                Some((inner, m)) if inner != "." => (format!("{outer}.{inner}"), m.to_string()),
                Some((_, m)) => (outer, m.to_string()),
                None => (outer, message),
            };
            ScenarioError::Field { field: if field == "." { "scenario".into() } else { field }, message }
        })?;
        s.validate()?;
        Ok(s)
    }

    /// The scenario with every default written out, as JSON.
    pub fn resolved(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("scenarios serialize")
    }

    pub fn hosts(&self) -> u32 {
        match &self.topology {
            Topology::Star(s) => s.hosts,
            Topology::FatTree(t) => t.k * t.k * t.k / 4,
            Topology::LeafSpine(t) => t.leaves * t.hosts_per_leaf,
            Topology::Chain(t) => t.switches * t.hosts_per_switch,
        }
    }

    /// Topology sizes and rates. Hosts are capped at 2^20 so that a typo cannot ask for a
    /// network that does not fit in memory.
    fn validate_topology(&self) -> Result<(), ScenarioError> {
        let positive = |field: &str, r: Option<Rate>| match r {
            Some(Rate::ZERO) => Err(invalid(format!("topology.{field}"), "0bps", "must be positive")),
            _ => Ok(()),
        };
        let at_least = |field: &str, v: u32, min: u32| {
            if v < min {
                return Err(invalid(format!("topology.{field}"), v, format!("at least {min}")));
            }
            Ok(())
        };
        match &self.topology {
            Topology::Star(s) => {
                at_least("hosts", s.hosts, 2)?;
                positive("link_rate", Some(s.link_rate))?;
                for (i, l) in s.host_links.iter().enumerate() {
                    if l.host >= s.hosts {
                        return Err(invalid(format!("topology.host_links[{i}].host"), l.host, format!("hosts are 0..{}", s.hosts - 1)));
                    }
                    positive(&format!("host_links[{i}].rate"), l.rate)?;
                }
            }
            Topology::FatTree(t) => {
                if t.k < 2 || t.k % 2 == 1 || t.k > 160 {
                    return Err(invalid("topology.k", t.k, "an even number from 2 to 160"));
                }
                positive("link_rate", Some(t.link_rate))?;
                positive("host_link.rate", t.host_link.rate)?;
                positive("agg_link.rate", t.agg_link.rate)?;
                positive("core_link.rate", t.core_link.rate)?;
            }
            Topology::LeafSpine(t) => {
                at_least("leaves", t.leaves, 1)?;
                at_least("spines", t.spines, 1)?;
                at_least("hosts_per_leaf", t.hosts_per_leaf, 1)?;
                positive("link_rate", Some(t.link_rate))?;
                positive("spine_link.rate", t.spine_link.rate)?;
                match (t.oversubscription, t.spine_link.rate) {
                    (Some(o), Some(_)) => {
                        return Err(invalid("topology.oversubscription", o, "give either oversubscription or spine_link.rate, not both"));
                    }
                    (Some(o), None) if !(o.is_finite() && o > 0.0) || t.spine_rate() == Rate::ZERO => {
                        return Err(invalid("topology.oversubscription", o, "a positive ratio, e.g. 1 (non-blocking) or 3"));
                    }
                    _ => {}
                }
            }
            Topology::Chain(t) => {
                at_least("switches", t.switches, 2)?;
                at_least("hosts_per_switch", t.hosts_per_switch, 1)?;
                positive("link_rate", Some(t.link_rate))?;
                positive("chain_link.rate", t.chain_link.rate)?;
            }
        }
        let hosts = self.hosts() as u64;
        if hosts > 1 << 20 {
            return Err(invalid("topology", format!("{hosts} hosts"), "at most 1048576 hosts"));
        }
        if hosts < 2 {
            return Err(invalid("topology", format!("{hosts} host"), "at least 2 hosts"));
        }
        Ok(())
    }

    /// `h` as a host index, or an error naming `field`.
    fn host(&self, field: &str, h: u32) -> Result<u32, ScenarioError> {
        let hosts = self.hosts();
        if h >= hosts {
            return Err(invalid(field, h, format!("hosts are 0..{}", hosts - 1)));
        }
        Ok(h)
    }

    /// The hosts of `set` (absent: every host), each checked, at least one.
    pub fn host_set(&self, field: &str, set: Option<&HostSet>) -> Result<Vec<u32>, ScenarioError> {
        let Some(set) = set else { return Ok((0..self.hosts()).collect()) };
        let hosts = set.hosts().map_err(|m| ScenarioError::Field { field: field.into(), message: m })?;
        if hosts.is_empty() {
            return Err(invalid(field, "[]", "at least one host"));
        }
        hosts.into_iter().map(|h| self.host(field, h)).collect()
    }

    /// The segment offload, its cap and NIC pacing belong to the message transport's NIC (TIMELY
    /// §3.3, §5); a window stack hands the NIC single packets, so setting them there is an error.
    fn validate_window_nic(&self) -> Result<(), ScenarioError> {
        let default = NicConfig::default();
        let message_only = "a message-transport NIC setting (transport.kind = \"message\"); the window transport sends single packets";
        if let Some(r) = self.nic.pacing_rate {
            return Err(invalid("nic.pacing_rate", r, message_only));
        }
        if self.nic.segment != default.segment {
            return Err(invalid("nic.segment", self.nic.segment, message_only));
        }
        if self.nic.max_outstanding != default.max_outstanding {
            return Err(invalid("nic.max_outstanding", self.nic.max_outstanding, message_only));
        }
        Ok(())
    }

    fn validate_workload(&self, at: &str, w: &Workload) -> Result<(), ScenarioError> {
        let f = |k: &str| format!("{at}.{k}");
        let window = matches!(self.transport, TransportConfig::Window(_));
        let (class, start, stop) = match w {
            Workload::Rpc(r) => {
                self.host_set(&f("clients"), r.clients.as_ref())?;
                self.host_set(&f("servers"), r.servers.as_ref())?;
                if window {
                    return Err(invalid(
                        f("kind"),
                        "rpc",
                        "RPCs run on persistent message-transport connections: set transport.kind = \"message\"",
                    ));
                }
                if !(r.rate.is_finite() && r.rate > 0.0) {
                    return Err(invalid(f("rate"), r.rate, "RPCs per second per client, positive"));
                }
                if r.size.0 == 0 || r.response == Some(Bytes(0)) {
                    return Err(invalid(f(if r.size.0 == 0 { "size" } else { "response" }), "0B", "positive"));
                }
                if r.max_pending == 0 {
                    return Err(invalid(f("max_pending"), 0, "at least 1"));
                }
                if r.servers_per_client == Some(0) {
                    return Err(invalid(f("servers_per_client"), 0, "at least 1, or absent for any server"));
                }
                (r.class, r.start, r.stop)
            }
            Workload::FlowSizes(c) => {
                self.host_set(&f("hosts"), c.hosts.as_ref())?;
                crate::workload::cdf::Cdf::from_spec(&c.cdf).map_err(|allowed| invalid(f("cdf"), serde_json::to_string(&c.cdf).unwrap_or_default(), allowed))?;
                if !(c.load.is_finite() && c.load > 0.0 && c.load <= 1.0) {
                    return Err(invalid(f("load"), c.load, "a fraction of the host link rate in (0, 1]"));
                }
                (c.class, c.start, c.stop)
            }
            Workload::Incast(c) => {
                let receiver = self.host(&f("receiver"), c.receiver)?;
                if self.host_set(&f("senders"), Some(&c.senders))?.contains(&receiver) {
                    return Err(invalid(f("senders"), receiver, "the receiver cannot be a sender"));
                }
                if c.size.0 == 0 {
                    return Err(invalid(f("size"), "0B", "positive"));
                }
                if c.connections == 0 {
                    return Err(invalid(f("connections"), 0, "at least 1"));
                }
                if let Some(r) = c.rate.filter(|r| !(r.is_finite() && *r > 0.0)) {
                    return Err(invalid(f("rate"), r, "incast events per second, positive; absent for one at start"));
                }
                (c.class, c.start, c.stop)
            }
            Workload::Pinger(c) => {
                self.host_set(&f("hosts"), c.hosts.as_ref())?;
                if c.interval == Time::ZERO {
                    return Err(invalid(f("interval"), c.interval, "must be positive"));
                }
                if c.size < self.nic.ack || c.size > self.nic.mtu {
                    return Err(invalid(f("size"), c.size, format!("nic.ack ({}) to nic.mtu ({})", self.nic.ack, self.nic.mtu)));
                }
                (c.class, c.start, c.stop)
            }
        };
        if class >= self.switch.classes {
            return Err(invalid(f("class"), class, format!("a class below switch.classes ({})", self.switch.classes)));
        }
        if let Some(stop) = stop.filter(|&t| t <= start) {
            return Err(invalid(f("stop"), stop, format!("after start ({start}), or absent")));
        }
        Ok(())
    }

    /// Checks every constraint serde's types do not already express.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if self.duration == Time::ZERO {
            return Err(invalid("duration", self.duration, "must be positive"));
        }
        if self.warmup >= self.duration {
            return Err(invalid("warmup", self.warmup, format!("must be shorter than duration ({}): shorten the warm-up too, e.g. --set warmup=0ms", self.duration)));
        }
        self.validate_topology()?;
        let sw = &self.switch;
        if !(1..=8).contains(&sw.classes) {
            return Err(invalid("switch.classes", sw.classes, "1 to 8 priority classes"));
        }
        if sw.pfc && !(sw.pfc_xon < sw.pfc_xoff && sw.pfc_xoff < sw.buffer) {
            return Err(invalid(
                "switch.pfc_xoff",
                sw.pfc_xoff,
                format!("need pfc_xon ({}) < pfc_xoff < buffer ({})", sw.pfc_xon, sw.buffer),
            ));
        }
        if let Some(e) = &sw.ecn {
            match (e.k, e.kmin, e.kmax) {
                (Some(_), None, None) => {}
                (None, Some(a), Some(b)) if a <= b => {}
                (None, Some(a), Some(b)) => {
                    return Err(invalid("switch.ecn.kmin", a, format!("must not exceed kmax ({b})")));
                }
                _ => return Err(invalid("switch.ecn", "?", "give either k, or both kmin and kmax")),
            }
            if !(e.pmax > 0.0 && e.pmax <= 1.0) {
                return Err(invalid("switch.ecn.pmax", e.pmax, "a probability in (0, 1]"));
            }
        }
        let cc_check = match &self.cc {
            CcConfig::None => Ok(()),
            CcConfig::Timely(p) => p.validate(),
            CcConfig::PatchedTimely(p) => p.validate(),
            CcConfig::Fast(p) => p.validate(),
            CcConfig::Reno(p) => p.validate(),
            CcConfig::Dctcp(p) => p.validate(),
            CcConfig::Vegas(p) => p.validate(),
            CcConfig::Swift(p) => p.validate(),
        };
        if let Err((field, allowed)) = cc_check {
            let value = self.resolved()["cc"][field].to_string();
            return Err(invalid(format!("cc.{field}"), value, allowed));
        }
        let window = matches!(self.transport, TransportConfig::Window(_));
        if self.cc.is_window() != window {
            // `kind`: the transport asked for; the algorithm is a controller of the other one.
            let (kind, other, is, takes) = if window {
                ("window", "message", ("a rate controller", "none, timely, patched_timely, fast"), "a window controller (reno, dctcp, vegas, swift)")
            } else {
                ("message", "window", ("a window controller", "reno, dctcp, vegas, swift"), "a rate controller (none, timely, patched_timely, fast)")
            };
            let name = self.cc.name();
            return Err(invalid(
                "cc.algorithm",
                name,
                format!("transport.kind = \"{kind}\" needs {} to be on transport.kind = \"{other}\": {name} is {} ({}); the {kind} transport takes {takes}", is.0, is.0, is.1),
            ));
        }
        if let TransportConfig::Window(w) = &self.transport {
            if w.min_rto == Time::ZERO {
                return Err(invalid("transport.min_rto", w.min_rto, "must be positive"));
            }
            if w.delayed_ack && w.delayed_ack_timeout == Time::ZERO {
                return Err(invalid("transport.delayed_ack_timeout", w.delayed_ack_timeout, "must be positive with delayed_ack"));
            }
            if w.dupthresh == 0 {
                return Err(invalid("transport.dupthresh", 0, "at least 1 (RFC 6675: 3)"));
            }
            if w.delayed_ack && matches!(self.cc, CcConfig::Swift(_)) {
                return Err(invalid("transport.delayed_ack", true, "Swift acknowledges every packet at once (§3.6): false"));
            }
        }
        if self.host.rx_queue_packets == 0 {
            return Err(invalid("host.rx_queue_packets", 0, "at least 1"));
        }
        if self.host.rx_copy_rate == Some(Rate::ZERO) {
            return Err(invalid("host.rx_copy_rate", "0bps", "positive, or absent for no per-byte cost"));
        }
        let nic = &self.nic;
        if nic.header >= nic.mtu {
            return Err(invalid("nic.header", nic.header, format!("must be smaller than nic.mtu ({})", nic.mtu)));
        }
        if nic.ack.0 == 0 || nic.ack > nic.mtu {
            return Err(invalid("nic.ack", nic.ack, format!("1B to nic.mtu ({})", nic.mtu)));
        }
        if nic.segment.0 == 0 || nic.segment.0 > u32::MAX as u64 {
            return Err(invalid("nic.segment", nic.segment, "1B to 4GB (TIMELY uses 16KB to 64KB)"));
        }
        if nic.max_outstanding < nic.segment {
            return Err(invalid(
                "nic.max_outstanding",
                nic.max_outstanding,
                format!("at least one segment (nic.segment = {})", nic.segment),
            ));
        }
        if nic.pacing_rate == Some(Rate::ZERO) {
            return Err(invalid("nic.pacing_rate", "0bps", "positive, or absent for line-rate bursts"));
        }
        if nic.ack_class >= sw.classes {
            return Err(invalid("nic.ack_class", nic.ack_class, format!("a class below switch.classes ({})", sw.classes)));
        }
        if self.flows.is_empty() && self.workloads.is_empty() {
            return Err(invalid("flows", "[]", "at least one [[flows]] group or [[workloads]] generator"));
        }
        for (i, g) in self.flows.iter().enumerate() {
            let f = |k: &str| format!("flows[{i}].{k}");
            self.host(&f("dst"), g.dst)?;
            if let Some(h) = self.host_set(&f("src"), Some(&g.src))?.into_iter().find(|&h| h == g.dst) {
                return Err(invalid(f("src"), h, "a source must differ from dst"));
            }
            if g.connections == 0 {
                return Err(invalid(f("connections"), 0, "at least 1"));
            }
            if g.class >= sw.classes {
                return Err(invalid(f("class"), g.class, format!("a class below switch.classes ({})", sw.classes)));
            }
            if g.size == Some(Bytes(0)) {
                return Err(invalid(f("size"), "0B", "positive, or absent for an unbounded connection"));
            }
            let packet = g.write.map_or(nic.payload_per_packet(), |w| w.0.min(nic.payload_per_packet()).max(1));
            if window && g.size.is_some_and(|b| b.0.div_ceil(packet) >= u32::MAX as u64) {
                return Err(invalid(f("size"), g.size.expect("checked"), "fewer than 2^32 packets on the window transport"));
            }
            if let (true, Some(rate)) = (window, g.rate) {
                return Err(invalid(f("rate"), rate, "application-limited flows run on the message transport; absent for a backlogged or sized flow"));
            }
            if g.rate == Some(Rate::ZERO) {
                return Err(invalid(f("rate"), "0bps", "positive, or absent for a backlogged connection"));
            }
            if g.rate.is_none() && (g.message.is_some() || g.arrivals != Arrivals::Periodic) {
                return Err(invalid(f("message"), "set", "message and arrivals need an application rate (flows.rate)"));
            }
            if g.message == Some(Bytes(0)) {
                return Err(invalid(f("message"), "0B", "positive"));
            }
            if let Some(w) = g.write {
                if !window || w.0 == 0 {
                    return Err(invalid(f("write"), w, "a positive size, on the window transport"));
                }
            }
            if let Some(stop) = g.stop.filter(|&t| t <= g.start + g.start_jitter) {
                return Err(invalid(f("stop"), stop, format!("after start + start_jitter ({}), or absent", g.start + g.start_jitter)));
            }
        }
        if self.until == Until::FlowsDone {
            if self.flows.is_empty() {
                return Err(invalid("until", "flows_done", "needs [[flows]] groups with a size; or until = \"duration\""));
            }
            if let Some(i) = self.flows.iter().position(|g| g.size.is_none()) {
                return Err(invalid("until", "flows_done", format!("every [[flows]] group needs a size (flows[{i}] has none); or until = \"duration\"")));
            }
        }
        for (i, w) in self.workloads.iter().enumerate() {
            self.validate_workload(&format!("workloads[{i}]"), w)?;
        }
        if window {
            self.validate_window_nic()?;
        }
        let m = &self.measure;
        if m.fct_buckets.windows(2).any(|w| w[0] >= w[1]) || m.fct_buckets.first() == Some(&Bytes(0)) {
            let v = m.fct_buckets.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(", ");
            return Err(invalid("measure.fct_buckets", format!("[{v}]"), "increasing positive sizes, e.g. [\"10KB\", \"100KB\", \"1MB\"]"));
        }
        if m.queue_interval == Time::ZERO {
            return Err(invalid("measure.queue_interval", m.queue_interval, "must be positive"));
        }
        if m.timeseries_interval == Some(Time::ZERO) {
            return Err(invalid("measure.timeseries_interval", "0ps", "positive, or absent for no time series"));
        }
        Ok(())
    }
}
