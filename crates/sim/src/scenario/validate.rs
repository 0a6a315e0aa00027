//! The checks that span sections: each section checks itself against a small [`Context`] (host
//! count, classes, transport kind, NIC sizes); what relates sections to each other is here.

use super::{
    invalid, variant_name, CcConfig, HostSet, JobConfig, NicConfig, RoutingMode, Scenario, ScenarioError, Topology, TransportConfig, Trimming, Until,
    WindowConfig, Workload,
};
use rttlab_cc::{Bytes, Time};
use rttlab_cc::{Cc, Kind, Signal};
use std::collections::HashMap;

/// The longest run: every event time (the end plus any delay or timer) then stays far below
/// the 64-bit picosecond limit of about 18 million seconds.
pub const MAX_DURATION: Time = Time(1_000_000 * rttlab_cc::units::PS_PER_S);

/// The most `[[flows]]` connections a scenario may open (as many as the most hosts).
pub const MAX_CONNECTIONS: u64 = 1 << 20;

/// What a section's checks need to know of the rest of the scenario.
pub(crate) struct Context<'a> {
    pub hosts: u32,
    /// Host numbers by name: a graph topology's names; empty: h0, h1, ...
    pub names: HashMap<&'a str, u32>,
    pub classes: u8,
    /// The flows run on the window transport.
    pub window: bool,
    pub nic: &'a NicConfig,
    pub duration: Time,
}

impl Context<'_> {
    /// `h` as a host index, or an error naming `field`.
    pub fn host(&self, field: &str, h: u32) -> Result<u32, ScenarioError> {
        if h >= self.hosts {
            return Err(invalid(field, h, format!("hosts are 0..{}", self.hosts - 1)));
        }
        Ok(h)
    }

    /// The hosts of `set` (absent: every host), each checked, at least one.
    pub fn host_set(&self, field: &str, set: Option<&HostSet>) -> Result<Vec<u32>, ScenarioError> {
        let Some(set) = set else { return Ok((0..self.hosts).collect()) };
        let number = |name: &str| match self.names.is_empty() {
            true => name.strip_prefix('h').and_then(|n| n.parse().ok()),
            false => self.names.get(name).copied(),
        };
        let hosts = set.hosts(&number).map_err(|m| ScenarioError::Field { field: field.into(), message: m })?;
        if hosts.is_empty() {
            return Err(invalid(field, "[]", "at least one host"));
        }
        hosts.into_iter().map(|h| self.host(field, h)).collect()
    }

    /// A priority class the switches have.
    pub fn class(&self, field: &str, class: u8) -> Result<(), ScenarioError> {
        if class >= self.classes {
            return Err(invalid(field, class, format!("a class below switch.classes ({})", self.classes)));
        }
        Ok(())
    }
}

impl Scenario {
    pub(crate) fn context(&self) -> Context<'_> {
        let names = match &self.topology {
            Topology::Graph(g) => g.hosts.iter().enumerate().map(|(i, n)| (n.as_str(), i as u32)).collect(),
            _ => HashMap::new(),
        };
        Context { hosts: self.hosts(), names, classes: self.switch.classes, window: self.transport.is_window(), nic: &self.nic, duration: self.duration }
    }

    /// The hosts of `set` (absent: every host), each checked, at least one.
    pub fn host_set(&self, field: &str, set: Option<&HostSet>) -> Result<Vec<u32>, ScenarioError> {
        self.context().host_set(field, set)
    }

    /// Checks every constraint serde's types do not already express: the run's length, each
    /// section, then what relates sections.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if self.duration == Time::ZERO || self.duration > MAX_DURATION {
            return Err(invalid("duration", self.duration, format!("must be positive and at most {MAX_DURATION}")));
        }
        if self.warmup >= self.duration {
            // The measurement needs time after the warm-up, which lets the connections settle:
            // lengthen the run rather than cut the warm-up short.
            let longer = Time(self.warmup.ps().saturating_mul(3));
            let allowed = format!("must be shorter than duration ({}): lengthen the run past it, e.g. --set duration={longer}", self.duration);
            return Err(invalid("warmup", self.warmup, allowed));
        }
        self.topology.validate()?;
        self.switch.validate()?;
        if self.switch.trimming != Trimming::Off && !(Bytes(1)..self.nic.mtu).contains(&self.switch.trim_bytes) {
            let allowed = format!("a trimmed packet's headers: at least 1 byte and less than nic.mtu ({})", self.nic.mtu);
            return Err(invalid("switch.trim_bytes", self.switch.trim_bytes, allowed));
        }
        self.cc.validate()?;
        self.routing.validate()?;
        self.validate_cc_transport()?;
        if let TransportConfig::Window(w) = &self.transport {
            w.validate("transport", &self.cc.controller)?;
            self.validate_subflows("transport", w)?;
        }
        self.host.validate()?;
        let ctx = self.context();
        self.nic.validate(&ctx)?;
        if self.flows.is_empty() && self.workloads.is_empty() && self.jobs.is_empty() {
            return Err(invalid("flows", "[]", "at least one [[flows]] group, [[workloads]] generator or [[jobs]] entry"));
        }
        let mut connections = 0u64;
        for (i, g) in self.flows.iter().enumerate() {
            let at = format!("flows[{i}]");
            connections += g.validate(&at, &ctx)?;
            if connections > MAX_CONNECTIONS {
                return Err(invalid(
                    format!("{at}.connections"),
                    g.connections,
                    format!("at most {MAX_CONNECTIONS} [[flows]] connections in all (sources × connections, summed over groups)"),
                ));
            }
        }
        self.validate_until()?;
        for (i, w) in self.workloads.iter().enumerate() {
            w.validate(&format!("workloads[{i}]"), &ctx)?;
        }
        for (i, f) in self.faults.iter().enumerate() {
            f.validate(&format!("faults[{i}]"), self.duration)?;
        }
        for (i, j) in self.jobs.iter().enumerate() {
            let at = format!("jobs[{i}]");
            j.validate(&at, &Context { window: self.job_transport(j).is_window(), ..self.context() })?;
            if j.cc.is_some() || j.transport.is_some() {
                self.validate_job_cc(&at, j)?;
            }
        }
        if self.message_ccs().next().is_none() {
            self.nic.validate_window()?;
        }
        if self.switch.int == Some(false) && self.cc.controller.needs().int {
            let reads = match self.cc.controller.signal().0 {
                Signal::Rtt => format!("cc.algorithm = \"{}\"", self.cc.controller.name()),
                signal => format!("cc.signal = \"{}\"", variant_name(signal)),
            };
            return Err(invalid("switch.int", false, format!("{reads} reads in-band telemetry: true (or leave it out)")));
        }
        self.measure.validate(self.warmup, self.duration, connections)
    }

    /// Window controllers run on the window transport; rate controllers on the message one.
    fn validate_cc_transport(&self) -> Result<(), ScenarioError> {
        let window = self.transport.is_window();
        // A Python class's kind is checked by the front end that imports it.
        let Some(is) = self.cc.controller.kind() else { return Ok(()) };
        if (is == Kind::Window) == window {
            return Ok(());
        }
        let describe = |kind: Kind| match kind {
            Kind::Rate => ("message", "a rate controller", Cc::names_of(kind).join(", ")),
            Kind::Window => ("window", "a window controller", Cc::names_of(kind).join(", ")),
        };
        let ((other, is_a, others), (kind, wants, takes)) = (describe(is), describe(if window { Kind::Window } else { Kind::Rate }));
        let name = self.cc.controller.name();
        Err(invalid(
            "cc.algorithm",
            name,
            format!(
                "transport.kind = \"{kind}\" needs {is_a} to be on transport.kind = \"{other}\": {name} is {is_a} ({others}); the {kind} transport takes {wants} ({takes})"
            ),
        ))
    }

    /// A job's own controller or transport (`jobs.cc`, `jobs.transport`): a built-in controller
    /// of its transport's kind, their parameters valid, needing nothing of the fabric or the
    /// NIC the run does not have — in-band telemetry, ECN marking, an ACK per packet, no cap on
    /// what is outstanding, a signal for PLB or the median filter. Its CNP pacing and RTT
    /// signal are its own (`ctx::ConnConfig`). `at`: the job's path.
    fn validate_job_cc(&self, at: &str, job: &JobConfig) -> Result<(), ScenarioError> {
        let (cc, transport) = (self.job_cc(job), self.job_transport(job));
        let field = if job.cc.is_some() { format!("{at}.cc.algorithm") } else { format!("{at}.cc") };
        let CcConfig::Native(native) = cc else {
            return Err(invalid(field, "python", "a built-in controller: a Python class runs as [cc]'s, on [transport], for every connection"));
        };
        native.validate().map_err(|rttlab_cc::ParamError { field, value, allowed }| invalid(format!("{at}.cc.{field}"), value, allowed))?;
        let window = transport.is_window();
        // Where the job's transport is written, for the errors that name one of its keys.
        let tp = if job.transport.is_some() { format!("{at}.transport") } else { "transport".to_string() };
        if let TransportConfig::Window(w) = transport {
            w.validate(&tp, cc)?;
            self.validate_subflows(&tp, w)?;
        }
        let name = cc.name();
        if cc.kind().is_some_and(|k| (k == Kind::Window) != window) {
            let (kind, takes) = if window { ("window", "a window controller") } else { ("message", "a rate controller") };
            let runs = format!("{tp}.kind = \"{kind}\" runs {takes} ({})", Cc::names_of(if window { Kind::Window } else { Kind::Rate }).join(", "));
            return Err(match job.cc {
                Some(_) => invalid(field, name, runs),
                None => invalid(field, "absent", format!("{runs}, and [cc]'s {name} is not one: give the job its own")),
            });
        }
        let n = cc.needs();
        let lacks = |what: String| Err(invalid(field.clone(), name, what));
        if n.int && self.switch.int != Some(true) {
            return lacks(format!("{name} reads in-band telemetry: set switch.int = true"));
        }
        if (n.ecn || n.ecn_profile.is_some()) && self.switch.ecn.is_none() {
            return lacks(format!("{name} reacts to ECN marks: give [switch.ecn]"));
        }
        if n.ack_per_packet {
            match transport {
                TransportConfig::Window(w) if w.delayed_ack => {
                    return lacks(format!("{name} needs every packet acknowledged at once: {tp}.delayed_ack = false"))
                }
                TransportConfig::Message { .. } if self.nic.segment() > rttlab_cc::Bytes(self.nic.payload_per_packet()) => {
                    return lacks(format!("{name} needs every packet acknowledged at once: nic.segment of one packet ({}B)", self.nic.payload_per_packet()))
                }
                _ => {}
            }
        }
        if n.rate_limiter && !window && self.nic.max_outstanding() < NicConfig::UNLIMITED_OUTSTANDING {
            return lacks(format!("{name} paces every packet itself: nic.max_outstanding = \"{}\"", NicConfig::UNLIMITED_OUTSTANDING));
        }
        if self.cc.plb.is_some() && !n.ecn && !n.delay {
            return lacks(format!("cc.plb needs a congestion signal and {name} gives none"));
        }
        if self.cc.feedback == super::Feedback::Median && !n.delay {
            return lacks(format!("cc.feedback = \"median\" needs a delay target and {name} keeps none"));
        }
        Ok(())
    }

    /// Subflows (`transport.subflows`, `at`: where the transport is written) each keep the path
    /// their label hashes to: per-flow ECMP, and no PLB moving the connection's label.
    fn validate_subflows(&self, at: &str, w: &WindowConfig) -> Result<(), ScenarioError> {
        if w.subflows == 1 {
            return Ok(());
        }
        if self.routing.mode != RoutingMode::Ecmp {
            let allowed = format!("\"ecmp\" with {at}.subflows = {}: each subflow keeps the path its label hashes to", w.subflows);
            return Err(invalid("routing.mode", variant_name(self.routing.mode), allowed));
        }
        if self.cc.plb.is_some() {
            return Err(invalid("cc.plb", "set", format!("absent with {at}.subflows = {}: PLB moves the connection's one path", w.subflows)));
        }
        Ok(())
    }

    /// `until = "flows_done"` needs flows to wait for: sized `[[flows]]` connections, or the
    /// workload flows `measure.fct_until` counts.
    fn validate_until(&self) -> Result<(), ScenarioError> {
        if self.until != Until::FlowsDone {
            return Ok(());
        }
        let sized_workload = self.workloads.iter().any(|w| matches!(w, Workload::FlowSizes(_) | Workload::Incast(_)));
        let transfers = !self.jobs.is_empty() || self.workloads.iter().any(|w| matches!(w, Workload::Matrix(_)));
        if self.flows.is_empty() && !transfers && !(sized_workload && self.measure.fct_until.is_some()) {
            return Err(invalid(
                "until",
                "flows_done",
                "needs [[flows]] groups with a size, a connection matrix or [[jobs]], or measure.fct_until with a flow_sizes or incast workload; or until = \"duration\"",
            ));
        }
        if let Some(i) = self.flows.iter().position(|g| g.size.is_none()) {
            return Err(invalid("until", "flows_done", format!("every [[flows]] group needs a size (flows[{i}] has none); or until = \"duration\"")));
        }
        Ok(())
    }
}
