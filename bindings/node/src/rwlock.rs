use napi::Env;
use napi_derive::napi;
use zkrecipes::ReadWriteLock;

use crate::client::NativeClient;
use crate::errors::IntoJs;
use crate::lock::NativeLock;

#[napi]
pub struct NativeReadWriteLock {
    inner: ReadWriteLock,
}

#[napi]
impl NativeReadWriteLock {
    #[napi(constructor)]
    pub fn new(env: &Env, client: &NativeClient, dir: String) -> napi::Result<Self> {
        Ok(NativeReadWriteLock {
            inner: ReadWriteLock::new(&client.inner, &dir).into_js(env)?,
        })
    }

    #[napi]
    pub fn read_lock(&self) -> NativeLock {
        NativeLock {
            inner: self.inner.read_lock().clone(),
        }
    }

    #[napi]
    pub fn write_lock(&self) -> NativeLock {
        NativeLock {
            inner: self.inner.write_lock().clone(),
        }
    }
}
