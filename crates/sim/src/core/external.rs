//! Controllers from outside the simulator: `cc.algorithm = "python"`'s classes, which the
//! front end running the simulation (rttlab's Python package, `crates/py`) builds. The
//! simulator asks for one per connection and drives it through the same traits as its own
//! controllers, not knowing which language it is in.

use rttlab_cc::{Rate, RateController, WindowController};

/// Builds the controller of each new connection for `cc.algorithm = "python"`.
pub trait Controllers: Send {
    /// A rate controller (message transport) for a connection whose NIC sends at `line_rate`.
    fn rate(&mut self, line_rate: Rate) -> Box<dyn RateController>;
    /// A window controller (window transport) for a connection of `mss` payload bytes per
    /// full packet.
    fn window(&mut self, mss: u64) -> Box<dyn WindowController>;
}
