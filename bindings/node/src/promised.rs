//! The recipes' asynchronous methods, declared once each.
//!
//! Every such method is the same machine: arguments checked on the JavaScript thread (a bad one
//! throws before anything starts), a clone of the recipe (the call outlives `&self`), its future
//! run on the core's runtime, and the Promise settled with the value converted on the
//! JavaScript thread (`errors::promise`). One declaration makes one `#[napi]` method:
//!
//! ```ignore
//! promised! {
//!     impl NativeQueue {
//!         // `null` when `timeoutMs` passed without an item.
//!         fn take(env, timeout_ms: Option<f64>) -> "Promise<Buffer | null>" Option<Buffer> {
//!             let how = wait_ms(env, timeout_ms)?;
//!         } |queue| queue.take(how), maybe_bytes;
//!     }
//! }
//! ```
//!
//! The statements in braces run first; the future is made from the clone named by `|...|`, and
//! the last expression converts its value. A future that must begin at the call (a start, a
//! close) is made with `eager`, as a hand-written method does. A method's comment is a plain
//! one: napi would print a doc attribute passed through a macro as a raw string literal, and the
//! users' typings are `index.d.ts`'s anyway.

macro_rules! promised {
    (impl $native:ident { $(
        fn $name:ident($env:ident $(, $arg:ident: $argty:ty)*) -> $ts:literal $out:ty {
            $($prep:stmt;)*
        } |$inner:ident| $future:expr, $convert:expr;
    )* }) => {
        #[napi_derive::napi]
        impl $native {
            $(
                #[napi(ts_return_type = $ts)]
                pub fn $name<'env>(
                    &self,
                    $env: &'env napi::Env
                    $(, $arg: $argty)*
                ) -> napi::Result<napi::bindgen_prelude::PromiseRaw<'env, $out>> {
                    $($prep;)*
                    let $inner = self.inner.clone();
                    $crate::errors::promise($env, async move { $future.await }, $convert)
                }
            )*
        }
    };
}

pub(crate) use promised;
