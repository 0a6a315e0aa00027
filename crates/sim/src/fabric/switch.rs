//! Switches: a shared buffer, forwarding (one function, `Fabric::route`, for every routing
//! mode), tail drop at the buffer limit, ECN marking (step or RED) at dequeue or enqueue, PFC per
//! ingress port and class, and in-band telemetry's records.

use crate::core::engine::Rng;
use crate::core::ids::{PktId, PortId, SwitchId};
use crate::core::packet::{Lost, Packet, PacketKind, FLAG_IN_HEADROOM, FLAG_TRIMMED, FLAG_TRIMMED_LAST_HOP};
use crate::ctx::Ctx;
use crate::fabric::port::{ClassQueue, QUEUE_ADMIT, QUEUE_MARK_DEQUEUE, QUEUE_MARK_ENQUEUE};
use crate::fabric::{Fabric, HostPorts, NO_ROUTE, TO_HOST};
use crate::scenario::{EcnConfig, MarkAt, QueueLen, Spacing, Trimming};
use rand::Rng as _;
use rttlab_cc::int::HOP_BYTES;
use rttlab_cc::{IntHop, Rate, Time};

pub struct Switch {
    pub node: u32,
    /// Bytes of the buffer in use, headroom included.
    pub used: u64,
    /// Bytes held in ingress headroom, and the headroom every port reserves in all: the shared
    /// buffer is `buffer − reserved`, of which `used − headroom_used` is in use.
    pub headroom_used: u64,
    pub reserved: u64,
    pub rng: Rng,
    /// Its choices among equal-cost ports, in the modes where a switch chooses.
    pub chooser: crate::fabric::routing::Chooser,
    pub drops: u64,
    pub dropped_payload: u64,
    pub marks: u64,
    /// Data packets trimmed to their headers (`switch.trimming`).
    pub trims: u64,
}

impl Switch {
    /// The dynamic PFC threshold: `alpha` times the shared buffer (`buffer` less every reserve)
    /// not in use (the HPCC simulator's `GetPfcThreshold`, reference §9.1).
    pub(crate) fn dynamic_xoff(&self, alpha: f64, buffer: u64) -> u64 {
        (alpha * (buffer - self.reserved).saturating_sub(self.used - self.headroom_used) as f64) as u64
    }
}

/// What the queues of one switch egress port do, resolved from `[switch]` and its
/// `[[switch.ports]]` overrides; ports share these through an index (`Port::params`).
#[derive(Clone, Debug, PartialEq)]
pub struct QueueParams {
    /// (XOFF, XON) in bytes per class of this port's ingress; `None` without PFC.
    pub pfc: Option<(u64, u64)>,
    /// PFC headroom of this port's ingress, per class.
    pub pfc_headroom: u64,
    pub ecn: Option<Red>,
    pub limit: Option<QueueLen>,
    /// Dynamic threshold factor of the shared buffer.
    pub alpha: Option<f64>,
    /// Packets of the queue in the transmit ring, unseen by marking and the limit.
    pub device_queue: u64,
}

/// ECN marking of a class queue: the RED curve (a step when `kmin == kmax`) in bytes or
/// packets, gentle or not, with its spacing of marks.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Red {
    pub kmin: u64,
    pub kmax: u64,
    pub pmax: f64,
    pub packets: bool,
    pub gentle: bool,
    pub spacing: Spacing,
    pub mark_at: MarkAt,
    /// The thresholds are for a port of this rate (`EcnConfig::scale_rate`).
    pub scale_rate: Option<Rate>,
}

impl Red {
    pub fn new(e: &EcnConfig) -> Red {
        let (kmin, kmax) = e.thresholds();
        Red {
            kmin: kmin.amount(),
            kmax: kmax.amount(),
            pmax: e.pmax,
            packets: kmin.packets(),
            gentle: e.gentle,
            spacing: e.spacing,
            mark_at: e.mark_at,
            scale_rate: e.scale_rate,
        }
    }

    /// The curve for a port of `rate`, if its thresholds scale with the rate.
    pub fn scaled_for(&self, rate: Rate) -> Option<Red> {
        let at = self.scale_rate?;
        let scale = |k: u64| (k as u128 * rate.bps() as u128 / at.bps() as u128) as u64;
        Some(Red { kmin: scale(self.kmin), kmax: scale(self.kmax), scale_rate: None, ..*self })
    }

    /// RED's marking probability for a queue of `q` (algorithms.md §5.1; Floyd and Jacobson
    /// 1993): 0 up to Kmin, rising linearly to Pmax at Kmax, then 1 — or, gentle, rising on
    /// linearly to 1 at 2·Kmax. With Kmin = Kmax = K it is DCTCP's step: mark when the queue
    /// exceeds K (algorithms.md §4.1).
    pub fn curve(&self, q: u64) -> f64 {
        if q <= self.kmin {
            0.0
        } else if q <= self.kmax {
            self.pmax * (q - self.kmin) as f64 / (self.kmax - self.kmin) as f64
        } else if self.gentle && q < 2 * self.kmax {
            self.pmax + (1.0 - self.pmax) * (q - self.kmax) as f64 / self.kmax as f64
        } else {
            1.0
        }
    }
}

/// A class queue's RED spacing state (ns-2 `red.cc` `count` and `old`): packets since the last
/// mark while the queue is above Kmin.
#[derive(Copy, Clone, Debug, Default)]
pub struct RedState {
    count: u32,
    above: bool,
}

impl RedState {
    /// Whether to mark the next packet at a queue of `q`, drawing from `uniform` when the
    /// probability is strictly between 0 and 1 (Floyd and Jacobson §7; `Spacing` says which
    /// rule). Above the curve's 1 every packet is marked (a forced mark, which leaves the count
    /// alone); the first packet after the queue rises above Kmin is not marked; any other mark
    /// restarts the count (ns-2 `red.cc`, ns-3 `RedQueueDisc::DoEnqueue`).
    pub fn mark(&mut self, q: u64, red: &Red, uniform: impl FnOnce() -> f64) -> bool {
        let p = red.curve(q);
        let p = match red.spacing {
            _ if p >= 1.0 => return true,
            Spacing::Independent => p,
            _ => {
                self.count = self.count.saturating_add(1);
                if p == 0.0 {
                    self.above = false;
                    return false;
                }
                if !self.above {
                    (self.above, self.count) = (true, 1);
                    return false;
                }
                let cp = self.count as f64 * p;
                match red.spacing {
                    Spacing::Uniform if cp < 1.0 => p / (1.0 - cp),
                    Spacing::Wait if cp < 1.0 => 0.0,
                    Spacing::Wait if cp < 2.0 => p / (2.0 - cp),
                    _ => 1.0,
                }
            }
        };
        let marked = p >= 1.0 || (p > 0.0 && uniform() < p);
        if marked {
            self.count = 0;
        }
        marked
    }
}

/// Whether class queue `q` of an egress takes a packet of `w` bytes under its queue limit and
/// the dynamic threshold, with `free` bytes of the shared buffer left: the queue above the
/// device ring stays within `limit`, and the class queue within `alpha · free` (Choudhury
/// and Hahne 1998).
#[inline]
pub(crate) fn admits(q: &ClassQueue, w: u64, params: &QueueParams, free: u64) -> bool {
    let within_limit = match params.limit {
        None => true,
        Some(QueueLen::Packets(n)) => (q.queue.len() as u64).saturating_sub(params.device_queue) < n,
        Some(QueueLen::Bytes(b)) => q.bytes + w <= b,
    };
    within_limit && params.alpha.is_none_or(|a| (q.bytes + w) as f64 <= a * free as f64)
}

/// When a switch's egress for a packet is decided ([`Fabric::route`]).
#[derive(Copy, Clone)]
pub(crate) enum Decided {
    /// As the packet leaves the hop before, toward its arrival at `arrive`.
    AtDeparture { arrive: Time },
    /// As it arrives.
    AtArrival,
}

/// A switch's behaviour, beside its state: receive a packet, route it, mark it, release it at
/// dequeue, and telemetry's records.
impl Fabric {
    /// The one place a switch routes: the egress switch `s` gives `pkt`, decided
    /// [`Decided::AtDeparture`] (as the packet leaves the hop before, from what it carries:
    /// the routes are fixed, so the egress is known a link ahead and the arrival can fetch its
    /// port into the cache and name its node without reading the ingress) or
    /// [`Decided::AtArrival`] (where the switch chooses from its own state, which only the
    /// arrival knows). Like htsim's `FatTreeSwitch::getNextHop`, every mode is a case here:
    /// - ECMP (and REPS, whose sender picks the hash): the hash over the routes (`Routing::next_port`);
    ///   with faults, over the routes the switch has when the packet arrives, weighed by the
    ///   ports' rates when `routing.weights = "capacity"` ([`crate::fabric::faults`]; `NO_ROUTE`: none);
    /// - flowlets, spraying, adaptive routing: the switch's chooser (`choose`), at arrival.
    #[inline(always)]
    pub(crate) fn route(&mut self, s: SwitchId, pkt: &Packet, decided: Decided, cx: &Ctx) -> PortId {
        match (decided, cx.cfg.switch_chooses) {
            (Decided::AtDeparture { .. }, true) => TO_HOST,
            (Decided::AtDeparture { arrive }, false) => match &self.faults {
                None => self.routing.next_port(s, pkt.dst_host, pkt.hash),
                Some(_) => self.route_around_faults(s, pkt, arrive, cx),
            },
            (Decided::AtArrival, true) => self.choose(s, pkt, cx),
            (Decided::AtArrival, false) => {
                debug_assert!(self.faults.is_some() || pkt.egress == self.routing.next_port(s, pkt.dst_host, pkt.hash));
                pkt.egress
            }
        }
    }

    /// ECMP's egress at switch `s` for `pkt` arriving at `arrive` on a fabric with faults.
    /// Out of line: a run without faults never calls it.
    #[cold]
    #[inline(never)]
    fn route_around_faults(&self, s: SwitchId, pkt: &Packet, arrive: Time, cx: &Ctx) -> PortId {
        let f = self.faults.as_ref().expect("a fabric with faults");
        let routes = f.routing_at(arrive).unwrap_or(&self.routing);
        let rate = |q: PortId| f.rate(q, self.nominal_rate(q), arrive);
        routes.next_port_weighed(s, pkt.dst_host, pkt.hash, cx.cfg.routing.weights, rate).unwrap_or(NO_ROUTE)
    }

    /// Data or ACK packet `i` arrived at switch `s` through port `in_port`.
    pub(crate) fn switch_receive(&mut self, s: SwitchId, in_port: PortId, i: PktId, hosts: &mut impl HostPorts, cx: &mut Ctx) {
        let pkt = *cx.pkts.get(i);
        let injected = self.injected_loss(&pkt);
        let c = pkt.class as usize;
        let egress = self.route(s, &pkt, Decided::AtArrival, cx);
        if self.faults.as_ref().is_some_and(|f| egress == NO_ROUTE || f.down(egress, cx.now)) {
            // Forwarded into a link that is down (lost until the routes leave it out), or
            // nowhere: faults cut the switch off from the destination for now.
            if egress != NO_ROUTE {
                self.queues.at_mut(egress, c).counts.count_lost(Lost::Down);
            }
            return self.lose(i, Lost::Down, hosts, cx);
        }
        if pkt.trimmed() {
            return self.queue_trimmed(s, egress, c, i, hosts, cx);
        }
        let sw = &mut self.switches[s.idx()];
        let w = pkt.wire_bytes as u64;
        let out = &self.ports[egress.idx()];
        let admitted = out.queue_checks & QUEUE_ADMIT == 0
            || admits(self.queues.at(egress, c), w, &cx.cfg.queue_params[out.params as usize], cx.cfg.buffer.saturating_sub(sw.used));
        let mark_at_enqueue = out.queue_checks & QUEUE_MARK_ENQUEUE != 0;
        let inp = &self.ports[in_port.idx()];
        // Once its ingress has sent PAUSE, a packet goes into that ingress's headroom while it
        // has room, as a Broadcom MMU charges a priority group past XOFF (IEEE 802.1Qbb
        // headroom); otherwise into the shared buffer, which excludes every reserve.
        let headroom = cx.cfg.pfc_in(c) && inp.pausing[c] && self.queues.at(in_port, c).headroom_used + w <= inp.pfc_headroom;
        let shared_full = sw.used - sw.headroom_used + w > cx.cfg.buffer - sw.reserved;
        if ((shared_full && !headroom) || injected || !admitted) && !self.refuse(s, egress, (i, &pkt), injected, hosts, cx) {
            return;
        }
        let sw = &mut self.switches[s.idx()];
        sw.used += w;
        let p = cx.pkts.get_mut(i);
        p.in_port = in_port;
        p.flags = if headroom { p.flags | FLAG_IN_HEADROOM } else { p.flags & !FLAG_IN_HEADROOM };
        p.hops = p.hops.saturating_add(1);
        if cx.cfg.pfc_in(c) {
            let (inp, q) = (&mut self.ports[in_port.idx()], self.queues.at_mut(in_port, c));
            q.ingress_bytes += w;
            if headroom {
                q.headroom_used += w;
                sw.headroom_used += w;
            }
            // The threshold (dynamic with `pfc_alpha`) is looked at only while the ingress runs.
            if !inp.pausing[c] && q.ingress_bytes > cx.cfg.pfc_alpha.map_or(inp.pfc_xoff, |a| sw.dynamic_xoff(a, cx.cfg.buffer)) {
                inp.pausing[c] = true;
                self.send_pfc(in_port, c, true, cx);
            }
        }
        if mark_at_enqueue {
            let out = self.queues.at(egress, c);
            let queued = (out.bytes, out.queue.len() as u64);
            self.mark(s, egress, i, queued, cx);
        }
        self.enqueue(egress, c, i, hosts, cx);
    }

    /// The egress switch `s` chooses for `pkt` from its own state (`routing.mode`), among the
    /// ports its routes have now ([`crate::fabric::faults`]; `NO_ROUTE`: none); adaptive routing compares the ports'
    /// bytes to send, queued and the rest of the packet on the wire (DRILL §3: the queue as
    /// the port sees it), a port paused in the packet's class counting as full with
    /// `routing.count_paused`, and one that is down as full at once.
    fn choose(&mut self, s: SwitchId, pkt: &Packet, cx: &Ctx) -> PortId {
        let (ports, routing, c, now) = (&self.ports, &cx.cfg.routing, pkt.class as usize, cx.now);
        let faults = self.faults.as_ref();
        let routes = faults.and_then(|f| f.routing_at(now)).unwrap_or(&self.routing);
        let load = |p: PortId| {
            let port = &ports[p.idx()];
            if (routing.count_paused && port.paused(c)) || faults.is_some_and(|f| f.down(p, now)) {
                return u64::MAX;
            }
            let on_wire = port.busy_until.saturating_sub(now).ps() as u128 * port.rate.bps() as u128 / 8_000_000_000_000;
            port.queue_bytes + on_wire as u64
        };
        routes.choose(s, (pkt.dst_host, pkt.hash), now, routing, &mut self.switches[s.idx()].chooser, load).unwrap_or(NO_ROUTE)
    }

    /// Marks data packet `i`, queued at egress `port` of switch `s`, CE with the probability
    /// for a queue of `queued` (bytes, packets).
    fn mark(&mut self, s: SwitchId, port: PortId, i: PktId, (bytes, packets): (u64, u64), cx: &mut Ctx) {
        let pkt = cx.pkts.get_mut(i);
        let params = &cx.cfg.queue_params[self.ports[port.idx()].params as usize];
        let (Some(red), PacketKind::Data) = (&params.ecn, pkt.kind) else { return };
        let c = pkt.class as usize;
        let q = if red.packets { packets.saturating_sub(params.device_queue) } else { bytes };
        let (sw, out) = (&mut self.switches[s.idx()], self.queues.at_mut(port, c));
        if out.red.mark(q, red, || sw.rng.random::<f64>()) {
            pkt.ecn = true;
            sw.marks += 1;
            out.counts.ecn_marks += 1;
        }
    }

    /// Packet `i` leaves class `c` of egress `port` of switch `s`, which held `queued` bytes in
    /// that class before it left: with marking at dequeue mark it by that queue
    /// (algorithms.md §5.1), and release its buffer (`release`).
    pub(crate) fn switch_dequeued(&mut self, s: SwitchId, port: PortId, c: usize, i: PktId, queued: u64, cx: &mut Ctx) {
        if self.ports[port.idx()].queue_checks & QUEUE_MARK_DEQUEUE != 0 {
            let packets = self.queues.at(port, c).queue.len() as u64 + 1;
            self.mark(s, port, i, (queued, packets), cx);
        }
        self.release(s, c, i, cx);
    }

    /// Packet `i` of class `c` no longer occupies switch `s`: release its buffer, and lift PFC
    /// on its ingress once below XON.
    #[inline(always)]
    fn release(&mut self, s: SwitchId, c: usize, i: PktId, cx: &mut Ctx) {
        let pkt = cx.pkts.get(i);
        let (w, in_headroom, in_port) = (pkt.wire_bytes as u64, pkt.in_headroom(), pkt.in_port);
        let sw = &mut self.switches[s.idx()];
        sw.used -= w;
        if in_headroom {
            sw.headroom_used -= w;
        }
        if !cx.cfg.pfc_in(c) {
            return;
        }
        let (inp, q) = (&mut self.ports[in_port.idx()], self.queues.at_mut(in_port, c));
        q.ingress_bytes -= w;
        if in_headroom {
            q.headroom_used -= w;
        }
        let sw = &self.switches[s.idx()];
        if inp.pausing[c]
            && q.ingress_bytes <= cx.cfg.pfc_alpha.map_or(inp.pfc_xon, |a| sw.dynamic_xoff(a, cx.cfg.buffer).saturating_sub(cx.cfg.pfc_resume_offset))
        {
            inp.pausing[c] = false;
            self.send_pfc(in_port, c, false, cx);
        }
    }

    /// Switch `s` cannot queue packet `i` (`pkt`) on `egress` (the shared buffer or the queue's
    /// limit is full, or a fault is `injected`): it drops it (tail drop), or with trimming trims
    /// it or, on htsim's coin (`CompositeQueue::receivePacket`), the queue's last packet in its
    /// place. True: the arriving packet is to be queued after all. Out of line: a packet the
    /// switch takes never calls it.
    #[cold]
    #[inline(never)]
    fn refuse(&mut self, s: SwitchId, egress: PortId, (i, pkt): (PktId, &Packet), injected: bool, hosts: &mut impl HostPorts, cx: &mut Ctx) -> bool {
        let c = pkt.class as usize;
        let sw = &mut self.switches[s.idx()];
        let trims = !injected && cx.cfg.trimming != Trimming::Off && pkt.kind == PacketKind::Data && pkt.payload_bytes > 0;
        if !trims {
            sw.drops += 1;
            self.queues.at_mut(egress, c).counts.drops += 1;
            sw.dropped_payload += pkt.payload_bytes as u64;
            hosts.dropped(pkt, i, None, cx);
            return false;
        }
        let last = cx.cfg.trimming == Trimming::Either && sw.rng.random::<bool>();
        match last.then(|| self.queues.at_mut(egress, c).queue.pop_back(&mut cx.pkts)).flatten() {
            Some(last) => {
                self.unqueue(s, egress, c, last, cx);
                self.trim(s, egress, c, last, hosts, cx);
                true
            }
            None => {
                self.trim(s, egress, c, i, hosts, cx);
                false
            }
        }
    }

    /// Packet `i`, the last of class `c` of egress `port` of switch `s`, was taken back out of
    /// the queue (to be trimmed in an arriving packet's place): the queue and the switch no
    /// longer hold it.
    #[cold]
    fn unqueue(&mut self, s: SwitchId, port: PortId, c: usize, i: PktId, cx: &mut Ctx) {
        self.queue_changes(port, cx);
        let w = cx.pkts.get(i).wire_bytes as u64;
        self.ports[port.idx()].queue_bytes -= w;
        let q = self.queues.at_mut(port, c);
        q.bytes -= w;
        q.occupancy_changed(cx.now, -(w as i64), false);
        self.release(s, c, i, cx);
    }

    /// Switch `s` trims data packet `i`, which class `c` of `egress` could not take, to its
    /// headers (`switch.trim_bytes`, NDP §3.1): its payload counts as dropped, and the header,
    /// marked as trimmed at the last hop when `egress` leads to a host (Ultra Ethernet's NACK
    /// reports it), goes on ahead of every class (`queue_trimmed`).
    #[cold]
    fn trim(&mut self, s: SwitchId, egress: PortId, c: usize, i: PktId, hosts: &mut impl HostPorts, cx: &mut Ctx) {
        let last_hop = self.ports[egress.idx()].far_switch().is_none();
        let p = cx.pkts.get_mut(i);
        let sw = &mut self.switches[s.idx()];
        sw.trims += 1;
        sw.dropped_payload += p.payload_bytes as u64;
        self.queues.at_mut(egress, c).counts.trims += 1;
        p.payload_bytes = 0;
        p.wire_bytes = cx.cfg.trim_bytes as u16;
        p.flags |= FLAG_TRIMMED | if last_hop { FLAG_TRIMMED_LAST_HOP } else { 0 };
        self.queue_trimmed(s, egress, c, i, hosts, cx);
    }

    /// A trimmed packet `i` of class `c` at switch `s` joins `egress`'s control queue, served
    /// before every class (htsim's `CompositeQueue`, whose headers take its high-priority
    /// queue), holding trimmed packets of at most twice the class queue's limit in bytes (a
    /// limit in packets counts MTU packets; without a limit, twice the shared buffer); beyond
    /// it the packet is dropped. The control queue
    /// is apart from the shared buffer.
    #[cold]
    fn queue_trimmed(&mut self, s: SwitchId, egress: PortId, c: usize, i: PktId, hosts: &mut impl HostPorts, cx: &mut Ctx) {
        let p = cx.pkts.get_mut(i);
        p.hops = p.hops.saturating_add(1);
        let w = p.wire_bytes as u64;
        let port = &mut self.ports[egress.idx()];
        let bound = 2 * cx.cfg.queue_params[port.params as usize].limit.map_or(cx.cfg.buffer, |l| l.bytes(cx.cfg.mtu()));
        if port.trimmed_bytes + w > bound {
            self.switches[s.idx()].drops += 1;
            self.queues.at_mut(egress, c).counts.drops += 1;
            let pkt = *cx.pkts.get(i);
            return hosts.dropped(&pkt, i, None, cx);
        }
        port.trimmed_bytes += w;
        port.control.push_back(&mut cx.pkts, i);
        port.control_queued = true;
        self.try_tx(egress, hosts, cx);
    }

    /// Switch egress `p` dequeued packet `i`: with telemetry on, a data packet (or an ACK
    /// collecting the reverse path) gets the port's record — its timestamp, bytes sent so far,
    /// queue after the packet left and line rate, as the HPCC simulator's `SwitchNotifyDequeue`
    /// writes them — and is 8 bytes longer on the wire from here.
    pub(crate) fn int_push(&mut self, p: PortId, i: PktId, cx: &mut Ctx) {
        let Some(run) = cx.cfg.int else { return };
        let pkt = cx.pkts.get(i);
        let collects = match pkt.kind {
            PacketKind::Data => true,
            // A queue signal needs the round trip's records: ACKs collect their path's too.
            PacketKind::Ack | PacketKind::Nak => cx.cfg.acks_collect_int,
            _ => false,
        };
        if !collects {
            return;
        }
        let port = self.port(p);
        let record = IntHop::encode(cx.now, port.tx_bytes(), port.queue_bytes, port.rate);
        let st = cx.pkts.int_mut(i).expect("telemetry on: every packet has a stack");
        if st.n - st.fwd >= run.max_hops {
            return;
        }
        st.hops[st.n as usize] = record;
        st.ports[st.n as usize] = p.0;
        st.n += 1;
        cx.pkts.get_mut(i).wire_bytes += HOP_BYTES as u16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red(kmin: u64, kmax: u64, pmax: f64, gentle: bool, spacing: Spacing) -> Red {
        Red { kmin, kmax, pmax, packets: false, gentle, spacing, mark_at: MarkAt::Dequeue, scale_rate: None }
    }

    #[test]
    fn red_and_step_marking() {
        let r = red(100, 200, 0.2, false, Spacing::Independent);
        assert_eq!(r.curve(100), 0.0);
        assert!((r.curve(150) - 0.1).abs() < 1e-12);
        assert!((r.curve(200) - 0.2).abs() < 1e-12);
        assert_eq!(r.curve(201), 1.0);
        let step = red(80_000, 80_000, 1.0, false, Spacing::Independent);
        assert_eq!(step.curve(80_000), 0.0);
        assert_eq!(step.curve(80_001), 1.0);
    }

    #[test]
    fn gentle_red_rises_to_one_at_twice_kmax() {
        let r = red(20, 60, 0.02, true, Spacing::Independent);
        assert!((r.curve(60) - 0.02).abs() < 1e-12);
        assert!((r.curve(90) - 0.51).abs() < 1e-12);
        assert!((r.curve(119) - (0.02 + 0.98 * 59.0 / 60.0)).abs() < 1e-12);
        assert_eq!(r.curve(120), 1.0);
    }

    #[test]
    fn spacing_rules() {
        // At p = 0.1 with every draw 0.45, packet k after the queue rose above Kmin has count k
        // (the first, k = 1, is never marked). Uniform spacing marks once 0.1 / (1 − 0.1·k) >
        // 0.45, at k = 8; wait marks nothing until 0.1·k ≥ 1, then once 0.1 / (2 − 0.1·k) >
        // 0.45, at k = 18. A mark restarts the count: 5 uniform marks in 40 packets (8, 16, 24,
        // 32, 40), 2 with wait (18, 36).
        let marks = |spacing| {
            let r = red(0, 10, 1.0, false, spacing);
            let mut st = RedState::default();
            (1..=40).filter(|_| st.mark(1, &r, || 0.45)).count()
        };
        let first = |spacing| {
            let r = red(0, 10, 1.0, false, spacing);
            let mut st = RedState::default();
            (1..=40).position(|_| st.mark(1, &r, || 0.45)).map(|i| i + 1)
        };
        assert_eq!(first(Spacing::Uniform), Some(8));
        assert_eq!(first(Spacing::Wait), Some(18));
        assert_eq!(first(Spacing::Independent), None, "0.45 > 0.1");
        assert_eq!(marks(Spacing::Uniform), 5);
        assert_eq!(marks(Spacing::Wait), 2);
        let r = red(0, 10, 1.0, false, Spacing::Wait);
        let mut st = RedState::default();
        assert!(st.mark(20, &r, || 0.99), "above kmax: forced");
        assert!(!st.mark(0, &r, || 0.0), "at kmin: never");
    }
}
