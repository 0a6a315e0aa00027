//! What a partition tells the others (`Status`), and how late it may run before it knows the
//! run's end under `until = "flows_done"` (`Horizon`).

use crate::host::flow::{grid_end, FlowsDone};
use crate::network::Network;
use crossbeam_utils::CachePadded;
use rttlab_cc::Time;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// What partition `q` knows of the others: every entry of `of_all` but its own.
pub(super) fn others<T>(of_all: &[T], q: usize) -> impl Iterator<Item = &T> {
    of_all.iter().enumerate().filter(move |&(o, _)| o != q).map(|(_, x)| x)
}

/// What a partition tells the others: its clock (every event of its before this time, in ps,
/// is handled, and its mail from them posted), written last with `Release`; the events it has
/// handled; its `FlowsDone` counts and the time until which its own senders prove the run
/// goes on (`Horizon`), as of that clock or later.
#[derive(Default)]
pub(super) struct Status {
    pub(super) clock: AtomicU64,
    pub(super) handled: AtomicU64,
    finished: AtomicU64,
    counted: AtomicI64,
    last: AtomicU64,
    first_over: AtomicU64,
    proof: AtomicU64,
}

impl Status {
    pub(super) fn publish(&self, clock: u64, net: &Network, proof: Option<u64>) {
        let d = net.hosts.flows.done.unwrap_or_default();
        self.handled.store(net.events_processed(), Ordering::Relaxed);
        self.finished.store(d.finished, Ordering::Relaxed);
        self.counted.store(d.counted, Ordering::Relaxed);
        self.last.store(d.last.ps(), Ordering::Relaxed);
        self.first_over.store(d.first_over.ps(), Ordering::Relaxed);
        self.proof.store(proof.unwrap_or(0), Ordering::Relaxed);
        self.clock.store(clock, Ordering::Release);
    }

    /// The counts published with (or after) the clock last read.
    pub(super) fn done(&self, total: u64) -> FlowsDone {
        FlowsDone {
            total,
            finished: self.finished.load(Ordering::Relaxed),
            counted: self.counted.load(Ordering::Relaxed),
            last: Time(self.last.load(Ordering::Relaxed)),
            first_over: Time(self.first_over.load(Ordering::Relaxed)),
        }
    }
}

/// Under `until = "flows_done"`, how late a partition may run before it knows the run's end:
/// the end is the last instant of the lookahead grid's cell that holds the moment the
/// connections were all done (`FlowsDone::end`), and no partition may handle an event past it.
/// What proves the run goes on at least until a time:
/// - every partition's counts, as of its clock or later: while they do not say all done, or
///   say it of a moment some partition has not reached, the run goes on to the end of the cell
///   of the smallest clock (an unfinished connection finishes after it);
/// - a sender with data it has never sent (`Flow::unsent`) at a partition's clock: that
///   connection finishes at least a lookahead later (its last byte crosses a link at least).
///
/// Once the counts say all done at a moment every clock has passed, the end is known.
pub(super) struct Horizon {
    /// This partition's `[[flows]]` connections whose senders may hold unsent data (the
    /// last one is checked; those that have sent everything are dropped).
    unsent: Vec<u32>,
    /// The latest instant the run is proven to reach (a proof stays true: looked at again only
    /// when the partition would go further).
    proven: u64,
    known: bool,
}

impl Horizon {
    pub(super) fn new(net: &Network, flows_done: bool) -> Horizon {
        let flows = &net.hosts.flows.slots;
        let unsent = if flows_done { flows.iter().filter(|(_, f)| f.order != u32::MAX).map(|(id, _)| id).collect() } else { Vec::new() };
        Horizon { unsent, proven: 0, known: !flows_done }
    }

    /// The time until which this partition's senders prove the run goes on, at `clock`.
    pub(super) fn proof(&mut self, net: &Network, clock: u64, lookahead: u64) -> Option<u64> {
        let flows = &net.hosts.flows.slots;
        while let Some(&f) = self.unsent.last() {
            if flows.get(f).is_some_and(|f| f.unsent()) {
                return Some(clock.saturating_add(lookahead - 1));
            }
            self.unsent.pop();
        }
        None
    }

    /// The latest event partition `q` (at `clock`, the others at `seen`) may handle, looked at
    /// anew if that is before `wanted`; sets the run's end once it is known.
    pub(super) fn until(&mut self, wanted: u64, q: usize, clock: u64, seen: &[u64], status: &[CachePadded<Status>], net: &mut Network) -> u64 {
        if self.known {
            return u64::MAX;
        }
        if self.proven >= wanted {
            return self.proven;
        }
        // The grid a one-thread run ends on too (`FlowsDone::end`): the shortest link delay.
        let (fct_until, warmup, step) = (net.cx.cfg.fct_until, net.cx.cfg.warmup, net.cx.notice_delay);
        let mine = net.hosts.flows.done.unwrap_or_default();
        let smallest = others(seen, q).copied().fold(clock, u64::min);
        let counts = status.iter().enumerate().map(|(o, s)| if o == q { mine } else { s.done(mine.total) });
        if let Some(t) = FlowsDone::done_at(counts, fct_until).filter(|t| t.ps() < smallest) {
            net.cx.end = net.cx.end.min(FlowsDone::end_at(t, warmup, step));
            self.known = true;
            return u64::MAX;
        }
        let proofs = others(status, q).map(|s| s.proof.load(Ordering::Relaxed));
        let own = self.proof(net, clock, step.ps()).unwrap_or(0);
        self.proven = proofs.fold(own.max(grid_end(Time(smallest), step).ps()), u64::max).max(self.proven);
        self.proven
    }
}
