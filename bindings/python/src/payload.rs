//! Queue payloads cross as `bytes`, never as lists of ints.

use std::convert::Infallible;

use pyo3::prelude::*;
use pyo3::types::PyBytes;

pub struct Payload(pub Vec<u8>);

impl<'py> IntoPyObject<'py> for Payload {
    type Target = PyBytes;
    type Output = Bound<'py, PyBytes>;
    type Error = Infallible;

    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
        Ok(PyBytes::new(py, &self.0))
    }
}
