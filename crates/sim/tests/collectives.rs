//! Collective operations (`[[jobs]]`): ring all-reduce's completion time against its formula
//! on an idle star, iterations with compute gaps, the other collectives' structure, errors,
//! and the same bytes for any thread count.

use crate::common::scenario;
use rttlab_sim::{Network, Scenario};

/// A star of `hosts` hosts at 10 Gbps with 1 µs links, the message transport at line rate,
/// 1500 B packets (1436 B of payload) and 64 B ACKs, running `jobs`.
fn star(hosts: u32, jobs: &str) -> String {
    format!("duration = \"2ms\"\n[topology]\nkind = \"star\"\nhosts = {hosts}\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[switch]\npfc = false\n[nic]\nmtu = \"1500B\"\nheader = \"64B\"\nack = \"64B\"\n[cc]\nalgorithm = \"none\"\n{jobs}")
}

/// A table's column as numbers (NaN where empty).
fn column(net: &Network, table: &'static str, col: &str) -> Vec<f64> {
    let tables = net.tables();
    let t = &tables.iter().find(|(n, _)| *n == table).unwrap().1;
    let json = rttlab_sim::report::table::tables_json(&vec![(table, t.clone())]).0;
    json[table][col].as_array().unwrap().iter().map(|v| v.as_f64().unwrap_or(f64::NAN)).collect()
}

fn run(toml: &str) -> Network {
    let mut net = Network::new(&scenario(toml)).unwrap();
    net.run();
    net.check_invariants().unwrap();
    net
}

/// Ring all-reduce on an idle star: 2(N − 1) steps, in each every rank sends size/N to the
/// next at once, one flow per link and direction. A chunk of 14 360 B is ten 1500 B packets:
/// 15.2 µs from its first bit to its last byte's arrival (two serializations of 1.2 µs and two
/// 1 µs links for the first packet, nine serializations after it), and the next step starts one
/// link delay (1 µs) after the receipt. Two ranks: 2 × 15.2 + 1 = 31.4 µs; four ranks:
/// 6 × 15.2 + 5 = 96.2 µs. The ideal is 2(N − 1)/N of the buffer at 10 Gbps.
#[test]
fn ring_allreduce_takes_its_formula_on_an_idle_fabric() {
    for (ranks, want) in [(2u32, 31.4), (4, 96.2)] {
        let size = 14_360 * ranks as u64;
        let job = format!("[[jobs]]\ncollective = \"allreduce_ring\"\nhosts = \"0-{}\"\nsize = \"{size}B\"\n", ranks - 1);
        let net = run(&star(ranks + 1, &job));
        assert_eq!(column(&net, "jobs", "completion_us"), vec![want], "{ranks} ranks");
        let ideal = 2.0 * (ranks - 1) as f64 / ranks as f64 * size as f64 * 8.0 / 10e9 * 1e6;
        assert!((column(&net, "jobs", "ideal_us")[0] - ideal).abs() < 1e-6);
        let steps = column(&net, "steps", "end_us");
        assert_eq!(steps.len(), 2 * (ranks as usize - 1));
        assert!((steps[0] - 15.2).abs() < 1e-9, "{steps:?}");
    }
}

/// Iterations: a rank starts the next one `gap` (here 10 µs) after its last input arrived,
/// plus the trigger's link delay: the second iteration of the two-rank ring starts at
/// 31.4 + 1 + 10 µs and takes 31.4 µs again.
#[test]
fn iterations_follow_each_other_after_the_gap() {
    let job = "[[jobs]]\ncollective = \"allreduce_ring\"\nhosts = \"0-1\"\nsize = \"28720B\"\niterations = 2\ngap = \"10us\"\n";
    let net = run(&star(3, job));
    assert_eq!(column(&net, "jobs", "start_us"), vec![0.0, 42.4]);
    assert_eq!(column(&net, "jobs", "completion_us"), vec![31.4, 31.4]);
}

/// The other collectives, on fresh or persistent connections (the serial all-to-all's next
/// send waits for the one before to be acknowledged whole, on its connection or its message):
/// their steps, every transfer done, no faster than the ideal.
#[test]
fn every_collective_runs_its_steps() {
    for connections in ["per_transfer", "persistent"] {
        for (collective, steps) in [("allreduce_butterfly", 4), ("alltoall", 1), ("alltoall_serial", 3), ("allgather", 3), ("reduce_scatter", 3)] {
            let job = format!("[[jobs]]\ncollective = \"{collective}\"\nhosts = \"0-3\"\nsize = \"64KB\"\nconnections = \"{connections}\"\n");
            let net = run(&star(4, &job));
            let ends = column(&net, "steps", "end_us");
            assert!(ends.len() == steps && ends.iter().all(|t| t.is_finite()), "{collective}, {connections}: {ends:?}");
            let slowdown = column(&net, "jobs", "slowdown")[0];
            assert!(slowdown >= 1.0, "{collective}, {connections}: {slowdown}");
        }
    }
}

#[test]
fn a_job_larger_than_its_hosts_names_both_counts() {
    let e = |jobs: &str| Scenario::from_toml(&star(8, jobs)).unwrap_err().to_string();
    assert_eq!(e("[[jobs]]\ncollective = \"alltoall\"\nhosts = \"0-7\"\nranks = 9\nsize = \"1MB\"\n"), "jobs[0].ranks = 9: at most the job's 8 hosts");
    assert_eq!(
        e("[[jobs]]\ncollective = \"allreduce_butterfly\"\nhosts = \"0-5\"\nsize = \"1MB\"\n"),
        "jobs[0].ranks = 6: a power of two for allreduce_butterfly"
    );
    assert!(e("[[jobs]]\ncollective = \"allreduce\"\nhosts = \"0-5\"\nsize = \"1MB\"\n").contains("allreduce_ring"));
    assert_eq!(
        e("[[jobs]]\ncollective = \"allgather\"\nhosts = \"0-5\"\nsize = \"1MB\"\nskew = 1.0\n"),
        "jobs[0].skew = 1: for alltoall and alltoall_serial only (others send equal chunks): 0"
    );
    assert_eq!(
        e("[[jobs]]\ncollective = \"alltoall\"\nhosts = \"0-5\"\nsize = \"1MB\"\nskew = -1.0\n"),
        "jobs[0].skew = -1: a Zipf exponent from 0 (equal shares) to 8"
    );
}

/// Three jobs on a k = 4 fat-tree, a ring all-reduce over 8 ranks strided across the pods, an
/// all-to-all over the other 8 on its own controller, and an all-gather over all 16 on its own
/// transport (Swift's window beside DCQCN's messages), the last two on persistent connections:
/// the same bytes on 1, 2 and 3 threads.
#[test]
fn jobs_give_the_same_bytes_for_any_thread_count() {
    let toml = "duration = \"5ms\"\nuntil = \"flows_done\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nlink_rate = \"25Gbps\"\nlink_delay = \"1us\"\n[[jobs]]\ncollective = \"allreduce_ring\"\nhosts = [0, 2, 4, 6, 8, 10, 12, 14]\nsize = \"400KB\"\niterations = 2\ngap = \"5us\"\n[[jobs]]\ncollective = \"alltoall\"\nhosts = [1, 3, 5, 7, 9, 11, 13, 15]\nplacement = \"random\"\nsize = \"400KB\"\ncc = { algorithm = \"timely\" }\nconnections = \"persistent\"\n[[jobs]]\ncollective = \"allgather\"\nhosts = \"0-15\"\nplacement = \"random\"\nsize = \"800KB\"\ntransport = { kind = \"window\" }\ncc = { algorithm = \"swift\" }\nconnections = \"persistent\"\n";
    let mut outs = Vec::new();
    for threads in [1, 2, 3] {
        let mut s = scenario(toml);
        s.run.threads = rttlab_sim::scenario::Threads::Count(threads);
        let o = rttlab_sim::run(&s).unwrap();
        outs.push((serde_json::to_string(&o.summary).unwrap(), format!("{:?} events {}", o.tables, o.meta["perf"]["events"])));
    }
    assert!(outs.iter().all(|o| *o == outs[0]));
    let net = run(toml);
    let done = column(&net, "jobs", "completion_us");
    assert!(done.len() == 4 && done.iter().all(|t| t.is_finite()), "{done:?}");
}

/// A job's own controller (`jobs.cc`): on a run whose `[cc]` is TIMELY starting at 1 Gbps, a
/// two-rank ring all-reduce of 100-packet chunks with `cc = { algorithm = "none" }` completes to
/// the picosecond as on a run whose `[cc]` is `none` (the two jobs share no link), while the same
/// job on TIMELY beside it, paced at 1 Gbps between segments, takes about ten times as long; the
/// jobs table names each one's controller.
#[test]
fn a_job_runs_its_own_controller() {
    let job = |hosts: &str, cc: &str| format!("[[jobs]]\ncollective = \"allreduce_ring\"\nhosts = \"{hosts}\"\nsize = \"287200B\"\n{cc}");
    let longer = |text: String| text.replace("duration = \"2ms\"", "duration = \"20ms\"");
    let alone = run(&longer(star(5, &(job("0-1", "") + &job("2-3", "")))));
    let jobs = job("0-1", "cc = { algorithm = \"none\" }\n") + &job("2-3", "");
    let mixed = run(&longer(star(5, &jobs)).replace("algorithm = \"none\"\n[[jobs]]", "algorithm = \"timely\"\ninitial_rate = \"1Gbps\"\n[[jobs]]"));
    let (a, m) = (column(&alone, "jobs", "completion_us"), column(&mixed, "jobs", "completion_us"));
    assert_eq!(m[0], a[0], "the job on its own controller: {m:?} against {a:?}");
    assert!(m[1] > 8.0 * a[1], "{m:?} against {a:?}");
    let tables = mixed.tables();
    let t = &tables.iter().find(|(n, _)| *n == "jobs").unwrap().1;
    assert_eq!((0..2).map(|r| t.get("cc").unwrap().text(r)).collect::<Vec<_>>(), ["none", "timely"]);
}

/// A job's own controller on the message transport runs with its own CNP pacing and RTT
/// signal: a DCQCN all-to-all (an incast at every rank: marks, CNPs) beside a TIMELY ring on
/// disjoint hosts gives each job, to the picosecond, the same completions whichever of the two
/// is `[cc]` and whichever the job's own; neither needs the other to lead.
#[test]
fn a_message_jobs_cnp_pacing_and_signal_are_its_own() {
    let jobs = |first: &str, second: &str| {
        format!(
            "[[jobs]]\ncollective = \"alltoall\"\nhosts = \"0-3\"\nsize = \"600KB\"\n{first}[[jobs]]\ncollective = \"allreduce_ring\"\nhosts = \"4-5\"\nsize = \"287200B\"\n{second}"
        )
    };
    let text = |run_cc: &str, first: &str, second: &str| {
        star(6, &format!("[switch.ecn]\nk = \"1KB\"\n{}", jobs(first, second)))
            .replace("duration = \"2ms\"", "duration = \"20ms\"")
            .replace("pfc = false", "pfc = false\nbuffer = \"16MB\"")
            .replace("algorithm = \"none\"", &format!("algorithm = \"{run_cc}\""))
    };
    let timely_leads = run(&text("timely", "cc = { algorithm = \"dcqcn\" }\n", ""));
    let dcqcn_leads = run(&text("dcqcn", "", "cc = { algorithm = \"timely\" }\n"));
    let (a, b) = (column(&timely_leads, "jobs", "completion_us"), column(&dcqcn_leads, "jobs", "completion_us"));
    assert!(a.iter().all(|x| x.is_finite()), "{a:?}");
    assert_eq!(a, b);
    assert!(timely_leads.summary().ecn_marks > 0, "the all-to-all is marked");
}

/// The error of a four-rank all-to-all on a star with the job's own keys `own`.
fn alltoall_error(own: &str) -> String {
    let text = star(4, &format!("[[jobs]]\ncollective = \"alltoall\"\nhosts = \"0-3\"\nsize = \"64KB\"\n{own}"));
    Scenario::from_toml(&text).unwrap_err().to_string()
}

#[test]
fn a_jobs_controller_that_the_run_cannot_carry_is_an_error_naming_it() {
    let e = |cc: &str| alltoall_error(&format!("cc = {cc}\n"));
    assert!(
        e("{ algorithm = \"dctcp\" }").starts_with("jobs[0].cc.algorithm = dctcp: transport.kind = \"message\" runs a rate controller"),
        "{}",
        e("{ algorithm = \"dctcp\" }")
    );
    assert!(e("{ algorithm = \"hpcc\" }").contains("hpcc reads in-band telemetry: set switch.int = true"), "{}", e("{ algorithm = \"hpcc\" }"));
    assert!(e("{ algorithm = \"timely\", t_low = \"-1us\" }").starts_with("jobs[0].cc"), "{}", e("{ algorithm = \"timely\", t_low = \"-1us\" }"));
    assert!(e("{ algorithm = \"timly\" }").contains("did you mean `timely`"), "{}", e("{ algorithm = \"timly\" }"));
}

/// A job's own transport (`jobs.transport`): two ring all-reduces on disjoint hosts, one on the
/// window transport under Reno and one on the message transport at line rate. Whichever of the
/// two is the run's (`[transport]`, `[cc]`) and whichever the job's own, each completes to the
/// picosecond as on a run where both jobs run its transport; the jobs table names each one's.
#[test]
fn a_job_runs_its_own_transport() {
    let job = |hosts: &str, own: &str| format!("[[jobs]]\ncollective = \"allreduce_ring\"\nhosts = \"{hosts}\"\nsize = \"287200B\"\n{own}");
    let window_run = |jobs: String| star(5, &format!("[transport]\nkind = \"window\"\n{jobs}")).replacen("algorithm = \"none\"\n", "algorithm = \"reno\"\n", 1);
    let (as_window, as_message) =
        ("transport = { kind = \"window\" }\ncc = { algorithm = \"reno\" }\n", "transport = { kind = \"message\" }\ncc = { algorithm = \"none\" }\n");
    let all_message = column(&run(&star(5, &(job("0-1", "") + &job("2-3", "")))), "jobs", "completion_us");
    let all_window = column(&run(&window_run(job("0-1", "") + &job("2-3", ""))), "jobs", "completion_us");
    assert!(all_window[0] > all_message[0], "Reno's slow start takes longer than line rate: {all_window:?} {all_message:?}");
    let on_message = run(&star(5, &(job("0-1", as_window) + &job("2-3", ""))));
    let on_window = run(&window_run(job("0-1", "") + &job("2-3", as_message)));
    for net in [&on_message, &on_window] {
        assert_eq!(column(net, "jobs", "completion_us"), vec![all_window[0], all_message[1]]);
        let tables = net.tables();
        let t = &tables.iter().find(|(n, _)| *n == "jobs").unwrap().1;
        assert_eq!(
            (0..2).map(|r| [t.get("transport").unwrap().text(r), t.get("cc").unwrap().text(r)].join(" ")).collect::<Vec<_>>(),
            ["window reno", "message none"]
        );
    }
}

#[test]
fn a_jobs_transport_that_its_controller_does_not_fit_is_an_error_naming_it() {
    let e = alltoall_error;
    assert_eq!(
        e("transport = { kind = \"window\" }\n"),
        "jobs[0].cc = absent: jobs[0].transport.kind = \"window\" runs a window controller (reno, dctcp, vegas, swift, nscc), and [cc]'s none is not one: give the job its own"
    );
    assert!(e("transport = { kind = \"window\", min_rto = \"0s\" }\ncc = { algorithm = \"dctcp\" }\n").starts_with("jobs[0].transport.min_rto = 0"));
    assert!(e("transport = { kind = \"window\", delayed_ack = true }\ncc = { algorithm = \"swift\" }\n").starts_with("jobs[0].transport.delayed_ack = true"));
    assert!(e("transport = { kind = \"tcp\" }\n").contains("jobs[0].transport"), "{}", e("transport = { kind = \"tcp\" }\n"));
}

/// A skewed all-to-all (`skew = 1`) of four ranks: each rank's buffer of 71 800 B goes to rank
/// j in Zipf shares 12 : 6 : 4 : 3 (of 25), so every rank sends rank 0 24 packets of 1436 B,
/// rank 1 12, rank 2 8 and rank 3 6 (segments of 10 packets). Rank 0 is the incast: its link
/// carries 72 data packets and the ACKs of rank 0's own 4 segments (64 B, first by their
/// class), back to back from the first packet's arrival at the switch (1.2 µs of serialization
/// and a 1 µs link) to the last one's at rank 0: 2.2 + 72 × 1.2 + 4 × 0.0512 + 1 = 89.8048 µs.
/// The ideal is its 3 × 0.48 of the buffer at 10 Gbps, 82.7136 µs.
#[test]
fn a_skewed_alltoall_is_an_incast_at_its_popular_rank() {
    let job = "[[jobs]]\ncollective = \"alltoall\"\nhosts = \"0-3\"\nsize = \"71800B\"\nskew = 1.0\n[measure]\nflow_records = true\n";
    let net = run(&star(4, job).replace("ack = \"64B\"\n", "ack = \"64B\"\nsegment = \"14360B\"\n"));
    let (src, dst, size) = (column(&net, "flow_records", "src"), column(&net, "flow_records", "dst"), column(&net, "flow_records", "size_bytes"));
    assert_eq!(size.len(), 12);
    for (i, &bytes) in size.iter().enumerate() {
        let want = [34_464.0, 17_232.0, 11_488.0, 8_616.0][dst[i] as usize];
        assert_eq!(bytes, want, "transfer {i} from {} to {}", src[i], dst[i]);
    }
    assert_eq!(column(&net, "jobs", "completion_us"), vec![89.8048]);
    assert!((column(&net, "jobs", "ideal_us")[0] - 82.7136).abs() < 1e-9);
}

/// `connections = "persistent"`: each transfer a message on its ranks' connection. On an idle
/// star at line rate a message leaves as a fresh connection's data would, so the ring
/// all-reduce takes its formula to the picosecond (the two-rank case: one connection each way,
/// opened at the first step and carrying both), every transfer is a row of `flow_records`
/// with its own FCT, and the jobs table says how the job ran.
#[test]
fn a_persistent_connections_ring_takes_its_formula() {
    for (ranks, want) in [(2u32, 31.4), (4, 96.2)] {
        let size = 14_360 * ranks as u64;
        let job = format!(
            "[[jobs]]\ncollective = \"allreduce_ring\"\nhosts = \"0-{}\"\nsize = \"{size}B\"\nconnections = \"persistent\"\n[measure]\nflow_records = true\n",
            ranks - 1
        );
        let net = run(&star(ranks + 1, &job));
        assert_eq!(column(&net, "jobs", "completion_us"), vec![want], "{ranks} ranks");
        let fct = column(&net, "flow_records", "fct_us");
        assert_eq!(fct.len(), 2 * (ranks as usize - 1) * ranks as usize);
        assert!(fct.iter().all(|&t| (t - 15.2).abs() < 1e-9), "{fct:?}");
        let tables = net.tables();
        let t = &tables.iter().find(|(n, _)| *n == "jobs").unwrap().1;
        assert_eq!(t.get("connections").unwrap().text(0), "persistent");
    }
}

/// Swift's ring all-reduce on an idle k = 4 fat-tree at 100 Gbps (8 ranks dealt across the
/// pods, 4 MB, packets sprayed, RACK): a fresh connection per step starts each step from
/// Swift's initial window of one packet and adds about one a round trip, far from the ideal in
/// every iteration. On persistent connections the windows carry over: the first iteration still
/// opens them, and the third comes close to the bandwidth-optimal time (each step still pays a
/// round trip and a notice).
#[test]
fn swift_keeps_its_window_on_persistent_connections() {
    let toml = |connections: &str| {
        format!("duration = \"20ms\"\nuntil = \"flows_done\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n[routing]\nmode = \"spray\"\n[nic]\nmtu = \"1064B\"\n[transport]\nkind = \"window\"\nloss_detection = \"rack\"\n[cc]\nalgorithm = \"swift\"\n[[jobs]]\ncollective = \"allreduce_ring\"\nhosts = [0, 4, 8, 12, 2, 6, 10, 14]\nsize = \"4MB\"\niterations = 3\nconnections = \"{connections}\"\n")
    };
    let per_transfer = column(&run(&toml("per_transfer")), "jobs", "slowdown");
    let persistent = column(&run(&toml("persistent")), "jobs", "slowdown");
    assert!(per_transfer.iter().all(|&s| s > 10.0), "{per_transfer:?}");
    assert!(persistent[0] < 3.5 && persistent[2] < 1.5, "{persistent:?}");
}
