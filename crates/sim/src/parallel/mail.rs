//! The mail between partitions: the packets that cross to another partition's node, and what
//! one node tells another (`Ctx::notify`), posted in one mailbox per ordered pair.

use crate::core::ids::PortId;
use crate::core::packet::{IntStack, Packet};
use crate::network::Network;
use crate::parallel::boundary::Outgoing;
use rttlab_cc::Time;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// A packet on its way to another partition: it arrives through `port` at `time`, at the place
/// in the event order its sender reserved.
pub(crate) struct Crossing {
    pub time: Time,
    pub seq: u64,
    pub port: PortId,
    pub pkt: Packet,
    pub int: Option<Box<IntStack>>,
}

/// A mailbox from one partition to another: what the sender posted and the receiver has not
/// taken. Its buffers go back and forth, so that posting allocates nothing once they have grown.
#[derive(Default)]
pub(super) struct Mailbox {
    full: AtomicBool,
    mail: Mutex<Mail>,
}

impl Mailbox {
    pub(super) fn post(&self, out: &mut Mail) {
        let mut m = self.mail.lock().expect("unpoisoned");
        if m.crossings.is_empty() && m.other.is_empty() {
            std::mem::swap(&mut *m, out);
        } else {
            m.crossings.append(&mut out.crossings);
            m.other.append(&mut out.other);
        }
        drop(m);
        self.full.store(true, Ordering::Release);
    }

    /// Hands what was posted to `net` (`inbox`: an empty buffer to leave in its place).
    pub(super) fn take(&self, net: &mut Network, inbox: &mut Mail) {
        if !self.full.load(Ordering::Acquire) || !self.full.swap(false, Ordering::Acquire) {
            return;
        }
        std::mem::swap(&mut *self.mail.lock().expect("unpoisoned"), inbox);
        inbox.crossings.drain(..).for_each(|c| net.receive_crossing(c));
        inbox.other.drain(..).for_each(|o| net.receive_outgoing(o));
    }
}

/// What one partition sends another.
#[derive(Default)]
pub(crate) struct Mail {
    pub crossings: Vec<Crossing>,
    pub(super) other: Vec<Outgoing>,
}
