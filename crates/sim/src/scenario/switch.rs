//! `[switch]`: the shared buffer, priority classes, PFC thresholds and ECN marking of every
//! switch (`crate::switch`, `crate::port`).

use super::{invalid, ScenarioError};
use rttlab_cc::Bytes;
use serde::{Deserialize, Serialize};

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

impl SwitchConfig {
    pub(crate) fn validate(&self) -> Result<(), ScenarioError> {
        if !(1..=8).contains(&self.classes) {
            return Err(invalid("switch.classes", self.classes, "1 to 8 priority classes"));
        }
        if self.pfc && !(self.pfc_xon < self.pfc_xoff && self.pfc_xoff < self.buffer) {
            return Err(invalid("switch.pfc_xoff", self.pfc_xoff, format!("need pfc_xon ({}) < pfc_xoff < buffer ({})", self.pfc_xon, self.buffer)));
        }
        self.ecn.as_ref().map_or(Ok(()), EcnConfig::validate)
    }
}

impl EcnConfig {
    fn validate(&self) -> Result<(), ScenarioError> {
        match (self.k, self.kmin, self.kmax) {
            (Some(_), None, None) => {}
            (None, Some(a), Some(b)) if a <= b => {}
            (None, Some(a), Some(b)) => return Err(invalid("switch.ecn.kmin", a, format!("must not exceed kmax ({b})"))),
            _ => return Err(invalid("switch.ecn", "?", "give either k, or both kmin and kmax")),
        }
        if !(self.pmax > 0.0 && self.pmax <= 1.0) {
            return Err(invalid("switch.ecn.pmax", self.pmax, "a probability in (0, 1]"));
        }
        Ok(())
    }
}
