// A build script is required for cargo to consider build dependencies (the host-side unions).
fn main() {}
