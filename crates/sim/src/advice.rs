//! Knobs that never silently do nothing: before its results are trusted, a run's controller is
//! checked against the scenario's paths (each controller's own `rttlab_cc::Algorithm::advise`)
//! and against settings it ignores, and what would leave it unable to act as intended becomes
//! a warning naming the key and a value that would work.

use crate::scenario::{CcConfig, Scenario};
use crate::Network;
use rttlab_cc::{Cc, Path, Route};

/// The warnings for `s` run as `net`.
pub(crate) fn warnings(s: &Scenario, net: &Network) -> Vec<String> {
    let mut out = Vec::new();
    let (cfg, fabric) = (&net.cx.cfg, &net.fabric);
    if let (CcConfig::Native(cc), Some(host)) = (&cfg.cc, fabric.host_ports.first()) {
        // The longest path from the first host: the fabrics rttlab builds are symmetric.
        let longest = (1..fabric.graph.hosts).map(|b| (fabric.base_rtt(0, b, [0, 0], cfg), fabric.path(0, b, 0).len() as u32 - 1)).max();
        if let Some((base_rtt, hops)) = longest {
            let mss = cfg.payload_per_packet as u64;
            let segment_bytes = if cfg.transport.is_window() { mss } else { cfg.segment_bytes };
            let path = Path { line_rate: fabric.ports[host.idx()].rate, mss, segment_bytes, base_rtt, max_base_rtt: base_rtt };
            let route = Route { path, hops, fan_in: fan_in(net) };
            out.extend(cc.advise(&route).into_iter().map(|a| format!("cc.{} = {}: {}; try cc.{} = {}", a.field, a.value, a.problem, a.field, a.try_value)));
        }
    }
    let marks = s.switch.ecn.is_some() || s.switch.ports.iter().any(|p| p.ecn.is_some());
    if marks && !cfg.cc.needs().ecn {
        let readers: Vec<&str> = Cc::defaults().iter().filter(|c| c.needs().ecn).map(|c| c.name()).collect();
        out.push(format!(
            "switch.ecn: switches mark ECN but cc.algorithm = \"{}\" does not react to marks: they change nothing but the ECN counters (leave switch.ecn out, or use a controller that reads them: {})",
            cfg.cc.name(),
            readers.join(", ")
        ));
    }
    out
}

/// The most distinct senders of the run's connections into one host.
fn fan_in(net: &Network) -> u32 {
    let mut pairs: Vec<(u32, u32)> = net.flows().iter().map(|f| (f.dst, f.src)).collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs.chunk_by(|a, b| a.0 == b.0).map(|senders| senders.len() as u32).max().unwrap_or(0)
}
