package io.zkrecipes;

/** Every zkrecipes failure, with the same {@link Code} as in Python, Node.js and Rust. */
public class ZkException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The error codes shared by every zkrecipes binding. */
    public enum Code {
        INVALID_PATH, INVALID_ARGUMENT, CONNECTION_LOSS, TLS_REFUSED, SESSION_EXPIRED, TIMEOUT, NO_NODE,
        NODE_EXISTS, NOT_EMPTY, BAD_VERSION, NO_AUTH, AUTH_FAILED, NO_SUCH_ELEMENT, NOT_OWNER,
        WOULD_DEADLOCK, CLOSED, INTERRUPTED, INTERNAL
    }

    private final Code code;
    private final String detail;

    public ZkException(Code code, String message) {
        this(code, message, null);
    }

    /** {@code cause}: e.g. the exception the native library completed an operation with, on its own thread. */
    public ZkException(Code code, String message, Throwable cause) {
        super(code + ": " + message, cause);
        this.code = code;
        this.detail = message;
    }

    public Code getCode() {
        return code;
    }

    /** Apache's name ({@code KeeperException.code()}) for {@link #getCode()}. */
    public Code code() {
        return code;
    }

    /** The message without the code prefix. */
    public String getDetail() {
        return detail;
    }
}
