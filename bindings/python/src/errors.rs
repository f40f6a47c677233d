//! Core errors become the `ZkError` subclasses of `zkrecipes.errors`, in one place.

use pyo3::prelude::*;

pub fn to_py(err: zkrecipes::Error) -> PyErr {
    Python::attach(|py| {
        let made = py
            .import("zkrecipes.errors")
            .and_then(|module| module.getattr("_from_native"))
            .and_then(|from_native| from_native.call1((err.code().as_str(), err.message())));
        match made {
            Ok(exception) => {
                // Raised from native code, the exception would not be chained to the one
                // being handled (as a `raise` in Python is): set `__context__` as Python would.
                if let Ok(handled) = py
                    .import("sys")
                    .and_then(|sys| sys.call_method0("exc_info"))
                    .and_then(|info| info.get_item(1))
                {
                    if !handled.is_none() && !handled.is(&exception) {
                        let _ = exception.setattr("__context__", handled);
                    }
                }
                PyErr::from_value(exception)
            }
            Err(import_failed) => import_failed,
        }
    })
}

pub fn internal(what: impl std::fmt::Display) -> PyErr {
    to_py(zkrecipes::Error::new(
        zkrecipes::ErrorCode::Internal,
        what.to_string(),
    ))
}

pub trait IntoPyResult<T> {
    fn into_py_result(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for zkrecipes::Result<T> {
    fn into_py_result(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
