//! One simulation on several threads (`run.threads`, `rttlab_sim::partition`) gives the same
//! summary and tables, bit for bit, and counts the same events, as on one: every shipped
//! scenario at the fingerprints' lengths, and fabrics, workloads and controllers drawn at
//! random.

use rand::{Rng, SeedableRng};
use rttlab_sim::{Output, Scenario};

/// The summary and tables, as text to compare, with the events handled (`perf.events`).
fn results(o: &Output) -> (String, String) {
    (serde_json::to_string(&o.summary).unwrap(), format!("{:?} events {}", o.tables, o.meta["perf"]["events"]))
}

/// `s` run on 1, 2 and 3 threads: the first run's results where all agree, else what differs.
fn differs(name: &str, s: &mut Scenario) -> Option<String> {
    let mut first = None;
    for threads in [1, 2, 3] {
        s.run.threads = rttlab_sim::scenario::Threads::Count(threads);
        let o = rttlab_sim::run(s).unwrap_or_else(|e| panic!("{name}: {e}"));
        let used = o.meta["perf"]["threads"].as_u64().unwrap();
        let got = results(&o);
        match &first {
            None => first = Some(got),
            Some(want) if *want != got => {
                let which = if want.0 != got.0 { format!("summary\n  1: {}\n  {threads}: {}", want.0, got.0) } else { "tables or events handled".into() };
                return Some(format!("{name} on {threads} threads ({used} used): {which}"));
            }
            Some(_) => {}
        }
    }
    None
}

#[test]
fn every_shipped_scenario_gives_the_same_bytes_on_1_2_and_3_threads() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
    let mut bad = Vec::new();
    for &(name, duration, warmup) in crate::common::RUNS {
        let mut s = Scenario::from_toml_file(std::path::Path::new(&format!("{root}/{name}.toml"))).unwrap();
        s.duration = duration.parse().unwrap();
        s.warmup = warmup.parse().unwrap();
        s.measure.queue_trace = false;
        bad.extend(differs(name, &mut s));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A scenario drawn from `seed`: a fat-tree or a leaf-spine with tiers of their own delays, one
/// of the transports and its controllers, small buffers (drops, retransmissions), and flows,
/// flow sizes, incasts, RPCs and pings in random measure; a routing mode, in half the cases
/// faults of every kind, and in half a training job, on its own transport in half of those.
fn drawn(seed: u64) -> String {
    let mut r = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let ns = |r: &mut rand_xoshiro::Xoshiro256PlusPlus, lo: u64, hi: u64| format!("\"{}ns\"", r.random_range(lo..=hi) * 100);
    let topology = if r.random_bool(0.4) {
        format!("kind = \"fat_tree\"\nk = 4\nlink_rate = \"{}Gbps\"\nlink_delay = {}", [10, 25, 100][r.random_range(0..3)], ns(&mut r, 2, 20))
    } else {
        format!(
            "kind = \"leaf_spine\"\nleaves = {}\nspines = {}\nhosts_per_leaf = {}\nlink_rate = \"{}Gbps\"\nlink_delay = {}\n[topology.spine_link]\ndelay = {}",
            r.random_range(2..=5),
            r.random_range(1..=3),
            r.random_range(3..=6),
            [10, 40, 100][r.random_range(0..3)],
            ns(&mut r, 2, 20),
            ns(&mut r, 2, 30)
        )
    };
    let (transport, cc) = [
        ("kind = \"window\"\ndelayed_ack = true", "algorithm = \"dctcp\""),
        ("kind = \"window\"", "algorithm = \"swift\""),
        ("kind = \"message\"", "algorithm = \"timely\""),
        ("kind = \"message\"", "algorithm = \"dcqcn\""),
        ("kind = \"message\"", "algorithm = \"hpcc\""),
    ][r.random_range(0..5)];
    let pfc = transport.contains("message") && r.random_bool(0.5);
    let (run_seed, duration) = (r.random_range(1..1000), r.random_range(200..=600));
    let mut s = format!(
        "name = \"drawn-{seed}\"\nseed = {run_seed}\nduration = \"{duration}us\"\nwarmup = \"{}us\"\n[topology]\n{topology}\n[switch]\nbuffer = \"{}KB\"\npfc = {pfc}\n[switch.ecn]\nk = \"{}KB\"\n[transport]\n{transport}\n[cc]\n{cc}\n",
        r.random_range(0..=100),
        r.random_range(200..=2000),
        r.random_range(20..=100),
    );
    if r.random_bool(0.5) {
        s += &format!("[[flows]]\nsrc = \"0-1\"\ndst = 2\nsize = \"{}KB\"\n", r.random_range(10..=500));
    }
    s += &format!("[[workloads]]\nkind = \"flow_sizes\"\ncdf = \"websearch\"\nload = {:.2}\n", r.random_range(0.2..0.8));
    if r.random_bool(0.5) {
        s += &format!("[[workloads]]\nkind = \"incast\"\nsenders = \"1-4\"\nreceiver = 0\nsize = \"{}KB\"\nrate = 5000.0\n", r.random_range(10..=200));
    }
    if r.random_bool(0.4) && transport.contains("message") {
        s += "[[workloads]]\nkind = \"rpc\"\nsize = \"16KB\"\nrate = 20000.0\n";
    }
    if r.random_bool(0.4) {
        s += "[[workloads]]\nkind = \"pinger\"\ninterval = \"5us\"\n";
    }
    // Path choice: a routing mode, on the window transport time-based loss detection and PLB,
    // on the message transport selective repeat (drawn after the rest, so the cases above
    // keep their draws).
    let mode = ["ecmp", "flowlet", "spray", "adaptive"][r.random_range(0..4)];
    // The sender's entropy strategies share REPS's draw, told apart by the case number, so
    // that every other draw stays as it was.
    let spray = match ["random", "round_robin", "reps"][r.random_range(0..3)] {
        "reps" => ["reps", "oblivious", "bitmap", "mixed", "reps_freezing"][(seed % 5) as usize],
        other => other,
    };
    let adaptive = ["packet", "flowlet"][r.random_range(0..2)];
    s += &format!("[routing]\nmode = \"{mode}\"\nspray = \"{spray}\"\nadaptive = \"{adaptive}\"\nflowlet_gap = \"{}us\"\n", r.random_range(1..=50));
    if transport.contains("window") && r.random_bool(0.5) {
        s = s.replace("kind = \"window\"", "kind = \"window\"\nloss_detection = \"rack\"");
        s += &format!("[cc.plb]\nrounds = {}\nthreshold = 0.1\n", r.random_range(1..=3));
    }
    if transport.contains("message") && r.random_bool(0.5) {
        s += "[nic]\nrecovery = \"selective_repeat\"\n";
    }
    // Swift on one ECMP path without PLB: one, two or four subflows, by the case number.
    if cc.contains("swift") && mode == "ecmp" && !s.contains("[cc.plb]") {
        s = s.replace("kind = \"window\"", &format!("kind = \"window\"\nsubflows = {}", [1, 2, 4][(seed / 9 % 3) as usize]));
    }
    // Trimming where a switch would drop, in two cases of three, told apart by the case
    // number so that every draw stays as it was.
    let trimming = ["arriving", "either", "off"][(seed / 3 % 3) as usize];
    s = s.replace("[switch]\n", &format!("[switch]\ntrimming = \"{trimming}\"\n"));
    // Faults on the fabric's links and switches, with PRR on either transport.
    if r.random_bool(0.5) {
        s = s.replace(&format!("[transport]\n{transport}"), &format!("[transport]\n{transport}\nprr = {}", r.random_bool(0.5)));
        s = s.replace("[routing]\n", &format!("[routing]\nfailover_delay = \"{}us\"\n", r.random_range(5..=100)));
        let net = rttlab_sim::Network::new(&Scenario::from_toml(&s).unwrap_or_else(|e| panic!("case {seed}: {e}\n{s}"))).expect("the drawn fabric");
        let (ports, graph) = (net.ports(), net.graph());
        let name = |n: u32| graph.node_name(n);
        let links: Vec<(u32, u32)> = ports.iter().map(|p| (p.node, ports[p.peer.idx()].node)).filter(|&(a, b)| a >= graph.hosts && b >= graph.hosts).collect();
        for _ in 0..r.random_range(1..=3) {
            let (a, b) = links[r.random_range(0..links.len())];
            let at = r.random_range(0..150);
            let target = match r.random_range(0..6) {
                0 => format!("switch = \"{}\"\nkind = \"down\"", name(a)),
                1 => format!("port = \"{}-{}\"\nkind = \"drop\"\nprobability = 0.01", name(a), name(b)),
                2 => format!("link = \"{}-{}\"\nkind = \"degrade\"\nfraction = 0.3", name(a), name(b)),
                _ => format!("link = \"{}-{}\"\nkind = \"down\"", name(a), name(b)),
            };
            s += &format!("[[faults]]\nat = \"{at}us\"\nuntil = \"{}us\"\n{target}\n", (at + r.random_range(10..=100)).min(duration));
        }
    }
    // A training job on four hosts, in half the cases on its own transport and controller
    // (the other kind than the run's), a skewed all-to-all's shares drawn too.
    if r.random_bool(0.5) {
        let collective = ["allreduce_ring", "allreduce_butterfly", "alltoall", "alltoall_serial", "allgather", "reduce_scatter"][r.random_range(0..6)];
        s += &format!(
            "[[jobs]]\ncollective = \"{collective}\"\nhosts = \"0-3\"\nplacement = \"random\"\nsize = \"{}KB\"\niterations = {}\ngap = \"{}us\"\n",
            r.random_range(20..=200),
            r.random_range(1..=2),
            r.random_range(0..=10)
        );
        // Persistent connections in half the cases, by the case number (the draws stay).
        if (seed / 5).is_multiple_of(2) {
            s += "connections = \"persistent\"\n";
        }
        if collective.starts_with("alltoall") && r.random_bool(0.5) {
            s += &format!("skew = {:.2}\n", r.random_range(0.5..2.0));
        }
        if r.random_bool(0.5) {
            let own = match (transport.contains("window"), r.random_bool(0.5)) {
                (true, true) => "transport = { kind = \"message\" }\ncc = { algorithm = \"dcqcn\" }",
                (true, false) => "transport = { kind = \"message\" }\ncc = { algorithm = \"timely\" }",
                (false, true) => "transport = { kind = \"window\" }\ncc = { algorithm = \"dctcp\" }",
                (false, false) => "transport = { kind = \"window\" }\ncc = { algorithm = \"swift\" }",
            };
            s += &format!("{own}\n");
        }
    }
    // Ultra Ethernet's transport in place of TCP's in half the window cases, by the case number
    // (PRR kept, TCP's own keys left out).
    if transport.contains("window") && (seed / 9).is_multiple_of(2) {
        let (head, rest) = s.split_once("[transport]\n").expect("a transport table");
        let (table, tail) = rest.split_once("[cc]\n").expect("the controller after it");
        let prr = table.lines().filter(|l| l.starts_with("prr")).map(|l| format!("{l}\n")).collect::<String>();
        s = format!("{head}[transport]\nkind = \"uet\"\n{prr}[cc]\n{tail}");
    }
    s
}

#[test]
fn drawn_fabrics_give_the_same_bytes_on_1_2_and_3_threads() {
    let cases: u64 = std::env::var("RTTLAB_THREAD_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24);
    let mut bad = Vec::new();
    for seed in 0..cases {
        let text = drawn(seed);
        let mut s = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("case {seed}: {e}\n{text}"));
        bad.extend(differs(&format!("case {seed}"), &mut s).map(|d| format!("{d}\n{text}")));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Subflows (`transport.subflows`): each subflow's label gives its packets their own path
/// across the partitions' cut, and its ACKs echo it back.
#[test]
fn subflows_give_the_same_bytes_on_1_2_and_3_threads() {
    let text = "duration = \"1ms\"\nwarmup = \"50us\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n[switch]\npfc = false\nbuffer = \"1MB\"\n[transport]\nkind = \"window\"\nloss_detection = \"rack\"\nsubflows = 4\n[cc]\nalgorithm = \"swift\"\n[[workloads]]\nkind = \"flow_sizes\"\ncdf = \"websearch\"\nload = 0.6\n[[workloads]]\nkind = \"incast\"\nsenders = \"4-15\"\nreceiver = 0\nsize = \"100KB\"\nrate = 5000.0\n";
    let mut s = Scenario::from_toml(text).unwrap();
    assert_eq!(differs("subflows", &mut s), None);
}

/// Runs that end when their flows finish (`until = "flows_done"`): no partition handles an
/// event past the end, though it learns of the others' finishes only from their clocks
/// (`parallel::Horizon`). An incast over a k = 4 fat-tree with PFC, and the same with
/// workload flows whose FCTs are counted up to `measure.fct_until`; each must end by its flows,
/// before its duration.
#[test]
fn runs_that_end_when_their_flows_finish_give_the_same_bytes_on_1_2_and_3_threads() {
    let base = "duration = \"50ms\"\nuntil = \"flows_done\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n[switch]\npfc = true\n[transport]\nkind = \"message\"\n[cc]\nalgorithm = \"none\"\n[[flows]]\nsrc = \"8-15\"\ndst = 0\nsize = \"300KB\"\n";
    let counted = format!("{base}[measure]\nfct_until = \"100us\"\n[[workloads]]\nkind = \"flow_sizes\"\ncdf = \"websearch\"\nload = 0.3\n");
    let mut bad = Vec::new();
    for (name, text) in [("incast", base.to_string()), ("incast and counted flows", counted)] {
        let mut s = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        bad.extend(differs(name, &mut s));
        let o = rttlab_sim::run(&s).unwrap();
        let simulated = o.meta["perf"]["simulated_s"].as_f64().unwrap();
        assert!(simulated < 0.05, "{name}: ran to its duration ({simulated} s), not to its flows' end");
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
