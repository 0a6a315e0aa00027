//! Streaming statistics with memory bounded by the network, not by the run length: histograms
//! (hdrhistogram) for RTTs and queue occupancy, counters, and Jain's fairness index. Raw series
//! are kept only where a scenario asks for them.

use crate::core::ids::PortId;
use hdrhistogram::Histogram;
use rttlab_cc::Time;

/// A histogram of values with 3 significant digits, auto-resizing up to the largest value seen.
pub fn histogram() -> Histogram<u64> {
    let mut h = Histogram::new(3).expect("3 significant digits is valid");
    h.auto(true);
    h
}

/// Samples one port's queue occupancy every `interval` without an event per sample: the
/// occupancy only changes at enqueue and dequeue, so each change first credits the samples that
/// fell since the previous change with the value that held over them. The histogram counts the
/// instants from `warmup` on; the trace, when kept, every instant. At a host port the
/// occupancy includes the segments its NIC holds (`ClassQueue::occupancy`).
pub struct QueueSampler {
    pub port: PortId,
    pub name: String,
    interval: Time,
    next: Time,
    warmup: Time,
    /// The port's occupancy over all classes, and per class.
    pub hist: Histogram<u64>,
    pub class_hist: Vec<Histogram<u64>>,
    pub trace: Option<Vec<(Time, u64)>>,
}

impl QueueSampler {
    pub fn new(port: PortId, name: String, interval: Time, warmup: Time, trace: bool, classes: usize) -> Self {
        let class_hist = (0..classes).map(|_| histogram()).collect();
        QueueSampler { port, name, interval, next: interval, warmup, hist: histogram(), class_hist, trace: trace.then(Vec::new) }
    }

    /// Records the occupancy that held until `now`, `classes` bytes per class, for every
    /// sample instant ≤ `now`.
    pub fn observe(&mut self, now: Time, classes: &[u64]) {
        if self.next > now {
            return;
        }
        let n = (now.ps() - self.next.ps()) / self.interval.ps() + 1;
        let before_warmup = match self.warmup.ps().checked_sub(self.next.ps()) {
            Some(d) => (d.div_ceil(self.interval.ps())).min(n),
            None => 0,
        };
        let bytes = classes.iter().sum();
        if n > before_warmup {
            self.hist.record_n(bytes, n - before_warmup).expect("auto-resizing histogram");
            for (h, &b) in self.class_hist.iter_mut().zip(classes) {
                h.record_n(b, n - before_warmup).expect("auto-resizing histogram");
            }
        }
        if let Some(t) = &mut self.trace {
            t.extend((0..n).map(|i| (Time(self.next.ps() + i * self.interval.ps()), bytes)));
        }
        self.next = Time(self.next.ps() + n * self.interval.ps());
    }
}

/// Streaming statistics of one traffic group: a `[[flows]]` group or a `[[workloads]]`
/// generator. Everything counts from the warm-up on: flows and RPCs that start after it, bytes
/// delivered after it.
pub struct GroupStats {
    /// `flows[i]` or `workloads[i]`, and the kind ("flows", "rpc", "flow_sizes", ...).
    pub name: String,
    pub kind: &'static str,
    pub flows_started: u64,
    pub flows_finished: u64,
    /// Payload the group's generator offered, and payload delivered.
    pub offered_bytes: u64,
    pub delivered_bytes: u64,
    /// Per size bucket (`measure.fct_buckets`, then the open last one, then all sizes): FCT in
    /// ns and slowdown (FCT / ideal FCT) in thousandths.
    pub fct: Vec<Histogram<u64>>,
    pub slowdown: Vec<Histogram<u64>>,
    /// Per size bucket as `fct`: sized flows started, finished or not (the FCT statistics
    /// count only those that finished).
    pub sized_started: Vec<u64>,
    pub rpcs_issued: u64,
    pub rpcs_completed: u64,
    pub rpcs_refused: u64,
    /// Workload flows and probes not started because their source was at its limit
    /// (`max_active`, `max_pending`).
    pub flows_refused: u64,
    pub pings_refused: u64,
    /// RPC latency in ns, and its exact sum.
    pub rpc_latency: Histogram<u64>,
    pub rpc_latency_sum: Time,
    pub pings_sent: u64,
    /// Ping round trips in ns.
    pub ping_rtt: Histogram<u64>,
}

impl GroupStats {
    /// Adds another partition's counts of the same group ([`crate::parallel`]); destructured so
    /// that a field added later needs its rule here.
    pub(crate) fn absorb(&mut self, o: &GroupStats) {
        let GroupStats {
            // The same group's: its name and kind are this one's.
            name: _,
            kind: _,
            flows_started,
            flows_finished,
            offered_bytes,
            delivered_bytes,
            fct,
            slowdown,
            sized_started,
            rpcs_issued,
            rpcs_completed,
            rpcs_refused,
            flows_refused,
            pings_refused,
            rpc_latency,
            rpc_latency_sum,
            pings_sent,
            ping_rtt,
        } = o;
        self.flows_started += flows_started;
        self.flows_finished += flows_finished;
        self.offered_bytes += offered_bytes;
        self.delivered_bytes += delivered_bytes;
        for (a, b) in self.fct.iter_mut().zip(fct).chain(self.slowdown.iter_mut().zip(slowdown)) {
            a.add(b).expect("auto-resizing histogram");
        }
        for (a, b) in self.sized_started.iter_mut().zip(sized_started) {
            *a += b;
        }
        self.rpcs_issued += rpcs_issued;
        self.rpcs_completed += rpcs_completed;
        self.rpcs_refused += rpcs_refused;
        self.flows_refused += flows_refused;
        self.pings_refused += pings_refused;
        self.rpc_latency.add(rpc_latency).expect("auto-resizing histogram");
        self.rpc_latency_sum += *rpc_latency_sum;
        self.pings_sent += pings_sent;
        self.ping_rtt.add(ping_rtt).expect("auto-resizing histogram");
    }

    pub fn new(name: String, kind: &'static str, buckets: usize) -> GroupStats {
        GroupStats {
            name,
            kind,
            flows_started: 0,
            flows_finished: 0,
            offered_bytes: 0,
            delivered_bytes: 0,
            fct: (0..buckets + 2).map(|_| histogram()).collect(),
            slowdown: (0..buckets + 2).map(|_| histogram()).collect(),
            sized_started: vec![0; buckets + 2],
            rpcs_issued: 0,
            rpcs_completed: 0,
            rpcs_refused: 0,
            flows_refused: 0,
            pings_refused: 0,
            rpc_latency: histogram(),
            rpc_latency_sum: Time::ZERO,
            pings_sent: 0,
            ping_rtt: histogram(),
        }
    }

    /// A flow started: of `size` bytes, if sized and counted by the FCT statistics.
    pub fn record_start(&mut self, buckets: &[u64], size: Option<u64>) {
        self.flows_started += 1;
        if let Some(size) = size {
            for i in buckets_of(self.sized_started.len(), buckets, size) {
                self.sized_started[i] += 1;
            }
        }
    }

    /// A flow of `size` bytes finished in `fct`; alone it would have taken `ideal`.
    pub fn record_fct(&mut self, buckets: &[u64], size: u64, fct: Time, ideal: Time) {
        self.flows_finished += 1;
        record_fct_into(&mut self.fct, &mut self.slowdown, buckets, size, fct, ideal);
    }
}

/// Records an FCT of `fct` (alone: `ideal`) of a flow of `size` bytes into per-bucket FCT and
/// slowdown histograms laid out as [`GroupStats::fct`]: its bucket of `buckets` (edges; past the
/// last, the open one) and all sizes.
pub(crate) fn record_fct_into(fcts: &mut [Histogram<u64>], slowdowns: &mut [Histogram<u64>], buckets: &[u64], size: u64, fct: Time, ideal: Time) {
    let slowdown = (fct.ps() as u128 * 1000 / ideal.ps().max(1) as u128) as u64;
    for i in buckets_of(fcts.len(), buckets, size) {
        fcts[i].record(ns(fct)).expect("auto-resizing histogram");
        slowdowns[i].record(slowdown.max(1)).expect("auto-resizing histogram");
    }
}

/// The statistics' indices a flow of `size` bytes counts in among `n` (its bucket, all sizes).
pub(crate) fn buckets_of(n: usize, buckets: &[u64], size: u64) -> [usize; 2] {
    [buckets.partition_point(|&edge| edge < size), n - 1]
}

/// A time in whole nanoseconds (rounded up, at least 1) for a histogram.
pub fn ns(t: Time) -> u64 {
    t.ps().div_ceil(1000).max(1)
}

/// One finished workload flow (`measure.flow_records`).
#[derive(Clone, Copy, Debug)]
pub struct FlowRecord {
    pub group: u16,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: Time,
    pub fct: Time,
    pub ideal: Time,
    /// Its longest time without delivery (`FlowStats::outage`; kept by its receiver, which
    /// records it).
    pub outage: Time,
}

/// Jain's fairness index (Σx)² / (n·Σx²); 1 when all equal (algorithms.md "Global conventions").
pub fn jain(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if s2 == 0.0 {
        return 1.0;
    }
    s * s / (n * s2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), 1.0);
        assert!((jain(&[1.0, 0.0]) - 0.5).abs() < 1e-12);
        assert!((jain(&[3.0, 1.0]) - 16.0 / 20.0).abs() < 1e-12);
    }

    #[test]
    fn sampler_credits_each_instant_once() {
        let mut s = QueueSampler::new(PortId(0), "p".into(), Time(10), Time(20), true, 2);
        s.observe(Time(5), &[7, 0]); // no instant yet
        s.observe(Time(30), &[5, 2]); // instants 10, 20, 30 held 7
        s.observe(Time(35), &[100, 0]); // none
        s.observe(Time(40), &[0, 100]); // instant 40
        let t = s.trace.unwrap();
        assert_eq!(t, vec![(Time(10), 7), (Time(20), 7), (Time(30), 7), (Time(40), 100)]);
        // The histogram starts at the warm-up's end: instants 20, 30, 40.
        assert_eq!(s.hist.len(), 3);
        assert_eq!(s.hist.max(), 100);
        assert_eq!((s.class_hist[0].max(), s.class_hist[1].max()), (5, 100));
    }
}
