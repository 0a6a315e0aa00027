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
//! The state machine does no I/O: the transport feeds it acknowledgements and carries out the
//! repath it asks for.

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
}

impl Default for PlbParams {
    fn default() -> Self {
        PlbParams { rounds: 12, threshold: 0.5, idle_only: false }
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
}

impl Plb {
    pub fn new(params: PlbParams) -> Plb {
        Plb { params, round_end: 0, acked: 0, congested: 0, consecutive: 0 }
    }

    /// An acknowledgement of `acked_bytes` new bytes, `congested` if it carried the
    /// controller's congestion signal; `snd_una` and `snd_nxt` after it. Returns true when the
    /// connection must take a new path label now.
    pub fn on_ack(&mut self, acked_bytes: u64, congested: bool, snd_una: u64, snd_nxt: u64) -> bool {
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
            self.consecutive = 0;
            return true;
        }
        false
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
        assert!(!plb.on_ack(0, false, 0, 10_000));
        let (mut una, mut repaths) = (0u64, Vec::new());
        for (r, &marked) in marked_per_round.iter().enumerate() {
            let end = una + 10_000;
            for i in 0..10 {
                una += 1000;
                // The window opens for the next round's packets with the round's last ACK.
                let nxt = if i == 9 { una + 10_000 } else { end };
                if plb.on_ack(1000, i < marked, una, nxt) {
                    repaths.push(r);
                }
            }
        }
        repaths
    }

    #[test]
    fn repaths_after_the_rounds_in_a_row() {
        let p = PlbParams { rounds: 3, threshold: 0.5, idle_only: false };
        assert_eq!(run(p, &[5, 5, 5, 5, 5, 5, 5]), vec![2, 5]);
        // One uncongested round (4 of 10 below one half) starts the count again.
        assert_eq!(run(p, &[5, 5, 4, 5, 5, 5]), vec![5]);
        assert_eq!(run(p, &[10; 2]), Vec::<usize>::new());
    }

    #[test]
    fn idle_only_waits_for_nothing_in_flight() {
        let p = PlbParams { rounds: 1, threshold: 0.5, idle_only: true };
        let mut plb = Plb::new(p);
        assert!(!plb.on_ack(1000, true, 1000, 5000), "a congested round ends, but 4000 B are in flight");
        assert!(!plb.on_ack(1000, true, 2000, 5000));
        assert!(plb.on_ack(3000, true, 5000, 5000), "the next round ends congested too, and nothing is in flight");
        assert_eq!(plb.consecutive, 0);
    }

    #[test]
    fn parameters_are_checked() {
        assert!(PlbParams { rounds: 0, ..PlbParams::default() }.validate().is_err());
        assert!(PlbParams { threshold: 1.5, ..PlbParams::default() }.validate().is_err());
        assert!(PlbParams::default().validate().is_ok());
    }
}
