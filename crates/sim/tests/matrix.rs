//! Connection matrices in htsim's format (`[[workloads]] kind = "matrix"`): transfers chained
//! by triggers, their times against hand computation, barriers, errors that name the file and
//! line, and htsim's own sample matrices run unchanged.

use crate::common::{run_net, scenario};
use rttlab_sim::{Network, Scenario};
use std::path::PathBuf;

/// `text` written to a file of its own; its path.
fn matrix_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rttlab-matrix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A 3-host star at 10 Gbps with 1 µs links, the message transport at line rate, 1500 B
/// packets (1436 B of payload) and 64 B ACKs, running the matrix in `file`.
fn star3(file: &std::path::Path) -> String {
    format!(
        "duration = \"1ms\"\n[topology]\nkind = \"star\"\nhosts = 3\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[switch]\npfc = false\n[nic]\nmtu = \"1500B\"\nheader = \"64B\"\nack = \"64B\"\n[cc]\nalgorithm = \"none\"\n[[workloads]]\nkind = \"matrix\"\nfile = \"{}\"\n",
        file.display()
    )
}

/// (start, send done, received) of each transfer, in µs, by row.
fn times(net: &Network) -> Vec<[f64; 3]> {
    let tables = net.tables();
    let t = &tables.iter().find(|(n, _)| *n == "transfers").unwrap().1;
    let json = rttlab_sim::report::table::tables_json(&vec![("transfers", t.clone())]).0;
    let col = |c: &str| json["transfers"][c].as_array().unwrap().iter().map(|v| v.as_f64().unwrap_or(f64::NAN)).collect::<Vec<_>>();
    let (a, b, c) = (col("start_us"), col("send_done_us"), col("recv_done_us"));
    (0..a.len()).map(|i| [a[i], b[i], c[i]]).collect()
}

/// Ten packets of 1500 B from host to host through the star: the last arrives after the first
/// packet's two serializations (1.2 µs each) and two links (1 µs each), then nine more
/// serializations: 15.2 µs. Its segment's ACK (64 B, 51.2 ns per link) is back 2.1024 µs
/// later. A trigger reaches the transfer it starts one link delay (1 µs) later. So: the first
/// transfer is received at 15.2 and acknowledged at 17.3024; the second starts at 16.2 (on the
/// first's receipt), is received at 31.4 and acknowledged at 33.5024; the third starts at
/// 34.5024 (on the second's acknowledgement) and is received at 49.7024.
#[test]
fn a_chain_of_triggers_runs_to_the_hand_computed_picosecond() {
    let text = "Nodes 3\nConnections 3\nTriggers 2\n0->1 id 1 start 0 size 14360 recv_done_trigger 1\n1->2 id 2 trigger 1 size 14360 send_done_trigger 2\n2->0 id 3 trigger 2 size 14360\ntrigger id 1 oneshot\ntrigger id 2 oneshot\n";
    let toml = star3(&matrix_file("chain.cm", text)).replace("duration = \"1ms\"", "duration = \"1ms\"\nuntil = \"flows_done\"");
    let net = run_net(&toml);
    // The run ends with its last transfer, at the end of the 1 µs lookahead cell holding 49.7024 µs.
    assert_eq!(net.summary().measured_s, 49.999999e-6);
    let t = times(&net);
    assert_eq!(t[0], [0.0, 17.3024, 15.2]);
    assert_eq!(t[1], [16.2, 33.5024, 31.4]);
    assert_eq!(t[2][0], 34.5024);
    assert_eq!(t[2][2], 49.7024);
}

/// The chain above with its third transfer a later message on the first one's connection (an
/// htsim `msg` line with a trigger): the connection outlives its first transfer and carries the
/// message when the trigger fires, to the same picoseconds (the connection is idle by then and
/// the controller sends at line rate), each message a row of its own under the connection's id.
#[test]
fn a_later_message_rides_its_connection_to_the_hand_computed_picosecond() {
    let text = "Nodes 3\nConnections 3\nTriggers 2\n0->1 id 1 start 0 size 14360 recv_done_trigger 1\n1->2 id 2 trigger 1 size 14360 send_done_trigger 2\n0->1 id 1 msg trigger 2 size 14360\ntrigger id 1 oneshot\ntrigger id 2 oneshot\n";
    let toml = star3(&matrix_file("later.cm", text)).replace("duration = \"1ms\"", "duration = \"1ms\"\nuntil = \"flows_done\"");
    let net = run_net(&toml);
    let t = times(&net);
    assert_eq!(t[0], [0.0, 17.3024, 15.2]);
    assert_eq!(t[1], [16.2, 33.5024, 31.4]);
    assert_eq!((t[2][0], t[2][2]), (34.5024, 49.7024));
    let tables = net.tables();
    let ids = &tables.iter().find(|(n, _)| *n == "transfers").unwrap().1;
    let json = rttlab_sim::report::table::tables_json(&vec![("transfers", ids.clone())]).0;
    assert_eq!(json["transfers"]["id"], serde_json::json!([1, 2, 1]));
}

/// A barrier of count 2 starts its transfer once both transfers into host 2 are received, one
/// link delay after the later one.
#[test]
fn a_barrier_waits_for_its_count() {
    let text = "Nodes 3\n0->2 id 1 start 0 size 14360 recv_done_trigger 1\n1->2 id 2 start 0 size 28720 recv_done_trigger 1\n2->0 id 3 trigger 1 size 1436\ntrigger id 1 barrier count 2\n";
    let net = run_net(&star3(&matrix_file("barrier.cm", text)));
    let t = times(&net);
    let later = t[0][2].max(t[1][2]);
    assert!(t[0][2] != t[1][2]);
    assert!((t[2][0] - (later + 1.0)).abs() < 1e-9, "{t:?}");
}

#[test]
fn a_matrix_naming_a_host_outside_the_topology_is_one_line() {
    let file = matrix_file("outside.cm", "Nodes 8\n0->1 id 1 start 0 size 10\n5->1 id 2 start 0 size 10\n");
    let e = Scenario::from_toml(&star3(&file)).unwrap_err().to_string();
    assert_eq!(e, format!("workloads[0].file: {}:3: host 5 is outside the topology's 3 hosts", file.display()));
    let e = Scenario::from_toml(&star3(&PathBuf::from("/nonexistent.cm"))).unwrap_err().to_string();
    assert!(e.starts_with("workloads[0].file = /nonexistent.cm: a connection matrix file that can be read"), "{e}");
}

/// htsim's own sample matrices (`../shared/data/htsim-matrices`, made with its generators):
/// every transfer runs on a k = 8 fat-tree at 100 Gbps, and every triggered one starts no
/// sooner than one link delay after a transfer that fires its trigger.
#[test]
fn htsims_sample_matrices_run_unchanged() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/htsim-matrices");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("{} is not here: skipped", dir.display());
        return;
    };
    let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "cm")).collect();
    files.sort();
    for file in files {
        let text = format!(
            "duration = \"20ms\"\n[topology]\nkind = \"fat_tree\"\nk = 8\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n[switch]\npfc = true\n[nic]\nmtu = \"1064B\"\n[cc]\nalgorithm = \"dcqcn\"\n[[workloads]]\nkind = \"matrix\"\nfile = \"{}\"\n",
            file.display()
        );
        let net = run_net(&text);
        let t = times(&net);
        let m = rttlab_sim::workload::matrix::Matrix::parse(&std::fs::read_to_string(&file).unwrap(), "m").unwrap();
        assert_eq!(t.len(), m.transfers.len());
        for (i, tr) in m.transfers.iter().enumerate() {
            assert!(t[i].iter().all(|x| x.is_finite()), "{}: transfer {} did not finish: {:?}", file.display(), tr.id, t[i]);
            if let Some(k) = tr.trigger {
                let mut first = f64::INFINITY;
                for (j, u) in m.transfers.iter().enumerate() {
                    if u.send_done.contains(&k) {
                        first = first.min(t[j][1]);
                    }
                    if u.recv_done.contains(&k) {
                        first = first.min(t[j][2]);
                    }
                }
                assert!(
                    t[i][0] >= first + 1.0 - 1e-9,
                    "{}: transfer {} started at {} before its trigger {k} (first fired {first})",
                    file.display(),
                    tr.id,
                    t[i][0]
                );
            }
        }
        eprintln!("{}: {} transfers, the last received at {:.1} µs", file.display(), t.len(), t.iter().map(|x| x[2]).fold(0.0, f64::max));
    }
}

/// A ring of transfers over the 16 hosts of a k = 4 fat-tree, each starting on the previous
/// one's receipt: the same bytes on 1, 2 and 3 threads.
#[test]
fn a_matrix_gives_the_same_bytes_for_any_thread_count() {
    let mut text = String::from("Nodes 16\n");
    for i in 0..16u32 {
        let start = if i == 0 { "start 0".to_string() } else { format!("trigger {i}") };
        text += &format!("{i}->{} id {} {start} size 100000 recv_done_trigger {}\n", (i + 5) % 16, i + 1, i + 1);
    }
    for k in 1..=16 {
        text += &format!("trigger id {k} oneshot\n");
    }
    // The last transfer's trigger fires nothing: declare it, and let the first wait for none.
    let file = matrix_file("ring.cm", &text.replace("recv_done_trigger 16\n", "\n"));
    let toml = format!(
        "duration = \"2ms\"\nuntil = \"flows_done\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nlink_rate = \"25Gbps\"\nlink_delay = \"1us\"\n[[workloads]]\nkind = \"matrix\"\nfile = \"{}\"\n",
        file.display()
    );
    let mut outs = Vec::new();
    for threads in [1, 2, 3] {
        let mut s = scenario(&toml);
        s.run.threads = rttlab_sim::scenario::Threads::Count(threads);
        let o = rttlab_sim::run(&s).unwrap();
        assert_eq!(o.meta["perf"]["threads"].as_u64(), Some(threads as u64));
        outs.push((serde_json::to_string(&o.summary).unwrap(), format!("{:?} events {}", o.tables, o.meta["perf"]["events"])));
    }
    assert!(outs.iter().all(|o| *o == outs[0]));
    let net = run_net(&toml);
    let t = times(&net);
    assert!(t.iter().all(|x| x[2].is_finite()), "{t:?}");
}

/// htsim's `failure` lines take an aggregation switch's uplink out for the whole run, as
/// htsim's `add_failed_link` does: on a k = 4 fat-tree aggregation switch 0 (s8, pod 0's first)
/// has uplinks 0 and 1, to cores s16 and s17; failing uplink 1 leaves the link idle in both
/// directions (routes never had it: nothing is lost to it) while pod 0's traffic to other pods
/// takes the other three of its four core paths.
#[test]
fn htsims_failure_lines_take_an_aggregation_uplink_out_for_the_run() {
    let pairs: String = (0..4).map(|h| format!("{h}->{} id {} start 0 size 200000\n", 12 + h, h + 1)).collect();
    let file = matrix_file("fail.cm", &format!("Nodes 16\nConnections 4\nFailures 1\n{pairs}failure switch_type AGG switch_id 0 link_id 1\n"));
    let text = format!(
        "duration = \"2ms\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[cc]\nalgorithm = \"none\"\n[[workloads]]\nkind = \"matrix\"\nfile = \"{}\"\n",
        file.display()
    );
    let net = run_net(&text);
    assert!(times(&net).iter().all(|t| t[2].is_finite()), "every transfer arrives");
    let port = |name: &str| {
        net.ports().iter().position(|p| format!("{}-{}", net.graph().node_name(p.node), net.graph().node_name(net.ports()[p.peer.idx()].node)) == name).unwrap()
    };
    for name in ["s8-s17", "s17-s8"] {
        let p = net.port(rttlab_sim::core::ids::PortId(port(name) as u32));
        assert_eq!(p.tx_bytes(), 0, "{name} carried nothing");
    }
    assert_eq!(net.summary().lost_down, 0);
    // Outside a fat-tree, or past its switches, a failure line is an error naming the line.
    let bad = matrix_file("fail-bad.cm", &format!("Nodes 16\nConnections 4\n{pairs}failure switch_type AGG switch_id 8 link_id 0\n"));
    let e = Network::new(&scenario(&text.replace(&file.display().to_string(), &bad.display().to_string()))).err().expect("an error").to_string();
    assert!(e.contains("fail-bad.cm:7: switch_id 8 link_id 0: a k = 4 fat-tree has aggregation switches 0..7 with uplinks 0..1"), "{e}");
}
