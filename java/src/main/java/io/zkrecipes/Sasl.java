package io.zkrecipes;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Objects;

/**
 * SASL authentication: {@code Sasl.digestMd5("alice", password)} (a user of the server's JAAS
 * {@code Server} section) or {@code Sasl.gssapi()} (Kerberos: the ticket cache of
 * {@code KRB5CCNAME} or the client keytab of {@code KRB5_CLIENT_KTNAME}, or a principal and
 * keytab of the client's own, as a JAAS {@code Client} section gives them:
 * {@code Sasl.gssapi().principal("app@EXAMPLE.COM").keytab(Path.of("app.keytab"))}).
 */
public final class Sasl {
    private final String mechanism;
    private final String username;
    private final char[] password;
    private boolean destroyed;
    private final String service;
    private final String host;
    private final String principal;
    private final String keytab;

    private Sasl(String mechanism, String username, char[] password, String service, String host,
                 String principal, String keytab) {
        this.mechanism = mechanism;
        this.username = username;
        this.password = password;
        this.service = service;
        this.host = host;
        this.principal = principal;
        this.keytab = keytab;
    }

    /** DIGEST-MD5; the password is copied, and the copy is cleared by {@link #destroy()}. */
    public static Sasl digestMd5(String username, char[] password) {
        Objects.requireNonNull(username, "username");
        Objects.requireNonNull(password, "password");
        return new Sasl("DIGEST-MD5", username, password.clone(), null, null, null, null);
    }

    public static Sasl gssapi() {
        return new Sasl("GSSAPI", null, null, null, null, null, null);
    }

    // Each setting below returns a new Sasl and leaves this one as it is: two clients made from
    // one base (`base.principal(a)`, `base.principal(b)`) are two principals, not the last one
    // twice (found by an adversarial review, when they changed the base).

    /** The server principal's service (GSSAPI; default {@code zookeeper}). */
    public Sasl service(String service) {
        return new Sasl(mechanism, username, password, Objects.requireNonNull(service, "service"), host,
            principal, keytab);
    }

    /** The server principal's host (GSSAPI; default: the server connected to). */
    public Sasl host(String host) {
        return new Sasl(mechanism, username, password, service, Objects.requireNonNull(host, "host"),
            principal, keytab);
    }

    /**
     * The client principal to log in as ({@code name@REALM}; GSSAPI): its tickets in the ticket
     * cache, or from {@link #keytab(Path)}. Two clients of one process can be two principals.
     */
    public Sasl principal(String principal) {
        return new Sasl(mechanism, username, password, service, host,
            Objects.requireNonNull(principal, "principal"), keytab);
    }

    /**
     * The client keytab to log in from (GSSAPI), as the {@link #principal(String)} or the
     * keytab's first one; its tickets are kept in memory, never in the user's ticket cache.
     * A path of the default file system ({@link Path#toFile()}).
     */
    public Sasl keytab(Path keytab) {
        return new Sasl(mechanism, username, password, service, host, principal,
            Objects.requireNonNull(keytab, "keytab").toFile().getPath());
    }

    /** Clears the password copy; a client connected with it keeps what it needs. */
    public void destroy() {
        if (password != null) {
            Arrays.fill(password, '\0');
        }
        destroyed = true;
    }

    @Override
    public String toString() {
        if (!"GSSAPI".equals(mechanism)) {
            return "Sasl.digestMd5(" + username + ", <password>)";
        }
        StringBuilder text = new StringBuilder("Sasl.gssapi()");
        if (principal != null) {
            text.append(".principal(").append(principal).append(')');
        }
        if (keytab != null) {
            text.append(".keytab(").append(keytab).append(')');
        }
        return text.toString();
    }

    /** mechanism, username, service, host, principal, keytab: what the native layer takes. */
    String[] settings() {
        return new String[] {mechanism, username, service, host, principal, keytab};
    }

    /** The password as UTF-8, for one native call; the caller clears it. */
    byte[] passwordBytes() {
        if (password == null) {
            return null;
        }
        if (destroyed) {
            throw new IllegalStateException("this Sasl was destroyed: make a new one to connect");
        }
        ByteBuffer encoded = StandardCharsets.UTF_8.encode(CharBuffer.wrap(password));
        byte[] bytes = new byte[encoded.remaining()];
        encoded.get(bytes);
        if (encoded.hasArray()) {
            Arrays.fill(encoded.array(), (byte) 0);
        }
        return bytes;
    }
}
