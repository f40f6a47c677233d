package io.zkrecipes;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * Curator's {@code GroupMember}, on its layout (member {@code <group>/<id>}, an ephemeral node
 * whose data is the member's payload), so zkrecipes and Curator processes are members of one
 * group. The node is kept by a {@link PersistentNode}: a member whose session expired joins
 * again by itself. The membership is read from a children cache of the group: a member that
 * dies leaves everybody's view once its session expires.
 *
 * <p>The id is the node's name: one that is empty, {@code .}, {@code ..} or holds {@code /} is
 * INVALID_ARGUMENT at once. Two live members with one id are refused by the node rule: the
 * second's {@link #start()} waits until the first is gone instead of taking its node over.
 *
 * <pre>{@code
 * try (GroupMember member = client.groupMember("/groups/workers", "host-a", payload)) {
 *     member.start();
 *     Map<String, byte[]> everyone = member.getCurrentMembers();
 * }
 * }</pre>
 */
public final class GroupMember extends NativeObject {
    private final String group;
    private final String id;
    private final EventSink<CacheListener> events =
        dataEvents("group member", (l, name, nodes) -> l.onEvent(CacheEvent.of(name, nodes)));

    /** Member {@code id} of the group at {@code groupPath}, with {@code payload} as its data. */
    public GroupMember(Client client, String groupPath, String id, byte[] payload) {
        super(Objects.requireNonNull(client, "client").withHandle(
            h -> Native.groupMemberNew(h, Objects.requireNonNull(groupPath, "groupPath"),
                Objects.requireNonNull(id, "id"), Objects.requireNonNull(payload, "payload"))),
            Native::groupMemberFree);
        this.group = groupPath;
        this.id = id;
    }

    private Native.Op<Void> call(int op) {
        return begin((h, f) -> Native.groupMemberCall(h, op, f));
    }

    /**
     * Joins and loads the membership; returns once this member is in its own view. A listener
     * added before hears its own join; one added after does not. An interrupt throws
     * {@link InterruptedException}, the member possibly joined meanwhile: start again or close.
     * CLOSED once closed (also while waiting).
     */
    public void start() throws InterruptedException {
        Native.joinInterruptibly(call(0));
    }

    /** As {@link #start()}. */
    public CompletableFuture<Void> startAsync() {
        return call(0).future();
    }

    /** Every member's id with its payload, by id; this member included once started. */
    public Map<String, byte[]> getCurrentMembers() {
        ByteBuffer buffer = ByteBuffer.wrap(with(Native::groupMemberMembers));
        Map<String, byte[]> members = new LinkedHashMap<>();
        while (buffer.hasRemaining()) {
            String member = new String(ChildData.bytes(buffer), StandardCharsets.UTF_8);
            members.put(member, ChildData.bytes(buffer));
        }
        return Collections.unmodifiableMap(members);
    }

    /** A new payload, written now and kept for every re-join. */
    public void setThisData(byte[] data) {
        Objects.requireNonNull(data, "data");
        join((h, f) -> Native.groupMemberSetPayload(h, data, f));
    }

    /**
     * Membership changes from now on: {@code CREATED} (joined), {@code CHANGED} (a new payload),
     * {@code DELETED} (left), and the connection events; {@link #idFromPath} names the member.
     */
    public void addListener(CacheListener listener) {
        listen(events, listener, Native::groupMemberSubscribe);
    }

    public void removeListener(CacheListener listener) {
        events.remove(listener);
    }

    public String getId() {
        return id;
    }

    public String getGroupPath() {
        return group;
    }

    /** A member's id from its node's path (Curator's {@code idFromPath}). */
    public String idFromPath(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }

    /**
     * Leaves: the member's node is deleted (confirmed) and the membership no longer followed;
     * the events already seen still reach the listeners before this returns (unless called from
     * a listener). Closing twice is harmless.
     */
    @Override
    public void close() {
        closeAfter(() -> Native.join(call(1)), events);
    }

    @Override
    public String toString() {
        return describe(group + ", " + id);
    }
}
