package io.zkrecipes;

import java.util.Objects;

/**
 * An exclusive, fair, reentrant lock on a ZooKeeper directory, interoperable with Apache's
 * {@code WriteLock}, Curator's {@code InterProcessMutex} and kazoo's {@code Lock} on the same path.
 *
 * <pre>{@code
 * try (WriteLock lock = new WriteLock(client, "/locks/billing")) {
 *     lock.lock();
 *     try { storage.write(data, lock.getFencingToken()); } finally { lock.unlock(); }
 * }
 * }</pre>
 */
public class WriteLock extends ZkLock {
    public WriteLock(Client client, String dir) {
        super(Objects.requireNonNull(client, "client"), client.withHandle(h -> Native.lockNew(h, Objects.requireNonNull(dir, "dir"))), dir);
    }

    /**
     * With a listener, as Apache's {@code WriteLock(zk, dir, acl)} is ported: a {@code null}
     * listener means none (Apache's third argument, an ACL list, is often {@code null}).
     */
    public WriteLock(Client client, String dir, LockListener listener) {
        this(client, dir);
        if (listener != null) {
            addListener(listener);
        }
    }

    /** Apache's name for {@link #isHeldByCurrentThread()}. */
    public boolean isOwner() {
        return isHeldByCurrentThread();
    }
}
