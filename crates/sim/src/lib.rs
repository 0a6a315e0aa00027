//! rttlab's simulator: a deterministic packet-level model of NICs and switch fabrics driven by
//! the congestion controllers of `rttlab-cc`.
//!
//! Layout (docs/architecture.md): `engine` (event queue, timers, random streams), `packet`
//! (slab), `port` (links and egress queues), `switch` (buffer, ECN, PFC), `nic` (hosts and the
//! segmenter), `flow` (connections and their counters), `transport::message` (TIMELY's paced
//! messages, hardware ACKs, RTT samples), `transport::window` (TCP-like stack with loss
//! recovery), `topology` (graphs and routes), `scenario` (the TOML schema), `stats`, `output`.

use std::ops::ControlFlow;

pub mod endpoint;
pub mod capture;
pub mod engine;
pub mod flow;
pub mod ids;
pub mod invariants;
pub mod network;
pub mod nic;
pub mod output;
pub mod packet;
pub mod port;
pub mod routing;
pub mod scenario;
pub mod stats;
pub mod switch;
pub mod table;
mod telemetry;
pub mod topology;
pub mod transport;
pub mod workload;

pub use network::{Network, Progress, Stopped};
pub use output::{Output, Summary};
pub use scenario::{Scenario, ScenarioError};

/// Builds and runs a scenario.
pub fn run(s: &Scenario) -> Result<Output, ScenarioError> {
    run_observed(s, |_| ControlFlow::Continue(())).map_err(|e| match e {
        RunError::Invalid(e) => e,
        RunError::Stopped(_) => unreachable!("an observer that never breaks"),
    })
}

/// Why [`run_observed`] gave no result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Invalid(#[from] ScenarioError),
    #[error(transparent)]
    Stopped(#[from] Stopped),
}

/// Builds and runs a scenario, calling `observe` every [`network::OBSERVE_EVERY`] events (for
/// progress displays and interruption); a break stops the run without a result.
pub fn run_observed(s: &Scenario, observe: impl FnMut(Progress) -> ControlFlow<()>) -> Result<Output, RunError> {
    let t0 = std::time::Instant::now();
    let mut net = Network::new(s)?;
    net.run_observed(observe)?;
    debug_assert_eq!(net.check_invariants(), Ok(()));
    let wall = t0.elapsed().as_secs_f64();
    let summary = net.summary();
    let meta = output::meta(s, output::perf(&net, wall), net.warnings(&summary));
    let tables = net.tables();
    Ok(Output { summary, tables, meta, captures: net.take_captures() })
}
