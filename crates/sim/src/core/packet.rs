//! Packets and the slab they live in. A packet is addressed by its `PktId`; freed slots are
//! reused, so the steady state allocates nothing per packet.

use crate::core::ids::{PktId, PortId};
use rttlab_cc::{IntHop, Time};

/// The most INT records a packet carries in one direction (`switch.int_max_hops` at most).
pub const MAX_INT_HOPS: usize = 8;

/// A packet's in-band telemetry (`switch.int`): the records switches pushed at dequeue
/// (`rttlab_cc::int`), with the egress port each came from. A data packet collects its
/// forward path's; the receiver echoes them in the ACK (`fwd` of them), which, when the sender
/// asks for the round trip's queues (`cc.signal`), collects its own path's after them. The port
/// is the simulator's, not on the wire: the oracle signal reads that port's queue.
#[derive(Copy, Clone, Debug, Default)]
pub struct IntStack {
    pub n: u8,
    pub fwd: u8,
    pub hops: [IntHop; 2 * MAX_INT_HOPS],
    pub ports: [u32; 2 * MAX_INT_HOPS],
}

impl IntStack {
    /// The records of the data packet's path.
    pub fn forward(&self) -> &[IntHop] {
        &self.hops[..self.fwd as usize]
    }

    /// Every record: the data packet's path's, then the ACK's.
    pub fn all(&self) -> &[IntHop] {
        &self.hops[..self.n as usize]
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PacketKind {
    Data,
    /// Message transport: the receiving NIC's acknowledgement of a whole segment (TIMELY
    /// §3.1), cumulative by PSN. Window transport: a cumulative ACK with one SACK block.
    Ack,
    /// Message transport: the receiver's negative acknowledgement of a PSN sequence error
    /// (go-back-N from `seq`, IBA vol. 1 §9.7.5.1).
    Nak,
    /// IEEE 802.1Qbb PFC frame stopping `class` on the link it arrives on.
    Pause,
    /// PFC frame restarting `class` (a pause with zero quanta).
    Resume,
    /// A pinger's probe (`workload`), and its echo.
    Ping,
    Pong,
}

/// One cache line, aligned to one: the slab's allocation is not (a large `Vec` starts 16 bytes
/// into a page), so unaligned packets straddled two lines and the prefetch of an arriving
/// packet brought only the first.
#[derive(Copy, Clone, Debug)]
#[repr(align(64))]
pub struct Packet {
    pub kind: PacketKind,
    /// Priority class; 0 is served first.
    pub class: u8,
    /// Data: Congestion Experienced. Ack: echo of a CE mark on the acknowledged segment.
    pub ecn: bool,
    /// Data: where the packet stands in its segment (`FLAG_FIRST`, `FLAG_LAST`), and whether
    /// it is a retransmission (`FLAG_RETRANSMIT`); at a switch, whether it is held in PFC
    /// headroom (`FLAG_IN_HEADROOM`); data and ACKs of the window transport (`FLAG_WINDOW`).
    pub flags: u8,
    /// Switches the packet has crossed (the TTL it has lost).
    pub hops: u8,
    /// Window ACK: the forward hop count of the acknowledged packet (Swift §3.5, App. B).
    pub echo_hops: u8,
    /// The flow's id (`flow::Slots`); for pings and their echoes, the pinging host's index
    /// among its generator's sources.
    pub flow: u32,
    /// The connection's serial number at its sender: a packet of a connection whose slot has
    /// since been reused is stale (`flow::Flow::serial`).
    pub serial: u32,
    pub dst_host: u32,
    /// ECMP hash of the 5-tuple and the path label in the packet's direction (`routing`).
    pub hash: u32,
    /// `routing.spray = "reps"`: data, the entropy value the sender drew for it (its hash is
    /// the connection's mixed with it); ACK and NAK, the acknowledged packet's, echoed.
    pub entropy: u16,
    /// Bytes on the wire, headers included.
    pub wire_bytes: u16,
    /// Application bytes carried (0 for ACKs and PFC frames).
    pub payload_bytes: u16,
    /// Ingress port at the switch currently holding the packet (PFC accounting).
    pub in_port: PortId,
    /// The egress the switch at the far end of the link it is crossing sends it on, routed as
    /// it leaves for that switch (`Fabric::try_tx`; `u32::MAX` when it goes to a host), so that
    /// the main loop can fetch that port before it arrives.
    pub(crate) egress: PortId,
    /// The packet behind it in the queue it waits in (`PacketQueue`).
    pub(crate) next: PktId,
    /// Data: the packet's sequence number (packets, from 0; the message transport's PSN). Ack
    /// and Nak: the next packet expected (cumulative). Pings and their echoes: the generator's
    /// index.
    pub seq: u32,
    /// Window ACK: the SACK block `[sack[0], sack[1])` holding the packet that triggered it,
    /// empty when that packet was in order (RFC 2018: the first block reports the most recent
    /// arrival). Selective repeat's NAK: the placed packet's PSN and the bitmap of the placed
    /// PSNs before it (`transport::message::Arrival::Placed`); on a trim, the trimmed PSN.
    pub sack: [u32; 2],
    /// Window transport: when the packet was handed to the NIC, echoed by the ACK (RFC 7323's
    /// TSecr); pings: when the probe was sent. (The message transport's sender keeps its
    /// segments' send times itself, `transport::message::Unacked`.)
    pub t_send: Time,
    /// Window ACK: the receiver's queuing of the acknowledged packet, NIC Rx queue plus
    /// processing (`t4 − t2`, Swift §3.1), in nanoseconds (4 bytes, Swift App. B).
    pub remote_queuing_ns: u32,
}

/// `Packet::flags`: the first packet of its segment (message data, for captures).
pub const FLAG_FIRST: u8 = 1;
/// The last packet of its segment, which the receiver acknowledges.
pub const FLAG_LAST: u8 = 2;
/// Data sent again: a copy the receiver already has is a spurious retransmission, and a
/// late arrival is the sender's repair, not the network's reordering.
pub const FLAG_RETRANSMIT: u8 = 4;
/// The switch holds the packet in its ingress's PFC headroom, not the shared buffer.
pub const FLAG_IN_HEADROOM: u8 = 8;
/// A window-transport packet, which the host's stack handles (a job may run its own
/// transport beside the run's, so the kind is the packet's, not the run's).
pub const FLAG_WINDOW: u8 = 16;
/// A data packet a switch trimmed to its headers (`switch.trimming`); on a NAK, that the
/// packet it names was trimmed.
pub const FLAG_TRIMMED: u8 = 32;
/// Trimmed at the last switch before its receiver (Ultra Ethernet's NACK carries it: the
/// receiver's own downlink was full, not the path).
pub const FLAG_TRIMMED_LAST_HOP: u8 = 64;
/// Ultra Ethernet's receiver credits (`transport::credit`): on an ACK, a pull (the credit in
/// `sack`, [`Packet::credit`]); on a data packet without payload, a request to send.
pub const FLAG_CREDIT: u8 = 128;

impl PacketKind {
    /// A connection's packet (data, ACK or NAK), as opposed to a PFC frame or a ping.
    pub fn of_flow(self) -> bool {
        matches!(self, PacketKind::Data | PacketKind::Ack | PacketKind::Nak)
    }
}

impl Packet {
    /// Receiver credits: the cumulative quanta a data packet's pull target or a pull names,
    /// carried in `sack` (which neither uses otherwise).
    pub fn credit(&self) -> u64 {
        (self.sack[1] as u64) << 32 | self.sack[0] as u64
    }

    /// `credit`'s words for `sack`.
    pub fn credit_words(quanta: u64) -> [u32; 2] {
        [quanta as u32, (quanta >> 32) as u32]
    }

    /// The last packet of its segment.
    pub fn last_of_segment(&self) -> bool {
        self.flags & FLAG_LAST != 0
    }

    /// A data packet trimmed to its headers by a switch.
    pub fn trimmed(&self) -> bool {
        self.flags & FLAG_TRIMMED != 0
    }

    /// The first packet of its segment.
    pub fn first_of_segment(&self) -> bool {
        self.flags & FLAG_FIRST != 0
    }

    pub fn retransmit(&self) -> bool {
        self.flags & FLAG_RETRANSMIT != 0
    }

    pub fn in_headroom(&self) -> bool {
        self.flags & FLAG_IN_HEADROOM != 0
    }

    /// Data or an ACK of the window transport (else of the message transport, or no flow's).
    pub fn window(&self) -> bool {
        self.flags & FLAG_WINDOW != 0
    }

    /// A packet of `kind` with every other field empty; data and ACKs fill theirs in with
    /// struct update syntax.
    pub fn new(kind: PacketKind, class: u8, wire_bytes: u16) -> Packet {
        Packet {
            kind,
            class,
            ecn: false,
            flags: 0,
            entropy: 0,
            hops: 0,
            echo_hops: 0,
            flow: u32::MAX,
            serial: 0,
            dst_host: u32::MAX,
            hash: 0,
            wire_bytes,
            payload_bytes: 0,
            in_port: PortId(u32::MAX),
            egress: PortId(u32::MAX),
            next: PktId(u32::MAX),
            seq: 0,
            sack: [0, 0],
            t_send: Time::ZERO,
            remote_queuing_ns: 0,
        }
    }
}

/// A FIFO of packets linked through the packets themselves: a push writes the new packet and
/// the one before it (both recently touched), a pop reads the packet it returns. A queue kept
/// in an array of its own would cost a cache miss on that array at every push and pop once a
/// fabric's queues no longer fit in the cache.
#[derive(Copy, Clone, Debug)]
pub struct PacketQueue {
    head: PktId,
    tail: PktId,
    len: u32,
}

impl Default for PacketQueue {
    fn default() -> Self {
        PacketQueue { head: PktId(u32::MAX), tail: PktId(u32::MAX), len: 0 }
    }
}

impl PacketQueue {
    #[inline]
    pub fn push_back(&mut self, pkts: &mut Slab, i: PktId) {
        pkts.get_mut(i).next = PktId(u32::MAX);
        if self.len == 0 {
            self.head = i;
        } else {
            pkts.get_mut(self.tail).next = i;
        }
        self.tail = i;
        self.len += 1;
    }

    /// Takes the head packet; the one behind it, now the head, is fetched into the cache (it
    /// leaves one serialization later).
    #[inline]
    pub fn pop_front(&mut self, pkts: &Slab) -> Option<PktId> {
        if self.len == 0 {
            return None;
        }
        let i = self.head;
        self.head = pkts.get(i).next;
        self.len -= 1;
        if self.len > 0 {
            crate::core::engine::prefetch(pkts.get(self.head));
        }
        Some(i)
    }

    /// Takes the tail packet, walking from the head: only a trimming switch does it, to a queue
    /// of at most a few dozen packets.
    pub fn pop_back(&mut self, pkts: &mut Slab) -> Option<PktId> {
        if self.len <= 1 {
            let i = self.head;
            return (std::mem::take(&mut self.len) == 1).then_some(i);
        }
        let mut before = self.head;
        while pkts.get(before).next != self.tail {
            before = pkts.get(before).next;
        }
        let i = self.tail;
        pkts.get_mut(before).next = PktId(u32::MAX);
        self.tail = before;
        self.len -= 1;
        Some(i)
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Packet storage addressed by index with a free list. With in-band telemetry on, each slot
/// has an INT stack beside it, emptied when the slot is taken; off, there are none.
#[derive(Default)]
pub struct Slab {
    slots: Vec<Packet>,
    free: Vec<PktId>,
    int: Option<Vec<IntStack>>,
}

impl Slab {
    /// A slab whose packets carry INT stacks when `int`.
    pub fn new(int: bool) -> Slab {
        Slab { int: int.then(Vec::new), ..Slab::default() }
    }

    pub fn alloc(&mut self, p: Packet) -> PktId {
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i.idx()] = p;
                i
            }
            None => {
                self.slots.push(p);
                PktId((self.slots.len() - 1) as u32)
            }
        };
        if let Some(int) = &mut self.int {
            if int.len() < self.slots.len() {
                int.resize(self.slots.len(), IntStack::default());
            }
            int[i.idx()].n = 0;
            int[i.idx()].fwd = 0;
        }
        i
    }

    /// Packet `i`'s INT stack; `None` with telemetry off.
    #[inline]
    pub fn int(&self, i: PktId) -> Option<&IntStack> {
        self.int.as_ref().map(|v| &v[i.idx()])
    }

    #[inline]
    pub fn int_mut(&mut self, i: PktId) -> Option<&mut IntStack> {
        self.int.as_mut().map(|v| &mut v[i.idx()])
    }
    pub fn free(&mut self, i: PktId) {
        self.free.push(i);
    }
    #[inline]
    pub fn get(&self, i: PktId) -> &Packet {
        &self.slots[i.idx()]
    }
    #[inline]
    pub fn get_mut(&mut self, i: PktId) -> &mut Packet {
        &mut self.slots[i.idx()]
    }
    /// Packets currently alive (allocated and not freed).
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
    /// Every live packet, in slot order.
    pub fn iter_live(&self) -> impl Iterator<Item = &Packet> {
        let mut dead = vec![false; self.slots.len()];
        for &f in &self.free {
            dead[f.idx()] = true;
        }
        self.slots.iter().zip(dead).filter(|(_, d)| !d).map(|(p, _)| p)
    }
    /// Slots ever allocated: the high-water mark of packets alive at once.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
}

/// Why a packet was lost, beside a full buffer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Lost {
    /// Its link was down (on the wire, queued at the egress, or forwarded into it).
    Down,
    /// The link corrupted it (a fault of `kind = "drop"`).
    Silent,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_is_one_aligned_cache_line() {
        assert_eq!(std::mem::size_of::<Packet>(), 64);
        assert_eq!(std::mem::align_of::<Packet>(), 64);
        let slab = {
            let mut s = Slab::new(false);
            for _ in 0..3 {
                s.alloc(Packet::new(PacketKind::Data, 0, 1000));
            }
            s
        };
        assert_eq!(slab.get(PktId(1)) as *const Packet as usize % 64, 0);
    }

    #[test]
    fn a_queue_gives_its_last_packet_back_and_keeps_the_rest_in_order() {
        let mut slab = Slab::new(false);
        let mut q = PacketQueue::default();
        assert_eq!(q.pop_back(&mut slab), None);
        let ids: Vec<PktId> = (0..3).map(|_| slab.alloc(Packet::new(PacketKind::Data, 0, 1000))).collect();
        for &i in &ids {
            q.push_back(&mut slab, i);
        }
        assert_eq!(q.pop_back(&mut slab), Some(ids[2]));
        let extra = slab.alloc(Packet::new(PacketKind::Data, 0, 1000));
        q.push_back(&mut slab, extra);
        assert_eq!((q.pop_front(&slab), q.pop_back(&mut slab), q.pop_back(&mut slab)), (Some(ids[0]), Some(extra), Some(ids[1])));
        assert!(q.is_empty());
    }
}
