//! The two transports a flow can run on:
//! - `message`: TIMELY's OS-bypass messaging — segments handed to the NIC at a paced rate,
//!   acknowledged whole by the receiving NIC, over a lossless (PFC) fabric;
//! - `window`: a TCP-like stack — per-packet data, cumulative and selective ACKs, a congestion
//!   window, loss recovery — for DCTCP and other window controllers over a lossy fabric.

pub mod message;
pub mod window;
