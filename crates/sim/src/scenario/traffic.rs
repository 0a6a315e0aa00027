//! Traffic that exists from the start: `[[flows]]` groups of connections, the host sets that
//! name their ends, and when the run ends (`until`).

use super::validate::Context;
use super::{invalid, transfer_size, ScenarioError};
use rttlab_cc::{Bytes, Rate, Time};
use serde::{Deserialize, Serialize};

/// Hosts named as one index, a name, an inclusive range "1-10", a name with a bracketed range
/// "s1_[0-9]" (names of a graph topology; built-in ones name hosts h0, h1, ...), or a list of
/// any of these.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum HostSet {
    One(u32),
    List(Vec<HostSet>),
    Text(String),
}

impl HostSet {
    /// The hosts, in order; `number` finds a host by name.
    pub fn hosts(&self, number: &dyn Fn(&str) -> Option<u32>) -> Result<Vec<u32>, String> {
        match self {
            HostSet::One(h) => Ok(vec![*h]),
            HostSet::List(v) => v.iter().map(|s| s.hosts(number)).collect::<Result<Vec<_>, _>>().map(|v| v.concat()),
            HostSet::Text(r) => {
                if let Some((a, b)) = r.split_once('-').and_then(|(a, b)| Some((a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?))) {
                    return if a <= b {
                        Ok((a..=b).collect())
                    } else {
                        Err(format!("'{r}' is not a host range: FIRST-LAST with FIRST ≤ LAST, e.g. \"1-10\""))
                    };
                }
                let names = super::graph::expand("", r).map_err(|e| e.to_string())?;
                let unknown = |n: &str| format!("'{n}' is neither a host name nor a range \"FIRST-LAST\" of host numbers, e.g. \"1-10\"");
                names.iter().map(|n| number(n).ok_or_else(|| unknown(n))).collect()
            }
        }
    }
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Until {
    /// The run lasts `duration`.
    #[default]
    Duration,
    /// The run ends when the last byte of the last sized `[[flows]]` connection arrives (an
    /// incast "until the last flow completes") and, with `measure.fct_until`, once that time
    /// has passed, of every workload flow the FCT statistics count; or at `duration` if that
    /// comes first.
    FlowsDone,
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Messages arrive evenly spaced at the application rate.
    #[default]
    Periodic,
    /// Messages arrive as a Poisson process of the application rate.
    Poisson,
}

/// `connections` connections from each host of `src` to `dst`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowGroup {
    /// The group's label in results (absent: `flows.slots[i]`).
    pub name: Option<String>,
    pub src: HostSet,
    /// One host every source sends to, or one per source (source i to destination i).
    pub dst: HostSet,
    #[serde(default = "one_u32")]
    pub connections: u32,
    /// Bytes each connection sends in all; absent means unbounded.
    pub size: Option<Bytes>,
    /// Application-limited: the application offers this rate; absent means backlogged. On the
    /// window transport it writes at this rate (during `on` periods) and the window still
    /// governs (`transport::onoff`).
    pub rate: Option<Rate>,
    /// Window transport with `rate`: the application writes for `on`, then pauses for `off`,
    /// and again (ns-3's OnOffApplication with constant times); absent: always on.
    pub on: Option<Time>,
    #[serde(default)]
    pub off: Time,
    /// Window transport with `rate`: the socket send buffer (data unacknowledged or unsent);
    /// absent: `transport.send_buffer`.
    pub send_buffer: Option<Bytes>,
    /// How application messages arrive (with `rate`).
    #[serde(default)]
    pub arrivals: Arrivals,
    /// Application message size (with `rate`); defaults to the NIC segment size.
    pub message: Option<Bytes>,
    /// Window transport: the application writes this many bytes at a time and a write smaller
    /// than a packet goes in a packet of its own (Swift §5.4's 64 B and 1 KB writes); absent or
    /// larger: full packets.
    pub write: Option<Bytes>,
    #[serde(default)]
    pub start: Time,
    /// Source i's connections start `i · start_step` after `start` (staggered starts).
    #[serde(default)]
    pub start_step: Time,
    /// Each connection starts at `start` plus a uniform draw in [0, start_jitter].
    #[serde(default)]
    pub start_jitter: Time,
    /// The application closes the connection at this time: no new data is sent after it (what
    /// is in flight completes). Absent: never (TIMELY §6.1 Fig. 18 closes 9 of 10 connections).
    pub stop: Option<Time>,
    /// Priority class of the data.
    #[serde(default = "one_u8")]
    pub class: u8,
}

pub(crate) fn one_u32() -> u32 {
    1
}
pub(crate) fn one_u8() -> u8 {
    1
}

impl FlowGroup {
    /// `at`: the group's path (`flows.slots[2]`).
    /// Checks the group; returns how many connections it opens (sources × connections).
    pub(crate) fn validate(&self, at: &str, ctx: &Context) -> Result<u64, ScenarioError> {
        let f = |k: &str| format!("{at}.{k}");
        let sources = ctx.host_set(&f("src"), Some(&self.src))?;
        let dsts = ctx.host_set(&f("dst"), Some(&self.dst))?;
        if dsts.len() != 1 && dsts.len() != sources.len() {
            return Err(invalid(f("dst"), format!("{} hosts", dsts.len()), format!("one host, or one per source ({} sources)", sources.len())));
        }
        if let Some(i) = (0..sources.len()).find(|&i| sources[i] == dsts[i.min(dsts.len() - 1)]) {
            return Err(invalid(f("src"), sources[i], "a source must differ from its destination"));
        }
        if self.connections == 0 {
            return Err(invalid(f("connections"), 0, "at least 1"));
        }
        ctx.class(&f("class"), self.class)?;
        if let Some(size) = self.size {
            transfer_size(f("size"), size)?;
        }
        let payload = ctx.nic.payload_per_packet();
        let packet = self.write.map_or(payload, |w| w.0.min(payload).max(1));
        if ctx.window && self.size.is_some_and(|b| b.0.div_ceil(packet) >= u32::MAX as u64) {
            return Err(invalid(f("size"), self.size.expect("checked"), "fewer than 2^32 packets on the window transport"));
        }
        self.validate_application(&f, ctx.window)?;
        let last = self.start_step.ps().saturating_mul(sources.len() as u64 - 1);
        let last_start = Time(self.start.ps().saturating_add(last).saturating_add(self.start_jitter.ps()));
        if last_start >= ctx.duration {
            return Err(invalid(
                f("start"),
                self.start,
                format!(
                    "start (+ start_step per later source) + start_jitter must fall before the end of the run (duration = {}): the last source starts by {}",
                    ctx.duration, last_start
                ),
            ));
        }
        if let Some(stop) = self.stop.filter(|&t| t <= last_start) {
            return Err(invalid(f("stop"), stop, format!("after the last start + start_jitter ({last_start}), or absent")));
        }
        Ok(sources.len() as u64 * self.connections as u64)
    }

    /// The application's rate, on/off periods, messages and writes.
    fn validate_application(&self, f: &dyn Fn(&str) -> String, window: bool) -> Result<(), ScenarioError> {
        let window_app = [("on", self.on.is_some()), ("off", self.off > Time::ZERO), ("send_buffer", self.send_buffer.is_some())];
        if let Some((k, _)) = window_app.iter().find(|(_, set)| *set) {
            if !window || self.rate.is_none() {
                return Err(invalid(f(k), "set", "an application's on/off periods and send buffer: needs transport.kind = \"window\" and flows.rate"));
            }
        }
        if self.on == Some(Time::ZERO) {
            return Err(invalid(f("on"), self.on.expect("set"), "positive, or absent for always on"));
        }
        if self.off > Time::ZERO && self.on.is_none() {
            return Err(invalid(f("off"), self.off, "needs an on period (flows.on)"));
        }
        if self.send_buffer == Some(Bytes(0)) {
            return Err(invalid(f("send_buffer"), "0B", "positive"));
        }
        if window && (self.message.is_some() || self.arrivals != Arrivals::Periodic) {
            return Err(invalid(
                f("message"),
                "set",
                "messages and arrivals belong to the message transport; the window transport's application writes at flows.rate",
            ));
        }
        if self.rate == Some(Rate::ZERO) {
            return Err(invalid(f("rate"), "0bps", "positive, or absent for a backlogged connection"));
        }
        if self.rate.is_none() && (self.message.is_some() || self.arrivals != Arrivals::Periodic) {
            return Err(invalid(f("message"), "set", "message and arrivals need an application rate (flows.rate)"));
        }
        if let Some(m) = self.message {
            transfer_size(f("message"), m)?;
        }
        match self.write {
            Some(w) if !window || w.0 == 0 => Err(invalid(f("write"), w, "a positive size, on the window transport")),
            _ => Ok(()),
        }
    }
}
