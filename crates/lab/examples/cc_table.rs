//! Prints the congestion-control table of issue 6 (throughput, mean
//! queueing delay and loss per controller on the same scenarios):
//! `cargo run --release -p mpquic-lab --example cc_table`.
//! The experiments live in `tests/congestion.rs`.

#[path = "../tests/congestion.rs"]
mod congestion;

fn main() {
    println!("{}", congestion::table());
}
