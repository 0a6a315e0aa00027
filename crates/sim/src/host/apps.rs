//! The workloads' acts carried out at the hosts ([`crate::workload::act`] decides them): sized
//! transfers on fresh connections, RPC connections and their messages, and pings echoed and
//! timed.

use super::Hosts;
use crate::core::engine::EventKind;
use crate::core::ids::PktId;
use crate::core::packet::{Packet, PacketKind};
use crate::ctx::Ctx;
use crate::fabric::Fabric;
use crate::host::connections::Whole;
use crate::host::flow::{Feed, FlowSpec, Message, Origin, Tx};
use crate::parallel::boundary::Outgoing;
use crate::report::measure::Measurements;
use crate::workload::act::{Act, Tally};
use crate::workload::ConnKey;
use rttlab_cc::Time;

/// The source a connection carrying a generator's transfers names (`Origin::source`): its
/// messages say which transfers they carry.
pub(crate) const PERSISTENT: u32 = u32::MAX;

/// Generator `g`'s counters in the run's measurements `m` (`Tally`), its group `group`'s (a
/// job has no transfers' times).
fn tally(m: &mut Measurements, warmup: Time, g: u32, group: u16) -> Tally<'_> {
    let transfers = m.transfers.get_mut(g as usize).map_or(&mut [][..], |t| &mut t[..]);
    Tally { group: &mut m.groups[group as usize], steps: &mut m.steps[g as usize], transfers, warmup }
}

impl Hosts {
    /// Generator `g` acts for its source `i` now (`Generator::act`), and the hosts carry out
    /// what it asks.
    pub(crate) fn workload_event(&mut self, g: u32, i: u32, fabric: &mut Fabric, cx: &mut Ctx) {
        let mut out = std::mem::take(&mut self.workload_acts);
        let gen = &mut self.generators[g as usize];
        if gen.acts_for_all() {
            cx.run_event_handled();
        }
        let (now, group) = (cx.now, gen.group);
        let boundary = &cx.boundary;
        gen.act(i as usize, now, |h| !boundary.foreign(h), tally(&mut cx.measure, cx.cfg.warmup, g, group), &mut out);
        self.carry_out(g, &mut out, fabric, cx);
        self.workload_acts = out;
    }

    /// Carries out generator `g`'s acts in order, emptying `acts`.
    fn carry_out(&mut self, g: u32, acts: &mut Vec<Act>, fabric: &mut Fabric, cx: &mut Ctx) {
        let origin = cx.events.origin();
        for act in acts.drain(..) {
            let gen = &self.generators[g as usize];
            match act {
                Act::Transfer { src, dst, bytes, source } => {
                    // What a sender starts ranks as its own doing (`EventQueue::reserve`), an
                    // incast's too.
                    cx.events.set_origin(src + 1);
                    let (class, group) = (gen.class, gen.group);
                    let spec = FlowSpec {
                        size: Some(bytes),
                        ephemeral: Some(Origin { generator: g, source }),
                        ..FlowSpec::opened_now(src, dst, class, group, cx.now)
                    };
                    let f = self.open_flow(spec, fabric, cx);
                    self.start_flow(f, fabric, cx);
                    cx.events.set_origin(origin);
                }
                Act::Message { src, dst, bytes, id, conn } => self.transfer_message(g, (src, dst, conn), bytes, id, fabric, cx),
                Act::Request { server, bytes, source } => {
                    let f = self.rpc_connection(g, gen.sources[source as usize], server, fabric, cx);
                    self.offer_message(f, bytes, Message { end: 0, issued: cx.now, tag: source, bytes, ideal: Time::ZERO }, fabric, cx);
                }
                Act::Ping { dst, hash, bytes, source } => {
                    let h = gen.sources[source as usize];
                    let ping = Packet { flow: source, dst_host: dst, hash, seq: g, t_send: cx.now, ..Packet::new(PacketKind::Ping, gen.class, bytes as u16) };
                    let p = cx.pkts.alloc(ping);
                    let port = self.nodes[h as usize].port;
                    fabric.enqueue(port, gen.class as usize, p, self, cx);
                }
                Act::Again { at, source } => cx.events.push(at, EventKind::Arrival { generator: g, host: source }),
                Act::Notify { source } => cx.notify(gen.sources[source as usize], EventKind::Arrival { generator: g, host: source }),
            }
        }
    }

    /// A workload flow of `origin` has all its bytes acknowledged at its sender (`received`:
    /// delivered at its receiver): what it triggers (`Generator::transfer_done`).
    pub(crate) fn transfer_done(&mut self, origin: Origin, received: bool, fabric: &mut Fabric, cx: &mut Ctx) {
        let mut out = std::mem::take(&mut self.workload_acts);
        let g = origin.generator;
        let gen = &mut self.generators[g as usize];
        let (now, notice) = (cx.now, cx.notice_delay);
        gen.transfer_done(origin.source, received, now, notice, tally(&mut cx.measure, cx.cfg.warmup, g, gen.group), &mut out);
        self.carry_out(g, &mut out, fabric, cx);
        self.workload_acts = out;
    }

    /// A connection of generator `g` from `src` to `dst` that carries `feed`'s messages (one
    /// carrying a job's transfers runs the job's transport and controller).
    fn open_feed(&mut self, g: u32, (src, dst): (u32, u32), feed: Feed, fabric: &mut Fabric, cx: &mut Ctx) -> u32 {
        let gen = &self.generators[g as usize];
        let (class, group) = (gen.class, gen.group);
        let ephemeral = matches!(feed, Feed::Transfers { .. }).then_some(Origin { generator: g, source: PERSISTENT });
        let spec = FlowSpec { feed: Some(feed), ephemeral, ..FlowSpec::opened_now(src, dst, class, group, cx.now) };
        self.open_flow(spec, fabric, cx)
    }

    /// Generator `g`'s kept connection `key` from `src` to `dst` that carries `feed`'s messages,
    /// opened on first use (an RPC server opens its response connection when the first request
    /// arrives).
    fn feed_connection(&mut self, g: u32, (src, dst, key): (u32, u32, ConnKey), feed: Feed, fabric: &mut Fabric, cx: &mut Ctx) -> u32 {
        if let Some(&f) = self.generators[g as usize].conns.get(&key) {
            return f;
        }
        let f = self.open_feed(g, (src, dst), feed, fabric, cx);
        self.generators[g as usize].conns.insert(key, f);
        f
    }

    /// The request connection from `client` to `server` of RPC generator `g`.
    fn rpc_connection(&mut self, g: u32, client: u32, server: u32, fabric: &mut Fabric, cx: &mut Ctx) -> u32 {
        self.feed_connection(g, (client, server, ConnKey::Hosts(client, server)), Feed::Rpc { request: true, generator: g }, fabric, cx)
    }

    /// Generator `g`'s transfer `id` of `bytes` from `src` to `dst`, a message on its kept
    /// connection `key` (a job's between two ranks, a matrix's by its id): counted as started
    /// now, and acknowledged and received as a connection of its own would be.
    fn transfer_message(&mut self, g: u32, (src, dst, key): (u32, u32, ConnKey), bytes: u64, id: u32, fabric: &mut Fabric, cx: &mut Ctx) {
        let f = self.feed_connection(g, (src, dst, key), Feed::Transfers { generator: g }, fabric, cx);
        let (now, group) = (cx.now, self.generators[g as usize].group);
        if now >= cx.cfg.warmup {
            let sized = Some(bytes).filter(|_| now < cx.cfg.fct_until);
            cx.measure.groups[group as usize].record_start(&cx.measure.fct_buckets, sized);
        }
        let ideal = fabric.ideal_fct((src, dst, self.flows.slots[f].hash[0]), bytes, cx.cfg.payload_per_packet as u64, cx.cfg.header_bytes as u64);
        let end = self.offer_message(f, bytes, Message { end: 0, issued: now, tag: id, bytes, ideal }, fabric, cx);
        self.flows.slots[f].unacked_messages.as_mut().expect("a connection carrying transfers").push_back((end, id));
    }

    /// Queues message `m` of `bytes` on connection `f` and lets it send; its receiver expects
    /// it. Returns where it ends (`Message::end`).
    fn offer_message(&mut self, f: u32, bytes: u64, mut m: Message, fabric: &mut Fabric, cx: &mut Ctx) -> u64 {
        let flow = &mut self.flows.slots[f];
        let (dst, serial) = (flow.dst, flow.serial);
        let scheduled = matches!(flow.tx, Tx::Message(_));
        m.end = match &mut flow.tx {
            Tx::Message(tx) => {
                tx.offer(cx.now, bytes);
                let offered = flow.offered.as_mut().expect("a connection carrying messages");
                *offered += bytes;
                *offered
            }
            Tx::Window(_) => self.window_offer(f, bytes, fabric, cx),
        };
        match cx.foreign(dst) {
            true => cx.boundary.outbox.push((dst, Outgoing::Message(f, serial, m))),
            false => self.expect_message(f, serial, m),
        }
        // The host's scheduler releases the message transport's segments; the window
        // transport sent what it could on the offer.
        if scheduled {
            self.schedule_flow(f, cx);
        }
        m.end
    }

    /// The receiver of connection `f` (its connection `serial`, which may still wait to take
    /// the slot over, `RxEnd::next`) expects message `m`. An idle connection's wait for it is
    /// no outage.
    pub(crate) fn expect_message(&mut self, f: u32, serial: u32, m: Message) {
        let mut end = &mut self.flows.rx[f];
        if end.serial != serial {
            end = end.next.as_deref_mut().expect("the connection's receiving end");
        }
        let inbox = end.messages.as_mut().expect("a connection carrying messages");
        if inbox.queue.is_empty() {
            end.stats.last_delivery = end.stats.last_delivery.max(m.issued);
        }
        inbox.queue.push_back(m);
    }

    /// Connection `f` carrying a generator's transfers had data acknowledged: each transfer
    /// acknowledged whole is done at its sender.
    pub(crate) fn messages_acked(&mut self, f: u32, fabric: &mut Fabric, cx: &mut Ctx) {
        loop {
            let flow = &mut self.flows.slots[f];
            let acked = flow.acked();
            let Some(sent) = flow.unacked_messages.as_mut() else { return };
            let Some((_, id)) = sent.front().copied().filter(|&(end, _)| end <= acked) else { return };
            sent.pop_front();
            let generator = flow.ephemeral.expect("a connection carrying transfers").generator;
            self.transfer_done(Origin { generator, source: id }, false, fabric, cx);
        }
    }

    /// Connection `f` delivered one or more whole messages: a server answers a request, a
    /// client completes an RPC, a generator's transfer has arrived.
    pub(crate) fn messages_delivered(&mut self, f: u32, fabric: &mut Fabric, cx: &mut Ctx) {
        let now = cx.now;
        loop {
            let end = &mut self.flows.rx[f];
            let in_order = end.in_order();
            let (client, server, group) = (end.src, end.dst, end.group);
            let msgs = end.messages.as_mut().expect("a connection carrying messages");
            let Some(m) = msgs.queue.front().copied().filter(|m| m.end <= in_order) else { return };
            msgs.queue.pop_front();
            let (request, g) = match msgs.feed {
                Feed::Rpc { request, generator } => (request, generator),
                Feed::Transfers { generator } => {
                    let outage = std::mem::take(&mut msgs.outage);
                    let whole = Whole { group, src: client, dst: server, size: m.bytes, start: m.issued, ideal: m.ideal, outage, waited_for: true };
                    self.arrived_whole(whole, cx);
                    self.transfer_done(Origin { generator, source: m.tag }, true, fabric, cx);
                    continue;
                }
            };
            let gen = &mut self.generators[g as usize];
            let Some(response) = gen.message_delivered(request, (m.issued, m.tag), now, tally(&mut cx.measure, cx.cfg.warmup, g, group)) else { continue };
            let resp = match self.generators[g as usize].responses.get(&f) {
                Some(&r) => r,
                None => {
                    let r = self.open_feed(g, (server, client), Feed::Rpc { request: false, generator: g }, fabric, cx);
                    self.generators[g as usize].responses.insert(f, r);
                    r
                }
            };
            self.offer_message(resp, response, m, fabric, cx);
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
        gen.probe_back(p.flow, Some(p.t_send), cx.now, tally(&mut cx.measure, cx.cfg.warmup, p.seq, gen.group));
    }

    /// A probe or its echo of generator `g`'s source `i` was lost: it is no longer
    /// outstanding.
    pub(crate) fn ping_lost(&mut self, g: u32, i: u32, cx: &mut Ctx) {
        let gen = &mut self.generators[g as usize];
        gen.probe_back(i, None, cx.now, tally(&mut cx.measure, cx.cfg.warmup, g, gen.group));
    }
}
