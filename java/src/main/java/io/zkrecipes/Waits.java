package io.zkrecipes;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The waits in flight on one object. Its {@code close()} ends them with CLOSED, which stops
 * their native operations (withdrawing what they created): a thread never waits forever on an
 * object another thread closed, and a closed member leaves no node behind.
 */
final class Waits {
    private final Set<CompletableFuture<?>> running = ConcurrentHashMap.newKeySet();
    /** Set before the running waits are ended: a wait added meanwhile ends itself. */
    private volatile String closed;

    <T> Native.Op<T> track(Native.Op<T> op) {
        CompletableFuture<T> future = op.future();
        running.add(future);
        future.whenComplete((value, error) -> running.remove(future));
        String what = closed;
        if (what != null) {
            end(future, what);
        }
        return op;
    }

    /** Fails every wait with CLOSED; returns once their native operations have stopped. */
    void endAll(String what) {
        closed = what;
        for (CompletableFuture<?> future : running) {
            end(future, what);
        }
    }

    private static void end(CompletableFuture<?> future, String what) {
        future.completeExceptionally(new ZkException(ZkException.Code.CLOSED, what + " was closed while waiting"));
    }
}
