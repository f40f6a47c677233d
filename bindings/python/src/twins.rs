//! The blocking calls and their `_async` twins, written once.
//!
//! Every call that talks to the server is offered twice: `name`, which waits with the GIL
//! released (Ctrl-C interrupts it), and `name_async`, which returns an awaitable. The two differ
//! only in how they wait, so one declaration makes both:
//!
//! ```ignore
//! pymethods_with_twins! {
//!     impl NativeSharedCount {
//!         twins {
//!             fn add | add_async(delta: i128) -> CountRow {
//!                 let delta = int32("delta", delta).into_py_result()?;
//!             } |count| add_count(count, delta);
//!         }
//!         fn path(&self) -> String { .. }   // any other method, as in `#[pymethods]`
//!     }
//! }
//! ```
//!
//! The statements in braces run first in both (an argument refused before anything starts);
//! the future is then made from a clone of `self.inner`, named by the `|...|`. Twins under
//! `undoable { .. }` hand back what their caller was gone for (`undo.rs`): a lock released, an
//! item put back.

macro_rules! pymethods_with_twins {
    // With both kinds of twins.
    (
        impl $native:ident {
            twins { $($twins:tt)* }
            undoable { $($undoable:tt)* }
            $($rest:tt)*
        }
    ) => {
        pymethods_with_twins!(@emit $native { $($twins)* } { $($undoable)* } { $($rest)* });
    };
    // Plain twins only.
    (
        impl $native:ident {
            twins { $($twins:tt)* }
            $($rest:tt)*
        }
    ) => {
        pymethods_with_twins!(@emit $native { $($twins)* } {} { $($rest)* });
    };
    (@emit $native:ident {
        $(
            $(#[$attr:meta])*
            fn $name:ident | $twin:ident ( $($arg:ident : $argty:ty),* ) -> $out:ty
            { $($prep:stmt;)* }
            |$inner:ident| $future:expr;
        )*
    } {
        $(
            $(#[$uattr:meta])*
            fn $uname:ident | $utwin:ident ( $($uarg:ident : $uargty:ty),* ) -> $uout:ty
            { $($uprep:stmt;)* }
            |$uinner:ident| $ufuture:expr;
        )*
    } { $($rest:tt)* }) => {
        #[pymethods]
        impl $native {
            $(
                $(#[$attr])*
                fn $name(&self, py: Python<'_> $(, $arg: $argty)*) -> PyResult<$out> {
                    $($prep;)*
                    let $inner = self.inner.clone();
                    $crate::blocking::wait(py, move || async move { $future.await })
                }

                $(#[$attr])*
                fn $twin<'py>(
                    &self,
                    py: Python<'py>
                    $(, $arg: $argty)*
                ) -> PyResult<Bound<'py, PyAny>> {
                    $($prep;)*
                    let $inner = self.inner.clone();
                    $crate::blocking::awaitable(py, async move { $future.await })
                }
            )*

            $(
                $(#[$uattr])*
                fn $uname(&self, py: Python<'_> $(, $uarg: $uargty)*) -> PyResult<$uout> {
                    $($uprep;)*
                    let $uinner = self.inner.clone();
                    $crate::blocking::wait_undoable(py, move || async move { $ufuture.await })
                }

                $(#[$uattr])*
                fn $utwin<'py>(
                    &self,
                    py: Python<'py>
                    $(, $uarg: $uargty)*
                ) -> PyResult<Bound<'py, PyAny>> {
                    $($uprep;)*
                    let $uinner = self.inner.clone();
                    $crate::blocking::awaitable_undoable(py, async move { $ufuture.await })
                }
            )*

            $($rest)*
        }
    };
}

pub(crate) use pymethods_with_twins;
