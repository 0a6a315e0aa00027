//! htsim's connection matrices (`[[workloads]] kind = "matrix"`), read unchanged: transfers
//! between hosts, each starting at a time or when a trigger fires, and firing triggers of its
//! own when it has sent (`send_done_trigger`) or received (`recv_done_trigger`) all its bytes.
//! The format is htsim's (`datacenter/connection_matrix.cpp`, its `gen_*.py` generators):
//!
//! ```text
//! Nodes 128
//! Connections 3
//! Triggers 1
//! 0->1 id 1 start 0 size 1000000 recv_done_trigger 1
//! 1->2 id 2 trigger 1 size 1000000
//! 1->3 id 3 trigger 1 size 1000000
//! trigger id 1 oneshot
//! ```
//!
//! `start` is in picoseconds, as htsim's reader takes it (its generators write µs × 10^6). A
//! connection without `id` is numbered after the file's ids, in the order of its lines. A `oneshot` or `multishot` trigger starts its connections when it
//! is first activated (a connection runs once); a `barrier` after `count` activations. A
//! `failure switch_type AGG switch_id S link_id L` line (after a `Failures F` header) takes
//! aggregation switch S's L-th uplink out of a fat-tree for the whole run, as htsim's
//! `FatTreeTopology::add_failed_link` does ([`crate::fabric::faults`]).
//!
//! Several lines with one `id` are messages on one connection (htsim's `msg` lines, read with
//! `-conn_reuse`: each line after the first carries `msg [N]`). Messages that start with their
//! connection's first line and fire no triggers run as that connection carrying their sizes in
//! turn, which is how htsim reports them (one completion per connection). Once a message of it
//! starts later, waits on a trigger or fires one, the connection outlives its transfers: each
//! of its lines from then on is a transfer of its own (with its own start, triggers and row of
//! the `transfers` table, the connection's id shared), carried as a message on the one
//! connection (`Transfer::on_connection`).

use rttlab_cc::Time;
use std::collections::HashMap;

/// One connection of a matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct Transfer {
    /// The matrix's id for it, and the line of the file that gives it.
    pub id: u32,
    pub line: u32,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    /// It starts at this time, or when `trigger` fires.
    pub start: Option<Time>,
    pub trigger: Option<u32>,
    /// It starts this long after its trigger fires (a job's compute between iterations; 0 in
    /// htsim's matrices).
    pub after: Time,
    pub send_done: Vec<u32>,
    pub recv_done: Vec<u32>,
    /// A message on its id's connection, which outlives it (module doc): its sender keeps that
    /// connection for every transfer with the id.
    pub on_connection: bool,
}

/// How a trigger fires.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TriggerKind {
    Oneshot,
    Multishot,
    /// After this many activations.
    Barrier(u32),
}

/// A connection matrix, checked: every trigger named is declared and fired by something, no
/// connection waits (through triggers) on itself, every host is below `nodes`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Matrix {
    pub nodes: u32,
    pub transfers: Vec<Transfer>,
    /// Per trigger id: its kind, and the transfers (indices) it starts.
    pub triggers: HashMap<u32, (TriggerKind, Vec<u32>)>,
    /// Failed links: (line, aggregation switch, its uplink), htsim's `failure` lines.
    pub failures: Vec<(u32, u32, u32)>,
}

impl Matrix {
    /// Activations transfer `i` waits for before it starts (0: it starts at its time).
    pub fn needed(&self, i: usize) -> u32 {
        match self.transfers[i].trigger.map(|k| self.triggers[&k].0) {
            None => 0,
            Some(TriggerKind::Barrier(n)) => n,
            Some(_) => 1,
        }
    }

    /// The transfers trigger `k` starts.
    pub fn targets(&self, k: u32) -> &[u32] {
        self.triggers.get(&k).map_or(&[], |t| &t.1)
    }

    /// Reads a matrix; an error says `file:line: problem`.
    pub fn parse(text: &str, file: &str) -> Result<Matrix, String> {
        let err = |line: usize, problem: String| format!("{file}:{line}: {problem}");
        let (mut nodes, mut connections, mut declared) = (None, None, HashMap::new());
        let mut transfers: Vec<Transfer> = Vec::new();
        let mut lines_of: Vec<usize> = Vec::new();
        // Connection lines, messages on an earlier line's connection included.
        let mut lines = 0u64;
        let (mut failures, mut failures_declared) = (Vec::new(), None);
        for (n, line) in text.lines().enumerate().map(|(n, l)| (n + 1, l.trim())) {
            let words: Vec<&str> = line.split_whitespace().collect();
            let number = |w: Option<&&str>, what: &str| -> Result<u64, String> {
                w.and_then(|w| w.parse().ok()).ok_or_else(|| err(n, format!("{what}: expected a whole number, got {:?}", w.copied().unwrap_or(""))))
            };
            match words.as_slice() {
                [] => {}
                [w, ..] if w.starts_with('#') => {}
                ["Nodes", v] => nodes = Some(number(Some(v), "Nodes")? as u32),
                ["Connections", v] => connections = Some(number(Some(v), "Connections")?),
                ["Triggers", v] => _ = number(Some(v), "Triggers")?,
                ["Failures", v] => failures_declared = Some(number(Some(v), "Failures")?),
                ["failure", rest @ ..] => {
                    let (mut kind, mut switch, mut link) = (None, None, None);
                    let mut words = rest.iter();
                    while let Some(&key) = words.next() {
                        let v = words.next();
                        match key {
                            "switch_type" => kind = v.copied(),
                            "switch_id" => switch = Some(number(v, "switch_id")? as u32),
                            "link_id" => link = Some(number(v, "link_id")? as u32),
                            other => return Err(err(n, format!("unknown failure attribute {other:?}; a failure takes switch_type, switch_id, link_id"))),
                        }
                    }
                    if kind != Some("AGG") {
                        return Err(err(
                            n,
                            format!("switch_type {}: htsim fails the uplinks of aggregation switches, switch_type AGG", kind.unwrap_or("absent")),
                        ));
                    }
                    let (Some(switch), Some(link)) = (switch, link) else { return Err(err(n, "a failure needs switch_id and link_id".into())) };
                    failures.push((n as u32, switch, link));
                }
                ["trigger", "id", k, kind, rest @ ..] => {
                    let k = number(Some(k), "trigger id")? as u32;
                    let kind = match (*kind, rest) {
                        ("oneshot", []) => TriggerKind::Oneshot,
                        ("multishot", []) => TriggerKind::Multishot,
                        ("barrier", ["count", c]) => TriggerKind::Barrier(number(Some(c), "count")?.max(1) as u32),
                        ("barrier", []) => return Err(err(n, format!("trigger {k}: a barrier needs `count N`"))),
                        _ => {
                            return Err(err(
                                n,
                                format!(
                                    "trigger {k}: {:?}: expected oneshot, multishot or barrier count N",
                                    rest.iter().fold(kind.to_string(), |a, w| a + " " + w)
                                ),
                            ))
                        }
                    };
                    if declared.insert(k, (kind, n)).is_some() {
                        return Err(err(n, format!("trigger {k} is declared twice")));
                    }
                }
                [ends, rest @ ..] if ends.contains("->") => {
                    let (a, b) = ends.split_once("->").expect("checked");
                    let host = |s: &str| s.parse::<u32>().map_err(|_| err(n, format!("{ends:?}: expected SRC->DST, host numbers")));
                    let mut t = Transfer {
                        id: 0,
                        line: n as u32,
                        src: host(a)?,
                        dst: host(b)?,
                        size: 0,
                        start: None,
                        trigger: None,
                        after: Time::ZERO,
                        send_done: vec![],
                        recv_done: vec![],
                        on_connection: false,
                    };
                    let (mut id, mut size, mut msg) = (None, None, false);
                    let mut words = rest.iter().peekable();
                    while let Some(&key) = words.next() {
                        if key == "msg" {
                            // htsim's message id is optional (`msg` alone, or `msg N`).
                            msg = true;
                            if words.peek().is_some_and(|w| w.parse::<u64>().is_ok()) {
                                words.next();
                            }
                            continue;
                        }
                        let v = words.next();
                        match key {
                            "id" => id = Some(number(v, "id")? as u32),
                            "size" => size = Some(number(v, "size")?),
                            // htsim's reader takes `start` in picoseconds ("start is in
                            // picoseconds already", `ConnectionMatrix::load`).
                            "start" => {
                                let ps: f64 = v
                                    .and_then(|v| v.parse().ok())
                                    .filter(|x: &f64| x.is_finite() && *x >= 0.0)
                                    .ok_or_else(|| err(n, "start: expected picoseconds (htsim's unit), not negative".into()))?;
                                t.start = Some(Time(ps.round() as u64));
                            }
                            "trigger" => t.trigger = Some(number(v, "trigger")? as u32),
                            "send_done_trigger" => t.send_done.push(number(v, "send_done_trigger")? as u32),
                            "recv_done_trigger" => t.recv_done.push(number(v, "recv_done_trigger")? as u32),
                            other => {
                                return Err(err(
                                    n,
                                    format!(
                                        "unknown keyword {other:?}; a connection takes id, start, trigger, size, send_done_trigger, recv_done_trigger, msg"
                                    ),
                                ))
                            }
                        }
                    }
                    // Without `id`, numbered after the file's ids (below); htsim's ids are 0 then.
                    t.id = id.unwrap_or(0);
                    if id == Some(0) {
                        return Err(err(n, "id 0 is not allowed (htsim: flow ID zero); leave `id` out to have one given".into()));
                    }
                    t.size = size.filter(|&s| s > 0).ok_or_else(|| err(n, "a connection needs a positive `size`".into()))?;
                    if t.start.is_some() == t.trigger.is_some() {
                        return Err(err(n, "a connection needs exactly one of `start T` and `trigger K`".into()));
                    }
                    if t.src == t.dst {
                        return Err(err(n, format!("connection {} goes from host {} to itself", t.id, t.src)));
                    }
                    lines += 1;
                    if let Some(first) = transfers.iter().position(|f| id.is_some() && f.id == t.id) {
                        if merge_message(&mut transfers[first], &t, msg).map_err(|problem| err(n, problem))? {
                            continue;
                        }
                        // The connection outlives its transfers: every line of it, its first
                        // included, a message of its own on it.
                        for f in transfers.iter_mut().filter(|f| f.id == t.id) {
                            f.on_connection = true;
                        }
                        t.on_connection = true;
                    }
                    if msg && id.is_none() {
                        return Err(err(n, "a `msg` line names its connection's `id`".into()));
                    }
                    transfers.push(t);
                    lines_of.push(n);
                }
                [first, ..] => {
                    return Err(err(n, format!("unknown keyword {first:?}; expected Nodes, Connections, Triggers, Failures, SRC->DST, trigger or failure")))
                }
            }
        }
        let mut next_id = transfers.iter().map(|t| t.id).max().unwrap_or(0);
        for t in transfers.iter_mut().filter(|t| t.id == 0) {
            next_id += 1;
            t.id = next_id;
        }
        let nodes = nodes.ok_or_else(|| format!("{file}: no `Nodes N` line"))?;
        if let Some(c) = connections.filter(|&c| c != lines) {
            return Err(format!("{file}: `Connections {c}` but {lines} connection lines"));
        }
        if let Some(f) = failures_declared.filter(|&f| f != failures.len() as u64) {
            return Err(format!("{file}: `Failures {f}` but {} failure lines", failures.len()));
        }
        let mut triggers: HashMap<u32, (TriggerKind, Vec<u32>)> = declared.iter().map(|(&k, &(kind, _))| (k, (kind, Vec::new()))).collect();
        let mut fired: HashMap<u32, Vec<u32>> = HashMap::new();
        for (i, t) in transfers.iter().enumerate() {
            let line = lines_of[i];
            if let Some(&h) = [t.src, t.dst].iter().find(|&&h| h >= nodes) {
                return Err(err(line, format!("host {h} is outside the matrix's {nodes} nodes")));
            }
            for &k in t.trigger.iter().chain(&t.send_done).chain(&t.recv_done) {
                if !triggers.contains_key(&k) {
                    return Err(err(line, format!("trigger {k} is not declared (a `trigger id {k} oneshot` line)")));
                }
            }
            if let Some(k) = t.trigger {
                triggers.get_mut(&k).expect("declared").1.push(i as u32);
            }
            for &k in t.send_done.iter().chain(&t.recv_done) {
                fired.entry(k).or_default().push(i as u32);
            }
        }
        for (i, t) in transfers.iter().enumerate() {
            if let Some(k) = t.trigger.filter(|k| !fired.contains_key(k)) {
                return Err(err(lines_of[i], format!("connection {} waits for trigger {k}, which no connection fires", t.id)));
            }
        }
        // A connection that waits, through triggers, on itself never starts.
        let after: Vec<Vec<u32>> =
            transfers.iter().map(|t| t.send_done.iter().chain(&t.recv_done).flat_map(|k| triggers[k].1.iter().copied()).collect()).collect();
        if let Some(i) = cycle(&after) {
            return Err(err(lines_of[i], format!("connection {} waits, through triggers, on itself", transfers[i].id)));
        }
        Ok(Matrix { nodes, transfers, triggers, failures })
    }
}

/// Message `m` on connection `first` (an earlier line with its id): `first` carries its bytes
/// after its own when it starts with `first` and neither fires a trigger (true); otherwise the
/// connection outlives its transfers (false, module doc).
fn merge_message(first: &mut Transfer, m: &Transfer, msg: bool) -> Result<bool, String> {
    let id = m.id;
    if !msg {
        return Err(format!("connection id {id} is on line {} already; a further message on it is a `msg` line (htsim's -conn_reuse)", first.line));
    }
    if (m.src, m.dst) != (first.src, first.dst) {
        return Err(format!("message of connection {id} goes {}->{}, its connection (line {}) {}->{}", m.src, m.dst, first.line, first.src, first.dst));
    }
    let fires = !(m.send_done.is_empty() && m.recv_done.is_empty() && first.send_done.is_empty() && first.recv_done.is_empty());
    if first.on_connection || m.start != first.start || m.trigger.is_some() || fires {
        return Ok(false);
    }
    first.size += m.size;
    Ok(true)
}

/// A node on a cycle of the graph `after` (node → the nodes it leads to), if any.
fn cycle(after: &[Vec<u32>]) -> Option<usize> {
    // 0: unseen, 1: on the current path, 2: done.
    let mut state = vec![0u8; after.len()];
    for root in 0..after.len() {
        if state[root] != 0 {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        state[root] = 1;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&m) = after[node].get(*next) {
                *next += 1;
                match state[m as usize] {
                    0 => {
                        state[m as usize] = 1;
                        stack.push((m as usize, 0));
                    }
                    1 => return Some(m as usize),
                    _ => {}
                }
            } else {
                state[node] = 2;
                stack.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAIN: &str = "Nodes 4\nConnections 3\nTriggers 1\n0->1 id 1 start 2500000 size 1000 recv_done_trigger 1\n1->2 id 2 trigger 1 size 2000\n1->3 id 3 trigger 1 size 3000 send_done_trigger 2\ntrigger id 1 oneshot\ntrigger id 2 barrier count 2\n";

    #[test]
    fn reads_connections_and_triggers() {
        let m = Matrix::parse(&CHAIN.replace("Triggers 1", "Triggers 2").replace("size 3000 send_done_trigger 2", "size 3000"), "chain.cm").unwrap();
        assert_eq!(m.nodes, 4);
        assert_eq!(
            m.transfers[0],
            Transfer {
                id: 1,
                line: 4,
                src: 0,
                dst: 1,
                size: 1000,
                start: Some(Time::from_ns(2500)),
                trigger: None,
                after: Time::ZERO,
                send_done: vec![],
                recv_done: vec![1],
                on_connection: false,
            }
        );
        assert_eq!(m.targets(1), &[1, 2]);
        assert_eq!((m.needed(0), m.needed(1)), (0, 1));
    }

    #[test]
    fn bad_matrices_name_the_file_line_and_problem() {
        let e = |text: &str| Matrix::parse(text, "m.cm").unwrap_err();
        assert_eq!(e("Nodes 2\n0->5 id 1 start 0 size 10\n"), "m.cm:2: host 5 is outside the matrix's 2 nodes");
        assert_eq!(e("Nodes 2\n0->1 id 1 trigger 7 size 10\n"), "m.cm:2: trigger 7 is not declared (a `trigger id 7 oneshot` line)");
        assert_eq!(e("Nodes 2\n0->1 id 1 trigger 7 size 10\ntrigger id 7 oneshot\n"), "m.cm:2: connection 1 waits for trigger 7, which no connection fires");
        assert_eq!(
            e("Nodes 2\n0->1 id 1 trigger 1 size 10 recv_done_trigger 1\ntrigger id 1 oneshot\n"),
            "m.cm:2: connection 1 waits, through triggers, on itself"
        );
        assert!(e("Nodes 2\n0->1 id 1 start 0 size 10 colour red\n").starts_with("m.cm:2: unknown keyword \"colour\""));
        assert!(e("Nodes 2\n0->1 id 0 start 0 size 10\n").starts_with("m.cm:2: id 0 is not allowed"));
        assert!(e("Nodes 2\nConnections 2\n0->1 id 1 start 0 size 10\n").starts_with("m.cm: `Connections 2` but 1"));
        assert!(e("Nodes 2\nfailure switch_type TOR switch_id 1 link_id 0\n")
            .starts_with("m.cm:2: switch_type TOR: htsim fails the uplinks of aggregation switches"));
        assert!(e("Nodes 2\nFailures 2\nfailure switch_type AGG switch_id 1 link_id 0\n").starts_with("m.cm: `Failures 2` but 1 failure lines"));
        assert!(e("Nodes 2\nfailure switch_type AGG switch_id 1 port 0\n").contains("unknown failure attribute \"port\""));
    }

    /// htsim's `msg` lines: messages on one connection, starting together, carried in turn.
    #[test]
    fn messages_on_one_connection_are_carried_by_it() {
        let m = Matrix::parse(
            "Nodes 2\nConnections 3\nTriggers 0\n0->1 id 1 msg start 0 size 4086\n0->1 id 1 msg start 0 size 4086\n0->1 id 1 msg 3 start 0 size 100\n",
            "m.cm",
        )
        .unwrap();
        assert_eq!((m.transfers.len(), m.transfers[0].size, m.transfers[0].line), (1, 8272, 4));
        let e = |text: &str| Matrix::parse(text, "m.cm").unwrap_err();
        assert_eq!(
            e("Nodes 2\n0->1 id 1 start 0 size 10\n0->1 id 1 start 0 size 10\n"),
            "m.cm:3: connection id 1 is on line 2 already; a further message on it is a `msg` line (htsim's -conn_reuse)"
        );
        assert!(e("Nodes 3\n0->1 id 1 start 0 size 10\n0->2 id 1 msg start 0 size 10\n").starts_with("m.cm:3: message of connection 1 goes 0->2"));
        assert!(e("Nodes 2\n0->1 msg start 0 size 10\n").starts_with("m.cm:2: a `msg` line names its connection's `id`"));
    }

    /// A message that waits on a trigger makes its connection outlive its transfers: the lines
    /// before it that started together stay one transfer, and every line from then on (one
    /// starting with the first included) is a transfer of its own, each on the connection.
    #[test]
    fn a_later_message_keeps_its_connection() {
        let text = "Nodes 3\nConnections 5\n0->1 id 1 start 0 size 10\n0->1 id 1 msg start 0 size 20\n0->1 id 1 msg trigger 1 size 30\n0->1 id 1 msg start 0 size 40\n1->2 id 2 start 0 size 5 recv_done_trigger 1\ntrigger id 1 oneshot\n";
        let m = Matrix::parse(text, "m.cm").unwrap();
        let got: Vec<(u32, u64, bool, Option<u32>)> = m.transfers.iter().map(|t| (t.id, t.size, t.on_connection, t.trigger)).collect();
        assert_eq!(got, [(1, 30, true, None), (1, 30, true, Some(1)), (1, 40, true, None), (2, 5, false, None)]);
        assert_eq!(m.targets(1), [1]);
    }

    /// Ultra Ethernet's plans' matrices name no ids: they are numbered after the file's own.
    #[test]
    fn connections_without_ids_are_numbered_after_the_files_ids() {
        let m = Matrix::parse("Nodes 4\n0->1 start 0 size 10\n1->2 id 7 start 40 size 10\n2->3 start 0 size 10\n", "m.cm").unwrap();
        assert_eq!(m.transfers.iter().map(|t| t.id).collect::<Vec<_>>(), vec![8, 7, 9]);
        assert_eq!(m.transfers[1].start, Some(Time(40)), "40 ps");
    }

    /// htsim's own generators' output reads unchanged.
    #[test]
    fn the_shared_sample_matrices_read() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/htsim-matrices");
        let Ok(entries) = std::fs::read_dir(&dir) else { return };
        let mut read = 0;
        for p in entries.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "cm")) {
            let m = Matrix::parse(&std::fs::read_to_string(&p).unwrap(), &p.display().to_string()).unwrap();
            assert_eq!(m.nodes, 128);
            read += 1;
        }
        assert_eq!(read, 3);
    }
}
