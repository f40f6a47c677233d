//! The generator of the Kotlin sources, run by the Maven build.
fn main() {
    uniffi::uniffi_bindgen_main()
}
