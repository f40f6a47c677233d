package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeReadWriteLock

private val READ_ACQUIRE = waitCall("read_lock.acquire")
private val WRITE_ACQUIRE = waitCall("write_lock.acquire")

/** Readers share, a writer excludes everyone; in Curator's and kazoo's node layout. */
class ReadWriteLock(client: Client, path: String) : AutoCloseable {
    private val native = native { NativeReadWriteLock(client.native, path) }

    val readLock: Lock = Lock(native.readLock(), READ_ACQUIRE)
    val writeLock: Lock = Lock(native.writeLock(), WRITE_ACQUIRE)

    /** Releases every hold of both sides. */
    override fun close() {
        readLock.close()
        writeLock.close()
    }
}
