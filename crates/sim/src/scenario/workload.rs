//! `[[workloads]]`: traffic generated while the run goes ([`crate::workload`]).

use super::de::Table;
use super::traffic::{one_u32, one_u8, HostSet};
use super::validate::Context;
use super::{invalid, transfer_size, ScenarioError};
use crate::workload::matrix::Matrix;
use rttlab_cc::{Bytes, Time};
use serde::{Deserialize, Serialize};

/// A traffic generator ([`crate::workload`]).
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
    /// htsim's connection matrix: transfers chained by triggers ([`crate::workload::matrix`]).
    Matrix(MatrixConfig),
}

impl Workload {
    pub const KINDS: &'static [&'static str] = &["rpc", "flow_sizes", "incast", "pinger", "matrix"];

    pub(crate) fn read(at: &str, value: serde_json::Value) -> Result<Workload, ScenarioError> {
        let mut t = Table::new(at, value)?;
        Ok(match t.tag("kind", Self::KINDS)? {
            "rpc" => Workload::Rpc(t.rest()?),
            "flow_sizes" => Workload::FlowSizes(t.rest()?),
            "incast" => Workload::Incast(t.rest()?),
            "pinger" => Workload::Pinger(t.rest()?),
            _ => Workload::Matrix(MatrixConfig::read(at, t.rest()?)?),
        })
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Workload::Rpc(_) => "rpc",
            Workload::FlowSizes(_) => "flow_sizes",
            Workload::Incast(_) => "incast",
            Workload::Pinger(_) => "pinger",
            Workload::Matrix(_) => "matrix",
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
    /// Each client keeps this many servers, chosen once among its candidates, and sends each
    /// RPC to one of them; absent: any candidate, drawn anew per RPC. Few servers per client
    /// mean few connections, each carrying many RPCs, so that its rate controller has something
    /// to pace (TIMELY §6.2 publishes neither the set nor its size).
    pub servers_per_client: Option<u32>,
    /// How the servers of `servers_per_client` are chosen.
    #[serde(default)]
    pub server_assignment: ServerAssignment,
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
    #[serde(default = "default_backlog_limit")]
    pub max_pending: u32,
}

/// How each client's `servers_per_client` servers are chosen among its candidates.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerAssignment {
    /// Every server serves as many clients as the candidates allow (the most loaded at most
    /// one more than the least): no server is hot by construction.
    #[default]
    Balanced,
    /// Each client draws its servers independently: some servers serve many clients.
    Random,
}

/// The default of every workload's backlog limit (`max_pending`, `max_active`).
fn default_backlog_limit() -> u32 {
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
    /// Flows a source may have unfinished from this generator; beyond it new ones are refused
    /// (counted as `flows_refused`), which bounds memory when the offered load exceeds what
    /// the network takes.
    #[serde(default = "default_backlog_limit")]
    pub max_active: u32,
}

/// Every sender starts `connections` flows of `size` bytes to one receiver, at `start`, and again
/// at every event of a Poisson process of `rate` events per second when a rate is given. With
/// several hosts in `receiver`, each incast draws its receiver uniformly among them; with
/// `senders_per_incast`, it draws that many distinct senders from `senders` other than the
/// receiver (the HPCC paper's incast: 60 random senders to a random host, reference
/// algorithms.md §9.1).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IncastConfig {
    pub senders: HostSet,
    pub receiver: HostSet,
    /// Senders drawn per incast; absent: every sender, and no receiver may be a sender.
    pub senders_per_incast: Option<u32>,
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
    /// As `FlowSizesConfig::max_active`, per sender.
    #[serde(default = "default_backlog_limit")]
    pub max_active: u32,
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
    /// Probes a host may have unanswered (queued, in flight, or being echoed); beyond it new ones
    /// are refused (counted as `pings_refused`), which bounds memory when probes outrun the link.
    #[serde(default = "default_backlog_limit")]
    pub max_pending: u32,
}

/// htsim's connection matrix, read from `file` (a relative path from the scenario file's
/// directory, as `topology.file`). A resolved scenario names the file; the matrix is read again
/// from it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixConfig {
    pub file: String,
    #[serde(default = "one_u8")]
    pub class: u8,
    #[serde(skip)]
    pub matrix: std::sync::Arc<Matrix>,
}

impl MatrixConfig {
    /// `config` with its file read; an error names the file, the line and the problem.
    fn read(at: &str, mut config: MatrixConfig) -> Result<MatrixConfig, ScenarioError> {
        let field = format!("{at}.file");
        let text =
            std::fs::read_to_string(&config.file).map_err(|e| invalid(&field, &config.file, format!("a connection matrix file that can be read: {e}")))?;
        let matrix = Matrix::parse(&text, &config.file).map_err(|message| ScenarioError::Field { field, message })?;
        config.matrix = std::sync::Arc::new(matrix);
        Ok(config)
    }

    fn validate(&self, f: Path, ctx: &Context) -> Result<(), ScenarioError> {
        let hosts = ctx.hosts;
        if let Some((t, h)) = self.matrix.transfers.iter().find_map(|t| [t.src, t.dst].into_iter().find(|&h| h >= hosts).map(|h| (t, h))) {
            let message = format!("{}:{}: host {h} is outside the topology's {hosts} hosts", self.file, t.line);
            return Err(ScenarioError::Field { field: f("file"), message });
        }
        Ok(())
    }
}

fn default_ping_bytes() -> Bytes {
    Bytes(64)
}

impl Workload {
    /// `at`: the generator's path (`workloads[1]`).
    pub(crate) fn validate(&self, at: &str, ctx: &Context) -> Result<(), ScenarioError> {
        let f = |k: &str| format!("{at}.{k}");
        let (class, start, stop) = match self {
            Workload::Rpc(r) => r.validate(&f, ctx).map(|_| (r.class, r.start, r.stop))?,
            Workload::FlowSizes(c) => c.validate(&f, ctx).map(|_| (c.class, c.start, c.stop))?,
            Workload::Incast(c) => c.validate(&f, ctx).map(|_| (c.class, c.start, c.stop))?,
            Workload::Pinger(c) => c.validate(&f, ctx).map(|_| (c.class, c.start, c.stop))?,
            Workload::Matrix(c) => c.validate(&f, ctx).map(|_| (c.class, Time::ZERO, None))?,
        };
        ctx.class(&f("class"), class)?;
        if let Some(stop) = stop.filter(|&t| t <= start) {
            return Err(invalid(f("stop"), stop, format!("after start ({start}), or absent")));
        }
        Ok(())
    }
}

/// The most arrivals per second a generator's source may ask for: its mean gap is then one
/// picosecond, the clock's resolution.
const MAX_EVENT_RATE: f64 = 1e12;

/// A backlog limit must admit something.
fn at_least_one(field: String, limit: u32) -> Result<(), ScenarioError> {
    if limit == 0 {
        return Err(invalid(field, 0, "at least 1"));
    }
    Ok(())
}

/// A field's path in the generator being checked.
type Path<'a> = &'a dyn Fn(&str) -> String;

impl RpcConfig {
    fn validate(&self, f: Path, ctx: &Context) -> Result<(), ScenarioError> {
        ctx.host_set(&f("clients"), self.clients.as_ref())?;
        ctx.host_set(&f("servers"), self.servers.as_ref())?;
        if ctx.window {
            return Err(invalid(f("kind"), "rpc", "RPCs run on persistent message-transport connections: set transport.kind = \"message\""));
        }
        if !(self.rate.is_finite() && self.rate > 0.0 && self.rate <= MAX_EVENT_RATE) {
            return Err(invalid(f("rate"), format!("{:?}", self.rate), "RPCs per second per client, positive and at most 1e12 (one per picosecond)"));
        }
        transfer_size(f("size"), self.size)?;
        if let Some(r) = self.response {
            transfer_size(f("response"), r)?;
        }
        at_least_one(f("max_pending"), self.max_pending)?;
        if self.servers_per_client == Some(0) {
            return Err(invalid(f("servers_per_client"), 0, "at least 1, or absent for any server"));
        }
        Ok(())
    }
}

impl FlowSizesConfig {
    fn validate(&self, f: Path, ctx: &Context) -> Result<(), ScenarioError> {
        ctx.host_set(&f("hosts"), self.hosts.as_ref())?;
        crate::workload::cdf::Cdf::from_spec(&self.cdf).map_err(|allowed| invalid(f("cdf"), serde_json::to_string(&self.cdf).unwrap_or_default(), allowed))?;
        if !(self.load.is_finite() && self.load > 0.0 && self.load <= 1.0) {
            return Err(invalid(f("load"), format!("{:?}", self.load), "a fraction of the host link rate in (0, 1]"));
        }
        at_least_one(f("max_active"), self.max_active)
    }
}

impl IncastConfig {
    fn validate(&self, f: Path, ctx: &Context) -> Result<(), ScenarioError> {
        let receivers = ctx.host_set(&f("receiver"), Some(&self.receiver))?;
        let senders = ctx.host_set(&f("senders"), Some(&self.senders))?;
        match self.senders_per_incast {
            None => {
                if let Some(r) = receivers.iter().find(|r| senders.contains(r)) {
                    return Err(invalid(f("senders"), r, "no receiver can be a sender (unless senders_per_incast draws senders per incast)"));
                }
            }
            Some(k) => {
                // Every receiver must leave k senders to draw from.
                let fewest = receivers.iter().map(|r| senders.iter().filter(|s| *s != r).count()).min().unwrap_or(0);
                if k == 0 || k as usize > fewest {
                    return Err(invalid(f("senders_per_incast"), k, format!("1 to {fewest} (the senders other than any one receiver)")));
                }
            }
        }
        transfer_size(f("size"), self.size)?;
        if self.connections == 0 {
            return Err(invalid(f("connections"), 0, "at least 1"));
        }
        if let Some(r) = self.rate.filter(|r| !(r.is_finite() && *r > 0.0 && *r <= MAX_EVENT_RATE)) {
            return Err(invalid(
                f("rate"),
                format!("{r:?}"),
                "incast events per second, positive and at most 1e12 (one per picosecond); absent for one at start",
            ));
        }
        at_least_one(f("max_active"), self.max_active)
    }
}

impl PingerConfig {
    fn validate(&self, f: Path, ctx: &Context) -> Result<(), ScenarioError> {
        ctx.host_set(&f("hosts"), self.hosts.as_ref())?;
        if self.interval == Time::ZERO {
            return Err(invalid(f("interval"), self.interval, "must be positive"));
        }
        if self.size < ctx.nic.ack || self.size > ctx.nic.mtu {
            return Err(invalid(f("size"), self.size, format!("nic.ack ({}) to nic.mtu ({})", ctx.nic.ack, ctx.nic.mtu)));
        }
        at_least_one(f("max_pending"), self.max_pending)
    }
}
