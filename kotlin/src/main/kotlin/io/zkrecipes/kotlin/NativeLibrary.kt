package io.zkrecipes.kotlin

import com.sun.jna.CallbackThreadInitializer
import com.sun.jna.Native
import io.zkrecipes.kotlin.ffi.uniffiCallbackInterfaceNativeLogSink
import io.zkrecipes.kotlin.ffi.uniffiCallbackInterfaceNativeRecordingSink
import io.zkrecipes.kotlin.ffi.uniffiRustFutureContinuationCallbackImpl
import java.io.IOException
import java.nio.file.AtomicMoveNotSupportedException
import java.nio.file.FileAlreadyExistsException
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.StandardCopyOption
import java.nio.file.attribute.FileTime
import java.nio.file.attribute.PosixFilePermissions
import java.security.MessageDigest
import java.time.Instant

/**
 * Finds `libzkrecipes_kotlin` with the Java JAR's rules and hands it to the generated layer (JNA):
 * the file named by `-Dzkrecipes.kotlin.native.path`, else the copy carried in the JAR under
 * `native/<os>-<arch>[-musl]/` ([PREBUILT]), extracted once per content hash into the user's own cache
 * directory (`-Dzkrecipes.native.cache`, default `<java.io.tmpdir>/zkrecipes-<user>`), written
 * to a temporary name and moved into place, and checked against its hash before every load.
 * A library of another build fails at load: uniffi checks the API's checksums.
 */
internal object NativeLibrary {
    const val PATH_PROPERTY = "zkrecipes.kotlin.native.path"
    const val CACHE_PROPERTY = "zkrecipes.native.cache"
    private const val NAME = "zkrecipes_kotlin"
    private const val OVERRIDE = "uniffi.component.$NAME.libraryOverride"
    private const val STALE_MS = 24L * 3600 * 1000

    /** The platforms whose library the released JAR carries, as [platform] names them. */
    const val PREBUILT = "linux-x86_64, linux-aarch64, linux-x86_64-musl, linux-aarch64-musl, " +
        "darwin-x86_64, darwin-aarch64, windows-x86_64"

    private val located: String by lazy {
        val named = System.getProperty(PATH_PROPERTY)
        val file = if (!named.isNullOrEmpty()) Path.of(named).toAbsolutePath() else extract()
        System.setProperty(OVERRIDE, file.toString())
        // Futures complete through this callback from the core's runtime threads. JNA attaches
        // such a thread to the JVM for every call and detaches it after, by default: keeping
        // them attached (as daemons, so that the JVM still exits) halves the cost of a call.
        Native.setCallbackThreadInitializer(
            uniffiRustFutureContinuationCallbackImpl,
            CallbackThreadInitializer(true, false, "zkrecipes-callback"),
        )
        // The library's events come on the core's log delivery thread (Logs.kt): attached once
        // too, as a daemon named as a thread dump or a log pattern's %thread should show it. Set
        // before the generated layer loads: JNA reads a callback's initializer when it makes the
        // callback's native stub, which for a callback interface is when the layer registers it.
        Native.setCallbackThreadInitializer(
            uniffiCallbackInterfaceNativeLogSink.log,
            CallbackThreadInitializer(true, false, "zkrecipes-log"),
        )
        // The metric recordings come on the same thread (MetricsFeed.kt), attached the same way.
        Native.setCallbackThreadInitializer(
            uniffiCallbackInterfaceNativeRecordingSink.recorded,
            CallbackThreadInitializer(true, false, "zkrecipes-log"),
        )
        file.toString()
    }

    /** Points the generated layer at the library; call before any native call. */
    fun ensure() {
        located
    }

    /**
     * `<os>-<arch>`: `linux`, `darwin` (macOS) or `windows`, then `x86_64` or `aarch64`, with
     * `-musl` on a musl libc (Alpine): the directory under `native/`.
     */
    internal fun platform(): String {
        val osName = System.getProperty("os.name").lowercase()
        val os = when {
            osName.startsWith("linux") -> "linux"
            osName.startsWith("mac") || osName.startsWith("darwin") -> "darwin"
            osName.startsWith("windows") -> "windows"
            else -> osName.replace(' ', '_')
        }
        val arch = when (val a = System.getProperty("os.arch")) {
            "amd64", "x86_64" -> "x86_64"
            "aarch64", "arm64" -> "aarch64"
            else -> a
        }
        return "$os-$arch" + if (os == "linux" && isMusl()) "-musl" else ""
    }

    /**
     * Whether this JVM runs on musl (Alpine): its own memory map names musl's loader. Files on
     * disk are not enough: Debian's `musl` package installs them beside glibc.
     */
    private fun isMusl(): Boolean = runCatching {
        Files.readAllLines(Path.of("/proc/self/maps")).any { it.contains("/ld-musl-") || it.contains("/libc.musl-") }
    }.getOrDefault(false)

    private fun extract(): Path {
        val resource = "/native/${platform()}/${System.mapLibraryName(NAME)}"
        val library = NativeLibrary::class.java.getResourceAsStream(resource)?.use { it.readAllBytes() }
            ?: throw UnsatisfiedLinkError(
                "zkrecipes has no native library for ${platform()} (looked for $resource in the JAR; " +
                    "prebuilt: $PREBUILT; elsewhere build it from source and set -D$PATH_PROPERTY=<path>)",
            )
        val hash = sha256(library)
        val cache = cacheDirectory()
        val dir = cache.resolve("kotlin-" + hash.substring(0, 16))
        val file = dir.resolve(System.mapLibraryName(NAME))
        try {
            ownDirectory(cache)
            ownDirectory(dir)
            // Marked used before it is read: another JVM's removeStale must not take it meanwhile.
            Files.setLastModifiedTime(dir, FileTime.from(Instant.now()))
            if (!Files.isRegularFile(file) || sha256(Files.readAllBytes(file)) != hash) {
                val partial = Files.createTempFile(dir, "partial-", ".part")
                try {
                    Files.write(partial, library)
                    placeUnlessThere(partial, file, hash)
                } finally {
                    Files.deleteIfExists(partial)
                }
            }
        } catch (e: Exception) {
            if (e !is IOException && e !is SecurityException && e !is UnsupportedOperationException) throw e
            throw UnsatisfiedLinkError(
                "zkrecipes cannot extract its native library into $dir ($e): choose a writable directory " +
                    "with -D$CACHE_PROPERTY=<dir>, or extract $resource from the JAR yourself and set " +
                    "-D$PATH_PROPERTY=<file>",
            ).apply { initCause(e) }
        }
        removeStale(cache, dir)
        return file
    }

    private fun cacheDirectory(): Path {
        val configured = System.getProperty(CACHE_PROPERTY)
        if (!configured.isNullOrEmpty()) return Path.of(configured).toAbsolutePath()
        val user = System.getProperty("user.name", "user").replace(Regex("[^A-Za-z0-9._-]"), "_")
        return Path.of(System.getProperty("java.io.tmpdir"), "zkrecipes-$user").toAbsolutePath()
    }

    /** Creates `dir` for this user only (`rwx------`), or checks that an existing one is this user's. */
    private fun ownDirectory(dir: Path) {
        try {
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")))
        } catch (exists: FileAlreadyExistsException) {
            if (!Files.isDirectory(dir)) throw IOException("$dir exists and is not a directory")
        } catch (noPosix: UnsupportedOperationException) {
            // Windows: no POSIX modes (the user's %TEMP% is the user's own); the owner is checked.
            Files.createDirectories(dir)
        }
        val me = System.getProperty("user.name")
        val owner = Files.getOwner(dir).name
        if (me != null && !sameUser(owner, me)) throw IOException("$dir belongs to $owner, not to $me")
    }

    /**
     * Windows names an owner by domain (or host), a backslash and the user name, case aside; an
     * elevated process's files belong to the Administrators group, a service's to SYSTEM, which
     * could replace any file anyway.
     */
    private fun sameUser(owner: String, me: String): Boolean =
        owner == me ||
            owner.equals("BUILTIN\\Administrators", ignoreCase = true) ||
            owner.equals("NT AUTHORITY\\SYSTEM", ignoreCase = true) ||
            System.getenv("USERDOMAIN")?.let { owner.equals("$it\\$me", ignoreCase = true) } == true

    /**
     * Moves the written library into place. Another JVM may have placed it first and loaded it:
     * Windows refuses to replace a loaded library, and that file, with the right hash, will do.
     */
    private fun placeUnlessThere(from: Path, to: Path, hash: String) {
        try {
            try {
                Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING)
            } catch (e: AtomicMoveNotSupportedException) {
                Files.move(from, to, StandardCopyOption.REPLACE_EXISTING)
            }
        } catch (refused: IOException) {
            if (!Files.isRegularFile(to) || sha256(Files.readAllBytes(to)) != hash) throw refused
        }
    }

    /**
     * Other builds' libraries unused for a day go (a loaded library stays mapped without its file
     * on Linux and macOS; Windows refuses to delete a loaded one, and a later start tries again).
     */
    private fun removeStale(cache: Path, current: Path) {
        val cutoff = System.currentTimeMillis() - STALE_MS
        runCatching {
            Files.list(cache).use { dirs ->
                dirs.filter {
                    it != current && it.fileName.toString().startsWith("kotlin-") && Files.isDirectory(it) &&
                        Files.getLastModifiedTime(it).toMillis() < cutoff
                }.forEach { dir ->
                    runCatching {
                        Files.list(dir).use { files -> files.forEach { Files.deleteIfExists(it) } }
                        Files.deleteIfExists(dir)
                    }
                }
            }
        }
    }

    private fun sha256(bytes: ByteArray): String =
        MessageDigest.getInstance("SHA-256").digest(bytes).joinToString("") { "%02x".format(it) }
}
