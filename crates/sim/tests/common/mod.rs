//! Helpers shared by the simulator's integration tests.

use rttlab_sim::{Network, Scenario};

pub fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml(toml).unwrap_or_else(|e| panic!("{e}"))
}

/// Builds and runs a scenario, returning the network for inspection.
pub fn run_net(toml: &str) -> Network {
    let mut net = Network::new(&scenario(toml)).unwrap();
    net.run();
    net
}
