package io.zkrecipes;

import java.util.ArrayList;
import java.util.List;

/**
 * A fair ZooKeeper lock, reentrant per thread like {@link java.util.concurrent.locks.ReentrantLock}:
 * a {@link WriteLock} or one side of a {@link ReadWriteLock}.
 *
 * <p>Every hold has a fencing token (the czxid of the lock node, increasing across the
 * ensemble) to hand to the resource the lock protects. A holder whose node vanishes (session
 * expired, deleted by an operator) is told through {@link LockListener#lockLost}; one whose
 * connection drops is told {@link LockListener#lockSuspended} at once. Listeners run on the
 * lock's own listener thread and may call any method of the library, this lock's included.
 * Acquire, release, cancellation and {@link #close()} are {@link HeldLock}'s.
 */
public class ZkLock extends HeldLock<Long> {
    private static final WaitSpans.Call ACQUIRE = WaitSpans.call("lock.acquire");
    private static final Calls CALLS = new Calls(Native::lockAcquire, Native::lockRelease, Native::lockAbandon,
        Native::lockHoldCount, Native::lockIsHeld, Native::lockReleaseAll);

    private final String dir;
    /** Its acquire: a lock's, or a read/write lock's side's. */
    private final WaitSpans.Call acquire;
    private final EventSink<LockListener> events =
        events("lock", (l, name, token, reason) -> l.onEvent(LockEvent.of(name, token, reason)));

    ZkLock(Client client, long handle, String dir) {
        this(client, handle, dir, ACQUIRE);
    }

    ZkLock(Client client, long handle, String dir, WaitSpans.Call acquire) {
        super(client, handle, Native::lockFree, CALLS);
        this.dir = dir;
        this.acquire = acquire;
    }

    @Override
    String what() {
        return dir;
    }

    @Override
    String waitPath() {
        return dir;
    }

    @Override
    WaitSpans.Call acquireCall() {
        return acquire;
    }

    @Override
    EventSink<?> eventsToStop() {
        return events;
    }

    /** The fencing token of the current thread's hold, or -1 if this thread does not hold the lock. */
    public long getFencingToken() {
        long owner = owner();
        return with(h -> Native.lockFencingToken(h, owner));
    }

    public String getDir() {
        return dir;
    }

    /** Every contender in lock order, the holder first. */
    public List<Participant> getParticipants() {
        String text = join(Native::lockParticipants);
        List<Participant> participants = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isEmpty()) {
                continue;
            }
            String[] parts = line.split("\t", -1);
            participants.add(new Participant(parts[0], parts[1], parts[2].equals("R")));
        }
        return participants;
    }

    public void addListener(LockListener listener) {
        listen(events, listener, Native::lockSubscribe);
    }

    public void removeListener(LockListener listener) {
        events.remove(listener);
    }
}
