package io.zkrecipes;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Loads {@code libzkrecipes_java}: the path in system property {@code zkrecipes.native.path} if set,
 * else {@code java.library.path}, else the copy carried in the JAR under {@code native/<os>-<arch>/}.
 */
final class NativeLibrary {
    static final String PATH_PROPERTY = "zkrecipes.native.path";
    private static final String NAME = "zkrecipes_java";

    private NativeLibrary() {}

    static void load() {
        String override = System.getProperty(PATH_PROPERTY);
        if (override != null && !override.isEmpty()) {
            System.load(Path.of(override).toAbsolutePath().toString());
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
                throw new UnsatisfiedLinkError("zkrecipes has no native library for " + platform() + " (" + resource + ")");
            }
            Path dir = Files.createTempDirectory("zkrecipes-");
            Path file = dir.resolve(System.mapLibraryName(NAME));
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            file.toFile().deleteOnExit();
            dir.toFile().deleteOnExit();
            System.load(file.toString());
        } catch (IOException e) {
            throw new UnsatisfiedLinkError("cannot extract " + resource + ": " + e);
        }
    }

    static String platform() {
        String os = System.getProperty("os.name").toLowerCase().startsWith("linux") ? "linux" : System.getProperty("os.name").toLowerCase();
        String arch = System.getProperty("os.arch");
        if (arch.equals("amd64") || arch.equals("x86_64")) {
            arch = "x86_64";
        }
        return os + "-" + arch;
    }
}
