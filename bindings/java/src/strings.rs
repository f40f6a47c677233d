//! Java strings and string arrays as the core takes them: a null one is `INVALID_ARGUMENT`
//! where a string is required.

use jni::jni_str;
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

/// A `String[]` for Java, of the core's names.
pub fn string_array<'l>(env: &mut Env<'l>, names: &[impl AsRef<str>]) -> Result<JObjectArray<'l>> {
    let array = env.new_object_array(
        names.len() as i32,
        jni_str!("java/lang/String"),
        JString::null(),
    )?;
    for (i, name) in names.iter().enumerate() {
        let name = env.new_string(name.as_ref())?;
        array.set_element(env, i, &name)?;
    }
    Ok(array)
}
