//! `[routing]`: how a switch picks among the equal-cost egress ports towards a destination
//! ([`crate::fabric::routing`] computes the ports; [`crate::fabric`] picks one per packet).

use rttlab_cc::Time;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingConfig {
    pub mode: RoutingMode,
    /// `flowlet` (and `adaptive` per flowlet): a gap in a connection's packets longer than
    /// this starts a new flowlet, which may take another port (LetFlow, NSDI'17, §3: 50 to
    /// 500 µs in its evaluation).
    pub flowlet_gap: Time,
    /// `spray`: how each packet's port is picked.
    pub spray: Spray,
    /// `adaptive`: a choice per packet, or per flowlet.
    pub adaptive: Granularity,
    /// `adaptive`: a port whose class is paused by PFC counts as full.
    pub count_paused: bool,
    /// `spray = "reps"`: the entropy values a sender keeps for reuse (REPS's buffer).
    pub reps_entropies: u32,
    /// `spray = "oblivious"` or `"bitmap"`: the entropy values a sender walks (a power of
    /// two; htsim's `-paths`, 64 by default).
    pub entropies: u32,
    /// After a link goes down, how long its switch keeps forwarding into it before its
    /// equal-cost groups drop the port (local detection and reprogramming; `[[faults]]`). Until
    /// then what hashes to it is lost: the black hole a real fabric has. Adaptive routing sees
    /// the port down at once.
    pub failover_delay: Time,
    /// How ECMP weighs a group's ports: alike, or by the rate each runs at now (a degraded link
    /// takes its share of the group's capacity; weighted-cost multipath).
    pub weights: Weights,
}

/// `routing.weights`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Weights {
    #[default]
    Equal,
    Capacity,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig {
            mode: RoutingMode::Ecmp,
            flowlet_gap: Time::from_us(100),
            spray: Spray::Random,
            adaptive: Granularity::Packet,
            count_paused: false,
            reps_entropies: 256,
            entropies: 64,
            failover_delay: Time::from_us(1000),
            weights: Weights::Equal,
        }
    }
}

/// `routing.mode`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoutingMode {
    /// Per-flow ECMP: a hash of the 5-tuple and the connection's path label picks the port, so
    /// a connection's packets take one path until its label changes (RFC 2992).
    #[default]
    Ecmp,
    /// LetFlow (Vanini et al., NSDI'17): a flow's packets stay on one port until a gap longer
    /// than `flowlet_gap`; the next flowlet takes a port at random.
    Flowlet,
    /// Every packet takes its own port (`spray`).
    Spray,
    /// The least occupied equal-cost egress (bytes queued), per packet or per flowlet
    /// (DRILL, CoNEXT'17, per packet; CONGA-style flowlets).
    Adaptive,
}

/// `routing.spray`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Spray {
    /// Each switch draws a port per packet (random packet spraying, Dixit et al., 2013).
    #[default]
    Random,
    /// Each switch takes its ports in turn, per destination group.
    RoundRobin,
    /// The sender picks an entropy value per packet, reusing those whose packets came back
    /// without a congestion mark and drawing a fresh one otherwise; switches hash it as ECMP
    /// does (REPS, Bonato et al., 2024; Ultra Ethernet's packet spraying).
    Reps,
    /// The sender walks its `entropies` entropy values in a shuffled order, one per packet,
    /// whatever comes back (Ultra Ethernet's oblivious spraying; htsim `UecMpOblivious`).
    Oblivious,
    /// The walk of `oblivious`, skipping entropy values penalised by what came back on them
    /// (an ECN echo adds 1, a NACK of a packet trimmed before the last hop 4, up to 15; each
    /// skip pays one back; htsim `UecMpBitmap`).
    Bitmap,
    /// Entropy values that came back unmarked reused first, else the bitmap's walk (htsim's
    /// default, `UecMpMixed`).
    Mixed,
    /// htsim_uec's REPS (`UecMpReps`): a ring of eight entropy values that came back unmarked,
    /// each reused once, fresh ones drawn among `entropies` otherwise; after a timeout, on a
    /// fabric that trims, only the ring's are reused for 10 ms, then 16 fresh ones explored.
    RepsFreezing,
}

/// `routing.adaptive`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Granularity {
    #[default]
    Packet,
    Flowlet,
}

impl RoutingConfig {
    /// Switches choose each packet's port themselves (their own state decides, not a hash
    /// the packet carries).
    pub fn switch_chooses(&self) -> bool {
        match self.mode {
            RoutingMode::Ecmp => false,
            RoutingMode::Spray => self.spray == Spray::Random || self.spray == Spray::RoundRobin,
            RoutingMode::Flowlet | RoutingMode::Adaptive => true,
        }
    }

    /// A connection's packets may each take their own path, so that they arrive out of order
    /// as a matter of course (spraying, REPS, adaptive routing per packet).
    pub fn per_packet(&self) -> bool {
        self.mode == RoutingMode::Spray || (self.mode == RoutingMode::Adaptive && self.adaptive == Granularity::Packet)
    }

    /// Switches keep a flowlet table.
    pub fn flowlets(&self) -> bool {
        self.mode == RoutingMode::Flowlet || (self.mode == RoutingMode::Adaptive && self.adaptive == Granularity::Flowlet)
    }

    /// The sender's entropy value per packet, if it chooses one (`spray` = `reps`,
    /// `oblivious`, `bitmap`, `mixed`, `reps_freezing`); `trimming`: switches trim.
    pub fn entropy(&self, trimming: bool) -> Option<crate::transport::path::Entropy> {
        use crate::transport::path::Entropy;
        match (self.mode, self.spray) {
            (RoutingMode::Spray, Spray::Reps) => Some(Entropy::Reps { keep: self.reps_entropies as usize }),
            (RoutingMode::Spray, Spray::Oblivious) => Some(Entropy::Oblivious { values: self.entropies as u16 }),
            (RoutingMode::Spray, Spray::Bitmap) => Some(Entropy::Bitmap { values: self.entropies as u16 }),
            (RoutingMode::Spray, Spray::Mixed) => Some(Entropy::Mixed { values: self.entropies as u16 }),
            (RoutingMode::Spray, Spray::RepsFreezing) => Some(Entropy::RepsFreezing { values: self.entropies as u16, freeze: trimming }),
            _ => None,
        }
    }

    pub(crate) fn validate(&self) -> Result<(), super::ScenarioError> {
        if self.flowlet_gap == Time::ZERO {
            return Err(super::invalid("routing.flowlet_gap", self.flowlet_gap, "positive (LetFlow: 50us to 500us)"));
        }
        if !(1..=65536).contains(&self.reps_entropies) {
            return Err(super::invalid("routing.reps_entropies", self.reps_entropies, "1 to 65536 entropy values"));
        }
        if !self.entropies.is_power_of_two() || self.entropies > 1 << 15 {
            return Err(super::invalid("routing.entropies", self.entropies, "a power of two from 1 to 32768 entropy values"));
        }
        Ok(())
    }
}
