//! Typed ids: each names an index into one table of the network, so that a port cannot be
//! passed where a host is meant. Transparent over `u32`; `idx()` indexes the table.

macro_rules! id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[repr(transparent)]
        #[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);

        impl $name {
            /// The index in its table.
            #[inline]
            pub const fn idx(self) -> usize {
                self.0 as usize
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

id!(
    /// An egress port: two per link, one at each end (`Network::ports`).
    PortId,
    "port"
);
id!(
    /// A host, `0..hosts` (also its node number in the graph).
    HostId,
    "h"
);
id!(
    /// A switch, `0..switches` (node `hosts + id` in the graph).
    SwitchId,
    "s"
);
id!(
    /// A connection's slot in the flow table (reused after a workload flow retires).
    FlowId,
    "flow"
);
id!(
    /// A packet's slot in the packet slab (reused after the packet is freed).
    PktId,
    "pkt"
);
