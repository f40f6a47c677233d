//! Rust objects behind Java `long` handles. Java's `NativeObject` guarantees
//! a handle is not used after `free` (its close takes a write lock that every
//! call's read lock excludes); each operation clones what it needs first.
//!
//! A handle points at its value behind a type tag: a handle passed as the
//! wrong type (a `Lock` where a `Client` belongs) is refused with `INTERNAL`
//! instead of being read as something it is not. The functions stay `unsafe`:
//! no tag can make a freed or invented pointer safe to read.

use std::any::TypeId;

use crate::errors::{closed_handle, BindingError, Result};

/// `tag` first (`repr(C)`), so that it can be read before the type is known.
#[repr(C)]
struct Tagged<T> {
    tag: TypeId,
    value: T,
}

pub fn into_handle<T: 'static>(value: T) -> i64 {
    let tagged = Tagged {
        tag: TypeId::of::<T>(),
        value,
    };
    Box::into_raw(Box::new(tagged)) as i64
}

/// # Safety
/// `handle` is 0 or came from `into_handle` and has not been freed.
unsafe fn tagged<T: 'static>(handle: i64) -> Result<*mut Tagged<T>> {
    if handle == 0 {
        return Err(closed_handle());
    }
    // SAFETY: a live handle points at a `Tagged`, whose tag is at offset 0.
    let tag = unsafe { *(handle as *const TypeId) };
    if tag != TypeId::of::<T>() {
        return Err(BindingError::Zk(zkrecipes::Error::new(
            zkrecipes::ErrorCode::Internal,
            format!(
                "a handle of another type where {} belongs",
                std::any::type_name::<T>()
            ),
        )));
    }
    Ok(handle as *mut Tagged<T>)
}

/// # Safety
/// `handle` is 0 or came from `into_handle` and has not been freed, and is
/// not freed while the reference lives.
pub unsafe fn borrow<'a, T: 'static>(handle: i64) -> Result<&'a T> {
    // SAFETY: the caller's promise, and the tag says it is a `T`.
    unsafe { tagged::<T>(handle).map(|t| &(*t).value) }
}

/// # Safety
/// `handle` is 0 or came from `into_handle` and has not been freed; it is
/// not used again.
pub unsafe fn free<T: 'static>(handle: i64) {
    // SAFETY: the caller's promise, and the tag says it is a `T`.
    if let Ok(tagged) = unsafe { tagged::<T>(handle) } {
        drop(unsafe { Box::from_raw(tagged) });
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
                // SAFETY: NativeObject frees a handle once, after every call on it.
                unsafe { $crate::handles::free::<$ty>(handle) };
                Ok(())
            })
            .resolve::<$crate::errors::ThrowZkException>()
        }
    };
}
pub(crate) use export_free;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_of_another_type_is_refused_not_read() {
        let handle = into_handle(7u32);
        // SAFETY: a live handle from `into_handle`.
        unsafe {
            assert_eq!(*borrow::<u32>(handle).unwrap(), 7);
            let Err(BindingError::Zk(err)) = borrow::<String>(handle) else {
                panic!("a u32 handle was read as a String");
            };
            assert_eq!(err.code(), zkrecipes::ErrorCode::Internal);
            free::<String>(handle); // refused: nothing freed
            assert_eq!(*borrow::<u32>(handle).unwrap(), 7);
            free::<u32>(handle);
            assert!(borrow::<u32>(0).is_err());
        }
    }
}
