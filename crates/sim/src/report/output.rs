//! What a run returns: a summary with stable, documented keys, column tables, and metadata
//! (the scenario as run, the seed, the version, and how fast it ran).

use crate::core::ids::PortId;
use crate::fabric::port::{port_name, ClassStats};
use crate::host::flow::{FlowView, Tx};
use crate::network::Network;
use crate::report::measure::TimeSeries;
use crate::report::stats::{buckets_of, histogram, jain, record_fct_into, FlowRecord};
use crate::report::table::{tables_json, Column, Table, Tables};
use crate::scenario::Scenario;
use hdrhistogram::Histogram;
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
    /// Packets dropped at full switch buffers.
    pub drops: u64,
    /// Packets dropped at full host NIC Rx queues (`[host]` model).
    pub host_drops: u64,
    /// Data packets dropped anywhere over data packets sent (retransmissions included).
    pub loss_rate: Option<f64>,
    /// Packets marked Congestion Experienced.
    pub ecn_marks: u64,
    /// Packets sent again, and retransmission timeouts (the message transport's local ACK
    /// timeouts).
    pub retransmits: u64,
    pub timeouts: u64,
    /// ACKs and NAKs senders received: NAKs are the message transport's (go-back-N, selective
    /// repeat) and Ultra Ethernet's NACKs.
    pub acks: u64,
    pub naks: u64,
    /// Data packets switches trimmed to their headers (`switch.trimming`); their payload
    /// counts in `bytes_dropped`.
    pub trims: u64,
    /// Whole run: path labels senders took after their first (PLB), data packets that arrived
    /// reordered, and retransmissions whose data had arrived before.
    pub repaths: u64,
    pub reordered: u64,
    pub spurious_retransmits: u64,
    /// Whole run, with `[[faults]]`: packets lost to links down and lost silently, and the
    /// longest time a connection went without delivery while it had data to send (RPC
    /// connections aside; `None` without faults).
    pub lost_down: u64,
    pub lost_silent: u64,
    pub outage_max_us: Option<f64>,
    /// Payload bytes senders put on the wire, delivered, still in the network, and dropped
    /// (whole run): `bytes_sent = bytes_delivered + bytes_duplicate + bytes_in_flight +
    /// bytes_dropped`.
    pub bytes_sent: u64,
    pub bytes_delivered: u64,
    pub bytes_in_flight: u64,
    pub bytes_dropped: u64,
    /// Payload that reached a receiver and was not delivered: a second copy, or data beyond a
    /// gap that the message transport's go-back-N discards.
    pub bytes_duplicate: u64,
    pub flows: u64,
    /// Sized flows whose last byte arrived.
    pub flows_finished: u64,
    /// Occupancy of the first sampled queue port (by default the port towards the first flow
    /// destination).
    pub queue_avg_kb: Option<f64>,
    pub queue_p99_kb: Option<f64>,
    pub queue_max_kb: Option<f64>,
    /// RPC workloads: RPCs issued after the warm-up that completed, and their latency.
    pub rpcs_completed: u64,
    /// RPCs (issued after the warm-up) still open at the end: the latency percentiles count
    /// them at their age, a lower bound of their latency (right-censored).
    pub rpcs_censored: u64,
    pub rpc_p50_us: Option<f64>,
    pub rpc_p99_us: Option<f64>,
    /// Pinger workloads: echoes of probes sent after the warm-up, and their round trip.
    pub ping_samples: u64,
    pub ping_p50_us: Option<f64>,
    pub ping_p99_us: Option<f64>,
    /// Sized flows that started after the warm-up and finished, those still under way at the
    /// end (right-censored), and the FCT slowdown (FCT over the FCT alone on an idle network)
    /// over all sizes, the censored counted at their age (a lower bound: finished flows alone
    /// would flatter a run whose slowest flows never finished); per size bucket in the `fct`
    /// table.
    pub fct_flows: u64,
    pub fct_censored: u64,
    pub slowdown_p50: Option<f64>,
    pub slowdown_p95: Option<f64>,
    pub slowdown_p99: Option<f64>,
    /// Workload arrivals after the warm-up that were not started because their source was at
    /// its backlog limit (RPCs, flows and probes; per group in the `groups` table).
    pub refused: u64,
    /// Message transport: mean payload released to NICs and not yet acknowledged, summed over
    /// connections (time average after the warm-up; by Little's law, goodput × mean RTT).
    pub inflight_avg_bytes: Option<f64>,
    /// Rate controllers with a floor: connections whose rate sits on `cc.min_rate` at the end
    /// (per connection in `flows.at_min_rate`, over time in `timeseries.at_min_rate`).
    pub flows_at_min_rate: Option<u64>,
}

/// Quantile `q` of histogram `h` divided by `scale`, `None` when it is empty.
fn quantile(h: &Histogram<u64>, q: f64, scale: f64) -> Option<f64> {
    (!h.is_empty()).then(|| h.value_at_quantile(q) as f64 / scale)
}

/// The sum of histograms.
fn merged<'a>(hs: impl Iterator<Item = &'a Histogram<u64>>) -> Histogram<u64> {
    let mut m = histogram();
    for h in hs {
        m.add(h).expect("auto-resizing histogram");
    }
    m
}

fn us(t: Time) -> f64 {
    t.as_us()
}

pub(crate) fn summary(net: &Network) -> Summary {
    let measured = net.cx.end - net.cx.cfg.warmup;
    let secs = measured.as_secs();
    let measured_bytes: u64 = net.all_stats().map(|s| s.measured_bytes).sum();
    let measured_wire: u64 = net.all_stats().map(|s| s.measured_wire_bytes).sum();
    let h = &net.cx.measure.rtt_hist;
    let rtt_samples: u64 = net.all_stats().map(|s| s.rtt_samples).sum();
    let rtt_sum: u128 = net.all_stats().map(|s| s.rtt_sum).sum();
    let q = |quantile: f64| (rtt_samples > 0).then(|| h.value_at_quantile(quantile) as f64 / 1e3);
    let goodputs: Vec<f64> = net.hosts.flows.listed().iter().map(|f| f.stats.measured_bytes as f64).collect();
    let rpcs = rpc_latencies(net);
    let rpc = merged(rpcs.iter().map(|g| &g.0));
    let ping = merged(net.cx.measure.groups.iter().map(|g| &g.ping_rtt));
    let with_censored = fct_censored(net);
    let slowdown = merged(with_censored.iter().map(|g| g.slowdown.last().expect("an all-sizes bucket")));
    let qs = net.cx.measure.samplers.first().filter(|s| !s.hist.is_empty()).map(|s| &s.hist);
    let (c, w) = (net.counters(), net.cx.measure.at_warmup);
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
        host_drops: c.host_drops - w.host_drops,
        loss_rate: (c.data_sent > w.data_sent).then(|| (c.data_drops - w.data_drops) as f64 / (c.data_sent - w.data_sent) as f64),
        ecn_marks: c.marks - w.marks,
        retransmits: c.retransmits - w.retransmits,
        timeouts: c.timeouts - w.timeouts,
        acks: c.acks - w.acks,
        naks: c.naks - w.naks,
        trims: c.trims - w.trims,
        repaths: net.all_stats().map(|s| s.repaths).sum(),
        reordered: net.all_stats().map(|s| s.reordered).sum(),
        spurious_retransmits: net.all_stats().map(|s| s.spurious_retransmits).sum(),
        bytes_sent: net.all_stats().map(|s| s.tx_bytes).sum(),
        bytes_delivered: net.all_stats().map(|s| s.delivered_bytes).sum(),
        bytes_in_flight: net.payload_in_flight(),
        bytes_dropped: net.fabric.switches.iter().map(|s| s.dropped_payload).sum::<u64>()
            + net.hosts.nodes.iter().map(|h| h.rx_dropped_payload).sum::<u64>()
            + net.cx.measure.lost_payload,
        lost_down: net.fabric.port_views().flat_map(|p| p.class).map(|q| q.counts.lost_down).sum(),
        lost_silent: net.fabric.port_views().flat_map(|p| p.class).map(|q| q.counts.lost_silent).sum(),
        outage_max_us: net
            .hosts
            .flows
            .views()
            .filter(|x| x.open)
            .filter_map(|x| outage(net, &x))
            .chain([net.hosts.flows.retired.outage])
            .max()
            .filter(|_| net.fabric.faults.is_some())
            .map(us),
        bytes_duplicate: net.all_stats().map(|s| s.duplicate_bytes).sum(),
        flows: net.hosts.flows.slots.opened(),
        flows_finished: net.hosts.flows.views().filter(|f| f.open && f.stats.finish.is_some()).count() as u64 + net.hosts.flows.retired_count,
        queue_avg_kb: qs.map(|h| h.mean() / 1e3),
        queue_p99_kb: qs.map(|h| h.value_at_quantile(0.99) as f64 / 1e3),
        queue_max_kb: qs.map(|h| h.max() as f64 / 1e3),
        rpcs_completed: net.cx.measure.groups.iter().map(|g| g.rpcs_completed).sum(),
        rpcs_censored: rpcs.iter().map(|g| g.2).sum(),
        rpc_p50_us: quantile(&rpc, 0.5, 1e3),
        rpc_p99_us: quantile(&rpc, 0.99, 1e3),
        ping_samples: ping.len(),
        ping_p50_us: quantile(&ping, 0.5, 1e3),
        ping_p99_us: quantile(&ping, 0.99, 1e3),
        fct_flows: net.cx.measure.groups.iter().map(|g| g.fct.last().map_or(0, |h| h.len())).sum(),
        fct_censored: with_censored.iter().map(|g| g.censored.last().copied().unwrap_or(0)).sum(),
        slowdown_p50: quantile(&slowdown, 0.5, 1e3),
        slowdown_p95: quantile(&slowdown, 0.95, 1e3),
        slowdown_p99: quantile(&slowdown, 0.99, 1e3),
        inflight_avg_bytes: {
            let open = net.hosts.flows.slots.iter().map(|(_, f)| f).filter(|f| f.open).filter_map(|f| inflight_area(net, f)).reduce(|a, b| a + b);
            let retired = Some(net.hosts.flows.retired.inflight_area).filter(|&a| a > 0);
            open.or(retired).map(|_| (open.unwrap_or(0) + net.hosts.flows.retired.inflight_area) as f64 / 1e12 / secs)
        },
        refused: net.cx.measure.groups.iter().map(|g| g.rpcs_refused + g.flows_refused + g.pings_refused).sum(),
        flows_at_min_rate: {
            let at: Vec<bool> = net.hosts.flows.listed().iter().filter_map(|f| f.cc_metrics().at_min_rate).collect();
            (!at.is_empty()).then(|| at.iter().filter(|&&b| b).count() as u64)
        },
    }
}

/// Column tables: `flows` (connections; not workload flows, which `fct` summarises),
/// `rtt` (the RTT distribution), `queue_stats`, `queues` (samples, when traced), `ports`,
/// `timeseries`, `groups` (per traffic group), `fct` (per group and size bucket),
/// `flow_records` (when asked), `transfers` (connection matrices' transfers).
pub(crate) fn tables(net: &Network, ts: TimeSeries) -> Tables {
    let (queue_stats, queues) = queue_tables(net);
    vec![
        ("groups", groups_table(net)),
        ("fct", fct_table(net)),
        ("flow_records", flow_records_table(net)),
        ("flows", flows_table(net)),
        ("rtt", rtt_table(net)),
        ("queue_stats", queue_stats),
        ("queues", queues),
        ("ports", ports_table(net)),
        ("pfc", pfc_table(net)),
        ("timeseries", timeseries_table(net, ts)),
        ("transfers", transfers_table(net)),
        ("jobs", jobs_table(net)),
        ("steps", steps_table(net)),
    ]
}

/// Per `[[jobs]]` entry, iteration and step: when its first transfer started and its last byte
/// arrived (`Time::MAX`: not in the run).
fn job_steps(net: &Network) -> Vec<(&crate::workload::Generator, u32, u32, Time, Time)> {
    let mut out = Vec::new();
    for (gen, spans) in net.hosts.generators.iter().zip(&net.cx.measure.steps) {
        let crate::workload::Kind::Job(job) = &gen.kind else { continue };
        for (k, span) in spans.iter().enumerate() {
            let end = if span.arrived == job.per_step() { span.end } else { Time::MAX };
            out.push((gen, k as u32 / job.steps, k as u32 % job.steps, span.start, end));
        }
    }
    out
}

/// One row per job and iteration: its start (its first transfer's), its end (its last byte's
/// arrival), its completion time, the bandwidth-optimal time of the collective on the ranks'
/// links (`Collective::bandwidth_share` of the buffer at the slowest rank's line rate, payload
/// only), and their ratio.
fn jobs_table(net: &Network) -> Table {
    let steps = job_steps(net);
    let mut rows: Vec<(&crate::workload::Generator, u32, Time, Time)> = Vec::new();
    for &(gen, it, _, start, end) in &steps {
        match rows.last_mut() {
            Some(r) if std::ptr::eq(r.0, gen) && r.1 == it => {
                r.2 = r.2.min(start);
                r.3 = if r.3 == Time::MAX || end == Time::MAX { Time::MAX } else { r.3.max(end) };
            }
            _ => rows.push((gen, it, start, end)),
        }
    }
    let done = |r: &(&crate::workload::Generator, u32, Time, Time)| (r.3 < Time::MAX && r.2 < Time::MAX).then(|| r.3 - r.2);
    Table::default()
        .col("group", Column::labels(rows.iter().map(|r| &net.cx.measure.groups[r.0.group as usize].name)))
        .col("collective", Column::labels(rows.iter().map(|r| crate::scenario::variant_name(r.0.job_run().collective))))
        .col("cc", Column::labels(rows.iter().map(|r| net.cx.cfg.conns[r.0.conn as usize].cc.name())))
        .col("transport", Column::labels(rows.iter().map(|r| net.cx.cfg.conns[r.0.conn as usize].transport.kind())))
        .col("connections", Column::labels(rows.iter().map(|r| crate::scenario::variant_name(r.0.job_run().connections))))
        .col("ranks", rows.iter().map(|r| r.0.sources.len() as u32).collect::<Vec<_>>())
        .col("iteration", rows.iter().map(|r| r.1).collect::<Vec<_>>())
        .col("start_us", rows.iter().map(|r| (r.2 < Time::MAX).then(|| us(r.2))).collect::<Vec<_>>())
        .col("end_us", rows.iter().map(|r| (r.3 < Time::MAX).then(|| us(r.3))).collect::<Vec<_>>())
        .col("completion_us", rows.iter().map(|r| done(r).map(us)).collect::<Vec<_>>())
        .col("ideal_us", rows.iter().map(|r| us(r.0.job_run().ideal)).collect::<Vec<_>>())
        .col("slowdown", rows.iter().map(|r| done(r).map(|d| d.ps() as f64 / r.0.job_run().ideal.ps() as f64)).collect::<Vec<_>>())
}

/// One row per job, iteration and step: when its first transfer started and its last byte
/// arrived.
fn steps_table(net: &Network) -> Table {
    let steps = job_steps(net);
    Table::default()
        .col("group", Column::labels(steps.iter().map(|r| &net.cx.measure.groups[r.0.group as usize].name)))
        .col("iteration", steps.iter().map(|r| r.1).collect::<Vec<_>>())
        .col("step", steps.iter().map(|r| r.2).collect::<Vec<_>>())
        .col("start_us", steps.iter().map(|r| (r.3 < Time::MAX).then(|| us(r.3))).collect::<Vec<_>>())
        .col("end_us", steps.iter().map(|r| (r.4 < Time::MAX).then(|| us(r.4))).collect::<Vec<_>>())
}

/// One row per transfer of each connection matrix, by its id in the matrix: when it started,
/// when its sender had every byte acknowledged, when its receiver had every byte (NaN: not in
/// the run), its completion time.
fn transfers_table(net: &Network) -> Table {
    let mut rows: Vec<(String, &crate::workload::matrix::Transfer, [Time; 3])> = Vec::new();
    for (g, times) in net.cx.measure.transfers.iter().enumerate() {
        if let crate::workload::Kind::Matrix(m) = &net.hosts.generators[g].kind {
            let group = &net.cx.measure.groups[net.hosts.generators[g].group as usize].name;
            rows.extend(m.transfers.iter().zip(times).map(|(t, &at)| (group.clone(), t, at)));
        }
    }
    let at = |k: usize| rows.iter().map(|r| (r.2[k] < Time::MAX).then(|| us(r.2[k]))).collect::<Vec<_>>();
    Table::default()
        .col("group", Column::labels(rows.iter().map(|r| &r.0)))
        .col("id", rows.iter().map(|r| r.1.id).collect::<Vec<_>>())
        .col("src", rows.iter().map(|r| r.1.src).collect::<Vec<_>>())
        .col("dst", rows.iter().map(|r| r.1.dst).collect::<Vec<_>>())
        .col("size_bytes", rows.iter().map(|r| r.1.size).collect::<Vec<_>>())
        .col("start_us", at(0))
        .col("send_done_us", at(1))
        .col("recv_done_us", at(2))
        .col("fct_us", rows.iter().map(|r| (r.2[2] < Time::MAX).then(|| us(r.2[2] - r.2[0]))).collect::<Vec<_>>())
}

/// A message flow's in-flight integral (byte·ps) from the warm-up to the end; `None` for
/// a window flow.
fn inflight_area(net: &Network, f: &crate::host::flow::Flow) -> Option<u128> {
    let m = f.message_tx()?;
    let since = f.stats.inflight_since.max(net.cx.cfg.warmup);
    Some(f.stats.inflight_area + m.outstanding_bytes() as u128 * (net.cx.end.ps().saturating_sub(since.ps())) as u128)
}

/// Per traffic group: the RPC latency distribution with the RPCs still open at the end
/// counted at their age (right-censored: their latency is at least that), the sum of all
/// those latencies, and how many were open. RPCs issued before the warm-up are left out.
fn rpc_latencies(net: &Network) -> Vec<(Histogram<u64>, Time, u64)> {
    let mut out: Vec<(Histogram<u64>, Time, u64)> = net.cx.measure.groups.iter().map(|g| (g.rpc_latency.clone(), g.rpc_latency_sum, 0)).collect();
    for (_, f) in net.hosts.flows.rx.iter() {
        let Some(msgs) = &f.messages else { continue };
        for m in msgs.queue.iter().filter(|m| m.issued >= net.cx.cfg.warmup) {
            let age = net.cx.now - m.issued;
            let g = &mut out[f.group as usize];
            g.0.record(age.ps() / 1000).expect("auto-resizing histogram");
            g.1 += age;
            g.2 += 1;
        }
    }
    out
}

/// Seconds measured (after the warm-up), the denominator of every rate.
fn measured_s(net: &Network) -> f64 {
    (net.cx.end - net.cx.cfg.warmup).as_secs()
}

/// One row per listed connection.
fn flows_table(net: &Network) -> Table {
    let secs = measured_s(net);
    let f = net.hosts.flows.listed();
    let ids: Vec<u32> = (0..f.len() as u32).collect();
    let m: Vec<rttlab_cc::Metrics> = f.iter().map(|x| x.cc_metrics()).collect();
    Table::default()
        .col("flow", ids)
        .col("group", f.iter().map(|x| x.group).collect::<Vec<_>>())
        .col("src", f.iter().map(|x| x.src).collect::<Vec<_>>())
        .col("dst", f.iter().map(|x| x.dst).collect::<Vec<_>>())
        .col("class", f.iter().map(|x| x.class).collect::<Vec<_>>())
        .col("start_us", f.iter().map(|x| us(x.start)).collect::<Vec<_>>())
        .col("stop_us", f.iter().map(|x| (x.stop < Time::MAX).then(|| us(x.stop))).collect::<Vec<_>>())
        .col("bytes_sent", f.iter().map(|x| x.stats.tx_bytes).collect::<Vec<_>>())
        .col("bytes_delivered", f.iter().map(|x| x.stats.delivered_bytes).collect::<Vec<_>>())
        .col("goodput_gbps", f.iter().map(|x| x.stats.measured_bytes as f64 * 8.0 / secs / 1e9).collect::<Vec<_>>())
        .col("rtt_samples", f.iter().map(|x| x.stats.rtt_samples).collect::<Vec<_>>())
        .col("rtt_avg_us", f.iter().map(|x| (x.stats.rtt_samples > 0).then(|| x.stats.rtt_sum as f64 / x.stats.rtt_samples as f64 / 1e6)).collect::<Vec<_>>())
        .col("finish_us", f.iter().map(|x| x.stats.finish.map(us)).collect::<Vec<_>>())
        .col("retransmits", f.iter().map(|x| x.stats.retransmits).collect::<Vec<_>>())
        .col("timeouts", f.iter().map(|x| x.stats.timeouts).collect::<Vec<_>>())
        .col("acks", f.iter().map(|x| x.stats.acks).collect::<Vec<_>>())
        .col("naks", f.iter().map(|x| x.stats.naks).collect::<Vec<_>>())
        .col("trims", f.iter().map(|x| x.stats.trims).collect::<Vec<_>>())
        .col("repaths", f.iter().map(|x| x.stats.repaths).collect::<Vec<_>>())
        .col("reordered", f.iter().map(|x| x.stats.reordered).collect::<Vec<_>>())
        .col("spurious_retransmits", f.iter().map(|x| x.stats.spurious_retransmits).collect::<Vec<_>>())
        .col("bytes_duplicate", f.iter().map(|x| x.stats.duplicate_bytes).collect::<Vec<_>>())
        .col("drops", f.iter().map(|x| x.stats.drops).collect::<Vec<_>>())
        .col("drops_down", f.iter().map(|x| x.stats.drops_down).collect::<Vec<_>>())
        .col("drops_silent", f.iter().map(|x| x.stats.drops_silent).collect::<Vec<_>>())
        .col("retransmitted_bytes", f.iter().map(|x| x.stats.retransmitted_bytes).collect::<Vec<_>>())
        .col("outage_us", f.iter().map(|x| outage(net, x).map(us)).collect::<Vec<_>>())
        .col("ecn_echoed_bytes", f.iter().map(|x| x.stats.ecn_echoed_bytes).collect::<Vec<_>>())
        .col("inflight_avg_bytes", f.iter().map(|x| inflight_area(net, x).map(|a| a as f64 / 1e12 / secs)).collect::<Vec<_>>())
        .col("segments", f.iter().map(|x| x.message_tx().map(|m| m.wait.segments)).collect::<Vec<_>>())
        .col("segments_below_line_rate", f.iter().map(|x| x.message_tx().map(|m| m.wait.below_line_rate)).collect::<Vec<_>>())
        .col("rate_wait_us", f.iter().map(|x| x.message_tx().map(|m| us(m.wait.rate_wait))).collect::<Vec<_>>())
        .col("host_queue_avg_bytes", f.iter().map(|x| x.message_tx().and_then(|m| m.host_queue_avg_bytes(net.cx.end))).collect::<Vec<_>>())
        .col("cc_rate_gbps", f.iter().map(|x| x.rate().as_gbps()).collect::<Vec<_>>())
        .col("at_min_rate", m.iter().map(|x| x.at_min_rate.map(u64::from)).collect::<Vec<_>>())
        .col("cwnd_bytes", m.iter().map(|x| x.cwnd_bytes).collect::<Vec<_>>())
        .col("dctcp_alpha", m.iter().map(|x| x.dctcp_alpha).collect::<Vec<_>>())
        .col("fcwnd_pkts", m.iter().map(|x| x.fcwnd_pkts).collect::<Vec<_>>())
        .col("ecwnd_pkts", m.iter().map(|x| x.ecwnd_pkts).collect::<Vec<_>>())
}

/// The RTT distribution: each recorded value, its count and the cumulative fraction.
fn rtt_table(net: &Network) -> Table {
    let total = net.cx.measure.rtt_hist.len().max(1) as f64;
    let mut cum = 0u64;
    let (mut rtt_us, mut count, mut cdf) = (vec![], vec![], vec![]);
    for v in net.cx.measure.rtt_hist.iter_recorded() {
        cum += v.count_at_value();
        rtt_us.push(v.value_iterated_to() as f64 / 1e3);
        count.push(v.count_at_value());
        cdf.push(cum as f64 / total);
    }
    Table::default().col("rtt_us", rtt_us).col("count", count).col("cdf", cdf)
}

/// Per sampled port: occupancy statistics; and every sample, when traced.
fn queue_tables(net: &Network) -> (Table, Table) {
    let s = &net.cx.measure.samplers;
    let queue_stats = Table::default()
        .col("port", Column::labels(s.iter().map(|x| &x.name)))
        .col("samples", s.iter().map(|x| x.hist.len()).collect::<Vec<_>>())
        .col("avg_kb", s.iter().map(|x| x.hist.mean() / 1e3).collect::<Vec<_>>())
        .col("p50_kb", s.iter().map(|x| x.hist.value_at_quantile(0.5) as f64 / 1e3).collect::<Vec<_>>())
        .col("p99_kb", s.iter().map(|x| x.hist.value_at_quantile(0.99) as f64 / 1e3).collect::<Vec<_>>())
        .col("max_kb", s.iter().map(|x| x.hist.max() as f64 / 1e3).collect::<Vec<_>>());
    let (mut qt, mut qp, mut qb) = (vec![], vec![], vec![]);
    for (i, x) in s.iter().enumerate() {
        for &(t, b) in x.trace.iter().flatten() {
            qt.push(us(t));
            qp.push(i as u32);
            qb.push(b);
        }
    }
    let port = Column::Labels { codes: qp, names: s.iter().map(|x| x.name.clone()).collect() };
    (queue_stats, Table::default().col("time_us", qt).col("port", port).col("bytes", qb))
}

/// Per port and priority class, from the warm-up on: packets and bytes sent, drops and
/// ECN marks of packets routed to it, PFC frames it sent (its ingress) and received (its
/// egress) and the time its egress was paused, and its occupancy — time-weighted mean (also
/// as the time the port takes to send it, `queue_delay_avg_us`) and
/// peak for every port; the 99th percentile of the `queue_interval` samples where the port
/// is sampled (`measure.queue_ports`), NaN elsewhere. A host port's occupancy includes the
/// segments its NIC holds.
fn ports_table(net: &Network) -> Table {
    let secs = measured_s(net);
    let end = net.cx.end;
    let mut rows: Vec<(u32, usize, ClassStats)> = Vec::new();
    for (i, port) in net.fabric.port_views().enumerate() {
        let now = port.stats_at(end);
        for (c, st) in now.iter().enumerate() {
            let before = net.cx.measure.ports_at_warmup.get(i).map_or_else(ClassStats::default, |w| w[c]);
            rows.push((i as u32, c, st.since(&before)));
        }
    }
    let names = port_names(net);
    let p99 = |&(p, c, _): &(u32, usize, ClassStats)| {
        let sampler = net.fabric.ports[p as usize].sampler()?;
        quantile(&net.cx.measure.samplers[sampler as usize].class_hist[c], 0.99, 1e3)
    };
    let col = |f: fn(&ClassStats) -> u64| rows.iter().map(|r| f(&r.2)).collect::<Vec<_>>();
    Table::default()
        .col("port", Column::Labels { codes: rows.iter().map(|r| r.0).collect(), names })
        .col("class", rows.iter().map(|r| r.1 as u8).collect::<Vec<_>>())
        .col("rate_gbps", rows.iter().map(|r| net.fabric.ports[r.0 as usize].rate.as_gbps()).collect::<Vec<_>>())
        .col("tx_packets", col(|s| s.tx_packets))
        .col("tx_bytes", col(|s| s.tx_bytes))
        .col("tx_payload_bytes", col(|s| s.tx_payload_bytes))
        .col("utilization", rows.iter().map(|r| r.2.tx_bytes as f64 * 8.0 / secs / net.fabric.ports[r.0 as usize].rate.bps() as f64).collect::<Vec<_>>())
        .col("drops", col(|s| s.counts.drops))
        .col("trims", col(|s| s.counts.trims))
        .col("lost_down", col(|s| s.counts.lost_down))
        .col("lost_silent", col(|s| s.counts.lost_silent))
        .col("ecn_marks", col(|s| s.counts.ecn_marks))
        .col("pauses_sent", col(|s| s.counts.pauses_sent))
        .col("resumes_sent", col(|s| s.counts.resumes_sent))
        .col("pfc_received", col(|s| s.counts.pfc_received))
        .col("paused_us", rows.iter().map(|r| us(r.2.counts.paused)).collect::<Vec<_>>())
        .col("paused_fraction", rows.iter().map(|r| r.2.counts.paused.as_secs() / secs).collect::<Vec<_>>())
        .col("queue_avg_kb", rows.iter().map(|r| r.2.queue_area as f64 / 1e12 / secs / 1e3).collect::<Vec<_>>())
        .col(
            "queue_delay_avg_us",
            rows.iter().map(|r| r.2.queue_area as f64 / 1e12 / secs * 8.0 / net.fabric.ports[r.0 as usize].rate.bps() as f64 * 1e6).collect::<Vec<_>>(),
        )
        .col("queue_p99_kb", rows.iter().map(p99).collect::<Vec<_>>())
        .col("queue_max_kb", rows.iter().map(|r| r.2.queue_max as f64 / 1e3).collect::<Vec<_>>())
}

/// Every port's name, by port index (the labels of the port columns).
fn port_names(net: &Network) -> Vec<String> {
    (0..net.fabric.ports.len() as u32).map(|p| port_name(&net.fabric.graph, &net.fabric.ports, PortId(p))).collect()
}

/// `measure.pfc_trace`: every PFC frame as it reached the egress it pauses or resumes.
fn pfc_table(net: &Network) -> Table {
    let t = net.cx.measure.pfc_trace.as_deref().unwrap_or_default();
    let names = port_names(net);
    Table::default()
        .col("time_us", t.iter().map(|x| us(x.0)).collect::<Vec<_>>())
        .col("port", Column::Labels { codes: t.iter().map(|x| x.1 .0).collect(), names })
        .col("class", t.iter().map(|x| x.2).collect::<Vec<_>>())
        .col("event", Column::labels(t.iter().map(|x| if x.3 { "pause" } else { "resume" })))
}

/// Per traffic group: flows, offered and delivered load, the mean and Jain's index of its
/// listed connections' goodputs (`[[flows]]` groups), RPCs (latencies counting the ones
/// still open at their age, `rpcs_censored` of them) and pings.
fn groups_table(net: &Network) -> Table {
    let secs = measured_s(net);
    let g = &net.cx.measure.groups;
    let rpcs = rpc_latencies(net);
    let mut goodputs: Vec<Vec<f64>> = vec![Vec::new(); g.len()];
    for f in net.hosts.flows.listed() {
        goodputs[f.group as usize].push(f.stats.measured_bytes as f64 * 8.0 / secs / 1e9);
    }
    let mean = |v: &Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    Table::default()
        .col("group", Column::labels(g.iter().map(|x| &x.name)))
        .col("kind", Column::labels(g.iter().map(|x| x.kind)))
        .col("flows_started", g.iter().map(|x| x.flows_started).collect::<Vec<_>>())
        .col("flows_finished", g.iter().map(|x| x.flows_finished).collect::<Vec<_>>())
        .col("offered_gbps", g.iter().map(|x| x.offered_bytes as f64 * 8.0 / secs / 1e9).collect::<Vec<_>>())
        .col("goodput_gbps", g.iter().map(|x| x.delivered_bytes as f64 * 8.0 / secs / 1e9).collect::<Vec<_>>())
        .col("goodput_per_flow_gbps", goodputs.iter().map(mean).collect::<Vec<_>>())
        .col("jain", goodputs.iter().map(|v| (!v.is_empty()).then(|| jain(v))).collect::<Vec<_>>())
        .col("rpcs_issued", g.iter().map(|x| x.rpcs_issued).collect::<Vec<_>>())
        .col("rpcs_completed", g.iter().map(|x| x.rpcs_completed).collect::<Vec<_>>())
        .col("rpcs_refused", g.iter().map(|x| x.rpcs_refused).collect::<Vec<_>>())
        .col("flows_refused", g.iter().map(|x| x.flows_refused).collect::<Vec<_>>())
        .col("rpcs_censored", rpcs.iter().map(|x| x.2).collect::<Vec<_>>())
        .col("rpc_avg_us", rpcs.iter().map(|x| (!x.0.is_empty()).then(|| us(x.1) / x.0.len() as f64)).collect::<Vec<_>>())
        .col("rpc_p50_us", rpcs.iter().map(|x| quantile(&x.0, 0.5, 1e3)).collect::<Vec<_>>())
        .col("rpc_p99_us", rpcs.iter().map(|x| quantile(&x.0, 0.99, 1e3)).collect::<Vec<_>>())
        .col("pings_sent", g.iter().map(|x| x.pings_sent).collect::<Vec<_>>())
        .col("pings_refused", g.iter().map(|x| x.pings_refused).collect::<Vec<_>>())
        .col("ping_samples", g.iter().map(|x| x.ping_rtt.len()).collect::<Vec<_>>())
        .col("ping_p50_us", g.iter().map(|x| quantile(&x.ping_rtt, 0.5, 1e3)).collect::<Vec<_>>())
        .col("ping_p99_us", g.iter().map(|x| quantile(&x.ping_rtt, 0.99, 1e3)).collect::<Vec<_>>())
}

/// Per connection and sampling instant. Counters (`retransmits`, `drops`,
/// `ecn_echoed_bytes`) are cumulative from the connection's start; `inflight_bytes` is the
/// message transport's outstanding payload at the instant.
/// `delivered_gbps` is the payload delivered since the connection's previous sample (or
/// since one interval before its first) per interval; `cc_rate_gbps` is what its rate
/// controller asked for at the sampling instant.
fn timeseries_table(net: &Network, ts: TimeSeries) -> Table {
    let interval_s = net.cx.cfg.timeseries_interval.map_or(1.0, |t| t.as_secs());
    let number: std::collections::HashMap<u32, u32> = net.hosts.flows.listed().iter().enumerate().map(|(n, f)| (f.id, n as u32)).collect();
    // Each row's flow by its number in the flows table (one lookup a row), and what it had
    // delivered at its previous row.
    let flow: Vec<u32> = ts.flow.iter().map(|f| number[f]).collect();
    let mut last = vec![0u64; number.len()];
    let delivered_gbps: Vec<f64> =
        flow.iter().zip(&ts.delivered_bytes).map(|(&n, &d)| (d - std::mem::replace(&mut last[n as usize], d)) as f64 * 8.0 / interval_s / 1e9).collect();
    Table::default()
        .col("time_us", ts.time.iter().map(|&t| us(t)).collect::<Vec<_>>())
        .col("flow", flow)
        .col("delivered_bytes", ts.delivered_bytes)
        .col("delivered_gbps", delivered_gbps)
        .col("cc_rate_gbps", ts.rate_bps.iter().map(|&r| r as f64 / 1e9).collect::<Vec<_>>())
        .col("at_min_rate", ts.at_min_rate.iter().map(|x| x.map(u64::from)).collect::<Vec<_>>())
        .col("cwnd_bytes", ts.cwnd_bytes)
        .col("fcwnd_pkts", ts.fcwnd)
        .col("ecwnd_pkts", ts.ecwnd)
        .col("rtt_us", ts.rtt.iter().map(|t| t.map(us)).collect::<Vec<_>>())
        .col("inflight_bytes", ts.inflight_bytes)
        .col("retransmits", ts.retransmits)
        .col("drops", ts.drops)
        .col("ecn_echoed_bytes", ts.ecn_echoed_bytes)
}

/// Per group with sized flows and per size bucket (then "all"): flows finished, FCT and
/// slowdown quantiles.
/// Per group with sized flows and size bucket: the flows that finished (`flows`, which the FCT
/// and slowdown quantiles describe) of those started after the warm-up (`flows_started`).
fn fct_table(net: &Network) -> Table {
    let edges = &net.cx.measure.fct_buckets;
    let (mut group, mut bucket, mut lo_col, mut hi_col, mut flows, mut censored, mut started) = (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut q: [Vec<Option<f64>>; 6] = Default::default();
    let with_censored = fct_censored(net);
    for (g, c) in net.cx.measure.groups.iter().zip(&with_censored).filter(|(g, _)| g.sized_started.last().is_some_and(|&n| n > 0)) {
        for (b, (fct, slow)) in c.fct.iter().zip(&c.slowdown).enumerate() {
            let all = b == edges.len() + 1;
            let lo = if all || b == 0 { 0 } else { edges[b - 1] };
            let hi = if all || b == edges.len() { None } else { Some(edges[b]) };
            group.push(&g.name);
            bucket.push(if all { "all".to_string() } else { format!("{}-{}", lo, hi.map_or("inf".into(), |h| h.to_string())) });
            lo_col.push(lo);
            hi_col.push(hi);
            flows.push(g.fct[b].len());
            censored.push(c.censored[b]);
            started.push(g.sized_started[b]);
            for (i, (h, p)) in [(fct, 0.5), (fct, 0.95), (fct, 0.99), (slow, 0.5), (slow, 0.95), (slow, 0.99)].into_iter().enumerate() {
                q[i].push(quantile(h, p, 1e3));
            }
        }
    }
    let [fct_p50, fct_p95, fct_p99, slow_p50, slow_p95, slow_p99] = q;
    Table::default()
        .col("group", Column::labels(group))
        .col("bucket", Column::labels(bucket))
        .col("size_min_bytes", lo_col)
        .col("size_max_bytes", hi_col)
        .col("flows", flows)
        .col("flows_censored", censored)
        .col("flows_started", started)
        .col("fct_p50_us", fct_p50)
        .col("fct_p95_us", fct_p95)
        .col("fct_p99_us", fct_p99)
        .col("slowdown_p50", slow_p50)
        .col("slowdown_p95", slow_p95)
        .col("slowdown_p99", slow_p99)
}

/// The sized flows the FCT statistics count that were still under way at the end, each with
/// its age as its FCT (right-censored: its FCT is at least that), and the payload it delivered.
fn under_way(net: &Network) -> impl Iterator<Item = (FlowRecord, u64)> + '_ {
    let (end, cfg) = (net.cx.end, &net.cx.cfg);
    net.hosts.flows.views().filter(|x| x.open && x.ephemeral.is_some() && x.stats.size.is_some() && x.stats.finish.is_none()).filter_map(move |x| {
        if x.start < cfg.warmup || x.start >= cfg.fct_until || x.start > end {
            return None;
        }
        let outage = outage(net, &x).unwrap_or(Time::ZERO);
        let st = &x.stats;
        let record =
            FlowRecord { group: x.group, src: x.src, dst: x.dst, size: st.size.unwrap_or(0), start: x.start, fct: end - x.start, ideal: x.ideal, outage };
        Some((record, st.delivered_bytes))
    })
}

/// Per group, its FCT and slowdown histograms (laid out as [`crate::report::stats::GroupStats::fct`]) with the flows
/// under way at the end counted at the lower bound their age gives (their age, and at least
/// their ideal FCT: percentiles of lower bounds are lower bounds of the percentiles), and how many of those there are per bucket: FCT
/// statistics of finished flows alone flatter a run whose slowest flows never finished.
fn fct_censored(net: &Network) -> Vec<FctCensored> {
    let edges = &net.cx.measure.fct_buckets;
    let mut out: Vec<FctCensored> =
        net.cx.measure.groups.iter().map(|g| FctCensored { fct: g.fct.clone(), slowdown: g.slowdown.clone(), censored: vec![0; g.fct.len()] }).collect();
    for (x, _) in under_way(net) {
        let g = &mut out[x.group as usize];
        // An FCT is never below the ideal: that is the bound for a flow younger than it.
        record_fct_into(&mut g.fct, &mut g.slowdown, edges, x.size, x.fct.max(x.ideal), x.ideal);
        for i in buckets_of(g.censored.len(), edges, x.size) {
            g.censored[i] += 1;
        }
    }
    out
}

/// A group's FCT statistics with its censored flows (`fct_censored`).
struct FctCensored {
    fct: Vec<Histogram<u64>>,
    slowdown: Vec<Histogram<u64>>,
    censored: Vec<u64>,
}

/// The workload flows counted for FCT (`measure.flow_records`): each finished one, then those
/// still under way at the end (`finished` false, no FCT; their slowdown the lower bound their
/// age gives, at least 1; their outage runs to the end), by completion (or the end), sender and start: an
/// order however the network was cut.
fn flow_records_table(net: &Network) -> Table {
    let Some(done) = &net.cx.measure.flow_records else { return flow_records_columns(net, Vec::new()) };
    let mut r: Vec<(FlowRecord, bool, u64)> = done.iter().map(|x| (*x, true, x.size)).collect();
    r.extend(under_way(net).map(|(x, delivered)| (x, false, delivered)));
    r.sort_by_key(|(x, ..)| (x.start + x.fct, x.src, x.start, x.dst, x.size));
    flow_records_columns(net, r)
}

fn flow_records_columns(net: &Network, r: Vec<(FlowRecord, bool, u64)>) -> Table {
    Table::default()
        .col("group", Column::labels(r.iter().map(|x| &net.cx.measure.groups[x.0.group as usize].name)))
        .col("src", r.iter().map(|x| x.0.src).collect::<Vec<_>>())
        .col("dst", r.iter().map(|x| x.0.dst).collect::<Vec<_>>())
        .col("size_bytes", r.iter().map(|x| x.0.size).collect::<Vec<_>>())
        .col("delivered_bytes", r.iter().map(|x| x.2).collect::<Vec<_>>())
        .col("start_us", r.iter().map(|x| us(x.0.start)).collect::<Vec<_>>())
        .col("finished", r.iter().map(|x| x.1 as u8).collect::<Vec<_>>())
        .col("fct_us", r.iter().map(|x| x.1.then(|| us(x.0.fct))).collect::<Vec<_>>())
        .col("age_us", r.iter().map(|x| us(x.0.fct)).collect::<Vec<_>>())
        .col("ideal_fct_us", r.iter().map(|x| us(x.0.ideal)).collect::<Vec<_>>())
        .col("slowdown", r.iter().map(|x| x.0.fct.max(x.0.ideal).ps() as f64 / x.0.ideal.ps().max(1) as f64).collect::<Vec<_>>())
        .col("outage_us", r.iter().map(|x| us(x.0.outage)).collect::<Vec<_>>())
}

/// Connection `x`'s longest time without delivery while it had data to send, to the run's
/// end (`FlowStats::outage`: a transfer not yet done has been without since its last
/// delivery); `None` for an RPC connection, whose gaps between messages are idle.
fn outage(net: &Network, x: &FlowView) -> Option<Time> {
    if net.hosts.flows.rx.get(x.id).is_some_and(|e| e.serial == x.serial && e.messages.is_some()) {
        return None;
    }
    let (st, end) = (&x.stats, net.cx.end);
    let under_way = st.finish.is_none() && x.start < end;
    let open_gap = if under_way { end.min(x.stop).saturating_sub(st.last_delivery.max(x.start)) } else { Time::ZERO };
    Some(st.outage.max(open_gap))
}

/// Everything a run returns.
pub struct Output {
    pub summary: Summary,
    pub tables: Tables,
    pub meta: Value,
    /// Packet captures (`measure.pcap`): each port's pcap file.
    pub captures: Vec<(String, Vec<u8>)>,
}

impl Output {
    pub fn to_json(&self) -> String {
        let (tables, dtypes) = tables_json(&self.tables);
        json!({"summary": self.summary, "tables": tables, "dtypes": dtypes, "meta": self.meta}).to_string()
    }
}

/// How fast a run went: wall-clock figures, kept out of the (deterministic) summary.
pub fn perf(net: &Network, wall_s: f64) -> Value {
    let events = net.events_processed();
    json!({
        "events": events,
        "wall_s": wall_s,
        "events_per_s": events as f64 / wall_s,
        "data_packets": net.data_packets_sent(),
        "data_packets_per_s": net.data_packets_sent() as f64 / wall_s,
        "simulated_s": net.cx.end.as_secs(),
        "sim_seconds_per_wall_second": net.cx.end.as_secs() / wall_s,
        "packet_slots": net.packet_high_water(),
        "events_pending_peak": net.events_pending_peak(),
        "flow_slots": net.hosts.flows.slots.len(),
        "route_entries": net.fabric.routing.table_entries(),
        "route_direct_entries": net.fabric.routing.direct_entries(),
    })
}

pub fn meta(s: &Scenario, perf: Value, warnings: Vec<String>) -> Value {
    json!({
        "rttlab_version": env!("CARGO_PKG_VERSION"),
        "seed": s.seed,
        "scenario": s.resolved(),
        "perf": perf,
        "warnings": warnings,
    })
}

/// What makes this run's results doubtful or incomplete, in words for the user.
pub(crate) fn warnings(net: &Network, summary: &Summary) -> Vec<String> {
    let mut out = summary.warnings();
    for c in net.cx.measure.captures.iter().filter(|c| c.refused > 0) {
        out.push(format!(
            "the packet capture of {} kept its first {} packets (measure.pcap.max_packets, or its share of 1 GiB); {} later ones are not in it",
            c.name, c.packets, c.refused
        ));
    }
    if net.fabric.faults.is_some() {
        // Sized transfers that faults cost packets and that were stalled at the end, nothing
        // delivered for a retransmission timeout's floor (the lowest of the run's transports):
        // the run does not say when, or whether, they would have finished.
        let floor = (net.cx.cfg.conns.iter())
            .map(|c| match &c.transport {
                crate::scenario::TransportConfig::Window(w) => w.min_rto,
                crate::scenario::TransportConfig::Message { .. } => net.cx.cfg.retransmit_timeout,
            })
            .min()
            .unwrap_or(Time::MAX);
        let stalled = |x: &FlowView| net.cx.end.saturating_sub(x.stats.last_delivery.max(x.start)) >= floor;
        let hit: Vec<String> = net
            .hosts
            .flows
            .views()
            .filter(|x| x.open && x.stats.size.is_some() && x.stats.finish.is_none() && x.stats.drops_down + x.stats.drops_silent > 0 && stalled(x))
            .map(|x| format!("{}→{}", net.fabric.graph.node_name(x.src), net.fabric.graph.node_name(x.dst)))
            .collect();
        if !hit.is_empty() {
            let shown = if hit.len() > 5 { format!("{} and {} more", hit[..5].join(", "), hit.len() - 5) } else { hit.join(", ") };
            out.push(format!(
                "{} connections lost packets to faults and were stalled at the end, nothing delivered for a retransmission timeout or longer ({shown}): their paths may still cross a dead link (routing.failover_delay), which PRR (transport.prr) or spraying would leave",
                hit.len()
            ));
        }
    }
    out.extend(unfinished(net));
    if net.cx.measure.pfc_trace_refused > 0 {
        out.push(format!(
            "the PFC timeline (`pfc` table) stopped at {} frames: {} later frames are not in it (the counters in the ports table include them)",
            crate::scenario::MAX_TRACE_SAMPLES,
            net.cx.measure.pfc_trace_refused
        ));
    }
    out
}

/// What the run leaves undone of the traffic it waits for (`[[flows]]` with a size, connection
/// matrices, jobs), per group: its iterations not finished (a job's) and its sized transfers
/// under way at the end; and why where the run can tell. A message transport recovers a lost
/// tail by its retransmission timeout alone (nothing after it draws a NAK): one longer than the
/// run never fires in it (IRN, SIGCOMM'18, §3: RoCE NICs' default is milliseconds, IRN's
/// 320 µs).
fn unfinished(net: &Network) -> Option<String> {
    let end = net.cx.end;
    let rto = net.cx.cfg.retransmit_timeout;
    // Per group: transfers under way, and those of them that lost packets on a message
    // transport whose timeout cannot fire within the run.
    let mut under_way: std::collections::BTreeMap<u16, (u64, u64)> = Default::default();
    for x in net.hosts.flows.views().filter(|x| x.open && x.stats.size.is_some() && x.stats.finish.is_none() && x.start < end) {
        if x.ephemeral.is_some_and(|o| net.hosts.generators[o.generator as usize].transfers() == 0) {
            continue; // a workload's flows come and go: those under way are counted as censored
        }
        let e = under_way.entry(x.group).or_default();
        e.0 += 1;
        e.1 += (matches!(x.tx, Tx::Message(_)) && x.stats.drops > 0 && rto > end) as u64;
    }
    let mut iterations: std::collections::BTreeMap<u16, (u32, u32)> = Default::default();
    for (gen, it, _, _, step_end) in job_steps(net) {
        let e = iterations.entry(gen.group).or_insert((0, gen.job_run().iterations));
        if step_end == Time::MAX {
            e.0 = e.0.max(gen.job_run().iterations - it);
        }
    }
    let groups: std::collections::BTreeSet<u16> = under_way.keys().chain(iterations.iter().filter(|(_, n)| n.0 > 0).map(|(g, _)| g)).copied().collect();
    if groups.is_empty() {
        return None;
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|g| {
            let name = &net.cx.measure.groups[*g as usize].name;
            let its = iterations.get(g).filter(|n| n.0 > 0).map(|(n, of)| format!("{n} of {of} iterations"));
            let flows = under_way.get(g).map(|(n, _)| format!("{n} sized transfers under way"));
            format!("{name} ({})", its.into_iter().chain(flows).collect::<Vec<_>>().join(", "))
        })
        .collect();
    let mut msg = format!("did not finish in the run ({}): {}", end, parts.join("; "));
    let waiting: u64 = under_way.values().map(|v| v.1).sum();
    if waiting > 0 {
        msg += &format!(
            "; {waiting} of the transfers lost packets on the message transport, whose retransmission timeout (nic.retransmit_timeout = {rto}) is longer than the run: a lost tail is never resent; IRN's is 320us: set nic.retransmit_timeout = \"320us\""
        );
    }
    Some(msg)
}

impl Summary {
    /// What makes this run's results doubtful, in words for the user.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.refused > 0 {
            out.push(format!(
                "{} workload arrivals after the warm-up were refused because their source was at its backlog limit (max_active or max_pending): the load offered is less than configured; see `refused` in the groups table",
                self.refused
            ));
        }
        out
    }
}
