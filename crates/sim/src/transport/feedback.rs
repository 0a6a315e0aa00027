//! The filter on a delay controller's RTT samples (`cc.feedback = "median"`): what the
//! controller is fed for each sample the transport measures.

use rttlab_cc::Time;
use std::collections::VecDeque;

/// A connection's filter: each sample as it comes, or the median of the last few.
#[derive(Clone, Debug, Default)]
pub struct SampleFilter(Option<Median>);

impl SampleFilter {
    /// The median of the last `median_of` samples, or (`None`) each as it comes.
    pub fn new(median_of: Option<usize>) -> SampleFilter {
        SampleFilter(median_of.map(Median::new))
    }

    /// The sample the controller is fed for the RTT just measured.
    pub fn feed(&mut self, rtt: Time) -> Time {
        match &mut self.0 {
            Some(m) => m.push(rtt),
            None => rtt,
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
