//! A connection's path as its sender chooses it: a path label that the ECMP hash mixes in (an
//! IPv6 flow label's analogue), which PLB redraws (`Hosts::repath`), and with
//! `routing.spray = "reps"` an entropy value per packet, reused while its packets come back
//! unmarked (REPS, Bonato et al., 2024, §3: a buffer of good entropies, fresh ones when empty).

use crate::core::engine::Rng;
use crate::fabric::routing::labelled_hash;
use rand::Rng as _;
use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct PathLabel {
    /// The label (0: the connection's first path, its 5-tuple's hash alone).
    pub label: u32,
    /// REPS: entropy values whose packets were acknowledged without a mark, oldest first, at
    /// most `capacity`.
    reps: Option<Box<Reps>>,
    /// PRR (`transport.prr`): a retransmission timeout takes a new label.
    pub prr: bool,
}

#[derive(Clone, Debug)]
struct Reps {
    good: VecDeque<u16>,
    capacity: usize,
}

impl PathLabel {
    /// With REPS, keeping at most `reps` entropy values for reuse; with PRR or not.
    pub fn new(reps: Option<usize>, prr: bool) -> PathLabel {
        let reps = reps.map(|capacity| Box::new(Reps { good: VecDeque::with_capacity(capacity.min(64)), capacity }));
        PathLabel { label: 0, reps, prr }
    }

    /// The hash and entropy value of the connection's next data packet, from its 5-tuple's
    /// hash: REPS reuses the oldest good entropy or draws one; otherwise the label decides.
    #[inline]
    pub fn next(&mut self, hash: u32, rng: &mut Rng) -> (u32, u16) {
        let Some(reps) = &mut self.reps else { return (labelled_hash(hash, self.label), 0) };
        let entropy = reps.good.pop_front().unwrap_or_else(|| rng.random_range(1..=u16::MAX));
        (labelled_hash(hash, entropy as u32), entropy)
    }

    /// An acknowledgement echoed entropy value `entropy` (0: none), `marked` or not: REPS keeps
    /// an unmarked one for reuse.
    pub fn on_ack(&mut self, entropy: u16, marked: bool) {
        if let Some(reps) = self.reps.as_mut().filter(|r| entropy != 0 && !marked && r.good.len() < r.capacity) {
            reps.good.push_back(entropy);
        }
    }

    /// PLB (or a Python controller) asks for another path: a new label, never the current one.
    pub fn repath(&mut self, rng: &mut Rng) {
        let old = self.label;
        while self.label == old {
            self.label = rng.random_range(1..=u32::MAX);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn reps_reuses_the_entropies_that_came_back_unmarked() {
        let mut rng = Rng::seed_from_u64(7);
        let mut p = PathLabel::new(Some(2), false);
        let (_, a) = p.next(99, &mut rng);
        let (_, b) = p.next(99, &mut rng);
        let (_, c) = p.next(99, &mut rng);
        p.on_ack(a, false);
        p.on_ack(b, true);
        p.on_ack(c, false);
        p.on_ack(a, false);
        p.on_ack(c, false); // the buffer holds two
        assert_eq!(p.next(99, &mut rng).1, a);
        assert_eq!(p.next(99, &mut rng).1, c);
        let (hash, e) = p.next(99, &mut rng);
        assert!(e != a && e != c && e != 0, "empty: a fresh draw");
        assert_eq!(hash, labelled_hash(99, e as u32));
    }

    #[test]
    fn a_repath_changes_the_label_and_the_hash() {
        let mut rng = Rng::seed_from_u64(7);
        let mut p = PathLabel::new(None, false);
        assert_eq!(p.next(99, &mut rng), (99, 0), "the first path is the 5-tuple's");
        p.repath(&mut rng);
        assert_ne!(p.label, 0);
        assert_ne!(p.next(99, &mut rng).0, 99);
    }
}
