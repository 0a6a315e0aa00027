//! A connection: its endpoints, class and start, what it has delivered, and the transport state
//! that moves its data (`transport::message` or `transport::window`); how connections open,
//! finish and, for workload flows, give their slot back.

use crate::core::engine::Rng;
use crate::core::packet::IntStack;
use crate::transport::message::{App, MessageRx, MessageTx};
use crate::transport::onoff::OnOff;
use crate::transport::window::{WindowRx, WindowTx};
use rttlab_cc::{Metrics, Rate, Time};
use std::collections::VecDeque;

/// A connection as its sender holds it, in its sending host's table (`Slots`); the receiver
/// holds its own end (`RxEnd`). Laid out from a cache line of its own, what every ACK and
/// packet sent reads first (who it is, then its transport): at a thousand hosts each line a
/// connection's packet touches is a cache miss.
#[repr(C, align(64))]
pub struct Flow {
    /// The connection's serial number at its sender (`Slots::next_serial`): packets carry it,
    /// so that one of an earlier connection of the slot is known as stale.
    pub serial: u32,
    pub src: u32,
    pub dst: u32,
    /// ECMP hashes of the 5-tuple: data direction, ACK direction.
    pub hash: [u32; 2],
    pub class: u8,
    /// The slot holds a connection (false once an ephemeral flow is retired).
    pub open: bool,
    /// The traffic group it belongs to (`Network::groups`).
    pub group: u16,
    /// The sending end's transport.
    pub tx: Tx,
    /// The sender's path chooser ([`crate::transport::path`]).
    pub path: crate::transport::path::PathChooser,
    pub rng: Rng,
    /// The sender's counters (the receiver counts in its `RxEnd`).
    pub stats: FlowStats,
    pub start: Time,
    /// No new data from this time on (`Time::MAX`: never).
    pub stop: Time,
    /// A workload flow (one sized transfer whose slot is reused once it is done): the
    /// generator and source that started it.
    pub ephemeral: Option<Origin>,
    /// FCT of this flow alone on an idle network (`ideal_fct`); zero when unsized.
    pub ideal: Time,
    /// Its unloaded round trip (`Network::base_rtt`), with telemetry on; else zero.
    pub base_rtt: Time,
    /// Message transport carrying messages: the bytes offered on it so far, which place each
    /// message's end.
    pub offered: Option<u64>,
    /// A connection carrying a generator's transfers (`Feed::Transfers`): those not yet
    /// acknowledged whole, as (end, transfer number), oldest first.
    pub unacked_messages: Option<Box<VecDeque<(u64, u32)>>>,
    /// A `[[flows]]` connection's place among them (`u32::MAX` for one opened during the run).
    pub(crate) order: u32,
}

/// A connection's receiving end, at its destination host, in a table numbered like the
/// senders' (`FlowTable::rx`): what the receiver knows of the connection, its transport state
/// and its counters. A slot's next connection waits in `next` until its first packet arrives,
/// so that the receiver answers the packets of the one before until then, whenever it heard
/// of the next (at once, or at a partition's window end). Laid out as `Flow`: from a line of
/// its own, what each data packet reads first.
#[repr(C, align(64))]
pub struct RxEnd {
    /// The connection's serial number at its sender (`u32::MAX`: none yet).
    pub serial: u32,
    pub src: u32,
    pub dst: u32,
    /// ECMP hash of the 5-tuple in the ACKs' direction (redrawn by PRR).
    pub hash: u32,
    /// PRR (`transport.prr`): data received twice redraws `hash`.
    pub(crate) prr: bool,
    /// Its sender has had everything acknowledged (`EventKind::Closed`): its packets still on
    /// the way are stale here.
    pub(crate) closed: bool,
    /// REPS: the entropy of the last data packet, for its ACK to echo.
    pub(crate) echo_entropy: u16,
    /// One past the highest sequence number received: an arrival below it is reordered.
    pub(crate) high_seq: u32,
    pub group: u16,
    pub rx: Rx,
    /// The receiver's counters.
    pub stats: FlowStats,
    pub start: Time,
    pub ideal: Time,
    /// A workload flow's end (`flow_done`'s count): its generator and source.
    pub ephemeral: Option<Origin>,
    /// Window receiver with telemetry: the last data packet's records, for its next ACK.
    pub(crate) int_echo: Option<Box<IntStack>>,
    /// Connections that carry messages: those on their way, each complete when the connection's
    /// in-order point (`RxEnd::in_order`) reaches its end.
    pub messages: Option<Box<Inbox>>,
    pub(crate) next: Option<Box<RxEnd>>,
}

impl Default for RxEnd {
    /// An empty slot.
    fn default() -> Self {
        RxEnd {
            serial: u32::MAX,
            src: 0,
            dst: 0,
            start: Time::ZERO,
            group: 0,
            ephemeral: None,
            ideal: Time::ZERO,
            hash: 0,
            prr: false,
            closed: false,
            high_seq: 0,
            echo_entropy: 0,
            rx: Rx::None,
            stats: FlowStats::default(),
            int_echo: None,
            messages: None,
            next: None,
        }
    }
}

impl RxEnd {
    /// Data packet `pkt` arrived: one below the highest sequence number so far, and not a
    /// retransmission, was reordered on its way.
    pub(crate) fn arrival_order(&mut self, pkt: &crate::core::packet::Packet) {
        if pkt.seq < self.high_seq {
            self.stats.reordered += !pkt.retransmit() as u64;
        } else {
            self.high_seq = pkt.seq + 1;
        }
    }

    /// Where the connection's data is in order up to, in the units of its messages' ends
    /// (`Message::end`): packets received in order on the window transport, bytes delivered
    /// on the message transport (in order under go-back-N; selective repeat counts the bytes
    /// placed beyond a hole too).
    pub(crate) fn in_order(&self) -> u64 {
        match &self.rx {
            Rx::Window(w) => w.rcv_nxt() as u64,
            _ => self.stats.delivered_bytes,
        }
    }

    /// A message flow's receiving end.
    pub fn message_rx(&mut self) -> &mut MessageRx {
        match &mut self.rx {
            Rx::Message(m) => m,
            _ => unreachable!("a message-transport path reached a window flow"),
        }
    }
}

/// The transport a flow runs on, held in the connection's record: a box was one more
/// dependent cache miss on every ACK at a thousand hosts.
pub enum Tx {
    /// NIC-offloaded messages paced by a rate controller (TIMELY's RDMA transport).
    Message(MessageTx),
    /// TCP-like packets under a congestion window, with loss recovery.
    Window(WindowTx),
}

/// The receiving end of the transport a flow runs on.
#[derive(Default)]
pub enum Rx {
    /// An empty slot of `FlowTable::rx`.
    #[default]
    None,
    Message(MessageRx),
    Window(WindowRx),
}

/// What a connection that carries messages (data only when offered) carries, and for which
/// generator.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Feed {
    /// An RPC generator's requests (client to server) or responses.
    Rpc { request: bool, generator: u32 },
    /// A generator's transfers, each a message: a job's between two of its ranks
    /// (`jobs.connections = "persistent"`), a matrix's on a connection that outlives them.
    Transfers { generator: u32 },
}

/// The messages on their way on a connection that carries them, at its receiver.
pub struct Inbox {
    pub queue: VecDeque<Message>,
    pub feed: Feed,
    /// The longest wait between deliveries while the oldest message is on its way.
    pub outage: Time,
}

/// A message offered on a connection.
#[derive(Copy, Clone, Debug)]
pub struct Message {
    /// Where it ends in its connection's order (`Flow::offer`): in bytes on the message
    /// transport, in packets on the window transport (each message from a packet of its own).
    pub end: u64,
    /// When it was offered.
    pub issued: Time,
    /// An RPC's client (its index in its generator), or the transfer's number in its generator.
    pub tag: u32,
    /// A generator's transfer: its bytes and its FCT alone on the idle network (`ideal_fct`).
    pub bytes: u64,
    pub ideal: Time,
}

/// A connection end's counters, in the order they are counted (`repr(C)`): the sender's per
/// ACK, then the receiver's per data packet, then the rest.
#[derive(Default, Clone, Debug)]
#[repr(C)]
pub struct FlowStats {
    /// Payload put on the wire by the sender, retransmissions included.
    pub tx_bytes: u64,
    /// Packets sent again, their payload, and retransmission timeouts (the message
    /// transport's local ACK timeouts).
    pub retransmits: u64,
    pub retransmitted_bytes: u64,
    pub rtt_samples: u64,
    pub interval_rtt_samples: u64,
    pub rtt_sum: u128,
    /// RTT samples since the last time-series sample (whole run, for `timeseries.rtt_us`).
    pub interval_rtt_sum: u128,
    /// Distinct payload bytes that reached the receiver.
    pub delivered_bytes: u64,
    /// Payload that reached the receiver and was not delivered: a copy of data delivered before
    /// (a spurious retransmission), or, on the message transport, data beyond a gap, which
    /// go-back-N discards.
    pub duplicate_bytes: u64,
    /// Delivered after the warm-up: payload, and wire bytes with headers.
    pub measured_bytes: u64,
    pub measured_wire_bytes: u64,
    /// Payload of data packets that reached the receiver marked CE: what it echoes (ECE).
    pub ecn_echoed_bytes: u64,
    /// Data packets that arrived after one of the connection's with a higher sequence number,
    /// retransmissions not counted (RFC 4737's reordered packets).
    pub reordered: u64,
    /// Retransmitted data packets whose data the receiver already had.
    pub spurious_retransmits: u64,
    pub last_delivery: Time,
    /// Receiver: the longest time without new data delivered while the transfer was under
    /// way (from its start to its last byte), and when data last came (`ZERO`: not yet).
    pub outage: Time,
    pub timeouts: u64,
    /// ACKs the sender received (whole segments' on the message transport).
    pub acks: u64,
    /// NAKs the sender received: the message transport's, Ultra Ethernet's NACKs.
    pub naks: u64,
    /// Data packets of the flow a switch trimmed (`switch.trimming`), counted as their headers
    /// reach the receiver.
    pub trims: u64,
    /// Path labels the sender took after its first (PLB, PRR), and with PRR the receiver's
    /// for its ACKs.
    pub repaths: u64,
    /// Data packets of the flow dropped anywhere (switch buffers, host NIC Rx queues, faults),
    /// and of those the ones lost to a link down and lost silently (`[[faults]]`).
    pub drops: u64,
    pub drops_down: u64,
    pub drops_silent: u64,
    pub inflight_since: Time,
    /// When the last byte of a sized flow was delivered.
    pub finish: Option<Time>,
    pub size: Option<u64>,
    /// Message transport: ∫ outstanding bytes dt (released to the NIC, not yet completed) in
    /// byte·ps from the warm-up on, credited up to `inflight_since`.
    pub inflight_area: u128,
}

impl FlowStats {
    /// Adds a retired flow's counters to these totals.
    pub fn absorb(&mut self, o: &FlowStats) {
        // Destructured so that a field added later needs its rule here.
        let FlowStats {
            tx_bytes,
            delivered_bytes,
            duplicate_bytes,
            measured_bytes,
            measured_wire_bytes,
            rtt_sum,
            rtt_samples,
            retransmits,
            retransmitted_bytes,
            timeouts,
            acks,
            naks,
            trims,
            repaths,
            reordered,
            spurious_retransmits,
            drops,
            drops_down,
            drops_silent,
            outage,
            ecn_echoed_bytes,
            inflight_area,
            // One connection's own, not totals: the time series' interval, the in-flight
            // integral's last change, a sized flow's finish and size, its last delivery.
            last_delivery: _,
            interval_rtt_sum: _,
            interval_rtt_samples: _,
            inflight_since: _,
            finish: _,
            size: _,
        } = o;
        self.tx_bytes += tx_bytes;
        self.delivered_bytes += delivered_bytes;
        self.duplicate_bytes += duplicate_bytes;
        self.measured_bytes += measured_bytes;
        self.measured_wire_bytes += measured_wire_bytes;
        self.rtt_sum += rtt_sum;
        self.rtt_samples += rtt_samples;
        self.retransmits += retransmits;
        self.retransmitted_bytes += retransmitted_bytes;
        self.timeouts += timeouts;
        self.acks += acks;
        self.naks += naks;
        self.trims += trims;
        self.repaths += repaths;
        self.reordered += reordered;
        self.spurious_retransmits += spurious_retransmits;
        self.drops += drops;
        self.drops_down += drops_down;
        self.drops_silent += drops_silent;
        self.outage = self.outage.max(*outage);
        self.ecn_echoed_bytes += ecn_echoed_bytes;
        self.inflight_area += inflight_area;
    }

    /// Credits the in-flight integral with `bytes` outstanding since the last change, counting
    /// from `from` (the warm-up's end) on. Called before the outstanding bytes change.
    pub fn credit_inflight(&mut self, now: Time, from: Time, bytes: u64) {
        let since = self.inflight_since.max(from);
        if now > since {
            self.inflight_area += bytes as u128 * (now - since).ps() as u128;
        }
        self.inflight_since = now;
    }
}

/// The `[[workloads]]` generator, and its source (index among the generator's), that started
/// a workload flow.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub generator: u32,
    pub source: u32,
}

/// What a new connection is.
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    pub class: u8,
    pub group: u16,
    /// Starts at `start` plus a uniform draw in [0, start_jitter] (the first draw of its stream).
    pub start: Time,
    pub start_jitter: Time,
    pub stop: Time,
    /// Bytes in all (`None`: unbounded or on demand).
    pub size: Option<u64>,
    /// Application write size (window transport): a smaller write is a packet of its own.
    pub write: Option<u64>,
    pub app: Option<App>,
    /// Window transport: the application pacing the connection (`None`: backlogged).
    pub onoff: Option<OnOff>,
    pub ephemeral: Option<Origin>,
    /// A connection that carries messages (data only when offered): what they are.
    pub feed: Option<Feed>,
}

impl FlowSpec {
    /// A connection a workload opens at `now` from `src` to `dst` in `class` and `group`:
    /// unsized, with no application, jitter or stop, of no generator's transfer; a caller sets
    /// what its kind of connection has beside.
    pub(crate) fn opened_now(src: u32, dst: u32, class: u8, group: u16, now: Time) -> FlowSpec {
        FlowSpec {
            src,
            dst,
            class,
            group,
            start: now,
            start_jitter: Time::ZERO,
            stop: Time::MAX,
            size: None,
            write: None,
            app: None,
            onoff: None,
            ephemeral: None,
            feed: None,
        }
    }

    /// Payload of a full packet: the MSS, or the write size when smaller.
    pub(crate) fn packet_bytes(&self, mss: u64) -> u64 {
        self.write.map_or(mss, |w| w.min(mss))
    }
}

/// First well-known destination port of the 5-tuple: RoCEv2's UDP port for the message
/// transport, an arbitrary server port for the window transport.
pub(crate) const ROCEV2_PORT: u16 = 4791;
pub(crate) const TCP_PORT: u16 = 5001;

/// The FCT of `size` payload bytes sent alone at line rate over links `(rate, delay)` in
/// order: MTU packets of `mss` payload plus `header`, store and forward at every hop, no
/// transport limits (window, pacing). The full packets form a train whose `k`-th packet leaves
/// hop `j` at `Σ_{i<j} delay_i + Σ_{i≤j} ser_i + (k − 1)·max_{i≤j} ser_i`; the shorter last
/// packet follows it through every hop. This is the denominator of the FCT slowdown (HPCC §5;
/// reference algorithms.md §9.1).
pub fn ideal_fct(size: u64, mss: u64, header: u64, links: &[(Rate, Time)]) -> Time {
    let n = size.div_ceil(mss).max(1);
    let last = size - (n - 1) * mss + header;
    let full = mss + header;
    let (mut prop, mut ser_sum, mut ser_max) = (Time::ZERO, Time::ZERO, Time::ZERO);
    let mut last_done = Time::ZERO;
    for (j, &(rate, delay)) in links.iter().enumerate() {
        let s = rate.serialization(full);
        ser_sum += s;
        ser_max = ser_max.max(s);
        // When the last full packet has left hop j (no full packet: the link is free at once).
        let train_done = if n > 1 { prop + ser_sum + Time(ser_max.ps().saturating_mul(n - 2)) } else { Time::ZERO };
        let arrive = if j == 0 { Time::ZERO } else { last_done + links[j - 1].1 };
        last_done = arrive.max(train_done) + rate.serialization(last);
        prop += delay;
    }
    last_done + links.last().map_or(Time::ZERO, |l| l.1)
}

impl Flow {
    /// The flow's sending rate now: the rate controller's target, or for a window flow
    /// `cwnd / smoothed RTT`.
    pub fn rate(&self) -> Rate {
        match &self.tx {
            Tx::Message(m) => m.cc.rate(),
            Tx::Window(w) => w.rate(),
        }
    }

    /// What the flow's congestion controller reports of its state.
    pub fn cc_metrics(&self) -> Metrics {
        match &self.tx {
            Tx::Message(m) => m.cc.metrics(),
            Tx::Window(w) => w.metrics(),
        }
    }

    /// Where the connection's data is acknowledged up to, in the units of its messages' ends
    /// (`Message::end`): packets on the window transport, bytes on the message transport.
    pub(crate) fn acked(&self) -> u64 {
        match &self.tx {
            Tx::Message(m) => m.snd_una(),
            Tx::Window(w) => w.una() as u64,
        }
    }

    /// A message flow's transport state.
    pub fn message_tx(&self) -> Option<&MessageTx> {
        match &self.tx {
            Tx::Message(m) => Some(m),
            Tx::Window(_) => None,
        }
    }

    pub fn message(&mut self) -> &mut MessageTx {
        match &mut self.tx {
            Tx::Message(m) => m,
            Tx::Window(_) => unreachable!("a message-transport path reached a window flow"),
        }
    }

    /// The sender still holds data it has not sent once: its last byte reaches the receiver
    /// at least a link's delay after now ([`crate::parallel`]: a run that ends when its flows
    /// finish cannot end before then).
    pub(crate) fn unsent(&self) -> bool {
        match &self.tx {
            Tx::Message(m) => m.unsent(),
            Tx::Window(w) => w.unsent(),
        }
    }

    /// A connection the flows table and time series list: not a workload's one-off transfer.
    pub fn listed(&self) -> bool {
        self.open && self.ephemeral.is_none()
    }
}

/// Connections, each in a slot of its sending host's table: a connection's id is its slot
/// number above its host's (`slot << host_bits | host`), so that a host numbers its own
/// connections whatever other hosts do (and a partition of the network, [`crate::parallel`],
/// numbers them as the whole network does). Receivers keep their ends in a table numbered
/// alike. A retired workload flow's slot goes on its host's free list until reused, and its
/// counters into `retired`.
#[derive(Default)]
pub(crate) struct FlowTable {
    pub slots: Slots<Flow>,
    pub rx: Slots<RxEnd>,
    /// Counters of retired workload flows (both ends), and how many there were.
    pub retired: FlowStats,
    pub retired_count: u64,
    /// `until = "flows_done"`: what decides the end.
    pub done: Option<FlowsDone>,
}

/// `until = "flows_done"`: the connections the run waits for, as this network (or partition,
/// [`crate::parallel`]) has seen them finish. The run ends once every sized `[[flows]]`
/// connection and, with `measure.fct_until`, every workload flow the FCT statistics count has
/// its last byte, and the counted window is over.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FlowsDone {
    /// `[[flows]]` connections in all, and those finished here.
    pub total: u64,
    pub finished: u64,
    /// Counted workload flows opened here less those finished here.
    pub counted: i64,
    /// When the last connection the run waits for (a `[[flows]]` one, a counted workload
    /// flow) finished here.
    pub last: Time,
    /// When the first connection finished here at or after `measure.fct_until` (`Time::MAX`:
    /// none yet): the counted window is over.
    pub first_over: Time,
}

impl Default for FlowsDone {
    fn default() -> Self {
        FlowsDone { total: 0, finished: 0, counted: 0, last: Time::ZERO, first_over: Time::MAX }
    }
}

impl FlowsDone {
    /// A connection finished here `now`: a `[[flows]]` one (`ephemeral` false), or a
    /// workload flow the FCT statistics count (`counted`) or not.
    pub fn finish(&mut self, now: Time, ephemeral: bool, counted: bool, fct_until: Time) {
        let waited_for = !ephemeral || (counted && fct_until != Time::MAX);
        match ephemeral {
            true => self.counted -= waited_for as i64,
            false => self.finished += 1,
        }
        if waited_for {
            self.last = now;
        }
        if now >= fct_until && self.first_over == Time::MAX {
            self.first_over = now;
        }
    }

    /// When these counts (added up over every partition) say the run's connections were all
    /// done: `None` while the run waits. That is the latest finish of a connection it waits
    /// for, or the first finish past `fct_until` if that came later.
    pub fn done_at(all: impl IntoIterator<Item = FlowsDone>, fct_until: Time) -> Option<Time> {
        let mut sum = FlowsDone::default();
        for d in all {
            sum = FlowsDone {
                total: d.total,
                finished: sum.finished + d.finished,
                counted: sum.counted + d.counted,
                last: sum.last.max(d.last),
                first_over: sum.first_over.min(d.first_over),
            };
        }
        let over = fct_until == Time::MAX || sum.first_over != Time::MAX;
        let at = if fct_until == Time::MAX { sum.last } else { sum.last.max(sum.first_over) };
        (sum.finished == sum.total && sum.counted == 0 && over).then_some(at)
    }

    /// The end these counts give: `None` while the run waits. The run ends at the end of the
    /// lookahead grid's cell (`step`, the fabric's shortest link delay) that holds the moment
    /// its connections were all done (`done_at`), so that any cut of the network ends it at
    /// the same instant.
    pub fn end(all: impl IntoIterator<Item = FlowsDone>, fct_until: Time, warmup: Time, step: Time) -> Option<Time> {
        FlowsDone::done_at(all, fct_until).map(|t| FlowsDone::end_at(t, warmup, step))
    }

    /// The end of a run whose connections were all done at `t`: the last instant of its grid
    /// cell, and not before the warm-up's end.
    pub fn end_at(t: Time, warmup: Time, step: Time) -> Time {
        grid_end(t, step).max(warmup)
    }
}

/// The last instant of the cell of a grid of `step` that holds `t`.
pub(crate) fn grid_end(t: Time, step: Time) -> Time {
    match step.ps() {
        0 => t,
        s => Time((t.ps() / s).saturating_add(1).saturating_mul(s) - 1),
    }
}

/// A connection with both ends' counters (`FlowTable::stats`); the sender's record otherwise.
pub struct FlowView<'a> {
    pub id: u32,
    pub stats: FlowStats,
    pub(crate) flow: &'a Flow,
}

impl FlowView<'_> {
    /// Where the connection stands in the tables (`FlowTable::listed`).
    pub fn listing_order(&self) -> (u32, u16, u32, u32) {
        (self.order, self.group, self.src, self.serial)
    }
}

impl std::ops::Deref for FlowView<'_> {
    type Target = Flow;
    fn deref(&self) -> &Flow {
        self.flow
    }
}

/// Per-connection records, host by host.
pub(crate) struct Slots<T> {
    hosts: Vec<HostSlots<T>>,
    host_bits: u32,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots { hosts: Vec::new(), host_bits: 0 }
    }
}

/// One host's records.
struct HostSlots<T> {
    slots: Vec<T>,
    free: Vec<u32>,
    /// Connections the host has opened (the serial number of its next one).
    opened: u32,
}

impl FlowTable {
    /// The table of a network of `hosts` hosts.
    pub fn new(hosts: u32) -> FlowTable {
        FlowTable { slots: Slots::new(hosts), rx: Slots::new(hosts), ..FlowTable::default() }
    }

    /// Flow `f`'s counters, both ends' (a retired flow's receiver counts in its end until the
    /// slot's next connection arrives).
    pub fn stats(&self, f: u32) -> FlowStats {
        let flow = &self.slots[f];
        let mut st = flow.stats.clone();
        if let Some(rx) = self.rx.get(f).filter(|r| r.serial == flow.serial) {
            st.absorb(&rx.stats);
            (st.finish, st.last_delivery) = (rx.stats.finish, rx.stats.last_delivery);
        }
        st
    }

    /// Every connection in a slot, with both ends' counters, by sending host.
    pub fn views(&self) -> impl Iterator<Item = FlowView<'_>> {
        self.slots.iter().map(|(id, flow)| FlowView { id, stats: self.stats(id), flow })
    }

    /// The connections the flows table and time series list (`Flow::listed`), in their order:
    /// the `[[flows]]` groups' in the order the scenario names them, then those opened during
    /// the run (RPC connections) by traffic group, sending host and serial number there. A
    /// listed connection's number in the tables is its place here (listed connections are
    /// never retired, so the number holds for the whole run).
    pub fn listed(&self) -> Vec<FlowView<'_>> {
        let mut v: Vec<FlowView> = self.views().filter(|f| f.listed()).collect();
        v.sort_by_key(FlowView::listing_order);
        v
    }

    /// Counters of every connection: the open ones (both ends), the receiving ends of retired
    /// ones still held, and the retired totals.
    pub fn all_stats(&self) -> impl Iterator<Item = &FlowStats> {
        self.slots
            .iter()
            .map(|(_, f)| f)
            .filter(|f| f.open)
            .map(|f| &f.stats)
            .chain(self.rx.iter().map(|(_, r)| &r.stats))
            .chain(std::iter::once(&self.retired))
    }
}

impl FlowTable {
    /// Whether flow `f`'s slot still holds connection `serial` at its sender, compared on the
    /// bits of `mask` (a packet carries the whole serial number, a timer event `TIMER_SERIAL`'s
    /// bits): otherwise what names it is stale.
    #[inline]
    pub fn sending(&self, f: u32, serial: u32, mask: u32) -> bool {
        self.slots.get(f).is_some_and(|x| x.open && x.serial & mask == serial)
    }

    /// Connection `f`'s receiving end, for its receiver: in the slot if it is empty, else
    /// next (`RxEnd`).
    pub fn install_rx(&mut self, f: u32, end: RxEnd) {
        let slot = self.rx.entry(f);
        if slot.serial == u32::MAX {
            *slot = end;
        } else {
            slot.next = Some(Box::new(end));
        }
    }
}

impl<T> Slots<T> {
    fn new(hosts: u32) -> Slots<T> {
        let host_bits = u32::BITS - hosts.saturating_sub(1).leading_zeros();
        Slots { hosts: (0..hosts).map(|_| HostSlots { slots: Vec::new(), free: Vec::new(), opened: 0 }).collect(), host_bits }
    }

    #[inline]
    fn split(&self, f: u32) -> (usize, usize) {
        ((f & ((1 << self.host_bits) - 1)) as usize, (f >> self.host_bits) as usize)
    }

    /// The sending host of connection `f`.
    #[inline]
    pub fn host_of(&self, f: u32) -> u32 {
        self.split(f).0 as u32
    }

    pub fn get(&self, f: u32) -> Option<&T> {
        let (h, slot) = self.split(f);
        self.hosts.get(h)?.slots.get(slot)
    }

    pub fn get_mut(&mut self, f: u32) -> Option<&mut T> {
        let (h, slot) = self.split(f);
        self.hosts.get_mut(h)?.slots.get_mut(slot)
    }

    /// Every slot with its id, by sending host, then slot.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        let bits = self.host_bits;
        self.hosts.iter().enumerate().flat_map(move |(h, t)| t.slots.iter().enumerate().map(move |(i, f)| ((i as u32) << bits | h as u32, f)))
    }

    /// Slots in all (the table's memory high-water mark).
    pub fn len(&self) -> usize {
        self.hosts.iter().map(|t| t.slots.len()).sum()
    }
}

impl<T: Default> Slots<T> {
    /// Slot `f`, made (with every slot before it at its host) if the table is shorter.
    pub fn entry(&mut self, f: u32) -> &mut T {
        let (h, slot) = self.split(f);
        let t = &mut self.hosts[h].slots;
        if t.len() <= slot {
            t.resize_with(slot + 1, T::default);
        }
        &mut t[slot]
    }
}

impl<T> Slots<T> {
    /// Host `h`'s records, exchanged with `other`'s (the partition that owns `h` hands them
    /// over, [`crate::parallel`]).
    pub(crate) fn swap_host(&mut self, other: &mut Slots<T>, h: usize) {
        std::mem::swap(&mut self.hosts[h], &mut other.hosts[h]);
    }

    /// Every slot of every host, taken out.
    pub(crate) fn drain(&mut self) -> Vec<(u32, T)> {
        let bits = self.host_bits;
        let mut out = Vec::new();
        for (h, t) in self.hosts.iter_mut().enumerate() {
            out.extend(t.slots.drain(..).enumerate().map(|(i, x)| ((i as u32) << bits | h as u32, x)));
        }
        out
    }
}

impl Slots<Flow> {
    /// The serial number of host `h`'s next connection, taken.
    pub fn next_serial(&mut self, h: u32) -> u32 {
        let t = &mut self.hosts[h as usize];
        t.opened += 1;
        t.opened - 1
    }

    /// Puts `flow` in a free slot of its sender's table (or a new one) and returns its id.
    pub fn insert(&mut self, flow: Flow) -> u32 {
        let h = flow.src;
        let t = &mut self.hosts[h as usize];
        let slot = match t.free.pop() {
            Some(i) => {
                t.slots[i as usize] = flow;
                i
            }
            None => {
                t.slots.push(flow);
                t.slots.len() as u32 - 1
            }
        };
        assert!(slot < 1 << (u32::BITS - self.host_bits) >> 1, "host {h}: more connections at once than connection ids hold");
        slot << self.host_bits | h
    }

    /// Slot `f` is free again.
    pub fn free(&mut self, f: u32) {
        let (h, slot) = self.split(f);
        self.hosts[h].free.push(slot as u32);
    }

    /// Connections opened so far.
    pub fn opened(&self) -> u64 {
        self.hosts.iter().map(|t| t.opened as u64).sum()
    }
}

impl<T> std::ops::Index<u32> for Slots<T> {
    type Output = T;
    #[inline]
    fn index(&self, f: u32) -> &T {
        let (h, slot) = self.split(f);
        &self.hosts[h].slots[slot]
    }
}

impl<T> std::ops::IndexMut<u32> for Slots<T> {
    #[inline]
    fn index_mut(&mut self, f: u32) -> &mut T {
        let (h, slot) = self.split(f);
        &mut self.hosts[h].slots[slot]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ideal_fct_by_hand() {
        let g10 = Rate(10_000_000_000);
        let us = Time::from_us(1);
        // One 1500 B packet (1436 payload + 64 header) over two 10 Gbps, 1 µs links:
        // 2 × (1.2 µs serialization + 1 µs).
        assert_eq!(ideal_fct(1436, 1436, 64, &[(g10, us), (g10, us)]), Time(4_400_000));
        // 4000 B = 1436 + 1436 + 1128: the last packet (1192 B, 0.9536 µs) leaves the first hop
        // after two full ones and waits behind the second at the next: 2·1 µs + 3·1.2 + 0.9536.
        assert_eq!(ideal_fct(4000, 1436, 64, &[(g10, us), (g10, us)]), Time(6_553_600));
        // A 2.5 Gbps bottleneck in the middle: full 4.8 µs there, the train spreads.
        let slow = Rate(2_500_000_000);
        let t = ideal_fct(4000, 1436, 64, &[(g10, us), (slow, us), (g10, us)]);
        // Packet 2 leaves hop 2 at 1 + 1.2 + 4.8 + 4.8 = 11.8 µs; the last packet follows at
        // 11.8 + 3.8144 = 15.6144, then 1 µs + 0.9536 + 1 µs.
        assert_eq!(t, Time(18_568_000));
    }
}
