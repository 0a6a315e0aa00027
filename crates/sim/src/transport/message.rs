//! The message transport (TIMELY §3, Fig. 6).
//!
//! - **Rate control engine** (§3.3): one scheduler per host for all its flows. Each flow's next
//!   segment gets a send time from its size, the flow's current rate and the last transmission;
//!   segments whose time has come are served round-robin; a rate change is applied lazily when
//!   the time comes (recompute, re-queue if now too early). A static cap on a flow's outstanding
//!   bytes is the safeguard.
//! - **Segmenter**: a released segment is handed to the NIC (`t_send`), which sends it as MTU
//!   packets (`crate::nic`).
//! - **Receiver**: the NIC acknowledges each whole segment when its last packet arrives, at
//!   once, with a high-priority ACK (§3.1 "prompt ACK generation").
//! - **RTT measurement engine** (§3.1): on the completion,
//!   `rtt = t_completion − t_send − segment_bytes / NIC line rate`, plus optional uniform noise;
//!   with NIC pacing the pacer's serialization (`segment_bytes / pacing rate`) is subtracted
//!   instead, "treating it as a lower transmission line rate" (§5).
//!
//! `MessageTx` does no I/O: the host's scheduler (`crate::nic`) asks it when its next segment
//! may go (`release_time`) and takes it (`release`); the receiving NIC feeds it each packet
//! (`on_data`, which says when to acknowledge); a completion (`on_completion`) feeds the rate
//! controller and says whether the flow is done. `crate::endpoint` does the rest.

use crate::engine::{exponential, Rng};
use rttlab_cc::{Completion, Rate, RateController, Time};

/// An application-limited source: messages of `message` bytes offered at `rate`.
pub struct App {
    pub rate: Rate,
    pub message: u64,
    pub poisson: bool,
    /// Arrival time of the next message.
    pub next_message: Time,
}

/// A message-transport flow's sender and receiver state.
pub struct MessageTx {
    pub cc: Box<dyn RateController>,
    /// The connection may send from `start`, and no new data from `stop` (`Time::MAX`: never).
    start: Time,
    stop: Time,
    /// Bytes the connection may still hand to the NIC (`u64::MAX`: unbounded).
    unsent: u64,
    app: Option<App>,
    /// Application bytes that arrived and are not yet handed to the NIC.
    ready: u64,
    last_release: Time,
    last_release_bytes: u64,
    outstanding: u64,
    pub(crate) in_sched: bool,
    /// Segments of this flow in the NIC.
    pub(crate) nic_segments: u32,
    /// Receiver: a CE mark arrived on the current segment.
    ce_seen: bool,
    /// Data exists only when offered (`offer`): an RPC connection.
    demand: bool,
}

impl MessageTx {
    /// A connection of `size` bytes (`None`: unbounded, or on demand when `demand`), fed by `app`
    /// if application-limited, sending from `start` and no new data from `stop`.
    pub fn new(cc: Box<dyn RateController>, size: Option<u64>, app: Option<App>, demand: bool, start: Time, stop: Time) -> MessageTx {
        MessageTx {
            cc,
            start,
            stop,
            unsent: size.unwrap_or(u64::MAX),
            app,
            ready: 0,
            last_release: Time::ZERO,
            last_release_bytes: 0,
            outstanding: 0,
            in_sched: false,
            nic_segments: 0,
            ce_seen: false,
            demand,
        }
    }

    /// The application hands `bytes` more to send (on-demand connections).
    pub fn offer(&mut self, bytes: u64) {
        self.ready += bytes;
    }

    /// Moves application messages that have arrived by `now` into `ready`.
    fn refill(&mut self, now: Time, rng: &mut Rng) {
        let Some(app) = &mut self.app else { return };
        while app.next_message <= now && self.ready < self.unsent {
            self.ready = (self.ready + app.message).min(self.unsent);
            let mean = app.rate.serialization(app.message);
            let gap = if app.poisson {
                exponential(rng, mean.ps() as f64)
            } else {
                mean
            };
            app.next_message += gap;
        }
    }

    /// Bytes of the next segment, and when its data is there.
    fn next_segment(&self, segment: u64) -> (u64, Time) {
        match &self.app {
            None if self.demand => (segment.min(self.ready), Time::ZERO),
            None => (segment.min(self.unsent), Time::ZERO),
            Some(_) if self.ready > 0 => (segment.min(self.ready), Time::ZERO),
            Some(app) => (segment.min(app.message).min(self.unsent), app.next_message),
        }
    }

    /// When the next segment (at most `segment` bytes) may be released, with the rate the
    /// controller has now; `None` while there is nothing to send or the outstanding bytes would
    /// exceed `max_outstanding` (a completion re-arms it). Application messages that have
    /// arrived by `now` are taken in first (`rng`: Poisson arrivals).
    pub fn release_time(&mut self, now: Time, segment: u64, max_outstanding: u64, rng: &mut Rng) -> Option<Time> {
        self.refill(now, rng);
        if self.unsent == 0 || (self.demand && self.ready == 0) {
            return None;
        }
        let (bytes, data_at) = self.next_segment(segment);
        if self.outstanding + bytes > max_outstanding {
            return None;
        }
        let paced = if self.last_release_bytes == 0 {
            self.start
        } else {
            self.last_release + self.cc.rate().serialization(self.last_release_bytes)
        };
        Some(paced.max(data_at).max(self.start).max(now)).filter(|&t| t < self.stop)
    }

    /// Releases the next segment (at most `segment` bytes) to the NIC at `now`; returns its bytes.
    pub fn release(&mut self, now: Time, segment: u64) -> u64 {
        let (bytes, _) = self.next_segment(segment);
        if self.app.is_some() || self.demand {
            self.ready -= bytes;
        }
        if self.unsent != u64::MAX {
            self.unsent -= bytes;
        }
        self.outstanding += bytes;
        self.last_release = now;
        self.last_release_bytes = bytes;
        bytes
    }

    /// Receiver: a data packet arrived, with CE mark `ce`; on the segment's last packet,
    /// returns the ECN echo of the ACK to send (any packet of the segment marked).
    pub fn on_data(&mut self, ce: bool, last_of_segment: bool) -> Option<bool> {
        self.ce_seen |= ce;
        last_of_segment.then(|| std::mem::take(&mut self.ce_seen))
    }

    /// Sender: the completion of a `bytes` segment with RTT sample `rtt` (§3.1: completion time
    /// minus send time minus serialization, noise included). Returns whether everything is sent
    /// and acknowledged.
    pub fn on_completion(&mut self, now: Time, rtt: Time, bytes: u64) -> bool {
        self.outstanding -= bytes;
        let app_rate = self.app.as_ref().map(|a| a.rate);
        self.cc.on_completion(&Completion { now, rtt, acked_bytes: bytes, app_rate });
        self.unsent == 0 && self.outstanding == 0
    }

    /// Bytes released and not yet completed.
    pub fn outstanding_bytes(&self) -> u64 {
        self.outstanding
    }
}

/// §3.1: the RTT of a segment sent at `t_send` and completed at `now`: the time minus the
/// segment's serialization at `rate` (the NIC line rate, or the pacing rate with NIC pacing).
pub fn completion_rtt(now: Time, t_send: Time, bytes: u64, rate: Rate) -> Time {
    (now - t_send).saturating_sub(rate.serialization(bytes))
}
