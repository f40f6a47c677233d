package io.zkrecipes;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One ZooKeeper session shared by any number of recipes; after the session expires it opens a
 * new one by itself. {@link #close()} ends the session: held locks are released and election
 * offers withdrawn.
 */
public final class Client extends NativeObject implements Native.EventSink {
    private final CopyOnWriteArrayList<ConnectionStateListener> listeners = new CopyOnWriteArrayList<>();
    /**
     * The one thread that runs this client's listeners (connection states, lock and election
     * events), in order. Never a native runtime thread, so a listener may call any blocking method
     * of the library; a daemon, so it never keeps the JVM alive.
     */
    private final java.util.concurrent.ExecutorService listenerThread =
        Native.listenerThread();
    private long subscription;

    private Client(long handle) {
        super(handle, Native::clientFree);
    }

    /** Connects to {@code connectString} ("h1:2181,h2:2181/chroot"); CONNECTION_LOSS if nobody answers in time. */
    public static Client connect(String connectString, ClientOptions options) {
        CompletableFuture<Long> handle = Native.future();
        long task = start(connectString, options, handle);
        return new Client(Native.join(new Native.Op<>(handle, task)));
    }

    public static Client connect(String connectString) {
        return connect(connectString, new ClientOptions());
    }

    public static CompletableFuture<Client> connectAsync(String connectString, ClientOptions options) {
        CompletableFuture<Long> handle = Native.future();
        start(connectString, options, handle);
        return handle.thenApply(Client::new);
    }

    private static long start(String connectString, ClientOptions options, CompletableFuture<Long> handle) {
        Objects.requireNonNull(connectString, "connectString");
        Objects.requireNonNull(options, "options");
        return Native.clientConnect(connectString, options.sessionTimeout().toMillis(),
            options.connectTimeout().toMillis(), options.authScheme(), options.authCredentials(),
            options.identity(), Native.raw(handle));
    }

    public ConnectionState getState() {
        if (isClosed()) {
            return ConnectionState.CLOSED;
        }
        return ConnectionState.valueOf(with(Native::clientState));
    }

    public long getSessionId() {
        return with(Native::clientSessionId);
    }

    /** The data written into this client's lock and election nodes. */
    public String getIdentity() {
        return with(Native::clientIdentity);
    }

    public void addConnectionStateListener(ConnectionStateListener listener) {
        Objects.requireNonNull(listener, "listener");
        synchronized (listeners) {
            listeners.addIfAbsent(listener);
            if (subscription == 0) {
                subscription = with(h -> Native.clientSubscribe(h, this));
            }
        }
    }

    public void removeConnectionStateListener(ConnectionStateListener listener) {
        listeners.remove(listener);
    }

    @Override
    public java.util.concurrent.Executor listenerExecutor() {
        return listenerThread;
    }

    @Override
    public void onNativeEvent(String name, String detail) {
        ConnectionState state = ConnectionState.valueOf(name);
        for (ConnectionStateListener l : listeners) {
            try {
                l.stateChanged(this, state);
            } catch (Throwable t) {
                Native.LOG.log(System.Logger.Level.WARNING, "connection state listener failed", t);
            }
        }
    }

    /** Runs {@code call} with the native client handle (for the recipes' constructors). */
    <T> T withHandle(java.util.function.LongFunction<T> call) {
        return with(call);
    }

    /** Ends the session and frees the native client. Closing twice is harmless. */
    @Override
    public void close() {
        if (isClosed()) {
            return;
        }
        CompletableFuture<Object> done = new CompletableFuture<>();
        long task = with(h -> Native.clientClose(h, done));
        Native.join(new Native.Op<>(done, task));
        synchronized (listeners) {
            if (subscription != 0) {
                // Give the CLOSED event a moment to reach the listeners.
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                Native.subscriptionCancel(subscription);
                subscription = 0;
            }
        }
        listenerThread.shutdown();
        super.close();
    }

    @Override
    public String toString() {
        return "Client[" + getState() + "]";
    }
}
