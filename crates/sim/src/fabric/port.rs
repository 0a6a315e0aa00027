//! One end of a full-duplex link: its egress (per-class queues, a control slot for PFC frames,
//! serialization at line rate, then propagation to the peer) and its ingress accounting (bytes
//! a switch holds that arrived through it, per class, for PFC).

use crate::core::engine::EventQueue;
use crate::core::ids::{PortId, SwitchId};
use crate::core::packet::PacketQueue;
use crate::fabric::switch::{QueueParams, RedState};
use crate::fabric::topology::Graph;
use crate::scenario::MarkAt;
use rttlab_cc::{Rate, Time};

/// Priority classes a port can carry (IEEE 802.1Qbb has 8).
pub const MAX_CLASSES: usize = 8;

/// `Port::queue_checks` bits.
pub const QUEUE_ADMIT: u8 = 1;
pub const QUEUE_MARK_ENQUEUE: u8 = 2;
pub const QUEUE_MARK_DEQUEUE: u8 = 4;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    Host(u32),
    Switch(SwitchId),
}

/// A port's fields are laid out by how often the packet path reads them: what every packet
/// reads is its first cache line (timing, the link, routing, what it holds and whether it is
/// paused, watched or holds PFC frames), then what only PFC, captures and samplers read. Its
/// class queues are apart (`ClassQueues`). At a thousand hosts the ports no longer fit in the
/// cache, so a packet's hop costs about as many misses as the lines it touches, and the main
/// loop fetches the first ahead (`Fabric::prefetch_port`).
#[repr(C, align(64))]
pub struct Port {
    /// When the packet being serialized (the last one started) is done.
    pub busy_until: Time,
    /// The place in the event order reserved for that transmit completion (`TxDone`), and
    /// whether the event is queued. A switch port queues it only when something waits for the
    /// port by then (a packet, a PFC frame); otherwise the completion would find nothing to
    /// send, and no event is needed for it.
    pub(crate) done_seq: u64,
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Time,
    /// Bytes queued in all classes.
    pub queue_bytes: u64,
    /// The port at the other end of the link.
    pub peer: PortId,
    /// The node that owns the port (hosts first, then switches: `Fabric::owner`).
    pub node: u32,
    /// The switch at the far end of the link (`NO_SWITCH`: a host), the peer port's owner kept
    /// at hand beside what `try_tx` reads anyway: it routes every packet for that switch, and
    /// the peer port is not in the cache then.
    far_switch: u32,
    /// A switch port's queue settings: an index into `RunConfig::queue_params`, and what the
    /// packet path needs of them at hand (`set_queue_params`).
    pub params: u16,
    /// `QUEUE_ADMIT` (a limit or a dynamic threshold), `QUEUE_MARK_ENQUEUE`, `QUEUE_MARK_DEQUEUE`.
    pub queue_checks: u8,
    pub(crate) done_queued: bool,
    /// The classes the peer asked this egress to stop (PFC), a bit each.
    paused: u8,
    /// PFC frames wait in `control`.
    pub(crate) control_queued: bool,
    /// `WATCH_SAMPLED`, `WATCH_CAPTURED`: whether `sampler` and `capture` name one.
    watched: u8,
    /// The partition the link leads to when its far node is another partition's
    /// ([`crate::parallel`]).
    pub(crate) crosses_to: Option<u16>,
    /// Index of the port's queue sampler, if it is sampled, and of its packet capture.
    sampler: u32,
    capture: u32,
    /// PFC frames, sent before any class.
    pub control: PacketQueue,
    /// A PAUSE for the class was sent to the peer and not yet lifted.
    pub pausing: [bool; MAX_CLASSES],
    /// PFC thresholds of this port as an ingress (`u64::MAX`: no PFC) and its headroom per class.
    pub pfc_xoff: u64,
    pub pfc_xon: u64,
    pub pfc_headroom: u64,
    paused_since: [Time; MAX_CLASSES],
    /// Bytes of trimmed packets waiting in `control` (`switch.trimming`).
    pub(crate) trimmed_bytes: u64,
}

const NO_SWITCH: u32 = u32::MAX;
const WATCH_SAMPLED: u8 = 1;
const WATCH_CAPTURED: u8 = 2;

/// One priority class of a port: its first cache line holds all a packet through it reads
/// and writes (its queue, the bytes queued, the occupancy statistics and what was sent), then
/// what only hosts, PFC, RED and the rarer counters read.
#[repr(C, align(64))]
#[derive(Default)]
pub struct ClassQueue {
    pub queue: PacketQueue,
    /// Packets sent: the low 32 bits here, the high ones in `tx_packets_high` (`tx_packets`),
    /// to keep the first line to 64 bytes.
    tx_packets_low: u32,
    /// Bytes queued.
    pub bytes: u64,
    /// ∫ occupancy dt in byte·ps and the peak occupancy in bytes over the measured period
    /// (`occupancy_changed`).
    queue_max: u64,
    queue_area: i128,
    tx_bytes: u64,
    /// Application payload sent (data packets, retransmissions included).
    tx_payload_bytes: u64,
    /// Host ports: wire bytes of the segments the NIC holds and has not yet cut into packets
    /// ([`crate::host::nic`]); they count as this port's queue in its statistics.
    pub nic_bytes: u64,
    /// Switch ingress side: bytes held in the switch that arrived through this port, and of
    /// those the bytes held in its PFC headroom (counted only in the classes whose ingresses
    /// can send PFC, `RunConfig::lossless`).
    pub ingress_bytes: u64,
    pub headroom_used: u64,
    tx_packets_high: u32,
    /// RED's spacing state (switch egress with ECN marking).
    pub red: RedState,
    /// The rest of what the `ports` table reports of the class.
    pub counts: ClassCounts,
}

impl ClassQueue {
    /// Bytes waiting to leave: in the port's queue and, at a host (`at_host`), in its NIC.
    #[inline]
    pub fn occupancy(&self, at_host: bool) -> u64 {
        self.bytes + if at_host { self.nic_bytes } else { 0 }
    }

    /// The occupancy changed by `delta` bytes at `now` (it is already counted; `at_host`: the
    /// port is a host's). The integral of the occupancy over [t₀, t] is occupancy(t)·t −
    /// occupancy(t₀)·t₀ − Σ delta·time over the changes between: `queue_area` accumulates
    /// −delta·time from −occupancy(t₀)·t₀ on (`start_measuring`) and `stats` adds
    /// occupancy(t)·t, so a change costs one product.
    #[inline]
    pub(crate) fn occupancy_changed(&mut self, now: Time, delta: i64, at_host: bool) {
        let occupancy = self.occupancy(at_host);
        self.queue_area -= delta as i128 * now.ps() as i128;
        self.queue_max = self.queue_max.max(occupancy);
    }

    /// Counts a packet of `wire` bytes carrying `payload` sent.
    #[inline]
    pub(crate) fn sent(&mut self, wire: u64, payload: u64) {
        let (low, carry) = self.tx_packets_low.overflowing_add(1);
        self.tx_packets_low = low;
        // A branch, not an add of the carry: that would write the second line every packet.
        if carry {
            self.tx_packets_high += 1;
        }
        self.tx_bytes += wire;
        self.tx_payload_bytes += payload;
    }

    /// Starts the measured period of the occupancy statistics at `now` (the warm-up's end):
    /// the integral restarts from zero there (−occupancy × now, completed by `stats`) and the
    /// peak from what is queued now.
    pub(crate) fn start_measuring(&mut self, now: Time, at_host: bool) {
        let occupancy = self.occupancy(at_host);
        self.queue_area = -(occupancy as i128 * now.ps() as i128);
        self.queue_max = occupancy;
    }

    /// The class's statistics as they stand at `now` (`at_host`: the port is a host's), the
    /// occupancy integral completed to `now`; a pause in force is the port's to add.
    pub fn stats(&self, now: Time, at_host: bool) -> ClassStats {
        ClassStats {
            queue_area: self.queue_area + self.occupancy(at_host) as i128 * now.ps() as i128,
            queue_max: self.queue_max,
            tx_packets: (self.tx_packets_high as u64) << 32 | self.tx_packets_low as u64,
            tx_bytes: self.tx_bytes,
            tx_payload_bytes: self.tx_payload_bytes,
            counts: self.counts,
        }
    }
}

/// What a class counts apart from its first line.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct ClassCounts {
    /// Packets routed to this egress that the switch dropped (its shared buffer was full).
    pub drops: u64,
    /// Packets of this egress that the switch marked CE.
    pub ecn_marks: u64,
    /// Data packets for this egress that the switch trimmed to their headers (the queue was
    /// full, `switch.trimming`); a trimmed packet it could not queue either counts as a drop.
    pub trims: u64,
    /// PFC frames this port sent its peer for the class (its ingress filled, then drained).
    pub pauses_sent: u64,
    pub resumes_sent: u64,
    /// PFC frames (PAUSE and RESUME) received for the class, and the time they held this
    /// egress paused.
    pub pfc_received: u64,
    pub paused: Time,
    /// Packets this egress lost to faults (`[[faults]]`): to its link being down (on the wire,
    /// queued when it went down, or forwarded into it), or silently on the wire.
    pub lost_down: u64,
    pub lost_silent: u64,
}

impl ClassCounts {
    /// What was counted between `earlier` and these counts.
    fn since(&self, earlier: &ClassCounts) -> ClassCounts {
        ClassCounts {
            drops: self.drops - earlier.drops,
            ecn_marks: self.ecn_marks - earlier.ecn_marks,
            trims: self.trims - earlier.trims,
            pauses_sent: self.pauses_sent - earlier.pauses_sent,
            resumes_sent: self.resumes_sent - earlier.resumes_sent,
            pfc_received: self.pfc_received - earlier.pfc_received,
            paused: self.paused - earlier.paused,
            lost_down: self.lost_down - earlier.lost_down,
            lost_silent: self.lost_silent - earlier.lost_silent,
        }
    }

    /// A packet of the class was lost to a fault.
    pub(crate) fn count_lost(&mut self, lost: crate::core::packet::Lost) {
        match lost {
            crate::core::packet::Lost::Down => self.lost_down += 1,
            crate::core::packet::Lost::Silent => self.lost_silent += 1,
        }
    }
}

/// Every port's class queues, port after port (the classes in use, the same number at every
/// port), apart from the ports: a port carries one or two classes where it could carry eight,
/// and a class's place follows from its port's id, so that the main loop can fetch it ahead
/// without reading the port first.
pub struct ClassQueues {
    /// Port `p`'s classes are `all[p << shift..][..per_port]`: a power of two apart, so that
    /// finding one is a shift, not a product.
    shift: u32,
    per_port: usize,
    all: Vec<ClassQueue>,
}

impl ClassQueues {
    /// Empty queues of `classes` classes for `ports` ports.
    pub fn new(ports: usize, classes: usize) -> ClassQueues {
        let shift = classes.next_power_of_two().trailing_zeros();
        ClassQueues { shift, per_port: classes, all: (0..ports << shift).map(|_| ClassQueue::default()).collect() }
    }

    /// Port `p`'s classes.
    #[inline]
    pub fn of(&self, p: PortId) -> &[ClassQueue] {
        &self.all[p.idx() << self.shift..][..self.per_port]
    }

    #[inline]
    pub fn of_mut(&mut self, p: PortId) -> &mut [ClassQueue] {
        &mut self.all[p.idx() << self.shift..][..self.per_port]
    }

    /// Class `c` of port `p`.
    #[inline]
    pub fn at(&self, p: PortId, c: usize) -> &ClassQueue {
        debug_assert!(c < self.per_port, "class {c} of {}", self.per_port);
        &self.all[p.idx() << self.shift | c]
    }

    #[inline]
    pub fn at_mut(&mut self, p: PortId, c: usize) -> &mut ClassQueue {
        debug_assert!(c < self.per_port, "class {c} of {}", self.per_port);
        &mut self.all[p.idx() << self.shift | c]
    }
}

/// A port with its class queues (`Fabric::port`): what its statistics are read from.
#[derive(Clone, Copy)]
pub struct PortView<'a> {
    pub port: &'a Port,
    pub class: &'a [ClassQueue],
    /// The port is a host's (its NIC's bytes count as queued).
    pub at_host: bool,
}

impl std::ops::Deref for PortView<'_> {
    type Target = Port;

    fn deref(&self) -> &Port {
        self.port
    }
}

impl Port {
    /// The egress of `node` on a link to the port `peer` of `far_switch` (`None`: of a host).
    pub fn new(node: u32, (peer, far_switch): (PortId, Option<SwitchId>), rate: Rate, delay: Time) -> Port {
        Port {
            busy_until: Time::ZERO,
            done_seq: 0,
            rate,
            delay,
            queue_bytes: 0,
            peer,
            node,
            far_switch: far_switch.map_or(NO_SWITCH, |s| s.0),
            params: 0,
            queue_checks: 0,
            done_queued: false,
            paused: 0,
            control_queued: false,
            watched: 0,
            crosses_to: None,
            sampler: 0,
            capture: 0,
            control: PacketQueue::default(),
            pausing: [false; MAX_CLASSES],
            pfc_xoff: u64::MAX,
            pfc_xon: 0,
            pfc_headroom: 0,
            paused_since: [Time::ZERO; MAX_CLASSES],
            trimmed_bytes: 0,
        }
    }

    /// The switch at the far end of the link (`None`: a host).
    #[inline]
    pub fn far_switch(&self) -> Option<SwitchId> {
        (self.far_switch != NO_SWITCH).then_some(SwitchId(self.far_switch))
    }

    /// Whether the peer paused class `c` of this egress (PFC).
    #[inline]
    pub fn paused(&self, c: usize) -> bool {
        self.paused >> c & 1 != 0
    }

    /// The port's queue sampler, if it is sampled ([`crate::report::measure`]).
    #[inline]
    pub fn sampler(&self) -> Option<u32> {
        (self.watched & WATCH_SAMPLED != 0).then_some(self.sampler)
    }

    /// The port's packet capture, if it is captured.
    #[inline]
    pub fn capture(&self) -> Option<u32> {
        (self.watched & WATCH_CAPTURED != 0).then_some(self.capture)
    }

    pub(crate) fn set_sampler(&mut self, i: u32) {
        self.sampler = i;
        self.watched |= WATCH_SAMPLED;
    }

    pub(crate) fn set_capture(&mut self, i: u32) {
        self.capture = i;
        self.watched |= WATCH_CAPTURED;
    }

    /// Takes the queue settings `q` its `params` index names, keeping at hand what every
    /// packet checks.
    pub fn set_queue_params(&mut self, q: &QueueParams) {
        self.queue_checks = ((q.limit.is_some() || q.alpha.is_some()) as u8 * QUEUE_ADMIT)
            | (q.ecn.is_some_and(|r| r.mark_at == MarkAt::Enqueue) as u8 * QUEUE_MARK_ENQUEUE)
            | (q.ecn.is_some_and(|r| r.mark_at == MarkAt::Dequeue) as u8 * QUEUE_MARK_DEQUEUE);
        (self.pfc_xoff, self.pfc_xon) = q.pfc.unwrap_or((u64::MAX, 0));
        self.pfc_headroom = q.pfc_headroom;
    }

    /// Applies a PFC frame for `class` (whose queue is `q`) received on this port to its
    /// egress. Returns true if the class can send again. The packet being serialized is never
    /// cut: a pause takes effect at the next packet boundary (802.1Qbb).
    pub fn apply_pfc(&mut self, q: &mut ClassQueue, class: usize, pause: bool, now: Time) -> bool {
        q.counts.pfc_received += 1;
        if pause && !self.paused(class) {
            self.paused |= 1 << class;
            self.paused_since[class] = now;
        } else if !pause && self.paused(class) {
            self.resume(q, class, now);
            return true;
        }
        false
    }

    /// Class `class` (whose queue is `q`), paused, may send again from `now`.
    fn resume(&mut self, q: &mut ClassQueue, class: usize, now: Time) {
        self.paused &= !(1 << class);
        q.counts.paused += now - self.paused_since[class];
    }

    /// The link's other end can no longer lift this egress's pauses (a direction of the link
    /// is down): they lapse now, as 802.1Qbb's pause timers do.
    pub(crate) fn lift_pauses(&mut self, classes: &mut [ClassQueue], now: Time) {
        for (c, q) in classes.iter_mut().enumerate() {
            if self.paused(c) {
                self.resume(q, c, now);
            }
        }
    }

    /// A packet is being serialized at the instant of the event `(now, seq)`: its completion has
    /// not happened yet in the event order.
    #[inline]
    pub(crate) fn busy(&self, events: &EventQueue, now: Time, seq: u64) -> bool {
        self.done_queued || events.before((now, seq), (self.busy_until, self.done_seq))
    }

    /// The transmit completion (`TxDone`) happened.
    pub(crate) fn tx_done(&mut self) {
        self.done_queued = false;
    }
}

impl PortView<'_> {
    /// Every class's occupancy (0 past the classes in use).
    pub fn occupancies(&self) -> [u64; MAX_CLASSES] {
        std::array::from_fn(|c| self.class.get(c).map_or(0, |q| q.occupancy(self.at_host)))
    }

    /// The class statistics as they stand at `now`: a pause still in force included, and the
    /// occupancy integral completed to `now`.
    pub fn stats_at(&self, now: Time) -> Vec<ClassStats> {
        let stats = |(c, q): (usize, &ClassQueue)| {
            let mut s = q.stats(now, self.at_host);
            s.counts.paused = self.paused_at(c, now);
            s
        };
        self.class.iter().enumerate().map(stats).collect()
    }

    /// Time class `c` spent paused by `now`, a pause still in force included.
    fn paused_at(&self, c: usize, now: Time) -> Time {
        let open = if self.paused(c) { now - self.paused_since[c] } else { Time::ZERO };
        self.class[c].counts.paused + open
    }

    /// Bytes sent, all classes.
    pub fn tx_bytes(&self) -> u64 {
        self.class.iter().map(|q| q.tx_bytes).sum()
    }

    /// Payload sent, all classes.
    pub fn tx_payload_bytes(&self) -> u64 {
        self.class.iter().map(|q| q.tx_payload_bytes).sum()
    }

    /// PAUSE frames sent, all classes.
    pub fn pauses_sent(&self) -> u64 {
        self.class.iter().map(|q| q.counts.pauses_sent).sum()
    }

    /// Time the egress spent paused by `now`, summed over classes.
    pub fn paused_time_at(&self, now: Time) -> Time {
        (0..self.class.len()).map(|c| self.paused_at(c, now)).fold(Time::ZERO, |a, b| a + b)
    }
}

/// One class of one port, as the `ports` table reports it. PFC frames count as pauses and
/// resumes, not as sent packets.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct ClassStats {
    /// ∫ occupancy dt in byte·ps, and the peak occupancy in bytes, over the measured period
    /// (as `PortView::stats_at` gives them).
    pub queue_area: i128,
    pub queue_max: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Application payload sent (data packets, retransmissions included).
    pub tx_payload_bytes: u64,
    pub counts: ClassCounts,
}

impl ClassStats {
    /// What happened between `earlier` and these statistics. The occupancy figures are these
    /// statistics': they restart when the measured period does (`ClassQueue::start_measuring`).
    pub fn since(&self, earlier: &ClassStats) -> ClassStats {
        ClassStats {
            tx_packets: self.tx_packets - earlier.tx_packets,
            tx_bytes: self.tx_bytes - earlier.tx_bytes,
            tx_payload_bytes: self.tx_payload_bytes - earlier.tx_payload_bytes,
            counts: self.counts.since(&earlier.counts),
            queue_area: self.queue_area,
            queue_max: self.queue_max,
        }
    }
}

/// A port's name, "NODE-PEER": the egress of NODE on its link to PEER (e.g. "s0-h0").
pub fn port_name(graph: &Graph, ports: &[Port], p: PortId) -> String {
    let port = &ports[p.idx()];
    format!("{}-{}", graph.node_name(port.node), graph.node_name(ports[port.peer.idx()].node))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What every packet reads of a port is its first cache line (`Port`'s layout).
    #[test]
    fn a_packet_reads_one_line_of_its_port() {
        assert_eq!(std::mem::offset_of!(Port, sampler), 64);
        assert_eq!(std::mem::align_of::<Port>(), 64);
    }

    /// ... and of its class queue (`ClassQueue`'s layout).
    #[test]
    fn a_packet_reads_one_line_of_its_class() {
        assert_eq!(std::mem::offset_of!(ClassQueue, nic_bytes), 64);
        assert_eq!(std::mem::align_of::<ClassQueue>(), 64);
    }

    /// Packets sent are counted past 2^32.
    #[test]
    fn sent_packets_carry_into_the_high_bits() {
        let mut q = ClassQueue { tx_packets_low: u32::MAX, ..ClassQueue::default() };
        q.sent(100, 60);
        q.sent(100, 60);
        let s = q.stats(Time::ZERO, false);
        assert_eq!((s.tx_packets, s.tx_bytes, s.tx_payload_bytes), ((1 << 32) + 1, 200, 120));
    }
}
