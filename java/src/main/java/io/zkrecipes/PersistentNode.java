package io.zkrecipes;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Curator's {@code PersistentNode}: a node that stays, created at {@link #start()} and created
 * again whenever it is deleted or its session expires, until {@link #close()}.
 *
 * <p>An ephemeral node of the name held by another session is never taken over (Curator's
 * adopts it, so two processes believe they own one node): {@code start} waits until that one is
 * gone, then creates its own. A persistent node of the name is adopted and given this node's
 * data, as Curator does. A sequential node is created under Curator's protected name
 * ({@code _c_<uuid>-<prefix><seq>}), so a create whose reply was lost is found again, never made
 * twice. Missing parents are created as containers. NO_AUTH and the like stop the node and
 * {@code start} throws them.
 *
 * <pre>{@code
 * try (PersistentNode node = client.persistentNode("/services/web/host-a", NodeMode.EPHEMERAL, address)) {
 *     node.start();
 *     ...
 * }
 * }</pre>
 */
public final class PersistentNode extends NativeObject {
    private final String path;
    private final NodeMode mode;

    /**
     * The node at {@code path} (for a sequential mode, the prefix of its name) holding
     * {@code data}. INVALID_PATH (the root too) and data over the server's limit
     * (INVALID_ARGUMENT) at once; nothing is sent before {@link #start()}.
     */
    public PersistentNode(Client client, String path, NodeMode mode, byte[] data) {
        super(Objects.requireNonNull(client, "client").withHandle(
            h -> Native.persistentNodeNew(h, Objects.requireNonNull(path, "path"),
                Objects.requireNonNull(mode, "mode").name(), Objects.requireNonNull(data, "data"))),
            Native::persistentNodeFree);
        this.path = path;
        this.mode = mode;
    }

    private <T> Native.Op<T> call(int op) {
        return begin((h, f) -> Native.persistentNodeCall(h, op, f));
    }

    /**
     * Starts keeping the node and returns its actual path once it exists (a sequential node's
     * name). Starting again only waits for it. An interrupt throws {@link InterruptedException}
     * and leaves the node being kept (created once it can be); {@link #close()} stops it.
     * CLOSED once closed (also while waiting: a close from another thread ends the wait).
     */
    public String start() throws InterruptedException {
        return Native.joinInterruptibly(this.<String>call(0));
    }

    /** As {@link #start()}; cancelling the future (or its {@code orTimeout}) ends the wait only. */
    public CompletableFuture<String> startAsync() {
        return this.<String>call(0).future();
    }

    public String getPath() {
        return path;
    }

    public NodeMode getMode() {
        return mode;
    }

    /** The node's full path while it exists as far as this object knows; empty before the first create and after close. */
    public Optional<String> getActualPath() {
        if (isClosed()) {
            return Optional.empty();
        }
        return Optional.ofNullable(with(Native::persistentNodeActualPath));
    }

    /** The data the node is (re-)created with. */
    public byte[] getData() {
        return with(Native::persistentNodeData);
    }

    /**
     * Writes {@code data} now if the node exists, and keeps it for every re-create. Not
     * interrupted (the write's outcome would be unknown): an interrupt is kept for the caller.
     */
    public void setData(byte[] data) {
        Objects.requireNonNull(data, "data");
        join((h, f) -> Native.persistentNodeSetData(h, data, f));
    }

    /**
     * Stops re-creating the node and deletes it, confirmed (waiting through a reconnect), then
     * frees this object even if the delete failed (an ephemeral node then goes with its session).
     * Closing twice is harmless.
     */
    @Override
    public void close() {
        closeAfter(() -> Native.join(this.<Void>call(1)), null);
    }

    @Override
    public String toString() {
        return describe(path + ", " + mode);
    }
}
