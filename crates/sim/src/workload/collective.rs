//! Collective operations of `[[jobs]]`, as a state machine that does no I/O: each step of each
//! rank is a transfer (an all-to-all's, one per peer) that starts when the rank's input for it
//! has arrived (its receipt of the step before; the serial all-to-all's next send, once its
//! send before is done), one notice delay later as a connection matrix's triggers act; the
//! first step of an iteration `gap` after the last input of the iteration before. A transfer's
//! number says which it is, so nothing is planned ahead: a job's memory is its ranks' and the
//! steps under way, not its transfers'.

use crate::scenario::{Collective, Connections, JobConfig};
use rttlab_cc::Time;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

impl Collective {
    /// Steps per iteration for `n` ranks.
    pub fn steps(self, n: u32) -> u32 {
        match self {
            Collective::AllreduceRing => 2 * (n - 1),
            Collective::AllreduceButterfly => 2 * n.trailing_zeros(),
            Collective::Alltoall => 1,
            Collective::AlltoallSerial | Collective::Allgather | Collective::ReduceScatter => n - 1,
        }
    }

    /// Transfers each rank starts at each step of `n` ranks.
    pub fn fanout(self, n: u32) -> u32 {
        if self == Collective::Alltoall {
            n - 1
        } else {
            1
        }
    }

    /// The bytes each rank sends in one iteration, over the buffer: what the bandwidth-optimal
    /// time is made of (`2(N − 1)/N` for all-reduce, `(N − 1)/N` otherwise).
    pub fn bandwidth_share(self, n: u32) -> f64 {
        let f = (n - 1) as f64 / n as f64;
        match self {
            Collective::AllreduceRing | Collective::AllreduceButterfly => 2.0 * f,
            _ => f,
        }
    }

    /// Rank `r`'s `j`-th transfer at step `k` of `n` ranks with buffer `size`: (to rank,
    /// bytes); an all-to-all's to rank t is `shares[t]` of the buffer when skewed.
    fn send(self, k: u32, r: u32, j: u32, n: u32, size: u64, shares: Option<&[f64]>) -> (u32, u64) {
        let chunk = size / n as u64;
        let to = |t: u32| (t, shares.map_or(chunk, |w| (size as f64 * w[t as usize]).round() as u64));
        match self {
            Collective::AllreduceRing | Collective::Allgather | Collective::ReduceScatter => ((r + 1) % n, chunk),
            Collective::Alltoall => to((r + j + 1) % n),
            Collective::AlltoallSerial => to((r + k + 1) % n),
            Collective::AllreduceButterfly => {
                let half = n.trailing_zeros();
                // Halving: partners n/2, n/4, ... away, halves of what is left; doubling back.
                let (distance, share) = if k < half { (n >> (k + 1), size >> (k + 1)) } else { (1 << (k - half), size >> (2 * half - k)) };
                (r ^ distance, share)
            }
        }
    }

    /// Whether rank `r`'s step `k` waits for what it received at step `k − 1` (else, for its
    /// own send of step `k − 1`: the serial all-to-all's order).
    fn waits_for_receipt(self) -> bool {
        self != Collective::AlltoallSerial
    }
}

/// The share of a rank's buffer that each rank gets in a skewed all-to-all (`jobs.skew`): a
/// Zipf law of exponent `skew` over the ranks, rank 0 the most popular — a simple model of a
/// mixture-of-experts layer's uneven expert load, where the popular experts' ranks become the
/// receivers of an incast.
fn zipf_shares(n: u32, skew: f64) -> Vec<f64> {
    let w: Vec<f64> = (1..=n).map(|i| (i as f64).powf(-skew)).collect();
    let sum: f64 = w.iter().sum();
    w.iter().map(|x| x / sum).collect()
}

/// One transfer a rank starts: its number (`JobRun::done` reads it back), the receiving rank
/// and its bytes.
pub struct Send {
    pub id: u32,
    pub to: u32,
    pub bytes: u64,
}

/// A running `[[jobs]]` entry.
#[derive(Clone, Debug)]
pub struct JobRun {
    pub collective: crate::scenario::Collective,
    pub connections: Connections,
    /// Ranks (their hosts are the generator's sources).
    n: u32,
    pub steps: u32,
    pub iterations: u32,
    /// The bandwidth-optimal time of one iteration: the most bytes one rank sends or receives
    /// in it (`Collective::bandwidth_share` of the buffer, or a skewed all-to-all's hottest
    /// rank's), at the slowest rank's line rate, payload only.
    pub ideal: Time,
    size: u64,
    shares: Option<Vec<f64>>,
    gap: Time,
    start: Time,
    /// Inputs each (rank, iteration, step) has had of those it waits for, until all.
    received: HashMap<(u32, u32, u32), u32>,
    /// Each rank's steps whose inputs are in: (start time, iteration, step), earliest first.
    ready: Vec<BinaryHeap<Reverse<(Time, u32, u32)>>>,
}

impl JobRun {
    /// `job` on `n` ranks, the slowest of them sending at `slowest_bps`.
    pub fn new(job: &JobConfig, n: u32, slowest_bps: u64) -> JobRun {
        let c = job.collective;
        let shares = (job.skew > 0.0).then(|| zipf_shares(n, job.skew));
        // The hottest rank gets its share from the N − 1 others; the least popular sends the
        // most, all but its own share.
        let share = shares.as_ref().map_or(c.bandwidth_share(n), |w| w.iter().map(|&x| ((n - 1) as f64 * x).max(1.0 - x)).fold(0.0, f64::max));
        let ideal = Time((share * job.size.0 as f64 * 8.0 / slowest_bps as f64 * 1e12).round() as u64);
        JobRun {
            collective: c,
            connections: job.connections,
            steps: c.steps(n),
            iterations: job.iterations,
            ideal,
            size: job.size.0,
            shares,
            gap: job.gap,
            start: job.start,
            received: HashMap::new(),
            ready: (0..n).map(|_| BinaryHeap::new()).collect(),
            n,
        }
    }

    /// Transfers per rank and step.
    fn fanout(&self) -> u32 {
        self.collective.fanout(self.n)
    }

    /// Transfers of one step of every rank.
    pub fn per_step(&self) -> u64 {
        self.n as u64 * self.fanout() as u64
    }

    /// Every transfer of the job (`JobConfig::validate` keeps them numbered in a `u32`).
    pub fn transfers(&self) -> u64 {
        self.per_step() * self.steps as u64 * self.iterations as u64
    }

    /// Every rank's first step, at the job's start: (time, rank).
    pub fn first_events(&mut self) -> Vec<(Time, u32)> {
        for heap in &mut self.ready {
            heap.push(Reverse((self.start, 0, 0)));
        }
        (0..self.n).map(|r| (self.start, r)).collect()
    }

    /// Rank `r` starts its earliest ready step: its index among the job's steps (iteration ×
    /// steps + step) and its transfers.
    pub fn act(&mut self, r: u32) -> (usize, Vec<Send>) {
        let Reverse((_, it, k)) = self.ready[r as usize].pop().expect("a rank's event has its step ready");
        let (n, fanout) = (self.n, self.fanout());
        let first = ((it * self.steps + k) * n + r) * fanout;
        let sends = (0..fanout)
            .map(|j| {
                let (to, bytes) = self.collective.send(k, r, j, n, self.size, self.shares.as_deref());
                Send { id: first + j, to, bytes: bytes.max(1) }
            })
            .collect();
        ((it * self.steps + k) as usize, sends)
    }

    /// Transfer `id` was sent whole (`received` false: every byte acknowledged) or arrived
    /// whole: its step's index, and the rank (with its time) whose next step this lets start,
    /// `notice` after `now` (and `gap` more for an iteration's first).
    pub fn done(&mut self, id: u32, received: bool, now: Time, notice: Time) -> (usize, Option<(u32, Time)>) {
        let (n, fanout) = (self.n, self.fanout());
        let (j, r, index) = (id % fanout, id / fanout % n, id / fanout / n);
        let (it, k) = (index / self.steps, index % self.steps);
        let last = k + 1 == self.steps;
        let (to, _) = self.collective.send(k, r, j, n, self.size, self.shares.as_deref());
        // Who waits on this transfer: its receiver, or (serial all-to-all, but for an
        // iteration's last step) its sender.
        let by_receipt = self.collective.waits_for_receipt() || last;
        let waiting = match (received, by_receipt) {
            (true, true) => to,
            (false, false) => r,
            _ => return (index as usize, None),
        };
        let inputs = if by_receipt && self.collective == Collective::Alltoall { n - 1 } else { 1 };
        if inputs > 1 {
            let count = self.received.entry((waiting, it, k)).or_default();
            *count += 1;
            if *count < inputs {
                return (index as usize, None);
            }
            self.received.remove(&(waiting, it, k));
        }
        let next = match (last, it + 1 < self.iterations) {
            (false, _) => Some((now + notice, it, k + 1)),
            (true, true) => Some((now + notice + self.gap, it + 1, 0)),
            (true, false) => None,
        };
        let next = next.map(|(at, it, k)| {
            self.ready[waiting as usize].push(Reverse((at, it, k)));
            (waiting, at)
        });
        (index as usize, next)
    }
}
