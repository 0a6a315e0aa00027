//! Routes: equal-cost multipath (ECMP) over every shortest path, computed once when the network
//! is built, with memory linear in the hosts for Clos fabrics.
//!
//! Switches route on the destination's edge switch, as a Clos fabric routes on the rack prefix:
//! at the destination's edge switch a packet goes down the host's port; elsewhere it takes one
//! port of the next-hop group, the ports whose neighbour is one hop closer to that edge switch.
//! A switch's table is stored as runs of consecutive destination edge switches sharing a group
//! (an edge switch of a fat-tree has three runs: up, itself, up; an aggregation switch k/2 + 2;
//! a core switch k), so a k-ary fat-tree needs O(k³) = O(hosts) entries. Beside the runs, a
//! fabric small enough keeps them unrolled (`DIRECT_MAX`), one group per switch and
//! destination edge switch, looked up without the runs' search.
//!
//! ECMP picks a port of the group by a hash of the flow's 5-tuple and its path label (fixed
//! until the label changes, so its packets stay in order), mixed with a per-switch salt so
//! that successive tiers choose independently (without it, every tier would take the same hash
//! bits and use only some paths: "hash polarization"). The other modes of `[routing]` let the
//! switch choose from its own state (`Chooser`): flowlets, spraying, least occupancy.

use crate::core::engine::{splitmix64, Rng};
use crate::core::ids::{PortId, SwitchId};
use crate::fabric::port::Port;
use crate::scenario::{RoutingConfig, RoutingMode, Spray, Weights};
use rand::Rng as _;
use rttlab_cc::{Rate, Time};
use std::collections::{HashMap, VecDeque};

const NONE: u32 = u32::MAX;
/// `NONE` in the unrolled runs, whose groups are kept in 16 bits: half the table, which at a
/// thousand hosts is a cache miss per hop more often than not.
const DIRECT_NONE: u16 = u16::MAX;

#[derive(Clone)]
pub struct Routing {
    /// Per host: the switch (index among switches) its NIC is linked to, and that switch's port
    /// towards it.
    pub edge_of: Vec<u32>,
    host_port: Vec<PortId>,
    /// Per switch: its rank among edge switches (`NONE`: not an edge switch).
    edge_rank: Vec<u32>,
    /// Switch `s`'s runs are `runs[run_start[s]..run_start[s + 1]]`: (first destination edge
    /// rank, next-hop group), sorted.
    run_start: Vec<u32>,
    runs: Vec<(u32, u32)>,
    /// The ports of group `g` are `group_ports[group_start[g]..group_start[g + 1]]`.
    group_start: Vec<u32>,
    group_ports: Vec<PortId>,
    /// Switch-to-switch hops between edge switches, by rank (`edges × edges`).
    edge_hops: Vec<u16>,
    edges: u32,
    /// The runs unrolled, `direct[s * edges + rank]`: the group of switch `s` towards the edge
    /// switch of that rank, while there are at most `DIRECT_MAX` and the groups fit in 16
    /// bits (`None` beyond).
    direct: Option<Vec<u16>>,
}

/// The most entries of the unrolled table (4 M, 8 MB: a k = 48 fat-tree, 27 648 hosts, has
/// 2 880 switches and 1 152 edge switches, 3.3 M). A lookup there costs one load where the
/// runs' search costs a few dependent ones.
const DIRECT_MAX: usize = 1 << 22;

/// The ECMP hash of a 5-tuple (source and destination host, ports; the protocol is the
/// transport's and the same for every flow of a run), keyed by the scenario seed so that paths
/// change with the seed and repeat with it.
pub fn five_tuple_hash(seed: u64, src: u32, dst: u32, sport: u16, dport: u16) -> u32 {
    let tuple = (src as u64) << 32 | dst as u64;
    let ports = (sport as u64) << 16 | dport as u64;
    (splitmix64(splitmix64(seed ^ tuple) ^ ports) >> 32) as u32
}

/// The hash of a connection's packets on path label `label`: the 5-tuple's hash alone for
/// label 0 (every connection's first path), else mixed with the label as a switch mixes an
/// IPv6 flow label into its ECMP hash.
#[inline]
pub fn labelled_hash(hash: u32, label: u32) -> u32 {
    if label == 0 {
        return hash;
    }
    fmix32(hash ^ label.wrapping_mul(0x9e37_79b9))
}

/// Entries of a switch's flowlet table, indexed by a hash of the packet's flow hash: flows
/// that share an entry share its flowlet, as in a switch's fixed table (LetFlow §4: 64 K
/// entries for a whole switch ASIC).
pub const FLOWLET_SLOTS: usize = 4096;

/// A switch's own state for choosing among equal-cost ports, in the modes where the switch
/// chooses (`RoutingConfig::switch_chooses`).
#[derive(Clone)]
pub struct Chooser {
    rng: Rng,
    /// `spray = "round_robin"`: per group, the next port's index.
    turns: Vec<(u32, u32)>,
    /// Per flowlet table entry: when its last packet passed, and the port it took.
    flowlets: Vec<(Time, PortId)>,
}

impl Chooser {
    pub fn new(rng: Rng, cfg: &RoutingConfig) -> Chooser {
        let flowlets = if cfg.flowlets() { vec![(Time::ZERO, PortId(NONE)); FLOWLET_SLOTS] } else { Vec::new() };
        Chooser { rng, turns: Vec::new(), flowlets }
    }
}

/// 32-bit finalizer of MurmurHash3: every input bit affects every output bit.
#[inline]
fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Flow hash `hash` salted by switch `s`, so that successive tiers choose independently.
#[inline]
fn salted(hash: u32, s: u32) -> u32 {
    fmix32(hash ^ fmix32(s.wrapping_add(0x9e37_79b9)))
}

/// Index in `0..n` of the port switch `s` takes for a flow hash `hash`.
#[inline]
fn ecmp_index(hash: u32, s: u32, n: u32) -> u32 {
    ((salted(hash, s) as u64 * n as u64) >> 32) as u32
}

impl Routing {
    /// `node_ports[n]`: the ports of node `n` (hosts first, then switches, as in `Graph`).
    pub fn build(hosts: u32, ports: &[Port], node_ports: &[Vec<PortId>]) -> Routing {
        let switches = node_ports.len() as u32 - hosts;
        let peer = |p: PortId| ports[ports[p.idx()].peer.idx()].node;
        let mut edge_of = vec![NONE; hosts as usize];
        let mut host_port = vec![PortId(NONE); hosts as usize];
        for h in 0..hosts {
            let &[p] = node_ports[h as usize].as_slice() else { unreachable!("topologies give each host one NIC port") };
            let sw = peer(p);
            edge_of[h as usize] = sw - hosts;
            host_port[h as usize] = ports[p.idx()].peer;
        }
        let mut is_edge = vec![false; switches as usize];
        for &e in &edge_of {
            is_edge[e as usize] = true;
        }
        let mut edge_rank = vec![NONE; switches as usize];
        let mut edges = 0;
        for s in (0..switches as usize).filter(|&s| is_edge[s]) {
            edge_rank[s] = edges;
            edges += 1;
        }
        // Switch-to-switch links only: hosts do not forward.
        let fabric: Vec<Vec<(PortId, u32)>> = (0..switches)
            .map(|s| node_ports[(hosts + s) as usize].iter().map(|&p| (p, peer(p))).filter(|&(_, n)| n >= hosts).map(|(p, n)| (p, n - hosts)).collect())
            .collect();
        let mut groups: HashMap<Vec<PortId>, u32> = HashMap::new();
        let (mut group_start, mut group_ports) = (vec![0u32], Vec::new());
        let mut runs: Vec<Vec<(u32, u32)>> = vec![Vec::new(); switches as usize];
        let mut edge_hops = vec![u16::MAX; edges as usize * edges as usize];
        let mut dist = vec![u32::MAX; switches as usize];
        let mut queue = VecDeque::new();
        for e in (0..switches).filter(|&s| edge_rank[s as usize] != NONE) {
            let rank = edge_rank[e as usize];
            dist.fill(u32::MAX);
            dist[e as usize] = 0;
            queue.push_back(e);
            while let Some(s) = queue.pop_front() {
                for &(_, n) in &fabric[s as usize] {
                    if dist[n as usize] == u32::MAX {
                        dist[n as usize] = dist[s as usize] + 1;
                        queue.push_back(n);
                    }
                }
            }
            for s in 0..switches {
                let d = dist[s as usize];
                let group = if s == e || d == u32::MAX {
                    NONE
                } else {
                    let next: Vec<PortId> = fabric[s as usize].iter().filter(|&&(_, n)| dist[n as usize] + 1 == d).map(|&(p, _)| p).collect();
                    *groups.entry(next).or_insert_with_key(|next| {
                        group_ports.extend_from_slice(next);
                        group_start.push(group_ports.len() as u32);
                        group_start.len() as u32 - 2
                    })
                };
                let r = &mut runs[s as usize];
                if r.last().is_none_or(|&(_, g)| g != group) {
                    r.push((rank, group));
                }
                let sr = edge_rank[s as usize];
                if sr != NONE && d != u32::MAX {
                    edge_hops[sr as usize * edges as usize + rank as usize] = d.min(u16::MAX as u32 - 1) as u16;
                }
            }
        }
        let mut run_start = vec![0u32];
        let mut flat = Vec::new();
        for r in runs {
            flat.extend(r);
            run_start.push(flat.len() as u32);
        }
        let mut routing = Routing { edge_of, host_port, edge_rank, run_start, runs: flat, group_start, group_ports, edge_hops, edges, direct: None };
        let groups = routing.group_start.len() - 1;
        if switches as usize * edges as usize <= DIRECT_MAX && groups < DIRECT_NONE as usize {
            let group = |(s, rank)| match routing.searched_group(s, rank) {
                NONE => DIRECT_NONE,
                g => g as u16,
            };
            let direct = (0..switches).flat_map(|s| (0..edges).map(move |rank| (s, rank))).map(group).collect();
            routing.direct = Some(direct);
        }
        routing
    }

    /// Switch `s`'s next-hop group towards the edge switch of rank `rank`, from its runs (each
    /// switch's first run starts at rank 0). Always inlined: `next_port` runs per packet and
    /// hop, and the compiler left it out of line (`docs/speed.md`).
    #[inline(always)]
    fn searched_group(&self, s: u32, rank: u32) -> u32 {
        let runs = &self.runs[self.run_start[s as usize] as usize..self.run_start[s as usize + 1] as usize];
        runs[runs.partition_point(|r| r.0 <= rank) - 1].1
    }

    /// Switch `s`'s next hops towards host `dst`: its port to the host (`Err`), or its group's
    /// id and ports.
    #[inline]
    fn next_hops(&self, s: u32, dst: u32) -> Result<(u32, &[PortId]), PortId> {
        let e = self.edge_of[dst as usize];
        if e == s {
            return Err(self.host_port[dst as usize]);
        }
        let rank = self.edge_rank[e as usize];
        let g = match &self.direct {
            Some(direct) => match direct[s as usize * self.edges as usize + rank as usize] {
                DIRECT_NONE => NONE,
                g => g as u32,
            },
            None => self.searched_group(s, rank),
        };
        if g == NONE {
            // Only where faults cut the fabric (`crate::fabric::faults`): no port leads there.
            return Ok((NONE, &[]));
        }
        let (a, b) = (self.group_start[g as usize], self.group_start[g as usize + 1]);
        Ok((g, &self.group_ports[a as usize..b as usize]))
    }

    /// The ports switch `s` chooses among for a packet to host `dst` (one: its port to the host).
    #[inline]
    pub fn choices(&self, s: SwitchId, dst: u32) -> &[PortId] {
        match self.next_hops(s.0, dst) {
            Ok((_, ports)) => ports,
            Err(_) => std::slice::from_ref(&self.host_port[dst as usize]),
        }
    }

    /// The egress port switch `s` sends a packet for host `dst` of a flow with hash `hash` to.
    #[inline]
    pub fn next_port(&self, s: SwitchId, dst: u32, hash: u32) -> PortId {
        match self.next_hops(s.0, dst) {
            Err(p) => p,
            Ok((_, [p])) => *p,
            Ok((_, ports)) => ports[ecmp_index(hash, s.0, ports.len() as u32) as usize],
        }
    }

    /// The egress switch `s` sends a packet for host `dst` of a flow with hash `hash` to, on a
    /// fabric with faults (routes computed around its dead links, [`crate::fabric::faults`]): `None`
    /// where none leads there; a port of the group alike, or by the rate each runs at
    /// (`routing.weights`). With equal weights (or equal rates), the port `next_port` gives.
    pub fn next_port_weighed(&self, s: SwitchId, dst: u32, hash: u32, weights: Weights, rate: impl Fn(PortId) -> Rate) -> Option<PortId> {
        let ports = match self.next_hops(s.0, dst) {
            Err(p) => return Some(p),
            Ok((_, [])) => return None,
            Ok((_, [p])) => return Some(*p),
            Ok((_, ports)) => ports,
        };
        if weights == Weights::Equal {
            return Some(ports[ecmp_index(hash, s.0, ports.len() as u32) as usize]);
        }
        // Weighted-cost multipath: the hash's place in the group's summed rates; equal rates
        // give ECMP's index.
        let total: u64 = ports.iter().map(|&p| rate(p).bps()).sum();
        let x = ((salted(hash, s.0) as u128 * total as u128) >> 32) as u64;
        let mut sum = 0;
        for &p in ports {
            sum += rate(p).bps();
            if x < sum {
                return Some(p);
            }
        }
        ports.last().copied()
    }

    /// The egress switch `s` chooses at `now` for a packet to host `dst` with flow hash `hash`
    /// in a mode where the switch chooses (`RoutingConfig::switch_chooses`); `load(port)` is
    /// what the adaptive mode compares (bytes queued; `u64::MAX` for a port it must avoid).
    /// `None` where faults leave no route.
    pub fn choose(
        &self,
        s: SwitchId,
        (dst, hash): (u32, u32),
        now: Time,
        cfg: &RoutingConfig,
        st: &mut Chooser,
        load: impl Fn(PortId) -> u64,
    ) -> Option<PortId> {
        let (g, ports) = match self.next_hops(s.0, dst) {
            Err(p) => return Some(p),
            Ok((_, [])) => return None,
            Ok((_, [p])) => return Some(*p),
            Ok(hops) => hops,
        };
        let n = ports.len() as u32;
        let least_loaded = |rng: &mut Rng| {
            // Ties go to the first from a random port on: on an idle fabric the choice sprays.
            let start = rng.random_range(0..n);
            (0..n).map(|i| ports[((start + i) % n) as usize]).min_by_key(|&p| load(p)).expect("a group has ports")
        };
        Some(match cfg.mode {
            RoutingMode::Spray if cfg.spray == Spray::RoundRobin => {
                let at = st.turns.iter().position(|&(group, _)| group == g).unwrap_or_else(|| {
                    st.turns.push((g, 0));
                    st.turns.len() - 1
                });
                let turn = &mut st.turns[at].1;
                let p = ports[(*turn % n) as usize];
                *turn = turn.wrapping_add(1);
                p
            }
            RoutingMode::Spray => ports[st.rng.random_range(0..n) as usize],
            RoutingMode::Adaptive if !cfg.flowlets() => least_loaded(&mut st.rng),
            _ => {
                let slot = (fmix32(hash ^ s.0.wrapping_mul(0x85eb_ca6b)) as usize) % FLOWLET_SLOTS;
                let (last, port) = st.flowlets[slot];
                // The flowlet goes on while its gap is short and its port leads to `dst`.
                let p = if port.0 != NONE && now.saturating_sub(last) <= cfg.flowlet_gap && ports.contains(&port) {
                    port
                } else if cfg.mode == RoutingMode::Adaptive {
                    least_loaded(&mut st.rng)
                } else {
                    ports[st.rng.random_range(0..n) as usize]
                };
                st.flowlets[slot] = (now, p);
                p
            }
        })
    }

    /// Whether some switch has more than one next hop towards some host: whether a routing
    /// mode has any choice to make.
    pub fn has_choices(&self) -> bool {
        self.group_start.windows(2).any(|w| w[1] - w[0] > 1)
    }

    /// Links on a shortest path from host `a` to host `b` (`None`: no path).
    pub fn hops(&self, a: u32, b: u32) -> Option<u32> {
        let (ea, eb) = (self.edge_of[a as usize], self.edge_of[b as usize]);
        if ea == eb {
            return Some(2);
        }
        let (ra, rb) = (self.edge_rank[ea as usize], self.edge_rank[eb as usize]);
        let h = self.edge_hops[ra as usize * self.edges as usize + rb as usize];
        (h != u16::MAX).then_some(h as u32 + 2)
    }

    /// Entries in the route tables (runs and group ports): the routing's memory, beside the
    /// unrolled runs (`direct_entries`).
    pub fn table_entries(&self) -> usize {
        self.runs.len() + self.group_ports.len() + 2 * self.edge_of.len()
    }

    /// Entries of the unrolled runs (0 on a fabric too large for them, `DIRECT_MAX`).
    pub fn direct_entries(&self) -> usize {
        self.direct.as_ref().map_or(0, Vec::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The unrolled runs route every packet as the runs' search does (a fabric too large for
    /// them uses the search alone): every switch, destination and some flow hashes, on a
    /// fat-tree and on a leaf-spine.
    #[test]
    fn the_unrolled_runs_route_as_the_runs_do() {
        let fabrics = [
            "[topology]\nkind = \"fat_tree\"\nk = 6\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"",
            "[topology]\nkind = \"leaf_spine\"\nleaves = 5\nspines = 3\nhosts_per_leaf = 4\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"",
        ];
        for topology in fabrics {
            let text = format!("duration = \"1ms\"\n{topology}\n[[flows]]\nsrc = 1\ndst = 0\n");
            let net = crate::Network::new(&crate::Scenario::from_toml(&text).expect("scenario")).expect("network");
            let direct = net.routing();
            assert!(direct.direct_entries() > 0);
            let searched = Routing { direct: None, ..direct.clone() };
            let (hosts, switches) = (direct.edge_of.len() as u32, direct.edge_rank.len() as u32);
            let unrolled = direct.direct.as_ref().expect("a small fabric's runs unrolled");
            for s in 0..switches {
                for dst in 0..hosts {
                    let e = direct.edge_of[dst as usize];
                    let reaches = e == s || unrolled[(s * direct.edges + direct.edge_rank[e as usize]) as usize] != DIRECT_NONE;
                    for hash in [0, 1, 0x9e37_79b9, u32::MAX].into_iter().filter(|_| reaches) {
                        assert_eq!(direct.next_port(SwitchId(s), dst, hash), searched.next_port(SwitchId(s), dst, hash), "switch {s}, host {dst}, hash {hash}");
                    }
                }
            }
        }
    }

    /// Weighted-cost multipath by rate: with one uplink at a quarter of the other's rate it
    /// takes a fifth of the hashes (1 / (1 + 4), within 0.01 over 20 000 hashes); with equal
    /// rates every hash takes the port ECMP gives it.
    #[test]
    fn weights_by_capacity_share_hashes_by_rate() {
        let text = "duration = \"1ms\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[[flows]]\nsrc = 1\ndst = 0\n";
        let net = crate::Network::new(&crate::Scenario::from_toml(text).expect("scenario")).expect("network");
        let r = net.routing();
        let (s, dst) = (SwitchId(0), 15);
        let ups = r.choices(s, dst).to_vec();
        let rate = |p: PortId| if p == ups[0] { Rate(2_500_000_000) } else { Rate(10_000_000_000) };
        let slow = (0..20_000u32).filter(|&h| r.next_port_weighed(s, dst, h, Weights::Capacity, rate) == Some(ups[0])).count();
        assert!((slow as f64 / 20_000.0 - 0.2).abs() < 0.01, "{slow}");
        let alike = |_: PortId| Rate(10_000_000_000);
        assert!((0..5_000u32).all(|h| r.next_port_weighed(s, dst, h, Weights::Capacity, alike) == Some(r.next_port(s, dst, h))));
    }

    /// The switch's own choices on a fat-tree's edge switch, whose two uplinks reach every
    /// other edge switch: round robin takes them in turn per group; adaptive routing takes the
    /// port with the least load, whichever the tie-break draw, and never one loaded `u64::MAX`
    /// (paused, with `count_paused`).
    #[test]
    fn a_switch_chooses_in_turn_or_by_load() {
        let text = "duration = \"1ms\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[[flows]]\nsrc = 1\ndst = 0\n";
        let net = crate::Network::new(&crate::Scenario::from_toml(text).expect("scenario")).expect("network");
        let r = net.routing();
        let (s, dst) = (SwitchId(0), 15);
        let ups = r.choices(s, dst).to_vec();
        assert_eq!(ups.len(), 2);
        let rng = || crate::core::engine::rng_stream(1, crate::core::engine::Stream::Routing(0));
        let rr = RoutingConfig { mode: RoutingMode::Spray, spray: Spray::RoundRobin, ..RoutingConfig::default() };
        let mut st = Chooser::new(rng(), &rr);
        let picks: Vec<PortId> = (0..4).filter_map(|_| r.choose(s, (dst, 7), Time::ZERO, &rr, &mut st, |_| 0)).collect();
        assert_eq!(picks, vec![ups[0], ups[1], ups[0], ups[1]]);
        let adaptive = RoutingConfig { mode: RoutingMode::Adaptive, ..RoutingConfig::default() };
        let mut st = Chooser::new(rng(), &adaptive);
        for hash in 0..20 {
            assert_eq!(r.choose(s, (dst, hash), Time::ZERO, &adaptive, &mut st, |p| if p == ups[0] { 3000 } else { 1500 }), Some(ups[1]));
            assert_eq!(r.choose(s, (dst, hash), Time::ZERO, &adaptive, &mut st, |p| if p == ups[1] { u64::MAX } else { 9000 }), Some(ups[0]));
        }
    }
}
