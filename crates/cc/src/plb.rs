//! Protective Load Balancing (Qureshi et al., SIGCOMM 2022; Linux `net/ipv4/tcp_plb.c`): a
//! connection that sees congestion for several rounds in a row moves to another path by
//! drawing a new path label (an IPv6 flow label's entropy), whatever its controller.
//!
//! - A **round** is one round trip of the connection's own data: it ends when everything sent
//!   when it began is acknowledged (DCTCP's observation window, `tcp_plb_update_state` called
//!   from DCTCP's per-window update).
//! - A round is **congested** when the fraction of its acknowledged bytes that carried a
//!   congestion signal is at least `threshold` (§3.1: the ECN-marked fraction for ECN
//!   controllers, Linux's `tcp_plb_cong_thresh` = 128/256; for delay controllers, bytes whose
//!   RTT sample was above the controller's target, the paper's §3.4 for Swift). An uncongested
//!   round starts the count again.
//! - After `rounds` congested rounds in a row the connection **repaths** (§3.2,
//!   `tcp_plb_check_rehash`); with `idle_only` only once nothing is in flight, so that a TCP
//!   connection's packets are not reordered (Linux's idle rehash), otherwise at once, as the
//!   RDMA transports do (§3.4: Pony Express and 1RMA repath immediately).
//!
//! - After a **retransmission timeout** no congestion-triggered repath happens for a random
//!   time between `suspend_after_rto` and twice that (Linux `tcp_plb_update_state_upon_rto`:
//!   the timeout's own repath, PRR's, may have been around a black hole that a repath on
//!   congestion would lead back into), and the count of congested rounds starts again.
//!
//! The state machine does no I/O: the transport feeds it acknowledgements and timeouts and
//! carries out the repath it asks for.

use crate::Time;
use serde::{Deserialize, Serialize};

/// `cc.plb`: when a connection repaths.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlbParams {
    /// Congested rounds in a row before a repath (Linux `tcp_plb_rehash_rounds`: 12; the
    /// paper's deployment for RDMA: 3–5 rounds).
    pub rounds: u32,
    /// The fraction of a round's bytes with a congestion signal that makes it congested (Linux
    /// `tcp_plb_cong_thresh`: 128/256).
    pub threshold: f64,
    /// Repath only when nothing is in flight (TCP's idle rehash); false: at once.
    pub idle_only: bool,
    /// After a retransmission timeout, no repath on congestion for this long plus a random
    /// part of it (Linux `tcp_plb_suspend_rto_sec`: 60 s); 0: none.
    pub suspend_after_rto: Time,
}

impl Default for PlbParams {
    fn default() -> Self {
        PlbParams { rounds: 12, threshold: 0.5, idle_only: false, suspend_after_rto: Time::from_ms(60_000) }
    }
}

impl PlbParams {
    pub fn validate(&self) -> Result<(), crate::ParamError> {
        if self.rounds == 0 || self.rounds > 1_000_000 {
            return Err(crate::ParamError::new("plb.rounds", self.rounds, "1 to 1000000 congested rounds"));
        }
        if !(self.threshold > 0.0 && self.threshold <= 1.0) {
            return Err(crate::ParamError::new("plb.threshold", self.threshold, "a fraction in (0, 1]"));
        }
        Ok(())
    }
}

/// One connection's PLB state.
#[derive(Clone, Debug)]
pub struct Plb {
    params: PlbParams,
    /// The round ends when `snd_una` reaches this (bytes; 0: no round begun).
    round_end: u64,
    /// Bytes acknowledged in this round, and those with a congestion signal.
    acked: u64,
    congested: u64,
    /// Congested rounds in a row.
    pub consecutive: u32,
    /// No repath on congestion before this (a retransmission timeout's pause).
    pause_until: Option<Time>,
}

impl Plb {
    pub fn new(params: PlbParams) -> Plb {
        Plb { params, round_end: 0, acked: 0, congested: 0, consecutive: 0, pause_until: None }
    }

    /// An acknowledgement of `acked_bytes` new bytes, `congested` if it carried the
    /// controller's congestion signal, at `now`; `snd_una` and `snd_nxt` after it. Returns true
    /// when the connection must take a new path label now; during a timeout's pause the
    /// congested rounds go on counting but no repath happens (Linux `tcp_plb_check_rehash`).
    pub fn on_ack(&mut self, acked_bytes: u64, congested: bool, snd_una: u64, snd_nxt: u64, now: Time) -> bool {
        self.acked += acked_bytes;
        self.congested += if congested { acked_bytes } else { 0 };
        if snd_una >= self.round_end {
            if self.acked > 0 {
                let fraction = self.congested as f64 / self.acked as f64;
                self.consecutive = if fraction >= self.params.threshold { self.consecutive.saturating_add(1) } else { 0 };
            }
            (self.round_end, self.acked, self.congested) = (snd_nxt.max(snd_una + 1), 0, 0);
        }
        let idle = snd_una >= snd_nxt;
        if self.consecutive >= self.params.rounds && (idle || !self.params.idle_only) {
            if self.pause_until.is_some_and(|t| now < t) {
                return false;
            }
            self.pause_until = None;
            self.consecutive = 0;
            return true;
        }
        false
    }

    /// A retransmission timeout at `now`: no repath on congestion until `suspend_after_rto`
    /// plus `uniform` (a draw in [0, 1)) of it have passed, and the count starts again.
    pub fn on_rto(&mut self, now: Time, uniform: f64) {
        let suspend = self.params.suspend_after_rto.ps();
        if suspend > 0 {
            self.pause_until = Some(now + Time(suspend + (uniform * suspend as f64) as u64));
        }
        self.consecutive = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds of 10 packets of 1000 B, each with `marked` of them congested: the connection
    /// repaths at the end of the `rounds`-th congested round in a row.
    fn run(p: PlbParams, marked_per_round: &[u64]) -> Vec<usize> {
        let mut plb = Plb::new(p);
        // The connection sends its first round's 10 packets before any ACK.
        assert!(!plb.on_ack(0, false, 0, 10_000, Time::ZERO));
        let (mut una, mut repaths) = (0u64, Vec::new());
        for (r, &marked) in marked_per_round.iter().enumerate() {
            let end = una + 10_000;
            for i in 0..10 {
                una += 1000;
                // The window opens for the next round's packets with the round's last ACK.
                let nxt = if i == 9 { una + 10_000 } else { end };
                if plb.on_ack(1000, i < marked, una, nxt, Time::ZERO) {
                    repaths.push(r);
                }
            }
        }
        repaths
    }

    #[test]
    fn repaths_after_the_rounds_in_a_row() {
        let p = PlbParams { rounds: 3, threshold: 0.5, idle_only: false, ..PlbParams::default() };
        assert_eq!(run(p, &[5, 5, 5, 5, 5, 5, 5]), vec![2, 5]);
        // One uncongested round (4 of 10 below one half) starts the count again.
        assert_eq!(run(p, &[5, 5, 4, 5, 5, 5]), vec![5]);
        assert_eq!(run(p, &[10; 2]), Vec::<usize>::new());
    }

    #[test]
    fn idle_only_waits_for_nothing_in_flight() {
        let p = PlbParams { rounds: 1, threshold: 0.5, idle_only: true, ..PlbParams::default() };
        let mut plb = Plb::new(p);
        assert!(!plb.on_ack(1000, true, 1000, 5000, Time::ZERO), "a congested round ends, but 4000 B are in flight");
        assert!(!plb.on_ack(1000, true, 2000, 5000, Time::ZERO));
        assert!(plb.on_ack(3000, true, 5000, 5000, Time::ZERO), "the next round ends congested too, and nothing is in flight");
        assert_eq!(plb.consecutive, 0);
    }

    #[test]
    fn parameters_are_checked() {
        assert!(PlbParams { rounds: 0, ..PlbParams::default() }.validate().is_err());
        assert!(PlbParams { threshold: 1.5, ..PlbParams::default() }.validate().is_err());
        assert!(PlbParams::default().validate().is_ok());
    }

    /// A timeout at 0 with a draw of one half and a 1 ms suspension pauses repaths on
    /// congestion until 1.5 ms (Linux: between one and two suspensions), restarting the
    /// count: one-round PLB that would repath at every congested round does not before then,
    /// and does at the first congested round after.
    #[test]
    fn a_timeout_pauses_repaths_on_congestion() {
        let p = PlbParams { rounds: 1, suspend_after_rto: Time::from_ms(1), ..PlbParams::default() };
        let mut plb = Plb::new(p);
        plb.on_rto(Time::ZERO, 0.5);
        let (mut una, mut repaths) = (0u64, Vec::new());
        for round in 0..20u64 {
            let now = Time::from_us(100 * round);
            una += 1000;
            if plb.on_ack(1000, true, una, una + 1000, now) {
                repaths.push(round);
            }
        }
        assert_eq!(repaths.first(), Some(&15), "{repaths:?}");
        // Without the suspension, the same rounds repath from the first.
        let mut plb = Plb::new(PlbParams { suspend_after_rto: Time::ZERO, ..p });
        plb.on_rto(Time::ZERO, 0.5);
        assert!(!plb.on_ack(0, false, 0, 1000, Time::ZERO));
        assert!(plb.on_ack(1000, true, 1000, 2000, Time::ZERO));
    }
}
