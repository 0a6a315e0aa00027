//! Topologies as plain graphs of hosts, switches and links.
//!
//! Nodes are numbered hosts first (`h0..h{H-1}` are nodes `0..H`, unless a graph topology names
//! them), then switches. Every host has one NIC, linked to one switch (its edge switch); a
//! star's host on bonded links reaches its switch through switches standing for the bond.

use crate::scenario::{HostCounts, Scenario, Topology};
use rttlab_cc::{Rate, Time};

/// A full-duplex link: two directions with the same propagation delay, each with its rate.
#[derive(Copy, Clone, Debug)]
pub struct Link {
    pub a: u32,
    pub b: u32,
    pub rate_ab: Rate,
    pub rate_ba: Rate,
    pub delay: Time,
}

#[derive(Clone, Debug)]
pub struct Graph {
    pub hosts: u32,
    pub switches: u32,
    pub links: Vec<Link>,
    /// Node names of a graph topology; empty: `h<n>` and `s<n>`.
    pub names: Vec<String>,
    /// The hosts on bonded links (`Graph::bond`).
    pub bonds: Vec<Bond>,
}

/// A host's bonded links: switch 0 reaches it through port nodes `nic + 1 ..= nic + ports`.
#[derive(Copy, Clone, Debug)]
pub struct Bond {
    pub host: u32,
    pub nic: u32,
    pub ports: u32,
}

impl Graph {
    pub fn from_scenario(s: &Scenario) -> Graph {
        match &s.topology {
            Topology::Star(star) => {
                let mut g = Graph { hosts: star.hosts, switches: 1, links: Vec::new(), names: Vec::new(), bonds: Vec::new() };
                let mut bonds = Vec::new();
                for h in 0..star.hosts {
                    let o = star.host_links.iter().rev().find(|l| l.host == h);
                    let rate = o.and_then(|o| o.rate).unwrap_or(star.link_rate);
                    let delay = o.and_then(|o| o.delay).unwrap_or(star.link_delay);
                    match o.and_then(|o| o.ports).unwrap_or(1) {
                        1 => g.link(h, g.switch(0), rate, delay),
                        ports => bonds.push((h, ports, rate, delay)),
                    }
                }
                for (h, ports, rate, delay) in bonds {
                    g.bond(h, ports, rate, delay);
                }
                g
            }
            Topology::FatTree(t) => {
                // Al-Fares et al. §3: pod p has edge switches p·k/2 + e and aggregation switches
                // k²/2 + p·k/2 + a; aggregation switch a of every pod links to core switches
                // a·k/2 .. a·k/2 + k/2 − 1; each edge switch has k/2 hosts.
                let half = t.k / 2;
                let (pods, edges, cores) = (t.k, t.k * half, half * half);
                let mut g = Graph { hosts: edges * half, switches: 2 * edges + cores, links: Vec::new(), names: Vec::new(), bonds: Vec::new() };
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
                let mut g = Graph {
                    hosts: t.hosts_per_leaf.total(t.leaves) as u32,
                    switches: t.leaves + t.spines,
                    links: Vec::new(),
                    names: Vec::new(),
                    bonds: Vec::new(),
                };
                g.hosts_on(t.leaves, &t.hosts_per_leaf, t.link_rate, t.link_delay);
                let (sr, sd) = (t.spine_rate(), t.spine_link.delay.unwrap_or(t.link_delay));
                for l in 0..t.leaves {
                    for s in 0..t.spines {
                        g.link(g.switch(l), g.switch(t.leaves + s), sr, sd);
                    }
                }
                g
            }
            Topology::Chain(t) => {
                let mut g =
                    Graph { hosts: t.hosts_per_switch.total(t.switches) as u32, switches: t.switches, links: Vec::new(), names: Vec::new(), bonds: Vec::new() };
                g.hosts_on(t.switches, &t.hosts_per_switch, t.link_rate, t.link_delay);
                let (cr, cd) = t.chain_link.or(t.link_rate, t.link_delay);
                for s in 1..t.switches {
                    g.link(g.switch(s - 1), g.switch(s), cr, cd);
                }
                g
            }
            Topology::Graph(t) => {
                let number = t.node_numbers();
                let mut g = Graph {
                    hosts: t.hosts.len() as u32,
                    switches: t.switches.len() as u32,
                    links: Vec::new(),
                    names: t.hosts.iter().chain(&t.switches).cloned().collect(),
                    bonds: Vec::new(),
                };
                for l in &t.links {
                    let (rate_ab, rate_ba, delay) = t.link(l);
                    g.links.push(Link { a: number[l.a.as_str()], b: number[l.b.as_str()], rate_ab, rate_ba, delay });
                }
                g
            }
        }
    }

    /// Links hosts, numbered switch by switch, to the first `switches` switches, `counts` each.
    fn hosts_on(&mut self, switches: u32, counts: &HostCounts, rate: Rate, delay: Time) {
        let mut h = 0;
        for s in 0..switches {
            for _ in 0..counts.of(s) {
                self.link(h, self.switch(s), rate, delay);
                h += 1;
            }
        }
    }

    /// Links host `h` to switch 0 through a bond of `ports` links of `rate` and `delay`: each
    /// link ends in a switch of its own (`h<h>_p<i>`, the NIC's port), and those join in a switch
    /// (`h<h>_nic`) linked to the host; the links behind the ports run at the bond's total rate.
    /// Switch 0's ECMP over the ports then hashes each connection onto one, as a LAG does; the
    /// price is a store-and-forward at the total rate in each direction. The delay is split over
    /// the three links in a row, so that none has none (a parallel run's lookahead is the
    /// shortest link delay) and the bond adds no propagation.
    fn bond(&mut self, h: u32, ports: u32, rate: Rate, delay: Time) {
        if self.names.is_empty() {
            self.names = (0..self.nodes()).map(|n| self.node_name(n)).collect();
        }
        let total = Rate(rate.bps() * ports as u64);
        let third = Time(delay.ps() / 3);
        let nic = self.switch(self.switches);
        self.switches += 1 + ports;
        self.names.push(format!("h{h}_nic"));
        for i in 0..ports {
            let port = nic + 1 + i;
            self.names.push(format!("h{h}_p{i}"));
            self.link(self.switch(0), port, rate, Time(delay.ps() - 2 * third.ps()));
            self.link(port, nic, total, third);
        }
        self.link(h, nic, total, third);
        self.bonds.push(Bond { host: h, nic, ports });
    }

    /// Node number of switch `s`.
    fn switch(&self, s: u32) -> u32 {
        self.hosts + s
    }

    fn link(&mut self, a: u32, b: u32, rate: Rate, delay: Time) {
        self.links.push(Link { a, b, rate_ab: rate, rate_ba: rate, delay });
    }

    pub fn nodes(&self) -> u32 {
        self.hosts + self.switches
    }

    pub fn node_name(&self, n: u32) -> String {
        if let Some(name) = self.names.get(n as usize) {
            name.clone()
        } else if n < self.hosts {
            format!("h{n}")
        } else {
            format!("s{}", n - self.hosts)
        }
    }
}
