//! rttlab congestion control: transport-agnostic state machines.
//!
//! This crate is TIMELY's *rate computation engine* (TIMELY §3.2, Fig. 6): feedback from the
//! transport goes in (a completion event with its RTT sample), a target rate comes out. It knows
//! nothing of the simulator — no packets, no event queue, no clock; time is passed in — so the
//! same code could drive a real transport.

pub mod patched_timely;
pub mod timely;
pub mod units;

pub use patched_timely::{PatchedTimely, PatchedTimelyParams};
pub use timely::{Timely, TimelyParams};
pub use units::{Bytes, Rate, Time};

/// A completion event: the receiver acknowledged a whole segment (TIMELY §3.1).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// When the completion was delivered to the sender.
    pub now: Time,
    /// The RTT sample: `t_completion − t_send − segment_bytes / NIC line rate` (TIMELY §3.1).
    pub rtt: Time,
    /// Payload bytes the completion acknowledges.
    pub acked_bytes: u64,
    /// The rate the application offers, for an application-limited flow; `None` when the
    /// flow always has data (TIMELY §5 "Application limited behavior").
    pub app_rate: Option<Rate>,
}

/// A rate-based congestion controller: completions in, target rate out.
pub trait RateController {
    /// Updates the state on one completion event.
    fn on_completion(&mut self, c: &Completion);
    /// The current target rate.
    fn rate(&self) -> Rate;
}

/// No congestion control: always the NIC line rate. With PFC this is the "PFC" column of
/// TIMELY's Table 1 (OS-bypass messaging over a lossless fabric, §6).
#[derive(Copy, Clone, Debug)]
pub struct LineRate(pub Rate);

impl RateController for LineRate {
    fn on_completion(&mut self, _: &Completion) {}
    fn rate(&self) -> Rate {
        self.0
    }
}
