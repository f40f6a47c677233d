//! The generator of the Kotlin sources, run by the Maven build: uniffi's,
//! then one change to what it wrote (`reuse_call_status`).
use std::path::{Path, PathBuf};

fn main() {
    uniffi::uniffi_bindgen_main();
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        let at = args.iter().position(|a| a == flag)?;
        args.get(at + 1).map(PathBuf::from)
    };
    let kotlin = value("--language").is_some_and(|l| l.as_os_str() == "kotlin");
    if let (true, Some(out_dir)) = (kotlin, value("--out-dir")) {
        if let Err(err) = patch_tree(&out_dir) {
            eprintln!("uniffi-bindgen: {err}");
            std::process::exit(1);
        }
    }
}

fn patch_tree(dir: &Path) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            patch_tree(&path)?;
        } else if path.extension().is_some_and(|e| e == "kt") {
            let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
            let patched =
                reuse_call_status(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            std::fs::write(&path, patched).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// uniffi's Kotlin allocates a JNA `Structure` for the status of every
/// call: 3–10 µs each here, against about 1 µs for the call itself, and an
/// uncontended lock cycle makes about ten such calls (handle clones,
/// buffers, a future's completion). Each thread reuses one instead. Calls
/// on one thread never overlap: a call made while lowering another's
/// arguments (a buffer's allocation) ends, its status checked, before the
/// outer call is made. A generator whose text differs fails the build
/// rather than quietly lose this.
///
/// JNA also copies a structure argument's every field to native memory
/// before each call and back after it, by reflection (a tenth of the
/// calling thread's time on the lock cycle). Rust writes the status only on
/// failure, so the reused one does not synchronise: the code is read as the
/// one byte it is, the whole status only on failure, and the byte is reset
/// then, so that the next call finds it clean.
fn reuse_call_status(kotlin: &str) -> Result<String, String> {
    const ALLOCATING: &str =
        "    var status = UniffiRustCallStatus()\n    val return_value = callback(status)\n";
    const CHECKING: &str =
        "    uniffiCheckCallStatus(errorHandler, status)\n    return return_value\n";
    const REUSING: &str =
        "    val status = uniffiCallStatus.get()\n    val return_value = callback(status)\n";
    const CHECKING_ON_FAILURE: &str = "    val memory = status.getPointer()\n    if (memory.getByte(0) != UNIFFI_CALL_SUCCESS) {\n        status.read()\n        memory.setByte(0, UNIFFI_CALL_SUCCESS)\n        uniffiCheckCallStatus(errorHandler, status)\n    }\n    return return_value\n";
    const POOL: &str = "\n// One call status per thread, reused and read only on failure (patched in by\n// tools/uniffi-bindgen).\nprivate val uniffiCallStatus: ThreadLocal<UniffiRustCallStatus> =\n    ThreadLocal.withInitial { UniffiRustCallStatus().apply { setAutoSynch(false) } }\n";
    const ANCHOR: &str = "class InternalException(message: String) : kotlin.Exception(message)\n";
    if !kotlin.contains("UniffiRustCallStatus") {
        return Ok(kotlin.to_string());
    }
    let calling = format!("{ALLOCATING}{CHECKING}");
    if kotlin.matches(&calling).count() != 1 || kotlin.matches(ANCHOR).count() != 1 {
        return Err("uniffi's call-status code changed: update reuse_call_status".into());
    }
    Ok(kotlin
        .replace(&calling, &format!("{REUSING}{CHECKING_ON_FAILURE}"))
        .replace(ANCHOR, &format!("{ANCHOR}{POOL}")))
}

#[cfg(test)]
mod tests {
    use super::reuse_call_status;

    const GENERATED: &str = "class InternalException(message: String) : kotlin.Exception(message)\n\
        private inline fun <U, E: kotlin.Exception> uniffiRustCallWithError(errorHandler: UniffiRustCallStatusErrorHandler<E>, callback: (UniffiRustCallStatus) -> U): U {\n    \
        var status = UniffiRustCallStatus()\n    val return_value = callback(status)\n    \
        uniffiCheckCallStatus(errorHandler, status)\n    return return_value\n}\n";

    #[test]
    fn each_thread_reuses_one_status() {
        let patched = reuse_call_status(GENERATED).unwrap();
        assert!(!patched.contains("var status = UniffiRustCallStatus()"));
        assert!(patched.contains(
            "val status = uniffiCallStatus.get()\n    val return_value = callback(status)\n"
        ));
        assert!(patched.contains("setAutoSynch(false)"));
        assert!(patched
            .contains("if (memory.getByte(0) != UNIFFI_CALL_SUCCESS) {\n        status.read()"));
        assert_eq!(
            patched
                .matches("uniffiCheckCallStatus(errorHandler, status)")
                .count(),
            1
        );
        assert_eq!(patched.matches("ThreadLocal.withInitial").count(), 1);
    }

    #[test]
    fn changed_generator_text_fails() {
        let changed = GENERATED.replace("var status", "val status");
        assert!(reuse_call_status(&changed).is_err());
    }

    #[test]
    fn files_without_calls_are_left_alone() {
        assert_eq!(reuse_call_status("package x\n").unwrap(), "package x\n");
    }
}
