//! A JavaScript object whose properties keep the core's order (napi makes a `HashMap` an
//! object in hash order): an event's fields and a metric point's attributes read as the core
//! wrote them.

use napi::bindgen_prelude::{Object, ToNapiValue};
use napi::{sys, Env};

pub struct Ordered<V>(pub Vec<(&'static str, V)>);

impl<V: ToNapiValue> ToNapiValue for Ordered<V> {
    unsafe fn to_napi_value(env: sys::napi_env, ordered: Self) -> napi::Result<sys::napi_value> {
        let mut object = Object::new(&Env::from_raw(env))?;
        for (name, value) in ordered.0 {
            object.set(name, value)?;
        }
        unsafe { Object::to_napi_value(env, object) }
    }
}
