//! What a run reports: measurements taken as it runs, the summary and tables built from them,
//! packet captures, the warnings that say what makes a result doubtful, and the invariants
//! every run keeps.

pub(crate) mod advice;
pub mod capture;
pub mod invariants;
pub mod measure;
pub mod output;
pub mod stats;
pub mod table;
