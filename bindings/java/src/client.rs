use jni::objects::{JByteArray, JClass, JObject, JObjectArray, JString};
use jni::EnvUnowned;
use zkrecipes::ffi::{timeout_setting, SecuritySettings};
use zkrecipes::{Auth, Client, ClientOptions};

use crate::callbacks::{self, Value};
use crate::errors::{Result, ThrowZkException};
use crate::export::export;
use crate::handles::{borrow, export_free, into_handle};
use crate::strings::{optional_string, string, strings};
use crate::tasks;

export! {
    fn Java_io_zkrecipes_Native_init<'l>(env, class; ) -> () { Ok(callbacks::init(env, &class)?) }
}

export! {
    fn Java_io_zkrecipes_Native_cancel<'l>(_env; task: i64) -> () {
        tasks::cancel(task);
        Ok(())
    }
}

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_io_zkrecipes_Native_clientConnect<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    connect_string: JString<'l>,
    session_timeout_seconds: f64,
    connect_timeout_seconds: f64,
    auth_scheme: JString<'l>,
    auth_credentials: JString<'l>,
    identity: JString<'l>,
    tls: JObjectArray<'l, JString<'l>>,
    sasl: JObjectArray<'l, JString<'l>>,
    sasl_password: JByteArray<'l>,
    acl_policy: JString<'l>,
    acl_entries: JObjectArray<'l, JString<'l>>,
    metric_paths: bool,
    future: JObject<'l>,
) -> i64 {
    env.with_env(|env| -> Result<i64> {
        let connect_string = string(env, &connect_string)?;
        let auth = match (
            optional_string(env, &auth_scheme)?,
            optional_string(env, &auth_credentials)?,
        ) {
            (Some(scheme), Some(credentials)) => Some(Auth {
                scheme,
                credentials: credentials.into_bytes(),
            }),
            _ => None,
        };
        let mut options = ClientOptions {
            session_timeout: timeout_setting("sessionTimeout", session_timeout_seconds, "s")?,
            connect_timeout: timeout_setting("connectTimeout", connect_timeout_seconds, "s")?,
            auth,
            identity: optional_string(env, &identity)?,
            metric_paths,
            ..ClientOptions::default()
        };
        // `tls`: ca, cert, key (paths or PEM text), verify hostname ("true"/"false");
        // `sasl`: mechanism, username, service, host, principal, keytab; `acl_entries`: perms, scheme, id, ...
        let tls = strings(env, &tls)?;
        let sasl = strings(env, &sasl)?;
        let entries = strings(env, &acl_entries)?;
        let at = |list: &[Option<String>], i: usize| list.get(i).cloned().flatten();
        let settings = SecuritySettings {
            tls_ca: SecuritySettings::pem(at(&tls, 0)),
            tls_cert: SecuritySettings::pem(at(&tls, 1)),
            tls_key: SecuritySettings::pem(at(&tls, 2)),
            tls_verify_hostname: at(&tls, 3).map(|v| v == "true"),
            sasl_mechanism: at(&sasl, 0),
            sasl_username: at(&sasl, 1),
            sasl_password: match sasl_password.is_null() {
                true => None,
                false => Some(env.convert_byte_array(&sasl_password)?),
            },
            sasl_service: at(&sasl, 2),
            sasl_host: at(&sasl, 3),
            sasl_principal: at(&sasl, 4),
            sasl_keytab: at(&sasl, 5),
            acl_policy: optional_string(env, &acl_policy)?,
            acl_entries: match acl_entries.is_null() {
                true => None,
                false => Some(
                    entries
                        .chunks(3)
                        .map(|e| {
                            (
                                at(e, 0).unwrap_or_default(),
                                at(e, 1).unwrap_or_default(),
                                at(e, 2).unwrap_or_default(),
                            )
                        })
                        .collect(),
                ),
            },
        };
        settings.apply(&mut options)?;
        let future = env.new_global_ref(&future)?;
        Ok(tasks::spawn(
            future,
            move || async move { Client::connect(&connect_string, options).await },
            |client| Value::Long(into_handle(client)),
        ))
    })
    .resolve::<ThrowZkException>()
}

export! {
    fn Java_io_zkrecipes_Native_clientIsTls<'l>(_env; handle: i64) -> bool {
        Ok(unsafe { borrow::<Client>(handle) }?.is_tls())
    }
}

export! {
    fn Java_io_zkrecipes_Native_clientAuthenticatedAs<'l>(env; handle: i64) -> JString<'l> {
        let who = unsafe { borrow::<Client>(handle) }?.authenticated_as().join("\n");
        Ok(env.new_string(who)?)
    }
}

export! {
    fn Java_io_zkrecipes_Native_clientSessionError<'l>(env; handle: i64) -> JObject<'l> {
        match unsafe { borrow::<Client>(handle) }?.session_error() {
            Some(err) => Ok(crate::errors::exception(env, &err)?),
            None => Ok(JObject::null()),
        }
    }
}

export! {
    fn Java_io_zkrecipes_Native_clientWhoami<'l>(env; handle: i64, future: JObject<'l>) -> i64 {
        let (client, future) = tasks::target::<Client>(env, handle, &future)?;
        Ok(tasks::spawn(
            future,
            move || async move { client.whoami().await },
            |who| Value::Text(who.join("\n")),
        ))
    }
}

export! {
    fn Java_io_zkrecipes_Native_clientState<'l>(env; handle: i64) -> JString<'l> {
        let client = unsafe { borrow::<Client>(handle) }?;
        Ok(env.new_string(client.state().as_str())?)
    }
}

export! {
    fn Java_io_zkrecipes_Native_clientSessionId<'l>(_env; handle: i64) -> i64 { Ok(unsafe { borrow::<Client>(handle) }?.session_id()?) }
}

export! {
    fn Java_io_zkrecipes_Native_clientIdentity<'l>(env; handle: i64) -> JString<'l> {
        Ok(env.new_string(unsafe { borrow::<Client>(handle) }?.identity())?)
    }
}

export! {
    fn Java_io_zkrecipes_Native_clientClose<'l>(env; handle: i64, future: JObject<'l>) -> i64 {
        let (client, future) = tasks::target::<Client>(env, handle, &future)?;
        Ok(tasks::spawn(
            future,
            move || async move {
                client.close().await;
                Ok(())
            },
            |()| Value::Null,
        ))
    }
}

export_free!(Java_io_zkrecipes_Native_clientFree, Client);

export! {
    fn Java_io_zkrecipes_Native_clientSubscribe<'l>(env; handle: i64, sink: JObject<'l>) -> i64 {
        let events = unsafe { borrow::<Client>(handle) }?.subscribe();
        let sink = env.new_global_ref(&sink)?;
        Ok(crate::listener::forward(events, sink))
    }
}

export! {
    fn Java_io_zkrecipes_Native_defaultTimeoutMillis<'l>(_env; connect: bool) -> i64 {
        let default = if connect {
            zkrecipes::DEFAULT_CONNECT_TIMEOUT
        } else {
            zkrecipes::DEFAULT_SESSION_TIMEOUT
        };
        Ok(default.as_millis() as i64)
    }
}
