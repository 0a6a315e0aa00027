//! `[[faults]]`: timed failures of the fabric — a link or one direction of it going down, running
//! at a fraction of its rate, or losing packets silently; a switch going down
//! ([`crate::fabric::faults`] applies them). Names are checked against the fabric when the network
//! is built; what needs no fabric is checked here.

use super::{invalid, ScenarioError};
use rttlab_cc::Time;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultConfig {
    /// When the fault starts.
    pub at: Time,
    /// When it ends (absent: it lasts the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Time>,
    /// A link by one of its ports' names ("s32-s64"): both directions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// One direction of a link: the egress port of that name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
    /// A switch: every link it has, both directions (`kind = "down"` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switch: Option<String>,
    pub kind: FaultKind,
    /// `degrade`: the fraction of its rate the link runs at, in (0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction: Option<f64>,
    /// `drop`: each packet is lost with this probability, in [0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
}

/// `faults.kind`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// Nothing crosses: what is queued at its egress and on the wire is lost, and what a switch
    /// forwards to it is lost until its routes fail over (`routing.failover_delay`).
    Down,
    /// The link runs at `fraction` of its rate (an optics fault that lowers the lane count or
    /// the speed the ends negotiate).
    Degrade,
    /// Each packet is lost with `probability`, silently: the receiver's check of the frame
    /// fails (a bit-error rate), and no switch counts it as congestion.
    Drop,
}

impl FaultConfig {
    /// What the fault names: ("link" | "port" | "switch", the name).
    pub fn target(&self) -> (&'static str, &str) {
        match (&self.link, &self.port, &self.switch) {
            (Some(l), _, _) => ("link", l),
            (_, Some(p), _) => ("port", p),
            (_, _, Some(s)) => ("switch", s),
            _ => ("link", ""),
        }
    }

    pub(crate) fn validate(&self, at: &str, duration: Time) -> Result<(), ScenarioError> {
        let named = [&self.link, &self.port, &self.switch].iter().filter(|x| x.is_some()).count();
        if named != 1 {
            return Err(invalid(at, format!("{named} targets"), "exactly one of link = \"NODE-PEER\", port = \"NODE-PEER\" or switch = \"NAME\""));
        }
        if self.at >= duration {
            return Err(invalid(format!("{at}.at"), self.at, format!("a time within the run (before duration = {duration})")));
        }
        if let Some(until) = self.until.filter(|&u| u <= self.at || u > duration) {
            return Err(invalid(format!("{at}.until"), until, format!("after at = {} and at most duration = {duration}", self.at)));
        }
        if self.switch.is_some() && self.kind != FaultKind::Down {
            return Err(invalid(format!("{at}.kind"), super::variant_name(self.kind), "\"down\" for a switch (degrade or drop name a link or port)"));
        }
        let (fraction, probability) = match self.kind {
            FaultKind::Degrade => (true, false),
            FaultKind::Drop => (false, true),
            FaultKind::Down => (false, false),
        };
        match self.fraction {
            Some(f) if !fraction => return Err(invalid(format!("{at}.fraction"), f, "only with kind = \"degrade\"")),
            Some(f) if !(f > 0.0 && f <= 1.0) => return Err(invalid(format!("{at}.fraction"), f, "a fraction of the link's rate in (0, 1]")),
            None if fraction => return Err(invalid(format!("{at}.fraction"), "absent", "the fraction of its rate the link runs at, in (0, 1]")),
            _ => {}
        }
        match self.probability {
            Some(p) if !probability => return Err(invalid(format!("{at}.probability"), p, "only with kind = \"drop\"")),
            Some(p) if !(0.0..=1.0).contains(&p) => return Err(invalid(format!("{at}.probability"), p, "a probability in [0, 1]")),
            None if probability => return Err(invalid(format!("{at}.probability"), "absent", "each packet's loss probability, in [0, 1]")),
            _ => {}
        }
        Ok(())
    }
}
