//! Topologies as plain graphs of hosts, switches and links.
//!
//! Nodes are numbered hosts first (`h0..h{H-1}` are nodes `0..H`), then switches. Every host
//! has one NIC, linked to one switch (its edge switch), and the hosts of one edge switch are
//! numbered consecutively.

use crate::scenario::{Scenario, Topology};
use rttlab_cc::{Rate, Time};

/// A full-duplex link: two directions with the same rate and propagation delay.
#[derive(Copy, Clone, Debug)]
pub struct Link {
    pub a: u32,
    pub b: u32,
    pub rate: Rate,
    pub delay: Time,
}

#[derive(Clone, Debug)]
pub struct Graph {
    pub hosts: u32,
    pub switches: u32,
    pub links: Vec<Link>,
}

impl Graph {
    pub fn from_scenario(s: &Scenario) -> Graph {
        match &s.topology {
            Topology::Star(star) => {
                let mut g = Graph { hosts: star.hosts, switches: 1, links: Vec::new() };
                for h in 0..star.hosts {
                    let o = star.host_links.iter().rev().find(|l| l.host == h);
                    let rate = o.and_then(|o| o.rate).unwrap_or(star.link_rate);
                    let delay = o.and_then(|o| o.delay).unwrap_or(star.link_delay);
                    g.link(h, g.switch(0), rate, delay);
                }
                g
            }
            Topology::FatTree(t) => {
                // Al-Fares et al. §3: pod p has edge switches p·k/2 + e and aggregation switches
                // k²/2 + p·k/2 + a; aggregation switch a of every pod links to core switches
                // a·k/2 .. a·k/2 + k/2 − 1; each edge switch has k/2 hosts.
                let half = t.k / 2;
                let (pods, edges, cores) = (t.k, t.k * half, half * half);
                let mut g = Graph { hosts: edges * half, switches: 2 * edges + cores, links: Vec::new() };
                let (hr, hd) = t.host_link.or(t.link_rate, t.link_delay);
                let (ar, ad) = t.agg_link.or(t.link_rate, t.link_delay);
                let (cr, cd) = t.core_link.or(t.link_rate, t.link_delay);
                for h in 0..g.hosts {
                    g.link(h, g.switch(h / half), hr, hd);
                }
                for p in 0..pods {
                    for e in 0..half {
                        for a in 0..half {
                            g.link(g.switch(p * half + e), g.switch(edges + p * half + a), ar, ad);
                        }
                    }
                    for a in 0..half {
                        for c in 0..half {
                            g.link(g.switch(edges + p * half + a), g.switch(2 * edges + a * half + c), cr, cd);
                        }
                    }
                }
                g
            }
            Topology::LeafSpine(t) => {
                let mut g = Graph { hosts: t.leaves * t.hosts_per_leaf, switches: t.leaves + t.spines, links: Vec::new() };
                for h in 0..g.hosts {
                    g.link(h, g.switch(h / t.hosts_per_leaf), t.link_rate, t.link_delay);
                }
                let (sr, sd) = (t.spine_rate(), t.spine_link.delay.unwrap_or(t.link_delay));
                for l in 0..t.leaves {
                    for s in 0..t.spines {
                        g.link(g.switch(l), g.switch(t.leaves + s), sr, sd);
                    }
                }
                g
            }
            Topology::Chain(t) => {
                let mut g = Graph { hosts: t.switches * t.hosts_per_switch, switches: t.switches, links: Vec::new() };
                for h in 0..g.hosts {
                    g.link(h, g.switch(h / t.hosts_per_switch), t.link_rate, t.link_delay);
                }
                let (cr, cd) = t.chain_link.or(t.link_rate, t.link_delay);
                for s in 1..t.switches {
                    g.link(g.switch(s - 1), g.switch(s), cr, cd);
                }
                g
            }
        }
    }

    /// Node number of switch `s`.
    fn switch(&self, s: u32) -> u32 {
        self.hosts + s
    }

    fn link(&mut self, a: u32, b: u32, rate: Rate, delay: Time) {
        self.links.push(Link { a, b, rate, delay });
    }

    pub fn nodes(&self) -> u32 {
        self.hosts + self.switches
    }

    pub fn node_name(&self, n: u32) -> String {
        if n < self.hosts {
            format!("h{n}")
        } else {
            format!("s{}", n - self.hosts)
        }
    }
}
