//! The two transports a flow can run on, as state machines that do no I/O:
//! - `message`: TIMELY's OS-bypass messaging — segments handed to the NIC at a paced rate,
//!   acknowledged whole by the receiving NIC, over a lossless (PFC) fabric;
//! - `window`: a TCP-like stack — per-packet data, cumulative and selective ACKs, a congestion
//!   window, loss recovery — for DCTCP and other window controllers over a lossy fabric.
//!
//! Nothing here knows the network: `crate::endpoint` feeds them packets, timer events and the
//! time, and carries out what they ask.

pub mod message;
pub mod multipath;
pub mod onoff;
pub mod window;

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
}

impl Timer {
    const ALL: [Timer; 6] = [Timer::Rto, Timer::DelayedAck, Timer::Start, Timer::Pace, Timer::App, Timer::Reorder];

    /// The timer an event's `b` names.
    pub fn from_u32(b: u32) -> Timer {
        Timer::ALL[b as usize]
    }
}
