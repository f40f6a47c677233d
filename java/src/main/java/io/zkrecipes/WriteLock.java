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

    /**
     * Apache's {@code WriteLock(zk, dir, acl, callback)}, ported: zkrecipes sets the ACL of its
     * nodes itself (open, or granting only the identity of {@link ClientOptions#auth}), so the
     * list is accepted for source compatibility only and must be {@code null}, empty or Apache's
     * {@code OPEN_ACL_UNSAFE}.
     */
    public WriteLock(Client client, String dir, java.util.List<?> acl, LockListener listener) {
        this(client, dir, listener);
        ApacheAcl.check(acl, dir, this);
    }

    /** Apache's {@code getId()}: the path of the calling thread's lock node, {@code null} if it holds none. */
    public String getId() {
        long owner = owner();
        return with(h -> Native.lockNodePath(h, owner));
    }

    /** Apache's name for {@link #isHeldByCurrentThread()}. */
    public boolean isOwner() {
        return isHeldByCurrentThread();
    }
}
