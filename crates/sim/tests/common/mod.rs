//! Helpers shared by the simulator's integration tests.

use rttlab_sim::{Network, Scenario};

pub fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml(toml).unwrap_or_else(|e| panic!("{e}"))
}

/// Builds and runs a scenario, returning the network for inspection after checking its
/// invariants (`Network::check_invariants`).
pub fn run_net(toml: &str) -> Network {
    let mut net = Network::new(&scenario(toml)).unwrap();
    net.run();
    net.check_invariants().unwrap_or_else(|e| panic!("invariant broken: {e}"));
    net
}

/// Two hosts on one switch, 10 Gbps and 1 µs links, 1500 B MTU with 64 B headers and ACKs, no
/// PFC, the window transport for 10 ms, with `extra` TOML appended inside `[transport]`.
#[allow(dead_code)] // not every test binary uses it
pub fn window_pair(extra: &str) -> String {
    format!(
        r#"
        duration = "10ms"
        [topology]
        kind = "star"
        hosts = 2
        link_rate = "10Gbps"
        link_delay = "1us"
        [switch]
        pfc = false
        [nic]
        mtu = "1500B"
        header = "64B"
        ack = "64B"
        [transport]
        kind = "window"
        {extra}
        "#
    )
}
