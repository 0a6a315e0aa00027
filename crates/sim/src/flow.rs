//! A connection: its endpoints, class and start, what it has delivered, and the transport state
//! that moves its data (`transport::message` or `transport::window`).

use crate::engine::Rng;
use crate::transport::message::MessageTx;
use crate::transport::window::WindowTx;
use rttlab_cc::{Rate, Time, WindowController};

pub struct Flow {
    pub src: u32,
    pub dst: u32,
    pub class: u8,
    pub start: Time,
    /// No new data from this time on (`Time::MAX`: never).
    pub stop: Time,
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

#[derive(Default, Clone, Debug)]
pub struct FlowStats {
    /// Payload put on the wire by the sender, retransmissions included.
    pub tx_bytes: u64,
    /// Distinct payload bytes that reached the receiver.
    pub delivered_bytes: u64,
    /// Payload that reached the receiver again after an earlier copy (spurious retransmission).
    pub duplicate_bytes: u64,
    /// Delivered after the warm-up: payload, and wire bytes with headers.
    pub measured_bytes: u64,
    pub measured_wire_bytes: u64,
    pub rtt_sum: u128,
    pub rtt_samples: u64,
    /// RTT samples since the last time-series sample (whole run, for `timeseries.rtt_us`).
    pub interval_rtt_sum: u128,
    pub interval_rtt_samples: u64,
    /// Window transport: packets sent again, and retransmission timeouts.
    pub retransmits: u64,
    pub timeouts: u64,
    /// When the last byte of a sized flow was delivered.
    pub finish: Option<Time>,
    pub size: Option<u64>,
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

    /// A window flow's congestion controller.
    pub fn window_cc(&self) -> Option<&dyn WindowController> {
        match &self.tx {
            Tx::Window(w) => Some(w.cc.as_ref()),
            Tx::Message(_) => None,
        }
    }

    pub fn message(&mut self) -> &mut MessageTx {
        match &mut self.tx {
            Tx::Message(m) => m,
            Tx::Window(_) => unreachable!("a message-transport path reached a window flow"),
        }
    }

    pub fn window(&mut self) -> &mut WindowTx {
        match &mut self.tx {
            Tx::Window(w) => w,
            Tx::Message(_) => unreachable!("a window-transport path reached a message flow"),
        }
    }
}

impl crate::network::Network {
    /// Receiver side of either transport: `payload` new bytes of flow `f` arrived.
    pub(crate) fn record_delivery(&mut self, f: u32, payload: u32, wire: u32) {
        let st = &mut self.flows[f as usize].stats;
        st.delivered_bytes += payload as u64;
        if self.now >= self.warmup {
            st.measured_bytes += payload as u64;
            st.measured_wire_bytes += wire as u64;
        }
        if st.size == Some(st.delivered_bytes) {
            st.finish = Some(self.now);
        }
    }

    /// Sender side of either transport: an RTT sample of flow `f`, counted after the warm-up.
    pub(crate) fn record_rtt(&mut self, f: u32, rtt: Time) {
        let st = &mut self.flows[f as usize].stats;
        st.interval_rtt_sum += rtt.ps() as u128;
        st.interval_rtt_samples += 1;
        if self.now >= self.warmup {
            st.rtt_sum += rtt.ps() as u128;
            st.rtt_samples += 1;
            self.rtt_hist.record(rtt.ps().div_ceil(1000).max(1)).expect("auto-resizing histogram");
        }
    }
}
