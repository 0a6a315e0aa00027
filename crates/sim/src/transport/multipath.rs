//! What a connection's transport does about its path, whatever its controller: PLB's count of
//! congested rounds (`rttlab_cc::plb`), which asks for a new path label and pauses after a
//! retransmission timeout, and the median filter on a delay controller's RTT samples
//! (`cc.feedback = "median"`).

use rttlab_cc::plb::{Plb, PlbParams};
use rttlab_cc::Time;
use std::collections::VecDeque;

/// A connection's path control, built from what the run fixes (`PathRun`).
#[derive(Clone, Debug, Default)]
pub struct PathControl {
    /// PLB, and the seed of its draws (boxed: most runs have none, and every connection
    /// carries this).
    plb: Option<Box<(Plb, u64)>>,
    /// PLB counts ECN-echoed bytes as congested (an ECN controller); else bytes whose sample
    /// the controller found over its target.
    by_ecn: bool,
    median: Option<Median>,
}

/// What the scenario fixes for every connection's path control.
#[derive(Copy, Clone, Debug, Default)]
pub struct PathRun {
    pub plb: Option<PlbParams>,
    pub by_ecn: bool,
    /// `cc.feedback = "median"`: over this many samples.
    pub median_of: Option<usize>,
}

impl PathControl {
    /// `seed` draws PLB's pause after a timeout: the connection's own, so that its random
    /// stream is the same with PLB or without.
    pub fn new(run: &PathRun, seed: u64) -> PathControl {
        PathControl { plb: run.plb.map(|p| Box::new((Plb::new(p), seed))), by_ecn: run.by_ecn, median: run.median_of.map(Median::new) }
    }

    /// The sample the controller is fed for the RTT just measured.
    pub fn feedback(&mut self, rtt: Time) -> Time {
        match &mut self.median {
            Some(m) => m.push(rtt),
            None => rtt,
        }
    }

    /// An acknowledgement of `acked_bytes` at `now`, with its ECN echo and whether the
    /// controller's sample was over its target (`None`: it keeps none); `snd_una`, `snd_nxt`
    /// after it. True: take a new path label now (PLB).
    pub fn on_ack(&mut self, acked_bytes: u64, ece: bool, over_target: Option<bool>, (snd_una, snd_nxt): (u64, u64), now: Time) -> bool {
        let Some((plb, _)) = self.plb.as_deref_mut() else { return false };
        let congested = if self.by_ecn { ece } else { over_target.unwrap_or(false) };
        plb.on_ack(acked_bytes, congested, snd_una, snd_nxt, now)
    }

    /// A retransmission timeout at `now`: PLB pauses (`rttlab_cc::plb::Plb::on_rto`).
    pub fn on_rto(&mut self, now: Time) {
        if let Some((plb, seed)) = self.plb.as_deref_mut() {
            let draw = crate::core::engine::splitmix64(*seed ^ now.ps());
            plb.on_rto(now, (draw >> 11) as f64 / (1u64 << 53) as f64);
        }
    }
}

/// The median of the last `n` samples (MSwift, 2025: under multipath one path's sample no
/// longer sets the window); of fewer while fewer have come, the upper one of an even count.
#[derive(Clone, Debug)]
struct Median {
    last: VecDeque<Time>,
    n: usize,
    sorted: Vec<Time>,
}

impl Median {
    fn new(n: usize) -> Median {
        Median { last: VecDeque::with_capacity(n), n, sorted: Vec::with_capacity(n) }
    }

    fn push(&mut self, rtt: Time) -> Time {
        if self.last.len() == self.n {
            self.last.pop_front();
        }
        self.last.push_back(rtt);
        self.sorted.clear();
        self.sorted.extend(&self.last);
        let mid = self.sorted.len() / 2;
        *self.sorted.select_nth_unstable(mid).1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_the_last_samples() {
        let mut m = Median::new(3);
        let us = Time::from_us;
        assert_eq!(m.push(us(10)), us(10));
        assert_eq!(m.push(us(50)), us(50), "of two, the upper");
        assert_eq!(m.push(us(12)), us(12));
        assert_eq!(m.push(us(11)), us(12), "50, 12, 11");
        assert_eq!(m.push(us(200)), us(12), "12, 11, 200: one slow path's sample is not the median");
    }
}
