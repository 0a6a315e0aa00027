//! `[topology]`: the fabric's shape, sizes and link rates ([`crate::fabric::topology`] builds the graph).

use super::de::Table;
use super::graph::GraphConfig;
use super::{invalid, ScenarioError};
use rttlab_cc::{Rate, Time};
use serde::{Deserialize, Serialize};

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
    /// Named hosts and switches and an explicit list of links (`scenario::graph`).
    Graph(GraphConfig),
}

/// Hosts per switch: one count for every switch, or a list with one count per switch.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum HostCounts {
    Same(u32),
    Each(Vec<u32>),
}

impl HostCounts {
    /// Hosts of switch `i` of `n`.
    pub fn of(&self, i: u32) -> u32 {
        match self {
            HostCounts::Same(c) => *c,
            HostCounts::Each(v) => v[i as usize],
        }
    }

    /// Hosts of `n` switches.
    pub fn total(&self, n: u32) -> u64 {
        match self {
            HostCounts::Same(c) => *c as u64 * n as u64,
            HostCounts::Each(v) => v.iter().map(|&c| c as u64).sum(),
        }
    }

    /// The largest count.
    pub fn max(&self) -> u32 {
        match self {
            HostCounts::Same(c) => *c,
            HostCounts::Each(v) => v.iter().copied().max().unwrap_or(0),
        }
    }

    /// At least one host on each of `n` switches, and a list as long as the switches.
    fn validate(&self, field: &str, n: u32, switches: &str) -> Result<(), ScenarioError> {
        if let HostCounts::Each(v) = self {
            if v.len() != n as usize {
                return Err(invalid(format!("topology.{field}"), format!("{} counts", v.len()), format!("one count per switch: {switches} = {n}")));
            }
        }
        match (0..n).find(|&i| self.of(i) == 0) {
            Some(i) if matches!(self, HostCounts::Each(_)) => Err(invalid(format!("topology.{field}[{i}]"), 0, "at least 1")),
            Some(_) => Err(invalid(format!("topology.{field}"), 0, "at least 1")),
            None => Ok(()),
        }
    }
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
    /// One count for every leaf, or a list of one per leaf.
    pub hosts_per_leaf: HostCounts,
    /// Host–leaf links.
    pub link_rate: Rate,
    pub link_delay: Time,
    /// Leaf–spine links. Their rate defaults to what `oversubscription` implies.
    #[serde(default)]
    pub spine_link: TierLink,
    /// Host bandwidth of a leaf over its uplink bandwidth:
    /// `hosts_per_leaf · link_rate / (spines · spine rate)` (of the leaf with the most hosts). 1 is non-blocking. Only when
    /// `spine_link.rate` is absent.
    pub oversubscription: Option<f64>,
}

impl LeafSpineConfig {
    /// The leaf–spine rate: given, or `hosts_per_leaf · link_rate / (spines · oversubscription)`.
    pub fn spine_rate(&self) -> Rate {
        self.spine_link.rate.unwrap_or_else(|| {
            let host_bps = self.hosts_per_leaf.max() as f64 * self.link_rate.bps() as f64;
            Rate((host_bps / (self.spines as f64 * self.oversubscription.unwrap_or(1.0))).round() as u64)
        })
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainConfig {
    /// Switches in the line, at least 2.
    pub switches: u32,
    /// Hosts on each switch, one count for all or a list of one per switch; hosts are numbered
    /// switch by switch (with 2 per switch, switch i has hosts 2i and 2i + 1).
    pub hosts_per_switch: HostCounts,
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

/// A host whose link differs from the default (e.g. the testbed server's 2 × 10 Gbps).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostLink {
    pub host: u32,
    /// The rate of each of the host's `ports`.
    pub rate: Option<Rate>,
    pub delay: Option<Time>,
    /// Links bonded between the host and the switch, each connection's packets on one of them
    /// by the ECMP hash of its 5-tuple (link aggregation, IEEE 802.1AX: a LAG hashes flows,
    /// not packets). Absent: 1. `fabric::topology` says how a bond is built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<u32>,
}

/// The most links one bond may have.
pub const MAX_BONDED_PORTS: u32 = 16;

impl Topology {
    pub const KINDS: &'static [&'static str] = &["star", "fat_tree", "leaf_spine", "chain", "graph"];

    pub(crate) fn read(at: &str, value: serde_json::Value) -> Result<Topology, ScenarioError> {
        let mut t = Table::new(at, value)?;
        Ok(match t.tag("kind", Self::KINDS)? {
            "star" => Topology::Star(t.rest()?),
            "fat_tree" => Topology::FatTree(t.rest()?),
            "leaf_spine" => Topology::LeafSpine(t.rest()?),
            "chain" => Topology::Chain(t.rest()?),
            _ => Topology::Graph(GraphConfig::read(t)?),
        })
    }

    pub fn hosts(&self) -> u32 {
        self.counts().hosts as u32
    }

    pub fn switches(&self) -> u32 {
        self.counts().switches as u32
    }

    /// Hosts, switches and links, without overflow for any sizes.
    fn counts(&self) -> Counts {
        let (hosts, switches, fabric_links) = match self {
            Topology::Star(s) => (s.hosts as u64, 1, 0),
            Topology::FatTree(t) => {
                let k = t.k as u64;
                (k.pow(3) / 4, k * k * 5 / 4, k.pow(3) / 2)
            }
            Topology::LeafSpine(t) => {
                let (leaves, spines) = (t.leaves as u64, t.spines as u64);
                (t.hosts_per_leaf.total(t.leaves), leaves + spines, leaves * spines)
            }
            Topology::Chain(t) => (t.hosts_per_switch.total(t.switches), t.switches as u64, (t.switches as u64).saturating_sub(1)),
            Topology::Graph(g) => {
                let hosts = g.hosts.len() as u64;
                (hosts, g.switches.len() as u64, g.links.len() as u64 - hosts.min(g.links.len() as u64))
            }
        };
        Counts { hosts, switches, links: hosts + fabric_links }
    }

    /// Switches with hosts (only validation needs it: a graph's takes a pass over its links).
    fn edge_switches(&self) -> u64 {
        match self {
            Topology::Star(_) => 1,
            Topology::FatTree(t) => t.k as u64 * t.k as u64 / 2,
            Topology::LeafSpine(t) => t.leaves as u64,
            Topology::Chain(t) => t.switches as u64,
            Topology::Graph(g) => g.edge_switches() as u64,
        }
    }

    /// Sizes and rates, and limits that keep a typo from asking for a network that does not
    /// fit in memory: at most 2^20 hosts, 2^16 switches, 2^14 switches with hosts (routes keep
    /// the hop count between every pair of them: 512 MB there) and 2^22 links (a k = 160
    /// fat-tree has 3 072 000).
    pub(crate) fn validate(&self) -> Result<(), ScenarioError> {
        match self {
            Topology::Star(s) => s.validate()?,
            Topology::FatTree(t) => t.validate()?,
            Topology::LeafSpine(t) => t.validate()?,
            Topology::Chain(t) => t.validate()?,
            Topology::Graph(g) => g.validate()?,
        }
        let c = self.counts();
        for (n, what, max) in [
            (c.hosts, "hosts", 1 << 20),
            (c.switches, "switches", 1 << 16),
            (self.edge_switches(), "switches with hosts", 1 << 14),
            (c.links, "links", 1 << 22),
        ] {
            if n > max {
                return Err(invalid("topology", format!("{n} {what}"), format!("at most {max} {what}")));
            }
        }
        if c.hosts < 2 {
            return Err(invalid("topology", format!("{} host", c.hosts), "at least 2 hosts"));
        }
        Ok(())
    }
}

/// The size of a topology.
struct Counts {
    hosts: u64,
    switches: u64,
    links: u64,
}

/// A rate that, when given, must not be zero.
fn positive(field: &str, rate: Option<Rate>) -> Result<(), ScenarioError> {
    match rate {
        Some(Rate::ZERO) => Err(invalid(format!("topology.{field}"), "0bps", "must be positive")),
        _ => Ok(()),
    }
}

fn at_least(field: &str, v: u32, min: u32) -> Result<(), ScenarioError> {
    if v < min {
        return Err(invalid(format!("topology.{field}"), v, format!("at least {min}")));
    }
    Ok(())
}

impl StarConfig {
    fn validate(&self) -> Result<(), ScenarioError> {
        at_least("hosts", self.hosts, 2)?;
        positive("link_rate", Some(self.link_rate))?;
        for (i, l) in self.host_links.iter().enumerate() {
            if l.host >= self.hosts {
                return Err(invalid(format!("topology.host_links[{i}].host"), l.host, format!("hosts are 0..{}", self.hosts - 1)));
            }
            positive(&format!("host_links[{i}].rate"), l.rate)?;
            if let Some(n) = l.ports.filter(|n| !(1..=MAX_BONDED_PORTS).contains(n)) {
                return Err(invalid(format!("topology.host_links[{i}].ports"), n, format!("1 to {MAX_BONDED_PORTS} bonded links")));
            }
        }
        Ok(())
    }
}

impl FatTreeConfig {
    fn validate(&self) -> Result<(), ScenarioError> {
        if self.k < 2 || self.k % 2 == 1 || self.k > 160 {
            return Err(invalid("topology.k", self.k, "an even number from 2 to 160"));
        }
        positive("link_rate", Some(self.link_rate))?;
        positive("host_link.rate", self.host_link.rate)?;
        positive("agg_link.rate", self.agg_link.rate)?;
        positive("core_link.rate", self.core_link.rate)
    }
}

impl LeafSpineConfig {
    fn validate(&self) -> Result<(), ScenarioError> {
        at_least("leaves", self.leaves, 1)?;
        at_least("spines", self.spines, 1)?;
        self.hosts_per_leaf.validate("hosts_per_leaf", self.leaves, "leaves")?;
        positive("link_rate", Some(self.link_rate))?;
        positive("spine_link.rate", self.spine_link.rate)?;
        match (self.oversubscription, self.spine_link.rate) {
            (Some(o), Some(_)) => Err(invalid("topology.oversubscription", format!("{o:?}"), "give either oversubscription or spine_link.rate, not both")),
            (Some(o), None) if !(o.is_finite() && o > 0.0) || self.spine_rate() == Rate::ZERO => {
                Err(invalid("topology.oversubscription", format!("{o:?}"), "a positive ratio, e.g. 1 (non-blocking) or 3"))
            }
            _ => Ok(()),
        }
    }
}

impl ChainConfig {
    fn validate(&self) -> Result<(), ScenarioError> {
        at_least("switches", self.switches, 2)?;
        self.hosts_per_switch.validate("hosts_per_switch", self.switches, "switches")?;
        positive("link_rate", Some(self.link_rate))?;
        positive("chain_link.rate", self.chain_link.rate)
    }
}
