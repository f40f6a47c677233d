package io.zkrecipes;

import java.util.Objects;

/** One ACL entry: {@code new Acl("rwcda", "sasl", "alice")}; perms as letters, "all" or bits (1 to 31). */
public final class Acl {
    private final String perms;
    private final String scheme;
    private final String id;

    public Acl(String perms, String scheme, String id) {
        this.perms = Objects.requireNonNull(perms, "perms");
        this.scheme = Objects.requireNonNull(scheme, "scheme");
        this.id = Objects.requireNonNull(id, "id");
    }

    public Acl(int perms, String scheme, String id) {
        this(Integer.toString(perms), scheme, id);
    }

    public String perms() { return perms; }
    public String scheme() { return scheme; }
    public String id() { return id; }

    @Override
    public String toString() {
        return scheme + ":" + id + ":" + perms;
    }
}
