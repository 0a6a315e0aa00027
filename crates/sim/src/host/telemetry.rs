//! In-band network telemetry in the network (`switch.int`; HPCC §4.1, reference §6.1): switches
//! push records onto packets at dequeue (`Fabric::int_push`), receivers echo them, and senders turn them into what
//! their controller reads — HPCC's per-hop records, or TIMELY's input from the hop-by-hop queue
//! vector (`cc.signal`, `rttlab_cc::signal`). The wire format is `rttlab_cc::int`'s.

use super::Hosts;
use crate::core::ids::PktId;
use crate::core::packet::{IntStack, MAX_INT_HOPS};
use crate::ctx::Ctx;
use crate::fabric::Fabric;
use rttlab_cc::int::header_bytes;
use rttlab_cc::{Signal, Time};

impl Hosts {
    /// The receiver turns data packet `i`'s records into an ACK's echo (in place: the message
    /// transport's ACK is the data packet's slot); returns the bytes the echo adds to the ACK.
    pub(crate) fn int_echo(&mut self, i: PktId, cx: &mut Ctx) -> u32 {
        match cx.pkts.int_mut(i) {
            Some(st) => {
                st.fwd = st.n;
                header_bytes(st.n as usize)
            }
            None => 0,
        }
    }

    /// The window transport's ACK is a new packet: it gets flow `f`'s last echo (`int_keep`).
    pub(crate) fn int_echo_into(&mut self, f: u32, ack: PktId, cx: &mut Ctx) -> u32 {
        let Some(kept) = self.flows.rx[f].int_echo.as_deref().copied() else { return 0 };
        let Some(st) = cx.pkts.int_mut(ack) else { return 0 };
        *st = kept;
        self.int_echo(ack, cx)
    }

    /// Window receiver: keeps data packet `i`'s records for flow `f`'s next ACK.
    pub(crate) fn int_keep(&mut self, f: u32, i: PktId, cx: &mut Ctx) {
        if let Some(st) = cx.pkts.int(i).copied() {
            **self.flows.rx[f].int_echo.get_or_insert_default() = st;
        }
    }

    /// TIMELY's input for a completion of flow `f` whose ACK brought `int`, when `cc.signal`
    /// is a queue signal: the flow's unloaded round trip plus `f(q)` of the queue vector, each
    /// queue as a delay — as the packets' records report it, or, for the oracle, as the same
    /// ports hold it now. Without records (telemetry off cannot pass validation) the RTT `rtt`.
    pub(crate) fn signal_input(&self, f: u32, rtt: Time, int: Option<&IntStack>, fabric: &Fabric, cx: &Ctx) -> Time {
        let (signal, threshold) = cx.cfg.conns[self.conn_of(self.flows.slots[f].ephemeral) as usize].signal;
        let Some(st) = int else { return rtt };
        let mut q = [Time::ZERO; 2 * MAX_INT_HOPS];
        let hops = st.all();
        for ((slot, hop), &port) in q.iter_mut().zip(hops).zip(&st.ports) {
            *slot = if signal == Signal::Oracle {
                let port = &fabric.ports[port as usize];
                port.rate.serialization(port.queue_bytes)
            } else {
                hop.queue_delay()
            };
        }
        signal.value(rtt, self.flows.slots[f].base_rtt, &q[..hops.len()], threshold)
    }
}
