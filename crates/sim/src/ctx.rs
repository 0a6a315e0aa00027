//! What every part of the network uses and no part owns: the clock and the event queue, the
//! packets, the measurements, and what the scenario fixes for the whole run. The fabric
//! ([`crate::fabric`]) and the hosts ([`crate::host`]) each take it beside their own state.

use crate::core::engine::EventQueue;
use crate::core::packet::Slab;
use crate::fabric::switch::QueueParams;
use crate::host::timestamps::RttNoise;
use crate::parallel::boundary::{Boundary, Outgoing};
use crate::report::measure::Measurements;
use crate::scenario::{
    CcConfig, Feedback, HostConfig, JobConfig, NicArbitration, RateAfterIdle, RatePacing, Recovery, RoutingConfig, Scenario, TransportConfig, Trimming,
};
use crate::transport::path::PathStrategy;
use rttlab_cc::{Rate, Signal, Time};

/// The run's context: its clock and events, packets, measurements and configuration.
pub(crate) struct Ctx {
    pub now: Time,
    /// The place in the event order of the event being handled (0 before the first).
    pub seq_now: u64,
    pub events: EventQueue,
    pub pkts: Slab,
    pub cfg: RunConfig,
    pub measure: Measurements,
    /// How long a node takes to hear of what happened at another at once (a drop its sender
    /// counts, a lost probe its pinger), the same however the network is cut: the shortest
    /// link delay of the fabric, so that it never arrives within a partition's window.
    pub notice_delay: Time,
    /// When the run ends: the scenario's duration, or earlier once its connections are all
    /// done (`until = "flows_done"`, found as the run goes).
    pub end: Time,
    /// A partition's boundary with the others ([`crate::parallel`]); empty on one thread.
    pub boundary: Boundary,
}

impl Ctx {
    /// The run's own event being handled (the warm-up's end, an incast) is handled by every
    /// partition alike; the first counts it (`events_not_counted`). Called from those events'
    /// handlers, not the main loop, where it would be a test per event.
    pub fn run_event_handled(&mut self) {
        if self.boundary.part.as_ref().is_some_and(|(me, _)| *me != 0) {
            self.boundary.events_not_counted += 1;
        }
    }

    /// Whether `node` belongs to another partition.
    #[inline]
    pub fn foreign(&self, node: u32) -> bool {
        self.boundary.foreign(node)
    }

    /// Node `node` hears of something now, `notice_delay` later (`EventKind::Dropped`,
    /// `EventKind::PingLost`).
    pub fn notify(&mut self, node: u32, kind: crate::core::engine::EventKind) {
        let at = self.now + self.notice_delay;
        if self.foreign(node) {
            let seq = self.events.reserve();
            self.boundary.outbox.push((node, Outgoing::Event(at, seq, kind)));
        } else {
            self.events.push(at, kind);
        }
    }
}

/// What the telemetry (`switch.int`) asks of the run.
#[derive(Copy, Clone, Debug)]
pub(crate) struct IntRun {
    /// Records per direction.
    pub max_hops: u8,
}

/// What one kind of connection runs, built once for `[cc]` and `[transport]` and once for
/// each job with its own (quinn's `TransportConfig`: a value per kind of connection, not
/// per run): its transport, its controller, and what the controller's needs fix for it.
pub(crate) struct ConnConfig {
    pub transport: TransportConfig,
    pub cc: CcConfig,
    /// TIMELY's input and the `ind` threshold (`cc.signal`).
    pub signal: (Signal, Time),
    /// DCQCN's notification point: at most one CNP per connection per this interval.
    pub cnp_interval: Option<Time>,
    /// The sender's path strategies (`cc.plb` reading this controller's signal,
    /// `transport.prr`, `routing.spray = "reps"`).
    pub path: PathStrategy,
    /// `cc.feedback = "median"`: over this many samples.
    pub median_of: Option<usize>,
}

impl ConnConfig {
    fn new(transport: &TransportConfig, cc: &CcConfig, s: &Scenario) -> ConnConfig {
        ConnConfig {
            transport: transport.clone(),
            cc: cc.clone(),
            signal: cc.signal(),
            cnp_interval: cc.needs().cnp_interval,
            path: PathStrategy {
                entropy: s.routing.entropy(s.switch.trimming != Trimming::Off),
                prr: transport.prr(),
                plb: s.cc.plb,
                plb_by_ecn: cc.needs().ecn,
            },
            median_of: (s.cc.feedback == Feedback::Median).then_some(s.cc.feedback_samples as usize),
        }
    }
}

/// The connection configuration (`RunConfig::conns`) job `j` of `s` runs: 0, `[cc]` and
/// `[transport]`'s, or its own, numbered after them in the order of the jobs that have one.
pub(crate) fn job_conn(s: &Scenario, j: usize) -> u16 {
    if has_own_conn(&s.jobs[j]) {
        1 + s.jobs[..j].iter().filter(|job| has_own_conn(job)).count() as u16
    } else {
        0
    }
}

/// A job with its own controller or transport has a connection configuration of its own.
fn has_own_conn(job: &JobConfig) -> bool {
    job.cc.is_some() || job.transport.is_some()
}

/// What the scenario fixes for the whole run, in the units the packet path uses.
pub(crate) struct RunConfig {
    pub warmup: Time,
    pub seed: u64,
    /// What each kind of connection runs: `[cc]` and `[transport]`'s first, then each job's
    /// own (`job_conn`); a connection's is its generator's (`Hosts::conn_of`).
    pub conns: Vec<ConnConfig>,
    /// ACKs collect their path's telemetry too: a message connection's signal reads the
    /// round trip's queues (`cc.signal`).
    pub acks_collect_int: bool,
    /// Shared buffer of every switch.
    pub buffer: u64,
    /// Dynamic PFC thresholds (`switch.pfc_alpha`) and their resume offset.
    pub pfc_alpha: Option<f64>,
    pub pfc_resume_offset: u64,
    /// The classes whose ingresses can send PFC, a bit each (a threshold, or `pfc_alpha`, and
    /// `switch.pfc_classes`; 0: no PFC). In the others a switch keeps no count of the bytes
    /// each ingress holds: only PFC reads it, and at dequeue the ingress is a port the packet
    /// path would otherwise not touch (a cache miss per hop at a thousand hosts).
    pub lossless: u8,
    /// Queue settings of switch egress ports, by `Port::params` (0: `[switch]`'s own).
    pub queue_params: Vec<QueueParams>,
    pub classes: usize,
    pub ack_class: usize,
    pub payload_per_packet: u32,
    pub header_bytes: u32,
    pub ack_bytes: u32,
    pub pfc_frame_bytes: u32,
    pub segment_bytes: u64,
    pub max_outstanding: u64,
    pub send_queue: u32,
    pub retransmit_timeout: Time,
    pub rtt_noise: RttNoise,
    pub pacing_rate: Option<Rate>,
    pub arbitration: NicArbitration,
    pub rate_pacing: RatePacing,
    pub rate_after_idle: RateAfterIdle,
    pub recovery: Recovery,
    pub host_config: HostConfig,
    pub timeseries_interval: Option<Time>,
    /// FCT statistics count sized flows started in `[warmup, fct_until)` (`measure.fct_until`).
    pub fct_until: Time,
    /// In-band telemetry (`switch.int`); `None`: off.
    pub int: Option<IntRun>,
    /// HPCC's `T` with `base_rtt = "max"`: the topology's largest unloaded round trip.
    pub max_base_rtt: Time,
    pub routing: RoutingConfig,
    /// Switches choose each packet's port from their own state (`RoutingConfig::switch_chooses`).
    pub switch_chooses: bool,
    /// Packet trimming at full queues (`switch.trimming`) and what is left of a trimmed packet.
    pub trimming: Trimming,
    pub trim_bytes: u64,
}

impl RunConfig {
    /// A full data packet's bytes on the wire (headers included).
    pub fn mtu(&self) -> u64 {
        (self.payload_per_packet + self.header_bytes) as u64
    }

    /// Whether an ingress counts, pauses and holds headroom for class `c`.
    #[inline]
    pub fn pfc_in(&self, c: usize) -> bool {
        self.lossless >> c & 1 != 0
    }

    pub fn new(s: &Scenario) -> RunConfig {
        let (nic, sw) = (&s.nic, &s.switch);
        let own = s.jobs.iter().filter(|j| has_own_conn(j));
        let conns: Vec<ConnConfig> = std::iter::once(ConnConfig::new(&s.transport, &s.cc.controller, s))
            .chain(own.map(|j| ConnConfig::new(s.job_transport(j), s.job_cc(j), s)))
            .collect();
        RunConfig {
            warmup: s.warmup,
            seed: s.seed,
            acks_collect_int: conns.iter().any(|c| !c.transport.is_window() && c.signal.0.uses_queues()),
            conns,
            buffer: sw.buffer.0,
            pfc_alpha: sw.pfc_alpha,
            pfc_resume_offset: sw.pfc_resume_offset.0,
            // With the queue settings (`Network::with_controllers`).
            lossless: 0,
            queue_params: Vec::new(),
            classes: sw.classes as usize,
            ack_class: nic.ack_class as usize,
            payload_per_packet: nic.payload_per_packet() as u32,
            // With telemetry each data packet carries the INT header's hop count.
            header_bytes: nic.header.0 as u32 + if sw.int == Some(true) { rttlab_cc::int::HEADER_BYTES } else { 0 },
            ack_bytes: nic.ack.0 as u32,
            pfc_frame_bytes: nic.ack.0 as u32,
            segment_bytes: nic.segment().0,
            max_outstanding: nic.max_outstanding().0,
            send_queue: nic.send_queue(),
            retransmit_timeout: nic.retransmit_timeout(),
            rtt_noise: RttNoise::new(nic.rtt_noise, nic.timestamps, nic.host_load.unwrap_or_default()),
            pacing_rate: nic.pacing_rate,
            arbitration: nic.arbitration.unwrap_or_default(),
            rate_pacing: nic.rate_pacing.unwrap_or_default(),
            rate_after_idle: nic.rate_after_idle.unwrap_or_default(),
            recovery: nic.recovery.unwrap_or_default(),
            host_config: s.host.clone(),
            timeseries_interval: s.measure.timeseries_interval,
            fct_until: s.measure.fct_until.unwrap_or(Time::MAX),
            int: (sw.int == Some(true)).then_some(IntRun { max_hops: sw.int_max_hops }),
            max_base_rtt: Time::ZERO,
            routing: s.routing.clone(),
            switch_chooses: s.routing.switch_chooses(),
            trimming: sw.trimming,
            trim_bytes: sw.trim_bytes.0,
        }
    }
}
