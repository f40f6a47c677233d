package io.zkrecipes;

/**
 * A node's {@code Stat} as the server sent it (ZooKeeper's {@code org.apache.zookeeper.data.Stat},
 * whose getters it has too): what {@link ChildData#getStat()} answers.
 */
public record NodeStat(long czxid, long mzxid, long pzxid, long ctime, long mtime, int version, int cversion,
                       int aversion, long ephemeralOwner, int dataLength, int numChildren) {
    public long getCzxid() { return czxid; }
    public long getMzxid() { return mzxid; }
    public long getPzxid() { return pzxid; }
    public long getCtime() { return ctime; }
    public long getMtime() { return mtime; }
    public int getVersion() { return version; }
    public int getCversion() { return cversion; }
    public int getAversion() { return aversion; }
    /** The session that owns an ephemeral node; 0 for a persistent one. */
    public long getEphemeralOwner() { return ephemeralOwner; }
    public int getDataLength() { return dataLength; }
    public int getNumChildren() { return numChildren; }
}
