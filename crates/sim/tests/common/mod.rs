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

/// Two hosts on one switch, 10 Gbps and 1 µs links, no PFC, 64 B headers and ACKs, for
/// `duration`, with `nic` TOML appended inside `[nic]` and `rest` after it.
pub fn star_pair(duration: &str, nic: &str, rest: &str) -> String {
    format!(
        r#"
        duration = "{duration}"
        [topology]
        kind = "star"
        hosts = 2
        link_rate = "10Gbps"
        link_delay = "1us"
        [switch]
        pfc = false
        [nic]
        header = "64B"
        ack = "64B"
        {nic}
        {rest}
        "#
    )
}

/// `star_pair` with a 1500 B MTU and the window transport for 10 ms, with `extra` TOML appended
/// inside `[transport]`.
pub fn window_pair(extra: &str) -> String {
    star_pair("10ms", "mtu = \"1500B\"", &format!("[transport]\nkind = \"window\"\n{extra}"))
}

/// Column `col` of table `table`'s first row whose `keys` columns read as the given texts
/// (e.g. `[("port", "s0-h0"), ("class", "1")]`), as a number.
pub fn cell(net: &Network, table: &str, keys: &[(&str, &str)], col: &str) -> f64 {
    let tables = net.tables();
    let t = &tables.iter().find(|(n, _)| *n == table).unwrap_or_else(|| panic!("no table {table}")).1;
    let row = t.row(keys).unwrap_or_else(|| panic!("no row {keys:?} in {table}"));
    let text = &row.iter().find(|(n, _)| *n == col).unwrap_or_else(|| panic!("no column {col} in {table}")).1;
    text.parse().unwrap_or_else(|_| panic!("{table}.{col} = {text:?} is not a number"))
}

/// (scenario file, simulated time, warm-up): long enough to reach each scenario's steady
/// behaviour (queues, pauses, marks, losses), short enough to keep the test quick.
pub const RUNS: &[(&str, &str, &str)] = &[
    ("fat-incast-100g", "1ms", "0us"),
    ("timely-testbed", "30ms", "10ms"),
    ("fat-tree-websearch-dctcp", "1ms", "500us"),
    ("timely-testbed-pfc", "20ms", "5ms"),
    ("timely-testbed-dctcp", "30ms", "10ms"),
    ("patched-timely-two-flows", "20ms", "5ms"),
    ("skinny", "20ms", "5ms"),
    ("swift-t1", "4ms", "1ms"),
    ("timely-clos-rpc", "5ms", "1ms"),
    ("vegas-dumbbell", "20ms", "10ms"),
    ("ns3-dctcp-example", "1100ms", "1000ms"),
    ("host-timely", "20ms", "5ms"),
    ("host-patched-timely", "20ms", "5ms"),
    ("host-swift", "20ms", "5ms"),
    ("host-dctcp", "20ms", "5ms"),
    ("allreduce-fat-tree", "20ms", "0us"),
    ("fat-tree-link-down", "5ms", "500us"),
    ("moe-alltoall-incast", "20ms", "0us"),
    ("uet-incast", "500us", "0us"),
];

/// h0 to h1 over two equal-cost paths, s0–s1–s3 and s0–s2–s3: 10 Gbps and 1 µs links but
/// s2–s3's `s2_s3_delay`, no PFC, `mtu` packets with 64 B headers and ACKs; `top` holds the
/// top-level keys (`duration`, ...) and `rest` follows `[nic]`'s keys.
pub fn two_paths(top: &str, mtu: &str, s2_s3_delay: &str, rest: &str) -> String {
    format!(
        r#"
{top}
[topology]
kind = "graph"
hosts = ["h0", "h1"]
switches = ["s0", "s1", "s2", "s3"]
link_rate = "10Gbps"
link_delay = "1us"
links = [
  {{ a = "h0", b = "s0" }}, {{ a = "s0", b = "s1" }}, {{ a = "s0", b = "s2" }},
  {{ a = "s1", b = "s3" }}, {{ a = "s2", b = "s3", delay = "{s2_s3_delay}" }}, {{ a = "s3", b = "h1" }},
]
[switch]
pfc = false
[nic]
mtu = "{mtu}"
header = "64B"
ack = "64B"
{rest}
"#
    )
}
