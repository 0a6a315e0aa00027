//! The simulation's core: typed ids, packets, the event queue, the run's context (clock,
//! events, packets, measurements, configuration) and the event loop that hands each event to
//! the part of the network it belongs to.

pub(crate) mod ctx;
pub mod engine;
pub(crate) mod external;
pub mod ids;
pub mod network;
pub mod packet;
