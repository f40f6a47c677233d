package io.zkrecipes;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * What a {@link Cache} holds of one node (Curator's {@code ChildData}): its full path, its data
 * and its stat, as one read of the server found them together.
 */
public final class ChildData {
    private final String path;
    private final byte[] data;
    private final NodeStat stat;

    public ChildData(String path, NodeStat stat, byte[] data) {
        this.path = Objects.requireNonNull(path, "path");
        this.stat = Objects.requireNonNull(stat, "stat");
        this.data = Objects.requireNonNull(data, "data");
    }

    public String getPath() {
        return path;
    }

    /** The node's data (the array itself, as Curator's; do not change it). */
    public byte[] getData() {
        return data;
    }

    public NodeStat getStat() {
        return stat;
    }

    /** One node as the native library packs it (bindings/java/src/cache.rs, {@code pack_node}). */
    static ChildData read(ByteBuffer buffer) {
        String path = new String(bytes(buffer), StandardCharsets.UTF_8);
        byte[] data = bytes(buffer);
        NodeStat stat = new NodeStat(buffer.getLong(), buffer.getLong(), buffer.getLong(), buffer.getLong(),
            buffer.getLong(), buffer.getInt(), buffer.getInt(), buffer.getInt(), buffer.getLong(), buffer.getInt(),
            buffer.getInt());
        return new ChildData(path, stat, data);
    }

    /** Nodes one after the other. */
    static List<ChildData> list(byte[] packed) {
        ByteBuffer buffer = ByteBuffer.wrap(packed);
        List<ChildData> nodes = new ArrayList<>();
        while (buffer.hasRemaining()) {
            nodes.add(read(buffer));
        }
        return nodes;
    }

    /** A 4-byte big-endian length, then that many bytes. */
    static byte[] bytes(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.getInt()];
        buffer.get(bytes);
        return bytes;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ChildData other && path.equals(other.path) && stat.equals(other.stat)
            && Arrays.equals(data, other.data);
    }

    @Override
    public int hashCode() {
        return Objects.hash(path, stat, Arrays.hashCode(data));
    }

    @Override
    public String toString() {
        return "ChildData[" + path + ", version " + stat.version() + ", " + data.length + " bytes]";
    }
}
