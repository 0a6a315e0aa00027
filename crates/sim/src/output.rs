//! What a run returns: a summary with stable, documented keys, column tables, and metadata
//! (the scenario as run, the seed, the version, and how fast it ran).

use crate::network::Network;
use crate::port::port_name;
use crate::scenario::Scenario;
use crate::stats::jain;
use rttlab_cc::Time;
use serde::Serialize;
use serde_json::{json, Value};

/// The headline numbers of a run. Keys are stable; every throughput and RTT figure counts only
/// what happened after the warm-up.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    /// Simulated time after the warm-up, in seconds.
    pub measured_s: f64,
    /// Data delivered to receivers, headers included, per second of measured time.
    pub throughput_gbps: f64,
    /// Application payload delivered to receivers per second of measured time.
    pub goodput_gbps: f64,
    /// Completion events (RTT samples) after the warm-up.
    pub rtt_samples: u64,
    pub rtt_avg_us: Option<f64>,
    pub rtt_min_us: Option<f64>,
    pub rtt_p50_us: Option<f64>,
    pub rtt_p90_us: Option<f64>,
    pub rtt_p99_us: Option<f64>,
    pub rtt_p999_us: Option<f64>,
    pub rtt_max_us: Option<f64>,
    /// Jain's index of the connections' goodputs.
    pub jain: f64,
    /// PFC PAUSE frames sent.
    pub pauses: u64,
    /// Time egress ports spent paused, summed over ports and classes.
    pub paused_us: f64,
    /// Packets dropped at full buffers.
    pub drops: u64,
    /// Packets marked Congestion Experienced.
    pub ecn_marks: u64,
    /// Window transport: packets sent again, and retransmission timeouts.
    pub retransmits: u64,
    pub timeouts: u64,
    /// Payload bytes senders put on the wire, delivered, still in the network, and dropped
    /// (whole run): `bytes_sent = bytes_delivered + bytes_duplicate + bytes_in_flight +
    /// bytes_dropped`.
    pub bytes_sent: u64,
    pub bytes_delivered: u64,
    pub bytes_in_flight: u64,
    pub bytes_dropped: u64,
    /// Payload that reached a receiver a second time (window transport).
    pub bytes_duplicate: u64,
    pub flows: u64,
    /// Sized flows whose last byte arrived.
    pub flows_finished: u64,
    /// Occupancy of the first sampled queue port (by default the port towards the first flow
    /// destination).
    pub queue_avg_kb: Option<f64>,
    pub queue_p99_kb: Option<f64>,
    pub queue_max_kb: Option<f64>,
}

fn us(t: Time) -> f64 {
    t.as_us()
}

impl Network {
    pub fn summary(&self) -> Summary {
        let measured = self.end - self.warmup;
        let secs = measured.as_secs();
        let measured_bytes: u64 = self.flows.iter().map(|f| f.stats.measured_bytes).sum();
        let measured_wire: u64 = self.flows.iter().map(|f| f.stats.measured_wire_bytes).sum();
        let h = &self.rtt_hist;
        let rtt_samples: u64 = self.flows.iter().map(|f| f.stats.rtt_samples).sum();
        let rtt_sum: u128 = self.flows.iter().map(|f| f.stats.rtt_sum).sum();
        let q = |quantile: f64| (rtt_samples > 0).then(|| h.value_at_quantile(quantile) as f64 / 1e3);
        let goodputs: Vec<f64> = self.flows.iter().map(|f| f.stats.measured_bytes as f64).collect();
        let qs = self.samplers.first().filter(|s| !s.hist.is_empty()).map(|s| &s.hist);
        let (c, w) = (self.counters(), self.at_warmup);
        Summary {
            measured_s: secs,
            throughput_gbps: measured_wire as f64 * 8.0 / secs / 1e9,
            goodput_gbps: measured_bytes as f64 * 8.0 / secs / 1e9,
            rtt_samples,
            rtt_avg_us: (rtt_samples > 0).then(|| rtt_sum as f64 / rtt_samples as f64 / 1e6),
            rtt_min_us: (rtt_samples > 0).then(|| h.min() as f64 / 1e3),
            rtt_p50_us: q(0.5),
            rtt_p90_us: q(0.9),
            rtt_p99_us: q(0.99),
            rtt_p999_us: q(0.999),
            rtt_max_us: (rtt_samples > 0).then(|| h.max() as f64 / 1e3),
            jain: jain(&goodputs),
            pauses: c.pauses - w.pauses,
            paused_us: us(c.paused - w.paused),
            drops: c.drops - w.drops,
            ecn_marks: c.marks - w.marks,
            retransmits: c.retransmits - w.retransmits,
            timeouts: c.timeouts - w.timeouts,
            bytes_sent: self.flows.iter().map(|f| f.stats.tx_bytes).sum(),
            bytes_delivered: self.flows.iter().map(|f| f.stats.delivered_bytes).sum(),
            bytes_in_flight: self.payload_in_flight(),
            bytes_dropped: self.switches.iter().map(|s| s.dropped_payload).sum(),
            bytes_duplicate: self.flows.iter().map(|f| f.stats.duplicate_bytes).sum(),
            flows: self.flows.len() as u64,
            flows_finished: self.flows.iter().filter(|f| f.stats.finish.is_some()).count() as u64,
            queue_avg_kb: qs.map(|h| h.mean() / 1e3),
            queue_p99_kb: qs.map(|h| h.value_at_quantile(0.99) as f64 / 1e3),
            queue_max_kb: qs.map(|h| h.max() as f64 / 1e3),
        }
    }

    /// Column tables: `flows`, `rtt` (the RTT distribution), `queue_stats`, `queues` (samples,
    /// when traced), `ports`, `timeseries`.
    pub fn tables(&self) -> Value {
        let secs = (self.end - self.warmup).as_secs();
        let f = &self.flows;
        let flows = json!({
            "flow": (0..f.len()).collect::<Vec<_>>(),
            "src": f.iter().map(|x| x.src).collect::<Vec<_>>(),
            "dst": f.iter().map(|x| x.dst).collect::<Vec<_>>(),
            "class": f.iter().map(|x| x.class).collect::<Vec<_>>(),
            "start_us": f.iter().map(|x| us(x.start)).collect::<Vec<_>>(),
            "stop_us": f.iter().map(|x| (x.stop < Time::MAX).then(|| us(x.stop))).collect::<Vec<_>>(),
            "bytes_sent": f.iter().map(|x| x.stats.tx_bytes).collect::<Vec<_>>(),
            "bytes_delivered": f.iter().map(|x| x.stats.delivered_bytes).collect::<Vec<_>>(),
            "goodput_gbps": f.iter().map(|x| x.stats.measured_bytes as f64 * 8.0 / secs / 1e9).collect::<Vec<_>>(),
            "rtt_samples": f.iter().map(|x| x.stats.rtt_samples).collect::<Vec<_>>(),
            "rtt_avg_us": f.iter().map(|x| (x.stats.rtt_samples > 0).then(|| x.stats.rtt_sum as f64 / x.stats.rtt_samples as f64 / 1e6)).collect::<Vec<_>>(),
            "finish_us": f.iter().map(|x| x.stats.finish.map(us)).collect::<Vec<_>>(),
            "retransmits": f.iter().map(|x| x.stats.retransmits).collect::<Vec<_>>(),
            "timeouts": f.iter().map(|x| x.stats.timeouts).collect::<Vec<_>>(),
            "rate_gbps": f.iter().map(|x| x.rate().as_gbps()).collect::<Vec<_>>(),
            "cwnd_bytes": f.iter().map(|x| x.window_cc().map(|c| c.cwnd())).collect::<Vec<_>>(),
            "dctcp_alpha": f.iter().map(|x| x.window_cc().and_then(|c| c.alpha())).collect::<Vec<_>>(),
        });
        let total = self.rtt_hist.len().max(1) as f64;
        let mut cum = 0u64;
        let (mut rtt_us, mut count, mut cdf) = (vec![], vec![], vec![]);
        for v in self.rtt_hist.iter_recorded() {
            cum += v.count_at_value();
            rtt_us.push(v.value_iterated_to() as f64 / 1e3);
            count.push(v.count_at_value());
            cdf.push(cum as f64 / total);
        }
        let s = &self.samplers;
        let queue_stats = json!({
            "port": s.iter().map(|x| x.name.clone()).collect::<Vec<_>>(),
            "samples": s.iter().map(|x| x.hist.len()).collect::<Vec<_>>(),
            "avg_kb": s.iter().map(|x| x.hist.mean() / 1e3).collect::<Vec<_>>(),
            "p50_kb": s.iter().map(|x| x.hist.value_at_quantile(0.5) as f64 / 1e3).collect::<Vec<_>>(),
            "p99_kb": s.iter().map(|x| x.hist.value_at_quantile(0.99) as f64 / 1e3).collect::<Vec<_>>(),
            "max_kb": s.iter().map(|x| x.hist.max() as f64 / 1e3).collect::<Vec<_>>(),
        });
        let (mut qt, mut qp, mut qb) = (vec![], vec![], vec![]);
        for x in s {
            for &(t, b) in x.trace.iter().flatten() {
                qt.push(us(t));
                qp.push(x.name.clone());
                qb.push(b);
            }
        }
        let ports = json!({
            "port": (0..self.ports.len() as u32).map(|p| port_name(&self.graph, &self.ports, p)).collect::<Vec<_>>(),
            "tx_bytes": self.ports.iter().map(|p| p.tx_bytes).collect::<Vec<_>>(),
            "pauses_sent": self.ports.iter().map(|p| p.pauses_sent).collect::<Vec<_>>(),
            "paused_us": self.ports.iter().map(|p| us(p.paused_time_at(self.end))).collect::<Vec<_>>(),
        });
        let ts = &self.timeseries;
        json!({
            "flows": flows,
            "rtt": {"rtt_us": rtt_us, "count": count, "cdf": cdf},
            "queue_stats": queue_stats,
            "queues": {"time_us": qt, "port": qp, "bytes": qb},
            "ports": ports,
            "timeseries": {
                "time_us": ts.time.iter().map(|&t| us(t)).collect::<Vec<_>>(),
                "flow": ts.flow,
                "delivered_bytes": ts.delivered_bytes,
                "rate_gbps": ts.rate_bps.iter().map(|&r| r as f64 / 1e9).collect::<Vec<_>>(),
                "cwnd_bytes": ts.cwnd_bytes,
                "rtt_us": ts.rtt.iter().map(|t| t.map(us)).collect::<Vec<_>>(),
            },
        })
    }
}

/// Everything a run returns.
pub struct Output {
    pub summary: Summary,
    pub tables: Value,
    pub meta: Value,
}

impl Output {
    pub fn to_json(&self) -> String {
        json!({"summary": self.summary, "tables": self.tables, "meta": self.meta}).to_string()
    }
}

/// How fast a run went: wall-clock figures, kept out of the (deterministic) summary.
pub fn perf(net: &Network, wall_s: f64) -> Value {
    let events = net.events_processed();
    json!({
        "events": events,
        "wall_s": wall_s,
        "events_per_s": events as f64 / wall_s,
        "sim_seconds_per_wall_second": net.end.as_secs() / wall_s,
        "packet_slots": net.packet_high_water(),
    })
}

pub fn meta(s: &Scenario, perf: Value) -> Value {
    json!({
        "rttlab_version": env!("CARGO_PKG_VERSION"),
        "seed": s.seed,
        "scenario": s.resolved(),
        "perf": perf,
    })
}
