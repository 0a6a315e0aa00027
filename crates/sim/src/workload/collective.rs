//! Collective operations as graphs of transfers (`[[jobs]]`): each step of each rank is a
//! transfer that starts when the rank's input for it has arrived (the receipt of the step
//! before, a `recv_done` trigger of `matrix`), the first step of an iteration `gap` after the
//! last input of the iteration before. The graph runs on `matrix`'s engine.

use super::matrix::{Matrix, Transfer, TriggerKind};
use crate::scenario::{Collective, JobConfig};
use rttlab_cc::Time;
use std::collections::HashMap;

/// A job's transfers, with the iteration and step of each.
pub struct Plan {
    pub matrix: Matrix,
    pub step_of: Vec<(u32, u32)>,
    pub steps: u32,
    /// The most bytes one rank sends or receives in an iteration, over the buffer: what the
    /// bandwidth-optimal time is made of (`Collective::bandwidth_share`, or the skewed
    /// all-to-all's hottest receiver).
    pub share: f64,
}

/// One transfer of a plan being built: (iteration, step, from rank, to rank, bytes).
struct Edge {
    iteration: u32,
    step: u32,
    from: u32,
    to: u32,
    bytes: u64,
}

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

    /// The bytes each rank sends in one iteration, over the buffer: what the bandwidth-optimal
    /// time is made of (`2(N − 1)/N` for all-reduce, `(N − 1)/N` otherwise).
    pub fn bandwidth_share(self, n: u32) -> f64 {
        let f = (n - 1) as f64 / n as f64;
        match self {
            Collective::AllreduceRing | Collective::AllreduceButterfly => 2.0 * f,
            _ => f,
        }
    }

    /// Rank `r`'s transfers at step `k` of `n` ranks with buffer `size`: (to rank, bytes); an
    /// all-to-all's to rank j are `shares[j]` of the buffer when skewed.
    fn sends(self, k: u32, r: u32, n: u32, size: u64, shares: Option<&[f64]>) -> Vec<(u32, u64)> {
        let chunk = size / n as u64;
        let to = |j: u32| (j, shares.map_or(chunk, |w| (size as f64 * w[j as usize]).round() as u64));
        match self {
            Collective::AllreduceRing | Collective::Allgather | Collective::ReduceScatter => vec![((r + 1) % n, chunk)],
            Collective::Alltoall => (1..n).map(|j| to((r + j) % n)).collect(),
            Collective::AlltoallSerial => vec![to((r + k + 1) % n)],
            Collective::AllreduceButterfly => {
                let half = n.trailing_zeros();
                // Halving: partners n/2, n/4, ... away, halves of what is left; doubling back.
                let (distance, share) = if k < half { (n >> (k + 1), size >> (k + 1)) } else { (1 << (k - half), size >> (2 * half - k)) };
                vec![(r ^ distance, share)]
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

/// The plan of `job` on `ranks` (host of each rank).
pub fn plan(job: &JobConfig, ranks: &[u32]) -> Plan {
    let (c, n) = (job.collective, ranks.len() as u32);
    let steps = c.steps(n);
    let shares = (job.skew > 0.0).then(|| zipf_shares(n, job.skew));
    // The hottest receiver gets its share from the N − 1 others; the least popular rank sends
    // the most, all but its own share.
    let share = shares.as_ref().map_or(c.bandwidth_share(n), |w| w.iter().map(|&x| ((n - 1) as f64 * x).max(1.0 - x)).fold(0.0, f64::max));
    let mut edges: Vec<Edge> = Vec::new();
    for iteration in 0..job.iterations {
        for step in 0..steps {
            for r in 0..n {
                for (to, bytes) in c.sends(step, r, n, job.size.0, shares.as_deref()) {
                    edges.push(Edge { iteration, step, from: r, to, bytes: bytes.max(1) });
                }
            }
        }
    }
    // What each (iteration, step, rank) sent and received, by edge index.
    let mut sent: HashMap<(u32, u32, u32), Vec<usize>> = HashMap::new();
    let mut received: HashMap<(u32, u32, u32), Vec<usize>> = HashMap::new();
    for (i, e) in edges.iter().enumerate() {
        sent.entry((e.iteration, e.step, e.from)).or_default().push(i);
        received.entry((e.iteration, e.step, e.to)).or_default().push(i);
    }
    let mut transfers: Vec<Transfer> = edges
        .iter()
        .enumerate()
        .map(|(i, e)| Transfer {
            id: i as u32 + 1,
            line: 0,
            src: ranks[e.from as usize],
            dst: ranks[e.to as usize],
            size: e.bytes,
            start: None,
            trigger: None,
            after: Time::ZERO,
            send_done: vec![],
            recv_done: vec![],
        })
        .collect();
    let mut triggers: HashMap<u32, (TriggerKind, Vec<u32>)> = HashMap::new();
    for (i, e) in edges.iter().enumerate() {
        // What this rank's step waits for: its input from the step before (the last step of
        // the iteration before, `gap` later); the first step of all, the job's start.
        let before = match (e.step, e.iteration) {
            (0, 0) => None,
            (0, it) => Some(((it - 1, steps - 1, e.from), job.gap)),
            (s, it) => Some(((it, s - 1, e.from), Time::ZERO)),
        };
        let Some((key, after)) = before else {
            transfers[i].start = Some(job.start);
            continue;
        };
        let by_receipt = c.waits_for_receipt() || e.step == 0;
        let inputs = if by_receipt { &received[&key] } else { &sent[&key] };
        // One trigger per waiting transfer: a barrier over all its inputs.
        let k = i as u32 + 1;
        let kind = if inputs.len() == 1 { TriggerKind::Oneshot } else { TriggerKind::Barrier(inputs.len() as u32) };
        triggers.insert(k, (kind, vec![i as u32]));
        for &j in inputs {
            if by_receipt {
                transfers[j].recv_done.push(k);
            } else {
                transfers[j].send_done.push(k);
            }
        }
        transfers[i].trigger = Some(k);
        transfers[i].after = after;
    }
    let step_of = edges.iter().map(|e| (e.iteration, e.step)).collect();
    Plan { matrix: Matrix { nodes: u32::MAX, transfers, triggers, failures: Vec::new() }, step_of, steps, share }
}
