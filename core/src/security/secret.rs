//! A password held only as long as the client needs it.

/// A secret kept only as long as the client needs it (every new session
/// authenticates again), overwritten when dropped, never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl Secret {
    pub fn new(secret: impl Into<Vec<u8>>) -> Secret {
        Secret(secret.into())
    }

    pub(crate) fn expose(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl Drop for Secret {
    fn drop(&mut self) {
        for byte in self.0.iter_mut() {
            // Volatile: the compiler may not drop the overwrite of memory about to be freed.
            unsafe { std::ptr::write_volatile(byte, 0) };
        }
    }
}
