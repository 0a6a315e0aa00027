//! rttlab congestion control: transport-agnostic state machines.
//!
//! Two kinds of controller, each a pure state machine that knows nothing of the simulator — no
//! packets, no event queue, no clock; time is passed in — so the same code could drive a real
//! transport:
//! - a [`RateController`] is TIMELY's *rate computation engine* (TIMELY §3.2, Fig. 6): a
//!   completion event with its RTT sample goes in, a target rate comes out (TIMELY, Patched
//!   TIMELY, FAST*), or with a window as well (HPCC, on in-band telemetry);
//! - a [`WindowController`] is a TCP congestion module: ACKs and loss signals go in, a
//!   congestion window comes out (Reno, DCTCP, Vegas, Swift).

pub mod int;
pub mod plb;
pub mod registry;
pub mod signal;
pub mod units;

registry! {
    /// Every connection sends at its NIC's line rate (Table 1's PFC column).
    "none" => None(none::LineRateParams),
    /// TIMELY (SIGCOMM 2015, Algorithm 1).
    "timely" => Timely(timely::TimelyParams),
    /// Patched TIMELY (Zhu et al., CoNEXT 2016).
    "patched_timely" => PatchedTimely(patched_timely::PatchedTimelyParams),
    /// FAST* (TIMELY §6.1): TCP FAST's equation on the pacing rate.
    "fast" => Fast(fast::FastParams),
    /// HPCC (SIGCOMM 2019) on in-band telemetry: a window and a rate.
    "hpcc" => Hpcc(hpcc::HpccParams),
    /// DCQCN (SIGCOMM 2015): CNPs from ECN marks cut a per-flow rate limiter.
    "dcqcn" => Dcqcn(dcqcn::DcqcnParams),
    /// TCP Reno/NewReno.
    "reno" => Reno(reno::RenoParams),
    /// DCTCP as in Linux.
    "dctcp" => Dctcp(dctcp::DctcpParams),
    /// TCP Vegas.
    "vegas" => Vegas(vegas::VegasParams),
    /// Swift (SIGCOMM 2020).
    "swift" => Swift(swift::SwiftParams),
    /// NSCC, Ultra Ethernet's sender congestion control (UEC 1.0; htsim_uec).
    "nscc" => Nscc(nscc::NsccParams),
}

/// A scenario without `[cc]` runs no congestion control.
impl Default for Cc {
    fn default() -> Self {
        Cc::None(none::LineRateParams {})
    }
}

pub use dcqcn::{Dcqcn, DcqcnParams};
pub use dctcp::{Dctcp, DctcpParams};
pub use fast::{Fast, FastParams};
pub use hpcc::{Hpcc, HpccParams};
pub use int::IntHop;
pub use none::LineRate;
pub use nscc::{Nscc, NsccParams};
pub use patched_timely::{PatchedTimely, PatchedTimelyParams};
pub use registry::{Algorithm, Controller, Kind, Needs, Path, Route};
pub use reno::{Reno, RenoParams};
pub use signal::Signal;
pub use swift::{Swift, SwiftParams};
pub use timely::{Timely, TimelyParams};
pub use units::{Bytes, Rate, Time};
pub use vegas::{Vegas, VegasParams};

/// A parameter value a controller cannot run with: which parameter, its value, and what is
/// allowed. The simulator names it `cc.FIELD` in its scenario errors.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field} = {value}: {allowed}")]
pub struct ParamError {
    pub field: &'static str,
    pub value: String,
    pub allowed: String,
}

impl ParamError {
    pub fn new(field: &'static str, value: impl std::fmt::Display, allowed: impl Into<String>) -> ParamError {
        ParamError { field, value: value.to_string(), allowed: allowed.into() }
    }
}

/// A completion event: the receiver acknowledged a whole segment (TIMELY §3.1).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Completion<'a> {
    /// When the completion was delivered to the sender.
    pub now: Time,
    /// The RTT sample: `t_completion − t_send − segment_bytes / NIC line rate` (TIMELY §3.1).
    pub rtt: Time,
    /// Payload bytes the completion acknowledges.
    pub acked_bytes: u64,
    /// The rate the connection has been sending at, measured by its transport: the bytes it
    /// handed to the NIC from the completed segment's release to now, over that time (TIMELY
    /// §5 "Application limited behavior": the target rate increases only while the application
    /// sends at more than 80 % of it). `None`: not measured, no limit.
    pub sending_rate: Option<Rate>,
    /// Bytes acknowledged in all, this completion included, and bytes released to the NIC
    /// (TCP's `snd_una` and `snd_nxt`; HPCC commits once per round trip by them).
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// The in-band telemetry the completed segment's last packet collected on its way, one
    /// record per switch, echoed by the receiver (`int`); empty without telemetry.
    pub int: &'a [IntHop],
}

/// A rate-based congestion controller: completions in, target rate out.
pub trait RateController: Send {
    /// Updates the state on one completion event.
    fn on_completion(&mut self, c: &Completion);
    /// The current target rate.
    fn rate(&self) -> Rate;
    /// What the controller reports of its state; by default its rate.
    fn metrics(&self) -> Metrics {
        Metrics { rate: Some(self.rate()), ..Metrics::default() }
    }
    /// The connection sends again after an idle period and its transport asks for a fresh
    /// start (`nic.rate_after_idle = "reset"`): back to the initial state. By default nothing.
    fn restart(&mut self) {}
    /// Most bytes the connection may have in flight, for a controller that keeps a window as
    /// well as a rate (HPCC); `None`: only the transport's own cap.
    fn window(&self) -> Option<u64> {
        None
    }
    /// A congestion notification packet (CNP) for the connection arrived (DCQCN). By default
    /// nothing.
    fn on_congestion_notification(&mut self, _now: Time) {}
    /// The connection handed `bytes` to its NIC (DCQCN's byte counter). By default nothing.
    fn on_sent(&mut self, _now: Time, _bytes: u64) {}
    /// Runs the controller's own timers up to `now` (DCQCN); the transport calls it before it
    /// asks for the rate. By default nothing.
    fn advance(&mut self, _now: Time) {}
    /// When a timer of the controller's is next due to change its rate, so that a connection
    /// waiting for its pacer can look again then; `None`: no such timer.
    fn next_change(&self) -> Option<Time> {
        None
    }
    /// Whether the last RTT sample it took was above its target: PLB's congestion signal for
    /// a delay controller (`plb`). `None`: it keeps no delay target.
    fn over_target(&self) -> Option<bool> {
        None
    }
    /// Whether the controller asked, since it was last asked, for a new path label for its
    /// connection (a Python controller's `self.repath()`). By default never.
    fn take_repath(&mut self) -> bool {
        false
    }
}

/// What one ACK tells a window controller. Sequence numbers are payload bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AckEvent {
    pub now: Time,
    /// Bytes this ACK newly acknowledges cumulatively.
    pub acked_bytes: u64,
    /// ECN-Echo: the acknowledged data carried a Congestion Experienced mark.
    pub ece: bool,
    /// The RTT sample this ACK gives, if any (RFC 7323 timestamps).
    pub rtt: Option<Time>,
    /// The sender's oldest unacknowledged byte after this ACK.
    pub snd_una: u64,
    /// The next new byte the sender would send.
    pub snd_nxt: u64,
    /// The transport is repairing a loss (fast recovery): the window must not grow.
    pub in_recovery: bool,
    /// The window, not the application or the host, limited the last send (RFC 7661): only
    /// then may the window grow.
    pub cwnd_limited: bool,
    /// Endpoint delay (Swift §3.1): the queuing the receiver reports for the acknowledged
    /// packet (NIC Rx queue and processing, `t4 − t2`) plus this ACK's own wait in the local
    /// NIC Rx queue and processing (`t6 − t5`). Zero without a host model.
    pub endpoint_delay: Time,
    /// Switches the acknowledged packet crossed, echoed by the receiver (Swift §3.5: the TTL
    /// difference).
    pub hops: u8,
}

/// A loss the transport detected.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Loss {
    /// Duplicate ACKs or SACK holes: fast retransmit, then fast recovery (RFC 5681, RFC 6675).
    FastRetransmit,
    /// The retransmission timer expired (RFC 6298).
    Timeout,
}

/// A window-based congestion controller: ACKs and losses in, a congestion window out.
pub trait WindowController: Send {
    fn on_ack(&mut self, a: &AckEvent);
    /// A loss was detected at `now` with `flight_bytes` outstanding.
    fn on_loss(&mut self, loss: Loss, flight_bytes: u64, now: Time);
    /// The congestion window in bytes.
    fn cwnd(&self) -> u64;
    /// The gap between consecutive sends when the window is below one packet (Swift §3.4);
    /// `None`: ACK-clocked.
    fn pacing_delay(&self) -> Option<Time> {
        None
    }
    /// What the controller reports of its state; by default its window.
    fn metrics(&self) -> Metrics {
        Metrics { cwnd_bytes: Some(self.cwnd()), ..Metrics::default() }
    }
    /// Whether the last RTT sample it took was above its target ([`RateController::over_target`]).
    fn over_target(&self) -> Option<bool> {
        None
    }
    /// Whether it asked for a new path label ([`RateController::take_repath`]).
    fn take_repath(&mut self) -> bool {
        false
    }
    /// The last fast retransmit proved spurious (the original had arrived): restore the window
    /// from before its cut (RFC 4015's Eifel response; Linux's `tcp_undo_cwnd_reduction`). By
    /// default nothing.
    fn undo(&mut self) {}
}

/// A controller's state as it reports it, for results and time series: each controller fills
/// in what it keeps, the rest stays `None`. Non-exhaustive: a new controller may add a field
/// without breaking code that reads the others.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Metrics {
    /// A rate controller's target rate.
    pub rate: Option<Rate>,
    /// A rate controller with a floor (`min_rate`) sits on it.
    pub at_min_rate: Option<bool>,
    /// A window controller's congestion window.
    pub cwnd_bytes: Option<u64>,
    /// The slow-start threshold, once a loss has set it (Reno, DCTCP, Vegas).
    pub ssthresh_bytes: Option<u64>,
    /// DCTCP's estimate α of the fraction of marked bytes.
    pub dctcp_alpha: Option<f64>,
    /// Swift's fabric and endpoint windows, in packets.
    pub fcwnd_pkts: Option<f64>,
    pub ecwnd_pkts: Option<f64>,
}
