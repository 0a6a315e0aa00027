//! In-band network telemetry in the network (`switch.int`; HPCC §4.1, reference §6.1): switches
//! push records onto packets at dequeue, receivers echo them, and senders turn them into what
//! their controller reads — HPCC's per-hop records, or TIMELY's input from the hop-by-hop queue
//! vector (`cc.signal`, `rttlab_cc::signal`). The wire format is `rttlab_cc::int`'s.

use crate::ids::{PktId, PortId};
use crate::network::Network;
use crate::packet::{IntStack, PacketKind, MAX_INT_HOPS};
use rttlab_cc::int::{header_bytes, HOP_BYTES};
use rttlab_cc::{IntHop, Signal, Time};

/// What the scenario asks of the telemetry.
#[derive(Copy, Clone, Debug)]
pub(crate) struct IntRun {
    /// Records per direction.
    pub max_hops: u8,
}

impl Network {
    /// Switch egress `p` dequeued packet `i`: with telemetry on, a data packet (or an ACK
    /// collecting the reverse path) gets the port's record — its timestamp, bytes sent so far,
    /// queue after the packet left and line rate, as the HPCC simulator's `SwitchNotifyDequeue`
    /// writes them — and is 8 bytes longer on the wire from here.
    pub(crate) fn int_push(&mut self, p: PortId, i: PktId) {
        let Some(run) = self.cfg.int else { return };
        let pkt = self.pkts.get(i);
        let collects = match pkt.kind {
            PacketKind::Data => true,
            // A queue signal needs the round trip's records: ACKs collect their path's too.
            PacketKind::Ack | PacketKind::Nak => self.cfg.signal.0.uses_queues(),
            _ => false,
        };
        if !collects {
            return;
        }
        let port = &self.fabric.ports[p.idx()];
        let record = IntHop::encode(self.now, port.tx_bytes(), port.queue_bytes, port.rate);
        let st = self.pkts.int_mut(i).expect("telemetry on: every packet has a stack");
        if st.n - st.fwd >= run.max_hops {
            return;
        }
        st.hops[st.n as usize] = record;
        st.ports[st.n as usize] = p.0;
        st.n += 1;
        self.pkts.get_mut(i).wire_bytes += HOP_BYTES;
    }

    /// The receiver turns data packet `i`'s records into an ACK's echo (in place: the message
    /// transport's ACK is the data packet's slot); returns the bytes the echo adds to the ACK.
    pub(crate) fn int_echo(&mut self, i: PktId) -> u32 {
        match self.pkts.int_mut(i) {
            Some(st) => {
                st.fwd = st.n;
                header_bytes(st.n as usize)
            }
            None => 0,
        }
    }

    /// The window transport's ACK is a new packet: it gets flow `f`'s last echo (`int_keep`).
    pub(crate) fn int_echo_into(&mut self, f: u32, ack: PktId) -> u32 {
        let Some(kept) = self.flows.slots[f as usize].int_echo.as_deref().copied() else { return 0 };
        let Some(st) = self.pkts.int_mut(ack) else { return 0 };
        *st = kept;
        self.int_echo(ack)
    }

    /// Window receiver: keeps data packet `i`'s records for flow `f`'s next ACK.
    pub(crate) fn int_keep(&mut self, f: u32, i: PktId) {
        if let Some(st) = self.pkts.int(i).copied() {
            **self.flows.slots[f as usize].int_echo.get_or_insert_default() = st;
        }
    }

    /// TIMELY's input for a completion of flow `f` whose ACK brought `int`, when `cc.signal`
    /// is a queue signal: the flow's unloaded round trip plus `f(q)` of the queue vector, each
    /// queue as a delay — as the packets' records report it, or, for the oracle, as the same
    /// ports hold it now. Without records (telemetry off cannot pass validation) the RTT `rtt`.
    pub(crate) fn signal_input(&self, f: u32, rtt: Time, int: Option<&IntStack>) -> Time {
        let (signal, threshold) = self.cfg.signal;
        let Some(st) = int else { return rtt };
        let mut q = [Time::ZERO; 2 * MAX_INT_HOPS];
        let hops = st.all();
        for ((slot, hop), &port) in q.iter_mut().zip(hops).zip(&st.ports) {
            *slot = if signal == Signal::Oracle {
                let port = &self.fabric.ports[port as usize];
                port.rate.serialization(port.queue_bytes)
            } else {
                hop.queue_delay()
            };
        }
        signal.value(rtt, self.flows.slots[f as usize].base_rtt, &q[..hops.len()], threshold)
    }

    /// The unloaded round trip from host `src` to `dst` on ECMP hashes `hash`: a full data
    /// packet's serialization and propagation on each link there, an ACK's on the way back.
    pub(crate) fn base_rtt(&self, src: u32, dst: u32, hash: [u32; 2]) -> Time {
        let data = (self.cfg.payload_per_packet + self.cfg.header_bytes) as u64;
        let leg = |a, b, h, bytes| {
            self.path(a, b, h).iter().fold(Time::ZERO, |t, p| {
                let port = &self.fabric.ports[p.idx()];
                t + port.rate.serialization(bytes) + port.delay
            })
        };
        leg(src, dst, hash[0], data) + leg(dst, src, hash[1], self.cfg.ack_bytes as u64)
    }

    /// The largest unloaded round trip between any two hosts (HPCC's `T`, the HPCC simulator's
    /// `GLOBAL_T`).
    pub(crate) fn max_base_rtt(&self) -> Time {
        let hosts = self.fabric.hosts.len() as u32;
        (0..hosts).flat_map(|a| (0..hosts).filter(move |&b| b != a).map(move |b| (a, b))).map(|(a, b)| self.base_rtt(a, b, [0, 0])).max().unwrap_or(Time::ZERO)
    }
}
