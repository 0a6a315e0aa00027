//! Traffic that exists from the start: `[[flows]]` groups of connections, the host sets that
//! name their ends, and when the run ends (`until`).

use super::validate::Context;
use super::{invalid, transfer_size, ScenarioError};
use rttlab_cc::{Bytes, Rate, Time};
use serde::{Deserialize, Serialize};

/// Hosts named as one index, a list, or an inclusive range "1-10".
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum HostSet {
    One(u32),
    List(Vec<u32>),
    Range(String),
}

impl HostSet {
    pub fn hosts(&self) -> Result<Vec<u32>, String> {
        match self {
            HostSet::One(h) => Ok(vec![*h]),
            HostSet::List(v) => Ok(v.clone()),
            HostSet::Range(r) => {
                let bad = || format!("'{r}' is not a host range: expected \"FIRST-LAST\", e.g. \"1-10\"");
                let (a, b) = r.split_once('-').ok_or_else(bad)?;
                let a: u32 = a.trim().parse().map_err(|_| bad())?;
                let b: u32 = b.trim().parse().map_err(|_| bad())?;
                if a > b {
                    return Err(bad());
                }
                Ok((a..=b).collect())
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
    /// incast "until the last flow completes"), or at `duration` if that comes first.
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
    pub src: HostSet,
    pub dst: u32,
    #[serde(default = "one_u32")]
    pub connections: u32,
    /// Bytes each connection sends in all; absent means unbounded.
    pub size: Option<Bytes>,
    /// Application-limited: the application offers this rate; absent means backlogged.
    pub rate: Option<Rate>,
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
    /// `at`: the group's path (`flows[2]`).
    /// Checks the group; returns how many connections it opens (sources × connections).
    pub(crate) fn validate(&self, at: &str, ctx: &Context) -> Result<u64, ScenarioError> {
        let f = |k: &str| format!("{at}.{k}");
        ctx.host(&f("dst"), self.dst)?;
        let sources = ctx.host_set(&f("src"), Some(&self.src))?;
        if let Some(&h) = sources.iter().find(|&&h| h == self.dst) {
            return Err(invalid(f("src"), h, "a source must differ from dst"));
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
        if self.start.ps().saturating_add(self.start_jitter.ps()) >= ctx.duration.ps() {
            return Err(invalid(f("start"), self.start, format!("start + start_jitter must fall before the end of the run (duration = {})", ctx.duration)));
        }
        if let Some(stop) = self.stop.filter(|&t| t <= self.start + self.start_jitter) {
            return Err(invalid(f("stop"), stop, format!("after start + start_jitter ({}), or absent", self.start + self.start_jitter)));
        }
        Ok(sources.len() as u64 * self.connections as u64)
    }

    /// The application's rate, messages and writes.
    fn validate_application(&self, f: &dyn Fn(&str) -> String, window: bool) -> Result<(), ScenarioError> {
        if let (true, Some(rate)) = (window, self.rate) {
            return Err(invalid(f("rate"), rate, "application-limited flows run on the message transport; absent for a backlogged or sized flow"));
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
