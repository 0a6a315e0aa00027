//! TCP Reno/NewReno window control (RFC 5681), the base DCTCP builds on: slow start with
//! appropriate byte counting (RFC 3465, L = 2 MSS), congestion avoidance of one MSS per window,
//! halving on a fast retransmit, one MSS after a timeout. The window grows only while it is
//! what limits the sender (RFC 7661; Linux `tcp_is_cwnd_limited`).

use crate::registry::{Algorithm, Controller, Kind, Path};
use crate::{AckEvent, Loss, Metrics, ParamError, Time, WindowController};
use serde::{Deserialize, Serialize};

/// Parameters of a TCP window; `Default` is Linux's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RenoParams {
    /// Initial window in segments (RFC 6928: 10).
    pub init_cwnd: u32,
    /// Smallest window after a reduction, in segments (Linux: 2).
    pub min_cwnd: u32,
}

impl Default for RenoParams {
    fn default() -> Self {
        RenoParams { init_cwnd: 10, min_cwnd: 2 }
    }
}

impl RenoParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.init_cwnd == 0 {
            return Err(ParamError::new("init_cwnd", self.init_cwnd, "at least 1 segment"));
        }
        if self.min_cwnd == 0 {
            return Err(ParamError::new("min_cwnd", self.min_cwnd, "at least 1 segment"));
        }
        Ok(())
    }
}

impl Algorithm for RenoParams {
    const KIND: Kind = Kind::Window;
    fn validate(&self) -> Result<(), ParamError> {
        RenoParams::validate(self)
    }
    fn build(&self, path: &Path) -> Controller {
        Controller::Window(Box::new(Reno::new(self.clone(), path.mss)))
    }
}

#[derive(Clone, Debug)]
pub struct Reno {
    pub params: RenoParams,
    /// Maximum segment size: payload bytes of a full packet.
    pub mss: f64,
    /// Congestion window and slow-start threshold in bytes.
    pub cwnd: f64,
    pub ssthresh: f64,
    /// Window and threshold before the last fast-retransmit cut, for `undo`.
    prior: Option<(f64, f64)>,
}

impl Reno {
    pub fn new(params: RenoParams, mss: u64) -> Reno {
        let mss = mss as f64;
        Reno { cwnd: params.init_cwnd as f64 * mss, ssthresh: f64::INFINITY, params, mss, prior: None }
    }

    /// The window floor after a reduction, in bytes.
    pub fn floor(&self) -> f64 {
        self.params.min_cwnd as f64 * self.mss
    }

    /// Window growth for `acked` newly acknowledged bytes: slow start below `ssthresh` (at most
    /// 2 MSS per ACK, RFC 3465), else `MSS·acked/cwnd` (RFC 5681 §3.1).
    pub fn grow(&mut self, acked: u64) {
        let acked = acked as f64;
        if self.cwnd < self.ssthresh {
            self.cwnd += acked.min(2.0 * self.mss);
        } else {
            self.cwnd += self.mss * acked / self.cwnd;
        }
    }
}

impl WindowController for Reno {
    fn on_ack(&mut self, a: &AckEvent) {
        if !a.in_recovery && a.cwnd_limited {
            self.grow(a.acked_bytes);
        }
    }

    /// RFC 5681 §3.1–3.2: `ssthresh = max(FlightSize/2, 2·MSS)`; a fast retransmit continues
    /// from `ssthresh`, a timeout from one segment.
    fn on_loss(&mut self, loss: Loss, flight_bytes: u64, _now: Time) {
        self.prior = (loss == Loss::FastRetransmit).then_some((self.cwnd, self.ssthresh));
        self.ssthresh = (flight_bytes as f64 / 2.0).max(2.0 * self.mss);
        self.cwnd = match loss {
            Loss::FastRetransmit => self.ssthresh,
            Loss::Timeout => self.mss,
        };
    }

    fn cwnd(&self) -> u64 {
        self.cwnd as u64
    }

    /// Linux `tcp_undo_cwnd_reduction`: the window and threshold at least what they were.
    fn undo(&mut self) {
        if let Some((cwnd, ssthresh)) = self.prior.take() {
            self.cwnd = self.cwnd.max(cwnd);
            self.ssthresh = self.ssthresh.max(ssthresh);
        }
    }

    fn metrics(&self) -> Metrics {
        Metrics { cwnd_bytes: Some(self.cwnd()), ssthresh_bytes: self.ssthresh.is_finite().then_some(self.ssthresh as u64), ..Metrics::default() }
    }
}
