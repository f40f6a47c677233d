package io.zkrecipes;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Properties;

/**
 * Loads {@code libzkrecipes_java}: the path in system property {@code zkrecipes.native.path} if set,
 * else {@code java.library.path}, else the copy carried in the JAR under
 * {@code native/<os>-<arch>[-musl]/} ({@link #PREBUILT}), extracted once per content hash into a cache directory
 * ({@code zkrecipes.native.cache}, default {@code <java.io.tmpdir>/zkrecipes-<user>}) that later
 * runs reuse. Whatever was loaded must be this JAR's version, or loading fails saying which file.
 */
final class NativeLibrary {
    static final String PATH_PROPERTY = "zkrecipes.native.path";
    static final String CACHE_PROPERTY = "zkrecipes.native.cache";
    private static final String NAME = "zkrecipes_java";
    /** The platforms whose library the released JAR carries, as {@link #platform()} names them. */
    static final String PREBUILT = "linux-x86_64, linux-aarch64, linux-x86_64-musl, linux-aarch64-musl, "
        + "darwin-x86_64, darwin-aarch64, windows-x86_64";
    /**
     * Extracted libraries of other builds unused for this long are deleted (a JVM needs its file
     * only while it starts: a loaded library stays mapped after its file is gone).
     */
    private static final Duration STALE = Duration.ofDays(1);

    private NativeLibrary() {}

    /** Loads the library and returns where it came from (for error messages). */
    static String load() {
        String override = System.getProperty(PATH_PROPERTY);
        if (override != null && !override.isEmpty()) {
            Path path = Path.of(override).toAbsolutePath();
            try {
                System.load(path.toString());
            } catch (UnsatisfiedLinkError e) {
                throw linkError("zkrecipes cannot load " + path + ", named by -D" + PATH_PROPERTY + ": "
                    + e.getMessage(), e);
            }
            return path + " (named by -D" + PATH_PROPERTY + ")";
        }
        String onPath = onLibraryPath();
        if (onPath != null) {
            try {
                System.loadLibrary(NAME);
            } catch (UnsatisfiedLinkError e) {
                // A file that is there but does not load must not be skipped silently.
                throw linkError("zkrecipes cannot load " + onPath + ", found on java.library.path: " + e.getMessage()
                    + " (remove it, or point -D" + PATH_PROPERTY + " at the right library)", e);
            }
            return onPath + " (found on java.library.path)";
        }
        Path file = extract();
        System.load(file.toString());
        return file + " (extracted from the JAR)";
    }

    /** Fails unless the loaded library is the one built with this JAR. */
    static void checkVersion(String loadedFrom) {
        String expected = jarVersion();
        String actual;
        try {
            actual = "version " + Native.version();
        } catch (UnsatisfiedLinkError noVersion) {
            actual = "no zkrecipes version (another library, or a zkrecipes older than 0.1.0)";
        }
        if (!actual.equals("version " + expected)) {
            throw new UnsatisfiedLinkError("zkrecipes " + expected + " loaded " + loadedFrom + ", which has " + actual
                + ": remove it, or point -D" + PATH_PROPERTY + " at the library of version " + expected
                + " (the JAR carries one for " + PREBUILT + ")");
        }
    }

    static String jarVersion() {
        try (InputStream in = NativeLibrary.class.getResourceAsStream("zkrecipes.properties")) {
            Properties p = new Properties();
            if (in != null) {
                p.load(in);
            }
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }

    /** The library's file on {@code java.library.path}, {@code null} if there is none. */
    private static String onLibraryPath() {
        for (String dir : System.getProperty("java.library.path", "").split(File.pathSeparator)) {
            Path candidate = Path.of(dir.isEmpty() ? "." : dir, System.mapLibraryName(NAME));
            if (Files.isRegularFile(candidate)) {
                return candidate.toAbsolutePath().toString();
            }
        }
        return null;
    }

    /**
     * The JAR's library as a file named by its content hash: written once (to a temporary name,
     * then moved into place, so that concurrent JVMs never see half a file), reused by later runs,
     * and checked against the hash before every load. The cache directory is the user's own
     * ({@code rwx------}); one owned by somebody else is refused.
     */
    private static Path extract() {
        String resource = "/native/" + platform() + "/" + System.mapLibraryName(NAME);
        byte[] library;
        try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("zkrecipes has no native library for " + platform() + " (looked for "
                    + resource + " in the JAR; prebuilt: " + PREBUILT + ";"
                    + " elsewhere build it from source and set -D" + PATH_PROPERTY + "=<path>)");
            }
            library = in.readAllBytes();
        } catch (IOException e) {
            throw linkError("zkrecipes cannot read " + resource + " from its JAR: " + e, e);
        }
        String hash = sha256(library);
        Path cache = cacheDirectory();
        Path dir = cache.resolve(hash.substring(0, 16));
        Path file = dir.resolve(System.mapLibraryName(NAME));
        try {
            ownDirectory(cache);
            ownDirectory(dir);
            // Marked used before it is read: another JVM's removeStale must not take it meanwhile.
            Files.setLastModifiedTime(dir, FileTime.from(Instant.now()));
            if (!Files.isRegularFile(file) || !sha256(Files.readAllBytes(file)).equals(hash)) {
                Path partial = Files.createTempFile(dir, "partial-", ".part");
                try {
                    Files.write(partial, library);
                    placeUnlessThere(partial, file, hash);
                } finally {
                    Files.deleteIfExists(partial);
                }
            }
        } catch (IOException | SecurityException | UnsupportedOperationException e) {
            throw linkError("zkrecipes cannot extract its native library into " + dir + " (" + e
                + "): choose a writable directory with -D" + CACHE_PROPERTY
                + "=<dir>, or extract native" + resource.substring("/native".length()) + " from the JAR yourself"
                + " and set -D" + PATH_PROPERTY + "=<file>", e);
        }
        removeStale(cache, dir);
        return file;
    }

    private static Path cacheDirectory() {
        String configured = System.getProperty(CACHE_PROPERTY);
        if (configured != null && !configured.isEmpty()) {
            return Path.of(configured).toAbsolutePath();
        }
        String user = System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9._-]", "_");
        return Path.of(System.getProperty("java.io.tmpdir"), "zkrecipes-" + user).toAbsolutePath();
    }

    /** Creates {@code dir} for this user only, or checks that an existing one is this user's. */
    private static void ownDirectory(Path dir) throws IOException {
        try {
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (FileAlreadyExistsException exists) {
            if (!Files.isDirectory(dir)) {
                throw new IOException(dir + " exists and is not a directory");
            }
        } catch (UnsupportedOperationException noPosix) {
            // Windows: no POSIX modes (the user's %TEMP% is the user's own); the owner is checked.
            Files.createDirectories(dir);
        }
        String me = System.getProperty("user.name");
        String owner = Files.getOwner(dir).getName();
        if (me != null && !sameUser(owner, me)) {
            throw new IOException(dir + " belongs to " + owner + ", not to " + me);
        }
    }

    /**
     * Windows names an owner by domain (or host), a backslash and the user name, case aside; an
     * elevated process's files belong to the Administrators group, a service's to SYSTEM, which
     * could replace any file anyway.
     */
    private static boolean sameUser(String owner, String me) {
        if (owner.equals(me)) {
            return true;
        }
        if (owner.equalsIgnoreCase("BUILTIN\\Administrators") || owner.equalsIgnoreCase("NT AUTHORITY\\SYSTEM")) {
            return true;
        }
        String domain = System.getenv("USERDOMAIN");
        return domain != null && owner.equalsIgnoreCase(domain + "\\" + me);
    }

    /**
     * Moves the written library into place. Another JVM may have placed it first and loaded it:
     * Windows refuses to replace a loaded library, and that file, with the right hash, will do.
     */
    private static void placeUnlessThere(Path from, Path to, String hash) throws IOException {
        try {
            try {
                Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException refused) {
            if (!Files.isRegularFile(to) || !sha256(Files.readAllBytes(to)).equals(hash)) {
                throw refused;
            }
        }
    }

    /**
     * Deletes other versions' libraries not loaded for {@link #STALE}. A process that still has
     * one loaded keeps its mapping on Linux and macOS; Windows refuses to delete a loaded library,
     * so that directory stays until a later start finds it unused.
     */
    private static void removeStale(Path cache, Path current) {
        Instant cutoff = Instant.now().minus(STALE);
        try (var dirs = Files.list(cache)) {
            for (Path dir : (Iterable<Path>) dirs::iterator) {
                if (dir.equals(current) || !Files.isDirectory(dir)
                    || Files.getLastModifiedTime(dir).toInstant().isAfter(cutoff)) {
                    continue;
                }
                // One at a time: a library still loaded (Windows refuses its delete) stops
                // only its own directory's removal.
                try (var files = Files.list(dir)) {
                    for (Path f : (Iterable<Path>) files::iterator) {
                        Files.deleteIfExists(f);
                    }
                    Files.deleteIfExists(dir);
                } catch (IOException | RuntimeException e) {
                    Native.LOG.log(System.Logger.Level.DEBUG, "zkrecipes could not remove " + dir, e);
                }
            }
        } catch (IOException | RuntimeException e) {
            Native.LOG.log(System.Logger.Level.DEBUG, "zkrecipes could not clean " + cache, e);
        }
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static UnsatisfiedLinkError linkError(String message, Throwable cause) {
        UnsatisfiedLinkError error = new UnsatisfiedLinkError(message);
        error.initCause(cause);
        return error;
    }

    /**
     * {@code <os>-<arch>}: {@code linux}, {@code darwin} (macOS) or {@code windows}, then
     * {@code x86_64} or {@code aarch64}, and {@code -musl} on a musl libc (Alpine): the directory
     * under {@code native/} that holds this platform's library.
     */
    static String platform() {
        String osName = System.getProperty("os.name").toLowerCase(Locale.ROOT);
        String os;
        if (osName.startsWith("linux")) {
            os = "linux";
        } else if (osName.startsWith("mac") || osName.startsWith("darwin")) {
            os = "darwin";
        } else if (osName.startsWith("windows")) {
            os = "windows";
        } else {
            os = osName.replace(' ', '_');
        }
        String arch = System.getProperty("os.arch");
        if (arch.equals("amd64") || arch.equals("x86_64")) {
            arch = "x86_64";
        } else if (arch.equals("aarch64") || arch.equals("arm64")) {
            arch = "aarch64";
        }
        return os + "-" + arch + (os.equals("linux") && isMusl() ? "-musl" : "");
    }

    /**
     * Whether this JVM runs on musl (Alpine): its own memory map names musl's loader. Looking for
     * musl's files on disk is not enough: Debian's {@code musl} package installs them beside glibc.
     */
    private static boolean isMusl() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
                if (line.contains("/ld-musl-") || line.contains("/libc.musl-")) {
                    return true;
                }
            }
        } catch (IOException | RuntimeException e) {
            // no /proc: assume glibc
        }
        return false;
    }
}
