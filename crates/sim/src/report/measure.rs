//! What a run measures as it goes: per-group statistics, the RTT histogram, queue samplers,
//! packet captures, the PFC timeline, time series and whole-network counters. Bounded by the
//! network, not the run's length, unless a scenario asks for traces.

use crate::core::ids::PortId;
use crate::fabric::port::ClassStats;
use crate::fabric::Fabric;
use crate::report::capture::Capture;
use crate::report::stats::{histogram, FlowRecord, GroupStats, QueueSampler};
use crate::scenario::{Scenario, ScenarioError, MAX_CAPTURE_BYTES, MAX_TRACE_SAMPLES};
use hdrhistogram::Histogram;
use rttlab_cc::Time;

/// What the run measures as it goes.
pub(crate) struct Measurements {
    /// Per traffic group: the `[[flows]]` groups, then the `[[workloads]]` generators.
    pub groups: Vec<GroupStats>,
    pub fct_buckets: Vec<u64>,
    pub flow_records: Option<Vec<FlowRecord>>,
    pub rtt_hist: Histogram<u64>,
    pub samplers: Vec<QueueSampler>,
    pub timeseries: TimeSeries,
    /// Counters as they stood when the warm-up ended, overall and per port.
    pub at_warmup: Counters,
    pub ports_at_warmup: Vec<Vec<ClassStats>>,
    /// `measure.pfc_trace`: every PFC frame as it reached the egress it pauses or resumes
    /// (time, port, class, pause), up to `MAX_TRACE_SAMPLES`; the frames beyond are counted.
    pub pfc_trace: Option<Vec<(Time, PortId, u8, bool)>>,
    pub pfc_trace_refused: u64,
    /// `measure.pcap`: one capture per port named.
    pub captures: Vec<Capture>,
    /// Data packets sent (first transmissions and retransmissions), and dropped anywhere.
    pub data_sent: u64,
    pub data_drops: u64,
    /// Payload of packets lost to faults (`[[faults]]`), where each was lost.
    pub lost_payload: u64,
    /// Drop notices on their way to senders (`EventKind::Dropped`): sent here less handled
    /// here, so that the partitions' sum is those pending.
    pub drop_notices: i64,
    /// Per `[[workloads]]` entry, per transfer of a connection matrix (empty for other
    /// kinds): when it started, its sender had everything acknowledged, and its receiver had
    /// every byte (`Time::MAX`: not yet).
    pub transfers: Vec<Vec<[Time; 3]>>,
    /// Per generator, a `[[jobs]]` entry's steps by iteration × steps + step (empty for
    /// `[[workloads]]`).
    pub steps: Vec<Vec<StepSpan>>,
}

/// A job's step: when its first transfer started and its last arrived, and how many have
/// arrived (each counted by the partition of the host where it happens, summed).
#[derive(Copy, Clone, Debug)]
pub struct StepSpan {
    pub start: Time,
    pub end: Time,
    pub arrived: u64,
}

impl Default for StepSpan {
    fn default() -> Self {
        StepSpan { start: Time::MAX, end: Time::ZERO, arrived: 0 }
    }
}

impl Measurements {
    /// The groups' statistics and a queue sampler on each sampled port.
    pub fn new(s: &Scenario, fabric: &mut Fabric) -> Result<Measurements, ScenarioError> {
        let buckets = s.measure.fct_buckets.len();
        let flows = s.flows.iter().enumerate().map(|(i, g)| GroupStats::new(g.name.clone().unwrap_or_else(|| format!("flows[{i}]")), "flows", buckets));
        let workloads = s.workloads.iter().enumerate().map(|(w, cfg)| GroupStats::new(format!("workloads[{w}]"), cfg.kind(), buckets));
        let jobs = (0..s.jobs.len()).map(|j| GroupStats::new(format!("jobs[{j}]"), "job", buckets));
        let mut samplers = Vec::new();
        for (p, name) in fabric.sampled_ports(s)? {
            fabric.ports[p.idx()].set_sampler(samplers.len() as u32);
            samplers.push(QueueSampler::new(p, name, s.measure.queue_interval, s.warmup, s.measure.queue_trace, s.switch.classes as usize));
        }
        let mut captures = Vec::new();
        if let Some(pcap) = &s.measure.pcap {
            for (i, name) in pcap.ports.iter().enumerate() {
                let p = fabric.port_named(name, &format!("measure.pcap.ports[{i}]"))?;
                if fabric.ports[p.idx()].capture().is_some() {
                    return Err(ScenarioError::Invalid { field: format!("measure.pcap.ports[{i}]"), value: name.clone(), allowed: "each port once".into() });
                }
                fabric.ports[p.idx()].set_capture(captures.len() as u32);
                let share = MAX_CAPTURE_BYTES / pcap.ports.len() as u64;
                captures.push(Capture::new(p, name.clone(), pcap.snaplen.0 as u32, pcap.max_packets, share));
            }
        }
        Ok(Measurements {
            groups: flows.chain(workloads).chain(jobs).collect(),
            fct_buckets: s.measure.fct_buckets.iter().map(|b| b.0).collect(),
            flow_records: s.measure.flow_records.then(Vec::new),
            rtt_hist: histogram(),
            samplers,
            timeseries: TimeSeries::default(),
            at_warmup: Counters::default(),
            ports_at_warmup: Vec::new(),
            pfc_trace: s.measure.pfc_trace.then(Vec::new),
            pfc_trace_refused: 0,
            captures,
            data_sent: 0,
            data_drops: 0,
            lost_payload: 0,
            drop_notices: 0,
            transfers: s
                .workloads
                .iter()
                .map(|w| match w {
                    crate::scenario::Workload::Matrix(c) => vec![[Time::MAX; 3]; c.matrix.transfers.len()],
                    _ => Vec::new(),
                })
                .collect(),
            // Each `[[jobs]]` entry's, after the workloads' (`Network::new`).
            steps: vec![Vec::new(); s.workloads.len()],
        })
    }
}

impl Measurements {
    /// Notes a PFC frame that reached egress `port` at `now`, when the PFC timeline is kept.
    pub fn record_pfc(&mut self, now: Time, port: PortId, class: u8, pause: bool) {
        if let Some(t) = &mut self.pfc_trace {
            if (t.len() as u64) < MAX_TRACE_SAMPLES {
                t.push((now, port, class, pause));
            } else {
                self.pfc_trace_refused += 1;
            }
        }
    }
}

/// Whole-network event counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counters {
    pub pauses: u64,
    pub paused: Time,
    pub drops: u64,
    pub marks: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub naks: u64,
    pub acks: u64,
    /// Data packets switches trimmed (`switch.trimming`).
    pub trims: u64,
    /// Drops at hosts' full NIC Rx queues.
    pub host_drops: u64,
    /// Data packets sent, and dropped anywhere.
    pub data_sent: u64,
    pub data_drops: u64,
    /// The open connections' sending rates added up (`Flow::rate`), bit/s: whether they were
    /// still ramping when the measurement began.
    pub rates_bps: u64,
}

/// Partitions' counters add up; destructured so that a field added later needs its rule here.
impl std::ops::AddAssign<&Counters> for Counters {
    fn add_assign(&mut self, o: &Counters) {
        let Counters { pauses, paused, drops, marks, retransmits, timeouts, naks, acks, trims, host_drops, data_sent, data_drops, rates_bps } = o;
        self.pauses += pauses;
        self.paused += *paused;
        self.drops += drops;
        self.marks += marks;
        self.retransmits += retransmits;
        self.timeouts += timeouts;
        self.naks += naks;
        self.acks += acks;
        self.trims += trims;
        self.host_drops += host_drops;
        self.data_sent += data_sent;
        self.data_drops += data_drops;
        self.rates_bps = self.rates_bps.saturating_add(*rates_bps);
    }
}

/// Per-connection samples taken every `measure.timeseries_interval`.
#[derive(Clone, Default)]
pub struct TimeSeries {
    pub time: Vec<Time>,
    pub flow: Vec<u32>,
    pub delivered_bytes: Vec<u64>,
    pub rate_bps: Vec<u64>,
    pub at_min_rate: Vec<Option<bool>>,
    /// Window flows' congestion window (`None` for message flows).
    pub cwnd_bytes: Vec<Option<u64>>,
    /// Swift flows' fabric and endpoint windows, in packets.
    pub fcwnd: Vec<Option<f64>>,
    pub ecwnd: Vec<Option<f64>>,
    /// Mean of the RTT samples taken since the previous sample (`None`: none).
    pub rtt: Vec<Option<Time>>,
    /// Message flows' outstanding payload (`None` for window flows).
    pub inflight_bytes: Vec<Option<u64>>,
    /// Counters from the connection's start: retransmitted packets, dropped data packets, and
    /// payload that arrived marked CE.
    pub retransmits: Vec<u64>,
    pub drops: Vec<u64>,
    pub ecn_echoed_bytes: Vec<u64>,
}
