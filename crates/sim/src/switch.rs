//! Switches: a shared buffer, forwarding by ECMP on precomputed routes (`routing`), tail drop at the buffer limit,
//! ECN marking (step or RED) at dequeue or enqueue, and PFC per ingress port and class.

use crate::ids::{PktId, PortId, SwitchId};
use crate::engine::Rng;
use crate::network::Network;
use crate::packet::{Packet, PacketKind};
use crate::scenario::MarkAt;
use rand::Rng as _;

pub struct Switch {
    pub node: u32,
    /// Bytes of the shared buffer in use.
    pub used: u64,
    pub rng: Rng,
    pub drops: u64,
    pub dropped_payload: u64,
    pub marks: u64,
}

/// Switch parameters common to every switch of a scenario.
#[derive(Clone, Copy, Debug)]
pub struct SwitchParams {
    pub buffer: u64,
    /// (XOFF, XON) in bytes per ingress port and class; `None` without PFC.
    pub pfc: Option<(u64, u64)>,
    /// (Kmin, Kmax, Pmax); `None` without ECN.
    pub ecn: Option<(u64, u64, f64)>,
    pub mark_at: MarkAt,
}

/// RED marking probability for a queue of `q` bytes (DCQCN §5.1 of algorithms.md): 0 up to
/// Kmin, rising linearly to Pmax at Kmax, 1 above Kmax. With Kmin = Kmax = K it is DCTCP's step:
/// mark when the queue exceeds K (algorithms.md §4.1).
pub fn mark_probability(q: u64, (kmin, kmax, pmax): (u64, u64, f64)) -> f64 {
    if q <= kmin {
        0.0
    } else if q > kmax {
        1.0
    } else {
        pmax * (q - kmin) as f64 / (kmax - kmin) as f64
    }
}

impl Network {
    /// Whether `pkt` is a data packet that `Network::lose_once` asked to drop; the fault is
    /// used up.
    fn injected_loss(&mut self, pkt: &Packet) -> bool {
        if self.faults.is_empty() || pkt.kind != PacketKind::Data {
            return false;
        }
        let at = self.faults.iter().position(|&f| f == (pkt.flow, pkt.seq));
        at.map(|i| self.faults.swap_remove(i)).is_some()
    }

    /// A packet was dropped: a data packet counts against its flow and the loss rate.
    pub(crate) fn count_drop(&mut self, pkt: &Packet) {
        if pkt.kind == PacketKind::Data {
            self.measure.data_drops += 1;
            self.flows.slots[pkt.flow as usize].stats.drops += 1;
        }
    }

    /// Data or ACK packet `i` arrived at switch `s` through port `in_port`.
    pub(crate) fn switch_receive(&mut self, s: SwitchId, in_port: PortId, i: PktId) {
        let pkt = *self.pkts.get(i);
        let injected = self.injected_loss(&pkt);
        let egress = self.fabric.routing.next_port(s, pkt.dst_host, pkt.hash);
        let c = pkt.class as usize;
        let sw = &mut self.fabric.switches[s.idx()];
        let w = pkt.wire_bytes as u64;
        if sw.used + w > self.cfg.switch_params.buffer || injected {
            // Tail drop: the shared buffer is full (or a fault is injected).
            sw.drops += 1;
            self.fabric.ports[egress.idx()].stats[c].drops += 1;
            sw.dropped_payload += pkt.payload_bytes as u64;
            self.count_drop(&pkt);
            match pkt.kind {
                k if k.of_flow() => {
                    self.free_packet(i);
                    self.maybe_retire(pkt.flow);
                }
                PacketKind::Ping | PacketKind::Pong => {
                    self.ping_lost(&pkt);
                    self.pkts.free(i);
                }
                _ => self.pkts.free(i),
            }
            return;
        }
        sw.used += w;
        let p = self.pkts.get_mut(i);
        p.in_port = Some(in_port);
        p.hops = p.hops.saturating_add(1);
        let inp = &mut self.fabric.ports[in_port.idx()];
        inp.ingress_bytes[c] += w;
        if let Some((xoff, _)) = self.cfg.switch_params.pfc {
            if !inp.pausing[c] && inp.ingress_bytes[c] > xoff {
                inp.pausing[c] = true;
                self.send_pfc(in_port, c, true);
            }
        }
        if self.cfg.switch_params.mark_at == MarkAt::Enqueue && self.cfg.switch_params.ecn.is_some() {
            let queued = self.fabric.ports[egress.idx()].class_bytes[c];
            self.mark(s, egress, i, queued);
        }
        self.enqueue(egress, c, i);
    }

    /// Marks data packet `i`, queued at egress `port` of switch `s`, CE with the probability
    /// for a queue of `queued` bytes.
    fn mark(&mut self, s: SwitchId, port: PortId, i: PktId, queued: u64) {
        let sw = &mut self.fabric.switches[s.idx()];
        if let (Some(ecn), PacketKind::Data) = (self.cfg.switch_params.ecn, self.pkts.get(i).kind) {
            let p = mark_probability(queued, ecn);
            if p >= 1.0 || (p > 0.0 && sw.rng.random::<f64>() < p) {
                let pkt = self.pkts.get_mut(i);
                pkt.ecn = true;
                sw.marks += 1;
                self.fabric.ports[port.idx()].stats[pkt.class as usize].ecn_marks += 1;
            }
        }
    }

    /// Packet `i` leaves class `c` of egress `port` of switch `s`, which held `queued` bytes in
    /// that class before it left: release its buffer, lift PFC on its ingress once below XON,
    /// and with marking at dequeue mark it by that queue (algorithms.md §5.1).
    pub(crate) fn switch_dequeued(&mut self, s: SwitchId, port: PortId, c: usize, i: PktId, queued: u64) {
        let pkt = *self.pkts.get(i);
        let w = pkt.wire_bytes as u64;
        self.fabric.switches[s.idx()].used -= w;
        if self.cfg.switch_params.mark_at == MarkAt::Dequeue && self.cfg.switch_params.ecn.is_some() {
            self.mark(s, port, i, queued);
        }
        let in_port = pkt.in_port.expect("a packet queued at a switch came in through a port");
        let inp = &mut self.fabric.ports[in_port.idx()];
        inp.ingress_bytes[c] -= w;
        if let Some((_, xon)) = self.cfg.switch_params.pfc {
            if inp.pausing[c] && inp.ingress_bytes[c] <= xon {
                inp.pausing[c] = false;
                self.send_pfc(in_port, c, false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn red_and_step_marking() {
        let red = (100, 200, 0.2);
        assert_eq!(mark_probability(100, red), 0.0);
        assert!((mark_probability(150, red) - 0.1).abs() < 1e-12);
        assert!((mark_probability(200, red) - 0.2).abs() < 1e-12);
        assert_eq!(mark_probability(201, red), 1.0);
        let step = (80_000, 80_000, 1.0);
        assert_eq!(mark_probability(80_000, step), 0.0);
        assert_eq!(mark_probability(80_001, step), 1.0);
    }
}
