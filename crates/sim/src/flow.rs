//! A connection: its endpoints, class and start, what it has delivered, and the transport state
//! that moves its data (`transport::message` or `transport::window`); how connections open,
//! finish and, for workload flows, give their slot back.

use crate::ids::PktId;
use crate::engine::{rng_stream, splitmix64, Rng, Stream};
use crate::network::Network;
use crate::packet::Packet;
use crate::routing::five_tuple_hash;
use crate::scenario::{CcConfig, TransportConfig};
use crate::transport::message::{App, MessageTx};
use crate::transport::onoff::OnOff;
use crate::transport::window::WindowTx;
use rand::Rng as _;
use crate::packet::IntStack;
use rttlab_cc::hpcc::BaseRtt;
use rttlab_cc::{Dcqcn, Dctcp, Fast, Hpcc, LineRate, Metrics, PatchedTimely, Rate, RateController, Reno, Swift, Time, Timely, Vegas, WindowController};
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
    pub tx: Tx,
}

/// The transport a flow runs on.
pub enum Tx {
    /// NIC-offloaded messages paced by a rate controller (TIMELY's RDMA transport).
    Message(Box<MessageTx>),
    /// TCP-like packets under a congestion window, with loss recovery.
    Window(Box<WindowTx>),
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
    fn packet_bytes(&self, mss: u64) -> u64 {
        self.write.map_or(mss, |w| w.min(mss))
    }
}

/// First well-known destination port of the 5-tuple: RoCEv2's UDP port for the message
/// transport, an arbitrary server port for the window transport.
const ROCEV2_PORT: u16 = 4791;
const TCP_PORT: u16 = 5001;

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

    /// A connection the flows table and time series list: not a workload's one-off transfer.
    pub fn listed(&self) -> bool {
        self.open && self.ephemeral.is_none()
    }
}

impl Network {
    /// The transport and controller of a new connection, as the scenario says (validation
    /// guarantees the controller fits the transport).
    fn make_tx(&self, line_rate: Rate, base_rtt: Time, spec: &mut FlowSpec) -> Tx {
        let mss = self.cfg.payload_per_packet as u64;
        match &self.cfg.transport {
            TransportConfig::Window(w) => {
                let mss = spec.packet_bytes(mss);
                let cc: Box<dyn WindowController> = match &self.cfg.cc {
                    CcConfig::Reno(p) => Box::new(Reno::new(p.clone(), mss)),
                    CcConfig::Dctcp(p) => Box::new(Dctcp::new(p.clone(), mss)),
                    CcConfig::Vegas(p) => Box::new(Vegas::new(p.clone(), mss)),
                    CcConfig::Swift(p) => Box::new(Swift::new(p.clone(), mss)),
                    _ => unreachable!("validated: window controller"),
                };
                Tx::Window(Box::new(WindowTx::new(cc, w.clone(), mss as u32, spec.size, spec.start, spec.stop, spec.onoff.take())))
            }
            TransportConfig::Message => {
                let cc: Box<dyn RateController> = match &self.cfg.cc {
                    CcConfig::None => Box::new(LineRate(line_rate)),
                    CcConfig::Timely(p) => Box::new(Timely::new(p.clone(), line_rate)),
                    CcConfig::PatchedTimely(p) => Box::new(PatchedTimely::new(p.clone(), line_rate)),
                    CcConfig::Fast(p) => Box::new(Fast::new(p.clone(), line_rate)),
                    CcConfig::Hpcc(p) => {
                        let t = match p.base_rtt {
                            BaseRtt::Max => self.cfg.max_base_rtt,
                            BaseRtt::Path => base_rtt,
                            BaseRtt::Fixed(t) => t,
                        };
                        Box::new(Hpcc::new(p.clone(), line_rate, t))
                    }
                    CcConfig::Dcqcn(p) => Box::new(Dcqcn::new(p.clone(), line_rate)),
                    _ => unreachable!("validated: rate controller"),
                };
                Tx::Message(Box::new(MessageTx::new(cc, spec.size, spec.app.take(), spec.demand, spec.start, spec.stop)))
            }
        }
    }

    /// Opens a connection in a free slot (or a new one) and returns its id. The 5-tuple's
    /// source port is an ephemeral port (49152–65535) drawn from the seed and the connection's
    /// serial number, so ECMP paths change with the seed.
    pub(crate) fn open_flow(&mut self, mut spec: FlowSpec) -> u32 {
        let serial = self.flows.opened;
        self.flows.opened += 1;
        let mut rng = rng_stream(self.cfg.seed, Stream::Flow(serial as u32));
        spec.start += Time(rand::Rng::random_range(&mut rng, 0..=spec.start_jitter.ps()));
        if let Some(app) = &mut spec.app {
            app.next_message = spec.start;
        }
        if let Some(onoff) = &mut spec.onoff {
            onoff.start = spec.start;
        }
        let sport = 49152 + (splitmix64(self.cfg.seed ^ serial ^ 0x5eed_f10f) % 16384) as u16;
        let dport = if matches!(self.cfg.transport, TransportConfig::Window(_)) { TCP_PORT } else { ROCEV2_PORT };
        let hash = [five_tuple_hash(self.cfg.seed, spec.src, spec.dst, sport, dport), five_tuple_hash(self.cfg.seed, spec.dst, spec.src, dport, sport)];
        let ideal = match spec.size {
            Some(size) => {
                let links: Vec<(Rate, Time)> =
                    self.path(spec.src, spec.dst, hash[0]).iter().map(|&p| (self.fabric.ports[p.idx()].rate, self.fabric.ports[p.idx()].delay)).collect();
                ideal_fct(size, spec.packet_bytes(self.cfg.payload_per_packet as u64), self.cfg.header_bytes as u64, &links)
            }
            None => Time::ZERO,
        };
        let base_rtt = if self.cfg.int.is_some() { self.base_rtt(spec.src, spec.dst, hash) } else { Time::ZERO };
        let line_rate = self.fabric.hosts[spec.src as usize].line_rate;
        let tx = self.make_tx(line_rate, base_rtt, &mut spec);
        if spec.start >= self.cfg.warmup {
            self.measure.groups[spec.group as usize].flows_started += 1;
        }
        let flow = Flow {
            src: spec.src,
            dst: spec.dst,
            class: spec.class,
            start: spec.start,
            stop: spec.stop,
            hash,
            group: spec.group,
            ephemeral: spec.ephemeral,
            open: true,
            closing: false,
            live: 0,
            ideal,
            base_rtt,
            int_echo: None,
            messages: None,
            rng,
            stats: FlowStats { size: spec.size, ..Default::default() },
            tx,
        };
        match self.flows.free.pop() {
            Some(f) => {
                self.flows.slots[f as usize] = flow;
                f
            }
            None => {
                self.flows.slots.push(flow);
                self.flows.slots.len() as u32 - 1
            }
        }
    }

    /// The sender of flow `f` has everything acknowledged: a workload flow gives its slot back
    /// once none of its packets is left in the network.
    pub(crate) fn sender_done(&mut self, f: u32) {
        let flow = &mut self.flows.slots[f as usize];
        flow.closing = flow.ephemeral.is_some();
    }

    /// Retires flow `f` if it is done and has no packet left: its counters join the totals and
    /// its slot is reused. Stale timer events of the slot are harmless (`LazyTimer`).
    pub(crate) fn maybe_retire(&mut self, f: u32) {
        let flow = &mut self.flows.slots[f as usize];
        if !(flow.closing && flow.live == 0 && flow.open) {
            return;
        }
        flow.open = false;
        flow.closing = false;
        self.flows.retired.absorb(&flow.stats);
        self.flows.retired_count += 1;
        self.flows.free.push(f);
    }

    /// Allocates a data or ACK packet of its flow, counted alive until `free_packet`.
    pub(crate) fn alloc_packet(&mut self, p: Packet) -> PktId {
        self.flows.slots[p.flow as usize].live += 1;
        self.measure.data_sent += (p.kind == crate::packet::PacketKind::Data) as u64;
        self.pkts.alloc(p)
    }

    /// Frees data or ACK packet `i`.
    pub(crate) fn free_packet(&mut self, i: PktId) {
        let f = self.pkts.get(i).flow;
        self.flows.slots[f as usize].live -= 1;
        self.pkts.free(i);
    }

    /// Receiver side of either transport: `payload` new bytes of flow `f` arrived.
    pub(crate) fn record_delivery(&mut self, f: u32, payload: u32, wire: u32) {
        let now = self.now;
        let flow = &mut self.flows.slots[f as usize];
        let st = &mut flow.stats;
        st.delivered_bytes += payload as u64;
        if now >= self.cfg.warmup {
            st.measured_bytes += payload as u64;
            st.measured_wire_bytes += wire as u64;
            self.measure.groups[flow.group as usize].delivered_bytes += payload as u64;
        }
        if st.size == Some(st.delivered_bytes) {
            st.finish = Some(now);
            if let Some(origin) = flow.ephemeral {
                self.generators[origin.generator as usize].finished(origin.source);
            } else if let Some(pending) = &mut self.flows.pending {
                *pending -= 1;
                if *pending == 0 {
                    // The last connection is done: the run ends once the events of this instant
                    // have happened (`Network::run` stops after `end`).
                    self.cfg.end = now.max(self.cfg.warmup);
                }
            }
            if flow.start >= self.cfg.warmup {
                let (size, fct, ideal) = (st.delivered_bytes, now - flow.start, flow.ideal);
                self.measure.groups[flow.group as usize].record_fct(&self.measure.fct_buckets, size, fct, ideal);
                if let Some(r) = &mut self.measure.flow_records {
                    r.push(crate::stats::FlowRecord { group: flow.group, src: flow.src, dst: flow.dst, size, start: flow.start, fct, ideal });
                }
            }
        }
        if flow.messages.as_ref().is_some_and(|m| m.queue.front().is_some_and(|m| m.end <= st.delivered_bytes)) {
            self.messages_delivered(f);
        }
    }

    /// Sender side of either transport: flow `f`'s measured RTT `rtt` as its stack sees it, with
    /// `nic.rtt_noise` (uniform in [0, rtt_noise], from the sending host's stream) added — TIMELY
    /// §6.1, Fig. 12.
    pub(crate) fn noisy_rtt(&mut self, f: u32, rtt: Time) -> Time {
        noisy(rtt, self.cfg.rtt_noise, &mut self.fabric.hosts[self.flows.slots[f as usize].src as usize].rng)
    }

    /// Sender side of either transport: an RTT sample of flow `f`, counted after the warm-up.
    pub(crate) fn record_rtt(&mut self, f: u32, rtt: Time) {
        let st = &mut self.flows.slots[f as usize].stats;
        st.interval_rtt_sum += rtt.ps() as u128;
        st.interval_rtt_samples += 1;
        if self.now >= self.cfg.warmup {
            st.rtt_sum += rtt.ps() as u128;
            st.rtt_samples += 1;
            self.measure.rtt_hist.record(crate::stats::ns(rtt)).expect("auto-resizing histogram");
        }
    }
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
