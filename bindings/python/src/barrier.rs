//! The barrier and the double barrier: `NativeBarrier`, `NativeDoubleBarrier`.
//!
//! A double barrier's `enter` or `leave` that is interrupted or cancelled withdraws the member
//! node (the core does so when its future is dropped).

use pyo3::prelude::*;
use zkrecipes::ffi::member_count;
use zkrecipes::{Barrier, DoubleBarrier, Wait};

use crate::client::NativeClient;
use crate::errors::IntoPyResult;
use crate::twins::pymethods_with_twins;

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeBarrier {
    inner: Barrier,
}

pymethods_with_twins! {
    impl NativeBarrier {
        twins {
            fn set | set_async() -> () {} |barrier| barrier.set();
            fn remove | remove_async() -> () {} |barrier| barrier.remove();
            fn is_set | is_set_async() -> bool {} |barrier| barrier.is_set();
            #[pyo3(signature = (seconds))]
            fn wait | wait_async(seconds: Option<f64>) -> bool {
                let limit = Wait::python(seconds, true).into_py_result()?;
            } |barrier| barrier.wait(limit);
        }

        #[new]
        fn new(client: &NativeClient, path: &str) -> PyResult<NativeBarrier> {
            Ok(NativeBarrier {
                inner: Barrier::new(&client.inner, path).into_py_result()?,
            })
        }

        fn path(&self) -> String {
            self.inner.path().to_string()
        }
    }
}

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeDoubleBarrier {
    inner: DoubleBarrier,
}

pymethods_with_twins! {
    impl NativeDoubleBarrier {
        twins {
            #[pyo3(signature = (seconds))]
            fn enter | enter_async(seconds: Option<f64>) -> bool {
                let limit = Wait::python(seconds, true).into_py_result()?;
            } |barrier| barrier.enter(limit);
            #[pyo3(signature = (seconds))]
            fn leave | leave_async(seconds: Option<f64>) -> bool {
                let limit = Wait::python(seconds, true).into_py_result()?;
            } |barrier| barrier.leave(limit);
            fn members | members_async() -> Vec<String> {} |barrier| barrier.members();
            fn is_ready | is_ready_async() -> bool {} |barrier| barrier.is_ready();
        }

        #[new]
        fn new(client: &NativeClient, path: &str, count: i64) -> PyResult<NativeDoubleBarrier> {
            let count = member_count("member_count", count).into_py_result()?;
            Ok(NativeDoubleBarrier {
                inner: DoubleBarrier::new(&client.inner, path, count).into_py_result()?,
            })
        }

        fn path(&self) -> String {
            self.inner.path().to_string()
        }

        fn member_count(&self) -> u32 {
            self.inner.member_count()
        }

        fn node_path(&self) -> String {
            self.inner.node_path()
        }

        /// Withdraws this member without waiting: for an `enter` whose caller was interrupted or
        /// cancelled just as it succeeded (the core withdraws one cancelled before), so that the
        /// others' `leave` does not wait for a member nobody will lead out. Only a member whose
        /// node is there leaves: a `leave` by a non-member could delete `ready` under the others.
        fn withdraw_soon(&self) {
            drop(self.inner.withdraw());
        }
    }
}
