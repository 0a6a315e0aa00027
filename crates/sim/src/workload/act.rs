//! What a generator asks of its hosts, and when. Each workload kind decides here what its
//! sources start at each of their events and what a finished transfer, message or probe
//! triggers; the hosts carry the acts out, in order ([`crate::host`]), so that a workload is
//! tested without them.

use super::{Activation, ConnKey, Generator, Kind};
use crate::report::measure::StepSpan;
use crate::report::stats::{ns, GroupStats};
use crate::scenario::Connections;
use rand::Rng as _;
use rttlab_cc::Time;

/// One thing a generator's hosts must do now.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Act {
    /// A sized transfer of `bytes` from `src` to `dst` on a fresh connection, counted as
    /// source `source`'s.
    Transfer { src: u32, dst: u32, bytes: u64, source: u32 },
    /// Transfer `id` (a job's, or a matrix's index) of `bytes` from `src` to `dst` as a message
    /// on the kept connection `conn` (`jobs.connections`, a matrix's `msg` lines).
    Message { src: u32, dst: u32, bytes: u64, id: u32, conn: ConnKey },
    /// An RPC's request of `bytes` from source `source`'s host to `server`, on their
    /// persistent connection.
    Request { server: u32, bytes: u64, source: u32 },
    /// A probe of `bytes` from source `source`'s host to `dst`, its path drawn as `hash`.
    Ping { dst: u32, hash: u32, bytes: u32, source: u32 },
    /// Source `source` acts again at `at`.
    Again { at: Time, source: u32 },
    /// Source `source`'s host hears of it one notice delay from now (`Ctx::notify`: its host
    /// may be in another partition).
    Notify { source: u32 },
}

/// What a generator counts as it acts: its group's counters, a job's steps and a matrix's
/// transfers' times (`Measurements::steps`, `Measurements::transfers`), from the warm-up's
/// end on.
pub(crate) struct Tally<'a> {
    pub group: &'a mut GroupStats,
    pub steps: &'a mut [StepSpan],
    pub transfers: &'a mut [[Time; 3]],
    pub warmup: Time,
}

impl Generator {
    /// Whether one event acts for every source at once (an incast): the run's own event, which
    /// every partition handles alike for its own hosts.
    pub(crate) fn acts_for_all(&self) -> bool {
        matches!(self.kind, Kind::Incast { .. })
    }

    /// Source `i` acts at `now`, into `out`; `local` tells the hosts this partition runs (an
    /// incast starts only those of its senders).
    pub(crate) fn act(&mut self, i: usize, now: Time, local: impl Fn(u32) -> bool, t: Tally, out: &mut Vec<Act>) {
        let (measured, source, h) = (now >= t.warmup, i as u32, self.sources[i]);
        if let Some(at) = self.next_event(i, now) {
            out.push(Act::Again { at, source });
        }
        let offered = |bytes: u64| if measured { bytes } else { 0 };
        match self.kind {
            Kind::Rpc { size, response, max_pending } => {
                let server = self.peer(i);
                if !self.admit(i, max_pending) {
                    t.group.rpcs_refused += measured as u64;
                    return;
                }
                t.group.rpcs_issued += measured as u64;
                t.group.offered_bytes += offered(size + response);
                out.push(Act::Request { server, bytes: size, source });
            }
            Kind::Matrix(ref m) => {
                let line = &m.transfers[i];
                // A message on a kept connection, or a connection of its own.
                let (dst, bytes, kept) = (line.dst, line.size, line.on_connection.then_some(ConnKey::Matrix(line.id)));
                match self.activated(i) {
                    Activation::Wait => {}
                    Activation::After(wait) => out.push(Act::Again { at: now + wait, source }),
                    Activation::Start => {
                        t.group.offered_bytes += offered(bytes);
                        t.transfers[i][0] = now;
                        out.push(match kept {
                            Some(conn) => Act::Message { src: h, dst, bytes, id: source, conn },
                            None => Act::Transfer { src: h, dst, bytes, source },
                        });
                    }
                }
            }
            Kind::Job(ref mut job) => {
                let (k, sends) = job.act(source);
                t.steps[k].start = t.steps[k].start.min(now);
                t.group.offered_bytes += offered(sends.iter().map(|s| s.bytes).sum());
                let (persistent, sources) = (job.connections == Connections::Persistent, &self.sources);
                out.extend(sends.iter().map(|s| {
                    let (dst, bytes) = (sources[s.to as usize], s.bytes);
                    match persistent {
                        true => Act::Message { src: h, dst, bytes, id: s.id, conn: ConnKey::Hosts(h, dst) },
                        false => Act::Transfer { src: h, dst, bytes, source: s.id },
                    }
                }));
            }
            Kind::FlowSizes { max_active } => {
                let dst = self.peer(i);
                let bytes = self.cdf.as_ref().expect("flow sizes have a CDF").sample(&mut self.rngs[i]);
                if !self.admit(i, max_active) {
                    t.group.flows_refused += measured as u64;
                    return;
                }
                t.group.offered_bytes += offered(bytes);
                out.push(Act::Transfer { src: h, dst, bytes, source });
            }
            Kind::Incast { size, connections, max_active, senders_per_incast } => {
                // One receiver and every sender take no draw, so that such runs keep their
                // random streams.
                let receiver = match self.receivers.as_slice() {
                    &[r] => r,
                    rs => rs[self.rngs[i].random_range(0..rs.len())],
                };
                let mut chosen: Vec<usize> = (0..self.sources.len()).filter(|&s| self.sources[s] != receiver).collect();
                if let Some(k) = senders_per_incast {
                    let (picked, _) = rand::seq::SliceRandom::partial_shuffle(chosen.as_mut_slice(), &mut self.rngs[i], k as usize);
                    chosen = picked.to_vec();
                }
                chosen.retain(|&s| local(self.sources[s]));
                for s in chosen {
                    for _ in 0..connections {
                        if !self.admit(s, max_active) {
                            t.group.flows_refused += measured as u64;
                            continue;
                        }
                        t.group.offered_bytes += offered(size);
                        out.push(Act::Transfer { src: self.sources[s], dst: receiver, bytes: size, source: s as u32 });
                    }
                }
            }
            Kind::Pinger { bytes, max_pending } => {
                let dst = self.peer(i);
                let hash = self.rngs[i].random();
                if !self.admit(i, max_pending) {
                    t.group.pings_refused += measured as u64;
                    return;
                }
                t.group.pings_sent += measured as u64;
                out.push(Act::Ping { dst, hash, bytes, source });
            }
        }
    }

    /// A sized transfer of source `source` is done at `now`: all its bytes acknowledged at its
    /// sender, or (`received`) delivered at its receiver. A job's step may start its next
    /// (`JobRun::done`, `notice` later); a matrix's transfer notes the time and activates its
    /// triggers, each transfer a trigger starts hearing of it at its own sender (htsim's
    /// triggers act at once; here one notice delay later, the same for any thread count);
    /// other generators count the flow finished when its sender is done.
    pub(crate) fn transfer_done(&mut self, source: u32, received: bool, now: Time, notice: Time, t: Tally, out: &mut Vec<Act>) {
        match &mut self.kind {
            Kind::Job(job) => {
                let (k, next) = job.done(source, received, now, notice);
                if received {
                    let span = &mut t.steps[k];
                    (span.end, span.arrived) = (span.end.max(now), span.arrived + 1);
                }
                out.extend(next.map(|(rank, at)| Act::Again { at, source: rank }));
            }
            Kind::Matrix(m) => {
                let i = source as usize;
                t.transfers[i][1 + received as usize] = now;
                let done = &m.transfers[i];
                for &k in if received { &done.recv_done } else { &done.send_done } {
                    out.extend(m.targets(k).iter().map(|&target| Act::Notify { source: target }));
                }
            }
            _ if !received => self.finished(source),
            _ => {}
        }
    }

    /// An RPC's whole message arrived at `now`, issued at `issued` by client `client`: a
    /// request is answered with the response's bytes (returned); a response completes the
    /// RPC.
    pub(crate) fn message_delivered(&mut self, request: bool, (issued, client): (Time, u32), now: Time, t: Tally) -> Option<u64> {
        let Kind::Rpc { response, .. } = self.kind else { unreachable!("RPC connections belong to RPC generators") };
        if request {
            return Some(response);
        }
        self.finished(client);
        if issued >= t.warmup {
            t.group.rpcs_completed += 1;
            t.group.rpc_latency.record(ns(now - issued)).expect("auto-resizing histogram");
            t.group.rpc_latency_sum += now - issued;
        }
        None
    }

    /// Source `i`'s probe came back at `now`, sent at `sent`; or (`None`) it or its echo was
    /// lost. Either way it is no longer outstanding.
    pub(crate) fn probe_back(&mut self, i: u32, sent: Option<Time>, now: Time, t: Tally) {
        self.finished(i);
        if let Some(sent) = sent.filter(|&s| s >= t.warmup) {
            t.group.ping_rtt.record(ns(now - sent)).expect("auto-resizing histogram");
        }
    }

    /// A peer for source `i` (`PeerTable::pick`).
    fn peer(&mut self, i: usize) -> u32 {
        let h = self.sources[i];
        self.peers.as_ref().expect("a generator with peers").pick(i, h, &mut self.rngs[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::routing::Routing;
    use crate::report::stats::GroupStats;
    use crate::scenario::Scenario;

    const STAR: &str = "duration = \"1ms\"\n[topology]\nkind = \"star\"\nhosts = 5\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[cc]\nalgorithm = \"none\"\n";

    fn generator(workload: &str) -> Generator {
        let s = Scenario::from_toml(&format!("{STAR}[[workloads]]\n{workload}")).unwrap();
        Generator::new(&s, 0, 0, &Routing::build(0, &[], &[]), &[10_000_000_000; 5]).unwrap()
    }

    /// Acts without hosts: what `act` or `transfer_done` asks, with the group's counters.
    fn acts(run: impl FnOnce(Tally, &mut Vec<Act>), transfers: usize) -> (Vec<Act>, GroupStats) {
        let (mut group, mut out) = (GroupStats::new("test".into(), "test", 1), Vec::new());
        let mut times = vec![[Time::MAX; 3]; transfers];
        run(Tally { group: &mut group, steps: &mut [], transfers: &mut times, warmup: Time::ZERO }, &mut out);
        (out, group)
    }

    /// An incast starts `connections` transfers from each of this partition's senders to the
    /// receiver, up to `max_active` a sender, refusing and counting the rest.
    #[test]
    fn an_incast_starts_its_local_senders_up_to_their_limit() {
        let mut g = generator("kind = \"incast\"\nsenders = \"1-4\"\nreceiver = 0\nsize = \"10KB\"\nconnections = 2\nmax_active = 3\n");
        assert!(g.acts_for_all());
        let transfer = |src: u32| Act::Transfer { src, dst: 0, bytes: 10_000, source: src - 1 };
        let (out, group) = acts(|t, out| g.act(0, Time::ZERO, |h| h != 3, t, out), 0);
        assert_eq!(out, [1, 1, 2, 2, 4, 4].map(transfer), "host 3 is another partition's; one event, no next");
        assert_eq!((group.offered_bytes, group.flows_refused), (60_000, 0));
        let (out, group) = acts(|t, out| g.act(0, Time::ZERO, |_| true, t, out), 0);
        assert_eq!(out, [1, 2, 3, 3, 4].map(transfer), "the third of each sender is over the limit, but host 3's first two");
        assert_eq!(group.flows_refused, 3);
        let (out, _) = acts(|t, out| g.transfer_done(0, true, Time::ZERO, Time::ZERO, t, out), 0);
        assert!(out.is_empty(), "received: the sender is not done yet");
        let (out, _) = acts(|t, out| g.transfer_done(0, false, Time::ZERO, Time::ZERO, t, out), 0);
        assert!(out.is_empty());
        let (out, group) = acts(|t, out| g.act(0, Time::ZERO, |_| true, t, out), 0);
        assert_eq!(out, [1, 3].map(transfer), "host 1's sender finished one; host 3 had two");
        assert_eq!(group.flows_refused, 6);
    }

    /// A matrix's transfer starts on its trigger: the transfer that fires it tells the
    /// transfers it starts (their senders hear of it), which then start.
    #[test]
    fn a_matrix_transfer_done_starts_what_its_trigger_starts() {
        let file = std::env::temp_dir().join(format!("rttlab-act-{}.cm", std::process::id()));
        let text =
            "Nodes 3\n0->1 id 1 start 0 size 1000 recv_done_trigger 1\n1->2 id 2 trigger 1 size 2000\n2->0 id 3 trigger 1 size 3000\ntrigger id 1 oneshot\n";
        std::fs::write(&file, text).unwrap();
        let mut g = generator(&format!("kind = \"matrix\"\nfile = \"{}\"\n", file.display()));
        std::fs::remove_file(&file).unwrap();
        assert_eq!(g.first_events(), [(Time::ZERO, 0)]);
        let us = Time::from_us;
        let (out, group) = acts(|t, out| g.act(0, us(1), |_| true, t, out), 3);
        assert_eq!(out, [Act::Transfer { src: 0, dst: 1, bytes: 1000, source: 0 }]);
        assert_eq!(group.offered_bytes, 1000);
        let (out, _) = acts(|t, out| g.transfer_done(0, false, us(5), us(1), t, out), 3);
        assert!(out.is_empty(), "the trigger fires when it is received");
        let (out, _) = acts(|t, out| g.transfer_done(0, true, us(4), us(1), t, out), 3);
        assert_eq!(out, [Act::Notify { source: 1 }, Act::Notify { source: 2 }]);
        let (out, _) = acts(|t, out| g.act(2, us(5), |_| true, t, out), 3);
        assert_eq!(out, [Act::Transfer { src: 2, dst: 0, bytes: 3000, source: 2 }]);
        let (out, _) = acts(|t, out| g.act(2, us(6), |_| true, t, out), 3);
        assert!(out.is_empty(), "a transfer runs once");
    }
}
