package io.zkrecipes;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongConsumer;

/**
 * What a {@link Lease} and a {@link Delivery} share: a native object handed to the caller that
 * is settled once (released; acknowledged or given back). {@code close()} settles it the default
 * way unless it was, as the native side does for one that becomes unreachable.
 */
abstract class Claim extends NativeObject {
    private volatile boolean settled;

    Claim(long handle, LongConsumer free) {
        super(handle, free);
    }

    /**
     * The claims {@code made} from what {@code op} completes with (raw handles). The handles
     * belong to {@code op} until it completes (its undo frees them), then to the claims made
     * from them: whoever gives up (cancel, orTimeout, completeExceptionally, an interrupt),
     * each is settled the default way exactly once, through its one owner.
     */
    static <R> Native.Op<R> handedOver(Native.Op<Object> op, Function<Object, R> made, Consumer<R> abandon) {
        CompletableFuture<R> claims = new CompletableFuture<>();
        op.future().whenComplete((raw, error) -> {
            if (error != null) {
                claims.completeExceptionally(error instanceof CompletionException c ? c.getCause() : error);
                return;
            }
            if (raw == null) {
                claims.complete(null);
                return;
            }
            R got = made.apply(raw);
            if (!claims.complete(got)) {
                // On the callback thread: a blocking settle would wait for this very thread.
                abandon.accept(got);
            }
        });
        claims.whenComplete((got, error) -> {
            if (error != null) {
                op.future().cancel(false);
            }
        });
        return new Native.Op<>(claims, op.task());
    }

    /**
     * Starts settling. From then on {@code close()} leaves the claim alone, whether this
     * succeeds or not: a second settle would only fail.
     */
    final Native.Op<Void> settle(Task task) {
        Native.Op<Void> op = begin(task);
        settled = true;
        return op;
    }

    /**
     * Settles with {@code byDefault} unless settled, then frees the handle. Any failure is let go:
     * a claim that went with its session is settled already.
     */
    final void closeUnsettled(Runnable byDefault) {
        closeAfter(() -> {
            if (!settled) {
                byDefault.run();
            }
        }, null, ANY_FAILURE);
    }
}
