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
//! item put back. Twins under `begun { .. }` make their future at the call (a close, a start, a
//! release): a Ctrl-C or a cancel then stops the wait, never the operation.

macro_rules! pymethods_with_twins {
    // The sections, each optional, in this order: `twins`, `undoable`, `begun`.
    (impl $native:ident { twins { $($t:tt)* } undoable { $($u:tt)* } begun { $($b:tt)* } $($rest:tt)* }) => {
        pymethods_with_twins!(@emit $native { $($t)* } { $($u)* } { $($b)* } { $($rest)* });
    };
    (impl $native:ident { twins { $($t:tt)* } undoable { $($u:tt)* } $($rest:tt)* }) => {
        pymethods_with_twins!(@emit $native { $($t)* } { $($u)* } {} { $($rest)* });
    };
    (impl $native:ident { twins { $($t:tt)* } begun { $($b:tt)* } $($rest:tt)* }) => {
        pymethods_with_twins!(@emit $native { $($t)* } {} { $($b)* } { $($rest)* });
    };
    (impl $native:ident { begun { $($b:tt)* } $($rest:tt)* }) => {
        pymethods_with_twins!(@emit $native {} {} { $($b)* } { $($rest)* });
    };
    (impl $native:ident { twins { $($t:tt)* } $($rest:tt)* }) => {
        pymethods_with_twins!(@emit $native { $($t)* } {} {} { $($rest)* });
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
    } {
        $(
            $(#[$battr:meta])*
            fn $bname:ident | $btwin:ident ( $($barg:ident : $bargty:ty),* ) -> $bout:ty
            { $($bprep:stmt;)* }
            |$binner:ident| $bfuture:expr;
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

            $(
                $(#[$battr])*
                fn $bname(&self, py: Python<'_> $(, $barg: $bargty)*) -> PyResult<$bout> {
                    $($bprep;)*
                    let $binner = self.inner.clone();
                    // Begun here, at the call: a Ctrl-C stops the wait, never the operation.
                    let begun = $bfuture;
                    $crate::blocking::wait(py, move || begun)
                }

                $(#[$battr])*
                fn $btwin<'py>(
                    &self,
                    py: Python<'py>
                    $(, $barg: $bargty)*
                ) -> PyResult<Bound<'py, PyAny>> {
                    $($bprep;)*
                    let $binner = self.inner.clone();
                    $crate::blocking::awaitable(py, $bfuture)
                }
            )*

            $($rest)*
        }
    };
}

pub(crate) use pymethods_with_twins;
