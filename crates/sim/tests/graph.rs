//! Explicit topologies (`kind = "graph"`, HPCC topology files), unequal host counts, and the
//! per-port switch settings of `[[switch.ports]]`.

use crate::common::{cell, run_net, scenario};
use rttlab_sim::report::table::tables_json;
use rttlab_sim::{Network, Scenario};
use std::fmt::Write;

/// Traffic across the fabric of `k`: every host sends to the host half the fabric away.
fn traffic(hosts: u32) -> String {
    (0..hosts).map(|h| format!("[[flows]]\nsrc = {h}\ndst = {}\nsize = \"200KB\"\n", (h + hosts / 2) % hosts)).collect()
}

/// The links of a k-ary fat-tree in the order the built-in topology lays them (hosts, then
/// per pod edge–aggregation and aggregation–core), as (a, b) node names.
fn fat_tree_links(k: u32, host: impl Fn(u32) -> String, switch: impl Fn(u32) -> String) -> Vec<(String, String)> {
    let half = k / 2;
    let edges = k * half;
    let mut links: Vec<(String, String)> = (0..edges * half).map(|h| (host(h), switch(h / half))).collect();
    for p in 0..k {
        for e in 0..half {
            for a in 0..half {
                links.push((switch(p * half + e), switch(edges + p * half + a)));
            }
        }
        for a in 0..half {
            for c in 0..half {
                links.push((switch(edges + p * half + a), switch(2 * edges + a * half + c)));
            }
        }
    }
    links
}

const RUN: &str = "duration = \"300us\"\n";

fn built_in(k: u32) -> String {
    format!("{RUN}[topology]\nkind = \"fat_tree\"\nk = {k}\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n{}", traffic(k * k * k / 4))
}

fn as_graph(k: u32) -> String {
    let (hosts, switches) = (k * k * k / 4, 5 * k * k / 4);
    let mut t = format!("{RUN}[topology]\nkind = \"graph\"\nhosts = [\"h[0-{}]\"]\nswitches = [\"s[0-{}]\"]\n", hosts - 1, switches - 1);
    t += "link_rate = \"10Gbps\"\nlink_delay = \"1us\"\nlinks = [\n";
    for (a, b) in fat_tree_links(k, |h| format!("h{h}"), |s| format!("s{s}")) {
        writeln!(t, "  {{ a = \"{a}\", b = \"{b}\" }},").unwrap();
    }
    t + "]\n" + &traffic(hosts)
}

/// Everything a run reports but the wall-clock figures.
fn results(net: &Network) -> String {
    let (tables, _) = tables_json(&net.tables());
    format!("{}\n{tables}", serde_json::to_string(&net.summary()).unwrap())
}

#[test]
fn a_fat_tree_written_as_a_graph_runs_bit_for_bit_as_the_built_in_one() {
    for k in [4, 6] {
        let (a, b) = (run_net(&built_in(k)), run_net(&as_graph(k)));
        assert_eq!(a.routing().table_entries(), b.routing().table_entries(), "k = {k}: route tables");
        assert!(a.summary().flows_finished > 0);
        assert_eq!(results(&a), results(&b), "k = {k}");
    }
    // Route tables stay as small on the graph at k = 8: linear in hosts, as the built-in's.
    let (g, b) = (Network::new(&scenario(&as_graph(8))).unwrap(), Network::new(&scenario(&built_in(8))).unwrap());
    assert_eq!(g.routing().table_entries(), b.routing().table_entries());
    assert!((g.routing().table_entries() as f64 / g.graph().hosts as f64) < 12.0);
}

#[test]
fn an_hpcc_topology_file_runs_as_the_same_graph_written_out() {
    // The k = 4 fat-tree in the HPCC simulator's format: hosts are ids 0..15, switches 16..35.
    let links = fat_tree_links(4, |h| h.to_string(), |s| (16 + s).to_string());
    let mut file = format!("36 20 {}\n{}\n", links.len(), (16..36).map(|s| s.to_string()).collect::<Vec<_>>().join(" "));
    for (a, b) in &links {
        writeln!(file, "{a} {b} 10Gbps 0.001ms 0").unwrap();
    }
    let path = std::env::temp_dir().join(format!("rttlab-hpcc-topology-{}.txt", std::process::id()));
    std::fs::write(&path, &file).unwrap();
    let from_file = run_net(&format!("{RUN}[topology]\nkind = \"graph\"\nfile = \"{}\"\n{}", path.display(), traffic(16)));
    // A scenario file naming it relatively finds it beside itself.
    let scenario_path = path.with_extension("toml");
    let relative = path.file_name().unwrap().to_str().unwrap();
    std::fs::write(&scenario_path, format!("{RUN}[topology]\nkind = \"graph\"\nfile = \"{relative}\"\n{}", traffic(16))).unwrap();
    let s = Scenario::from_toml_file(&scenario_path).unwrap();
    std::fs::remove_file(&scenario_path).unwrap();
    assert_eq!(s.hosts(), 16);
    let built = run_net(&built_in(4));
    assert_eq!(from_file.graph().node_name(16), "s16", "names keep the file's ids");
    assert_eq!(serde_json::to_string(&from_file.summary()).unwrap(), serde_json::to_string(&built.summary()).unwrap());
    // A lossy link is refused, naming the file and the line.
    std::fs::write(&path, file.replace("0 16 10Gbps 0.001ms 0", "0 16 10Gbps 0.001ms 0.001")).unwrap();
    let e = Scenario::from_toml(&format!("{RUN}[topology]\nkind = \"graph\"\nfile = \"{}\"\n{}", path.display(), traffic(16))).unwrap_err().to_string();
    assert!(e.starts_with("topology.file = ") && e.contains("line 3: error rate 0.001: rttlab models lossless links"), "{e}");
    std::fs::remove_file(&path).unwrap();
    let e = Scenario::from_toml(&format!("{RUN}[topology]\nkind = \"graph\"\nfile = \"/nonexistent/topo.txt\"\n{}", traffic(16))).unwrap_err().to_string();
    assert!(e.starts_with("topology.file = /nonexistent/topo.txt: cannot be read"), "{e}");
}

/// A graph of `hosts` and `links` (TOML arrays' contents) with one flow h1 → h0.
fn graph(hosts: &str, switches: &str, links: &str) -> String {
    format!("{RUN}[topology]\nkind = \"graph\"\nhosts = [{hosts}]\nswitches = [{switches}]\nlink_rate = \"10Gbps\"\nlinks = [{links}]\n[[flows]]\nsrc = 1\ndst = 0\n")
}

fn error(toml: &str) -> String {
    Scenario::from_toml(toml).unwrap_err().to_string()
}

#[test]
fn each_graph_mistake_is_an_error_naming_the_item() {
    let ok = graph("\"a\", \"b\"", "\"t\"", "{a = \"a\", b = \"t\"}, {a = \"b\", b = \"t\"}");
    scenario(&ok);
    let cases = [
        (
            graph("\"a\", \"b\", \"c\"", "\"t\", \"u\"", "{a = \"a\", b = \"t\"}, {a = \"b\", b = \"t\"}, {a = \"c\", b = \"u\"}"),
            "topology.hosts[2] = c: connected to the other hosts: there is no path from a",
        ),
        (
            graph("\"a\", \"b\"", "\"t\"", "{a = \"a\", b = \"t\"}, {a = \"b\", b = \"t\"}, {a = \"t\", b = \"b\"}"),
            "topology.links[2] = t to b: each pair of nodes linked once (no duplicate links)",
        ),
        (
            graph("\"a\", \"b\"", "\"t\"", "{a = \"a\", b = \"t\"}, {a = \"b\", b = \"t\"}, {a = \"t\", b = \"t\"}"),
            "topology.links[2] = t to t: a link between two different nodes (no self-loops)",
        ),
        (
            graph("\"a\", \"b\"", "\"t\"", "{a = \"a\", b = \"t\"}, {a = \"b\", b = \"x\"}"),
            "topology.links[1].b = x: a name listed in topology.hosts or topology.switches",
        ),
        (
            graph("\"a\", \"b\"", "\"t\", \"u\"", "{a = \"a\", b = \"t\"}, {a = \"b\", b = \"t\"}, {a = \"b\", b = \"u\"}, {a = \"t\", b = \"u\"}"),
            "topology.hosts[1] = b (2 links): one link: a host has one NIC (multi-homed hosts are not supported)",
        ),
        (graph("\"a\", \"b\"", "\"t\"", "{a = \"a\", b = \"t\"}"), "topology.hosts[1] = b (0 links): one link, to its switch"),
        (
            graph("\"a\", \"b\"", "\"t\"", "{a = \"a\", b = \"t\"}, {a = \"a\", b = \"b\"}"),
            "topology.links[1] = a to b: hosts link to switches, not to each other",
        ),
        (graph("\"a\", \"a\"", "\"t\"", "{a = \"a\", b = \"t\"}"), "topology.hosts[1] = a: a name used once, by one host or switch"),
        (
            graph("\"a-1\", \"b\"", "\"t\"", "{a = \"a-1\", b = \"t\"}"),
            "topology.hosts[0] = \"a-1\": a name of letters, digits, '_', '.' and ':' (ports are named NODE-PEER, so no '-')",
        ),
        (
            graph("\"a[0-1]\"", "\"t[0-2]\"", "{a = \"a[0-1]\", b = \"t[0-2]\"}"),
            "topology.links[0] = a[0-1] (2 names) to t[0-2] (3 names): ranges of the same length (pairwise), or one end a single name",
        ),
    ];
    for (toml, expected) in cases {
        assert_eq!(error(&toml), expected);
    }
    let no_rate = ok.replace("link_rate = \"10Gbps\"\n", "");
    assert_eq!(error(&no_rate), "topology.links[0].rate = absent: a rate for the link, or topology.link_rate for every link");
}

#[test]
fn names_ranges_pairwise_destinations_and_per_direction_rates() {
    // h0 sends to r0 and h1 to r1 (pairwise), starting 10 us apart; the uplink of t is 5 Gbps
    // towards u and 20 Gbps back.
    let toml = format!(
        "{RUN}[topology]\nkind = \"graph\"\nhosts = [\"h[0-1]\", \"r[0-1]\"]\nswitches = [\"t\", \"u\"]\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n\
         links = [{{a = \"h[0-1]\", b = \"t\"}}, {{a = \"r[0-1]\", b = \"u\"}}, {{a = \"t\", b = \"u\", rate_ab = \"5Gbps\", rate_ba = \"20Gbps\"}}]\n\
         [[flows]]\nsrc = \"h[0-1]\"\ndst = [\"r0\", \"r1\"]\nstart_step = \"10us\"\n"
    );
    let net = run_net(&toml);
    let flows = net.tables().into_iter().find(|(n, _)| *n == "flows").unwrap().1;
    let dst = flows.get("dst").unwrap();
    assert_eq!((dst.text(0), dst.text(1)), ("2".to_string(), "3".to_string()), "pairwise");
    assert_eq!(cell(&net, "flows", &[("flow", "1")], "start_us"), 10.0);
    assert_eq!(cell(&net, "ports", &[("port", "t-u")], "rate_gbps"), 5.0);
    assert_eq!(cell(&net, "ports", &[("port", "u-t")], "rate_gbps"), 20.0);
    let u = cell(&net, "ports", &[("port", "t-u"), ("class", "1")], "utilization");
    assert!((u - 1.0).abs() < 0.05, "the 5 Gbps direction is the bottleneck: {u}");
}

#[test]
fn chains_and_leaf_spines_take_a_host_count_per_switch() {
    let chain = format!("{RUN}[topology]\nkind = \"chain\"\nswitches = 3\nhosts_per_switch = [1, 3, 2]\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[[flows]]\nsrc = 5\ndst = 0\n");
    let net = Network::new(&scenario(&chain)).unwrap();
    assert_eq!(net.graph().hosts, 6);
    // Host 0 on s0, hosts 1-3 on s1, hosts 4-5 on s2: 2 switch hops plus the host links.
    assert_eq!(net.routing().hops(5, 0), Some(4));
    assert_eq!(net.routing().hops(1, 3), Some(2));
    assert_eq!(error(&chain.replace("[1, 3, 2]", "[1, 3]")), "topology.hosts_per_switch = 2 counts: one count per switch: switches = 3");
    assert_eq!(error(&chain.replace("[1, 3, 2]", "[1, 0, 2]")), "topology.hosts_per_switch[1] = 0: at least 1");
    let ls = format!("{RUN}[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = [3, 1]\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[[flows]]\nsrc = 3\ndst = 0\n");
    let net = Network::new(&scenario(&ls)).unwrap();
    assert_eq!((net.graph().hosts, net.routing().hops(3, 0), net.routing().hops(2, 0)), (4, Some(4), Some(2)));
}

/// Four senders into one receiver over a 10 Gbps star without PFC, with `switch` TOML.
fn incast(switch: &str) -> String {
    format!(
        "duration = \"2ms\"\n[topology]\nkind = \"star\"\nhosts = 5\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n\
         [switch]\npfc = false\nclasses = 1\n{switch}\n[nic]\nack_class = 0\n[transport]\nkind = \"window\"\n[cc]\nalgorithm = \"reno\"\n\
         [[flows]]\nsrc = \"1-4\"\ndst = 0\nclass = 0\n[measure]\nqueue_ports = [\"s0-h0\"]\n"
    )
}

#[test]
fn a_port_override_sets_that_port_alone() {
    // A 20-packet limit on the receiver's port: its queue never exceeds 20 packets (+ the one
    // being sent), it drops; the other ports keep the shared buffer alone.
    let net = run_net(&incast("[[switch.ports]]\nports = [\"s0-h0\"]\nqueue_limit = \"20p\""));
    let max_kb = cell(&net, "ports", &[("port", "s0-h0")], "queue_max_kb");
    assert!(max_kb <= 20.0 * 1.5 + 1e-9, "{max_kb} KB");
    assert!(cell(&net, "ports", &[("port", "s0-h0")], "drops") > 0.0);
    // The same limit in bytes.
    let net = run_net(&incast("[[switch.ports]]\nswitches = [\"s0\"]\nlink_rate = \"10Gbps\"\nqueue_limit = \"30KB\""));
    assert!(cell(&net, "ports", &[("port", "s0-h0")], "queue_max_kb") <= 30.0);
    // A dynamic threshold of 1/8 on a 400 KB buffer: one queue holds at most α/(1+α) of it,
    // 400/9 = 44.4 KB (Choudhury and Hahne's steady state for a single congested queue).
    let net = run_net(&incast("buffer = \"400KB\"\nalpha = 0.125"));
    let max_kb = cell(&net, "ports", &[("port", "s0-h0")], "queue_max_kb");
    assert!(max_kb <= 400.0 / 9.0 + 1.5, "{max_kb} KB");
    assert!(max_kb >= 400.0 / 9.0 - 3.0, "{max_kb} KB");
    // Mistakes name the override.
    assert_eq!(
        Network::new(&scenario(&incast("[[switch.ports]]\nports = [\"s0-h9\"]\nqueue_limit = \"20p\""))).err().unwrap().to_string(),
        "switch.ports[0].ports[0] = s0-h9: an egress port named NODE-PEER of linked nodes, e.g. \"s0-h0\" (hosts h0.., switches s0..)"
    );
    assert_eq!(
        Network::new(&scenario(&incast("[[switch.ports]]\nswitches = [\"s0\"]\nlink_rate = \"40Gbps\"\nqueue_limit = \"20p\""))).err().unwrap().to_string(),
        "switch.ports[0] = no port: selectors that match at least one switch egress port"
    );
    assert_eq!(
        error(&incast("[[switch.ports]]\nqueue_limit = \"20p\"")),
        "switch.ports[0] = no selector: select ports by switches = [names], ports = [\"NODE-PEER\", ...] or link_rate"
    );
    assert_eq!(
        error(&incast("device_queue = 10\n[switch.ecn]\nk = \"30KB\"")),
        "switch.device_queue = 10: ECN thresholds and queue_limit in packets (\"20p\"): the device queue holds packets"
    );
    assert_eq!(error(&incast("[switch.ecn]\nkmin = \"20p\"\nkmax = \"60KB\"")), "switch.ecn.kmax = 60KB: in the unit of kmin (20p)");
}

#[test]
fn a_port_pattern_selects_every_port_it_matches_and_ecn_false_turns_marking_off() {
    // Marking at 10 KB everywhere: the incast's receiver port marks; off on every port towards
    // a host ("s*-h*", as htsim leaves the ToR downlinks under receiver credits), none does.
    let marked = run_net(&incast("[switch.ecn]\nk = \"10KB\""));
    assert!(cell(&marked, "ports", &[("port", "s0-h0")], "ecn_marks") > 0.0);
    let off = run_net(&incast("[switch.ecn]\nk = \"10KB\"\n[[switch.ports]]\nports = [\"s*-h*\"]\necn = false"));
    assert_eq!(cell(&off, "ports", &[("port", "s0-h0")], "ecn_marks"), 0.0);
    assert_eq!(
        Network::new(&scenario(&incast("[[switch.ports]]\nports = [\"s*-x*\"]\necn = false"))).err().unwrap().to_string(),
        "switch.ports[0].ports[0] = s*-x*: a pattern that matches at least one egress port (`*` matches any characters, e.g. \"s*-h*\")"
    );
    assert!(error(&incast("[[switch.ports]]\nports = [\"s0-h0\"]\necn = true")).contains("ecn = true: give the marking as a table"));
}

#[test]
fn marking_in_packets_sees_only_the_queue_above_the_device_queue() {
    // A step at 10 packets above a 20-packet device queue marks only once 30 packets wait.
    let base = "[switch.ecn]\nk = \"10p\"\nmark_at = \"enqueue\"";
    let dctcp = |s: String| s.replace("\"reno\"", "\"dctcp\"");
    let net = run_net(&dctcp(incast(&format!("device_queue = 20\n{base}"))));
    let marks = cell(&net, "ports", &[("port", "s0-h0")], "ecn_marks");
    let plain = run_net(&dctcp(incast(base)));
    assert!(marks > 0.0 && marks < cell(&plain, "ports", &[("port", "s0-h0")], "ecn_marks"));
    let (q, q_plain) = (cell(&net, "ports", &[("port", "s0-h0")], "queue_avg_kb"), cell(&plain, "ports", &[("port", "s0-h0")], "queue_avg_kb"));
    assert!(q > q_plain + 15.0, "{q} vs {q_plain} KB");
}

/// Two senders at line rate into one 10 Gbps host over PFC (XOFF 8 KB, XON 4 KB per ingress):
/// after each PAUSE about 5 KB more arrive (the pause's and the data's flight, the packet on the
/// wire).
fn pfc_pair(switch: &str) -> String {
    format!(
        "duration = \"2ms\"\n[topology]\nkind = \"star\"\nhosts = 3\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n\
         [switch]\nclasses = 1\npfc = true\npfc_xoff = \"8KB\"\npfc_xon = \"4KB\"\n{switch}\n[nic]\nack_class = 0\n\
         [[flows]]\nsrc = \"1-2\"\ndst = 0\nclass = 0\n"
    )
}

#[test]
fn pfc_headroom_holds_what_arrives_after_pause() {
    // 18 KB of shared buffer and no headroom: two ingresses at 8 KB plus what follows their
    // PAUSEs do not fit, and packets are dropped.
    let net = run_net(&pfc_pair("buffer = \"18KB\""));
    assert!(net.summary().drops > 0);
    // The same 18 KB shared, plus 6 KB of headroom reserved per port (3 ports: 36 KB in all):
    // lossless.
    let net = run_net(&pfc_pair("buffer = \"36KB\"\npfc_headroom = \"6KB\""));
    let s = net.summary();
    assert_eq!(s.drops, 0);
    assert!(s.pauses > 0 && s.throughput_gbps > 9.5, "{} pauses, {} Gbps", s.pauses, s.throughput_gbps);
    // Per port, and refused when it leaves no shared buffer.
    let e = Network::new(&scenario(&pfc_pair("buffer = \"36KB\"\n[[switch.ports]]\nports = [\"s0-h1\"]\npfc_headroom = \"40KB\""))).err().unwrap().to_string();
    assert_eq!(e, "switch.pfc_headroom = 40KB: the headroom s0 reserves (40KB over its ports and classes) must leave shared buffer (buffer = 36KB)");
    assert_eq!(error(&incast("pfc_headroom = \"6KB\"")), "switch.pfc_headroom = 6KB: PFC headroom needs switch.pfc = true");
}

/// A star whose h0 is on two bonded 10 Gbps ports (`host_links.ports`), with `rest` after it.
fn bonded(hosts: u32, rest: &str) -> String {
    format!(
        "duration = \"10ms\"\n[topology]\nkind = \"star\"\nhosts = {hosts}\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n\
         [[topology.host_links]]\nhost = 0\nrate = \"10Gbps\"\nports = 2\n[switch]\npfc = false\n[nic]\nmtu = \"1064B\"\nheader = \"64B\"\nack = \"64B\"\n{rest}"
    )
}

/// One 1000 B packet into a bonded host crosses its port (10 Gbps) and then two
/// store-and-forward hops at the bond's 20 Gbps, the cable's delay split over the three links.
#[test]
fn a_bonded_port_adds_a_store_and_forward_at_the_bond_rate() {
    let net = run_net(&bonded(2, "[[flows]]\nsrc = 1\ndst = 0\nsize = \"1000B\"\n"));
    let (ser_10g, ser_20g) = (851_200, 425_600); // 1064 B
    let delivered = ser_10g + 1_000_000 + ser_10g + 1_000_000 + 2 * ser_20g;
    assert_eq!(net.flows()[0].stats.finish, Some(rttlab_cc::Time(delivered)));
    let names: Vec<String> = (0..net.graph().nodes()).map(|n| net.graph().node_name(n)).collect();
    assert_eq!(names, ["h0", "h1", "s0", "h0_nic", "h0_p0", "h0_p1"]);
    let zero = bonded(2, "").replace("ports = 2", "ports = 0");
    assert_eq!(error(&zero), "topology.host_links[0].ports = 0: 1 to 16 bonded links");
}

/// Each connection keeps to one port of the bond, the one its 5-tuple hashes to: every port
/// sends exactly the packets of the connections routed through it, and both carry some.
#[test]
fn a_bond_hashes_each_connection_onto_one_port() {
    let net = run_net(&bonded(5, "[[flows]]\nsrc = \"1-4\"\ndst = 0\nconnections = 4\nsize = \"100KB\"\n"));
    let mut expected = [0u64; 2];
    for f in net.flows() {
        assert!(f.stats.finish.is_some());
        let port = net.path(f.src, f.dst, f.hash[0])[1];
        let name = rttlab_sim::fabric::port::port_name(net.graph(), net.ports(), port);
        let i = ["s0-h0_p0", "s0-h0_p1"].iter().position(|n| *n == name).unwrap_or_else(|| panic!("{name}"));
        expected[i] += 100;
    }
    assert!(expected.iter().all(|&n| n > 0), "{expected:?}");
    for (i, n) in expected.iter().enumerate() {
        assert_eq!(cell(&net, "ports", &[("port", &format!("s0-h0_p{i}")), ("class", "1")], "tx_packets"), *n as f64);
    }
}
