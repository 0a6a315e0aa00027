//! Streaming statistics with memory bounded by the network, not by the run length: histograms
//! (hdrhistogram) for RTTs and queue occupancy, counters, and Jain's fairness index. Raw series
//! are kept only where a scenario asks for them.

use hdrhistogram::Histogram;
use rttlab_cc::Time;

/// A histogram of values with 3 significant digits, auto-resizing up to the largest value seen.
pub fn histogram() -> Histogram<u64> {
    let mut h = Histogram::new(3).expect("3 significant digits is valid");
    h.auto(true);
    h
}

/// Samples one port's queue occupancy every `interval` without an event per sample: the
/// occupancy only changes at enqueue and dequeue, so each change first credits the samples that
/// fell since the previous change with the value that held over them. The histogram counts the
/// instants from `warmup` on; the trace, when kept, every instant.
pub struct QueueSampler {
    pub port: u32,
    pub name: String,
    interval: Time,
    next: Time,
    warmup: Time,
    pub hist: Histogram<u64>,
    pub trace: Option<Vec<(Time, u64)>>,
}

impl QueueSampler {
    pub fn new(port: u32, name: String, interval: Time, warmup: Time, trace: bool) -> Self {
        QueueSampler { port, name, interval, next: interval, warmup, hist: histogram(), trace: trace.then(Vec::new) }
    }

    /// Records `bytes` (the occupancy that held until `now`) for every sample instant ≤ `now`.
    pub fn observe(&mut self, now: Time, bytes: u64) {
        if self.next > now {
            return;
        }
        let n = (now.ps() - self.next.ps()) / self.interval.ps() + 1;
        let before_warmup = match self.warmup.ps().checked_sub(self.next.ps()) {
            Some(d) => (d.div_ceil(self.interval.ps())).min(n),
            None => 0,
        };
        if n > before_warmup {
            self.hist.record_n(bytes, n - before_warmup).expect("auto-resizing histogram");
        }
        if let Some(t) = &mut self.trace {
            t.extend((0..n).map(|i| (Time(self.next.ps() + i * self.interval.ps()), bytes)));
        }
        self.next = Time(self.next.ps() + n * self.interval.ps());
    }
}

/// Jain's fairness index (Σx)² / (n·Σx²); 1 when all equal (algorithms.md "Global conventions").
pub fn jain(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if s2 == 0.0 {
        return 1.0;
    }
    s * s / (n * s2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), 1.0);
        assert!((jain(&[1.0, 0.0]) - 0.5).abs() < 1e-12);
        assert!((jain(&[3.0, 1.0]) - 16.0 / 20.0).abs() < 1e-12);
    }

    #[test]
    fn sampler_credits_each_instant_once() {
        let mut s = QueueSampler::new(0, "p".into(), Time(10), Time(20), true);
        s.observe(Time(5), 7); // no instant yet
        s.observe(Time(30), 7); // instants 10, 20, 30 held 7
        s.observe(Time(35), 100); // none
        s.observe(Time(40), 100); // instant 40
        let t = s.trace.unwrap();
        assert_eq!(t, vec![(Time(10), 7), (Time(20), 7), (Time(30), 7), (Time(40), 100)]);
        // The histogram starts at the warm-up's end: instants 20, 30, 40.
        assert_eq!(s.hist.len(), 3);
        assert_eq!(s.hist.max(), 100);
    }
}
