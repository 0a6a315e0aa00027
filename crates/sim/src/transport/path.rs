//! The sender's path chooser: which entropy the connection's next data packet takes, and what
//! to make of what came back on one. The entropy is a path label that the ECMP hash mixes in
//! (an IPv6 flow label's analogue), or per packet an entropy value (EV). Every sender-side path
//! strategy is one of its cases, as htsim's `uec_mp.h` keeps them behind `nextEntropy` and
//! `processEv`:
//! - PLB (`cc.plb`, Qureshi et al., SIGCOMM'22; `rttlab_cc::plb`): a new label after enough
//!   congested rounds, paused after a retransmission timeout;
//! - PRR (`transport.prr`, Linux `tcp_rtx_synack`/`sk_rethink_txhash`): a new label at a
//!   retransmission timeout;
//! - REPS (`routing.spray = "reps"`, Bonato et al., 2024, §3): an EV per packet, reused while
//!   its packets come back unmarked (a buffer of good EVs, fresh draws when it is empty);
//! - oblivious and bitmap spraying (`routing.spray = "oblivious"`, `"bitmap"`; htsim
//!   `uec_mp.cpp`, `UecMpOblivious`, `UecMpBitmap`): a walk over `routing.entropies` EVs in an
//!   order shuffled at each pass, the bitmap skipping EVs that came back penalised (an ECN
//!   echo adds 1, a NACK of a packet trimmed before the last hop 4; htsim's timeout penalty
//!   falls on no EV it knows, and is left out);
//! - mixed (`routing.spray = "mixed"`, htsim's default, `UecMpMixed`): EVs that came back
//!   unmarked reused first, else the bitmap's walk;
//! - REPS with freezing (`routing.spray = "reps_freezing"`, htsim_uec's `UecMpReps`): a ring of
//!   eight good EVs, frozen for 10 ms after a timeout on a trimming fabric;
//! - a controller's own request (a Python controller's `repath()`).
//!
//! The receiver's ACKs choose their own path (PRR's `tcp_rcv_spurious_retrans`, in the host's
//! `duplicate_received`); a switch's choice is the fabric's (`Fabric::route`).

use crate::core::engine::{splitmix64, Rng};
use crate::fabric::routing::labelled_hash;
use rand::Rng as _;
use rttlab_cc::plb::{Plb, PlbParams};
use rttlab_cc::Time;
use std::collections::VecDeque;

/// A connection's path strategies, as its configuration sets them (`ConnConfig::path`).
#[derive(Copy, Clone, Debug, Default)]
pub struct PathStrategy {
    /// An EV per packet, and how it is chosen.
    pub entropy: Option<Entropy>,
    /// PRR: a timeout takes a new label.
    pub prr: bool,
    pub plb: Option<PlbParams>,
    /// PLB counts ECN-echoed bytes as congested (an ECN controller); else bytes whose sample
    /// the controller found over its target.
    pub plb_by_ecn: bool,
}

impl PathStrategy {
    /// Whether the transport must report every acknowledgement ([`Returned::Acked`]): PLB
    /// counts rounds from them.
    pub fn counts_rounds(&self) -> bool {
        self.plb.is_some()
    }
}

/// How the sender chooses an EV per packet (`routing.spray`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Entropy {
    /// REPS, keeping at most `keep` good EVs.
    Reps { keep: usize },
    /// A walk over `values` EVs (a power of two).
    Oblivious { values: u16 },
    /// The walk, skipping penalised EVs.
    Bitmap { values: u16 },
    /// EVs that came back unmarked reused first, else the bitmap's walk.
    Mixed { values: u16 },
    /// htsim_uec's REPS over `values` EVs, freezing after a timeout when switches trim.
    RepsFreezing { values: u16, freeze: bool },
}

/// What came back on the connection's path.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Returned {
    /// An acknowledgement echoed EV `entropy` (0: none), ECN-marked or not.
    Echo { entropy: u16, marked: bool },
    /// The transport's acknowledgement of `bytes` new bytes: PLB's count of rounds.
    Acked(Acked),
    /// A retransmission timeout.
    Timeout,
    /// Ultra Ethernet: a NACK of a packet a switch trimmed, sent on EV `entropy`, at the last
    /// hop (its receiver's downlink, not the path) or before it.
    Nack { entropy: u16, last_hop: bool },
}

/// An acknowledgement as the transport saw it ([`Returned::Acked`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Acked {
    pub bytes: u64,
    pub ece: bool,
    /// Whether the controller's last sample was over its target (`None`: it keeps none).
    pub over_target: Option<bool>,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// The controller asked for a new path (`rttlab_cc::RateController::take_repath`).
    pub asked: bool,
}

#[derive(Clone, Debug, Default)]
pub struct PathChooser {
    /// The label (0: the connection's first path, its 5-tuple's hash alone).
    label: u32,
    /// The EV strategy's state (boxed, as PLB: most connections have neither).
    ev: Option<Box<Ev>>,
    prr: bool,
    /// PLB, the seed of its pause's draws and whether it reads ECN.
    plb: Option<Box<(Plb, u64, bool)>>,
}

#[derive(Clone, Debug)]
enum Ev {
    /// REPS's good EVs, oldest first, at most `capacity`.
    Reps {
        good: VecDeque<u16>,
        capacity: usize,
    },
    Oblivious(Walk),
    Bitmap(Penalised),
    /// The EVs that came back unmarked, oldest first (htsim's `UecMpRepsLegacy`, unbounded:
    /// no more come back than were sent), and the bitmap's walk.
    Mixed(Penalised, VecDeque<u16>),
    RepsRing(RepsRing),
}

/// The bitmap's walk, and each EV's penalty (htsim's `_ev_skip_bitmap`, at most
/// `MAX_PENALTY`).
#[derive(Clone, Debug)]
struct Penalised {
    walk: Walk,
    penalty: Vec<u8>,
}

impl Penalised {
    /// `UecMpBitmap::nextEntropy`: the first penalised EV met pays one back; at most one pass
    /// is skipped, then the walk's EV goes whatever its penalty.
    fn next(&mut self, rng: &mut Rng) -> u16 {
        let walk = &mut self.walk;
        let mut paid = false;
        for _ in 0..=walk.mask as usize {
            let p = &mut self.penalty[walk.current() as usize];
            if *p == 0 {
                break;
            }
            if !std::mem::replace(&mut paid, true) {
                *p -= 1;
            }
            walk.step(rng);
        }
        let low = walk.current();
        walk.step(rng);
        walk.entropy(low)
    }

    /// `UecMpBitmap::processEv`: EV `entropy` came back with `penalty` against it.
    fn penalise(&mut self, entropy: u16, penalty: u8) {
        if entropy != 0 {
            let p = &mut self.penalty[(entropy & self.walk.mask) as usize];
            *p = p.saturating_add(penalty).min(MAX_PENALTY);
        }
    }
}

/// htsim_uec's REPS (`UecMpReps`, `CircularBufferREPS`): a ring of `RING` EVs that came back
/// unmarked, the newest overwriting the oldest, each reused once (the earliest first) and fresh
/// EVs drawn when none is left. After a timeout on a fabric that trims (a timeout there means a
/// link failed, not congestion), it freezes for `FREEZE`: only the ring's EVs go, round-robin,
/// used or not; the first feedback after that empties the ring and the next `EXPLORE` packets
/// draw fresh EVs.
#[derive(Clone, Debug)]
struct RepsRing {
    /// The connection's EVs: `walk.entropy` of a draw below `values`.
    walk: Walk,
    ring: [(u16, bool); RING],
    head: usize,
    count: usize,
    fresh: usize,
    freeze: bool,
    frozen_until: Option<Time>,
    frozen_head: usize,
    explore: u8,
}

/// `CircularBufferREPS::repsBufferSize`.
const RING: usize = 8;
/// `CircularBufferREPS::exit_freeze_after`: 10 ms.
const FREEZE: Time = Time(10_000_000_000);
/// `UecMpReps::processEv`: fresh EVs drawn after a freeze.
const EXPLORE: u8 = 16;

impl RepsRing {
    fn draw(&self, rng: &mut Rng) -> u16 {
        self.walk.entropy(rng.random::<u16>() & self.walk.mask)
    }

    fn next(&mut self, rng: &mut Rng) -> u16 {
        if self.explore > 0 {
            self.explore -= 1;
            return self.draw(rng);
        }
        if self.frozen_until.is_some() {
            if self.count == 0 {
                return self.draw(rng);
            }
            let (ev, valid) = &mut self.ring[self.frozen_head];
            self.fresh -= std::mem::replace(valid, false) as usize;
            self.frozen_head = (self.frozen_head + 1) % self.count;
            return *ev;
        }
        if self.fresh == 0 {
            return self.draw(rng);
        }
        let earliest = (self.head + RING - self.fresh) % RING;
        self.ring[earliest].1 = false;
        self.fresh -= 1;
        self.ring[earliest].0
    }

    /// `CircularBufferREPS::add`.
    fn add(&mut self, ev: u16) {
        if !self.ring[self.head].1 {
            self.fresh = (self.fresh + 1).min(RING);
        }
        self.ring[self.head] = (ev, true);
        self.head = (self.head + 1) % RING;
        self.count = (self.count + 1).min(RING);
    }

    /// `UecMpReps::processEv`: what came back at `now` (`good`: an unmarked EV).
    fn feedback(&mut self, good: Option<u16>, timeout: bool, now: Time) {
        if timeout && self.freeze && self.frozen_until.is_none() && self.explore == 0 {
            self.frozen_until = Some(now + FREEZE);
        }
        if self.frozen_until.is_some_and(|until| now > until) {
            *self = RepsRing { explore: EXPLORE, ..RepsRing::new(self.walk.clone(), self.freeze) };
        }
        if let Some(ev) = good.filter(|&e| e != 0) {
            self.add(ev);
        }
    }

    fn new(walk: Walk, freeze: bool) -> RepsRing {
        RepsRing { walk, ring: [(0, false); RING], head: 0, count: 0, fresh: 0, freeze, frozen_until: None, frozen_head: 0, explore: 0 }
    }
}

/// htsim's bitmap: a timeout's penalty, the most an EV carries.
const MAX_PENALTY: u8 = 15;
/// htsim's bitmap: a NACK's penalty (`UecMpBitmap::processEv`).
const NACK_PENALTY: u8 = 4;

/// A walk over `mask + 1` EVs (`UecMpOblivious::nextEntropy`): the `index`-th of a pass is
/// `index ^ xor`, `xor` drawn again at each pass, so that each pass takes every EV once in
/// another order; the bits above the mask are the connection's own, drawn once, with the top
/// bit set so that no EV is 0 (no EV).
#[derive(Clone, Debug)]
struct Walk {
    mask: u16,
    index: u16,
    xor: u16,
    upper: u16,
}

impl Walk {
    fn new(values: u16, seed: u64) -> Walk {
        let mask = values - 1;
        let draw = splitmix64(seed ^ 0x5eed_e7a1);
        Walk { mask, index: 0, xor: draw as u16 & mask, upper: (draw >> 16) as u16 & !mask | 1 << 15 }
    }

    /// The walk's EV now (its low bits: the EV's index).
    fn current(&self) -> u16 {
        (self.index ^ self.xor) & self.mask
    }

    /// Moves on one EV; a new pass reshuffles.
    fn step(&mut self, rng: &mut Rng) {
        self.index += 1;
        if self.index > self.mask {
            self.index = 0;
            self.xor = rng.random::<u16>() & self.mask;
        }
    }

    fn entropy(&self, low: u16) -> u16 {
        self.upper | low
    }
}

impl PathChooser {
    /// The chooser of a connection with strategies `s`; `seed` draws PLB's pause after a
    /// timeout, the connection's own so that its random stream is the same with PLB or without.
    pub fn new(s: &PathStrategy, seed: u64) -> PathChooser {
        let ev = s.entropy.map(|e| {
            Box::new(match e {
                Entropy::Reps { keep } => Ev::Reps { good: VecDeque::with_capacity(keep.min(64)), capacity: keep },
                Entropy::Oblivious { values } => Ev::Oblivious(Walk::new(values, seed)),
                Entropy::Bitmap { values } => Ev::Bitmap(Penalised { walk: Walk::new(values, seed), penalty: vec![0; values as usize] }),
                Entropy::Mixed { values } => Ev::Mixed(Penalised { walk: Walk::new(values, seed), penalty: vec![0; values as usize] }, VecDeque::new()),
                Entropy::RepsFreezing { values, freeze } => Ev::RepsRing(RepsRing::new(Walk::new(values, seed), freeze)),
            })
        });
        PathChooser { label: 0, ev, prr: s.prr, plb: s.plb.map(|p| Box::new((Plb::new(p), seed, s.plb_by_ecn))) }
    }

    /// The hash and EV of the connection's next data packet, from its 5-tuple's hash: REPS
    /// reuses the oldest good EV or draws one, the walks take their next; without an EV
    /// strategy the label and the packet's subflow decide.
    #[inline]
    pub fn next(&mut self, hash: u32, subflow: u8, rng: &mut Rng) -> (u32, u16) {
        let Some(ev) = self.ev.as_deref_mut() else {
            // Subflow s takes the label s after the connection's, and says so in its EV, which
            // its ACK echoes (`transport.subflows`: no EV strategy beside it).
            return (labelled_hash(hash, self.label.wrapping_add(subflow as u32)), subflow as u16);
        };
        let entropy = match ev {
            Ev::Reps { good, .. } => good.pop_front().unwrap_or_else(|| rng.random_range(1..=u16::MAX)),
            Ev::Oblivious(walk) => {
                let low = walk.current();
                walk.step(rng);
                walk.entropy(low)
            }
            Ev::Bitmap(bitmap) => bitmap.next(rng),
            // `UecMpMixed::nextEntropy`: a recycled EV if any, else the bitmap's.
            Ev::Mixed(bitmap, good) => good.pop_front().unwrap_or_else(|| bitmap.next(rng)),
            Ev::RepsRing(ring) => ring.next(rng),
        };
        (labelled_hash(hash, entropy as u32), entropy)
    }

    /// What came back at `now`. True: the connection took a new label (drawn from `rng`).
    pub fn on_return(&mut self, what: Returned, now: Time, rng: &mut Rng) -> bool {
        let repath = match what {
            Returned::Echo { entropy, marked } => {
                match self.ev.as_deref_mut() {
                    Some(Ev::Reps { good, capacity }) if entropy != 0 && !marked && good.len() < *capacity => good.push_back(entropy),
                    Some(Ev::Bitmap(bitmap)) if marked => bitmap.penalise(entropy, 1),
                    Some(Ev::Mixed(bitmap, _)) if marked => bitmap.penalise(entropy, 1),
                    Some(Ev::Mixed(_, good)) if entropy != 0 => good.push_back(entropy),
                    Some(Ev::RepsRing(ring)) => ring.feedback((!marked).then_some(entropy), false, now),
                    _ => {}
                }
                false
            }
            // `UecSrc::processNack`: a trim before the last hop penalises the EV (the bitmap's
            // `PATH_NACK`, 4); one at the last hop says nothing against the path (`PATH_GOOD`).
            Returned::Nack { entropy, last_hop: true } => return self.on_return(Returned::Echo { entropy, marked: false }, now, rng),
            Returned::Nack { entropy, last_hop: false } => {
                match self.ev.as_deref_mut() {
                    Some(Ev::Bitmap(bitmap) | Ev::Mixed(bitmap, _)) => bitmap.penalise(entropy, NACK_PENALTY),
                    Some(Ev::RepsRing(ring)) => ring.feedback(None, false, now),
                    _ => {}
                }
                false
            }
            Returned::Acked(a) => {
                let plb = self.plb.as_deref_mut().is_some_and(|(plb, _, by_ecn)| {
                    let congested = if *by_ecn { a.ece } else { a.over_target.unwrap_or(false) };
                    plb.on_ack(a.bytes, congested, a.snd_una, a.snd_nxt, now)
                });
                plb || a.asked
            }
            Returned::Timeout => {
                if let Some(Ev::RepsRing(ring)) = self.ev.as_deref_mut() {
                    ring.feedback(None, true, now);
                }
                if let Some((plb, seed, _)) = self.plb.as_deref_mut() {
                    let draw = splitmix64(*seed ^ now.ps());
                    plb.on_rto(now, (draw >> 11) as f64 / (1u64 << 53) as f64);
                }
                self.prr
            }
        };
        if repath {
            self.repath(rng);
        }
        repath
    }

    /// A new label, never the current one.
    fn repath(&mut self, rng: &mut Rng) {
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

    fn echo(p: &mut PathChooser, entropy: u16, marked: bool, rng: &mut Rng) {
        assert!(!p.on_return(Returned::Echo { entropy, marked }, Time::ZERO, rng));
    }

    #[test]
    fn reps_reuses_the_entropies_that_came_back_unmarked() {
        let mut rng = Rng::seed_from_u64(7);
        let mut p = PathChooser::new(&PathStrategy { entropy: Some(Entropy::Reps { keep: 2 }), ..Default::default() }, 0);
        let (_, a) = p.next(99, 0, &mut rng);
        let (_, b) = p.next(99, 0, &mut rng);
        let (_, c) = p.next(99, 0, &mut rng);
        echo(&mut p, a, false, &mut rng);
        echo(&mut p, b, true, &mut rng);
        echo(&mut p, c, false, &mut rng);
        echo(&mut p, a, false, &mut rng);
        echo(&mut p, c, false, &mut rng); // the buffer holds two
        assert_eq!(p.next(99, 0, &mut rng).1, a);
        assert_eq!(p.next(99, 0, &mut rng).1, c);
        let (hash, e) = p.next(99, 0, &mut rng);
        assert!(e != a && e != c && e != 0, "empty: a fresh draw");
        assert_eq!(hash, labelled_hash(99, e as u32));
    }

    #[test]
    fn mixed_reuses_every_unmarked_entropy_and_else_walks_the_bitmap() {
        let mut rng = Rng::seed_from_u64(7);
        let mut p = PathChooser::new(&PathStrategy { entropy: Some(Entropy::Mixed { values: 4 }), ..Default::default() }, 3);
        let evs: Vec<u16> = (0..4).map(|_| p.next(99, 0, &mut rng).1).collect();
        echo(&mut p, evs[2], false, &mut rng);
        echo(&mut p, evs[0], false, &mut rng);
        echo(&mut p, evs[1], true, &mut rng);
        assert!(!p.on_return(Returned::Nack { entropy: evs[3], last_hop: false }, Time::ZERO, &mut rng));
        assert_eq!((p.next(99, 0, &mut rng).1, p.next(99, 0, &mut rng).1), (evs[2], evs[0]), "recycled, oldest first");
        // Then the walk, skipping the marked (1) and the NACKed (4) EVs: of the next pass's
        // four, the two unpenalised go first; each skip pays one back.
        let walked: Vec<u16> = (0..2).map(|_| p.next(99, 0, &mut rng).1).collect();
        assert!(walked.iter().all(|e| *e == evs[0] || *e == evs[2]), "{walked:?} of {evs:?}");
    }

    #[test]
    fn reps_with_freezing_reuses_its_ring_and_after_a_timeout_only_its_ring_for_ten_ms() {
        let mut rng = Rng::seed_from_u64(7);
        let strategy = |freeze| PathStrategy { entropy: Some(Entropy::RepsFreezing { values: 64, freeze }), ..Default::default() };
        let mut p = PathChooser::new(&strategy(true), 3);
        let evs: Vec<u16> = (0..10).map(|_| p.next(99, 0, &mut rng).1).collect();
        // Ten good EVs into a ring of eight: the last eight stay, each reused once, earliest
        // first; then fresh draws.
        for &e in &evs {
            echo(&mut p, e, false, &mut rng);
        }
        let reused: Vec<u16> = (0..8).map(|_| p.next(99, 0, &mut rng).1).collect();
        assert_eq!(reused, evs[2..].to_vec());
        // A timeout freezes it: the ring's EVs again, round-robin from its first slot (where
        // the ninth and tenth overwrote the first two), used or not, for 10 ms.
        assert!(!p.on_return(Returned::Timeout, Time::from_us(1), &mut rng));
        let frozen: Vec<u16> = (0..16).map(|_| p.next(99, 0, &mut rng).1).collect();
        let slots = [&evs[8..], &evs[2..8]].concat();
        assert_eq!(frozen, [&slots[..], &slots[..]].concat());
        // The first feedback past 10 ms empties the ring; sixteen fresh EVs are explored.
        echo(&mut p, evs[0], true, &mut rng);
        assert_eq!(p.next(99, 0, &mut rng).1, slots[0], "still frozen at 0 s");
        assert!(!p.on_return(Returned::Echo { entropy: evs[0], marked: true }, Time::from_us(10_002), &mut rng));
        let explored: Vec<u16> = (0..16).map(|_| p.next(99, 0, &mut rng).1).collect();
        assert!(explored.iter().all(|e| e >> 15 == 1), "the connection's EVs");
        // Without trimming a timeout does not freeze.
        let mut q = PathChooser::new(&strategy(false), 3);
        let e = q.next(99, 0, &mut rng).1;
        echo(&mut q, e, false, &mut rng);
        assert!(!q.on_return(Returned::Timeout, Time::from_us(1), &mut rng));
        assert_eq!(q.next(99, 0, &mut rng).1, e);
        assert_ne!(q.next(99, 0, &mut rng).1, e, "used once: a fresh draw");
    }

    #[test]
    fn an_oblivious_walk_takes_every_entropy_once_a_pass_whatever_comes_back() {
        let mut rng = Rng::seed_from_u64(7);
        let mut p = PathChooser::new(&PathStrategy { entropy: Some(Entropy::Oblivious { values: 8 }), ..Default::default() }, 3);
        let mut orders = Vec::new();
        for _ in 0..4 {
            let evs: Vec<u16> = (0..8).map(|_| p.next(99, 0, &mut rng).1).collect();
            echo(&mut p, evs[0], true, &mut rng);
            let mut low: Vec<u16> = evs.iter().map(|e| e & 7).collect();
            orders.push(low.clone());
            low.sort();
            assert_eq!(low, (0..8).collect::<Vec<u16>>(), "{evs:?}");
            assert!(evs.iter().all(|&e| e >> 3 == evs[0] >> 3 && e >> 15 == 1), "the upper bits are the connection's: {evs:?}");
        }
        assert!(orders.windows(2).any(|w| w[0] != w[1]), "each pass in another order");
    }

    /// An EV marked twice carries a penalty of 2: the walk skips it on the next two passes,
    /// each skip paying one back, and takes it on the third.
    #[test]
    fn the_bitmap_skips_a_marked_entropy_until_it_has_paid_its_penalty() {
        let mut rng = Rng::seed_from_u64(7);
        let mut p = PathChooser::new(&PathStrategy { entropy: Some(Entropy::Bitmap { values: 4 }), ..Default::default() }, 3);
        let first: Vec<u16> = (0..4).map(|_| p.next(99, 0, &mut rng).1).collect();
        let marked = first[1];
        echo(&mut p, marked, true, &mut rng);
        echo(&mut p, marked, true, &mut rng);
        echo(&mut p, first[2], false, &mut rng);
        let two_passes: Vec<u16> = (0..6).map(|_| p.next(99, 0, &mut rng).1).collect();
        assert!(!two_passes.contains(&marked), "{two_passes:?}");
        for e in first.iter().filter(|&&e| e != marked) {
            assert_eq!(two_passes.iter().filter(|&x| x == e).count(), 2, "{two_passes:?}");
        }
        let third: Vec<u16> = (0..4).map(|_| p.next(99, 0, &mut rng).1).collect();
        assert_eq!(third.iter().filter(|&&e| e == marked).count(), 1, "{third:?}");
    }

    #[test]
    fn prr_repaths_at_a_timeout_and_a_controller_when_it_asks() {
        let mut rng = Rng::seed_from_u64(7);
        let s = PathStrategy { prr: true, ..Default::default() };
        assert!(!s.counts_rounds(), "without PLB the transport need not report its ACKs");
        let mut p = PathChooser::new(&s, 0);
        assert_eq!(p.next(99, 0, &mut rng), (99, 0), "the first path is the 5-tuple's");
        assert!(p.on_return(Returned::Timeout, Time::ZERO, &mut rng));
        let second = p.next(99, 0, &mut rng).0;
        assert_ne!(second, 99);
        let acked = Acked { bytes: 1000, ece: true, over_target: Some(true), snd_una: 1000, snd_nxt: 1000, asked: false };
        assert!(!p.on_return(Returned::Acked(acked), Time::ZERO, &mut rng), "congestion alone moves no one without PLB");
        assert!(p.on_return(Returned::Acked(Acked { asked: true, ..acked }), Time::ZERO, &mut rng));
        assert_ne!(p.next(99, 0, &mut rng).0, second, "a new label, never the current one");
        let mut q = PathChooser::new(&PathStrategy::default(), 0);
        assert!(!q.on_return(Returned::Timeout, Time::ZERO, &mut rng), "without PRR a timeout keeps the path");
    }

    /// Linux `tcp_plb_update_state_upon_rto`: after a timeout PLB leaves the path to PRR, so
    /// the congested rounds that follow do not undo PRR's repath.
    #[test]
    fn plb_repaths_after_congested_rounds_but_not_after_a_timeout() {
        let params = PlbParams { rounds: 2, ..PlbParams::default() };
        let s = PathStrategy { prr: true, plb: Some(params), plb_by_ecn: true, ..Default::default() };
        let round = |n: u64| Acked { bytes: 1000, ece: true, over_target: None, snd_una: 1000 * n, snd_nxt: 1000 * n + 1000, asked: false };
        let rounds_to_repath =
            |p: &mut PathChooser, from: Time, rng: &mut Rng| (1..=20u64).find(|&n| p.on_return(Returned::Acked(round(n)), from + Time::from_us(n), rng));
        let mut rng = Rng::seed_from_u64(7);
        assert!(s.counts_rounds());
        let mut p = PathChooser::new(&s, 1);
        assert!(rounds_to_repath(&mut p, Time::ZERO, &mut rng).is_some(), "congested rounds repath");
        let mut p = PathChooser::new(&s, 1);
        assert!(p.on_return(Returned::Timeout, Time::from_us(1), &mut rng), "PRR takes the timeout's repath");
        assert_eq!(rounds_to_repath(&mut p, Time::from_us(1), &mut rng), None, "PLB pauses after it");
    }
}
