//! A connection: its endpoints, class and start, what it has delivered, and the transport state
//! that moves its data (`transport::message` or `transport::window`); how connections open,
//! finish and, for workload flows, give their slot back.

use crate::engine::Rng;
use crate::transport::message::{App, MessageRx, MessageTx};
use crate::transport::onoff::OnOff;
use crate::transport::window::{WindowRx, WindowTx};
use rand::Rng as _;
use crate::packet::IntStack;
use rttlab_cc::{Metrics, Rate, Time};
use std::collections::VecDeque;

pub struct Flow {
    pub src: u32,
    pub dst: u32,
    pub class: u8,
    pub start: Time,
    /// No new data from this time on (`Time::MAX`: never).
    pub stop: Time,
    /// ECMP hashes of the 5-tuple: data direction, ACK direction.
    pub hash: [u32; 2],
    /// The traffic group it belongs to (`Network::groups`).
    pub group: u16,
    /// A workload flow (one sized transfer whose slot is reused once it is done): the
    /// generator and source that started it.
    pub ephemeral: Option<Origin>,
    /// The slot holds a connection (false once an ephemeral flow is retired).
    pub open: bool,
    /// The sender has everything acknowledged; retired once no packet of it is left.
    pub(crate) closing: bool,
    /// Data and ACK packets of this flow alive in the network.
    pub(crate) live: u32,
    /// FCT of this flow alone on an idle network (`ideal_fct`); zero when unsized.
    pub ideal: Time,
    /// Its unloaded round trip (`Network::base_rtt`), with telemetry on; else zero.
    pub base_rtt: Time,
    /// Window receiver with telemetry: the last data packet's records, for its next ACK.
    pub(crate) int_echo: Option<Box<IntStack>>,
    /// RPC connections: the messages in flight on it.
    pub messages: Option<Box<Messages>>,
    pub rng: Rng,
    pub stats: FlowStats,
    /// The sending end's transport, at `src`.
    pub tx: Tx,
    /// The receiving end's, at `dst`.
    pub rx: Rx,
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
pub enum Rx {
    Message(MessageRx),
    Window(WindowRx),
}

/// An RPC connection's messages: each is complete when the receiver's in-order delivered bytes
/// reach its `end` (the message transport delivers in order).
pub struct Messages {
    pub queue: VecDeque<Message>,
    /// Bytes offered on the connection so far.
    pub offered: u64,
    /// The connection in the other direction.
    pub peer: u32,
    /// Requests (client to server) or responses.
    pub request: bool,
    /// The RPC generator it belongs to.
    pub generator: u32,
}

#[derive(Copy, Clone, Debug)]
pub struct Message {
    pub end: u64,
    /// When the RPC was issued.
    pub issued: Time,
    /// The issuing client's index in its generator.
    pub client: u32,
}

#[derive(Default, Clone, Debug)]
pub struct FlowStats {
    /// Payload put on the wire by the sender, retransmissions included.
    pub tx_bytes: u64,
    /// Distinct payload bytes that reached the receiver.
    pub delivered_bytes: u64,
    /// Payload that reached the receiver and was not delivered: a copy of data delivered before
    /// (a spurious retransmission), or, on the message transport, data beyond a gap, which
    /// go-back-N discards.
    pub duplicate_bytes: u64,
    /// Delivered after the warm-up: payload, and wire bytes with headers.
    pub measured_bytes: u64,
    pub measured_wire_bytes: u64,
    pub rtt_sum: u128,
    pub rtt_samples: u64,
    /// RTT samples since the last time-series sample (whole run, for `timeseries.rtt_us`).
    pub interval_rtt_sum: u128,
    pub interval_rtt_samples: u64,
    /// Packets sent again, and retransmission timeouts (the message transport's local ACK
    /// timeouts).
    pub retransmits: u64,
    pub timeouts: u64,
    /// Message transport: NAKs the sender received (go-back-N).
    pub naks: u64,
    /// Data packets of the flow dropped anywhere (switch buffers, host NIC Rx queues).
    pub drops: u64,
    /// Payload of data packets that reached the receiver marked CE: what it echoes (ECE).
    pub ecn_echoed_bytes: u64,
    /// Message transport: ∫ outstanding bytes dt (released to the NIC, not yet completed) in
    /// byte·ps from the warm-up on, credited up to `inflight_since`.
    pub inflight_area: u128,
    pub inflight_since: Time,
    /// When the last byte of a sized flow was delivered.
    pub finish: Option<Time>,
    pub size: Option<u64>,
}

impl FlowStats {
    /// Adds a retired flow's counters to these totals.
    pub fn absorb(&mut self, o: &FlowStats) {
        self.tx_bytes += o.tx_bytes;
        self.delivered_bytes += o.delivered_bytes;
        self.duplicate_bytes += o.duplicate_bytes;
        self.measured_bytes += o.measured_bytes;
        self.measured_wire_bytes += o.measured_wire_bytes;
        self.rtt_sum += o.rtt_sum;
        self.rtt_samples += o.rtt_samples;
        self.retransmits += o.retransmits;
        self.timeouts += o.timeouts;
        self.naks += o.naks;
        self.drops += o.drops;
        self.ecn_echoed_bytes += o.ecn_echoed_bytes;
        self.inflight_area += o.inflight_area;
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
    /// Data only when offered (RPC connections).
    pub demand: bool,
}

impl FlowSpec {
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
            Tx::Window(w) => w.cc.metrics(),
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

    /// A message flow's receiving end.
    pub fn message_rx(&mut self) -> &mut MessageRx {
        match &mut self.rx {
            Rx::Message(m) => m,
            Rx::Window(_) => unreachable!("a message-transport path reached a window flow"),
        }
    }

    /// A connection the flows table and time series list: not a workload's one-off transfer.
    pub fn listed(&self) -> bool {
        self.open && self.ephemeral.is_none()
    }
}

/// Connection slots: a retired workload flow's slot goes on `free` until reused, and its
/// counters into `retired`.
#[derive(Default)]
pub(crate) struct FlowTable {
    pub slots: Vec<Flow>,
    pub free: Vec<u32>,
    /// Connections opened so far (also the serial number of the next one's random stream).
    pub opened: u64,
    /// Counters of retired workload flows, and how many there were.
    pub retired: FlowStats,
    pub retired_count: u64,
    /// `until = "flows_done"`: sized `[[flows]]` connections whose last byte has not arrived.
    pub pending: Option<u64>,
    /// `until = "flows_done"` with `measure.fct_until`: workload flows the FCT statistics count
    /// whose last byte has not arrived.
    pub counted_pending: u64,
}

/// `rtt` plus a uniform draw in [0, `noise`] from `rng` (none when `noise` is zero).
pub(crate) fn noisy(rtt: Time, noise: Time, rng: &mut Rng) -> Time {
    if noise == Time::ZERO {
        return rtt;
    }
    rtt + Time(rng.random_range(0..=noise.ps()))
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
