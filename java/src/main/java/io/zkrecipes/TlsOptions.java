package io.zkrecipes;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.util.Base64;
import java.util.Collections;
import java.util.Objects;

/**
 * TLS to every server: {@code TlsOptions.pem("ca.pem").identity("client.pem", "client-key.pem")},
 * or from the key and trust stores {@code zookeeper.ssl.*} users have:
 * {@code TlsOptions.trustStore("truststore.p12", "PKCS12", pw).keyStore("keystore.jks", "JKS", pw)}.
 * PEM files are re-read when they change; stores are read once, here.
 */
public final class TlsOptions {
    private String ca;
    private String cert;
    private String key;
    private boolean verifyHostname = true;

    private TlsOptions(String ca) {
        this.ca = ca;
    }

    /** Trusts the CA bundle at {@code caPath} (PEM), or given as PEM text. */
    public static TlsOptions pem(String caPathOrPem) {
        return new TlsOptions(Objects.requireNonNull(caPathOrPem, "ca"));
    }

    public static TlsOptions pem(Path caPath) {
        return pem(Objects.requireNonNull(caPath, "ca").toString());
    }

    /** Trusts every certificate of a PKCS12 or JKS trust store. */
    public static TlsOptions trustStore(Path path, String type, char[] password) {
        KeyStore store = load(path, type, password);
        StringBuilder pem = new StringBuilder();
        try {
            for (String alias : Collections.list(store.aliases())) {
                Certificate certificate = store.getCertificate(alias);
                if (certificate != null) {
                    pem.append(pem("CERTIFICATE", certificate.getEncoded()));
                }
            }
        } catch (GeneralSecurityException e) {
            throw invalid("trust store " + path + ": " + e.getMessage());
        }
        if (pem.length() == 0) {
            // A PKCS12 store read without its password shows no (encrypted) certificate.
            throw invalid("trust store " + path + " holds no certificate"
                + (password == null ? " readable without a password: give the store's password" : ""));
        }
        // Named by its path in the core's messages (an unknown CA, ...), not as bytes of PEM.
        return new TlsOptions("# source: trust store " + path + "\n" + pem);
    }

    /** A client certificate and key (mutual TLS), PEM files or PEM text. */
    public TlsOptions identity(String certPathOrPem, String keyPathOrPem) {
        this.cert = Objects.requireNonNull(certPathOrPem, "cert");
        this.key = Objects.requireNonNull(keyPathOrPem, "key");
        return this;
    }

    public TlsOptions identity(Path certPath, Path keyPath) {
        return identity(Objects.requireNonNull(certPath, "cert").toString(),
            Objects.requireNonNull(keyPath, "key").toString());
    }

    /** The client certificate and key from a PKCS12 or JKS key store (its first key entry). */
    public TlsOptions keyStore(Path path, String type, char[] password) {
        if (password == null) {
            // A key entry is always protected: the JDK's own message is a NullPointerException.
            throw invalid("key store " + path + ": give the store's password (its key is protected)");
        }
        KeyStore store = load(path, type, password);
        try {
            for (String alias : Collections.list(store.aliases())) {
                Key entry = store.getKey(alias, password);
                if (entry instanceof PrivateKey) {
                    StringBuilder chain = new StringBuilder();
                    for (Certificate certificate : store.getCertificateChain(alias)) {
                        chain.append(pem("CERTIFICATE", certificate.getEncoded()));
                    }
                    this.cert = chain.toString();
                    this.key = pem("PRIVATE KEY", entry.getEncoded());
                    return this;
                }
            }
        } catch (GeneralSecurityException e) {
            throw invalid("key store " + path + ": " + e.getMessage());
        }
        throw invalid("key store " + path + " holds no private key");
    }

    /**
     * Accepts a server certificate for any host name the CA signed. Unsafe: a man in the middle
     * with any certificate of that CA gets in.
     */
    public TlsOptions noHostnameVerification() {
        this.verifyHostname = false;
        return this;
    }

    /** ca, cert, key, verify hostname: what the native layer takes. */
    String[] settings() {
        return new String[] {ca, cert, key, Boolean.toString(verifyHostname)};
    }

    private static KeyStore load(Path path, String type, char[] password) {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(type, "type");
        try (InputStream in = Files.newInputStream(path)) {
            KeyStore store = KeyStore.getInstance(type);
            store.load(in, password);
            return store;
        } catch (IOException | GeneralSecurityException e) {
            throw invalid("cannot read " + type + " store " + path + ": " + e.getMessage());
        }
    }

    private static String pem(String kind, byte[] der) {
        String body = Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der);
        return "-----BEGIN " + kind + "-----\n" + body + "\n-----END " + kind + "-----\n";
    }

    private static ZkException invalid(String message) {
        return new ZkException(ZkException.Code.INVALID_ARGUMENT, message);
    }
}
