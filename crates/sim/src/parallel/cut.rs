//! The cut: which partition each node belongs to, and the lookahead between partitions.

use crate::fabric::topology::Graph;

/// Node → partition for `p` partitions of `graph` (hosts are nodes `0..hosts`, switches after).
pub fn partition(graph: &Graph, p: usize) -> Vec<usize> {
    let n = (graph.hosts + graph.switches) as usize;
    let mut adj = vec![Vec::new(); n];
    for l in &graph.links {
        adj[l.a as usize].push(l.b as usize);
        adj[l.b as usize].push(l.a as usize);
    }
    let hosts = graph.hosts as usize;
    let mut part = vec![usize::MAX; n];
    // ToRs in id order, each with its hosts; hosts in that order, cut into p contiguous blocks.
    let tors: Vec<usize> = (hosts..n).filter(|&s| adj[s].iter().any(|&x| x < hosts)).collect();
    let ordered: Vec<usize> = tors.iter().flat_map(|&t| adj[t].iter().copied().filter(|&x| x < hosts)).collect();
    for (j, &h) in ordered.iter().enumerate() {
        part[h] = j * p / ordered.len().max(1);
    }
    let loose: Vec<usize> = (0..hosts).filter(|&h| part[h] == usize::MAX).collect();
    for (j, h) in loose.into_iter().enumerate() {
        part[h] = j % p;
    }
    for &t in &tors {
        part[t] = adj[t].iter().filter(|&&x| x < hosts).map(|&x| part[x]).min().expect("a ToR has hosts");
    }
    let mut placed = vec![0usize; p];
    for s in hosts..n {
        if part[s] != usize::MAX {
            continue;
        }
        let mut links = vec![0usize; p];
        for &x in &adj[s] {
            if part[x] != usize::MAX {
                links[part[x]] += 1;
            }
        }
        let best = (0..p).max_by_key(|&q| (links[q], std::cmp::Reverse(placed[q]), std::cmp::Reverse(q))).expect("p > 0");
        part[s] = best;
        placed[best] += 1;
    }
    part
}

/// The smallest propagation delay, in ps, of a link between two partitions (`u64::MAX`: none).
pub fn lookahead(graph: &Graph, part: &[usize]) -> u64 {
    graph.links.iter().filter(|l| part[l.a as usize] != part[l.b as usize]).map(|l| l.delay.ps()).min().unwrap_or(u64::MAX)
}
