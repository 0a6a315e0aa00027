//! The scenario schema: what a TOML (or JSON) scenario may say, its defaults, and validation
//! with errors that name the field, the value and what is allowed.
//!
//! Values carry units (`"10Gbps"`, `"16KB"`, `"50us"`, see `rttlab_cc::units`). A scenario read
//! back from `Scenario::resolved()` has every default filled in: that is what a result records as
//! "the scenario as run". One file per section: `topology`, `switch`, `host` (NIC, host stack,
//! transport, congestion control), `traffic` (`[[flows]]`), `workload`, `measure`; `de` reads
//! tables with whole-path errors, `validate` holds what spans sections.

mod de;
mod faults;
mod graph;
mod host;
mod htsim_topology;
mod jobs;
mod measure;
mod routing;
mod switch;
mod topology;
mod traffic;
mod validate;
mod workload;

pub use faults::{FaultConfig, FaultKind};
pub use graph::{GraphConfig, GraphLink};
pub use host::{
    CcConfig, CcSection, Feedback, HostConfig, HostLoad, LossDetection, NicArbitration, NicConfig, PythonCc, RateAfterIdle, RatePacing, Recovery, Timestamps,
    TransportConfig, UetConfig, UetCongestion, WindowConfig, FEEDBACK_SAMPLES,
};
pub use jobs::{Collective, Connections, JobConfig, Placement};
pub use measure::{MeasureConfig, PcapConfig, MAX_CAPTURE_BYTES, MAX_TRACE_SAMPLES};
pub use routing::{Granularity, RoutingConfig, RoutingMode, Spray, Weights};
pub use switch::{EcnConfig, MarkAt, PortEcn, PortOverride, QueueLen, Spacing, SwitchConfig, Trimming};
pub use topology::{ChainConfig, FatTreeConfig, HostCounts, HostLink, LeafSpineConfig, StarConfig, TierLink, Topology};
pub use traffic::{Arrivals, FlowGroup, HostSet, Until};
pub use workload::{CdfSpec, FlowSizesConfig, IncastConfig, Peers, PingerConfig, RpcConfig, ServerAssignment, Workload};

pub(crate) use de::did_you_mean;
use de::{read_list, Table};
use rttlab_cc::{Bytes, Time};
use serde::Serialize;

/// Everything that defines one run.
#[derive(Clone, Debug, Serialize)]
pub struct Scenario {
    pub name: String,
    /// Default 1.
    pub seed: u64,
    /// Simulated time to run.
    pub duration: Time,
    /// Statistics (throughput, RTT, Jain) count only what happens after the warm-up.
    pub warmup: Time,
    /// When the run ends: at `duration`, or as soon as every `[[flows]]` connection has
    /// delivered its `size` (`duration` is then a cap).
    pub until: Until,
    pub topology: Topology,
    pub switch: SwitchConfig,
    pub nic: NicConfig,
    pub host: HostConfig,
    pub transport: TransportConfig,
    pub cc: CcSection,
    /// How switches pick among equal-cost ports (`[routing]`).
    pub routing: RoutingConfig,
    /// Connections that exist from the start (or a set time).
    pub flows: Vec<FlowGroup>,
    /// Traffic generated while the run goes: RPCs, flow sizes from a CDF, incasts, pingers,
    /// connection matrices.
    pub workloads: Vec<Workload>,
    /// Collective operations of training jobs (`[[jobs]]`).
    pub jobs: Vec<JobConfig>,
    /// Timed failures of links and switches (`[[faults]]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<FaultConfig>,
    pub measure: MeasureConfig,
    /// How the run uses the machine (`[run]`): never what it computes.
    pub run: RunOptions,
}

/// `[run]`: how a run uses the machine. Results are the same bytes whatever is set here.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunOptions {
    /// Threads for one simulation ([`crate::parallel`]): `"auto"` (every core for a fabric of
    /// `AUTO_THREADS_HOSTS` hosts or more, one below) or a count.
    #[serde(default)]
    pub threads: Threads,
}

/// `run.threads`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Threads {
    #[default]
    Auto,
    Count(u32),
}

/// Below this many hosts `threads = "auto"` runs on one thread: a window's work is too small
/// to pay for its barrier.
pub const AUTO_THREADS_HOSTS: u32 = 64;

impl Serialize for Threads {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Threads::Auto => s.serialize_str("auto"),
            Threads::Count(n) => s.serialize_u32(*n),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Threads {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) if s == "auto" => Ok(Threads::Auto),
            serde_json::Value::Number(n) if n.as_u64().is_some_and(|n| (1..=1024).contains(&n)) => Ok(Threads::Count(n.as_u64().unwrap_or(1) as u32)),
            v => Err(serde::de::Error::custom(format!("{v}: \"auto\" or a thread count from 1 to 1024"))),
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

/// The largest message, flow or transfer: byte counters summed over a run stay far from the
/// 64-bit limit.
pub const MAX_TRANSFER: Bytes = Bytes(1_000_000_000_000);

/// A transfer size must be positive and at most [`MAX_TRANSFER`].
pub(crate) fn transfer_size(field: impl Into<String>, size: Bytes) -> Result<(), ScenarioError> {
    if size.0 == 0 || size > MAX_TRANSFER {
        return Err(invalid(field, size, format!("positive and at most {MAX_TRANSFER}")));
    }
    Ok(())
}

pub fn invalid(field: impl Into<String>, value: impl ToString, allowed: impl Into<String>) -> ScenarioError {
    ScenarioError::Invalid { field: field.into(), value: value.to_string(), allowed: allowed.into() }
}

/// A unit enum's name as a scenario spells it (`"qp_round_robin"`), for error messages.
pub(crate) fn variant_name(v: impl serde::Serialize) -> String {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

impl Scenario {
    /// The top-level keys.
    pub const KEYS: &'static [&'static str] = &[
        "name",
        "seed",
        "duration",
        "warmup",
        "until",
        "topology",
        "switch",
        "nic",
        "host",
        "transport",
        "cc",
        "routing",
        "flows",
        "workloads",
        "jobs",
        "faults",
        "measure",
        "run",
    ];

    pub fn from_toml(text: &str) -> Result<Scenario, ScenarioError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| ScenarioError::Syntax { format: "TOML", message: e.to_string() })?;
        let value = serde_json::to_value(table).expect("TOML tables are JSON values");
        Self::from_value(value)
    }

    /// Reads a TOML scenario file; a relative `topology.file` is taken from the file's
    /// directory (as the Python front end does).
    pub fn from_toml_file(path: &std::path::Path) -> Result<Scenario, ScenarioError> {
        Self::from_toml_file_with(path, &[])
    }

    /// [`Scenario::from_toml_file`] with dotted keys set to values first (`topology.k`, 16),
    /// as `rttlab run --set` does.
    pub fn from_toml_file_with(path: &std::path::Path, set: &[(String, toml::Value)]) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| invalid("scenario", path.display(), format!("cannot be read: {e}")))?;
        let mut table: toml::Table = toml::from_str(&text).map_err(|e| ScenarioError::Syntax { format: "TOML", message: e.to_string() })?;
        for (key, value) in set {
            let mut parts: Vec<&str> = key.split('.').collect();
            let last = parts.pop().filter(|l| !l.is_empty()).ok_or_else(|| invalid(key.as_str(), value, "a dotted key such as topology.k"))?;
            let mut at = &mut table;
            for part in parts {
                let next = at.entry(part).or_insert_with(|| toml::Value::Table(toml::Table::new()));
                at = next.as_table_mut().ok_or_else(|| invalid(key.as_str(), value, format!("a key under a table, and `{part}` is not one")))?;
            }
            at.insert(last.to_string(), value.clone());
        }
        // Files a scenario names are found from its own directory.
        let from_here = |file: &mut toml::Value| {
            if let (toml::Value::String(file), Some(dir)) = (file, path.parent()) {
                if std::path::Path::new(file.as_str()).is_relative() {
                    *file = dir.join(&*file).display().to_string();
                }
            }
        };
        table.get_mut("topology").and_then(|t| t.get_mut("file")).map(from_here);
        for w in table.get_mut("workloads").and_then(|w| w.as_array_mut()).into_iter().flatten() {
            w.get_mut("file").map(from_here);
        }
        Self::from_value(serde_json::to_value(table).expect("TOML tables are JSON values"))
    }

    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| ScenarioError::Syntax { format: "JSON", message: e.to_string() })?;
        Self::from_value(value)
    }

    /// Reads every section (the transport after `cc`, whose choice sets one of its defaults),
    /// resolves the defaults that depend on other sections, and validates.
    fn from_value(value: serde_json::Value) -> Result<Scenario, ScenarioError> {
        let mut t = Table::new("", value)?;
        let cc = t.raw("cc").map_or(Ok(CcSection::default()), |v| CcSection::read("cc", v))?;
        let transport = t.raw("transport").map_or(Ok(TransportConfig::Message { prr: false }), |v| TransportConfig::read("transport", v, &cc.controller))?;
        let topology = t.require_raw("topology")?;
        let workloads = t.raw("workloads").map_or(Ok(Vec::new()), |v| read_list("workloads", v, Workload::read))?;
        let jobs = t.raw("jobs").map_or(Ok(Vec::new()), |v| read_list("jobs", v, |at, v| JobConfig::read(at, v, &cc.controller)))?;
        let mut s = Scenario {
            name: t.take("name")?.unwrap_or_default(),
            seed: t.take("seed")?.unwrap_or(1),
            duration: t.require("duration")?,
            warmup: t.take("warmup")?.unwrap_or_default(),
            until: t.take("until")?.unwrap_or_default(),
            topology: Topology::read("topology", topology)?,
            switch: t.take("switch")?.unwrap_or_default(),
            nic: t.take("nic")?.unwrap_or_default(),
            host: t.take("host")?.unwrap_or_default(),
            transport,
            cc,
            routing: t.take("routing")?.unwrap_or_default(),
            flows: t.take("flows")?.unwrap_or_default(),
            workloads,
            jobs,
            faults: t.take("faults")?.unwrap_or_default(),
            measure: t.take("measure")?.unwrap_or_default(),
            run: t.take("run")?.unwrap_or_default(),
        };
        t.finish(Self::KEYS)?;
        // What the controller declares it needs sets the defaults it depends on; the window
        // transport read `ack_per_packet` as its delayed ACKs' default.
        let needs = s.cc.controller.needs();
        s.switch.int.get_or_insert(needs.int);
        if let Some(marking) = needs.ecn_profile {
            s.switch.ecn.get_or_insert_with(|| EcnConfig::declared(marking));
        }
        // The NIC's defaults serve every controller on the message transport.
        let needs: Vec<_> = s.message_ccs().map(CcConfig::needs).collect();
        if !needs.is_empty() {
            if needs.iter().any(|n| n.ack_per_packet) {
                s.nic.segment.get_or_insert(Bytes(s.nic.payload_per_packet()));
            }
            if needs.iter().any(|n| n.rate_limiter) {
                s.nic.max_outstanding.get_or_insert(NicConfig::UNLIMITED_OUTSTANDING);
            }
            s.nic.segment.get_or_insert(NicConfig::DEFAULT_SEGMENT);
            s.nic.max_outstanding.get_or_insert(NicConfig::DEFAULT_MAX_OUTSTANDING);
            s.nic.send_queue.get_or_insert(NicConfig::DEFAULT_SEND_QUEUE);
            s.nic.retransmit_timeout.get_or_insert(NicConfig::DEFAULT_RETRANSMIT_TIMEOUT);
            s.nic.arbitration.get_or_insert_default();
            s.nic.rate_pacing.get_or_insert_default();
            s.nic.rate_after_idle.get_or_insert_default();
            s.nic.recovery.get_or_insert_default();
        }
        s.validate()?;
        Ok(s)
    }

    /// The scenario with every default written out, as JSON.
    pub fn resolved(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("scenarios serialize")
    }

    pub fn hosts(&self) -> u32 {
        self.topology.hosts()
    }

    /// The transport job `j`'s connections run on: its own, else `[transport]`.
    pub fn job_transport<'a>(&'a self, j: &'a JobConfig) -> &'a TransportConfig {
        j.transport.as_ref().unwrap_or(&self.transport)
    }

    /// The controller job `j`'s connections run: its own, else `[cc]`'s.
    pub fn job_cc<'a>(&'a self, j: &'a JobConfig) -> &'a CcConfig {
        j.cc.as_ref().unwrap_or(&self.cc.controller)
    }

    /// The controllers that run on the message transport, whose NIC serves them all: `[cc]`'s
    /// on a message run, and each job's there.
    pub fn message_ccs(&self) -> impl Iterator<Item = &CcConfig> {
        let run = (!self.transport.is_window()).then_some(&self.cc.controller);
        run.into_iter().chain(self.jobs.iter().filter(|j| !self.job_transport(j).is_window()).map(|j| self.job_cc(j)))
    }
}
