//! What a partition of a cut network keeps of its boundary with the others: the packets it
//! sends them and what else it tells them with its next clock.

use crate::core::engine::EventKind;
use crate::core::ids::{PktId, PortId};
use crate::host::flow::{Message, RxEnd};
use rttlab_cc::Time;

/// What a partition of a cut network keeps of its boundary with the others: which partition
/// it is, the packets and notices on their way out, and the events not its own to count.
#[derive(Default)]
pub(crate) struct Boundary {
    /// Which partition, and each node's ([`crate::parallel`]); `None`: the whole network.
    pub part: Option<(usize, std::sync::Arc<[usize]>)>,
    /// Packets sent toward another partition in this span, and those handed over whose
    /// transmission is not done yet (their completion reads them).
    pub crossings: Vec<Crossed>,
    pub handed_over: Vec<Crossed>,
    /// What else this partition tells others with its next clock, with the node it is for.
    pub outbox: Vec<(u32, Outgoing)>,
    /// Events the other partitions handled (a merged network's).
    pub events_elsewhere: u64,
    /// A partition's events taken from its queue that are not its to count: another
    /// partition's, which it drops, and the run's own, which every partition handles and the
    /// first counts.
    pub events_not_counted: u64,
}

impl Boundary {
    /// Whether `node` belongs to another partition.
    #[inline]
    pub fn foreign(&self, node: u32) -> bool {
        self.part.as_ref().is_some_and(|(me, of)| of[node as usize] != *me)
    }
}

/// What a partition tells another with its next clock, beside packets.
pub(crate) enum Outgoing {
    /// A connection opened: its receiving end, for the receiver's host.
    RxEnd(u32, Box<RxEnd>),
    /// A message offered on an RPC connection (its id and serial number), for its receiver.
    Message(u32, u32, Message),
    /// An event of another partition's node (`Ctx::notify`), at its time and place in the order.
    Event(Time, u64, EventKind),
}

/// A packet sent toward another partition ([`crate::parallel`]).
#[derive(Copy, Clone, Debug)]
pub(crate) struct Crossed {
    pub arrive: Time,
    /// Its arrival's place in the event order.
    pub seq: u64,
    /// The port it arrives through.
    pub port: PortId,
    pub pkt: PktId,
    /// When its transmission is done.
    pub done: Time,
    /// The partition it goes to.
    pub to: u16,
}
