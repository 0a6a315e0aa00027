//! The simulator's integration tests, each file a module of one test binary (`cargo test -p
//! rttlab-sim --test sim`, filtered by module: `-- faults::`): one binary links once, where one
//! per file took `make test` about 20 s more.

mod common;

mod advice;
mod collectives;
mod dcqcn;
mod fabric;
mod faults;
mod fingerprints;
mod graph;
mod matrix;
mod model;
mod multipath;
mod nscc;
mod partitions;
mod registry;
mod robust;
mod scenario;
mod swift;
mod telemetry;
mod threads;
mod transport_message;
mod transport_window;
mod trimming;
mod window;
