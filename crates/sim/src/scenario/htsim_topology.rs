//! htsim's fat-tree topology files (`[topology] kind = "graph"`, `file = "....topo"`; `rttlab run
//! --topo FILE`), read as htsim reads and builds them (uet-htsim
//! `datacenter/fat_tree_topology.cpp`: `FatTreeTopologyCfg::read_cfg`, `set_custom_params`, the
//! `FatTreeTopology` constructor): a header (`Nodes`, `Tiers` 2 or 3, `Podsize`), then per tier
//! its switches' down link speed and latency, down and up radix and oversubscription.
//!
//! Tier 0 are the ToRs, `radix_down` hosts each; tier 1 the aggregation switches, as many per pod
//! as the ToR uplinks need (`nodes · speed₀ / (speed₁ · oversubscribed₀)` uplinks), every ToR linked
//! to each of its pod's (to all of them with two tiers); tier 2 the cores, aggregation switch `a`
//! linked to cores `a mod A + A·l` (`A` per pod). A tier's speed and latency are its down links'.
//! Hosts are `h0..`, switches `s0..`: ToRs, then aggregation switches, then cores, as rttlab's
//! fat-tree numbers them.

use super::graph::{GraphConfig, GraphLink};
use rttlab_cc::{Rate, Time};

/// One tier's settings as the file gives them.
#[derive(Clone, Copy, Debug, Default)]
struct Tier {
    speed_gbps: u64,
    radix_up: u32,
    radix_down: u32,
    latency_ns: u64,
    oversubscribed: u32,
}

/// The attributes a tier may give (htsim's list, of which rttlab builds all but queue sizes and
/// switch latencies other than 0).
const ATTRIBUTES: &str =
    "tier, downlink_speed_gbps, radix_up, radix_down, queue_up, queue_down, oversubscribed, bundle, switch_latency_ns, downlink_latency_ns";

/// The graph of htsim topology file `text`; an error names the line and the problem.
pub(crate) fn htsim_topology(text: &str) -> Result<GraphConfig, String> {
    let (mut nodes, mut tiers, mut podsize) = (0u32, 0usize, 0u32);
    let mut spec = [Tier { oversubscribed: 1, ..Tier::default() }; 3];
    let mut given = [[false; 8]; 3];
    let mut current: Option<usize> = None;
    for (n, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(&key) = words.first().filter(|w| !w.starts_with('#')) else { continue };
        let key = key.to_ascii_lowercase();
        let value =
            |what: &str| -> Result<u64, String> { words.get(1).and_then(|v| v.parse::<u64>().ok()).ok_or_else(|| format!("line {n}: {key} needs {what}")) };
        let Some(t) = current else {
            match key.as_str() {
                "nodes" => nodes = value("a number of hosts")? as u32,
                "tiers" => tiers = value("2 or 3")? as usize,
                "podsize" => podsize = value("a number of hosts per pod")? as u32,
                "tier" => {}
                _ => return Err(format!("line {n}: {key}: the header gives Nodes, Tiers and Podsize, then Tier 0")),
            }
            if key == "tier" {
                current = Some(tier_number(value("0, 1 or 2")?, n)?);
            }
            continue;
        };
        let field = ["downlink_speed_gbps", "radix_up", "radix_down", "downlink_latency_ns", "oversubscribed", "bundle", "switch_latency_ns", "queue"];
        let slot = match key.as_str() {
            "tier" => {
                current = Some(tier_number(value("0, 1 or 2")?, n)?);
                continue;
            }
            "queue_up" | "queue_down" => {
                return Err(format!("line {n}: {key}: rttlab sets queues with switch.queue_limit and [[switch.ports]], not in the topology"))
            }
            k => field.iter().position(|f| *f == k).ok_or_else(|| format!("line {n}: unknown attribute {key} (htsim's are {ATTRIBUTES})"))?,
        };
        if std::mem::replace(&mut given[t][slot], true) {
            return Err(format!("line {n}: {key} given twice for tier {t}"));
        }
        let v = value("a whole number")?;
        let s = &mut spec[t];
        match slot {
            0 => s.speed_gbps = v,
            1 if t == 2 => return Err(format!("line {n}: radix_up for tier 2: the top tier has no uplinks")),
            1 => s.radix_up = v as u32,
            2 => s.radix_down = v as u32,
            3 => s.latency_ns = v,
            4 => s.oversubscribed = v as u32,
            5 if v != 1 => return Err(format!("line {n}: bundle {v}: rttlab links two switches once (bundles of parallel links are not supported)")),
            6 if v != 0 => return Err(format!("line {n}: switch_latency_ns {v}: rttlab's switches forward without latency (0 only)")),
            _ => {}
        }
    }
    if nodes == 0 || podsize == 0 || !(2..=3).contains(&tiers) {
        return Err(format!("the header needs Nodes, Podsize and Tiers 2 or 3 (read Nodes {nodes}, Tiers {tiers}, Podsize {podsize})"));
    }
    for (t, s) in spec.iter().enumerate().take(tiers) {
        let missing = [(s.speed_gbps, "downlink_speed_gbps"), (s.radix_down as u64, "radix_down"), (s.latency_ns, "downlink_latency_ns")]
            .into_iter()
            .chain((t + 1 < tiers).then_some((s.radix_up as u64, "radix_up")))
            .find(|&(v, _)| v == 0);
        if let Some((_, what)) = missing {
            return Err(format!("tier {t}: {what} missing (or 0)"));
        }
    }
    build(nodes, podsize, &spec[..tiers])
}

fn tier_number(v: u64, n: usize) -> Result<usize, String> {
    (v <= 2).then_some(v as usize).ok_or_else(|| format!("line {n}: tier {v}: 0, 1 or 2"))
}

/// `set_custom_params`'s sizes and the constructor's links.
fn build(nodes: u32, podsize: u32, t: &[Tier]) -> Result<GraphConfig, String> {
    let whole = |what: String, a: u64, b: u64| if b != 0 && a.is_multiple_of(b) { Ok(a / b) } else { Err(what) };
    let pods = whole(format!("Nodes {nodes} is not a multiple of Podsize {podsize}"), nodes as u64, podsize as u64)?;
    let tors_per_pod =
        whole(format!("Podsize {podsize} is not a multiple of tier 0's radix_down {}", t[0].radix_down), podsize as u64, t[0].radix_down as u64)?;
    if t[0].radix_down / t[0].radix_up != t[0].oversubscribed {
        return Err(format!("tier 0: radix_down {} over radix_up {} is not its oversubscription {}", t[0].radix_down, t[0].radix_up, t[0].oversubscribed));
    }
    let tor_uplinks = whole(
        "tier 0's uplinks (Nodes · its speed / (tier 1's speed · oversubscribed)) are not a whole number".into(),
        nodes as u64 * t[0].speed_gbps,
        t[1].speed_gbps * t[0].oversubscribed as u64,
    )?;
    let aggs_per_pod = whole(
        format!("tier 0's {tor_uplinks} uplinks do not fill {pods} pods of tier 1 switches of radix_down {}", t[1].radix_down),
        tor_uplinks,
        pods * t[1].radix_down as u64,
    )?;
    if aggs_per_pod != t[0].radix_up as u64 {
        return Err(format!("tier 0's radix_up {} is not the {aggs_per_pod} tier 1 switches per pod its uplinks need", t[0].radix_up));
    }
    let cores = if t.len() == 3 {
        let agg_uplinks = whole("tier 1's uplinks are not a whole number".into(), tor_uplinks * t[1].speed_gbps, t[2].speed_gbps * t[1].oversubscribed as u64)?;
        let cores = whole(
            format!("tier 1's {agg_uplinks} uplinks do not fill tier 2 switches of radix_down {}", t[2].radix_down),
            agg_uplinks,
            t[2].radix_down as u64,
        )?;
        if !cores.is_multiple_of(aggs_per_pod) || cores / aggs_per_pod != t[1].radix_up as u64 {
            return Err(format!("tier 1's radix_up {} does not match {cores} tier 2 switches over {aggs_per_pod} per pod", t[1].radix_up));
        }
        cores
    } else {
        0
    };
    let (tors, aggs) = (tors_per_pod * pods, aggs_per_pod * pods);
    let link = |a: String, b: String, tier: &Tier| GraphLink {
        a,
        b,
        rate: Some(Rate::from_gbps(tier.speed_gbps)),
        delay: Some(Time::from_ns(tier.latency_ns)),
        rate_ab: None,
        rate_ba: None,
    };
    let (agg0, core0) = (tors, tors + aggs);
    let mut links: Vec<GraphLink> = (0..nodes as u64).map(|h| link(format!("h{h}"), format!("s{}", h / t[0].radix_down as u64), &t[0])).collect();
    for tor in 0..tors {
        let pod_aggs = if t.len() == 3 { (tor / tors_per_pod) * aggs_per_pod..(tor / tors_per_pod + 1) * aggs_per_pod } else { 0..aggs };
        links.extend(pod_aggs.map(|a| link(format!("s{tor}"), format!("s{}", agg0 + a), &t[1])));
    }
    for a in (0..aggs).filter(|_| t.len() == 3) {
        links.extend((0..t[1].radix_up as u64).map(|l| link(format!("s{}", agg0 + a), format!("s{}", core0 + a % aggs_per_pod + aggs_per_pod * l), &t[2])));
    }
    Ok(GraphConfig {
        file: None,
        hosts: (0..nodes).map(|h| format!("h{h}")).collect(),
        switches: (0..tors + aggs + cores).map(|s| format!("s{s}")).collect(),
        link_rate: None,
        link_delay: None,
        links,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// htsim's 4:1 leaf-spine of 1024 hosts: 32 ToRs of 32 hosts, 1024 · 100 / (100 · 4) = 256
    /// uplinks over spines of radix 32: 8 spines.
    #[test]
    fn htsims_files_build_the_fabric_it_builds() {
        let ls = htsim_topology(include_str!("../../../../python/rttlab/experiments/uec/htsim/topologies/leaf_spine_1024_oversub.topo")).unwrap();
        assert_eq!((ls.hosts.len(), ls.switches.len(), ls.links.len()), (1024, 40, 1024 + 32 * 8));
        let up = ls.links.iter().find(|l| l.a == "s31").unwrap();
        assert_eq!((up.b.as_str(), up.rate, up.delay), ("s32", Some(Rate::from_gbps(100)), Some(Time::from_ns(1000))));
        let ft = htsim_topology(include_str!("../../../../python/rttlab/experiments/uec/htsim/topologies/fat_tree_128_4os.topo")).unwrap();
        // 32 ToRs of 4 hosts in 8 pods; 128 uplinks over pods of radix-4 tier 1 switches: 4 per
        // pod, 32 in all; 128 · 100 / (100 · 4) = 32 uplinks of tier 1 over radix-8 cores: 4 cores,
        // each aggregation switch to one.
        assert_eq!((ft.hosts.len(), ft.switches.len()), (128, 32 + 32 + 4));
        assert_eq!(ft.links.len(), 128 + 32 * 4 + 32);
        assert!(ft.links.iter().any(|l| l.a == "s33" && l.b == "s65"), "aggregation switch 1 of pod 0 to core 1");
    }

    /// Every topology htsim ships builds, with its hosts on one link each, but its test file of
    /// bundled links.
    #[test]
    fn every_shipped_file_builds() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/rttlab/experiments/uec/htsim/topologies");
        let mut built = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let read = htsim_topology(&std::fs::read_to_string(&path).unwrap());
            if path.ends_with("test.topo") {
                assert!(read.unwrap_err().contains("bundle 2"));
                continue;
            }
            read.and_then(|g| g.validate().map_err(|e| e.to_string())).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            built += 1;
        }
        assert_eq!(built, 26);
    }

    #[test]
    fn mistakes_name_their_line() {
        let head = "Nodes 8\nTiers 2\nPodsize 8\nTier 0\n";
        assert_eq!(htsim_topology(&format!("{head}Speed 100\n")).unwrap_err(), format!("line 5: unknown attribute speed (htsim's are {ATTRIBUTES})"));
        assert_eq!(htsim_topology(&format!("{head}Radix_Down 4\nRadix_Down 4\n")).unwrap_err(), "line 6: radix_down given twice for tier 0");
        assert_eq!(
            htsim_topology(&format!("{head}Bundle 2\n")).unwrap_err(),
            "line 5: bundle 2: rttlab links two switches once (bundles of parallel links are not supported)"
        );
        assert_eq!(
            htsim_topology("Nodes 8\nTiers 4\nPodsize 8\n").unwrap_err(),
            "the header needs Nodes, Podsize and Tiers 2 or 3 (read Nodes 8, Tiers 4, Podsize 8)"
        );
        assert_eq!(
            htsim_topology(&format!("{head}Downlink_speed_Gbps 100\nRadix_Down 4\nRadix_Up 2\nDownlink_Latency_ns 1000\nTier 1\nDownlink_speed_Gbps 100\nRadix_Down 2\nDownlink_Latency_ns 1000\n")).unwrap_err(),
            "tier 0: radix_down 4 over radix_up 2 is not its oversubscription 1"
        );
    }
}
