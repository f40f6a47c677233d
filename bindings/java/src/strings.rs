//! Java strings and string arrays as the core takes them: a null one is `INVALID_ARGUMENT`
//! where a string is required.

use jni::objects::{JObjectArray, JString};
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

/// A Java `String[]` (null: empty), null elements kept as `None`.
pub fn strings(
    env: &mut Env<'_>,
    array: &JObjectArray<'_, JString<'_>>,
) -> Result<Vec<Option<String>>> {
    if array.is_null() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for i in 0..array.len(env)? {
        let element = array.get_element(env, i)?;
        out.push(optional_string(env, &element)?);
    }
    Ok(out)
}
