package io.zkrecipes;

/** Every zkrecipes failure, with the same {@link Code} as in Python, Node.js and Rust. */
public class ZkException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The error codes shared by every zkrecipes binding. */
    public enum Code {
        INVALID_PATH, INVALID_ARGUMENT, CONNECTION_LOSS, SESSION_EXPIRED, TIMEOUT, NO_NODE,
        NODE_EXISTS, NOT_EMPTY, BAD_VERSION, NO_AUTH, AUTH_FAILED, NO_SUCH_ELEMENT, NOT_OWNER,
        WOULD_DEADLOCK, CLOSED, INTERRUPTED, INTERNAL
    }

    private final Code code;
    private final String detail;

    public ZkException(Code code, String message) {
        super(code + ": " + message);
        this.code = code;
        this.detail = message;
    }

    /** Thrown by the native library as {@code "<CODE>: <message>"}. */
    ZkException(String encoded) {
        this(codeOf(encoded), messageOf(encoded));
    }

    public Code getCode() {
        return code;
    }

    /** The message without the code prefix. */
    public String getDetail() {
        return detail;
    }

    static ZkException fromNative(String encoded) {
        return new ZkException(encoded);
    }

    private static Code codeOf(String encoded) {
        int colon = encoded == null ? -1 : encoded.indexOf(": ");
        if (colon > 0) {
            try {
                return Code.valueOf(encoded.substring(0, colon));
            } catch (IllegalArgumentException notACode) {
                // fall through
            }
        }
        return Code.INTERNAL;
    }

    private static String messageOf(String encoded) {
        if (encoded == null) {
            return "";
        }
        int colon = encoded.indexOf(": ");
        if (colon > 0) {
            try {
                Code.valueOf(encoded.substring(0, colon));
                return encoded.substring(colon + 2);
            } catch (IllegalArgumentException notACode) {
                // the whole text is the message
            }
        }
        return encoded;
    }
}
