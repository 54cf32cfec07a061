//! Hot-path inference cost probe: `cargo run --release --example
//! kernel_speed` prints nanoseconds per call of each kernel at the sizes the
//! learned policies use (see `wafer_core::model::bench`; `wafer bench`
//! reports the same figures).

fn main() {
    for (name, ns) in wafer_core::model::bench::measure(1.0) {
        println!("{name:<48} {ns:9.1} ns/call");
    }
}
