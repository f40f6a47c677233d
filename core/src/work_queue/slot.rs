//! A delivery as a binding holds it: settled once from any thread.

use std::sync::Mutex;

use super::Delivery;
use crate::error::{Error, Result};

/// A delivery as a binding hands it to its language: any thread may settle
/// it, once; a second `ack`/`nack` is `INVALID_ARGUMENT`. Dropped unsettled,
/// it gives the item back like the `Delivery` inside. What the job is (its
/// data, name, priority and delivery count) stays readable after it is settled,
/// in every language alike.
pub struct DeliverySlot {
    delivery: Mutex<Option<Delivery>>,
    data: Vec<u8>,
    name: String,
    priority: u16,
    delivery_count: u32,
}

impl DeliverySlot {
    pub fn new(delivery: Delivery) -> DeliverySlot {
        DeliverySlot {
            data: delivery.data().to_vec(),
            name: delivery.name().to_string(),
            priority: delivery.priority(),
            delivery_count: delivery.delivery_count(),
            delivery: Mutex::new(Some(delivery)),
        }
    }

    pub fn data(&self) -> &[u8] {
        &self.data
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn priority(&self) -> u16 {
        self.priority
    }

    pub fn delivery_count(&self) -> u32 {
        self.delivery_count
    }

    /// The delivery, to settle; the slot is empty afterwards.
    pub fn take(&self) -> Result<Delivery> {
        self.delivery.lock().unwrap().take().ok_or_else(|| {
            Error::invalid_argument("the job was already acknowledged or given back")
        })
    }

    pub fn is_settled(&self) -> bool {
        self.delivery.lock().unwrap().is_none()
    }
}
