package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeReadWriteLock

/** Readers share, a writer excludes everyone; in Curator's and kazoo's node layout. */
class ReadWriteLock(client: Client, path: String) : AutoCloseable {
    private val native = native { NativeReadWriteLock(client.native, path) }

    val readLock: Lock = Lock(native.readLock(), "read")
    val writeLock: Lock = Lock(native.writeLock(), "write")

    /** Releases every hold of both sides. */
    override fun close() {
        readLock.close()
        writeLock.close()
    }
}
