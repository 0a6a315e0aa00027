//! The simulation's ground floor: typed ids, packets, the event queue and the controllers a
//! program hands in. It imports nothing above it; the run's context (`ctx`) and the
//! event loop ([`crate::network`]) are built on it.

pub mod engine;
pub(crate) mod external;
pub mod ids;
pub mod packet;

#[cfg(test)]
mod tests {
    /// The ground floor's code names nothing of the floors above it (comments may).
    #[test]
    fn imports_nothing_above_it() {
        let files = [
            ("engine.rs", include_str!("engine.rs")),
            ("external.rs", include_str!("external.rs")),
            ("ids.rs", include_str!("ids.rs")),
            ("packet.rs", include_str!("packet.rs")),
        ];
        for (file, src) in files {
            for (n, line) in src.lines().enumerate().filter(|(_, l)| !l.trim_start().starts_with("//")) {
                for (at, _) in line.match_indices("crate::") {
                    let path = &line[at..];
                    assert!(path.starts_with("crate::core::"), "core/{file}:{}: {}", n + 1, line.trim());
                }
            }
        }
    }
}
