//! Fabrics and workloads: topologies, ECMP, RPC latency, offered load, pingers, flow retirement.

use crate::common::{run_net, scenario, star_pair};
use rttlab_cc::{Rate, Time};
use rttlab_sim::fabric::routing::five_tuple_hash;
use rttlab_sim::Network;
use std::collections::HashMap;

/// A k-ary fat-tree of 10 Gbps, 1 µs links running for `duration` with `traffic` (TOML).
fn fat_tree_with(k: u32, duration: &str, traffic: &str) -> String {
    format!(
        r#"
        duration = "{duration}"
        [topology]
        kind = "fat_tree"
        k = {k}
        link_rate = "10Gbps"
        link_delay = "1us"
        {traffic}
        "#
    )
}

/// A fat-tree with one connection, for routing checks.
fn fat_tree(k: u32) -> String {
    fat_tree_with(k, "1ms", "[[flows]]\nsrc = 1\ndst = 0")
}

/// Walks every host pair's path and checks it ends at the destination in the expected hops.
fn all_pairs_reachable(net: &Network, expected_hops: impl Fn(u32, u32) -> u32) {
    let hosts = net.graph().hosts;
    for a in 0..hosts {
        for b in (0..hosts).filter(|&b| b != a) {
            let path = net.path(a, b, five_tuple_hash(1, a, b, 50000, 4791));
            let last = *path.last().unwrap();
            let reached = net.ports()[net.ports()[last.idx()].peer.idx()].node;
            assert_eq!(reached, b, "{a} -> {b} ended at node {reached}");
            assert_eq!(path.len() as u32, expected_hops(a, b), "{a} -> {b}");
            assert_eq!(net.routing().hops(a, b), Some(expected_hops(a, b)));
        }
    }
}

#[test]
fn every_host_pair_is_reachable_on_the_shortest_path() {
    for k in [4, 8] {
        let net = Network::new(&scenario(&fat_tree(k))).unwrap();
        let (per_edge, per_pod) = (k / 2, k * k / 4);
        assert_eq!(net.graph().hosts, k * k * k / 4);
        assert_eq!(net.graph().switches, 5 * k * k / 4);
        all_pairs_reachable(&net, |a, b| match () {
            _ if a / per_edge == b / per_edge => 2,
            _ if a / per_pod == b / per_pod => 4,
            _ => 6,
        });
    }
    let leaf_spine = r#"
        duration = "1ms"
        [topology]
        kind = "leaf_spine"
        leaves = 4
        spines = 3
        hosts_per_leaf = 6
        link_rate = "10Gbps"
        link_delay = "1us"
        oversubscription = 2
        [[flows]]
        src = 1
        dst = 0
    "#;
    let net = Network::new(&scenario(leaf_spine)).unwrap();
    // 6 hosts × 10 Gbps over 3 spines at 2:1: 10 Gbps uplinks.
    let uplink = net.path(0, 23, 7)[1];
    assert_eq!(net.ports()[uplink.idx()].rate, Rate(10_000_000_000));
    all_pairs_reachable(&net, |a, b| if a / 6 == b / 6 { 2 } else { 4 });
    let chain = r#"
        duration = "1ms"
        [topology]
        kind = "chain"
        switches = 5
        hosts_per_switch = 2
        link_rate = "10Gbps"
        link_delay = "1us"
        [[flows]]
        src = 1
        dst = 0
    "#;
    let net = Network::new(&scenario(chain)).unwrap();
    all_pairs_reachable(&net, |a, b| 2 + (a / 2).abs_diff(b / 2));
}

#[test]
fn route_tables_grow_linearly_with_hosts() {
    let per_host: Vec<f64> = [4, 8, 16]
        .iter()
        .map(|&k| {
            let net = Network::new(&scenario(&fat_tree(k))).unwrap();
            net.routing().table_entries() as f64 / net.graph().hosts as f64
        })
        .collect();
    // Entries per host stay bounded (a per-destination table in every switch would grow as k²,
    // from 20 to 80 per host over these sizes).
    assert!(per_host.iter().all(|&e| e < 12.0) && per_host[2] <= per_host[0], "{per_host:?}");
}

#[test]
fn ecmp_spreads_flows_evenly_over_all_equal_cost_paths() {
    // k = 8: from host 0 to a host in another pod there are (k/2)² = 16 shortest paths.
    let net = Network::new(&scenario(&fat_tree(8))).unwrap();
    let (flows, paths) = (16_000u32, 16usize);
    let mut count: HashMap<Vec<rttlab_sim::core::ids::PortId>, u32> = HashMap::new();
    for sport in 0..flows {
        let hash = five_tuple_hash(3, 0, 100, 49152 + (sport % 16384) as u16, 4791 + (sport / 16384) as u16);
        *count.entry(net.path(0, 100, hash)).or_default() += 1;
    }
    assert_eq!(count.len(), paths, "every equal-cost path is used");
    let expected = flows as f64 / paths as f64;
    let chi2: f64 = count.values().map(|&c| (c as f64 - expected).powi(2) / expected).sum();
    // χ² with 15 degrees of freedom: 37.70 at p = 0.001.
    assert!(chi2 < 37.70, "chi2 = {chi2:.1} over {count:?}");
}

/// One client, one server across the core, RPCs far apart: each takes exactly the hand sum.
#[test]
fn unloaded_rpc_latency_is_serialization_plus_propagation() {
    let rpc = r#"
        [[workloads]]
        kind = "rpc"
        clients = [0]
        servers = [15]
        size = "4000B"
        rate = 200.0
    "#;
    let net = run_net(&fat_tree_with(4, "100ms", rpc));
    let g = &net.groups()[0];
    assert!(g.rpcs_completed >= 10, "{} RPCs", g.rpcs_completed);
    // 4000 B = 1436 + 1436 + 1128 payload: wire 1500, 1500, 1192 B, 1.2 µs and 0.9536 µs at
    // 10 Gbps, over 6 links of 1 µs. The last packet waits behind the second full one at every
    // hop: one way = 6 × 1 µs + (6 + 3 − 2) × 1.2 µs + 0.9536 µs = 15.3536 µs. The server's
    // NIC first sends the request's 64 B ACK (51.2 ns), then the response.
    let one_way = Time(6_000_000 + 7 * 1_200_000 + 953_600);
    let expected = Time(2 * one_way.ps() + 51_200);
    assert_eq!(g.rpc_latency_sum, Time(expected.ps() * g.rpcs_completed), "every RPC takes {expected}");
}

#[test]
fn pings_measure_the_idle_fabric_rtt() {
    let pinger = r#"
        [[workloads]]
        kind = "pinger"
        peers = "longest_path"
        interval = "100us"
    "#;
    let net = run_net(&fat_tree_with(4, "2ms", pinger));
    let s = net.summary();
    // 16 hosts, one ping per 100 µs each for 2 ms, minus those still out at the end.
    assert!(s.ping_samples > 16 * 18, "{}", s.ping_samples);
    // 6 links each way, 64 B (51.2 ns) + 1 µs per link: 12.6144 µs (histogram: 3 digits).
    let rtt = 12.6144;
    for q in [s.ping_p50_us.unwrap(), s.ping_p99_us.unwrap()] {
        assert!((q - rtt).abs() / rtt < 1e-3, "{q} vs {rtt}");
    }
    assert_eq!(s.throughput_gbps, 0.0, "pings carry no flow payload");
}

#[test]
fn flow_sizes_offer_their_target_load_on_the_host_links() {
    let load = 0.4;
    let flows = format!("[[workloads]]\nkind = \"flow_sizes\"\ncdf = \"alistorage\"\nload = {load}");
    let net = run_net(&fat_tree_with(4, "200ms", &flows));
    let secs = 0.2;
    let host_payload: u64 = (0..net.graph().hosts).map(|h| net.port(net.hosts()[h as usize].port).tx_payload_bytes()).sum();
    let measured = host_payload as f64 * 8.0 / (net.graph().hosts as f64 * 10e9 * secs);
    assert!((measured - load).abs() / load < 0.03, "measured load {measured:.4} vs {load}");
    // Finished flows give their slots back: slots stay near the flows in flight.
    let s = net.summary();
    assert!(s.flows > 30_000, "{} flows", s.flows);
    assert!((net.flows().len() as u64) < s.flows / 50, "{} slots for {} flows", net.flows().len(), s.flows);
    assert!(s.fct_flows > 0 && s.slowdown_p50.unwrap() >= 1.0);
    assert_eq!(s.bytes_sent, s.bytes_delivered + s.bytes_in_flight + s.bytes_dropped + s.bytes_duplicate);
    // The fct table counts per size bucket the flows started and those that finished: the
    // buckets add up to all sizes, which are the group's flows started; some large ones are
    // still running at the end.
    let tables = net.tables();
    let fct = &tables.iter().find(|(n, _)| *n == "fct").expect("an fct table").1;
    let num = |r: usize, col: &str| fct.get(col).expect(col).text(r).parse::<u64>().expect("a count");
    let rows: Vec<usize> = (0..fct.rows()).collect();
    let all = *rows.iter().find(|&&r| fct.get("bucket").unwrap().text(r) == "all").expect("an all-sizes row");
    let buckets: Vec<usize> = rows.iter().copied().filter(|&r| r != all).collect();
    assert_eq!(buckets.iter().map(|&r| num(r, "flows_started")).sum::<u64>(), num(all, "flows_started"));
    assert_eq!(buckets.iter().map(|&r| num(r, "flows")).sum::<u64>(), num(all, "flows"));
    assert_eq!(num(all, "flows_started"), net.groups()[0].flows_started);
    assert!(buckets.iter().all(|&r| num(r, "flows") <= num(r, "flows_started")));
    assert!(num(all, "flows") < num(all, "flows_started"), "every flow finished by the end");
    // Each flow started either finished or is counted at its age.
    for &r in &rows {
        assert_eq!(num(r, "flows") + num(r, "flows_censored"), num(r, "flows_started"));
    }
}

/// Flows still under way at the end count in the FCT statistics at their age (right-censored),
/// not as if they had never started: 4 MB flows at 90 % load on a 10 Gbps pair take 3.2 ms
/// each alone and the run lasts 5 ms, so some finish and some are cut off. Each flow started
/// is one or the other; a cut-off one's slowdown is its age over its ideal FCT (at least 1), and
/// the summary's p99 is the largest slowdown of either kind.
#[test]
fn flows_under_way_at_the_end_count_at_their_age() {
    let rest = r#"
        [[workloads]]
        kind = "flow_sizes"
        cdf = [[4000000, 0], [4000000, 100]]
        load = 0.9
        [measure]
        flow_records = true
    "#;
    let net = run_net(&star_pair("5ms", "", rest));
    let s = net.summary();
    let started = net.groups()[0].flows_started;
    assert!(s.fct_flows > 0 && s.fct_censored > 0, "{} finished, {} censored", s.fct_flows, s.fct_censored);
    assert_eq!(s.fct_flows + s.fct_censored, started);
    let tables = net.tables();
    let records = &tables.iter().find(|(n, _)| *n == "flow_records").expect("flow records").1;
    let col = |name: &str, r: usize| records.get(name).expect(name).text(r).parse::<f64>().expect("a number");
    let mut top: f64 = 0.0;
    for r in 0..records.rows() {
        let slowdown = col("slowdown", r);
        if col("finished", r) == 0.0 {
            // Its age to the run's end over its ideal FCT, and at least 1: a lower bound of
            // its slowdown.
            let age = 5000.0 - col("start_us", r);
            assert!((col("age_us", r) - age).abs() < 1e-6, "{} vs {age}", col("age_us", r));
            assert!((slowdown - (age / col("ideal_fct_us", r)).max(1.0)).abs() < 1e-9);
            assert!(col("delivered_bytes", r) < 4e6);
        } else {
            assert_eq!(col("delivered_bytes", r), 4e6);
        }
        top = top.max(slowdown);
    }
    assert_eq!(records.rows() as u64, started);
    // The histogram keeps three significant digits (in thousandths).
    let p99 = s.slowdown_p99.expect("a slowdown");
    assert!((p99 - top).abs() <= top * 1e-3 + 1e-3, "{p99} vs {top}");
    let fct = &tables.iter().find(|(n, _)| *n == "fct").expect("an fct table").1;
    let all = (0..fct.rows()).find(|&r| fct.get("bucket").unwrap().text(r) == "all").expect("an all-sizes row");
    assert_eq!(fct.get("flows").unwrap().text(all), s.fct_flows.to_string());
    assert_eq!(fct.get("flows_censored").unwrap().text(all), s.fct_censored.to_string());
}

/// Window-transport flows with drops and retransmissions: stale packets of retired flows never
/// reach a reused slot, and bytes are conserved.
#[test]
fn lossy_window_flows_retire_cleanly_and_conserve_bytes() {
    let toml = r#"
        duration = "30ms"
        [topology]
        kind = "leaf_spine"
        leaves = 2
        spines = 2
        hosts_per_leaf = 8
        link_rate = "10Gbps"
        link_delay = "1us"
        [switch]
        pfc = false
        buffer = "200KB"
        [transport]
        kind = "window"
        [cc]
        algorithm = "dctcp"
        [switch.ecn]
        k = "65KB"
        [[workloads]]
        kind = "flow_sizes"
        cdf = "fb_hadoop"
        load = 0.6
        [[workloads]]
        kind = "incast"
        senders = "1-12"
        receiver = 0
        size = "100KB"
        rate = 500.0
        "#;
    let net = run_net(toml);
    let s = net.summary();
    assert!(s.drops > 0 && s.retransmits > 0, "drops {} retransmits {}", s.drops, s.retransmits);
    assert_eq!(s.bytes_sent, s.bytes_delivered + s.bytes_in_flight + s.bytes_dropped + s.bytes_duplicate);
    assert!(s.flows_finished > 1000 && net.retired_flows() > 1000);
    let incast = &net.groups()[1];
    assert!(incast.flows_finished > 100 && incast.flows_finished <= incast.flows_started);
    let again = run_net(toml).summary();
    assert_eq!(again, s, "same seed, same results");
}

/// An incast with several receivers draws one per incast (the HPCC paper's random receiver), and
/// with `senders_per_incast` that many distinct senders other than the receiver: every flow of
/// one incast goes to its receiver, each incast has exactly its senders, and over many incasts
/// each receiver takes about its share.
#[test]
fn incast_draws_its_receiver_and_senders_per_incast() {
    let toml = r#"
        duration = "20ms"
        [topology]
        kind = "star"
        hosts = 12
        link_rate = "100Gbps"
        link_delay = "1us"
        [measure]
        flow_records = true
        [[workloads]]
        kind = "incast"
        senders = "2-11"
        receiver = "0-3"
        senders_per_incast = 5
        size = "10KB"
        rate = 20000.0
        "#;
    let net = run_net(toml);
    let tables = net.tables();
    let records = &tables.iter().find(|(n, _)| *n == "flow_records").expect("flow_records").1;
    let column = |name: &str| (0..records.rows()).map(|r| records.get(name).expect(name).text(r)).collect::<Vec<String>>();
    // Per incast (its start time): receivers, and senders.
    type Ends = (std::collections::BTreeSet<String>, Vec<String>);
    let mut by_incast: std::collections::BTreeMap<String, Ends> = Default::default();
    for ((t, d), src) in column("start_us").into_iter().zip(column("dst")).zip(column("src")) {
        let e = by_incast.entry(t).or_default();
        e.0.insert(d);
        e.1.push(src);
    }
    assert!(by_incast.len() > 300, "{} incasts finished", by_incast.len());
    for (t, (dst, src)) in &by_incast {
        assert_eq!(dst.len(), 1, "incast at {t} µs: one receiver");
        let distinct: std::collections::BTreeSet<&String> = src.iter().collect();
        assert!(src.len() == 5 && distinct.len() == 5 && !distinct.contains(dst.first().expect("one")), "incast at {t} µs: senders {src:?} to {dst:?}");
    }
    let per_receiver: Vec<usize> = (0..4).map(|r| by_incast.values().filter(|(d, _)| d.contains(&r.to_string())).count()).collect();
    let mean = by_incast.len() as f64 / 4.0;
    // Binomial(n, 1/4): each count within 4 standard deviations of n/4.
    let sd = (by_incast.len() as f64 * 0.25 * 0.75).sqrt();
    assert!(per_receiver.iter().all(|&c| (c as f64 - mean).abs() < 4.0 * sd), "{per_receiver:?}");
}

/// `measure.queue_ports` patterns: "s*-s*" samples every switch-to-switch egress (2 per
/// leaf–spine link) and only those, so each has a queue p99; a pattern that matches nothing is
/// an error naming it.
#[test]
fn queue_port_patterns_sample_every_matching_port() {
    let toml = |ports: &str| {
        format!(
            r#"
            duration = "1ms"
            [topology]
            kind = "leaf_spine"
            leaves = 3
            spines = 2
            hosts_per_leaf = 2
            link_rate = "10Gbps"
            link_delay = "1us"
            [measure]
            queue_ports = {ports}
            [[flows]]
            src = 0
            dst = 5
            "#
        )
    };
    let net = run_net(&toml(r#"["s*-s*"]"#));
    let tables = net.tables();
    let ports = &tables.iter().find(|(n, _)| *n == "ports").expect("ports").1;
    // One row per port and class.
    let sampled: std::collections::BTreeSet<String> =
        (0..ports.rows()).filter(|&r| ports.get("queue_p99_kb").expect("p99").text(r) != "NaN").map(|r| ports.get("port").expect("port").text(r)).collect();
    assert_eq!(sampled.len(), 2 * 3 * 2, "{sampled:?}");
    assert!(sampled.iter().all(|n| n.starts_with('s') && n.contains("-s")), "{sampled:?}");
    let e = Network::new(&scenario(&toml(r#"["s0-h0", "x*"]"#))).err().expect("an error").to_string();
    assert!(e.starts_with("measure.queue_ports[1] = x*: a pattern that matches"), "{e}");
}

/// Each RPC client keeps `servers_per_client` servers among the longest-path candidates: with the
/// balanced assignment every server serves the same number of clients (m of the 16 or 128 hosts
/// each, all of them clients and servers); the random one leaves some servers hot.
#[test]
fn balanced_server_sets_give_every_server_as_many_clients() {
    let in_degrees = |k: u32, m: u32, assignment: &str| {
        let rpc = format!("[[workloads]]\nkind = \"rpc\"\npeers = \"longest_path\"\nservers_per_client = {m}\nserver_assignment = \"{assignment}\"\nsize = \"64KB\"\nrate = 100.0");
        let net = Network::new(&crate::common::scenario(&fat_tree_with(k, "1ms", &rpc))).unwrap();
        let g = &net.generators()[0];
        let table = g.peers.as_ref().expect("an RPC generator has peers");
        let mut degree: HashMap<u32, u32> = HashMap::new();
        for (i, &client) in g.sources.iter().enumerate() {
            let servers = table.of(i);
            assert_eq!(servers.len(), m as usize, "client {client}");
            for &s in servers {
                assert_eq!(net.routing().hops(client, s), Some(6), "client {client}'s server {s} is across the core");
                *degree.entry(s).or_default() += 1;
            }
        }
        let hosts = g.sources.len() as u32;
        (0..hosts).map(|h| degree.get(&h).copied().unwrap_or(0)).collect::<Vec<u32>>()
    };
    for (k, m) in [(4, 1), (4, 2), (4, 4), (8, 1), (8, 2), (8, 4), (8, 8)] {
        let d = in_degrees(k, m, "balanced");
        assert!(d.iter().all(|&x| x == m), "k = {k}, m = {m}: in-degrees {d:?}");
    }
    let random = in_degrees(8, 4, "random");
    assert!(random.iter().max() > random.iter().min(), "random sets happen to be balanced: {random:?}");
}

/// One connection per (client, server) pair carries every RPC between them, its rate controller's
/// state kept from one RPC to the next: while a connection is idle between RPCs its TIMELY rate
/// stays where the last RPC's completions left it (below the line rate after the incast's
/// queue), not back at the start.
#[test]
fn an_rpc_connection_keeps_its_rate_between_rpcs() {
    let rpc = r#"
        [nic]
        segment = "16KB"
        [cc]
        algorithm = "timely"
        [[workloads]]
        kind = "rpc"
        clients = [0, 1, 2, 3]
        servers = [15]
        size = "256KB"
        response = "1KB"
        rate = 1000.0
        [measure]
        timeseries_interval = "20us"
    "#;
    let net = run_net(&fat_tree_with(4, "20ms", rpc));
    assert_eq!(net.flows().len(), 8, "a request and a response connection per client");
    let g = &net.groups()[0];
    assert!(g.rpcs_completed >= 50, "{} RPCs completed", g.rpcs_completed);
    for f in net.flows().iter().filter(|f| f.dst == 15) {
        assert!(f.stats.delivered_bytes >= 10 * 256_000, "a request connection carried {} bytes", f.stats.delivered_bytes);
    }
    let ts = net.timeseries();
    let idle_below_line = (0..ts.time.len())
        .filter(|&i| ts.inflight_bytes[i] == Some(0) && ts.rate_bps[i] < 10_000_000_000 && net.flows()[ts.flow[i] as usize].dst == 15)
        .count();
    assert!(idle_below_line > 50, "{idle_below_line} idle samples of request connections below line rate");
}

/// `measure.fct_until`: the FCT statistics count the flows that start before it, and the run goes
/// on under the same load until they finish: every counted flow finishes, where counting every
/// flow to the end leaves the large late ones out.
#[test]
fn fct_until_counts_flows_that_have_time_to_finish() {
    let toml = |measure: &str| {
        format!(
            r#"
            duration = "60ms"
            warmup = "5ms"
            [topology]
            kind = "fat_tree"
            k = 4
            link_rate = "10Gbps"
            link_delay = "1us"
            [[workloads]]
            kind = "flow_sizes"
            cdf = "alistorage"
            load = 0.4
            [measure]
            {measure}
            "#
        )
    };
    let counts = |measure: &str| {
        let net = run_net(&toml(measure));
        let tables = net.tables();
        let fct = &tables.iter().find(|(n, _)| *n == "fct").expect("an fct table").1;
        let all = (0..fct.rows()).find(|&r| fct.get("bucket").unwrap().text(r) == "all").expect("all sizes");
        let num = |col: &str| fct.get(col).unwrap().text(all).parse::<u64>().unwrap();
        (num("flows"), num("flows_started"))
    };
    let (done, started) = counts("");
    assert!(done < started, "{done} of {started} flows finished");
    let (done_until, started_until) = counts("fct_until = \"30ms\"");
    assert_eq!(done_until, started_until, "every flow started before 30 ms finished by 60 ms");
    assert!(started_until * 10 < started * 6, "{started_until} flows counted in 25 ms, {started} in 55 ms");
    // With until = "flows_done" the run ends once they have: before its 60 ms.
    let net = run_net(&toml("fct_until = \"30ms\"").replace("warmup = \"5ms\"", "warmup = \"5ms\"\nuntil = \"flows_done\""));
    assert!(net.end() < Time::from_us(60_000) && net.end() >= Time::from_us(30_000), "ended at {}", net.end());
    let tables = net.tables();
    let fct = &tables.iter().find(|(n, _)| *n == "fct").expect("an fct table").1;
    let all = (0..fct.rows()).find(|&r| fct.get("bucket").unwrap().text(r) == "all").expect("all sizes");
    assert_eq!(fct.get("flows").unwrap().text(all), fct.get("flows_started").unwrap().text(all), "every counted flow finished");
    let e = rttlab_sim::Scenario::from_toml(&toml("").replace("warmup = \"5ms\"", "warmup = \"5ms\"\nuntil = \"flows_done\"")).unwrap_err().to_string();
    assert!(e.contains("measure.fct_until with a flow_sizes or incast workload"), "{e}");
    for bad in ["5ms", "61ms"] {
        let e = rttlab_sim::Scenario::from_toml(&toml(&format!("fct_until = \"{bad}\""))).unwrap_err().to_string();
        assert!(e.contains("measure.fct_until") && e.contains("after the warm-up (5ms) and at most the duration (60ms)"), "{e}");
    }
}
