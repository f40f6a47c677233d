package io.zkrecipes;

import java.util.Objects;

/**
 * Curator's {@code SharedCount} on its node (a persistent node holding a 4-byte big-endian
 * int; kazoo's {@code Counter(support_curator=True)} too), so zkrecipes, Curator and kazoo
 * processes share one count.
 *
 * <p>{@link #start()} creates the node with the seed when it is missing (never overwriting a
 * value) and reads it; from then on the value is cached ({@link #getCount()} asks no server) and
 * followed: read again after every change and every reconnect or new session, a read never
 * replacing a newer one. An empty node (kazoo's) reads as the seed; any other length than 4 is
 * INVALID_ARGUMENT naming it.
 *
 * <p>{@link #setCount} writes whatever the count is; {@link #trySetCount} only over the version
 * it was given, answering {@code false} (with the cache refreshed) when another write came
 * first. A versioned write whose reply was lost with the connection is sent again only if the
 * node is unchanged; otherwise CONNECTION_LOSS says its outcome is unknown. The blocking calls
 * are not interrupted (a write half-done would leave its outcome unknown): an interrupt is kept
 * for the caller to see once the call returns.
 *
 * <pre>{@code
 * try (SharedCount count = new SharedCount(client, "/counts/jobs", 0)) {
 *     count.start();
 *     VersionedValue<Integer> seen = count.getVersionedValue();
 *     if (!count.trySetCount(seen, seen.value() + 1)) { ... another process wrote first ... }
 * }
 * }</pre>
 */
public final class SharedCount extends NativeObject {
    private final String path;
    /** The listeners; the sink knows this count only weakly, so an unreachable count is still cleaned. */
    private final EventSink<SharedCountListener> events;

    /** The count at {@code path}; {@code seedValue} when the node is created or empty. INVALID_PATH at once. */
    public SharedCount(Client client, String path, int seedValue) {
        super(Objects.requireNonNull(client, "client").withHandle(
            h -> Native.sharedCountNew(h, Objects.requireNonNull(path, "path"), seedValue)), Native::sharedCountFree);
        this.path = path;
        java.lang.ref.WeakReference<SharedCount> self = new java.lang.ref.WeakReference<>(this);
        this.events = events("shared count", (l, name, versioned, reason) -> {
            SharedCount count = self.get();
            if (count != null) {
                l.onChange(count, unpack(versioned));
            }
        });
    }

    /** The native side's packing of a value and its version: the version high, the value low. */
    static VersionedValue<Integer> unpack(long versioned) {
        return new VersionedValue<>((int) (versioned >>> 32), (int) versioned);
    }

    private static long pack(VersionedValue<Integer> versioned) {
        int value = Objects.requireNonNull(versioned.value(), "the versioned value's value");
        return ((long) versioned.version() << 32) | Integer.toUnsignedLong(value);
    }

    private <T> T call(int op, int value) {
        return join((h, f) -> Native.sharedCountCall(h, op, value, f));
    }

    /** Every value the count takes from now on, on the count's listener thread. */
    public void addListener(SharedCountListener listener) {
        listen(events, listener, Native::sharedCountSubscribe);
    }

    public void removeListener(SharedCountListener listener) {
        events.remove(listener);
    }

    /**
     * Creates the node with the seed if it is missing, reads it and follows it from then on.
     * Starting twice does nothing more.
     */
    public void start() {
        call(0, 0);
    }

    /** The cached value. INVALID_ARGUMENT before {@link #start()}; CLOSED once closed. */
    public int getCount() {
        return getVersionedValue().value();
    }

    /** The cached value with its version, for {@link #trySetCount}. INVALID_ARGUMENT before {@link #start()}. */
    public VersionedValue<Integer> getVersionedValue() {
        return unpack(with(Native::sharedCountVersioned));
    }

    /** Writes {@code newCount} whatever the count is (creating the node if it was deleted). */
    public void setCount(int newCount) {
        call(1, newCount);
    }

    /**
     * Writes {@code newCount} only if the count is still at {@code previous}'s version:
     * {@code false} otherwise, and the cache then holds the newer value.
     */
    public boolean trySetCount(VersionedValue<Integer> previous, int newCount) {
        long expected = pack(Objects.requireNonNull(previous, "previous"));
        return join((h, f) -> Native.sharedCountTrySet(h, expected, newCount, f));
    }

    /**
     * Adds {@code delta} (wrapping as {@code int} does) with versioned writes repeated until one
     * applies: exact however many processes add at once. Answers the value written and its version.
     */
    public VersionedValue<Integer> add(int delta) {
        return unpack(this.<Long>call(2, delta));
    }

    public String getPath() {
        return path;
    }

    /**
     * Stops following the node; the values already taken still reach the listeners before this
     * returns (unless called from a listener). Every later call throws CLOSED; a write in flight
     * on another thread still ends as it would have. Closing twice is harmless.
     */
    @Override
    public void close() {
        closeAfter(() -> use(Native::sharedCountClose), events);
    }

    @Override
    public String toString() {
        return describe(path);
    }
}
