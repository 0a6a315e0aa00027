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
            RoutingMode::Spray => self.spray != Spray::Reps,
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

    /// Senders pick an entropy value per packet (REPS), keeping this many for reuse.
    pub fn reps(&self) -> Option<usize> {
        (self.mode == RoutingMode::Spray && self.spray == Spray::Reps).then_some(self.reps_entropies as usize)
    }

    pub(crate) fn validate(&self) -> Result<(), super::ScenarioError> {
        if self.flowlet_gap == Time::ZERO {
            return Err(super::invalid("routing.flowlet_gap", self.flowlet_gap, "positive (LetFlow: 50us to 500us)"));
        }
        if !(1..=65536).contains(&self.reps_entropies) {
            return Err(super::invalid("routing.reps_entropies", self.reps_entropies, "1 to 65536 entropy values"));
        }
        Ok(())
    }
}
