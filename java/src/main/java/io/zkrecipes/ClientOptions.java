package io.zkrecipes;

import java.time.Duration;
import java.util.Objects;

/** How to connect; {@code new ClientOptions()} gives 10 s session and connect timeouts. */
public final class ClientOptions {
    // The core's defaults, as every language has them.
    private Duration sessionTimeout = Duration.ofMillis(Native.defaultTimeoutMillis(false));
    private Duration connectTimeout = Duration.ofMillis(Native.defaultTimeoutMillis(true));
    private String authScheme;
    private String authCredentials;
    private String identity;
    private TlsOptions tls;
    private Sasl sasl;
    private AclPolicy acl;
    private boolean metricPaths = true;

    public ClientOptions sessionTimeout(Duration timeout) {
        this.sessionTimeout = Objects.requireNonNull(timeout, "sessionTimeout");
        return this;
    }

    /** The longest {@code connect} may take. */
    public ClientOptions connectTimeout(Duration timeout) {
        this.connectTimeout = Objects.requireNonNull(timeout, "connectTimeout");
        return this;
    }

    /** e.g. {@code auth("digest", "user:secret")}: recipe nodes then grant only this identity. */
    public ClientOptions auth(String scheme, String credentials) {
        this.authScheme = Objects.requireNonNull(scheme, "scheme");
        this.authCredentials = Objects.requireNonNull(credentials, "credentials");
        return this;
    }

    /** Written into lock and election nodes; default: the host name. */
    public ClientOptions identity(String identity) {
        this.identity = Objects.requireNonNull(identity, "identity");
        return this;
    }

    /** TLS to every server (also needed for {@code tcp+tls://} servers). */
    public ClientOptions tls(TlsOptions tls) {
        this.tls = Objects.requireNonNull(tls, "tls");
        return this;
    }

    /** SASL authentication (DIGEST-MD5 or Kerberos). */
    public ClientOptions sasl(Sasl sasl) {
        this.sasl = Objects.requireNonNull(sasl, "sasl");
        return this;
    }

    /** The ACL of every node the recipes create. */
    public ClientOptions acl(AclPolicy acl) {
        this.acl = Objects.requireNonNull(acl, "acl");
        return this;
    }

    /**
     * Whether the metrics carry each recipe's path as the {@code path} attribute (on by
     * default). Off, the numbers of every lock add up into one series per kind: for a lock per
     * entity, where paths are unbounded. On, the paths after the first 1,000 a client saw are
     * counted together as {@code "_other"}.
     */
    public ClientOptions metricPaths(boolean metricPaths) {
        this.metricPaths = metricPaths;
        return this;
    }

    Duration sessionTimeout() { return sessionTimeout; }
    Duration connectTimeout() { return connectTimeout; }
    String authScheme() { return authScheme; }
    String authCredentials() { return authCredentials; }
    String identity() { return identity; }
    TlsOptions tls() { return tls; }
    Sasl sasl() { return sasl; }
    AclPolicy acl() { return acl; }
    boolean metricPaths() { return metricPaths; }
}
