//! The registry of congestion controllers: each algorithm's parameters implement [`Algorithm`],
//! which says what the controller needs of the transport and the fabric ([`Needs`], as Linux's
//! `TCP_CONG_NEEDS_ECN` flag and this project's BPF programs' `.flags` do), checks its
//! parameters, builds a controller for a connection and advises on parameters that leave it
//! unable to act on a path. The simulator reads these and never matches an algorithm's name;
//! adding a controller is its own module and one line of [`crate::registry!`] in `lib.rs`.

use crate::hpcc::BaseRtt;
use crate::{Bytes, ParamError, Rate, RateController, Signal, Time, WindowController};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Which transport a controller drives.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A [`RateController`] on the message transport (TIMELY §3.2's rate computation engine).
    #[default]
    Rate,
    /// A [`WindowController`] on the window transport (a TCP congestion module).
    Window,
}

/// The ECN marking a controller's switches default to (RED-style: no mark below `kmin`, a
/// probability rising to `pmax` at `kmax`, every packet above).
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcnMarking {
    pub kmin: Bytes,
    pub kmax: Bytes,
    pub pmax: f64,
    /// The line rate the thresholds are given for; ports of another rate scale them (Mellanox).
    pub scale_rate: Option<Rate>,
}

/// What a controller needs of its transport and its fabric. The simulator sets its defaults
/// and checks a scenario by these, never by the controller's name; a Python controller
/// declares the same in its class's `needs`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Needs {
    /// Reads in-band telemetry: every switch pushes a record (`switch.int` defaults to on).
    pub int: bool,
    /// Reacts to ECN marks; without marking switches it sees no congestion.
    pub ecn: bool,
    /// Reacts to RTT samples against a target of its own (Swift, TIMELY): PLB counts a round
    /// congested by its samples above the target, and `cc.feedback` may filter its samples.
    pub delay: bool,
    /// The marking its switches default to when `switch.ecn` is not given (DCQCN's profile).
    pub ecn_profile: Option<EcnMarking>,
    /// Every data packet acknowledged at once: a one-packet segment on the message transport,
    /// no delayed ACK on the window transport.
    pub ack_per_packet: bool,
    /// The controller alone limits what is in flight (a window of its own, or the NIC's
    /// per-flow rate limiter pacing every packet): the NIC keeps no cap on outstanding bytes.
    pub rate_limiter: bool,
    /// Congestion notification packets from the receiving NIC, at most one per flow per this
    /// interval.
    pub cnp_interval: Option<Time>,
    /// The base RTT its window is computed from.
    pub base_rtt: Option<BaseRtt>,
    /// What the transport's RTT samples measure (`crate::signal`), and the `ind` threshold.
    pub signal: Signal,
    pub signal_threshold: Time,
}

/// What a connection's controller is built for, and what advice is checked against.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Path {
    /// The sending NIC's line rate.
    pub line_rate: Rate,
    /// Payload of one full data packet (a window controller counts its window in these).
    pub mss: u64,
    /// What the transport hands the NIC at once: a segment (message transport) or a packet.
    pub segment_bytes: u64,
    /// The connection's unloaded round trip (for advice: the longest path's).
    pub base_rtt: Time,
    /// The fabric's largest unloaded round trip.
    pub max_base_rtt: Time,
}

/// What advice is checked against: a scenario's longest path, and how its traffic meets.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub path: Path,
    /// Switches the path crosses.
    pub hops: u32,
    /// The most connections' senders into one host: their segments can meet at its port.
    pub fan_in: u32,
}

/// A connection's controller, of its kind.
pub enum Controller {
    Rate(Box<dyn RateController>),
    Window(Box<dyn WindowController>),
}

/// A parameter value that is allowed but leaves the controller unable to act as intended on
/// the scenario's paths: the key, its value, why, and a value that would work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Advice {
    pub field: &'static str,
    pub value: String,
    pub problem: String,
    pub try_value: String,
}

/// A registered algorithm's parameters.
pub trait Algorithm: Clone + std::fmt::Debug + PartialEq + Default + Serialize + DeserializeOwned + Send + Sync + 'static {
    /// The transport it drives.
    const KIND: Kind;
    /// What it needs of the transport and the fabric.
    fn needs(&self) -> Needs {
        Needs::default()
    }
    /// Refuses values the controller cannot run with.
    fn validate(&self) -> Result<(), ParamError>;
    /// The controller of one connection on `path`.
    fn build(&self, path: &Path) -> Controller;
    /// The defaults that the given keys are read over: those of this value's profile (Swift,
    /// DCQCN), else `Default`.
    fn defaults_like(&self) -> Self {
        Self::default()
    }
    /// Parameters that leave the controller unable to act on the scenario's longest `path`.
    fn advise(&self, _path: &Route) -> Vec<Advice> {
        Vec::new()
    }
}

/// Reads one algorithm's parameters, for [`Cc::read`](crate::Cc::read): the simulator's scenario reader
/// implements it with errors that name the field.
pub trait ReadParams {
    type Error;
    fn read<A: Algorithm>(self) -> Result<A, Self::Error>;
}

/// Declares the registered algorithms, `"name" => Variant(module::Params)`, and their modules,
/// so that a new controller is its file and one line here.
#[macro_export]
macro_rules! registry {
    ($($(#[$doc:meta])* $name:literal => $variant:ident($module:ident :: $params:ident),)*) => {
        $(pub mod $module;)*

        /// A registered congestion controller with its parameters, tagged by its name as a
        /// scenario's `cc.algorithm`.
        #[derive(Clone, Debug, PartialEq, serde::Serialize)]
        #[serde(tag = "algorithm")]
        pub enum Cc {
            $($(#[$doc])* #[serde(rename = $name)] $variant($module::$params),)*
        }

        impl Cc {
            /// Every registered name, in registration order.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// Every registered algorithm at its default parameters.
            pub fn defaults() -> Vec<Cc> {
                vec![$(Cc::$variant(Default::default())),*]
            }

            /// The registered names of controllers of `kind`.
            pub fn names_of(kind: $crate::registry::Kind) -> Vec<&'static str> {
                [$(($name, <$module::$params as $crate::registry::Algorithm>::KIND)),*].into_iter().filter(|k| k.1 == kind).map(|k| k.0).collect()
            }

            pub fn name(&self) -> &'static str {
                match self { $(Cc::$variant(_) => $name,)* }
            }
            pub fn kind(&self) -> $crate::registry::Kind {
                match self { $(Cc::$variant(_) => <$module::$params as $crate::registry::Algorithm>::KIND,)* }
            }
            pub fn needs(&self) -> $crate::registry::Needs {
                match self { $(Cc::$variant(p) => $crate::registry::Algorithm::needs(p),)* }
            }
            /// The parameters, if they are an `A`'s: for code that works with one algorithm's
            /// own state (the kernel programs' replay), by type rather than by name.
            pub fn params<A: $crate::registry::Algorithm>(&self) -> Option<&A> {
                match self { $(Cc::$variant(p) => (p as &dyn std::any::Any).downcast_ref::<A>(),)* }
            }
            pub fn validate(&self) -> Result<(), $crate::ParamError> {
                match self { $(Cc::$variant(p) => $crate::registry::Algorithm::validate(p),)* }
            }
            pub fn build(&self, path: &$crate::registry::Path) -> $crate::registry::Controller {
                match self { $(Cc::$variant(p) => $crate::registry::Algorithm::build(p, path),)* }
            }
            pub fn advise(&self, route: &$crate::registry::Route) -> Vec<$crate::registry::Advice> {
                match self { $(Cc::$variant(p) => $crate::registry::Algorithm::advise(p, route),)* }
            }
            /// The parameters of the algorithm named `name` through `reader`; `None` for a name
            /// not registered.
            pub fn read<R: $crate::registry::ReadParams>(name: &str, reader: R) -> Option<Result<Cc, R::Error>> {
                match name {
                    $($name => Some(reader.read::<$module::$params>().map(Cc::$variant)),)*
                    _ => None,
                }
            }
        }
    };
}
