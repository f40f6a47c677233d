package io.zkrecipes;

import java.nio.ByteBuffer;

/**
 * What happened to one of a {@link ServiceDiscovery}'s registrations without a call:
 * {@code REREGISTERED} (its node was made again after its session expired or somebody deleted
 * it) or {@code REGISTRATION_STOPPED} (the server refused its node, {@code reason} says why; the
 * instance is no longer kept).
 */
public record DiscoveryEvent(Type type, String name, String id, ZkException reason) {
    /** The event names shared by every zkrecipes binding. */
    public enum Type {
        REREGISTERED,
        REGISTRATION_STOPPED
    }

    /** As the native library sends it: the service, the id, then a stop's code and message. */
    static DiscoveryEvent of(String type, byte[] packed) {
        ByteBuffer fields = ByteBuffer.wrap(packed);
        String name = ServiceInstance.field(fields);
        String id = ServiceInstance.field(fields);
        ZkException reason = null;
        if (fields.hasRemaining()) {
            long code = Long.parseLong(ServiceInstance.field(fields));
            reason = Native.error(code, ServiceInstance.field(fields));
        }
        return new DiscoveryEvent(Type.valueOf(type), name, id, reason);
    }
}
