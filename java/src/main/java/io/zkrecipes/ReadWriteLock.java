package io.zkrecipes;

import java.util.Objects;

/**
 * Readers share, a writer is alone, FIFO between them (Curator's {@code InterProcessReadWriteLock}
 * node names). Holds are per thread. The write holder may take the read lock (downgrade); a thread
 * that holds the read lock and asks for the write lock gets {@code ZkException(WOULD_DEADLOCK)} at
 * once instead of waiting forever; another thread's write request waits for the readers.
 */
public final class ReadWriteLock implements java.util.concurrent.locks.ReadWriteLock, AutoCloseable {
    private static final WaitSpans.Call READ_ACQUIRE = WaitSpans.call("read_lock.acquire");
    private static final WaitSpans.Call WRITE_ACQUIRE = WaitSpans.call("write_lock.acquire");
    private final ZkLock readLock;
    private final ZkLock writeLock;

    public ReadWriteLock(Client client, String dir) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(dir, "dir");
        long pair = client.withHandle(h -> Native.rwLockNew(h, dir));
        try {
            this.readLock = new ZkLock(client, Native.rwLockSide(pair, false), dir, READ_ACQUIRE);
            this.writeLock = new ZkLock(client, Native.rwLockSide(pair, true), dir, WRITE_ACQUIRE);
        } finally {
            Native.rwLockFree(pair);
        }
    }

    @Override
    public ZkLock readLock() {
        return readLock;
    }

    @Override
    public ZkLock writeLock() {
        return writeLock;
    }

    @Override
    public void close() {
        try {
            readLock.close();
        } finally {
            writeLock.close();
        }
    }
}
