//! The discrete-event core: an event queue ordered by integer-picosecond time, with ties broken
//! by insertion order so that a scenario and seed always replay identically; and seeded random
//! streams, one per component, so that adding a component does not shift another's draws.

use crate::core::ids::{FlowId, HostId, PktId, PortId};
use crate::core::packet::Lost;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use rttlab_cc::Time;
use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What an event does, with its operands. Dispatched with `match` in the main loop; packed
/// into a queue entry's kind tag and two `u32`s (private to this module).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// The port finished serializing a packet; `pkt` when its host must hear of it (TSQ).
    TxDone { port: PortId, pkt: Option<PktId> },
    /// The packet has fully arrived through the port (store and forward).
    Arrive { port: PortId, pkt: PktId },
    /// The host's pacing scheduler has a segment whose send time has come.
    HostWake(HostId),
    /// Periodic time-series sampling.
    Sample,
    /// The port may have something new to send (a PFC frame was queued).
    Kick(PortId),
    /// The warm-up ends: counters are snapshotted so that summaries count what follows.
    WarmupEnd,
    /// The flow's timer may have expired, if the flow is still connection `serial` (its low
    /// 29 bits).
    Timer { flow: FlowId, timer: Timer, serial: u32 },
    /// A workload generator acts for its host number `host` (an RPC, a flow, an incast, a ping).
    Arrival { generator: u32, host: u32 },
    /// The host's stack finished processing the packet at the head of its NIC Rx queue.
    HostRx(HostId),
    /// The earliest of the host's message transport local ACK timeouts may have expired
    /// (`Timers`, one per host).
    MessageRto(HostId),
    /// A data packet of the flow's connection `serial` (its low 30 bits) was dropped, for want
    /// of buffer or to a fault (`lost`): its sender counts it.
    Dropped { flow: FlowId, serial: u32, lost: Option<Lost> },
    /// A probe or its echo of the generator's source was lost: the pinger no longer waits for
    /// it.
    PingLost { generator: u32, source: u32 },
    /// A fault starts or ends on the port or its link's other direction (`Fabric::fault_edge`).
    Fault(PortId),
    /// The packet the port sent would have arrived at the far end now, but a fault lost it on
    /// the way: its link went down, or (`silent`) it was corrupted (`Fabric::lose`).
    Lost { port: PortId, pkt: PktId, silent: bool },
    /// The sender of the flow's connection `serial` has had everything acknowledged: its
    /// receiver answers none of its packets from now (`Hosts::receiver_closed`).
    Closed { flow: FlowId, serial: u32 },
    /// The host's pull pacer grants its next credit (Ultra Ethernet's receiver credits).
    Pull(HostId),
    /// The host's oversubscription controller sets its pull rate (`transport::credit`).
    PullRate(HostId),
}

/// A connection's timers, as the `b` of its `Timer` events.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Timer {
    /// Retransmission timeout (RFC 6298).
    Rto = 0,
    /// Delayed ACK (RFC 5681 §4.2).
    DelayedAck = 1,
    /// The connection's start time.
    Start = 2,
    /// The next paced send.
    Pace = 3,
    /// The application has written the next packet (`onoff`).
    App = 4,
    /// RACK's reordering window has passed for a packet sent before one delivered (RFC 8985).
    Reorder = 5,
    /// Nothing was acknowledged for a probe timeout: a tail-loss probe goes (RFC 8985 §7).
    Probe = 6,
}

impl Timer {
    const ALL: [Timer; 7] = [Timer::Rto, Timer::DelayedAck, Timer::Start, Timer::Pace, Timer::App, Timer::Reorder, Timer::Probe];

    /// The timer an event's `b` names.
    pub fn from_u32(b: u32) -> Timer {
        Timer::ALL[b as usize]
    }
}

/// `EventKind::Dropped`'s serial and cause share a `u32`: the serial's low 30 bits.
pub const DROPPED_SERIAL: u32 = (1 << 30) - 1;

/// `Option<PktId>` in a queue entry's `u32`.
const NO_PKT: u32 = u32::MAX;

/// The bits of a queue entry's word that hold the event's kind (`Entry::seq_kind`); the
/// scheduling order takes the rest. Five bits: 18 kinds today, room for the transports to come.
pub const KIND_BITS: u32 = 5;

/// Fails the build when `kinds` tags do not fit in [`KIND_BITS`] (a tag past them would
/// spill into the scheduling order and reorder events silently). Evaluated on the tags' count
/// below; adding a kind is adding a tag before `tag::COUNT`, and moving it up.
///
/// ```
/// const _: () = rttlab_sim::core::engine::assert_kinds_fit(32);
/// ```
/// ```compile_fail
/// const _: () = rttlab_sim::core::engine::assert_kinds_fit(33);
/// ```
pub const fn assert_kinds_fit(kinds: u64) {
    assert!(kinds <= 1 << KIND_BITS, "more event kinds than the queue entry's kind tag holds: widen KIND_BITS");
}

const _: () = assert_kinds_fit(tag::COUNT);

/// A queue entry's kind tags, one per packed form of [`EventKind`], numbered from 0 (plain
/// integers, so that `unpack`'s match is a jump table).
mod tag {
    pub const TX_DONE: u64 = 0;
    pub const ARRIVE: u64 = 1;
    pub const HOST_WAKE: u64 = 2;
    pub const SAMPLE: u64 = 3;
    pub const KICK: u64 = 4;
    pub const WARMUP_END: u64 = 5;
    pub const TIMER: u64 = 6;
    pub const ARRIVAL: u64 = 7;
    pub const HOST_RX: u64 = 8;
    pub const MESSAGE_RTO: u64 = 9;
    pub const DROPPED: u64 = 10;
    pub const PING_LOST: u64 = 11;
    pub const FAULT: u64 = 12;
    pub const LOST: u64 = 13;
    pub const LOST_SILENT: u64 = 14;
    pub const CLOSED: u64 = 15;
    pub const PULL: u64 = 16;
    pub const PULL_RATE: u64 = 17;
    /// Not a tag: one past the last.
    pub const COUNT: u64 = 18;
}

const KIND_MASK: u64 = (1 << KIND_BITS) - 1;

impl EventKind {
    /// (tag, a, b) of a queue entry.
    #[inline(always)]
    fn pack(self) -> (u64, u32, u32) {
        let (tag, a, b) = match self {
            EventKind::TxDone { port, pkt } => (tag::TX_DONE, port.0, pkt.map_or(NO_PKT, |p| p.0)),
            EventKind::Arrive { port, pkt } => (tag::ARRIVE, port.0, pkt.0),
            EventKind::HostWake(h) => (tag::HOST_WAKE, h.0, 0),
            EventKind::Sample => (tag::SAMPLE, 0, 0),
            EventKind::Kick(port) => (tag::KICK, port.0, 0),
            EventKind::WarmupEnd => (tag::WARMUP_END, 0, 0),
            EventKind::Timer { flow, timer, serial } => (tag::TIMER, flow.0, timer as u32 | serial << 3),
            EventKind::Arrival { generator, host } => (tag::ARRIVAL, generator, host),
            EventKind::HostRx(h) => (tag::HOST_RX, h.0, 0),
            EventKind::MessageRto(h) => (tag::MESSAGE_RTO, h.0, 0),
            EventKind::Dropped { flow, serial, lost } => {
                let cause = match lost {
                    None => 0,
                    Some(Lost::Down) => 1,
                    Some(Lost::Silent) => 2,
                };
                (tag::DROPPED, flow.0, serial & DROPPED_SERIAL | cause << 30)
            }
            EventKind::PingLost { generator, source } => (tag::PING_LOST, generator, source),
            EventKind::Fault(port) => (tag::FAULT, port.0, 0),
            EventKind::Lost { port, pkt, silent: false } => (tag::LOST, port.0, pkt.0),
            EventKind::Lost { port, pkt, silent: true } => (tag::LOST_SILENT, port.0, pkt.0),
            EventKind::Closed { flow, serial } => (tag::CLOSED, flow.0, serial),
            EventKind::Pull(h) => (tag::PULL, h.0, 0),
            EventKind::PullRate(h) => (tag::PULL_RATE, h.0, 0),
        };
        (tag, a, b)
    }

    #[inline]
    fn unpack(tag: u64, a: u32, b: u32) -> EventKind {
        match tag {
            tag::TX_DONE => EventKind::TxDone { port: PortId(a), pkt: (b != NO_PKT).then_some(PktId(b)) },
            tag::ARRIVE => EventKind::Arrive { port: PortId(a), pkt: PktId(b) },
            tag::HOST_WAKE => EventKind::HostWake(HostId(a)),
            tag::SAMPLE => EventKind::Sample,
            tag::KICK => EventKind::Kick(PortId(a)),
            tag::WARMUP_END => EventKind::WarmupEnd,
            tag::TIMER => EventKind::Timer { flow: FlowId(a), timer: Timer::from_u32(b & 7), serial: b >> 3 },
            tag::ARRIVAL => EventKind::Arrival { generator: a, host: b },
            tag::HOST_RX => EventKind::HostRx(HostId(a)),
            tag::MESSAGE_RTO => EventKind::MessageRto(HostId(a)),
            tag::DROPPED => EventKind::Dropped {
                flow: FlowId(a),
                serial: b & DROPPED_SERIAL,
                lost: match b >> 30 {
                    0 => None,
                    1 => Some(Lost::Down),
                    _ => Some(Lost::Silent),
                },
            },
            tag::PING_LOST => EventKind::PingLost { generator: a, source: b },
            tag::FAULT => EventKind::Fault(PortId(a)),
            tag::LOST => EventKind::Lost { port: PortId(a), pkt: PktId(b), silent: false },
            tag::LOST_SILENT => EventKind::Lost { port: PortId(a), pkt: PktId(b), silent: true },
            tag::CLOSED => EventKind::Closed { flow: FlowId(a), serial: b },
            tag::PULL => EventKind::Pull(HostId(a)),
            tag::PULL_RATE => EventKind::PullRate(HostId(a)),
            _ => unreachable!("not a kind's tag"),
        }
    }
}

/// A timer whose deadline moves often (a retransmission timer restarted on every ACK) without
/// an event per move: an event is queued only when the deadline moves *earlier* than the event
/// already queued; when that event fires at a deadline that moved later, the timer re-arms.
#[derive(Copy, Clone, Debug)]
pub struct LazyTimer {
    /// When the timer expires (`Time::MAX`: stopped).
    pub deadline: Time,
    /// Time of the earliest queued event for this timer (`Time::MAX`: none).
    armed_at: Time,
}

impl Default for LazyTimer {
    fn default() -> Self {
        LazyTimer { deadline: Time::MAX, armed_at: Time::MAX }
    }
}

impl LazyTimer {
    /// Sets the deadline; returns the time of an event to queue, if one is needed.
    pub fn set(&mut self, deadline: Time) -> Option<Time> {
        self.deadline = deadline;
        (deadline < self.armed_at).then(|| {
            self.armed_at = deadline;
            deadline
        })
    }

    pub fn stop(&mut self) {
        self.deadline = Time::MAX;
    }

    pub fn running(&self) -> bool {
        self.deadline != Time::MAX
    }

    /// An event for this timer fired at `now`: `Ok(true)` if the timer expired, `Ok(false)` if
    /// not (stale event, or stopped), `Err(t)` if it must re-arm with an event at `t`.
    pub fn fire(&mut self, now: Time) -> Result<bool, Time> {
        if now != self.armed_at {
            return Ok(false);
        }
        self.armed_at = Time::MAX;
        if self.deadline <= now {
            self.deadline = Time::MAX;
            Ok(true)
        } else if self.deadline != Time::MAX {
            self.armed_at = self.deadline;
            Err(self.deadline)
        } else {
            Ok(false)
        }
    }
}

/// Many connections' timer events with one event in the main queue: the earliest's. Each timer
/// event takes its place in the scheduling order when it is queued (`EventQueue::reserve`), so
/// that events dispatch exactly as if each were in the main queue; but the main queue, whose
/// depth every packet's event pays for, holds one entry instead of one per connection.
#[derive(Default)]
pub struct Timers {
    /// (time, rank in the scheduling order (`EventQueue::rank`), connection, place).
    heap: BinaryHeap<std::cmp::Reverse<(Time, u64, u32, u64)>>,
}

impl Timers {
    /// Queues connection `id`'s timer event at `at`; `kind` is this queue's main-queue event.
    pub fn push(&mut self, events: &mut EventQueue, at: Time, id: u32, kind: EventKind) {
        let seq = events.reserve();
        let rank = events.rank(at, seq);
        let earliest = self.heap.peek().is_none_or(|h| (at, rank) < (h.0 .0, h.0 .1));
        self.heap.push(std::cmp::Reverse((at, rank, id, seq)));
        if earliest {
            events.push_reserved(at, seq, kind);
        }
    }

    /// The main queue's event `ev` of this queue came: the connection whose timer event it is,
    /// if it is still the earliest (an event queued for a head since superseded is stale).
    pub fn pop(&mut self, events: &mut EventQueue, ev: &Event) -> Option<u32> {
        let &std::cmp::Reverse((at, _, id, seq)) = self.heap.peek()?;
        if (at, seq) != (ev.time, ev.seq) {
            return None;
        }
        self.heap.pop();
        if let Some(&std::cmp::Reverse((at, _, _, seq))) = self.heap.peek() {
            events.push_reserved(at, seq, ev.kind);
        }
        Some(id)
    }
}

/// An event as the main loop sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub time: Time,
    /// Its place in the scheduling order, as `EventQueue::reserve` gave it (ties at one time go
    /// by its rank, `EventQueue::rank`).
    pub seq: u64,
    pub kind: EventKind,
}

/// A queued event: 24 bytes, copied, never boxed. The place in the scheduling order shares its
/// word with the kind (`seq << KIND_BITS | kind`).
#[derive(Copy, Clone, PartialEq, Eq)]
struct Entry {
    time: u64,
    seq_kind: u64,
    a: u32,
    b: u32,
}

/// Whether `x` happens before (`Less`) or after `y`: by time, then by rank among the places
/// taken for that time. Most comparisons are settled by the time or, at one time, by one
/// origin's count, so ranks are worked out only for two origins' events at one time
/// (`Ranks::tie`).
#[inline(always)]
fn order(ranks: &Ranks, x: &Entry, y: &Entry) -> Ordering {
    if x.time != y.time {
        return x.time.cmp(&y.time);
    }
    let (a, b) = (x.seq_kind >> KIND_BITS, y.seq_kind >> KIND_BITS);
    if a >> ORIGIN_SHIFT == b >> ORIGIN_SHIFT {
        return a.cmp(&b);
    }
    ranks.tie(x.time, a, b)
}

/// What the rank of an event among those at its time depends on (`EventQueue::reserve`): the
/// network's nodes, and the time's rotation of their order, kept for the last time asked
/// (ties come in runs at one time: a bucket's, the event being handled's).
struct Ranks {
    nodes: u64,
    /// (time, its rotation).
    last: Cell<(u64, u64)>,
}

impl Ranks {
    fn new(nodes: u64) -> Ranks {
        Ranks { nodes, last: Cell::new((0, rotation(nodes, 0))) }
    }

    /// The order of places `x` and `y` of two origins, taken for one time.
    #[cold]
    fn tie(&self, time: u64, x: u64, y: u64) -> Ordering {
        self.rank(time, x).cmp(&self.rank(time, y))
    }

    /// Place `seq`'s rank among those at `time`.
    fn rank(&self, time: u64, seq: u64) -> u64 {
        rank(self.nodes, self.rotation(time), seq)
    }

    /// `rotation` at `time`, kept for the last time asked.
    fn rotation(&self, time: u64) -> u64 {
        let (at, shift) = self.last.get();
        if at == time {
            return shift;
        }
        let shift = rotation(self.nodes, time);
        self.last.set((time, shift));
        shift
    }
}

/// How far the nodes' order is rotated among events at `time` (`EventQueue::reserve`): a hash
/// of the time, scaled to the nodes.
fn rotation(nodes: u64, time: u64) -> u64 {
    ((splitmix64(time) as u128 * nodes as u128) >> 64) as u64
}

/// The rank of place `seq` among the places taken for one time, whose `rotation` is `shift`:
/// the run's own origin (0) first, then the nodes' in their rotated order, then each origin's
/// in the order it took them (`EventQueue::reserve`).
fn rank(nodes: u64, shift: u64, seq: u64) -> u64 {
    let (origin, count) = (seq >> ORIGIN_SHIFT, seq & ((1 << ORIGIN_SHIFT) - 1));
    let rank = match origin {
        0 => 0,
        o => {
            let r = o - 1 + shift;
            1 + if r >= nodes { r - nodes } else { r }
        }
    };
    rank << ORIGIN_SHIFT | count
}

/// An event past the ring's span (`EventQueue::overflow`), keyed by (time, rank), earliest at
/// the top of the max-heap.
#[derive(Copy, Clone, PartialEq, Eq)]
struct Far {
    key: u128,
    entry: Entry,
}

impl Ord for Far {
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}
impl PartialOrd for Far {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// Future events, earliest first; equal times by their places in the scheduling order
/// (`reserve`). The key (time, place) is unique, so the order is total: runs are bit-identical
/// whatever the queue's internals.
///
/// A calendar queue (Brown, CACM 1988): time is cut into buckets of `2^bucket_bits` ps, and
/// the buckets from the one being drained on sit in a ring of unsorted slots; a bucket is
/// sorted only when its turn comes (`insertion_sort`, `sort_by_rank`). Nearly every event of a packet network
/// falls within a few microseconds (a serialization, a link delay), so a push is an append and
/// a pop takes the next of a bucket of sorted events. Where many events are pending (a fabric of a thousand hosts)
/// the appends to later buckets are logged and made in a batch when the cursor moves. Events
/// past the ring (timeouts, workload arrivals) wait in a binary heap and join the ring as it
/// reaches them.
///
/// As in Brown's design both the bucket width and the number of buckets follow the events:
/// every `ADAPT_EVERY` events the width halves or doubles to keep about `BUCKET_EVENTS` events
/// a bucket (fewer, and the queue spends its time moving from one bucket to the next; more, in
/// sorting them), and the ring grows to twice as many slots as the pending events fill
/// (`SLOTS_PER_FILLED_BUCKET`), so that its span keeps covering them however many there are:
/// every packet in flight is a pending event, so a fabric of 1024 hosts keeps a hundred times
/// more pending than a testbed, and a ring of fixed size would send most of them through the
/// heap. (No fixed width suits every fabric: `docs/speed.md`.)
pub struct EventQueue {
    /// Slot `b % slots.len()` holds bucket `b`'s events, for `cursor < b < cursor + slots.len()`
    /// (a power of two, at least `MIN_SLOTS`).
    slots: Vec<Vec<Entry>>,
    /// Which slots hold events, one bit each.
    occupied: Vec<u64>,
    /// The bucket being drained; its events are in `current`, earliest first, those before
    /// `head` already popped.
    cursor: u64,
    current: Vec<Entry>,
    head: usize,
    /// Events in buckets at or past `cursor + slots.len()` when they were queued.
    overflow: BinaryHeap<Far>,
    /// What an event's rank among those at its time depends on (`with_origins`).
    ranks: Ranks,
    bucket_bits: u32,
    len: usize,
    /// The origin of the event being handled (`set_origin`), and each origin's events
    /// scheduled so far: an event's place in the order is `origin << ORIGIN_SHIFT | count`.
    origin: usize,
    scheduled: Vec<u64>,
    popped: u64,
    peak: usize,
    /// Buckets drained, events popped, and the distinct times they were at, since the width was
    /// last looked at (`adapt`).
    buckets: u64,
    popped_at_adapt: u64,
    times: u64,
    /// The time of the event last popped.
    last_popped: u64,
    /// The events lately came `CLUMPED` or more to a time (`sort_by_rank`).
    clumped: bool,
    /// The last event popped was its bucket's first (`bucket_started`).
    started: bool,
    /// Events pushed for a later bucket than the cursor's since it last moved, in push order,
    /// while `logging`: they join their slots when it moves next (`advance`), many at once,
    /// instead of one at a time between the events that push them. Where the ring's slots are
    /// out of the cache (`LOG_FROM_PENDING`), each push to a slot waits on its line; a batch of
    /// them waits on many at once.
    log: Vec<Entry>,
    logging: bool,
    /// How many buckets after the cursor's a push appends to directly: the ring's less the
    /// cursor's, none while `logging`.
    direct: u64,
}

/// The ring's fewest slots (a testbed's events fit, and the ring stays in cache), and its most (2^22
/// slots: 100 MB of ring for 10⁷ pending events; beyond, the far ones wait in the heap).
const MIN_SLOTS: usize = 1 << 10;
const MAX_SLOTS: usize = 1 << 22;
/// The ring holds this many slots per bucket's worth of pending events, so that its span is
/// about twice theirs (Brown's queue keeps as many buckets as events, at about 3 gaps a
/// bucket; here a bucket holds 4 to 16).
const SLOTS_PER_FILLED_BUCKET: usize = 2;
/// The events a bucket should hold: the width doubles below `start`, halves above `end` (a
/// factor 4 apart, so that one step never calls for the step back). An insertion sort's cost
/// grows with the bucket and a move to the next bucket's shrinks, so while the pending events
/// stay in the cache small buckets take the fewest instructions; from `LARGE_BUCKETS_FROM`
/// pending on, larger ones take fewer misses, a slot's events sharing cache lines
/// (`docs/speed.md`).
const BUCKET_EVENTS: std::ops::Range<u64> = 4..16;
const BUCKET_EVENTS_PAST_CACHE: std::ops::Range<u64> = 16..64;
const LARGE_BUCKETS_FROM: usize = 1 << 13;
/// Buckets are sorted by rank (`sort_by_rank`) while this many events or more come to each
/// time they are at: an insertion sort would work out their ranks on every comparison.
const CLUMPED: u64 = 4;
const ADAPT_EVERY: u64 = 1 << 13;
/// Pushes go through the log (`EventQueue::log`) from this many pending events on (looked at
/// with the width, every `ADAPT_EVERY` events): below it the slots stay in the cache and the
/// log only adds a copy (`docs/speed.md`).
const LOG_FROM_PENDING: usize = 1 << 15;
/// An event's place in the order: its origin above this bit, the origin's count below (2^39
/// events per origin; 2^20 origins fill the 59 bits beside the kind).
const ORIGIN_SHIFT: u32 = 39;
/// The bits of an event's place in the order.
const SEQ_BITS: u32 = 64 - KIND_BITS;
/// The widest bucket, 2^48 ps (about 5 minutes).
const MAX_BUCKET_BITS: u32 = 48;

impl Default for EventQueue {
    /// A ring of about 4 µs (4 ns buckets).
    fn default() -> Self {
        EventQueue::new(Time::from_us(4))
    }
}

impl EventQueue {
    /// A queue whose ring starts out spanning at least `horizon` in `MIN_SLOTS` slots (the
    /// buckets' width a power of two; width and slots then adapt): twice the longest a packet
    /// takes to cross a link (serialization and propagation) keeps nearly every packet event
    /// in the ring.
    pub fn new(horizon: Time) -> EventQueue {
        let width = horizon.ps().div_ceil(MIN_SLOTS as u64).max(1);
        EventQueue {
            slots: vec![Vec::new(); MIN_SLOTS],
            occupied: vec![0; MIN_SLOTS / 64],
            cursor: 0,
            current: Vec::new(),
            head: 0,
            overflow: BinaryHeap::new(),
            ranks: Ranks::new(0),
            bucket_bits: width.next_power_of_two().trailing_zeros(),
            len: 0,
            origin: 0,
            scheduled: vec![0; 1],
            popped: 0,
            peak: 0,
            buckets: 0,
            popped_at_adapt: 0,
            times: 0,
            last_popped: 0,
            clumped: false,
            started: false,
            log: Vec::new(),
            logging: false,
            direct: MIN_SLOTS as u64 - 1,
        }
    }

    #[inline(always)]
    pub fn push(&mut self, time: Time, kind: EventKind) {
        let seq = self.reserve();
        self.push_reserved(time, seq, kind);
    }

    /// Takes the next place in the scheduling order for an event that may be queued later
    /// (`push_reserved`), or never if it would find nothing to do: it then ranks among events
    /// at its time exactly as if it had been queued now.
    ///
    /// The place is the current origin's (`set_origin`) next: ties at one picosecond go by
    /// the origin that scheduled them, then in the order it scheduled them. An origin is a
    /// node of the network, whose events are handled in the same order however the network
    /// is cut into partitions, so the order does not depend on the partitioning (a run-wide
    /// insertion counter would: it counts other partitions' events too). The run's own
    /// events come first; the nodes follow in an order rotated by a hash of the time, so
    /// that no node wins every tie (two senders in step would otherwise see the lower-numbered
    /// one always queue first). That rank is worked out when two events tie (`rank`): the
    /// place itself is the origin and its count.
    #[inline(always)]
    pub fn reserve(&mut self) -> u64 {
        let count = &mut self.scheduled[self.origin];
        *count += 1;
        (self.origin as u64) << ORIGIN_SHIFT | (*count - 1)
    }

    /// Place `seq`'s rank among the places taken for `time` (`reserve`): events at one time
    /// happen in the order of their ranks.
    pub fn rank(&self, time: Time, seq: u64) -> u64 {
        self.ranks.rank(time.ps(), seq)
    }

    /// Whether the event at place `x` happens before the one at place `y` (each a time and a
    /// place from `reserve`).
    #[inline]
    pub fn before(&self, x: (Time, u64), y: (Time, u64)) -> bool {
        let entry = |(t, seq): (Time, u64)| Entry { time: t.ps(), seq_kind: seq << KIND_BITS, a: 0, b: 0 };
        order(&self.ranks, &entry(x), &entry(y)) == Ordering::Less
    }

    /// Events scheduled from now on come from `origin` (below `origins`, `with_origins`):
    /// the node whose event is being handled, plus one; 0 for the run's own (its setup, the
    /// warm-up's end, time-series samples).
    #[inline]
    pub fn set_origin(&mut self, origin: u32) {
        self.origin = origin as usize;
    }

    /// The origin of the events scheduled now (`set_origin`).
    #[inline]
    pub fn origin(&self) -> u32 {
        self.origin as u32
    }

    /// Makes room for `origins` origins (`set_origin`).
    pub fn with_origins(mut self, origins: usize) -> EventQueue {
        assert!(origins as u64 <= 1 << (SEQ_BITS - ORIGIN_SHIFT), "{origins} origins: at most 2^{}", SEQ_BITS - ORIGIN_SHIFT);
        self.scheduled.resize(origins.max(1), 0);
        self.ranks = Ranks::new(self.scheduled.len() as u64 - 1);
        self
    }

    /// Queues an event at a place in the scheduling order taken by `reserve`. Nearly every
    /// event goes to a slot of the ring past the cursor's: that case is one comparison and an
    /// append, the others out of line. Always inlined, so that the kind's packing folds away
    /// where the kind is known.
    #[inline(always)]
    pub fn push_reserved(&mut self, time: Time, seq: u64, kind: EventKind) {
        let (tag, a, b) = kind.pack();
        let e = Entry { time: time.ps(), seq_kind: seq << KIND_BITS | tag, a, b };
        self.len += 1;
        self.peak = self.peak.max(self.len);
        // Buckets after the cursor's and before the ring's end, counted from 0.
        let ahead = (e.time >> self.bucket_bits).wrapping_sub(self.cursor + 1);
        if ahead < self.direct {
            self.append(e);
        } else {
            self.insert(e);
        }
    }

    /// Queues an event of the cursor's bucket, of one past the ring, or (while `logging`) any.
    #[inline(never)]
    fn insert(&mut self, e: Entry) {
        if e.time >> self.bucket_bits <= self.cursor {
            // The bucket being drained (or, after a look past the end, an earlier one: it is
            // then the earliest of all).
            // Nearly always among the earliest: moved to its place from the one just popped.
            if self.head == 0 {
                self.current.insert(0, e);
            } else {
                self.head -= 1;
                self.current[self.head] = e;
            }
            rise(&mut self.current[self.head..], &self.ranks);
        } else if self.logging {
            self.log.push(e);
        } else {
            self.place(e);
        }
    }

    /// Puts an event of a bucket after the cursor's in its slot, or in the heap past the ring.
    #[inline]
    fn place(&mut self, e: Entry) {
        let bucket = e.time >> self.bucket_bits;
        if bucket < self.cursor + self.slots.len() as u64 {
            self.append(e);
        } else {
            let rank = self.ranks.rank(e.time, e.seq_kind >> KIND_BITS);
            self.overflow.push(Far { key: (e.time as u128) << 64 | rank as u128, entry: e });
        }
    }

    /// Appends an event to its bucket's slot, which is in the ring.
    #[inline(always)]
    fn append(&mut self, e: Entry) {
        let slot = (e.time >> self.bucket_bits) as usize & (self.slots.len() - 1);
        let events = &mut self.slots[slot];
        if events.is_empty() {
            self.occupied[slot / 64] |= 1 << (slot % 64);
        }
        events.push(e);
    }

    /// Moves the cursor to the next bucket that holds events and sorts it into `current`;
    /// false if no events are left.
    fn advance(&mut self) -> bool {
        self.current.clear();
        self.head = 0;
        if !self.log.is_empty() {
            self.flush_log();
        }
        self.buckets += 1;
        let adapted = self.popped - self.popped_at_adapt >= ADAPT_EVERY && self.adapt();
        // A resize may have left events in the cursor's own bucket: that bucket is next.
        if !adapted || self.current.is_empty() {
            let far = self.overflow.peek().map_or(u64::MAX, |f| f.entry.time >> self.bucket_bits);
            let cursor = self.next_occupied().min(far);
            if cursor == u64::MAX {
                return false;
            }
            self.cursor = cursor;
            let slot = self.cursor as usize & (self.slots.len() - 1);
            std::mem::swap(&mut self.current, &mut self.slots[slot]);
            self.occupied[slot / 64] &= !(1 << (slot % 64));
            // The next bucket's events were written about one link crossing ago, a whole
            // fabric's worth of events back at a thousand hosts: fetch them while this bucket
            // drains, so that its sort does not wait on them.
            let next = &self.slots[(slot + 1) & (self.slots.len() - 1)];
            for e in next.iter().step_by(64 / std::mem::size_of::<Entry>()) {
                prefetch(e);
            }
        }
        // Far events the ring now reaches join it (those of the cursor's bucket, `current`).
        let end = self.cursor + self.slots.len() as u64;
        while let Some(&f) = self.overflow.peek().filter(|f| f.entry.time >> self.bucket_bits < end) {
            self.overflow.pop();
            self.insert_unsorted(f.entry);
        }
        if self.clumped || self.current.len() > 2 * BUCKET_EVENTS_PAST_CACHE.end as usize {
            sort_by_rank(&mut self.current, &self.ranks);
        } else {
            insertion_sort(&mut self.current, &self.ranks);
        }
        true
    }

    /// Puts the logged pushes in their slots (`log`).
    #[inline(never)]
    fn flush_log(&mut self) {
        let mut log = std::mem::take(&mut self.log);
        for e in log.drain(..) {
            self.place(e);
        }
        self.log = log;
    }

    /// With `current` drained and cleared: doubles or halves the bucket width if the buckets drained since
    /// the last look held too few or too many events, grows the ring when the pending events
    /// fill more than half of it (shrinks it when they fill under an eighth), and redistributes
    /// the ring's and the heap's events; true if it did. The cursor's new bucket is the one
    /// holding the old one's start, so every event is still at or after it; those of that
    /// bucket are in `current`, unsorted. Also turns the log on or off (`LOG_FROM_PENDING`;
    /// it is empty here).
    fn adapt(&mut self) -> bool {
        self.logging = self.len >= LOG_FROM_PENDING;
        let adapted = self.resize();
        self.direct = if self.logging { 0 } else { self.slots.len() as u64 - 1 };
        adapted
    }

    /// `adapt`'s width and ring.
    fn resize(&mut self) -> bool {
        let per_bucket = (self.popped - self.popped_at_adapt) / self.buckets;
        let times = std::mem::take(&mut self.times);
        let times_per_bucket = times / self.buckets;
        self.clumped = times * CLUMPED < self.popped - self.popped_at_adapt;
        (self.popped_at_adapt, self.buckets) = (self.popped, 0);
        let aim = if self.len >= LARGE_BUCKETS_FROM { BUCKET_EVENTS_PAST_CACHE } else { BUCKET_EVENTS };
        let bits = match per_bucket {
            n if n < aim.start && self.bucket_bits < MAX_BUCKET_BITS => self.bucket_bits + 1,
            // Narrower only where that splits a bucket: not where its events are at one time.
            n if n > aim.end && times_per_bucket > aim.start && self.bucket_bits > 0 => self.bucket_bits - 1,
            _ => self.bucket_bits,
        };
        // Buckets' worth of pending events at the new width (a width step halves or doubles
        // the events a bucket holds).
        let filled = (self.len as u64 / per_bucket.max(1)) << self.bucket_bits >> bits;
        let wanted = (filled as usize).saturating_mul(SLOTS_PER_FILLED_BUCKET).next_power_of_two().clamp(MIN_SLOTS, MAX_SLOTS);
        let n = self.slots.len();
        let slots = if wanted > n || wanted * 4 <= n { wanted } else { n };
        if bits == self.bucket_bits && slots == n {
            return false;
        }
        let start = self.cursor << self.bucket_bits;
        let mut ring = Vec::with_capacity(self.len);
        for slot in &mut self.slots {
            ring.append(slot);
        }
        if slots > n {
            // Far events the wider ring now reaches join it.
            ring.extend(std::mem::take(&mut self.overflow).into_iter().map(|f| f.entry));
        }
        self.slots.resize_with(slots, Vec::new);
        self.occupied = vec![0; slots / 64];
        self.bucket_bits = bits;
        self.cursor = start >> bits;
        for e in ring {
            self.insert_unsorted(e);
        }
        true
    }

    /// `insert` for an event of the cursor's bucket while `current` is still unsorted.
    fn insert_unsorted(&mut self, e: Entry) {
        if e.time >> self.bucket_bits == self.cursor {
            self.current.push(e);
        } else {
            self.place(e);
        }
    }

    /// The absolute bucket of the first occupied slot after the cursor's, within the ring
    /// (`u64::MAX`: none). Nearly always in the cursor's word of the bitmap.
    #[inline]
    fn next_occupied(&self) -> u64 {
        let start = (self.cursor as usize + 1) & (self.slots.len() - 1);
        let bits = self.occupied[start / 64] >> (start % 64);
        if bits != 0 {
            return self.cursor + 1 + bits.trailing_zeros() as u64;
        }
        self.next_occupied_past(start)
    }

    /// `next_occupied` past the word holding slot `start`: the other words round the ring, then
    /// that word's bits before `start`.
    #[inline(never)]
    fn next_occupied_past(&self, start: usize) -> u64 {
        let n = self.slots.len();
        let words = n / 64;
        for k in 1..=words {
            let w = (start / 64 + k) & (words - 1);
            let mut bits = self.occupied[w];
            if k == words {
                bits &= !(u64::MAX << (start % 64));
            }
            if bits != 0 {
                let slot = w * 64 + bits.trailing_zeros() as usize;
                let ahead = (slot + n - start) & (n - 1);
                return self.cursor + 1 + ahead as u64;
            }
        }
        u64::MAX
    }

    /// The earliest event if it happens no later than `end`.
    #[inline(always)]
    pub fn pop_until(&mut self, end: Time) -> Option<Event> {
        self.started = self.head == self.current.len();
        if self.started && !self.advance() {
            return None;
        }
        let &Entry { time, seq_kind, a, b } = self.current.get(self.head).expect("advanced to a bucket with events");
        if time > end.ps() {
            return None;
        }
        self.head += 1;
        self.len -= 1;
        self.popped += 1;
        self.times += (time != self.last_popped) as u64;
        self.last_popped = time;
        Some(Event { time: Time(time), seq: seq_kind >> KIND_BITS, kind: EventKind::unpack(seq_kind & KIND_MASK, a, b) })
    }

    /// Every pending event, taken out in order (at the run's end: they are not handled, nor
    /// counted as handled).
    pub fn drain(&mut self) -> Vec<Event> {
        let popped = self.popped;
        let out = std::iter::from_fn(|| self.pop_until(Time::MAX)).collect();
        self.popped = popped;
        out
    }

    /// When the earliest pending event happens.
    pub fn next_time(&mut self) -> Option<Time> {
        if self.head == self.current.len() && !self.advance() {
            return None;
        }
        self.current.get(self.head).map(|e| Time(e.time))
    }

    /// The event `n` places after the next one, if it is in the bucket being drained, without
    /// taking it: the main loop fetches its operands into the cache ahead of it.
    #[inline]
    pub fn upcoming(&self, n: usize) -> Option<EventKind> {
        let e = self.current.get(self.head + n)?;
        Some(EventKind::unpack(e.seq_kind & KIND_MASK, e.a, e.b))
    }

    /// The event last popped was the first of a bucket: the ones right after it were not
    /// visible until now.
    #[inline]
    pub fn bucket_started(&self) -> bool {
        self.started
    }

    /// Events dispatched so far.
    pub fn processed(&self) -> u64 {
        self.popped
    }

    /// The most events that were pending at once.
    pub fn peak(&self) -> usize {
        self.peak
    }
}

/// Sorts a bucket earliest first. Pushed roughly in time order, its events are nearly sorted
/// already, so an insertion sort costs little more than a look at each, unless many are at one
/// time (every host of a fabric sending in step: `sort_by_rank`).
fn insertion_sort(v: &mut [Entry], ranks: &Ranks) {
    for i in 1..v.len() {
        let e = v[i];
        let mut j = i;
        while j > 0 && order(ranks, &v[j - 1], &e) == Ordering::Greater {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = e;
    }
}

/// Sorts `v` by (time, rank): by (time, place) first, which leaves the events at one time in
/// their origins' order; their ranks are that order rotated (`rank`), the run's own events
/// first, so one rotation of the rest puts them in order.
#[inline(never)]
fn sort_by_rank(v: &mut [Entry], ranks: &Ranks) {
    v.sort_unstable_by_key(|e| (e.time, e.seq_kind));
    for run in v.chunk_by_mut(|x, y| x.time == y.time).filter(|run| run.len() > 1) {
        // Nodes from `first` on rank before the others at this time.
        let first = 1 + ranks.nodes - ranks.rotation(run[0].time);
        let origin = |e: &Entry| e.seq_kind >> (KIND_BITS + ORIGIN_SHIFT);
        let own = run.partition_point(|e| origin(e) == 0);
        let nodes = &mut run[own..];
        let wrapped = nodes.partition_point(|e| origin(e) < first);
        nodes.rotate_left(wrapped);
    }
}

/// Moves `v[0]` up past the earlier events after it, into its place in `v`, which is sorted
/// earliest first but for it.
#[inline(always)]
fn rise(v: &mut [Entry], ranks: &Ranks) {
    let e = v[0];
    let mut j = 0;
    while j + 1 < v.len() && order(ranks, &v[j + 1], &e) == Ordering::Less {
        v[j] = v[j + 1];
        j += 1;
    }
    v[j] = e;
}

/// Asks the CPU to bring the cache line holding `x` closer, without waiting for it: a hint that
/// changes no result (no-op off x86-64).
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and cannot fault; `x` is a valid
    // reference anyway.
    #[allow(unused_unsafe)]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((x as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// The random generator used everywhere in the simulator.
pub type Rng = Xoshiro256PlusPlus;

/// Which component a random stream belongs to.
#[derive(Copy, Clone, Debug)]
pub enum Stream {
    Switch(u32),
    /// A connection: its sending host and its serial number there.
    Flow(u32, u32),
    Host(u32),
    /// A workload generator's draws for one of its hosts.
    Workload(u32, u32),
    /// A switch's draws among equal-cost ports (`routing.mode`), apart from its marking's.
    Routing(u32),
    /// An egress port's silent losses (`[[faults]]` of kind `drop`).
    Fault(u32),
}

/// SplitMix64's output function: a 64-bit mix of every input bit.
pub(crate) fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A draw of an exponential distribution of mean `mean_ps` picoseconds, at least 1 ps: the
/// gap between events of a Poisson process.
pub fn exponential(rng: &mut Rng, mean_ps: f64) -> Time {
    let x: f64 = rand_distr::Distribution::sample(&rand_distr::Exp1, rng);
    Time((x * mean_ps).round().max(1.0) as u64)
}

/// An independent, reproducible stream for one component under one scenario seed.
pub fn rng_stream(seed: u64, stream: Stream) -> Rng {
    let (tag, id) = match stream {
        Stream::Switch(i) => (1u64, i),
        Stream::Flow(h, serial) => return Rng::seed_from_u64(splitmix64(splitmix64(splitmix64(seed) ^ (2 << 32 | h as u64)) ^ serial as u64)),
        Stream::Host(i) => (3, i),
        Stream::Workload(w, h) => (4 + w as u64, h),
        Stream::Routing(i) => return Rng::seed_from_u64(splitmix64(splitmix64(splitmix64(seed) ^ 0x7072_6f75_7465) ^ i as u64)),
        Stream::Fault(i) => return Rng::seed_from_u64(splitmix64(splitmix64(splitmix64(seed) ^ 0x0066_6175_6c74) ^ i as u64)),
    };
    Rng::seed_from_u64(splitmix64(splitmix64(seed) ^ (tag << 32 | id as u64)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng as _;

    /// Draws below `m` from a xorshift generator seeded with `x`: the same sequence for a seed,
    /// without the simulator's own streams.
    fn xorshift(mut x: u64) -> impl FnMut(u64) -> u64 {
        move |m| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        }
    }

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::default();
        for (t, h) in [(5, 1), (3, 2), (5, 3), (3, 4)] {
            q.push(Time(t), EventKind::HostRx(HostId(h)));
        }
        assert_eq!(q.pop_until(Time(2)), None, "nothing due by 2 ps");
        let host = |e: Event| if let EventKind::HostRx(h) = e.kind { h.0 } else { unreachable!("only HostRx was pushed") };
        let order: Vec<u32> = std::iter::from_fn(|| q.pop_until(Time::MAX)).map(host).collect();
        assert_eq!(order, vec![2, 4, 1, 3]);
        assert_eq!(q.processed(), 4);
        assert_eq!(q.peak(), 4);
    }

    /// The calendar queue pops exactly what a binary heap of (time, order) would: events near
    /// and far (past the ring), at equal times, at the bucket being drained, and after a look
    /// past the end that found nothing due.
    #[test]
    fn calendar_pops_in_the_order_of_a_heap() {
        let mut draw = xorshift(0x2545_f491_4f6c_dd1du64);
        let (mut q, mut reference) = (EventQueue::default(), BinaryHeap::new());
        let mut widths = Vec::new();
        let mut now = 0u64;
        for step in 0..300_000u32 {
            // The events' spread changes from phase to phase, so that the bucket width adapts
            // both ways: from about the ring's span (4 µs), to 1000 times narrower, to 1000
            // times wider.
            let spread = [5_000_000, 5_000, 5_000_000_000][step as usize / 100_000];
            if step % 100_000 == 0 {
                widths.push(q.bucket_bits);
            }
            if draw(3) > 0 || reference.is_empty() {
                // Mostly within the spread, some equal to now, some far.
                let lead = match draw(10) {
                    0 => 0,
                    1 => draw(1 << 10),
                    2 => 1_000_000 + draw(1 << 30),
                    _ => draw(spread),
                };
                let kind = EventKind::Arrive { port: PortId(step), pkt: PktId(0) };
                let seq = q.reserve();
                q.push_reserved(Time(now + lead), seq, kind);
                reference.push(std::cmp::Reverse((now + lead, seq, step)));
            } else {
                let end = now + draw(2_000);
                let std::cmp::Reverse((t, seq, id)) = *reference.peek().expect("non-empty");
                match q.pop_until(Time(end)) {
                    None => assert!(t > end, "step {step}: nothing popped though {t} <= {end}"),
                    Some(e) => {
                        reference.pop();
                        assert_eq!((e.time.ps(), e.seq, e.kind), (t, seq, EventKind::Arrive { port: PortId(id), pkt: PktId(0) }), "step {step}");
                        now = t;
                    }
                }
            }
        }
        while let Some(std::cmp::Reverse((t, seq, _))) = reference.pop() {
            let e = q.pop_until(Time::MAX).expect("as many events as the reference");
            assert_eq!((e.time.ps(), e.seq), (t, seq));
        }
        assert_eq!(q.pop_until(Time::MAX), None);
        widths.push(q.bucket_bits);
        assert!(widths[2] < widths[1] && widths[3] > widths[2], "the bucket width (log2 ps) at each phase's start and at the end: {widths:?}");
    }

    /// The ring grows with the pending events, so that a fabric's worth of packets in flight
    /// stays out of the heap, and shrinks back when they drain; pushes go through the log while
    /// many are pending; the order stays a heap's.
    #[test]
    fn the_ring_follows_the_pending_count() {
        let mut q = EventQueue::default();
        let mut reference = BinaryHeap::new();
        let mut draw = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let mut gap = || 80_000 + draw(2_000_000);
        let mut hold = |q: &mut EventQueue, reference: &mut BinaryHeap<std::cmp::Reverse<(u64, u64)>>, pushes_per_pop: usize, rounds: usize| {
            for _ in 0..rounds {
                let e = q.pop_until(Time::MAX).expect("pending events");
                let std::cmp::Reverse((t, seq)) = reference.pop().expect("as many as the queue");
                assert_eq!((e.time.ps(), e.seq), (t, seq));
                for _ in 0..pushes_per_pop {
                    let at = t + gap();
                    let seq = q.reserve();
                    q.push_reserved(Time(at), seq, e.kind);
                    reference.push(std::cmp::Reverse((at, seq)));
                }
            }
        };
        let seq = q.reserve();
        q.push_reserved(Time(0), seq, EventKind::Sample);
        reference.push(std::cmp::Reverse((0, seq)));
        // Grow to about 200 000 pending, hold there, then drain to a few hundred.
        hold(&mut q, &mut reference, 2, 200_000);
        hold(&mut q, &mut reference, 1, 100_000);
        let (slots, overflow) = (q.slots.len(), q.overflow.len());
        assert!(slots >= 16_384, "{slots} slots for {} pending", q.len);
        assert!(overflow * 100 < q.len, "{overflow} of {} pending events in the heap", q.len);
        assert!(q.logging, "{} pending", q.len);
        hold(&mut q, &mut reference, 0, 199_700);
        hold(&mut q, &mut reference, 1, 100_000);
        assert!(q.slots.len() * 4 <= slots, "{} slots for {} pending, after {slots}", q.slots.len(), q.len);
        assert!(!q.logging, "{} pending", q.len);
    }

    /// Events at one time from many origins pop in the order of the rule `reserve` states,
    /// worked out here for every event as it is queued: the run's own first, then the nodes
    /// rotated by the time's hash, then each origin's in order. Ties are common here (a few
    /// dozen distinct times), through the ring, the bucket being drained and the heap past it.
    #[test]
    fn ties_pop_in_the_stated_rank_order() {
        const NODES: u64 = 37;
        let mut q = EventQueue::default().with_origins(NODES as usize + 1);
        let stated = |time: u64, origin: u64, count: u64| {
            let rank = match origin {
                0 => 0,
                o => 1 + (o - 1 + ((splitmix64(time) as u128 * NODES as u128) >> 64) as u64) % NODES,
            };
            rank << ORIGIN_SHIFT | count
        };
        let mut draw = xorshift(0x853c_49e6_748f_ea9bu64);
        let (mut reference, mut counts) = (BinaryHeap::new(), vec![0u64; NODES as usize + 1]);
        let mut now = 0;
        for step in 0..200_000u32 {
            if draw(2) == 0 || reference.is_empty() {
                let origin = draw(NODES + 1);
                q.set_origin(origin as u32);
                let at = now + [0, 1_000, 80_000, 5_000_000][draw(4) as usize] * draw(3);
                let seq = q.reserve();
                assert_eq!(seq, origin << ORIGIN_SHIFT | counts[origin as usize], "a place is its origin and count");
                q.push_reserved(Time(at), seq, EventKind::Arrive { port: PortId(step), pkt: PktId(0) });
                reference.push(std::cmp::Reverse((at, stated(at, origin, counts[origin as usize]), step)));
                counts[origin as usize] += 1;
            } else {
                let std::cmp::Reverse((t, rank, id)) = reference.pop().expect("non-empty");
                let e = q.pop_until(Time::MAX).expect("as many as the reference");
                assert_eq!((e.time.ps(), q.rank(e.time, e.seq), e.kind), (t, rank, EventKind::Arrive { port: PortId(id), pkt: PktId(0) }), "step {step}");
                now = t;
            }
        }
        // `before` is the same order.
        let (a, b) = (1 << ORIGIN_SHIFT, 2 << ORIGIN_SHIFT);
        for t in 0..100 {
            let a_first = stated(t, 1, 0) < stated(t, 2, 0);
            assert_eq!(q.before((Time(t), a), (Time(t), b)), a_first);
            assert_eq!(q.before((Time(t), b), (Time(t), a)), !a_first);
            assert!(!q.before((Time(t), a), (Time(t), a)));
            assert!(q.before((Time(t), b), (Time(t + 1), a)));
        }
    }

    /// A bucket sorted by rank (for events clumped at a few times) comes out as the insertion
    /// sort, which compares ranks directly, leaves it.
    #[test]
    fn both_bucket_sorts_agree() {
        let ranks = Ranks::new(29);
        let mut draw = xorshift(0x2545_f491_4f6c_dd1du64);
        for len in [2, 5, 17, 64, 300] {
            let bucket: Vec<Entry> = (0..len)
                .map(|i| Entry { time: 1000 + draw(4), seq_kind: (draw(30) << ORIGIN_SHIFT | i) << KIND_BITS | tag::ARRIVE, a: i as u32, b: 0 })
                .collect();
            let (mut by_rank, mut by_insertion) = (bucket.clone(), bucket);
            sort_by_rank(&mut by_rank, &ranks);
            insertion_sort(&mut by_insertion, &ranks);
            assert!(by_rank == by_insertion, "{len} events");
            assert!(by_rank.windows(2).all(|w| order(&ranks, &w[0], &w[1]) == Ordering::Less), "{len} events in order");
        }
    }

    #[test]
    fn every_kind_survives_the_queue() {
        let mut q = EventQueue::default();
        let kinds = [
            EventKind::TxDone { port: PortId(7), pkt: None },
            EventKind::TxDone { port: PortId(7), pkt: Some(PktId(u32::MAX - 1)) },
            EventKind::Arrive { port: PortId(1), pkt: PktId(0) },
            EventKind::HostWake(HostId(3)),
            EventKind::Sample,
            EventKind::Kick(PortId(9)),
            EventKind::WarmupEnd,
            EventKind::Timer { flow: FlowId(5), timer: Timer::Pace, serial: (1 << 29) - 1 },
            EventKind::Arrival { generator: 2, host: 11 },
            EventKind::HostRx(HostId(4)),
            EventKind::MessageRto(HostId(6)),
            EventKind::Dropped { flow: FlowId(7), serial: DROPPED_SERIAL, lost: None },
            EventKind::Dropped { flow: FlowId(7), serial: 5, lost: Some(Lost::Down) },
            EventKind::Dropped { flow: FlowId(7), serial: DROPPED_SERIAL, lost: Some(Lost::Silent) },
            EventKind::PingLost { generator: 1, source: 8 },
            EventKind::Fault(PortId(u32::MAX - 1)),
            EventKind::Lost { port: PortId(3), pkt: PktId(9), silent: false },
            EventKind::Lost { port: PortId(4), pkt: PktId(u32::MAX - 1), silent: true },
            EventKind::Closed { flow: FlowId(2), serial: u32::MAX - 1 },
            EventKind::Pull(HostId(12)),
            EventKind::PullRate(HostId(13)),
        ];
        for k in kinds {
            q.push(Time(1), k);
        }
        let back: Vec<EventKind> = std::iter::from_fn(|| q.pop_until(Time::MAX)).map(|e| e.kind).collect();
        assert_eq!(back, kinds);
        // Every tag is used once, below the count the width is checked against.
        let mut tags: Vec<u64> = kinds.iter().map(|k| k.pack().0).collect();
        tags.sort_unstable();
        tags.dedup();
        assert_eq!(tags, (0..tag::COUNT).collect::<Vec<_>>());
    }

    #[test]
    fn a_reserved_place_ranks_as_if_pushed_when_reserved() {
        let mut q = EventQueue::default();
        let early = q.reserve();
        let arrive = |p| EventKind::Arrive { port: PortId(p), pkt: PktId(0) };
        q.push(Time(5), arrive(2));
        q.push_reserved(Time(5), early, EventKind::TxDone { port: PortId(1), pkt: None });
        q.push(Time(5), arrive(3));
        let order: Vec<EventKind> = std::iter::from_fn(|| q.pop_until(Time::MAX)).map(|e| e.kind).collect();
        assert_eq!(order, vec![EventKind::TxDone { port: PortId(1), pkt: None }, arrive(2), arrive(3)]);
    }

    /// Timers in their own queue dispatch in the order they would have in the main queue,
    /// with one main-queue entry at a time however many are pending.
    #[test]
    fn timers_dispatch_as_if_each_were_in_the_main_queue() {
        let (mut q, mut timers) = (EventQueue::default(), Timers::default());
        let arrive = |p| EventKind::Arrive { port: PortId(p), pkt: PktId(0) };
        timers.push(&mut q, Time(9), 1, EventKind::MessageRto(HostId(0)));
        q.push(Time(5), arrive(0));
        timers.push(&mut q, Time(5), 2, EventKind::MessageRto(HostId(0)));
        timers.push(&mut q, Time(7), 3, EventKind::MessageRto(HostId(0)));
        q.push(Time(7), arrive(1));
        timers.push(&mut q, Time(5), 4, EventKind::MessageRto(HostId(0)));
        let mut order = Vec::new();
        while let Some(ev) = q.pop_until(Time::MAX) {
            match ev.kind {
                EventKind::MessageRto(_) => order.extend(timers.pop(&mut q, &ev).map(|id| format!("timer {id} at {}", ev.time.ps()))),
                k => order.push(format!("{k:?} at {}", ev.time.ps())),
            }
        }
        let arrive_at = |p: u32, t: u64| format!("{:?} at {t}", arrive(p));
        assert_eq!(order, vec![arrive_at(0, 5), "timer 2 at 5".into(), "timer 4 at 5".into(), "timer 3 at 7".into(), arrive_at(1, 7), "timer 1 at 9".into()]);
        assert!(q.peak() <= 4, "the main queue held {} events", q.peak());

        // Two origins' timers at one time go by their ranks there, not by who queued first.
        let (mut q, mut timers) = (EventQueue::default().with_origins(3), Timers::default());
        let t = (0..1000).find(|&t| q.rank(Time(t), 2 << ORIGIN_SHIFT) < q.rank(Time(t), 1 << ORIGIN_SHIFT)).expect("a time where node 2 ranks first");
        for origin in [1, 2] {
            q.set_origin(origin);
            timers.push(&mut q, Time(t), origin, EventKind::MessageRto(HostId(0)));
        }
        let mut popped = Vec::new();
        while let Some(ev) = q.pop_until(Time::MAX) {
            popped.extend(timers.pop(&mut q, &ev));
        }
        assert_eq!(popped, vec![2, 1]);
    }

    #[test]
    fn lazy_timer_fires_once_at_the_last_deadline() {
        let mut t = LazyTimer::default();
        assert_eq!(t.set(Time(10)), Some(Time(10)));
        assert_eq!(t.set(Time(15)), None, "later deadline: no new event");
        assert_eq!(t.fire(Time(10)), Err(Time(15)), "re-arms at the moved deadline");
        assert_eq!(t.set(Time(12)), Some(Time(12)), "earlier than the queued event");
        assert_eq!(t.fire(Time(12)), Ok(true));
        assert_eq!(t.fire(Time(15)), Ok(false), "stale event");
        assert!(!t.running());
        t.set(Time(20));
        t.stop();
        assert_eq!(t.fire(Time(20)), Ok(false), "stopped");
    }

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a: u64 = rng_stream(7, Stream::Flow(0, 0)).random();
        let b: u64 = rng_stream(7, Stream::Flow(0, 0)).random();
        let c: u64 = rng_stream(7, Stream::Flow(0, 1)).random();
        let d: u64 = rng_stream(8, Stream::Flow(0, 0)).random();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }
}
