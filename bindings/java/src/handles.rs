//! Rust objects behind Java `long` handles. Java's `NativeObject` guarantees
//! a handle is not used after `free` (its close takes a write lock that every
//! call's read lock excludes); each operation clones what it needs first.

use crate::errors::{closed_handle, Result};

pub fn into_handle<T>(value: T) -> i64 {
    Box::into_raw(Box::new(value)) as i64
}

/// # Safety
/// `handle` must come from `into_handle::<T>` and not be freed.
pub fn borrow<'a, T>(handle: i64) -> Result<&'a T> {
    if handle == 0 {
        return Err(closed_handle());
    }
    Ok(unsafe { &*(handle as *const T) })
}

pub fn free<T>(handle: i64) {
    if handle != 0 {
        drop(unsafe { Box::from_raw(handle as *mut T) });
    }
}

/// `Java_io_zkrecipes_Native_<name>(long handle)`: frees a handle of type `$ty`.
macro_rules! export_free {
    ($name:ident, $ty:ty) => {
        #[unsafe(no_mangle)]
        pub extern "system" fn $name<'l>(
            mut env: jni::EnvUnowned<'l>,
            _class: jni::objects::JClass<'l>,
            handle: i64,
        ) {
            env.with_env(|_env| -> $crate::errors::Result<()> {
                $crate::handles::free::<$ty>(handle);
                Ok(())
            })
            .resolve::<$crate::errors::ThrowZkException>()
        }
    };
}
pub(crate) use export_free;
