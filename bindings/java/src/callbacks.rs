//! Calls into Java from the core's threads: completing a `CompletableFuture`
//! and delivering an event to a recipe object. Both go through two static
//! methods of `io.zkrecipes.Native`, which do the Java-side conversion.

use std::sync::OnceLock;

use jni::objects::{JClass, JObject};
use jni::refs::Global;
use jni::vm::JavaVM;
use jni::{jni_sig, jni_str, Env, JValue};
use zkrecipes::ffi::log::LogRecord;
use zkrecipes::ffi::EventDetails;
use zkrecipes::metrics::{Recorded, Recording};

/// `io.zkrecipes.Native`, captured on a Java thread so that the library's
/// class loader is used (a native thread's FindClass sees only the system one).
static NATIVE: OnceLock<Global<JClass<'static>>> = OnceLock::new();

pub fn init(env: &mut Env<'_>, class: &JClass<'_>) -> jni::errors::Result<()> {
    if NATIVE.get().is_none() {
        let _ = NATIVE.set(env.new_global_ref(class)?);
    }
    Ok(())
}

pub fn native_class() -> Option<&'static JClass<'static>> {
    NATIVE.get().map(|class| class.as_ref())
}

/// What a finished operation hands to Java (`Native.complete` decodes `kind`).
pub enum Value {
    Null,
    Bool(bool),
    Long(i64),
    Bytes(Vec<u8>),
    Text(String),
    /// A queue item: its node name (to give it back) and its payload.
    Item(String, Vec<u8>),
    /// A batch of queue items, in queue order, packed as `Item`s are (name, then payload).
    Items(Vec<zkrecipes::Item>),
    /// Longs, as `Native.longs` reads them back (`packing::packed_longs`).
    Longs(Vec<i64>),
    /// Thrown in Java as `ZkException(code, message)`.
    Error(zkrecipes::Error),
}

/// Byte strings as Java's `ChildData.bytes` reads them back: each a 4-byte big-endian length,
/// then its bytes.
pub fn packed<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut bytes = Vec::new();
    for part in parts {
        bytes.extend_from_slice(&(part.len() as u32).to_be_bytes());
        bytes.extend_from_slice(part);
    }
    bytes
}

pub fn complete(future: &Global<JObject<'static>>, value: Value) {
    deliver(|env, class| {
        let (kind, number, bytes, text) = match value {
            Value::Null => (0, 0, None, None),
            Value::Bool(b) => (1, b as i64, None, None),
            Value::Long(n) => (2, n, None, None),
            Value::Bytes(b) => (3, 0, Some(b), None),
            Value::Text(t) => (4, 0, None, Some(t)),
            Value::Item(name, data) => (5, 0, Some(data), Some(name)),
            Value::Items(items) => (
                6,
                0,
                Some(packed(
                    items
                        .iter()
                        .flat_map(|i| [i.name.as_bytes(), i.data.as_slice()]),
                )),
                None,
            ),
            Value::Longs(longs) => (7, 0, Some(crate::packing::packed_longs(&longs)), None),
            Value::Error(e) => (-1, code_index(&e), None, Some(e.message().to_string())),
        };
        let bytes: JObject = match bytes {
            Some(b) => env.byte_array_from_slice(&b)?.into(),
            None => JObject::null(),
        };
        let text: JObject = match text {
            Some(t) => env.new_string(t)?.into(),
            None => JObject::null(),
        };
        env.call_static_method(
            class,
            jni_str!("complete"),
            jni_sig!("(Ljava/util/concurrent/CompletableFuture;IJ[BLjava/lang/String;)V"),
            &[
                JValue::Object(future.as_ref()),
                JValue::Int(kind),
                JValue::Long(number),
                JValue::Object(&bytes),
                JValue::Object(&text),
            ],
        )?;
        Ok(())
    });
}

/// An event's details; `Native.event` builds the Java event from them (a
/// token or code below zero means none).
pub fn event(sink: &Global<JObject<'static>>, details: EventDetails) {
    deliver(|env, class| {
        let name: JObject = env.new_string(details.name)?.into();
        let (code, message) = match &details.reason {
            Some(reason) => (code_index(reason), Some(reason.message())),
            None => (-1, None),
        };
        let message: JObject = match message {
            Some(m) => env.new_string(m)?.into(),
            None => JObject::null(),
        };
        env.call_static_method(
            class,
            jni_str!("event"),
            jni_sig!("(Ljava/lang/Object;Ljava/lang/String;JJLjava/lang/String;)V"),
            &[
                JValue::Object(sink.as_ref()),
                JValue::Object(&name),
                JValue::Long(details.fencing_token.unwrap_or(-1)),
                JValue::Long(code),
                JValue::Object(&message),
            ],
        )?;
        Ok(())
    });
}

/// A value a shared count took, packed as `counter::packed` packs it; `Native.count` hands it
/// to the count's listeners.
pub fn count(sink: &Global<JObject<'static>>, versioned: zkrecipes::VersionedCount) {
    deliver(|env, class| {
        env.call_static_method(
            class,
            jni_str!("count"),
            jni_sig!("(Ljava/lang/Object;J)V"),
            &[
                JValue::Object(sink.as_ref()),
                JValue::Long(crate::packing::packed(versioned)),
            ],
        )?;
        Ok(())
    });
}

/// A cache's event: its name and its nodes, packed as `cache::packed_event` packs them;
/// `Native.cacheEvent` hands them to the cache's listeners.
pub fn cache_event(sink: &Global<JObject<'static>>, event: zkrecipes::CacheEvent) {
    data_event(sink, event.name(), &crate::packing::packed_event(&event));
}

/// An event with its data packed (a cache's nodes, a service cache's instances):
/// `Native.cacheEvent` hands them to the listeners of `sink`, which read `data` back.
pub fn data_event(sink: &Global<JObject<'static>>, name: &str, data: &[u8]) {
    deliver(|env, class| {
        let name: JObject = env.new_string(name)?.into();
        let data: JObject = env.byte_array_from_slice(data)?.into();
        env.call_static_method(
            class,
            jni_str!("cacheEvent"),
            jni_sig!("(Ljava/lang/Object;Ljava/lang/String;[B)V"),
            &[
                JValue::Object(sink.as_ref()),
                JValue::Object(&name),
                JValue::Object(&data),
            ],
        )?;
        Ok(())
    });
}

/// A library event for `System.Logger` (`Native.log` logs it): the logger's number
/// (`log::logger_number`: its position in `Native.names(6)`, the root `zkrecipes` after them),
/// the level's number (1 ERROR to 5 TRACE) and the line (`ffi::log_line`: the message, then the
/// fields as `key=value`). Runs on the core's log
/// delivery thread, attached as `zkrecipes-log`: the user's appenders run there, and a thread
/// dump or a log pattern's `%thread` says so.
pub fn log(record: LogRecord) {
    let logger = zkrecipes::ffi::log::logger_number(record.logger);
    let line = zkrecipes::ffi::log_line(&record);
    deliver_as(c"zkrecipes-log", |env, class| {
        let line: JObject = env.new_string(line)?.into();
        env.call_static_method(
            class,
            jni_str!("log"),
            jni_sig!("(IILjava/lang/String;)V"),
            &[
                JValue::Int(logger as i32),
                JValue::Int(record.level as i32),
                JValue::Object(&line),
            ],
        )?;
        Ok(())
    });
}

/// A metric recording for a `MetricsFeed` (`Native.recorded` hands it over): the metric's
/// index in the catalog (`ffi::catalog_index`), its attributes as names and values one after
/// the other, and the number added or the duration in seconds (`value_of`). On the core's
/// delivery thread, attached as `zkrecipes-log`, as the log records: the user's meters run there.
pub fn recorded(feed: &Global<JObject<'static>>, recording: &Recording) {
    let metric = zkrecipes::ffi::catalog_index(recording.metric) as i32;
    deliver_as(c"zkrecipes-log", |env, class| {
        let attributes = env.new_object_array(
            (recording.attributes.len() * 2) as i32,
            jni_str!("java/lang/String"),
            JObject::null(),
        )?;
        for (at, (name, value)) in recording.attributes.iter().enumerate() {
            let name = env.new_string(name)?;
            attributes.set_element(env, 2 * at, &name)?;
            let value = env.new_string(value)?;
            attributes.set_element(env, 2 * at + 1, &value)?;
        }
        env.call_static_method(
            class,
            jni_str!("recorded"),
            jni_sig!("(Ljava/lang/Object;I[Ljava/lang/String;D)V"),
            &[
                JValue::Object(feed.as_ref()),
                JValue::Int(metric),
                JValue::Object(&attributes),
                JValue::Double(value_of(recording.value)),
            ],
        )?;
        Ok(())
    });
}

/// A recording's number as Java takes it: a count added (exact as a double up to 2^53, far
/// beyond any one addition) or a duration in seconds.
fn value_of(value: Recorded) -> f64 {
    match value {
        Recorded::Add(n) => n as f64,
        Recorded::Seconds(seconds) => seconds,
    }
}

/// The code's position in the core's list (`ErrorCode::ALL`, which `Native.names(0)` gives
/// Java): `Native.error` resolves it by the name at that position.
pub fn code_index(err: &zkrecipes::Error) -> i64 {
    zkrecipes::ErrorCode::ALL
        .iter()
        .position(|c| *c == err.code())
        .unwrap_or(zkrecipes::ErrorCode::ALL.len() - 1) as i64
}

/// Runs `call` on this (runtime) thread, attached to the JVM once for the
/// thread's life as a daemon (see `DaemonAttachment`). `Native.complete` and
/// `Native.event` only hand over to Java's own threads (the callback pool,
/// the client's listener thread, a thread blocked in `join`): no user code
/// runs here.
fn deliver(call: impl FnOnce(&mut Env<'_>, &JClass<'static>) -> jni::errors::Result<()>) {
    deliver_as(c"zkrecipes-native", call)
}

/// `deliver` on a thread that Java is to know as `name` (the name of its attachment).
fn deliver_as(
    name: &'static std::ffi::CStr,
    call: impl FnOnce(&mut Env<'_>, &JClass<'static>) -> jni::errors::Result<()>,
) {
    let (Ok(vm), Some(class)) = (JavaVM::singleton(), NATIVE.get()) else {
        return;
    };
    DaemonAttachment::ensure(&vm, name);
    // Attached already, so this only borrows the attachment (a scoped one, should the daemon
    // attachment have failed, as before).
    let _ = vm.attach_current_thread_for_scope(|env| -> jni::errors::Result<()> {
        let result = call(env, class);
        // Native.complete/event never throw; should something slip through,
        // it must not stay pending on this thread.
        if env.exception_check() {
            env.exception_clear();
        }
        result
    });
}

/// This thread's attachment to the JVM as a daemon, made on its first call into Java and
/// ended when the thread ends. Attaching costs the JVM a `java.lang.Thread` and its setup
/// (tens of microseconds): once per operation it was a tenth of a Java lock cycle. A daemon,
/// because an attached non-daemon thread keeps the JVM from exiting, and the runtime's
/// threads live as long as the process (jni 0.22 attaches permanently only as non-daemon).
struct DaemonAttachment(*mut jni::sys::JavaVM);

thread_local! {
    static DAEMON: std::cell::RefCell<Option<DaemonAttachment>> = const { std::cell::RefCell::new(None) };
}

impl DaemonAttachment {
    fn ensure(vm: &JavaVM, name: &'static std::ffi::CStr) {
        let raw = vm.get_raw();
        let _ = DAEMON.try_with(|daemon| {
            let mut daemon = daemon.borrow_mut();
            if daemon.is_some() {
                return;
            }
            // SAFETY: `raw` is the live JVM (JavaVM::singleton); GetEnv and
            // AttachCurrentThreadAsDaemon are callable from any thread.
            unsafe {
                let mut env = std::ptr::null_mut();
                // A thread the JVM knows already (a Java thread calling in) is left as it is.
                if ((**raw).v1_4.GetEnv)(raw, &mut env, jni::sys::JNI_VERSION_1_4)
                    == jni::sys::JNI_OK
                {
                    return;
                }
                // Named, so that a thread dump tells what they are (unnamed, they took the
                // JVM's default `Thread-N` names from the user's threads; found by review).
                let mut args = jni::sys::JavaVMAttachArgs {
                    version: jni::sys::JNI_VERSION_1_4,
                    name: name.as_ptr().cast_mut(),
                    group: std::ptr::null_mut(),
                };
                let args = (&mut args as *mut jni::sys::JavaVMAttachArgs).cast();
                if ((**raw).v1_4.AttachCurrentThreadAsDaemon)(raw, &mut env, args)
                    == jni::sys::JNI_OK
                {
                    *daemon = Some(DaemonAttachment(raw));
                }
            }
        });
    }
}

impl Drop for DaemonAttachment {
    fn drop(&mut self) {
        // SAFETY: runs on the attached thread as it ends, outside any JNI call.
        unsafe {
            ((**self.0).v1_4.DetachCurrentThread)(self.0);
        }
    }
}
