//! `[measure]`: what statistics a run keeps beyond its counters.

use super::{invalid, ScenarioError};
use rttlab_cc::{Bytes, Time};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MeasureConfig {
    /// Queue occupancy sampling interval.
    pub queue_interval: Time,
    /// Egress ports to sample, named "NODE-PEER" (e.g. "s0-h0": switch 0 towards host 0), or
    /// patterns where `*` matches any characters ("s*-s*": every switch-to-switch port).
    /// Absent: the switch ports towards every flow destination.
    pub queue_ports: Option<Vec<String>>,
    /// Keep every queue sample as a time series (memory grows with run length).
    pub queue_trace: bool,
    /// Sample every connection's delivered bytes and rate at this interval; absent: no series.
    pub timeseries_interval: Option<Time>,
    /// Upper edges of the flow-size buckets of the FCT table (the last bucket is open).
    pub fct_buckets: Vec<Bytes>,
    /// The FCT statistics (the `fct` table, the summary's `fct_*` and `slowdown_*`, flow
    /// records) count the sized flows that start after the warm-up and before this time; the
    /// run goes on, under the same load, so that they can finish (the HPCC paper counts every
    /// flow). Absent: every sized flow that starts after the warm-up.
    pub fct_until: Option<Time>,
    /// Keep one record per finished workload flow (memory grows with run length).
    pub flow_records: bool,
    /// Keep every PFC frame as it reaches the egress it pauses or resumes: the `pfc` table
    /// (memory grows with run length, up to `MAX_TRACE_SAMPLES` frames).
    pub pfc_trace: bool,
    /// Packet capture on named egress ports ([`crate::report::capture`]); absent: none.
    pub pcap: Option<PcapConfig>,
}

/// `[measure.pcap]`: which ports to capture, and how much.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PcapConfig {
    /// Egress ports named "NODE-PEER", one pcap file each.
    pub ports: Vec<String>,
    /// Packets kept per port; later ones are counted, not kept.
    pub max_packets: u64,
    /// Bytes kept of each frame (its true length is recorded). Wireshark marks a RoCEv2 frame
    /// cut short as malformed (its ICRC is missing); TCP frames decode either way.
    pub snaplen: Bytes,
}

impl Default for PcapConfig {
    fn default() -> Self {
        PcapConfig { ports: Vec::new(), max_packets: 10_000, snaplen: Bytes(65_535) }
    }
}

/// The captures together keep at most this many bytes (shared equally by the captured ports);
/// packets beyond are counted, not kept, so that a capture cannot exhaust memory.
pub const MAX_CAPTURE_BYTES: u64 = 1 << 30;

impl Default for MeasureConfig {
    fn default() -> Self {
        MeasureConfig {
            queue_interval: Time::from_us(1),
            queue_ports: None,
            queue_trace: false,
            timeseries_interval: None,
            fct_buckets: vec![Bytes(10_000), Bytes(100_000), Bytes(1_000_000), Bytes(10_000_000)],
            fct_until: None,
            flow_records: false,
            pfc_trace: false,
            pcap: None,
        }
    }
}

/// The most samples a trace keeps per port or per connection (about 16 bytes each): traces
/// grow with the run, so their length is bounded up front rather than by running out of memory.
pub const MAX_TRACE_SAMPLES: u64 = 10_000_000;

/// `series` traces sampled every `interval` over `duration` must stay within
/// [`MAX_TRACE_SAMPLES`] samples in all.
fn trace_length(field: &str, interval: Time, duration: Time, series: u64) -> Result<(), ScenarioError> {
    let samples = (duration.ps() / interval.ps()).saturating_mul(series);
    if samples > MAX_TRACE_SAMPLES {
        let shortest = Time(duration.ps().saturating_mul(series).div_ceil(MAX_TRACE_SAMPLES));
        let (what, verb) = if series == 1 { ("a trace".to_string(), "has") } else { (format!("{series} traces"), "have") };
        return Err(invalid(
            field,
            interval,
            format!("{what} over duration ({duration}) at this interval {verb} {samples} samples; at most {MAX_TRACE_SAMPLES}: an interval of at least {shortest}, or a shorter run"),
        ));
    }
    Ok(())
}

impl MeasureConfig {
    /// Checks the statistics asked for, for a run of `duration` with `connections` `[[flows]]`
    /// connections (each its own time series).
    pub(crate) fn validate(&self, warmup: Time, duration: Time, connections: u64) -> Result<(), ScenarioError> {
        if let Some(t) = self.fct_until.filter(|&t| t <= warmup || t > duration) {
            return Err(invalid(
                "measure.fct_until",
                t,
                format!("after the warm-up ({warmup}) and at most the duration ({duration}), or absent for every flow"),
            ));
        }
        if self.fct_buckets.windows(2).any(|w| w[0] >= w[1]) || self.fct_buckets.first() == Some(&Bytes(0)) {
            let v = self.fct_buckets.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(", ");
            return Err(invalid("measure.fct_buckets", format!("[{v}]"), "increasing positive sizes, e.g. [\"10KB\", \"100KB\", \"1MB\"]"));
        }
        if self.queue_interval == Time::ZERO {
            return Err(invalid("measure.queue_interval", self.queue_interval, "must be positive"));
        }
        if let Some(p) = &self.pcap {
            if p.ports.is_empty() {
                return Err(invalid("measure.pcap.ports", "[]", "at least one egress port named NODE-PEER, e.g. [\"s0-h0\"]"));
            }
            if !(64..=65_535).contains(&p.snaplen.0) {
                return Err(invalid("measure.pcap.snaplen", p.snaplen, "64B to 65535B"));
            }
            if p.max_packets == 0 {
                return Err(invalid("measure.pcap.max_packets", p.max_packets, "at least 1"));
            }
        }
        if self.queue_trace {
            trace_length("measure.queue_interval", self.queue_interval, duration, 1)?;
        }
        match self.timeseries_interval {
            Some(Time::ZERO) => Err(invalid("measure.timeseries_interval", "0ps", "positive, or absent for no time series")),
            Some(interval) => trace_length("measure.timeseries_interval", interval, duration, connections.max(1)),
            None => Ok(()),
        }
    }
}
