//! `[topology] kind = "graph"`: named hosts and switches and an explicit list of links, written
//! in the scenario or read from a topology file of the HPCC simulator or of htsim (`file`).
//!
//! Names may carry one inclusive numeric range in brackets, `"s1_[0-9]"` for `s1_0 .. s1_9`;
//! a link whose ends both expand to n names stands for n links, pairwise, and one whose end is a
//! single name links it to each name of the other end. Names are expanded when the scenario is
//! read: the scenario as run lists every node and link.

use super::de::Table;
use super::{invalid, ScenarioError};
use rttlab_cc::{Rate, Time};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphConfig {
    /// A topology file of the HPCC simulator (`mix/topology.txt` format), or of htsim (a
    /// fat-tree's tiers, `*.topo`: `scenario::htsim_topology`), read instead of `hosts`,
    /// `switches` and `links`; a relative path is taken from the scenario file's
    /// directory (from the working directory when the scenario is text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Host names; hosts are numbered in this order (`[[flows]]` may name them either way).
    #[serde(default)]
    pub hosts: Vec<String>,
    #[serde(default)]
    pub switches: Vec<String>,
    /// Rate and delay of a link that gives none.
    pub link_rate: Option<Rate>,
    pub link_delay: Option<Time>,
    #[serde(default)]
    pub links: Vec<GraphLink>,
}

/// A full-duplex link between `a` and `b`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphLink {
    pub a: String,
    pub b: String,
    /// Both directions' rate, unless `rate_ab` (a → b) or `rate_ba` (b → a) says otherwise.
    pub rate: Option<Rate>,
    pub delay: Option<Time>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_ab: Option<Rate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_ba: Option<Rate>,
}

/// The most names one bracketed range may stand for (the most hosts a topology may have).
const MAX_EXPANSION: u64 = 1 << 20;

/// `"s1_[0-9]"` as `s1_0 .. s1_9`; a name without brackets as itself.
pub(crate) fn expand(field: &str, name: &str) -> Result<Vec<String>, ScenarioError> {
    let bad = |why: &str| invalid(field, format!("{name:?}"), why);
    let Some((prefix, rest)) = name.split_once('[') else { return Ok(vec![name.to_string()]) };
    let (range, suffix) = rest.split_once(']').ok_or_else(|| bad("a name with one range in brackets, e.g. \"s1_[0-9]\""))?;
    let (lo, hi) = range.split_once('-').ok_or_else(|| bad("a range in brackets is FIRST-LAST, e.g. [0-9]"))?;
    let (lo, hi): (u64, u64) = match (lo.trim().parse(), hi.trim().parse()) {
        (Ok(lo), Ok(hi)) if lo <= hi => (lo, hi),
        _ => return Err(bad("a range in brackets is FIRST-LAST with FIRST ≤ LAST, e.g. [0-9]")),
    };
    if hi - lo >= MAX_EXPANSION {
        return Err(bad(&format!("a range of at most {MAX_EXPANSION} names")));
    }
    Ok((lo..=hi).map(|i| format!("{prefix}{i}{suffix}")).collect())
}

impl GraphConfig {
    /// Reads `[topology]` of kind graph: the file if one is named, then every range expanded.
    pub(crate) fn read(t: Table) -> Result<GraphConfig, ScenarioError> {
        let mut g: GraphConfig = t.rest()?;
        if let Some(path) = g.file.clone() {
            let text = std::fs::read_to_string(&path).map_err(|e| invalid("topology.file", &path, format!("cannot be read: {e}")))?;
            // htsim's fat-tree files (`.topo`), else the HPCC simulator's format.
            let read = if path.ends_with(".topo") { super::htsim_topology::htsim_topology } else { hpcc_topology };
            let f = read(&text).map_err(|m| invalid("topology.file", &path, m))?;
            // The scenario as run records the file and what it gave: it reads back as it is.
            let listed = !(g.hosts.is_empty() && g.switches.is_empty() && g.links.is_empty());
            if listed && (g.hosts != f.hosts || g.switches != f.switches || g.links != f.links) {
                return Err(invalid("topology.file", &path, "a topology file replaces hosts, switches and links: give one or the other"));
            }
            (g.hosts, g.switches, g.links) = (f.hosts, f.switches, f.links);
        }
        g.hosts = expand_all("topology.hosts", &g.hosts)?;
        g.switches = expand_all("topology.switches", &g.switches)?;
        let mut links = Vec::with_capacity(g.links.len());
        for (i, l) in g.links.iter().enumerate() {
            let (a, b) = (expand(&format!("topology.links[{i}].a"), &l.a)?, expand(&format!("topology.links[{i}].b"), &l.b)?);
            let n = match (a.len(), b.len()) {
                (x, y) if x == y || y == 1 => x,
                (1, y) => y,
                (x, y) => {
                    return Err(invalid(
                        format!("topology.links[{i}]"),
                        format!("{} ({x} names) to {} ({y} names)", l.a, l.b),
                        "ranges of the same length (pairwise), or one end a single name",
                    ))
                }
            };
            links.extend((0..n).map(|k| GraphLink { a: a[k.min(a.len() - 1)].clone(), b: b[k.min(b.len() - 1)].clone(), ..l.clone() }));
        }
        g.links = links;
        Ok(g)
    }

    /// Number of every node by name: hosts first, then switches.
    pub fn node_numbers(&self) -> HashMap<&str, u32> {
        self.hosts.iter().chain(&self.switches).enumerate().map(|(i, n)| (n.as_str(), i as u32)).collect()
    }

    /// (a → b rate, b → a rate, delay) of link `l`, with the defaults filled in.
    pub fn link(&self, l: &GraphLink) -> (Rate, Rate, Time) {
        let rate = l.rate.or(self.link_rate).expect("validated: every link has a rate");
        (l.rate_ab.unwrap_or(rate), l.rate_ba.unwrap_or(rate), l.delay.or(self.link_delay).unwrap_or_default())
    }

    /// Switches linked to at least one host.
    pub fn edge_switches(&self) -> usize {
        let hosts: HashSet<&str> = self.hosts.iter().map(String::as_str).collect();
        let edges: HashSet<&str> = self
            .links
            .iter()
            .filter_map(|l| {
                if hosts.contains(l.a.as_str()) {
                    Some(l.b.as_str())
                } else if hosts.contains(l.b.as_str()) {
                    Some(l.a.as_str())
                } else {
                    None
                }
            })
            .collect();
        edges.len()
    }

    /// Names, links and connectivity: every name once and well formed, every link between two
    /// known, different nodes, at most once, with a positive rate; every host with exactly one
    /// link, to a switch (a host has one NIC: multi-homed hosts are not supported); every host
    /// reachable from every other.
    pub(crate) fn validate(&self) -> Result<(), ScenarioError> {
        let mut seen = HashSet::new();
        for (field, names) in [("hosts", &self.hosts), ("switches", &self.switches)] {
            for (i, n) in names.iter().enumerate() {
                let at = format!("topology.{field}[{i}]");
                if n.is_empty() || !n.chars().all(|c| c.is_ascii_alphanumeric() || "_.:".contains(c)) {
                    return Err(invalid(at, format!("{n:?}"), "a name of letters, digits, '_', '.' and ':' (ports are named NODE-PEER, so no '-')"));
                }
                if !seen.insert(n.as_str()) {
                    return Err(invalid(at, n, "a name used once, by one host or switch"));
                }
            }
        }
        if self.switches.is_empty() {
            return Err(invalid("topology.switches", "[]", "at least one switch"));
        }
        if self.link_rate == Some(Rate::ZERO) {
            return Err(invalid("topology.link_rate", "0bps", "must be positive"));
        }
        let number = self.node_numbers();
        let hosts = self.hosts.len() as u32;
        let mut pairs = HashSet::new();
        let mut host_links = vec![0u32; self.hosts.len()];
        let mut adjacent: Vec<Vec<u32>> = vec![Vec::new(); number.len()];
        for (i, l) in self.links.iter().enumerate() {
            let at = |k: &str| format!("topology.links[{i}].{k}");
            let end =
                |k: &str, name: &str| number.get(name).copied().ok_or_else(|| invalid(at(k), name, "a name listed in topology.hosts or topology.switches"));
            let (a, b) = (end("a", &l.a)?, end("b", &l.b)?);
            if a == b {
                return Err(invalid(format!("topology.links[{i}]"), format!("{} to {}", l.a, l.b), "a link between two different nodes (no self-loops)"));
            }
            if a < hosts && b < hosts {
                return Err(invalid(format!("topology.links[{i}]"), format!("{} to {}", l.a, l.b), "hosts link to switches, not to each other"));
            }
            if !pairs.insert((a.min(b), a.max(b))) {
                return Err(invalid(format!("topology.links[{i}]"), format!("{} to {}", l.a, l.b), "each pair of nodes linked once (no duplicate links)"));
            }
            match (l.rate.or(self.link_rate), l.rate_ab, l.rate_ba) {
                (None, None, _) | (None, _, None) => return Err(invalid(at("rate"), "absent", "a rate for the link, or topology.link_rate for every link")),
                _ => {}
            }
            for (k, r) in [("rate", l.rate), ("rate_ab", l.rate_ab), ("rate_ba", l.rate_ba)] {
                if r == Some(Rate::ZERO) {
                    return Err(invalid(at(k), "0bps", "must be positive"));
                }
            }
            for n in [a, b].into_iter().filter(|&n| n < hosts) {
                host_links[n as usize] += 1;
            }
            adjacent[a as usize].push(b);
            adjacent[b as usize].push(a);
        }
        for (h, &n) in host_links.iter().enumerate() {
            if n != 1 {
                let allowed = if n == 0 { "one link, to its switch" } else { "one link: a host has one NIC (multi-homed hosts are not supported)" };
                return Err(invalid(format!("topology.hosts[{h}]"), format!("{} ({n} links)", self.hosts[h]), allowed));
            }
        }
        // Breadth-first from host 0 through switches only: hosts do not forward.
        let mut reached = vec![false; number.len()];
        let mut queue = vec![0u32];
        reached[0] = true;
        while let Some(n) = queue.pop() {
            for &m in adjacent[n as usize].iter() {
                if !reached[m as usize] {
                    reached[m as usize] = true;
                    if m >= hosts {
                        queue.push(m);
                    }
                }
            }
        }
        if let Some(h) = (0..self.hosts.len()).find(|&h| !reached[h]) {
            return Err(invalid(
                format!("topology.hosts[{h}]"),
                &self.hosts[h],
                format!("connected to the other hosts: there is no path from {}", self.hosts[0]),
            ));
        }
        Ok(())
    }
}

fn expand_all(field: &str, names: &[String]) -> Result<Vec<String>, ScenarioError> {
    let mut out = Vec::new();
    for (i, n) in names.iter().enumerate() {
        out.extend(expand(&format!("{field}[{i}]"), n)?);
        if out.len() as u64 > MAX_EXPANSION {
            return Err(invalid(field, format!("{} names", out.len()), format!("at most {MAX_EXPANSION}")));
        }
    }
    Ok(out)
}

/// A topology in the HPCC simulator's text format: a line `nodes switches links`, a line of
/// the switches' ids, then one line `src dst rate delay error_rate` per link (ids count from 0;
/// the rest are hosts). Hosts are numbered in the order of their ids and named `h<id>`, switches
/// `s<id>`, so the file's ids stay visible. Links must be lossless (error rate 0).
pub(crate) fn hpcc_topology(text: &str) -> Result<GraphConfig, String> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.split_whitespace().collect::<Vec<_>>())).filter(|(_, w)| !w.is_empty());
    let (_, head) = lines.next().ok_or("is empty: expected a first line `nodes switches links`")?;
    let numbers: Vec<u64> = head
        .iter()
        .take(3)
        .map(|w| w.parse::<u64>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("line 1 is {:?}: expected `nodes switches links`", head.join(" ")))?;
    let &[nodes, switches, links] = numbers.as_slice() else { return Err(format!("line 1 is {:?}: expected `nodes switches links`", head.join(" "))) };
    if nodes > MAX_EXPANSION || switches > nodes || links > 1 << 22 {
        return Err(format!(
            "line 1 says {nodes} nodes, {switches} switches, {links} links: at most {MAX_EXPANSION} nodes, no more switches than nodes, at most 2^22 links"
        ));
    }
    let mut is_switch = vec![false; nodes as usize];
    let mut ids = Vec::new();
    while (ids.len() as u64) < switches {
        let (n, words) = lines.next().ok_or(format!("ends before the {switches} switch ids"))?;
        for w in words {
            let id: u64 =
                w.parse().ok().filter(|&id| id < nodes).ok_or(format!("line {n}: switch id {w:?} is not a node id (0..{})", nodes.saturating_sub(1)))?;
            is_switch[id as usize] = true;
            ids.push(id);
        }
    }
    if ids.len() as u64 != switches {
        return Err(format!("lists {} switch ids; line 1 says {switches}", ids.len()));
    }
    let name = |id: usize| if is_switch[id] { format!("s{id}") } else { format!("h{id}") };
    let mut g = GraphConfig { file: None, hosts: Vec::new(), switches: Vec::new(), link_rate: None, link_delay: None, links: Vec::new() };
    for (id, &switch) in is_switch.iter().enumerate() {
        if switch { &mut g.switches } else { &mut g.hosts }.push(name(id));
    }
    for (n, w) in lines {
        let [src, dst, rate, delay, error] = w.as_slice() else {
            return Err(format!("line {n} is {:?}: expected `src dst rate delay error_rate`", w.join(" ")));
        };
        let node = |s: &str| {
            s.parse::<usize>().ok().filter(|&id| id < nodes as usize).ok_or(format!("line {n}: {s:?} is not a node id (0..{})", nodes.saturating_sub(1)))
        };
        let (a, b) = (node(src)?, node(dst)?);
        let rate: Rate = rate.parse().map_err(|e| format!("line {n}: rate {rate:?}: {e}"))?;
        let delay: Time = delay.parse().map_err(|e| format!("line {n}: delay {delay:?}: {e}"))?;
        if error.parse::<f64>().ok() != Some(0.0) {
            return Err(format!("line {n}: error rate {error}: rttlab models lossless links (losses come from buffers); 0 only"));
        }
        g.links.push(GraphLink { a: name(a), b: name(b), rate: Some(rate), delay: Some(delay), rate_ab: None, rate_ba: None });
    }
    if g.links.len() as u64 != links {
        return Err(format!("has {} link lines; line 1 says {links}", g.links.len()));
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_expand() {
        assert_eq!(expand("f", "s1_[0-2]").unwrap(), ["s1_0", "s1_1", "s1_2"]);
        assert_eq!(expand("f", "r[7-7]x").unwrap(), ["r7x"]);
        assert_eq!(expand("f", "t1").unwrap(), ["t1"]);
        for bad in ["a[3-1]", "a[1]", "a[1-2", "a[x-2]"] {
            assert!(expand("f", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn hpcc_format() {
        let g = hpcc_topology("4 2 3\n2 3\n0 2 100Gbps 0.001ms 0\n1 3 100Gbps 0.001ms 0\n2 3 400Gbps 1us 0\n").unwrap();
        assert_eq!(g.hosts, ["h0", "h1"]);
        assert_eq!(g.switches, ["s2", "s3"]);
        assert_eq!(g.link(&g.links[0]), (Rate::from_gbps(100), Rate::from_gbps(100), Time::from_us(1)));
        let e = hpcc_topology("4 2 1\n2 3\n0 2 100Gbps 0.001ms 0.01\n").unwrap_err();
        assert!(e.contains("line 3: error rate 0.01"), "{e}");
        let e = hpcc_topology("4 2 2\n2 3\n0 2 100Gbps 0.001ms 0\n").unwrap_err();
        assert!(e.contains("has 1 link lines; line 1 says 2"), "{e}");
        let e = hpcc_topology("4 2 1\n2 9\n").unwrap_err();
        assert!(e.contains("switch id \"9\""), "{e}");
    }
}
