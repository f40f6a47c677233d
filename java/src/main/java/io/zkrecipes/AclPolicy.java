package io.zkrecipes;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The ACL of every node the recipes create: {@link #OPEN}, {@link #CREATOR} (the session's
 * authenticated identities), {@link #CREATOR_WORLD_READ}, or {@link #of(List)}. Default: open
 * without credentials, creator with any.
 */
public final class AclPolicy {
    public static final AclPolicy OPEN = new AclPolicy("open", null);
    public static final AclPolicy CREATOR = new AclPolicy("creator", null);
    public static final AclPolicy CREATOR_WORLD_READ = new AclPolicy("creator-world-read", null);

    private final String name;
    private final List<Acl> entries;

    private AclPolicy(String name, List<Acl> entries) {
        this.name = name;
        this.entries = entries;
    }

    /** Exactly these entries. */
    public static AclPolicy of(List<Acl> entries) {
        Objects.requireNonNull(entries, "AclPolicy.of needs a list of Acl entries");
        for (int i = 0; i < entries.size(); i++) {
            if (entries.get(i) == null) {
                throw new NullPointerException("AclPolicy.of: entry " + i + " is null (an Acl of perms, scheme, id)");
            }
        }
        return new AclPolicy(null, List.copyOf(entries));
    }

    String name() { return name; }

    /** perms, scheme, id, ...: what the native layer takes. */
    String[] entries() {
        if (entries == null) {
            return null;
        }
        List<String> flat = new ArrayList<>();
        for (Acl acl : entries) {
            flat.add(acl.perms());
            flat.add(acl.scheme());
            flat.add(acl.id());
        }
        return flat.toArray(new String[0]);
    }

    @Override
    public String toString() {
        return name != null ? name : entries.toString();
    }
}
