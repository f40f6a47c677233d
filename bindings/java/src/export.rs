//! `export!`: one JNI entry point of `io.zkrecipes.Native`. The body runs in
//! `with_env` and returns `Result`; an error or a panic is thrown in Java as
//! `ZkException` (see `errors`), so no export repeats that plumbing.

macro_rules! export {
    ($(#[$meta:meta])* fn $name:ident<$l:lifetime>($env:ident, $class:ident; $($arg:ident: $ty:ty),* $(,)?) -> $ret:ty { $($body:tt)* }) => {
        $(#[$meta])*
        #[unsafe(no_mangle)]
        pub extern "system" fn $name<$l>(
            mut env: jni::EnvUnowned<$l>,
            $class: jni::objects::JClass<$l>,
            $($arg: $ty),*
        ) -> $ret {
            env.with_env(|$env| -> $crate::errors::Result<$ret> { $($body)* })
                .resolve::<$crate::errors::ThrowZkException>()
        }
    };
    ($(#[$meta:meta])* fn $name:ident<$l:lifetime>($env:ident; $($arg:ident: $ty:ty),* $(,)?) -> $ret:ty { $($body:tt)* }) => {
        $(#[$meta])*
        #[unsafe(no_mangle)]
        pub extern "system" fn $name<$l>(
            mut env: jni::EnvUnowned<$l>,
            _class: jni::objects::JClass<$l>,
            $($arg: $ty),*
        ) -> $ret {
            env.with_env(|$env| -> $crate::errors::Result<$ret> { $($body)* })
                .resolve::<$crate::errors::ThrowZkException>()
        }
    };
}
pub(crate) use export;
