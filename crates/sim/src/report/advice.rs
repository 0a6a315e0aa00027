//! Knobs that never silently do nothing: before its results are trusted, a run's controller is
//! checked against the scenario's paths (each controller's own `rttlab_cc::Algorithm::advise`)
//! and against settings it ignores, and what would leave it unable to act as intended becomes
//! a warning naming the key and a value that would work.

use crate::report::output::Summary;
use crate::scenario::{variant_name, CcConfig, LossDetection, QueueLen, Recovery, Scenario, TransportConfig};
use crate::Network;
use rttlab_cc::{Bytes, Time};
use rttlab_cc::{Cc, Path, Route};

/// The warnings for `s` run as `net`, whose measured part gave `summary`.
pub(crate) fn warnings(s: &Scenario, net: &Network, summary: &Summary) -> Vec<String> {
    let mut out = Vec::new();
    let (cfg, fabric) = (&net.cx.cfg, &net.fabric);
    if let (CcConfig::Native(cc), Some(host)) = (&s.cc.controller, fabric.host_ports.first()) {
        // The longest path from the first host: the fabrics rttlab builds are symmetric.
        let longest = (1..fabric.graph.hosts).map(|b| (fabric.base_rtt(0, b, [0, 0], cfg), fabric.path(0, b, 0).len() as u32 - 1)).max();
        if let Some((base_rtt, hops)) = longest {
            let mss = cfg.payload_per_packet as u64;
            let segment_bytes = if s.transport.is_window() { mss } else { cfg.segment_bytes };
            let path = Path { line_rate: fabric.ports[host.idx()].rate, mss, segment_bytes, base_rtt, max_base_rtt: base_rtt };
            let route = Route { path, hops, fan_in: fan_in(s, net) };
            out.extend(cc.advise(&route).into_iter().map(|a| format!("cc.{} = {}: {}; try cc.{} = {}", a.field, a.value, a.problem, a.field, a.try_value)));
        }
    }
    let marks = s.switch.ecn.is_some() || s.switch.ports.iter().any(|p| p.ecn.is_some());
    if marks && !s.cc.controller.needs().ecn {
        let readers: Vec<&str> = Cc::defaults().iter().filter(|c| c.needs().ecn).map(|c| c.name()).collect();
        out.push(format!(
            "switch.ecn: switches mark ECN but cc.algorithm = \"{}\" does not react to marks: they change nothing but the ECN counters (leave switch.ecn out, or use a controller that reads them: {})",
            s.cc.controller.name(),
            readers.join(", ")
        ));
    }
    if s.routing.mode != crate::scenario::RoutingMode::Ecmp && !fabric.routing.has_choices() {
        out.push(format!(
            "routing.mode = \"{}\": the topology has no equal-cost paths (no switch has two next hops towards any host), so the mode changes nothing",
            crate::scenario::variant_name(s.routing.mode)
        ));
    }
    out.extend(buffer_bound(s));
    out.extend(reordering_taken_for_loss(s));
    out.extend(python_never_moved(net, summary));
    out.extend(unsettled(s, net, summary));
    out
}

/// ECN marking that starts above what a class queue can hold (DCTCP's K above the buffer: no
/// mark, only drops or pauses). (Static PFC thresholds above the buffer are a scenario error.)
fn buffer_bound(s: &Scenario) -> Option<String> {
    let sw = &s.switch;
    let bytes = |q: QueueLen| q.bytes(s.nic.mtu.0);
    // The most one class queue can hold: its limit, or its share of the buffer when it alone
    // is busy (Choudhury–Hahne: alpha / (1 + alpha) of it).
    let shared = sw.alpha.map_or(sw.buffer.0 as f64, |a| sw.buffer.0 as f64 * a / (1.0 + a)) as u64;
    let queue = sw.queue_limit.map_or(shared, |q| bytes(q).min(shared));
    let ecn = sw.ecn.as_ref()?;
    let (kmin, _) = ecn.thresholds();
    let key = if ecn.k.is_some() { "switch.ecn.k" } else { "switch.ecn.kmin" };
    (bytes(kmin) >= queue).then(|| {
        format!(
            "{key} = {kmin}: a class queue holds at most {} (switch.buffer, queue_limit, alpha), so no packet is ever marked; try {key} = {}",
            Bytes(queue),
            Bytes(queue / 4)
        )
    })
}

/// A Python rate controller whose every connection still sends at its line rate after many RTT
/// samples: it computes a rate that `rate_bps` does not return, or reacts to nothing.
fn python_never_moved(net: &Network, summary: &Summary) -> Option<String> {
    let run = &net.cx.cfg.conns[0];
    let CcConfig::Python(p) = &run.cc else { return None };
    let flows = net.hosts.flows.listed();
    let at_line_rate = flows.iter().all(|f| f.rate() == net.hosts.nodes[f.src as usize].line_rate);
    (!run.transport.is_window() && !flows.is_empty() && at_line_rate && summary.rtt_samples >= 100).then(|| {
        format!(
            "cc.class = {}: every connection still sends at its line rate after {} RTT samples: the controller never changed its rate (does rate_bps return what on_completion computes?)",
            p.class, summary.rtt_samples
        )
    })
}

/// The transports the run's traffic uses, each with the key that sets it: `[transport]` for
/// `[[flows]]`, `[[workloads]]` and the jobs without their own, and each job's own.
pub(crate) fn transports(s: &Scenario) -> Vec<(String, &TransportConfig)> {
    let run_wide = !s.flows.is_empty() || !s.workloads.is_empty() || s.jobs.iter().any(|j| j.transport.is_none());
    let own = s.jobs.iter().enumerate().filter_map(|(i, j)| j.transport.as_ref().map(|t| (format!("jobs.{i}.transport"), t)));
    run_wide.then(|| ("transport".to_string(), &s.transport)).into_iter().chain(own).collect()
}

/// Per-packet path choice against a transport that takes reordering for loss: go-back-N
/// discards every packet after one that overtakes another and resends them (IRN, Mittal et
/// al., SIGCOMM'18, §2), and three duplicate ACKs take reordering deeper than three packets
/// for loss (RFC 8985 §2: why RACK detects loss by time).
fn reordering_taken_for_loss(s: &Scenario) -> Vec<String> {
    if !s.routing.per_packet() {
        return Vec::new();
    }
    let mode = format!("routing.mode = \"{}\"", variant_name(s.routing.mode));
    let go_back_n = s.nic.recovery.unwrap_or_default() == Recovery::GoBackN;
    let mut out = Vec::new();
    for (key, t) in transports(s) {
        match t {
            TransportConfig::Message { .. } if go_back_n => out.push(format!(
                "{mode} sends each packet its own way, and nic.recovery = \"go_back_n\" (the message transport's default) takes every packet that overtakes another for a loss: the receiver discards what follows and the sender resends it; set nic.recovery = \"selective_repeat\""
            )),
            // Ultra Ethernet's sender takes nothing but a NACK or a timeout for a loss.
            TransportConfig::Window(w) if w.loss_detection == LossDetection::Dupthresh && w.uet.is_none() => out.push(format!(
                "{mode} sends each packet its own way, and {key}.loss_detection = \"dupthresh\" (the default) takes reordering deeper than three packets for a loss: spurious retransmissions and window cuts; set {key}.loss_detection = \"rack\""
            )),
            _ => {}
        }
    }
    out.dedup();
    out
}

/// The measurement began while the connections were still ramping up: their rates added up
/// were below half what the run went on to carry, and grew by half again by its end (TIMELY's
/// additive increase after its first cuts takes tens of milliseconds on the §6.1 testbed).
/// Settled rates swing too, but not from below half the mean.
fn unsettled(s: &Scenario, net: &Network, summary: &Summary) -> Option<String> {
    let (start, end) = (net.cx.measure.at_warmup.rates_bps as f64 / 1e9, net.counters().rates_bps as f64 / 1e9);
    let carried = summary.throughput_gbps;
    (s.warmup > Time::ZERO && start < 0.5 * carried && end > 1.5 * start).then(|| {
        let longer = Time(s.warmup.ps().saturating_mul(4).max(1));
        format!(
            "warmup = {}: the measurement began before the connections had settled: their rates added up to {start:.3} Gbps at its start and {end:.3} Gbps at the end, against {carried:.3} Gbps carried on average; try warmup = {longer} (and a duration past it)",
            s.warmup
        )
    })
}

/// The most distinct senders into one host among the `[[flows]]` connections that send as
/// fast as they may from their start (no application rate, no on/off): their segments meet.
/// Workload flows come and go, and so do their senders.
fn fan_in(s: &Scenario, net: &Network) -> u32 {
    let backlogged = |g: usize| s.flows.get(g).is_some_and(|g| g.rate.is_none() && g.on.is_none());
    let mut pairs: Vec<(u32, u32)> = net.flows().iter().filter(|f| backlogged(f.group as usize)).map(|f| (f.dst, f.src)).collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs.chunk_by(|a, b| a.0 == b.0).map(|senders| senders.len() as u32).max().unwrap_or(0)
}
