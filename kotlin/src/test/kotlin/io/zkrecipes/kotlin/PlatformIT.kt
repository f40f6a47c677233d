package io.zkrecipes.kotlin

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * The JAR's directory for each OS and CPU, as the release builds name them (tools/dist.py): a
 * Mac or a Windows JVM must look where the macOS and Windows libraries are.
 */
class PlatformIT {
    @Test
    fun `each OS and CPU names the directory the release JAR carries`() {
        val cases = listOf(
            Triple("Mac OS X", "aarch64", "darwin-aarch64"),
            Triple("Mac OS X", "x86_64", "darwin-x86_64"),
            Triple("Windows 11", "amd64", "windows-x86_64"),
            Triple("Windows Server 2022", "amd64", "windows-x86_64"),
            Triple("Linux", "amd64", "linux-x86_64"),
        )
        val prebuilt = NativeLibrary.PREBUILT.split(", ")
        for ((os, arch, expected) in cases) {
            assertEquals(expected, withOs(os, arch) { NativeLibrary.platform() }, "$os $arch")
            assertTrue(expected in prebuilt, "$expected among $prebuilt")
        }
    }

    private fun <T> withOs(name: String, arch: String, block: () -> T): T {
        val (oldName, oldArch) = System.getProperty("os.name") to System.getProperty("os.arch")
        System.setProperty("os.name", name)
        System.setProperty("os.arch", arch)
        try {
            return block()
        } finally {
            System.setProperty("os.name", oldName)
            System.setProperty("os.arch", oldArch)
        }
    }
}
