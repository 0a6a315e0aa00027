//! The two transports a flow can run on, as state machines that do no I/O:
//! - `message`: TIMELY's OS-bypass messaging — segments handed to the NIC at a paced rate,
//!   acknowledged whole by the receiving NIC, over a lossless (PFC) fabric;
//! - `window`: a TCP-like stack — per-packet data, cumulative and selective ACKs, a congestion
//!   window, loss recovery — for DCTCP and other window controllers over a lossy fabric; with
//!   Ultra Ethernet's acknowledgement, NACK and timeout rules in place of TCP's, Ultra
//!   Ethernet's transport (`transport.kind = "uet"`).
//!
//! Beside them, `path` is the sender's choice of path whichever transport it runs,
//! `feedback` the filter on the RTT samples either feeds its controller, and `credit` Ultra
//! Ethernet's receiver credits.
//!
//! Nothing here knows the network: [`crate::host`] feeds them packets, timer events and the
//! time, and carries out what they ask.

pub mod credit;
pub mod feedback;
pub mod message;
pub mod onoff;
pub mod path;
pub mod window;

/// Records `seq` in `ranges` (sorted, disjoint, non-adjacent `[lo, hi)` above the next
/// expected), merging with its neighbours; returns the range now holding it. A receiver's
/// out-of-order packets: the window transport's SACK blocks, selective repeat's placed packets.
pub(crate) fn insert_seq(ranges: &mut Vec<[u32; 2]>, seq: u32) -> [u32; 2] {
    insert_range(ranges, [seq, seq + 1])
}

/// Records the range `r` in `ranges` as `insert_seq` does one number: the ranges it overlaps
/// or touches become one; returns that one. A sender's record of the SACK blocks reported.
pub(crate) fn insert_range(ranges: &mut Vec<[u32; 2]>, r: [u32; 2]) -> [u32; 2] {
    let i = ranges.partition_point(|x| x[1] < r[0]);
    let j = ranges.partition_point(|x| x[0] <= r[1]);
    let merged = if i == j { r } else { [ranges[i][0].min(r[0]), ranges[j - 1][1].max(r[1])] };
    ranges.splice(i..j, [merged]);
    merged
}
