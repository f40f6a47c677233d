//! A leader latch's participant id as a binding receives it.

/// A latch participant's id as a binding received it: the caller's, or this client's identity
/// (host and process, as an election member's) when it gave none.
pub fn latch_id(client: &crate::Client, id: Option<&str>) -> String {
    id.map_or_else(|| client.identity().to_string(), str::to_string)
}
