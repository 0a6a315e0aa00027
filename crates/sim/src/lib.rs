//! rttlab's simulator: a deterministic packet-level model of NICs and switch fabrics driven by
//! the congestion controllers of `rttlab-cc`.
//!
//! Layout (docs/architecture.md): `engine` (event queue, timers, random streams), `packet`
//! (slab), `port` (links and egress queues), `switch` (buffer, ECN, PFC), `nic` (hosts and the
//! segmenter), `flow` (connections and their counters), `transport::message` (TIMELY's paced
//! messages, hardware ACKs, RTT samples), `transport::window` (TCP-like stack with loss
//! recovery), `topology` (graphs and routes), `scenario` (the TOML schema), `stats`, `output`.

pub mod endpoint;
pub mod engine;
pub mod flow;
pub mod ids;
pub mod network;
pub mod nic;
pub mod output;
pub mod packet;
pub mod port;
pub mod routing;
pub mod scenario;
pub mod stats;
pub mod switch;
pub mod topology;
pub mod transport;
pub mod workload;

pub use network::Network;
pub use output::{Output, Summary};
pub use scenario::{Scenario, ScenarioError};

/// Builds and runs a scenario.
pub fn run(s: &Scenario) -> Result<Output, ScenarioError> {
    let t0 = std::time::Instant::now();
    let mut net = Network::new(s)?;
    net.run();
    let wall = t0.elapsed().as_secs_f64();
    Ok(Output { summary: net.summary(), tables: net.tables(), meta: output::meta(s, output::perf(&net, wall)) })
}
