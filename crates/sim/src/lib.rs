//! rttlab's simulator: a deterministic packet-level model of NICs and switch fabrics driven by
//! the congestion controllers of `rttlab-cc`.
//!
//! Layout (docs/architecture.md), a directory a part: `core` (ids, packets, the event queue:
//! the ground floor, which imports nothing above it), `network` and `ctx` (the event loop that
//! hands each event to its part, and the run's context), `fabric` (ports,
//! switches, routes, topologies), `host` (NICs, connections, applications), `transport` (the
//! transports' state machines the hosts drive), `workload` (traffic generators), `scenario`
//! (the TOML schema), `report` (measurements, summary, tables, warnings) and `parallel` (one
//! simulation on every core).

use std::ops::ControlFlow;

pub mod core;
pub(crate) mod ctx;
pub mod fabric;
pub mod host;
pub mod network;
pub mod parallel;
pub mod report;
pub mod scenario;
pub mod transport;
pub mod workload;

/// The guide to extending rttlab (`docs/extending.md`), built with the crate so that a stale
/// reference in it fails `make test`'s documentation check.
#[doc = include_str!("../../../docs/extending.md")]
#[allow(rustdoc::private_intra_doc_links)] // a guide to the inside: it names private items
pub mod extending {}

// The front door: what a program that runs scenarios names.
pub use crate::core::external::Controllers;
pub use network::{Network, Progress, Stopped};
pub use report::output::{Output, Summary};
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
    run_observed_with(s, None, observe)
}

/// [`run_observed`] with the builder of `cc.algorithm = "python"`'s controllers.
pub fn run_observed_with(
    s: &Scenario,
    controllers: Option<Box<dyn Controllers>>,
    observe: impl FnMut(Progress) -> ControlFlow<()>,
) -> Result<Output, RunError> {
    let t0 = std::time::Instant::now();
    let (threads, fewer) = parallel::threads(s, controllers.is_some());
    let (mut spans, mut phases) = (None, None);
    let mut net = if threads > 1 {
        let mut cut = parallel::Partitioned::new(s, threads)?;
        cut.run(None, observe)?;
        spans = Some(cut.spans);
        phases = Some(std::mem::take(&mut cut.phases));
        cut.merge()
    } else {
        let mut net = Network::with_controllers(s, controllers)?;
        net.run_observed(observe)?;
        net
    };
    debug_assert_eq!(net.check_invariants(), Ok(()));
    let wall = t0.elapsed().as_secs_f64();
    let summary = net.summary();
    let mut perf = report::output::perf(&net, wall);
    perf["threads"] = threads.into();
    perf["spans"] = spans.into();
    perf["partitions"] = serde_json::to_value(phases).expect("plain numbers");
    let meta = report::output::meta(s, perf, report::advice::warnings(s, &net, &summary).into_iter().chain(net.warnings(&summary)).chain(fewer).collect());
    let tables = net.take_tables();
    Ok(Output { summary, tables, meta, captures: net.take_captures() })
}
