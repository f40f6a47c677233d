//! Empty: only its dependencies matter (see Cargo.toml).
