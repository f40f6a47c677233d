package io.zkrecipes;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A local copy of one service's instances (Curator's {@code ServiceCache}), kept in sync by a
 * children cache of the service's node: after a reconnect or a new session exactly the difference
 * is told. An instance whose JSON cannot be read is left out (and logged), never fatal.
 */
public final class ServiceCache extends NativeObject {
    private final String name;
    private final EventSink<ServiceCacheListener> events =
        dataEvents("service cache", (l, type, data) -> l.onEvent(ServiceCacheEvent.of(type, data)));

    ServiceCache(ServiceDiscovery registry, String name) {
        super(registry.withRegistry(h -> Native.serviceCacheNew(h, Objects.requireNonNull(name, "name"))),
            Native::serviceCacheFree);
        this.name = name;
    }

    private Native.Op<Void> call(int op, boolean forever, long nanos) {
        return begin((h, f) -> Native.serviceCacheCall(h, op, forever, nanos, f));
    }

    /**
     * Starts following and returns once the first load is in the cache. An interrupt throws
     * {@link InterruptedException} and leaves the cache loading. CLOSED once closed.
     */
    public void start() throws InterruptedException {
        Native.joinInterruptibly(call(0, false, 0));
    }

    /** As {@link #start()}; cancelling the future ends the wait only. */
    public CompletableFuture<Void> startAsync() {
        return async(() -> call(0, false, 0));
    }

    /** Waits for the first load; TIMEOUT if {@code timeout} passes first (zero or less: a check). */
    public void awaitInitialized(long timeout, TimeUnit unit) throws InterruptedException {
        Native.joinInterruptibly(call(1, false, Objects.requireNonNull(unit, "unit").toNanos(timeout)));
    }

    public String getName() {
        return name;
    }

    /** Every instance in the cache, by id (empty once closed). */
    public List<ServiceInstance> getInstances() {
        if (isClosed()) {
            return List.of();
        }
        return ServiceInstance.list(with(Native::serviceCacheInstances));
    }

    /** Every event from now on, in order, none dropped; added before {@link #start()}, it sees every instance arrive. */
    public void addListener(ServiceCacheListener listener) {
        listen(events, listener, Native::serviceCacheSubscribe);
    }

    public void removeListener(ServiceCacheListener listener) {
        events.remove(listener);
    }

    /** Stops following; the events already seen still reach the listeners before this returns. Closing twice is harmless. */
    @Override
    public void close() {
        closeAfter(() -> use(Native::serviceCacheClose), events);
    }

    @Override
    public String toString() {
        return describe(name);
    }
}
