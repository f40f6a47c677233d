//! Java strings as the core takes them: a null one is `INVALID_ARGUMENT` where a string is
//! required.

use jni::objects::JString;
use jni::Env;

use crate::errors::Result;

pub fn optional_string(env: &Env<'_>, value: &JString<'_>) -> Result<Option<String>> {
    if value.is_null() {
        return Ok(None);
    }
    Ok(Some(value.try_to_string(env)?))
}

pub fn string(env: &Env<'_>, value: &JString<'_>) -> Result<String> {
    optional_string(env, value)?.ok_or_else(|| {
        zkrecipes::Error::new(
            zkrecipes::ErrorCode::InvalidArgument,
            "null string argument",
        )
        .into()
    })
}
