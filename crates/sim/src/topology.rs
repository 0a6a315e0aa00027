//! Topologies as plain graphs of hosts, switches and links, and the routes through them.
//!
//! Nodes are numbered hosts first (`h0..h{H-1}` are nodes `0..H`), then switches.

use crate::scenario::{Scenario, Topology};
use rttlab_cc::{Rate, Time};
use std::collections::VecDeque;

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
                let sw = star.hosts;
                let links = (0..star.hosts)
                    .map(|h| {
                        let o = star.host_links.iter().rev().find(|l| l.host == h);
                        Link {
                            a: h,
                            b: sw,
                            rate: o.and_then(|o| o.rate).unwrap_or(star.link_rate),
                            delay: o.and_then(|o| o.delay).unwrap_or(star.link_delay),
                        }
                    })
                    .collect();
                Graph { hosts: star.hosts, switches: 1, links }
            }
        }
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

    /// Hop distance from every node to `dst`, by breadth-first search (`u32::MAX`: unreachable).
    /// Hosts do not forward, so paths only cross switches.
    pub fn distances_to(&self, dst: u32, adj: &[Vec<u32>]) -> Vec<u32> {
        let mut dist = vec![u32::MAX; self.nodes() as usize];
        dist[dst as usize] = 0;
        let mut q = VecDeque::from([dst]);
        while let Some(n) = q.pop_front() {
            if n != dst && n < self.hosts {
                continue;
            }
            for &m in &adj[n as usize] {
                if dist[m as usize] == u32::MAX {
                    dist[m as usize] = dist[n as usize] + 1;
                    q.push_back(m);
                }
            }
        }
        dist
    }
}
