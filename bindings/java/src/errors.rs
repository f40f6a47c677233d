//! Errors thrown into Java: always `io.zkrecipes.ZkException(code, message)`,
//! built by `Native.error` from the code (its position in the core's list, resolved there by
//! name) and the message.

use std::fmt;

use jni::errors::ErrorPolicy;
use jni::objects::{JObject, JThrowable};
use jni::{jni_sig, jni_str, Env, JValue};

#[derive(Debug)]
pub enum BindingError {
    Zk(zkrecipes::Error),
    Jni(jni::errors::Error),
}

pub type Result<T> = std::result::Result<T, BindingError>;

impl fmt::Display for BindingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BindingError::Zk(err) => write!(f, "{err}"),
            BindingError::Jni(err) => write!(f, "INTERNAL: JNI: {err}"),
        }
    }
}

impl From<jni::errors::Error> for BindingError {
    fn from(err: jni::errors::Error) -> Self {
        BindingError::Jni(err)
    }
}

impl From<zkrecipes::Error> for BindingError {
    fn from(err: zkrecipes::Error) -> Self {
        BindingError::Zk(err)
    }
}

pub fn closed_handle() -> BindingError {
    BindingError::Zk(zkrecipes::Error::new(
        zkrecipes::ErrorCode::Closed,
        "this object is closed",
    ))
}

/// Throws `ZkException` for an error or a panic and returns a default value.
#[derive(Debug, Default)]
pub struct ThrowZkException;

/// The `ZkException` for a core error, made by `Native.error` (not thrown).
pub fn exception<'l>(
    env: &mut Env<'l>,
    err: &zkrecipes::Error,
) -> jni::errors::Result<JObject<'l>> {
    let class = crate::callbacks::native_class().ok_or(jni::errors::Error::NullPtr("Native"))?;
    let message: JObject = env.new_string(err.message())?.into();
    env.call_static_method(
        class,
        jni_str!("error"),
        jni_sig!("(JLjava/lang/String;)Lio/zkrecipes/ZkException;"),
        &[
            JValue::Long(crate::callbacks::code_index(err)),
            JValue::Object(&message),
        ],
    )?
    .l()
}

fn throw(env: &mut Env<'_>, err: zkrecipes::Error) {
    if env.exception_check() {
        return; // a Java exception is already on its way
    }
    let thrown = exception(env, &err).and_then(|exception| {
        let exception = JThrowable::cast_local(env, exception)?;
        env.throw(exception)
    });
    if thrown.is_err() && !env.exception_check() {
        let _ = env.throw_new(
            jni_str!("io/zkrecipes/ZkException"),
            jni::strings::JNIString::from(err.to_string()),
        );
    }
}

impl<T: Default> ErrorPolicy<T, BindingError> for ThrowZkException {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut Self::Captures<'unowned_env_local, 'native_method>,
        err: BindingError,
    ) -> jni::errors::Result<T> {
        let err = match err {
            BindingError::Zk(err) => err,
            BindingError::Jni(err) => {
                zkrecipes::Error::new(zkrecipes::ErrorCode::Internal, format!("JNI: {err}"))
            }
        };
        throw(env, err);
        Ok(T::default())
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut Self::Captures<'unowned_env_local, 'native_method>,
        payload: Box<dyn std::any::Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into());
        throw(
            env,
            zkrecipes::Error::new(
                zkrecipes::ErrorCode::Internal,
                format!("Rust panic: {what}"),
            ),
        );
        Ok(T::default())
    }
}
