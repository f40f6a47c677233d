package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeException

/**
 * Every error of zkrecipes: one subclass per code of the core (the same codes as in Python,
 * Node.js and Java), so that `when (e) { is ZkException.Closed -> … }` is exhaustive.
 */
sealed class ZkException(
    /** The code as every binding names it: `"CLOSED"`, `"SESSION_EXPIRED"`, … */
    val code: String,
    /** What happened, naming the recipe and path. */
    val detail: String,
    cause: Throwable? = null,
) : Exception("$code: $detail", cause) {
    class InvalidPath(detail: String, cause: Throwable? = null) : ZkException("INVALID_PATH", detail, cause)
    class InvalidArgument(detail: String, cause: Throwable? = null) : ZkException("INVALID_ARGUMENT", detail, cause)
    class ConnectionLoss(detail: String, cause: Throwable? = null) : ZkException("CONNECTION_LOSS", detail, cause)
    /** The TLS connection failed for its configuration: retrying will not help until it changes. */
    class TlsRefused(detail: String, cause: Throwable? = null) : ZkException("TLS_REFUSED", detail, cause)
    class SessionExpired(detail: String, cause: Throwable? = null) : ZkException("SESSION_EXPIRED", detail, cause)
    class Timeout(detail: String, cause: Throwable? = null) : ZkException("TIMEOUT", detail, cause)
    class NoNode(detail: String, cause: Throwable? = null) : ZkException("NO_NODE", detail, cause)
    class NodeExists(detail: String, cause: Throwable? = null) : ZkException("NODE_EXISTS", detail, cause)
    class NotEmpty(detail: String, cause: Throwable? = null) : ZkException("NOT_EMPTY", detail, cause)
    class BadVersion(detail: String, cause: Throwable? = null) : ZkException("BAD_VERSION", detail, cause)
    class NoAuth(detail: String, cause: Throwable? = null) : ZkException("NO_AUTH", detail, cause)
    class AuthFailed(detail: String, cause: Throwable? = null) : ZkException("AUTH_FAILED", detail, cause)
    class NoSuchElement(detail: String, cause: Throwable? = null) : ZkException("NO_SUCH_ELEMENT", detail, cause)
    class NotOwner(detail: String, cause: Throwable? = null) : ZkException("NOT_OWNER", detail, cause)
    class WouldDeadlock(detail: String, cause: Throwable? = null) : ZkException("WOULD_DEADLOCK", detail, cause)
    class Closed(detail: String, cause: Throwable? = null) : ZkException("CLOSED", detail, cause)
    class Interrupted(detail: String, cause: Throwable? = null) : ZkException("INTERRUPTED", detail, cause)
    class Internal(detail: String, cause: Throwable? = null) : ZkException("INTERNAL", detail, cause)

    companion object {
        /** The subclass for a core code; an unknown code is INTERNAL, never lost. */
        fun of(code: String, detail: String, cause: Throwable? = null): ZkException = when (code) {
            "INVALID_PATH" -> InvalidPath(detail, cause)
            "INVALID_ARGUMENT" -> InvalidArgument(detail, cause)
            "CONNECTION_LOSS" -> ConnectionLoss(detail, cause)
            "TLS_REFUSED" -> TlsRefused(detail, cause)
            "SESSION_EXPIRED" -> SessionExpired(detail, cause)
            "TIMEOUT" -> Timeout(detail, cause)
            "NO_NODE" -> NoNode(detail, cause)
            "NODE_EXISTS" -> NodeExists(detail, cause)
            "NOT_EMPTY" -> NotEmpty(detail, cause)
            "BAD_VERSION" -> BadVersion(detail, cause)
            "NO_AUTH" -> NoAuth(detail, cause)
            "AUTH_FAILED" -> AuthFailed(detail, cause)
            "NO_SUCH_ELEMENT" -> NoSuchElement(detail, cause)
            "NOT_OWNER" -> NotOwner(detail, cause)
            "WOULD_DEADLOCK" -> WouldDeadlock(detail, cause)
            "CLOSED" -> Closed(detail, cause)
            "INTERRUPTED" -> Interrupted(detail, cause)
            else -> Internal(if (code == "INTERNAL") detail else "$code: $detail", cause)
        }
    }
}

/** Runs a call into the native layer, turning its errors into [ZkException]s. */
internal inline fun <T> native(call: () -> T): T = try {
    call()
} catch (e: NativeException.Zk) {
    throw ZkException.of(e.code, e.detail, e)
}
