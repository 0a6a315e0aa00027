//! How a host timestamps a round trip (TIMELY §3.1 and Figs. 1, 11, 12): NIC hardware
//! timestamps are the simulator's clock; software timestamps add the host's own delay from
//! the reply's arrival to the stack running (interrupts, scheduling, wake-ups), drawn from the
//! distribution measured on this project's kernel (`data/software-timestamps.csv`, written by
//! `python -m rttlab.host.timestamps`); Fig. 12's uniform noise is a knob of its own on top.

use crate::core::engine::Rng;
use crate::scenario::{HostLoad, Timestamps};
use rand::Rng as _;
use rttlab_cc::Time;
use std::sync::OnceLock;

/// The measured software delays: `load,quantile,ns` rows, equally spaced quantiles per load.
const SOFTWARE: &str = include_str!("../../data/software-timestamps.csv");

/// Steps between two quantiles a draw interpolates over.
const STEPS: u64 = 1 << 10;

/// What a host adds to each RTT sample it takes.
#[derive(Clone, Debug, Default)]
pub struct RttNoise {
    /// `nic.rtt_noise`: a draw uniform in [0, uniform] (Fig. 12).
    uniform: Time,
    /// `nic.timestamps = "software"`: the measured delay's quantiles at `nic.host_load`,
    /// equally spaced from 0 to 1; empty with NIC timestamps.
    software: &'static [Time],
}

impl RttNoise {
    pub fn new(uniform: Time, timestamps: Timestamps, load: HostLoad) -> RttNoise {
        let software = match timestamps {
            Timestamps::Nic => &[][..],
            Timestamps::Software => &software_quantiles()[load as usize][..],
        };
        RttNoise { uniform, software }
    }

    /// `rtt` as the host's stack sees it, drawing from `rng` once per noise in use.
    pub fn apply(&self, rtt: Time, rng: &mut Rng) -> Time {
        let mut seen = rtt;
        if self.uniform > Time::ZERO {
            seen += Time(rng.random_range(0..=self.uniform.ps()));
        }
        if self.software.len() > 1 {
            // The inverse of the measured distribution, linear between its quantiles.
            let r = rng.random_range(0..(self.software.len() as u64 - 1) * STEPS);
            let (i, f) = ((r / STEPS) as usize, r % STEPS);
            let (lo, hi) = (self.software[i].ps(), self.software[i + 1].ps());
            seen += Time(lo + (hi - lo) * f / STEPS);
        }
        seen
    }
}

/// The shipped quantiles, per `HostLoad` in its order, parsed once.
fn software_quantiles() -> &'static [Vec<Time>; 2] {
    static PARSED: OnceLock<[Vec<Time>; 2]> = OnceLock::new();
    PARSED.get_or_init(|| {
        let mut by_load: [Vec<Time>; 2] = Default::default();
        for line in SOFTWARE.lines().filter(|l| !l.starts_with('#')).skip(1) {
            let mut cols = line.split(',');
            let (load, _, ns) = (cols.next(), cols.next(), cols.next().and_then(|v| v.parse::<u64>().ok()));
            let i = match load {
                Some("idle") => HostLoad::Idle,
                Some("busy") => HostLoad::Busy,
                _ => panic!("data/software-timestamps.csv: unknown row {line:?}"),
            };
            by_load[i as usize].push(Time(ns.expect("a whole number of nanoseconds") * 1000));
        }
        by_load
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn shipped_quantiles_are_sorted_and_start_at_zero() {
        for q in software_quantiles() {
            assert_eq!(q.len(), 1001);
            assert_eq!(q[0], Time::ZERO, "the fastest exchange is the reference");
            assert!(q.windows(2).all(|w| w[0] <= w[1]));
        }
    }

    #[test]
    fn nic_timestamps_add_nothing_and_draw_nothing() {
        let mut rng = Rng::seed_from_u64(1);
        let before = rng.clone();
        let n = RttNoise::new(Time::ZERO, Timestamps::Nic, HostLoad::Idle);
        assert_eq!(n.apply(Time::from_us(20), &mut rng), Time::from_us(20));
        assert_eq!(rng, before);
    }

    /// Draws follow the measured distribution: their median and 99th percentile within a
    /// step of the shipped quantiles', and a busy host's tail above an idle one's.
    #[test]
    fn software_draws_follow_the_measured_quantiles() {
        let mut rng = Rng::seed_from_u64(7);
        for load in [HostLoad::Idle, HostLoad::Busy] {
            let n = RttNoise::new(Time::ZERO, Timestamps::Software, load);
            let mut x: Vec<u64> = (0..200_000).map(|_| n.apply(Time::ZERO, &mut rng).ps()).collect();
            x.sort_unstable();
            let q = &software_quantiles()[load as usize];
            for (p, at) in [(0.5, 500), (0.99, 990)] {
                let drawn = x[(p * x.len() as f64) as usize];
                let (lo, hi) = (q[at - 2].ps(), q[at + 2].ps());
                assert!((lo..=hi).contains(&drawn), "{load:?} p{p}: {drawn} ps outside [{lo}, {hi}]");
            }
        }
        let busy = &software_quantiles()[HostLoad::Busy as usize];
        let idle = &software_quantiles()[HostLoad::Idle as usize];
        assert!(busy[990] > idle[990], "a busy host's p99 delay is above an idle one's");
    }
}
