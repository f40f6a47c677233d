package io.zkrecipes;

import java.util.List;

/**
 * The ACL argument of Apache's recipe constructors, kept for source compatibility: zkrecipes sets
 * the ACL of its nodes itself (open, or granting only the identity of {@link ClientOptions#auth}),
 * so only {@code null}, an empty list or Apache's {@code OPEN_ACL_UNSAFE} is accepted.
 */
final class ApacheAcl {
    private ApacheAcl() {}

    /** For a constructor whose native object {@code made} exists already: it is closed before the throw. */
    static void check(List<?> acl, String dir, NativeObject made) {
        try {
            check(acl, dir);
        } catch (ZkException e) {
            made.close();
            throw e;
        }
    }

    static void check(List<?> acl, String dir) {
        if (acl == null || acl.isEmpty() || isOpen(acl)) {
            return;
        }
        throw new ZkException(ZkException.Code.INVALID_ARGUMENT, "zkrecipes sets the ACL of " + dir
            + " from the client's auth; pass null, an empty list or OPEN_ACL_UNSAFE, got "
            + String.valueOf(acl).replaceAll("\\s+", " ").trim());
    }

    /** {@code [31,s{'world,'anyone}]}: {@code ZooDefs.Ids.OPEN_ACL_UNSAFE}, known by its text (no ZooKeeper jar here). */
    private static boolean isOpen(List<?> acl) {
        return acl.size() == 1 && String.valueOf(acl.get(0)).replaceAll("\\s", "").matches(".*31.*world.*anyone.*");
    }
}
