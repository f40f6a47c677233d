package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeHold
import io.zkrecipes.kotlin.ffi.NativeLock
import io.zkrecipes.kotlin.ffi.NativeWaitSpan
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.withContext
import kotlin.time.Duration

private val ACQUIRE = waitCall("lock.acquire")

/** One contender of a lock, holder first. */
data class Participant(val node: String, val identity: String, val isReader: Boolean)

/**
 * A held lock. [release] once (a second is [ZkException.NotOwner]); `use {}` releases too.
 * The fencing token increases with every hold of the lock, across processes and languages.
 */
class LockHold internal constructor(private val native: NativeHold, val fencingToken: Long) : AutoCloseable {
    /** Not released and not lost. */
    val isHeld: Boolean get() = native.isHeld()

    /** Returns once the lock node is gone. */
    suspend fun release() = native { native.release() }

    /** Releases, blocking the thread, unless released already. */
    override fun close() = native.releaseBlocking()

    override fun toString() = "LockHold(fencingToken=$fencingToken, held=$isHeld)"
}

/**
 * An exclusive lock (Apache's `WriteLock` layout) or one side of a [ReadWriteLock]. Every acquire
 * is an owner of its own: coroutines exclude each other as processes do.
 */
open class Lock internal constructor(
    internal val native: NativeLock,
    /** Its acquire as the core names it for the spans: a lock's, or a read/write lock's side's. */
    private val acquireCall: NativeWaitSpan = ACQUIRE,
) : AutoCloseable {
    /** The lock's directory. */
    val path: String get() = native.dir()

    /** Whether any hold of this object is in place. */
    val isHeld: Boolean get() = native.isHeld()

    /**
     * The hold, or `null` if [timeout] passed first ([Duration.INFINITE]: as long as it takes;
     * zero: a try). Cancelling the coroutine withdraws its node; a hold that came anyway is released.
     */
    suspend fun acquire(timeout: Duration = Duration.INFINITE): LockHold? =
        waiting(acquireCall, { path }, { it?.fencingToken }) {
            // The native hold is made first and filled inside the call, which returns a plain
            // number (see `NativeLock.acquire`): a cancellation at any point loses nothing. An
            // acquire still running is dropped, its node withdrawn; a hold that came anyway is
            // given up at once.
            val (hold, token) = intoHold { hold -> native.acquire(timeout.toNativeMillis(), hold) }
            if (token >= 0) LockHold(hold, token) else null
        }

    /** One request when the lock is visibly held; `null` then. */
    suspend fun tryAcquire(): LockHold? = acquire(Duration.ZERO)

    /**
     * Runs [block] holding the lock and releases it afterwards, also when [block] throws or the
     * coroutine is cancelled. Not obtained within [timeout]: [ZkException.Timeout].
     */
    suspend fun <T> withLock(timeout: Duration = Duration.INFINITE, block: suspend (LockHold) -> T): T {
        val hold = acquire(timeout) ?: throw ZkException.Timeout("lock $path not acquired within $timeout")
        return holding(hold, { it.release() }, block)
    }

    /** Holder first; each contender's node, identity and side. */
    suspend fun participants(): List<Participant> =
        native { native.participants() }.map { Participant(it.node, it.identity, it.isReader) }

    /** ACQUIRED (with its token), RELEASED, SUSPENDED, RECONNECTED, LOST (with its reason). */
    val events: Flow<LockEvent>
        get() = eventFlow(native::events) {
            LockEvent(LockEvent.Type.valueOf(it.name), it.fencingToken, it.reasonException())
        }

    /** Releases every hold of this object. */
    suspend fun releaseAll() = native { native.releaseAll() }

    /** [releaseAll], blocking the thread. */
    override fun close() = native.releaseAllBlocking()
}

/**
 * Runs a native acquire that fills a new [NativeHold] and answers a plain value (see
 * `NativeLock.acquire`): a cancellation at any point gives up whatever came, so nothing is lost.
 */
internal suspend inline fun <R> intoHold(acquire: (NativeHold) -> R): Pair<NativeHold, R> {
    val hold = NativeHold()
    val got = try {
        native { acquire(hold) }
    } catch (e: CancellationException) {
        hold.abandon()
        throw e
    }
    return hold to got
}

/**
 * Runs [block] with [hold] and releases it afterwards, also when [block] throws or the coroutine
 * is cancelled: a release that fails after [block] threw never hides [block]'s exception.
 */
internal suspend fun <H, T> holding(hold: H, release: suspend (H) -> Unit, block: suspend (H) -> T): T {
    val result = try {
        block(hold)
    } catch (e: Throwable) {
        withContext(NonCancellable) { runCatching { release(hold) } }
        throw e
    }
    withContext(NonCancellable) { release(hold) }
    return result
}

/** An exclusive lock, interoperable with Apache's `WriteLock`, Curator and kazoo. */
class WriteLock(client: Client, path: String) : Lock(native { NativeLock.writeLock(client.native, path) })
