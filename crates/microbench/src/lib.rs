//! rttlab's criterion micro-benchmarks live in `benches/` (`make microbench`); a crate of their
//! own, so that `make test` does not build criterion for the benchmark driver's unit tests.
