//! The workloads' applications at the hosts: a generator's event for one of its sources (an
//! RPC, a sized flow, an incast, a ping), RPC connections and their messages, and pings
//! echoed and timed.

use super::Hosts;
use crate::core::engine::EventKind;
use crate::core::ids::PktId;
use crate::core::packet::{Packet, PacketKind};
use crate::ctx::Ctx;
use crate::fabric::Fabric;
use crate::host::flow::{FlowSpec, Message, Origin, Rpc};
use crate::parallel::boundary::Outgoing;
use crate::report::stats::ns;
use crate::workload::{Activation, Generator, Kind};
use rand::Rng as _;

impl Hosts {
    /// Generator `g` acts for its source `i` now.
    pub(crate) fn workload_event(&mut self, g: u32, i: u32, fabric: &mut Fabric, cx: &mut Ctx) {
        let (now, measured) = (cx.now, cx.now >= cx.cfg.warmup);
        let gen = &mut self.generators[g as usize];
        let (i, group) = (i as usize, gen.group);
        let h = gen.sources[i];
        if let Some(t) = gen.next_event(i, now) {
            cx.events.push(t, EventKind::Arrival { generator: g, host: i as u32 });
        }
        let gen = &mut self.generators[g as usize];
        let (class, stats) = (gen.class, &mut cx.measure.groups[group as usize]);
        let peer = |gen: &mut Generator| gen.peers.as_ref().expect("a generator with peers").pick(i, h, &mut gen.rngs[i]);
        match gen.kind {
            Kind::Rpc { size, response, max_pending } => {
                let server = peer(gen);
                if !gen.admit(i, max_pending) {
                    stats.rpcs_refused += measured as u64;
                    return;
                }
                if measured {
                    stats.rpcs_issued += 1;
                    stats.offered_bytes += size + response;
                }
                let f = self.rpc_connection(g, h, server, fabric, cx);
                self.offer_message(f, size, Message { end: 0, issued: now, client: i as u32 }, cx);
            }
            Kind::Matrix(ref m) => {
                let (dst, size) = (m.transfers[i].dst, m.transfers[i].size);
                let activation = gen.activated(i);
                if let Activation::After(wait) = activation {
                    cx.events.push(now + wait, EventKind::Arrival { generator: g, host: i as u32 });
                }
                if let Activation::Start = activation {
                    stats.offered_bytes += if measured { size } else { 0 };
                    cx.measure.transfers[g as usize][i][0] = now;
                    self.start_ephemeral(h, dst, size, Origin { generator: g, source: i as u32 }, fabric, cx);
                }
            }
            Kind::Job(ref mut job) => {
                let (k, sends) = job.act(i as u32);
                let span = &mut cx.measure.steps[g as usize][k];
                span.start = span.start.min(now);
                stats.offered_bytes += if measured { sends.iter().map(|s| s.bytes).sum() } else { 0 };
                for s in sends {
                    let to = self.generators[g as usize].sources[s.to as usize];
                    self.start_ephemeral(h, to, s.bytes, Origin { generator: g, source: s.id }, fabric, cx);
                }
            }
            Kind::FlowSizes { max_active } => {
                let dst = peer(gen);
                let size = gen.cdf.as_ref().expect("flow sizes have a CDF").sample(&mut gen.rngs[i]);
                if !gen.admit(i, max_active) {
                    stats.flows_refused += measured as u64;
                    return;
                }
                stats.offered_bytes += if measured { size } else { 0 };
                self.start_ephemeral(h, dst, size, Origin { generator: g, source: i as u32 }, fabric, cx);
            }
            Kind::Incast { size, connections, max_active, senders_per_incast } => {
                cx.run_event_handled();
                // One receiver and every sender take no draw, so that such runs keep their
                // random streams.
                let receiver = match gen.receivers.as_slice() {
                    &[r] => r,
                    rs => rs[gen.rngs[i].random_range(0..rs.len())],
                };
                let mut chosen: Vec<usize> = (0..gen.sources.len()).filter(|&s| gen.sources[s] != receiver).collect();
                if let Some(k) = senders_per_incast {
                    let (picked, _) = rand::seq::SliceRandom::partial_shuffle(chosen.as_mut_slice(), &mut gen.rngs[i], k as usize);
                    chosen = picked.to_vec();
                }
                for s in chosen {
                    let src = self.generators[g as usize].sources[s];
                    if cx.foreign(src) {
                        continue;
                    }
                    // What the sender starts ranks as its own doing (`EventQueue::reserve`).
                    cx.events.set_origin(src + 1);
                    for _ in 0..connections {
                        let gen = &mut self.generators[g as usize];
                        let stats = &mut cx.measure.groups[group as usize];
                        if !gen.admit(s, max_active) {
                            stats.flows_refused += measured as u64;
                            continue;
                        }
                        stats.offered_bytes += if measured { size } else { 0 };
                        self.start_ephemeral(src, receiver, size, Origin { generator: g, source: s as u32 }, fabric, cx);
                    }
                    cx.events.set_origin(0);
                }
            }
            Kind::Pinger { bytes, max_pending } => {
                let dst = peer(gen);
                let hash = gen.rngs[i].random();
                if !gen.admit(i, max_pending) {
                    stats.pings_refused += measured as u64;
                    return;
                }
                stats.pings_sent += measured as u64;
                let ping = Packet { flow: i as u32, dst_host: dst, hash, seq: g, t_send: now, ..Packet::new(PacketKind::Ping, class, bytes as u16) };
                let p = cx.pkts.alloc(ping);
                let port = self.nodes[h as usize].port;
                fabric.enqueue(port, class as usize, p, self, cx);
            }
        }
    }

    /// A fresh connection for one sized transfer of `origin`'s generator, started now.
    fn start_ephemeral(&mut self, src: u32, dst: u32, size: u64, origin: Origin, fabric: &mut Fabric, cx: &mut Ctx) {
        let gen = &self.generators[origin.generator as usize];
        let (class, group) = (gen.class, gen.group);
        let spec = FlowSpec { size: Some(size), ephemeral: Some(origin), ..FlowSpec::opened_now(src, dst, class, group, cx.now) };
        let f = self.open_flow(spec, fabric, cx);
        self.start_flow(f, fabric, cx);
    }

    /// A workload flow of `origin` has all its bytes acknowledged at its sender (`received`:
    /// delivered at its receiver). A matrix's transfer notes the time and activates its
    /// triggers: each transfer a trigger starts hears of it at its own sender one
    /// `notice_delay` later, the same for any thread count (htsim's triggers act at once).
    /// Other generators count the flow finished when its sender is done.
    pub(crate) fn transfer_done(&mut self, origin: Origin, received: bool, cx: &mut Ctx) {
        let (g, i) = (origin.generator as usize, origin.source as usize);
        let gen = &mut self.generators[g];
        if let Kind::Job(job) = &mut gen.kind {
            let (k, next) = job.done(origin.source, received, cx.now, cx.notice_delay);
            if received {
                let span = &mut cx.measure.steps[g][k];
                (span.end, span.arrived) = (span.end.max(cx.now), span.arrived + 1);
            }
            if let Some((rank, at)) = next {
                cx.events.push(at, EventKind::Arrival { generator: origin.generator, host: rank });
            }
            return;
        }
        let Kind::Matrix(m) = &gen.kind else {
            if !received {
                gen.finished(origin.source);
            }
            return;
        };
        cx.measure.transfers[g][i][1 + received as usize] = cx.now;
        let t = &m.transfers[i];
        for &k in if received { &t.recv_done } else { &t.send_done } {
            for &target in m.targets(k) {
                cx.notify(gen.sources[target as usize], EventKind::Arrival { generator: origin.generator, host: target });
            }
        }
    }

    /// A connection of RPC generator `g` from `src` to `dst`, requests or responses.
    fn open_rpc(&mut self, g: u32, src: u32, dst: u32, request: bool, fabric: &mut Fabric, cx: &mut Ctx) -> u32 {
        let gen = &self.generators[g as usize];
        let (class, group) = (gen.class, gen.group);
        let rpc = Some(Rpc { request, generator: g });
        let spec = FlowSpec { rpc, ..FlowSpec::opened_now(src, dst, class, group, cx.now) };
        self.open_flow(spec, fabric, cx)
    }

    /// The request connection from `client` to `server` of RPC generator `g`, opened on first
    /// use (the server opens the response connection when the first request arrives).
    fn rpc_connection(&mut self, g: u32, client: u32, server: u32, fabric: &mut Fabric, cx: &mut Ctx) -> u32 {
        if let Some(&f) = self.generators[g as usize].conns.get(&(client, server)) {
            return f;
        }
        let req = self.open_rpc(g, client, server, true, fabric, cx);
        self.generators[g as usize].conns.insert((client, server), req);
        req
    }

    /// Queues message `m` of `bytes` on connection `f` and lets it send; its receiver expects
    /// it.
    fn offer_message(&mut self, f: u32, bytes: u64, mut m: Message, cx: &mut Ctx) {
        let flow = &mut self.flows.slots[f];
        let offered = flow.offered.as_mut().expect("an RPC connection");
        *offered += bytes;
        m.end = *offered;
        let (dst, serial) = (flow.dst, flow.serial);
        flow.message().offer(cx.now, bytes);
        match cx.foreign(dst) {
            true => cx.boundary.outbox.push((dst, Outgoing::Message(f, serial, m))),
            false => self.expect_message(f, serial, m),
        }
        self.schedule_flow(f, cx);
    }

    /// The receiver of RPC connection `f` (its connection `serial`, which may still wait to
    /// take the slot over, `RxEnd::next`) expects message `m`.
    pub(crate) fn expect_message(&mut self, f: u32, serial: u32, m: Message) {
        let mut end = &mut self.flows.rx[f];
        if end.serial != serial {
            end = end.next.as_deref_mut().expect("the connection's receiving end");
        }
        end.messages.as_mut().expect("an RPC connection").queue.push_back(m);
    }

    /// Connection `f` delivered one or more whole messages: a server answers a request, a
    /// client completes an RPC.
    pub(crate) fn messages_delivered(&mut self, f: u32, fabric: &mut Fabric, cx: &mut Ctx) {
        let now = cx.now;
        loop {
            let end = &mut self.flows.rx[f];
            let delivered = end.stats.delivered_bytes;
            let (client, server, group) = (end.src, end.dst, end.group);
            let msgs = end.messages.as_mut().expect("an RPC connection");
            let Some(m) = msgs.queue.front().copied().filter(|m| m.end <= delivered) else { return };
            msgs.queue.pop_front();
            let (request, g) = (msgs.request, msgs.generator);
            if request {
                let Kind::Rpc { response, .. } = self.generators[g as usize].kind else { unreachable!("RPC connections belong to RPC generators") };
                let resp = match self.generators[g as usize].responses.get(&f) {
                    Some(&r) => r,
                    None => {
                        let r = self.open_rpc(g, server, client, false, fabric, cx);
                        self.generators[g as usize].responses.insert(f, r);
                        r
                    }
                };
                self.offer_message(resp, response, m, cx);
            } else {
                self.generators[g as usize].finished(m.client);
                if m.issued >= cx.cfg.warmup {
                    let stats = &mut cx.measure.groups[group as usize];
                    stats.rpcs_completed += 1;
                    stats.rpc_latency.record(ns(now - m.issued)).expect("auto-resizing histogram");
                    stats.rpc_latency_sum += now - m.issued;
                }
            }
        }
    }

    /// A ping arrived at host `h`: its NIC echoes it at once, in the same class.
    pub(crate) fn ping_echo(&mut self, h: u32, i: PktId, fabric: &mut Fabric, cx: &mut Ctx) {
        let p = cx.pkts.get_mut(i);
        p.kind = PacketKind::Pong;
        p.dst_host = self.generators[p.seq as usize].sources[p.flow as usize];
        let c = p.class as usize;
        let port = self.nodes[h as usize].port;
        fabric.enqueue(port, c, i, self, cx);
    }

    /// An echo came back to its pinger: one round trip.
    pub(crate) fn pong(&mut self, i: PktId, p: Packet, cx: &mut Ctx) {
        cx.pkts.free(i);
        let gen = &mut self.generators[p.seq as usize];
        gen.finished(p.flow);
        if p.t_send >= cx.cfg.warmup {
            cx.measure.groups[gen.group as usize].ping_rtt.record(ns(cx.now - p.t_send)).expect("auto-resizing histogram");
        }
    }

    /// A probe or its echo of generator `g`'s source `i` was lost: it is no longer
    /// outstanding.
    pub(crate) fn ping_lost(&mut self, g: u32, i: u32) {
        self.generators[g as usize].finished(i);
    }
}
