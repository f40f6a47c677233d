package io.zkrecipes;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads {@code libzkrecipes_java}: the path in system property {@code zkrecipes.native.path} if set,
 * else {@code java.library.path}, else the copy carried in the JAR under {@code native/<os>-<arch>[-musl]/}.
 */
final class NativeLibrary {
    static final String PATH_PROPERTY = "zkrecipes.native.path";
    private static final String NAME = "zkrecipes_java";

    private NativeLibrary() {}

    static void load() {
        String override = System.getProperty(PATH_PROPERTY);
        if (override != null && !override.isEmpty()) {
            Path path = Path.of(override).toAbsolutePath();
            try {
                System.load(path.toString());
            } catch (UnsatisfiedLinkError e) {
                UnsatisfiedLinkError named = new UnsatisfiedLinkError("zkrecipes cannot load " + path + ", named by -D"
                    + PATH_PROPERTY + ": " + e.getMessage());
                named.initCause(e);
                throw named;
            }
            return;
        }
        try {
            System.loadLibrary(NAME);
            return;
        } catch (UnsatisfiedLinkError notOnLibraryPath) {
            // use the JAR's copy
        }
        String resource = "/native/" + platform() + "/" + System.mapLibraryName(NAME);
        try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("zkrecipes has no native library for " + platform() + " (looked for "
                    + resource + " in the JAR; prebuilt: linux-x86_64, linux-aarch64, linux-x86_64-musl, linux-aarch64-musl;"
                    + " elsewhere build it from source and set -D" + PATH_PROPERTY + "=<path>)");
            }
            Path dir = Files.createTempDirectory("zkrecipes-");
            Path file = dir.resolve(System.mapLibraryName(NAME));
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            // Deleted at exit in reverse order of registration: the directory after its file.
            dir.toFile().deleteOnExit();
            file.toFile().deleteOnExit();
            System.load(file.toString());
        } catch (IOException e) {
            throw new UnsatisfiedLinkError("cannot extract " + resource + ": " + e);
        }
    }

    /**
     * {@code linux-x86_64}, {@code linux-aarch64}, and {@code -musl} after either on a musl libc
     * (Alpine): the directory under {@code native/} that holds this platform's library.
     */
    static String platform() {
        String osName = System.getProperty("os.name").toLowerCase(Locale.ROOT);
        String os = osName.startsWith("linux") ? "linux" : osName.replace(' ', '_');
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
