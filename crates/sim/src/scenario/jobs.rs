//! `[[jobs]]`: collective operations of training jobs ([`crate::workload::collective`]), each a
//! graph of transfers whose steps start when their input has arrived.

use super::traffic::{one_u8, HostSet};
use super::validate::Context;
use super::{invalid, transfer_size, CcConfig, ScenarioError, TransportConfig};
use rttlab_cc::{Bytes, Time};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobConfig {
    pub collective: Collective,
    /// The hosts the job may run on; its ranks are placed on them by `placement`.
    pub hosts: HostSet,
    /// Ranks (absent: one per host of `hosts`).
    pub ranks: Option<u32>,
    #[serde(default)]
    pub placement: Placement,
    /// The collective's buffer per rank.
    pub size: Bytes,
    #[serde(default = "one")]
    pub iterations: u32,
    /// Compute between iterations: a rank starts the next iteration this long after its input
    /// for the last one has arrived.
    #[serde(default)]
    pub gap: Time,
    #[serde(default)]
    pub start: Time,
    #[serde(default = "one_u8")]
    pub class: u8,
    /// All-to-all: each rank's buffer goes to the others in Zipf shares of this exponent, rank
    /// 0's the largest (a mixture-of-experts layer's uneven expert load); 0: size/N to each.
    #[serde(default)]
    pub skew: f64,
    /// Whether each transfer opens a connection of its own or rides the ranks' persistent one.
    #[serde(default)]
    pub connections: Connections,
    /// The job's own congestion controller, as `[cc]` names one (absent: `[cc]`'s), of its
    /// transport's kind (`Scenario::validate_job_cc`).
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub cc: Option<CcConfig>,
    /// The job's own transport, as `[transport]` gives one (absent: `[transport]`'s): a RoCE
    /// training job beside TCP traffic, or the reverse. Its controller must fit it.
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub transport: Option<TransportConfig>,
}

fn one() -> u32 {
    1
}

/// `jobs.collective`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Collective {
    /// Ring all-reduce (Patarasuk and Yuan, 2009; NCCL's ring): a reduce-scatter then an
    /// all-gather, 2(N − 1) steps of size/N to the next rank.
    AllreduceRing,
    /// Halving-doubling all-reduce (Thakur et al., 2005): recursive halving then doubling,
    /// 2·log2 N steps with the partner rank XOR a power of two; N a power of two.
    AllreduceButterfly,
    /// Every rank sends size/N to every other rank at once.
    Alltoall,
    /// Every rank sends size/N to the next rank, the one after, ... in turn, each once the one
    /// before has been sent (htsim's `gen_serial_alltoall.py`).
    AlltoallSerial,
    /// Ring all-gather: N − 1 steps of size/N.
    Allgather,
    /// Ring reduce-scatter: N − 1 steps of size/N.
    ReduceScatter,
}

/// `jobs.connections`: what carries a job's transfers.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Connections {
    /// A fresh connection per transfer, as htsim's connection matrices run a collective: each
    /// step's controller starts from its initial window or rate.
    #[default]
    PerTransfer,
    /// One connection per (sender, receiver) pair of ranks, opened at its first transfer and
    /// kept, each transfer a message on it (NCCL keeps its connections for the job's life): a
    /// controller carries its state from step to step.
    Persistent,
}

/// `jobs.placement`: which hosts of `hosts` take the ranks, in rank order.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// The first hosts, in order.
    #[default]
    Packed,
    /// Hosts spread evenly: every (hosts / ranks)-th.
    Strided,
    /// Drawn from the scenario's seed.
    Random,
}

impl JobConfig {
    /// Reads the job at `at`, its `cc` table as `[cc]`'s controller is read and its `transport`
    /// as `[transport]` (its defaults from the job's controller, else `run_cc`).
    pub(crate) fn read(at: &str, mut value: serde_json::Value, run_cc: &CcConfig) -> Result<JobConfig, ScenarioError> {
        let mut take = |key: &str| value.as_object_mut().and_then(|m| m.remove(key));
        let (cc, transport) = (take("cc"), take("transport"));
        let mut job: JobConfig = super::de::parse(at, value)?;
        job.cc = cc.map(|v| CcConfig::read(&format!("{at}.cc"), v)).transpose()?;
        job.transport = transport.map(|v| TransportConfig::read(&format!("{at}.transport"), v, job.cc.as_ref().unwrap_or(run_cc))).transpose()?;
        Ok(job)
    }

    /// `at`: the job's path (`jobs[0]`).
    pub(crate) fn validate(&self, at: &str, ctx: &Context) -> Result<(), ScenarioError> {
        let hosts = ctx.host_set(&format!("{at}.hosts"), Some(&self.hosts))?;
        let ranks = self.ranks.unwrap_or(hosts.len() as u32);
        if ranks as usize > hosts.len() {
            return Err(invalid(format!("{at}.ranks"), ranks, format!("at most the job's {} hosts", hosts.len())));
        }
        if ranks < 2 {
            return Err(invalid(format!("{at}.ranks"), ranks, "at least 2 ranks"));
        }
        if self.collective == Collective::AllreduceButterfly && !ranks.is_power_of_two() {
            return Err(invalid(format!("{at}.ranks"), ranks, "a power of two for allreduce_butterfly"));
        }
        transfer_size(format!("{at}.size"), self.size)?;
        if self.size.0 < ranks as u64 {
            return Err(invalid(format!("{at}.size"), self.size, format!("at least one byte per rank ({ranks})")));
        }
        if !(0.0..=8.0).contains(&self.skew) {
            return Err(invalid(format!("{at}.skew"), self.skew, "a Zipf exponent from 0 (equal shares) to 8"));
        }
        if self.skew > 0.0 && !matches!(self.collective, Collective::Alltoall | Collective::AlltoallSerial) {
            return Err(invalid(format!("{at}.skew"), self.skew, "for alltoall and alltoall_serial only (others send equal chunks): 0"));
        }
        if self.iterations == 0 || self.iterations > 100_000 {
            return Err(invalid(format!("{at}.iterations"), self.iterations, "1 to 100000"));
        }
        // A transfer's number says which it is (`workload::collective`), in 32 bits.
        let per_iteration = ranks as u64 * self.collective.fanout(ranks) as u64 * self.collective.steps(ranks) as u64;
        if per_iteration * self.iterations as u64 > u32::MAX as u64 {
            let most = u32::MAX as u64 / per_iteration;
            return Err(invalid(format!("{at}.iterations"), self.iterations, format!("at most {most} for this job: {per_iteration} transfers an iteration")));
        }
        ctx.class(&format!("{at}.class"), self.class)
    }
}
