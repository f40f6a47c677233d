package io.zkrecipes;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * Curator's {@code DistributedAtomicLong} on its node (a persistent node holding the value as 8
 * bytes, big-endian, created by the first write), so zkrecipes and Curator processes count on
 * one value.
 *
 * <p>Every update is one versioned write repeated until it applies: N increments from any mix of
 * threads, processes, languages and Curator end at exactly N, and each update answers the value
 * it replaced and the one it wrote. A missing or empty node reads as 0; any other length than 8
 * is INVALID_ARGUMENT naming it. Overflow wraps as {@code long} does. A write whose reply was
 * lost with the connection is sent again only once the node is seen unchanged; otherwise
 * CONNECTION_LOSS says the update may or may not have applied, never counting it twice.
 *
 * <p>Unlike Curator's, there is no retry policy to give: an update is repeated until it applies
 * or fails as above. The calls are not interrupted (an update half-done would leave its outcome
 * unknown): an interrupt is kept for the caller to see once the call returns.
 */
public final class DistributedAtomicLong extends NativeObject {
    private final String path;

    /** The counter at {@code counterPath}. INVALID_PATH at once. */
    public DistributedAtomicLong(Client client, String counterPath) {
        super(Objects.requireNonNull(client, "client").withHandle(
            h -> Native.atomicLongNew(h, Objects.requireNonNull(counterPath, "counterPath"))), Native::atomicLongFree);
        this.path = counterPath;
    }

    private <T> T call(int op, long a, long b) {
        return join((h, f) -> Native.atomicLongCall(h, op, a, b, f));
    }

    private AtomicValue<Long> update(int op, long a) {
        ByteBuffer both = ByteBuffer.wrap(this.<byte[]>call(op, a, 0));
        return new AtomicValue<>(true, both.getLong(), both.getLong());
    }

    /** The value on the server now (0 while the node does not exist), as its pre- and post-value. */
    public AtomicValue<Long> get() {
        long value = this.<Long>call(0, 0, 0);
        return new AtomicValue<>(true, value, value);
    }

    public AtomicValue<Long> increment() {
        return update(1, 0);
    }

    public AtomicValue<Long> decrement() {
        return update(2, 0);
    }

    /** Adds {@code delta} (negative: subtracts). */
    public AtomicValue<Long> add(long delta) {
        return update(3, delta);
    }

    /**
     * Writes {@code newValue} if the value is {@code expectedValue} now (a missing node counts
     * as 0): succeeded with both values; otherwise nothing is written, and both values are the
     * value seen (as Curator's {@code AtomicValue} tells it).
     */
    public AtomicValue<Long> compareAndSet(long expectedValue, long newValue) {
        ByteBuffer both = ByteBuffer.wrap(this.<byte[]>call(4, expectedValue, newValue));
        long seen = both.getLong();
        return new AtomicValue<>(seen == expectedValue, seen, both.getLong());
    }

    /** Writes {@code newValue} whatever the value is. */
    public void forceSet(long newValue) {
        call(5, newValue, 0);
    }

    public String getPath() {
        return path;
    }

    @Override
    public String toString() {
        return describe(path);
    }
}
