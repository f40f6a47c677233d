package io.zkrecipes;

import java.lang.System.Logger.Level;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;

/** The native methods, and the two entry points the native library calls back. */
final class Native {
    static final System.Logger LOG = System.getLogger("io.zkrecipes");

    static {
        NativeLibrary.checkVersion(NativeLibrary.load());
        init();
    }

    private Native() {}

    /** Receives recipe events from the native library. */

    /**
     * Where futures are completed and their dependent stages run: never on the native runtime's
     * threads, so a stage may call any blocking method of the library. A pool that grows, since
     * a stage that blocks waits for another completion.
     */
    static final ExecutorService CALLBACKS = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS,
        new SynchronousQueue<>(), daemonThreads("zkrecipes-callback-"));

    static java.util.concurrent.ThreadFactory daemonThreads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /**
     * One listener thread, in event order, made when an event comes and gone after 30 s idle: a
     * daemon, so it never keeps the JVM alive, and never a native runtime thread, so a listener
     * may call any blocking method of the library.
     */
    static ExecutorService listenerThread() {
        ThreadPoolExecutor one = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS,
            new java.util.concurrent.LinkedBlockingQueue<>(), daemonThreads("zkrecipes-listener-"));
        one.allowCoreThreadTimeOut(true);
        return one;
    }

    /** What a take or poll completes with: the payload, and the name that gives it back. */
    record Item(String name, byte[] data) {}

    /** A batch of queue items, in queue order. */
    record Items(java.util.List<Item> items) {
        static Items unpacked(byte[] packed) {
            java.nio.ByteBuffer buffer = java.nio.ByteBuffer.wrap(packed);
            java.util.List<Item> items = new java.util.ArrayList<>();
            while (buffer.hasRemaining()) {
                String name = new String(ChildData.bytes(buffer), java.nio.charset.StandardCharsets.UTF_8);
                items.add(new Item(name, ChildData.bytes(buffer)));
            }
            return new Items(items);
        }

        java.util.List<byte[]> data() {
            return items.stream().map(Item::data).toList();
        }
    }

    private static native void init();
    /** The native library's version: must be the JAR's. */
    static native String version();
    static native void cancel(long task);

    /** The core's default session ({@code connect} false) or connect timeout, in milliseconds. */
    static native long defaultTimeoutMillis(boolean connect);

    static native long clientConnect(String connect, double sessionSeconds, double connectSeconds, String authScheme,
                                     String authCredentials, String identity, String[] tls, String[] sasl,
                                     byte[] saslPassword, String aclPolicy, String[] aclEntries,
                                     boolean metricPaths, CompletableFuture<Object> f);
    static native boolean clientIsTls(long client);
    static native String clientAuthenticatedAs(long client);
    /** Why no new session comes after LOST (built by {@link #error}), or null. */
    static native ZkException clientSessionError(long client);
    static native long clientWhoami(long client, CompletableFuture<Object> f);
    static native String clientState(long client);
    static native long clientSessionId(long client);
    static native String clientIdentity(long client);
    static native long clientClose(long client, CompletableFuture<Object> f);
    static native void clientFree(long client);
    static native long clientSubscribe(long client, Object sink);
    static native void subscriptionCancel(long subscription, boolean drain);

    // Logs (Logs.java): the core's level of a logger by the level's name, forwarding, flushing.
    static native void logLevel(String logger, String level);
    static native boolean logForward();
    static native boolean logFlush(double seconds);

    // Metrics (MetricsSnapshot.java): the core's snapshot behind a handle; points travel packed.
    static native long clientMetrics(long client);
    static native void metricsFree(long snapshot);
    static native byte[] metricsPoints(long snapshot);
    static native String metricsPrometheus(long snapshot);
    /** {@code filter}: attribute names and values, one after the other. */
    static native long metricsValue(long snapshot, boolean gauge, String name, String[] filter);
    /** The merged histogram packed as one of {@link #metricsPoints}' is, or null. */
    static native byte[] metricsHistogram(long snapshot, String name, String[] filter);
    /** NaN when the histogram counted nothing. */
    static native double histogramQuantile(long count, double min, double max, double[] bounds, long[] counts, double q);

    // Recordings (MetricsFeed.java, Metric.java): the catalog, each recording as it happens.
    /** The catalog packed as {@link Metric} reads it. */
    static native byte[] metricCatalog();
    static native double[] metricBuckets();
    /** Starts handing the client's recordings to {@code target} ({@link #recorded}); the feed's handle. */
    static native long metricsFeedStart(long client, MetricsFeed.Target target);
    /** What the client had recorded when the feed started, as a {@link MetricsSnapshot}'s handle. */
    static native long metricsFeedInitial(long feed);
    static native void metricsFeedFree(long feed);
    static native boolean recordingsFlush(double seconds);
    static native long recordingsDropped();

    static native long lockNew(long client, String dir);
    static native long rwLockNew(long client, String dir);
    static native long rwLockSide(long rwLock, boolean write);
    static native void rwLockFree(long rwLock);
    static native void lockFree(long lock);
    // The waiting calls take the caller's raw nanoseconds; the core applies java.util.concurrent's
    // rules (Wait::java: forever for the untimed methods, <= 0 a try).
    static native long lockAcquire(long lock, long owner, boolean forever, long timeoutNanos, CompletableFuture<Object> f);
    static native long lockRelease(long lock, long owner, CompletableFuture<Object> f);
    static native boolean lockIsHeld(long lock);
    static native int lockHoldCount(long lock, long owner);
    static native long lockFencingToken(long lock, long owner);
    static native String lockNodePath(long lock, long owner);
    static native long lockReleaseAll(long lock, CompletableFuture<Object> f);
    static native void lockAbandon(long lock, long owner);
    static native long lockParticipants(long lock, CompletableFuture<Object> f);
    static native long multiLockNew(long client, String[] dirs);

    static native String multiLockObservedPath(long multiLock);
    static native void multiLockFree(long lock);
    static native byte[] multiLockFencingTokens(long lock, long owner);
    // In the order MultiLock hands them to HeldLock.Calls.
    static native long multiLockAcquire(long lock, long owner, boolean forever, long timeoutNanos, CompletableFuture<Object> f);
    static native long multiLockRelease(long lock, long owner, CompletableFuture<Object> f);
    static native void multiLockAbandon(long lock, long owner);
    static native int multiLockHoldCount(long lock, long owner);
    static native boolean multiLockIsHeld(long lock);
    static native long multiLockReleaseAll(long lock, CompletableFuture<Object> f);
    static native long lockSubscribe(long lock, Object sink);

    static native long queueNew(long client, String dir);
    static native void queueFree(long queue);
    static native int queueMaxPayload(long queue);
    static native long queueOffer(long queue, byte[] data, CompletableFuture<Object> f);
    static native long queueHead(long queue, int op, CompletableFuture<Object> f);
    static native long queueMany(long queue, long max, boolean wait, boolean forever, long timeoutNanos, CompletableFuture<Object> f);
    static native long queueTake(long queue, boolean forever, long timeoutNanos, CompletableFuture<Object> f);
    static native long queueGiveBack(long queue, String name, byte[] data, CompletableFuture<Object> f);

    static native long workQueueNew(long client, String path, int prefetch, int maxDeliveries);
    static native void workQueueFree(long queue);
    static native int workQueueMaxPayload(long queue);
    static native String workQueueDeadLetterPath(long queue);
    static native long workQueueOffer(long queue, byte[] data, int priority, CompletableFuture<Object> f);
    static native long workQueueOfferAll(long queue, byte[] packed, int priority, CompletableFuture<Object> f);
    static native long workQueueConsume(long queue, boolean forever, long timeoutNanos, CompletableFuture<Object> f);
    static native long workQueueCall(long queue, int op, CompletableFuture<Object> f);
    static native void deliveryFree(long delivery);
    static native byte[] deliveryData(long delivery);
    static native String deliveryName(long delivery);
    static native int deliveryNumber(long delivery, int what);
    static native long deliverySettle(long delivery, boolean ack, CompletableFuture<Object> f);

    static native long semaphoreNew(long client, String path, int maxLeases);
    static native void semaphoreFree(long semaphore);
    static native long semaphoreAcquire(long semaphore, int permits, boolean forever, long timeoutNanos, CompletableFuture<Object> f);
    static native long semaphoreCall(long semaphore, int op, CompletableFuture<Object> f);
    static native int semaphoreNumber(long semaphore, int what);
    static native long semaphoreSubscribe(long semaphore, Object sink);
    static native void leaseFree(long lease);
    static native long leaseFencingToken(long lease);
    static native String leaseNodePath(long lease);
    static native boolean leaseIsHeld(long lease);
    static native long leaseRelease(long lease, CompletableFuture<Object> f);

    static native long electionNew(long client, String root, String hostName);
    static native void electionFree(long election);
    static native long electionCall(long election, int op, CompletableFuture<Object> f);
    static native boolean electionIsLeader(long election);
    static native long electionAwaitLeadership(long election, boolean forever, long timeoutNanos, CompletableFuture<Object> f);
    static native long electionSubscribe(long election, Object sink);

    /** {@code id} null: the client's identity. */
    static native long latchNew(long client, String path, String id);
    static native void latchFree(long latch);
    static native long latchCall(long latch, int op, CompletableFuture<Object> f);
    static native long latchAwait(long latch, boolean forever, long timeoutNanos, CompletableFuture<Object> f);
    static native boolean latchIs(long latch, int what);
    static native long latchFencingToken(long latch);
    static native String latchText(long latch, int what);
    static native long latchSubscribe(long latch, Object sink);

    static native long barrierNew(long client, String path);
    static native void barrierFree(long barrier);
    static native long barrierCall(long barrier, int op, CompletableFuture<Object> f);
    static native long barrierWait(long barrier, boolean forever, long timeoutNanos, CompletableFuture<Object> f);
    static native long doubleBarrierNew(long client, String path, int memberCount);
    static native void doubleBarrierFree(long barrier);
    static native long doubleBarrierPass(long barrier, boolean leave, boolean forever, long timeoutNanos, CompletableFuture<Object> f);
    static native long doubleBarrierCall(long barrier, int op, CompletableFuture<Object> f);
    static native String doubleBarrierNodePath(long barrier);
    static native int doubleBarrierMemberCount(long barrier);

    static native long sharedCountNew(long client, String path, int seed);
    static native void sharedCountFree(long count);
    // A count's value and version travel as one long: SharedCount.unpack reads it.
    static native long sharedCountCall(long count, int op, int value, CompletableFuture<Object> f);
    static native long sharedCountTrySet(long count, long expected, int value, CompletableFuture<Object> f);
    static native long sharedCountVersioned(long count);
    static native void sharedCountClose(long count);
    static native long sharedCountSubscribe(long count, Object sink);

    static native long atomicLongNew(long client, String path);
    static native void atomicLongFree(long counter);
    static native long atomicLongCall(long counter, int op, long a, long b, CompletableFuture<Object> f);

    // scope: 0 node, 1 children, 2 tree maxDepth deep (below 0: all). Nodes travel packed
    // (ChildData.read reads them).
    static native long cacheNew(long client, String path, int scope, boolean limited, int maxDepth);
    static native void cacheFree(long cache);
    static native long cacheStart(long cache, CompletableFuture<Object> f);
    static native void cacheClose(long cache);
    static native boolean cacheIsInitialized(long cache);
    static native int cacheSize(long cache);
    static native byte[] cacheGet(long cache, String path);
    static native byte[] cacheSnapshot(long cache);
    static native String[] cacheChildren(long cache, String path);
    static native long cacheSubscribe(long cache, Object sink);

    /** {@code mode}: {@link NodeMode}'s ordinal. */
    static native long persistentNodeNew(long client, String path, String mode, byte[] data);
    static native void persistentNodeFree(long node);
    static native long persistentNodeCall(long node, int op, CompletableFuture<Object> f);
    static native long persistentNodeSetData(long node, byte[] data, CompletableFuture<Object> f);
    static native String persistentNodeActualPath(long node);
    static native byte[] persistentNodeData(long node);

    static native long groupMemberNew(long client, String group, String id, byte[] payload);
    static native void groupMemberFree(long member);
    static native long groupMemberCall(long member, int op, CompletableFuture<Object> f);
    static native long groupMemberSetPayload(long member, byte[] payload, CompletableFuture<Object> f);
    /** Per member, the id then the payload (GroupMember reads them). */
    static native byte[] groupMemberMembers(long member);
    static native long groupMemberSubscribe(long member, Object sink);

    /** An instance crosses as its fields ({@link ServiceInstance#fields}) and comes back packed ({@link ServiceInstance#list}). */
    static native byte[] serviceInstanceBuild(String[] fields);
    static native byte[] serviceInstanceFromJson(byte[] json);
    static native byte[] serviceInstanceToJson(String[] fields);
    static native String springPayload(String id, String name, String[] metadata);
    static native long serviceDiscoveryNew(long client, String basePath);
    static native void serviceDiscoveryFree(long registry);
    static native long serviceDiscoveryCall(long registry, int op, String[] fields, String name, String id, CompletableFuture<Object> f);
    static native byte[] serviceDiscoveryRegistered(long registry);
    static native long serviceDiscoverySubscribe(long registry, Object sink);
    static native long serviceCacheNew(long registry, String name);
    static native void serviceCacheFree(long cache);
    static native long serviceCacheCall(long cache, int op, boolean forever, long timeoutNanos, CompletableFuture<Object> f);
    static native byte[] serviceCacheInstances(long cache);
    static native void serviceCacheClose(long cache);
    static native long serviceCacheSubscribe(long cache, Object sink);
    static native long serviceProviderNew(long registry, String name, String strategy, boolean hasTimeout, double timeoutMs,
        boolean hasErrors, long errors);
    static native void serviceProviderFree(long provider);
    static native long serviceProviderStart(long provider, CompletableFuture<Object> f);
    static native byte[] serviceProviderInstances(long provider, boolean all);
    static native void serviceProviderNoteError(long provider, String[] fields);
    static native String[] serviceProviderSettings(long provider);
    static native void serviceProviderClose(long provider);

    /** Called by the native library when an operation ends (see bindings/java callbacks.rs). */
    @SuppressWarnings("unused")
    private static void complete(CompletableFuture<Object> f, int kind, long number, byte[] bytes, String text) {
        switch (kind) {
            case 0 -> f.complete(null);
            case 1 -> f.complete(number != 0);
            case 2 -> f.complete(number);
            case 3 -> f.complete(bytes);
            case 4 -> f.complete(text);
            case 5 -> f.complete(new Item(text, bytes));
            case 6 -> f.complete(Items.unpacked(bytes));
            case 7 -> f.complete(longs(bytes));
            default -> f.completeExceptionally(error(number, text));
        }
    }

    /** Longs packed big-endian, one after the other. */
    static long[] longs(byte[] bytes) {
        long[] longs = new long[bytes.length / Long.BYTES];
        java.nio.ByteBuffer.wrap(bytes).asLongBuffer().get(longs);
        return longs;
    }

    /**
     * Called by the native library for every recipe event; the listeners run on the sink's
     * listener thread. A token or code below zero means none.
     */
    @SuppressWarnings("unused")
    private static void event(Object sink, String name, long fencingToken, long code, String message) {
        ZkException reason = code < 0 ? null : error(code, message);
        dispatch(sink, name, target -> target.deliver(name, fencingToken, reason));
    }

    /**
     * Called by the native library for every value a shared count takes ({@code versioned} as
     * {@link SharedCount#unpack} reads it); its listeners run on the sink's listener thread.
     */
    @SuppressWarnings("unused")
    private static void count(Object sink, long versioned) {
        dispatch(sink, "a shared count's value", target -> target.deliver("count", versioned, null));
    }

    /**
     * Called by the native library for every event of a cache or a group ({@code nodes} as
     * {@link CacheEvent#of} reads them); its listeners run on the sink's listener thread.
     */
    @SuppressWarnings("unused")
    private static void cacheEvent(Object sink, String name, byte[] nodes) {
        dispatch(sink, name, target -> target.deliver(name, nodes));
    }

    /**
     * Called by the native library, on its log delivery thread ("zkrecipes-log"), for every
     * library event at a level its logger takes: {@link Logs#deliver} logs it.
     */
    @SuppressWarnings("unused")
    private static void log(int logger, int level, String line) {
        Logs.deliver(logger, level, line);
    }

    /**
     * Called by the native library, on its delivery thread ("zkrecipes-log"), for every recording
     * of a client a {@link MetricsFeed} follows: {@code metric} is the metric's index in
     * {@link Metric#catalog()}, {@code attributes} names and values one after the other.
     */
    @SuppressWarnings("unused")
    private static void recorded(Object target, int metric, String[] attributes, double value) {
        ((MetricsFeed.Target) target).deliver(metric, attributes, value);
    }

    /** Runs {@code delivery} on the sink's listener thread; this is a native thread, so nothing is thrown back. */
    private static void dispatch(Object sink, String what, Consumer<EventSink<?>> delivery) {
        EventSink<?> target = (EventSink<?>) sink;
        try {
            target.executor().execute(() -> delivery.accept(target));
        } catch (Throwable t) {
            LOG.log(Level.WARNING, "zkrecipes could not deliver " + what, t);
        }
    }

    /**
     * The core's error codes in the core's order, resolved by name: the native library sends a
     * code as its position in the core's list, so {@link ZkException.Code}'s own order does not
     * matter, and a code this JAR does not know becomes INTERNAL.
     */
    private static final ZkException.Code[] CODES = java.util.Arrays.stream(names(0))
        .map(Native::codeNamed).toArray(ZkException.Code[]::new);

    private static ZkException.Code codeNamed(String name) {
        try {
            return ZkException.Code.valueOf(name);
        } catch (IllegalArgumentException unknown) {
            return ZkException.Code.INTERNAL;
        }
    }

    /** Called by the native library to build what it throws: {@code code} indexes the core's list. */
    static ZkException error(long code, String message) {
        return new ZkException(code >= 0 && code < CODES.length ? CODES[(int) code] : ZkException.Code.INTERNAL, message);
    }

    /**
     * The core's names: 0 error codes, 1 lock events, 2 election events, 3 connection states, 4 latch events,
     * 5 cache events, 6 loggers, 7 waits (each wait's call, span name and success outcome, one after the other),
     * 8 discovery events, 9 service cache events, 10 service types, 11 provider strategies.
     */
    static native String[] names(int list);

    /**
     * A started native operation: its future, the id that cancels it, and whether a thread
     * blocks on it in {@link #join} (set there: the future is then nobody else's, so its result
     * is handed over on the native thread that brought it, without a hop through
     * {@link #CALLBACKS}).
     */
    record Op<T>(CompletableFuture<T> future, long task, AtomicBoolean joined) {
        Op(CompletableFuture<T> future, long task) {
            this(future, task, new AtomicBoolean());
        }
    }

    /** Waits without giving up on interrupts (re-asserted afterwards), like {@code Lock.lock()}. */
    static <T> T join(Op<T> op) {
        op.joined().set(true);
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return op.future().get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    throw rethrow(e);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Waits; an interrupt cancels the operation, which withdraws what it created on the server
     * (and gives back whatever it obtained too late), and throws InterruptedException.
     */
    static <T> T joinInterruptibly(Op<T> op) throws InterruptedException {
        op.joined().set(true);
        try {
            return op.future().get();
        } catch (InterruptedException e) {
            op.future().cancel(false);
            if (op.future().isDone() && !op.future().isCancelled() && !op.future().isCompletedExceptionally()) {
                Thread.currentThread().interrupt();
                return op.future().getNow(null);
            }
            throw e;
        } catch (ExecutionException e) {
            throw rethrow(e);
        }
    }

    static RuntimeException rethrow(ExecutionException e) {
        Throwable cause = e.getCause();
        if (cause instanceof ZkException zk) {
            // A fresh exception, so that the stack trace shows the caller's thread; the
            // one the operation failed with is its cause.
            return new ZkException(zk.getCode(), zk.getDetail(), zk);
        }
        if (cause instanceof RuntimeException re) {
            return re;
        }
        return new ZkException(ZkException.Code.INTERNAL, String.valueOf(cause));
    }

    static <T> CompletableFuture<T> future() {
        return new CompletableFuture<>();
    }

    /** The natives complete futures with Object values; each caller knows the real type. */
    @SuppressWarnings("unchecked")
    static CompletableFuture<Object> raw(CompletableFuture<?> f) {
        return (CompletableFuture<Object>) f;
    }

    /** Starts a native operation that completes a fresh future of type T. */
    static <T> Op<T> start(Function<CompletableFuture<Object>, Long> call) {
        return start(call, null, null);
    }

    /** As {@link #start(Function, Consumer, WaitSpan)}, for an operation that is no wait. */
    static <T> Op<T> start(Function<CompletableFuture<Object>, Long> call, Consumer<Object> undo) {
        return start(call, undo, null);
    }

    /**
     * Starts a native operation. The native side completes an internal future; the caller's future
     * is completed from it on {@link #CALLBACKS}, so that no user code runs on a native thread.
     * Cancelling the caller's future (cancel, orTimeout, completeExceptionally) cancels the native
     * operation, which withdraws what it created; a result that arrives after that is handed to
     * {@code undo} (release the lock, give the item back), never dropped.
     *
     * <p>{@code span}, if any, is ended with the answer before the caller's future is completed
     * with it, or with what ended the wait (a cancel, a timeout, a close) as it is given up: a
     * caller that has its answer finds the wait's span ended.
     */
    @SuppressWarnings("unchecked")
    static <T> Op<T> start(Function<CompletableFuture<Object>, Long> call, Consumer<Object> undo, WaitSpan span) {
        CompletableFuture<Object> inner = new CompletableFuture<>();
        // Completed once a result the caller gave up on has been undone (by whichever of the
        // two paths below gets there first; the other waits for it).
        CompletableFuture<Void> undone = new CompletableFuture<>();
        AtomicBoolean undoing = new AtomicBoolean();
        Consumer<Object> undoOnce = value -> {
            if (undo == null || value == null) {
                return;
            }
            if (!undoing.compareAndSet(false, true)) {
                undone.join();
                return;
            }
            try {
                undo.accept(value);
            } catch (Throwable t) {
                LOG.log(Level.WARNING, "zkrecipes could not undo an abandoned operation", t);
            } finally {
                undone.complete(null);
            }
        };
        long[] task = new long[1];
        // Whoever gives up (cancel, completeExceptionally, a timeout) stops the native operation
        // and undoes a result it brought, in its own thread, before going on: it never sees a
        // hold (or an item) it gave up, not even for a moment. Run by the giving-up call itself,
        // not as a dependent of the future: a dependent may be run by another thread that
        // touched the future at the same moment (CompletableFuture.complete runs the dependents
        // even when it lost), and cancel() then returned before the undo (RacesIT, 1 in ~300).
        Consumer<Throwable> gaveUp = reason -> {
            if (span != null) {
                span.end(null, reason);
            }
            if (!inner.isDone()) {
                cancel(task[0]);
            }
            // The cancel returned once the native side completed `inner`.
            if (inner.isDone() && !inner.isCompletedExceptionally()) {
                undoOnce.accept(inner.join());
            }
        };
        CompletableFuture<T> outer = new GivingUpFuture<>(gaveUp);
        AtomicBoolean joined = new AtomicBoolean();
        task[0] = call.apply(inner);
        inner.whenComplete((value, error) -> {
            // A span's end may export it, which is the application's code: never on a native thread.
            if (!joined.get() || span != null) {
                // The caller's future may have stages of the caller's: they never run here.
                CALLBACKS.execute(() -> handOver(outer, value, error, undoOnce, false, span));
                return;
            }
            // Only a thread blocked in join waits on this future: completing it here wakes that
            // thread at once (two thread switches fewer per call), and an undo, which may block,
            // still goes to CALLBACKS.
            handOver(outer, value, error, undoOnce, true, null);
        });
        // Other ways to fail the future (obtrudeException) still stop the operation.
        outer.whenComplete((value, error) -> {
            if (error != null) {
                gaveUp.accept(error);
            }
        });
        return new Op<>(outer, task[0], joined);
    }

    /**
     * Completes the caller's future with the native result, ending {@code span} with it first; a
     * result it gave up on is undone (its span was ended as it gave up).
     */
    @SuppressWarnings("unchecked")
    private static <T> void handOver(CompletableFuture<T> outer, Object value, Throwable error, Consumer<Object> undo,
            boolean onNativeThread, WaitSpan span) {
        if (span != null && !outer.isDone()) {
            span.end(value, error);
        }
        if (error != null) {
            outer.completeExceptionally(error);
            return;
        }
        Object delivered = value instanceof Item item ? item.data()
            : value instanceof Items items ? items.data() : value;
        if (!outer.complete((T) delivered)) {
            if (onNativeThread) {
                CALLBACKS.execute(() -> undo.accept(value));
            } else {
                undo.accept(value);
            }
        }
    }

    /**
     * A caller's future whose cancel and completeExceptionally return only after the undo; the
     * undo is told why the caller gave up (for the wait's span).
     */
    private static final class GivingUpFuture<T> extends CompletableFuture<T> {
        private final Consumer<Throwable> gaveUp;

        GivingUpFuture(Consumer<Throwable> gaveUp) {
            this.gaveUp = gaveUp;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            if (super.cancel(mayInterruptIfRunning)) {
                gaveUp.accept(new java.util.concurrent.CancellationException("the caller cancelled the wait"));
                return true;
            }
            return false;
        }

        @Override
        public boolean completeExceptionally(Throwable error) {
            if (super.completeExceptionally(error)) {
                gaveUp.accept(error);
                return true;
            }
            return false;
        }

        // Dependents (thenApply, ...) are plain futures: giving up on one of them is not giving
        // up on the operation, as with any CompletableFuture.
        @Override
        public <U> CompletableFuture<U> newIncompleteFuture() {
            return new CompletableFuture<>();
        }
    }
}
