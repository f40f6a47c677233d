//! A delivery as a binding holds it: settled once from any thread.

use std::sync::Mutex;

use super::Delivery;
use crate::error::{Error, Result};

/// A delivery as a binding hands it to its language: any thread may settle
/// it, once; a second `ack`/`nack` is `INVALID_ARGUMENT`. Dropped unsettled,
/// it gives the item back like the `Delivery` inside.
pub struct DeliverySlot {
    delivery: Mutex<Option<Delivery>>,
}

impl DeliverySlot {
    pub fn new(delivery: Delivery) -> DeliverySlot {
        DeliverySlot {
            delivery: Mutex::new(Some(delivery)),
        }
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

    /// Reads the delivery while it is unsettled.
    pub fn read<T>(&self, what: impl FnOnce(&Delivery) -> T) -> Result<T> {
        let delivery = self.delivery.lock().unwrap();
        match delivery.as_ref() {
            Some(d) => Ok(what(d)),
            None => Err(Error::invalid_argument(
                "the job was already acknowledged or given back",
            )),
        }
    }
}
