//! DCTCP as Linux implements it (Alizadeh et al., SIGCOMM 2010; RFC 8257; shared reference
//! algorithms.md §4.1).
//!
//! - Once per window of data (when `snd_una` passes the `snd_nxt` recorded at the last update),
//!   `α ← (1 − g)·α + g·F` with `F` the fraction of acknowledged bytes that carried ECN-Echo.
//! - On the first ECN-Echo of a window the window is cut to `cwnd·(1 − α/2)` (never below
//!   `min_cwnd` segments) and `ssthresh` set to it; no further cut, and no growth, until the
//!   data outstanding at the cut is acknowledged (Linux's CWR state).
//! - Loss and otherwise growth are Reno's (`crate::reno`).

use crate::registry::{Algorithm, Controller, Kind, Needs, Path};
use crate::reno::{Reno, RenoParams};
use crate::{AckEvent, Loss, Metrics, ParamError, Time, WindowController};
use serde::{Deserialize, Serialize};

/// DCTCP's parameters; `Default` is Linux's (`dctcp_shift_g = 4`, `dctcp_alpha_on_init = 1024`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpParams {
    /// EWMA gain g of the marked fraction.
    pub g: f64,
    /// α of a new connection.
    pub initial_alpha: f64,
    pub init_cwnd: u32,
    pub min_cwnd: u32,
}

impl Default for DctcpParams {
    fn default() -> Self {
        let reno = RenoParams::default();
        DctcpParams { g: 1.0 / 16.0, initial_alpha: 1.0, init_cwnd: reno.init_cwnd, min_cwnd: reno.min_cwnd }
    }
}

impl DctcpParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(ParamError::new("g", self.g, "an EWMA gain in (0, 1]"));
        }
        if !(0.0..=1.0).contains(&self.initial_alpha) {
            return Err(ParamError::new("initial_alpha", self.initial_alpha, "a fraction in [0, 1]"));
        }
        self.reno().validate()
    }

    fn reno(&self) -> RenoParams {
        RenoParams { init_cwnd: self.init_cwnd, min_cwnd: self.min_cwnd }
    }
}

impl Algorithm for DctcpParams {
    const KIND: Kind = Kind::Window;
    fn needs(&self) -> Needs {
        Needs { ecn: true, ..Needs::default() }
    }
    fn validate(&self) -> Result<(), ParamError> {
        DctcpParams::validate(self)
    }
    fn build(&self, path: &Path) -> Controller {
        Controller::Window(Box::new(Dctcp::new(self.clone(), path.mss)))
    }
}

/// The once-per-window estimate: `(1 − g)·α + g·F`, `F` the marked fraction of what the window
/// acknowledged (`marked` of `acked`, bytes or packets).
pub fn update_alpha(alpha: f64, g: f64, acked: u64, marked: u64) -> f64 {
    (1.0 - g) * alpha + g * (marked as f64 / acked as f64)
}

#[derive(Clone, Debug)]
pub struct Dctcp {
    pub params: DctcpParams,
    pub reno: Reno,
    /// The estimate of the fraction of marked bytes.
    pub alpha: f64,
    acked: u64,
    marked: u64,
    /// `snd_nxt` when α was last updated: the end of the current observation window.
    window_end: u64,
    /// `snd_nxt` at the last cut: no new cut until `snd_una` reaches it.
    cwr_end: Option<u64>,
}

impl Dctcp {
    pub fn new(params: DctcpParams, mss: u64) -> Dctcp {
        Dctcp { reno: Reno::new(params.reno(), mss), alpha: params.initial_alpha, params, acked: 0, marked: 0, window_end: 0, cwr_end: None }
    }
}

impl WindowController for Dctcp {
    fn on_ack(&mut self, a: &AckEvent) {
        self.acked += a.acked_bytes;
        if a.ece {
            self.marked += a.acked_bytes;
        }
        if a.snd_una >= self.window_end && self.acked > 0 {
            self.alpha = update_alpha(self.alpha, self.params.g, self.acked, self.marked);
            self.acked = 0;
            self.marked = 0;
            self.window_end = a.snd_nxt;
        }
        if self.cwr_end.is_some_and(|end| a.snd_una >= end) {
            self.cwr_end = None;
        }
        if a.ece && self.cwr_end.is_none() && !a.in_recovery {
            let r = &mut self.reno;
            r.cwnd = (r.cwnd * (1.0 - self.alpha / 2.0)).max(r.floor());
            r.ssthresh = r.cwnd;
            self.cwr_end = Some(a.snd_nxt);
        } else if !a.ece && self.cwr_end.is_none() {
            self.reno.on_ack(a);
        }
    }

    /// Linux `dctcp_react_to_loss`: `ssthresh = max(cwnd/2, 2)` — the window, not the data in
    /// flight as Reno's RFC 5681 rule; then Reno's response (fast retransmit continues from
    /// `ssthresh`, a timeout from one segment).
    fn on_loss(&mut self, loss: Loss, _flight_bytes: u64, now: Time) {
        self.reno.on_loss(loss, self.reno.cwnd(), now);
    }

    fn cwnd(&self) -> u64 {
        self.reno.cwnd()
    }

    /// Linux `dctcp_cwnd_undo`: the window before the cut.
    fn undo(&mut self) {
        self.reno.undo();
    }

    fn metrics(&self) -> Metrics {
        Metrics { dctcp_alpha: Some(self.alpha), ..self.reno.metrics() }
    }
}
