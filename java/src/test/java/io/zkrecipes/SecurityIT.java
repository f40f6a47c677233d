package io.zkrecipes;

import static org.junit.jupiter.api.Assertions.*;

import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/** TLS, SASL DIGEST-MD5 and ACL policies against the harness's secured servers (tests/with-secure-zk). */
class SecurityIT {
    private static final String TLS = env("ZK_TLS_CONNECT");
    private static final String STRICT = env("ZK_TLS_STRICT_CONNECT");
    private static final Path CERTS = Path.of(env("ZK_CERTS"));

    private static String env(String name) {
        String value = System.getenv(name);
        if (value == null || value.isEmpty()) {
            throw new IllegalStateException(name + " is not set: run the tests through tests/with-secure-zk");
        }
        return value;
    }

    private static TlsOptions tls() {
        return TlsOptions.pem(CERTS.resolve("ca.pem"));
    }

    private static TlsOptions mutual() {
        return tls().identity(CERTS.resolve("client.pem"), CERTS.resolve("client-key.pem"));
    }

    private static Sasl alice() {
        return Sasl.digestMd5("alice", "alice-secret".toCharArray());
    }

    private static ClientOptions options() {
        return new ClientOptions().connectTimeout(Duration.ofSeconds(8));
    }

    private static ZkException refused(String connect, ClientOptions options) {
        long started = System.nanoTime();
        ZkException e = assertThrows(ZkException.class, () -> Client.connect(connect, options));
        assertTrue(Duration.ofNanos(System.nanoTime() - started).compareTo(Duration.ofSeconds(8)) < 0,
            "a refusal is final, not retried until the timeout: " + e);
        return e;
    }

    /** What a test puts into a key or trust store. */
    private interface Entries {
        void into(KeyStore store) throws Exception;
    }

    /** A store of {@code type} holding {@code entries}, written to {@code file}. */
    private static Path store(Path file, String type, char[] password, Entries entries) throws Exception {
        KeyStore store = KeyStore.getInstance(type);
        store.load(null, null);
        entries.into(store);
        try (OutputStream out = Files.newOutputStream(file)) {
            store.store(out, password);
        }
        return file;
    }

    private static Certificate certificate(CertificateFactory x509, String pem) throws Exception {
        try (var in = Files.newInputStream(CERTS.resolve(pem))) {
            return x509.generateCertificate(in);
        }
    }

    @Test
    void lockAndQueueOverTlsWithSasl() throws Exception {
        try (Client c = Client.connect(TLS, options().tls(tls()).sasl(alice()))) {
            assertTrue(c.isTls());
            assertTrue(c.authenticatedAs().contains("sasl:alice"), c.authenticatedAs().toString());
            try (WriteLock lock = new WriteLock(c, Zk.path("tls-lock"))) {
                lock.lock();
                assertTrue(lock.getFencingToken() > 0);
                lock.unlock();
            }
            DistributedQueue q = new DistributedQueue(c, Zk.path("tls-queue"));
            q.offer("over tls".getBytes(StandardCharsets.UTF_8));
            assertEquals("over tls", new String(q.poll(), StandardCharsets.UTF_8));
        }
    }

    @Test
    void pkcs12AndJksKeyAndTrustStores() throws Exception {
        char[] password = "store-secret".toCharArray();
        Path dir = Files.createTempDirectory("zkrecipes-stores");
        CertificateFactory x509 = CertificateFactory.getInstance("X.509");
        Certificate ca = certificate(x509, "ca.pem"), client = certificate(x509, "client.pem");
        String keyPem = Files.readString(CERTS.resolve("client-key.pem"));
        byte[] der = Base64.getMimeDecoder().decode(keyPem.replaceAll("-----[A-Z ]+-----", ""));
        PrivateKey key = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(der));
        // The same identity from PKCS12 stores and from JKS ones (Java's older format, still
        // common in Kafka and HBase deployments), against the same server.
        for (String type : List.of("PKCS12", "JKS")) {
            String ending = type.equals("JKS") ? ".jks" : ".p12";
            Path trustFile = store(dir.resolve("trust" + ending), type, password, s -> s.setCertificateEntry("ca", ca));
            Path keyFile = store(dir.resolve("keys" + ending), type, password,
                s -> s.setKeyEntry("client", key, password, new Certificate[] {client}));
            TlsOptions stores = TlsOptions.trustStore(trustFile, type, password).keyStore(keyFile, type, password);
            try (Client c = Client.connect(STRICT, options().tls(stores).sasl(alice()))) {
                assertTrue(c.whoami().stream().anyMatch(id -> id.startsWith("x509:") && id.contains("CN=zkclient")), c.whoami().toString());
            }
        }
        Path trustFile = dir.resolve("trust.p12"), keyFile = dir.resolve("keys.p12");
        ZkException wrong = assertThrows(ZkException.class,
            () -> TlsOptions.trustStore(trustFile, "PKCS12", "nope".toCharArray()));
        assertEquals(ZkException.Code.INVALID_ARGUMENT, wrong.getCode());
        assertTrue(wrong.getMessage().contains("trust.p12"), wrong.getMessage());
        ZkException noPassword = assertThrows(ZkException.class,
            () -> TlsOptions.trustStore(trustFile, "PKCS12", null));
        assertTrue(noPassword.getMessage().contains("password"), noPassword.getMessage());
        ZkException noKeyPassword = assertThrows(ZkException.class,
            () -> TlsOptions.trustStore(trustFile, "PKCS12", password).keyStore(keyFile, "PKCS12", null));
        assertEquals(ZkException.Code.INVALID_ARGUMENT, noKeyPassword.getCode());
        assertTrue(noKeyPassword.getMessage().contains("give the store's password"), noKeyPassword.getMessage());
        // A store of the wrong CA is named by its path, not as "<N bytes of PEM>".
        Certificate otherCa = certificate(x509, "other-ca.pem");
        Path otherFile = store(dir.resolve("other-trust.p12"), "PKCS12", password, s -> s.setCertificateEntry("other", otherCa));
        String unknown = refused(TLS, options().tls(TlsOptions.trustStore(otherFile, "PKCS12", password))).getMessage();
        assertTrue(unknown.contains("unknown CA") && unknown.contains("other-trust.p12"), unknown);
        NullPointerException nullEntry = assertThrows(NullPointerException.class,
            () -> AclPolicy.of(java.util.Arrays.asList(new Acl("all", "sasl", "alice"), null)));
        assertTrue(nullEntry.getMessage().contains("entry 1"), nullEntry.getMessage());
    }

    @Test
    void failuresNameTheirCause() {
        ZkException unknownCa = refused(TLS, options().tls(TlsOptions.pem(CERTS.resolve("other-ca.pem"))));
        assertTrue(unknownCa.getMessage().contains("unknown CA"));
        assertEquals(ZkException.Code.TLS_REFUSED, unknownCa.getCode());
        String port = TLS.substring(TLS.lastIndexOf(':') + 1);
        assertTrue(refused("127.0.0.1:" + port, options().tls(tls())).getMessage().contains("hostname mismatch"));
        Client.connect("127.0.0.1:" + port, options().tls(tls().noHostnameVerification())).close();
        assertTrue(refused(TLS, options()).getMessage().contains("speaks TLS"));
        assertTrue(refused(STRICT, options().tls(tls()).sasl(alice())).getMessage().contains("requires a client certificate"));
        ZkException wrong = refused(TLS, options().tls(tls()).sasl(Sasl.digestMd5("alice", "wrong-one".toCharArray())));
        assertEquals(ZkException.Code.AUTH_FAILED, wrong.getCode());
        assertFalse(wrong.getMessage().contains("wrong-one"));
        assertEquals(ZkException.Code.AUTH_FAILED, refused(STRICT, options().tls(mutual())).getCode());
        ZkException missing = assertThrows(ZkException.class,
            () -> Client.connect(TLS, options().tls(TlsOptions.pem(CERTS.resolve("missing.pem")))));
        assertEquals(ZkException.Code.INVALID_ARGUMENT, missing.getCode());
        assertTrue(missing.getMessage().contains("missing.pem"));
        assertFalse(alice().toString().contains("alice-secret"));
    }

    @Test
    void creatorPolicyKeepsBobOut() {
        String dir = Zk.path("creator");
        try (Client a = Client.connect(TLS, options().tls(tls()).sasl(alice()).acl(AclPolicy.CREATOR_WORLD_READ));
             Client b = Client.connect(TLS, options().tls(tls()).sasl(Sasl.digestMd5("bob", "bob-secret".toCharArray())))) {
            new DistributedQueue(a, dir).offer("alice's".getBytes(StandardCharsets.UTF_8));
            DistributedQueue theirs = new DistributedQueue(b, dir);
            assertEquals("alice's", new String(theirs.peek(), StandardCharsets.UTF_8));
            ZkException e = assertThrows(ZkException.class, theirs::poll);
            assertEquals(ZkException.Code.NO_AUTH, e.getCode());
            assertTrue(e.getMessage().contains("sasl:bob") && e.getMessage().contains(dir), e.getMessage());
        }
        String listed = Zk.path("acl-list");
        try (Client a = Client.connect(TLS, options().tls(tls()).sasl(alice())
                .acl(AclPolicy.of(List.of(new Acl("all", "sasl", "alice"), new Acl(1, "sasl", "bob")))));
             Client anonymous = Client.connect(TLS, options().tls(tls()))) {
            new DistributedQueue(a, listed).offer(new byte[] {1});
            ZkException e = assertThrows(ZkException.class, () -> new DistributedQueue(anonymous, listed).peek());
            assertEquals(ZkException.Code.NO_AUTH, e.getCode());
        }
    }

    @Test
    void kerberosWithTheClientKeytab() {
        try (Client c = Client.connect(env("ZK_KRB5_CONNECT"), options().sasl(Sasl.gssapi()))) {
            assertEquals(List.of("sasl:client"), c.authenticatedAs());
            DistributedQueue q = new DistributedQueue(c, Zk.path("krb5"));
            q.offer(new byte[] {7});
            assertArrayEquals(new byte[] {7}, q.poll());
        }
    }

    @Test
    void twoClientsOfOneProcessAreTwoKerberosPrincipals() {
        // Two principals from one base: each setting is a new Sasl (the base was changed in place).
        Sasl base = Sasl.gssapi();
        Sasl own = base
                .principal(env("ZK_KRB5_SECOND_PRINCIPAL"))
                .keytab(java.nio.file.Path.of(env("ZK_KRB5_SECOND_KEYTAB")));
        Sasl mine = base.principal(env("ZK_KRB5_PRINCIPAL")).keytab(java.nio.file.Path.of(env("ZK_KRB5_KEYTAB")));
        assertTrue(own.toString().contains("reporter"), own.toString());
        assertEquals("Sasl.gssapi()", base.toString());
        try (Client reporter = Client.connect(env("ZK_KRB5_CONNECT"), options().sasl(own));
             Client client = Client.connect(env("ZK_KRB5_CONNECT"), options().sasl(mine))) {
            assertEquals(List.of("sasl:reporter"), reporter.authenticatedAs());
            assertEquals(List.of("sasl:client"), client.authenticatedAs());
        }
        Sasl wrong = Sasl.gssapi()
                .principal(env("ZK_KRB5_PRINCIPAL"))
                .keytab(java.nio.file.Path.of(env("ZK_KRB5_SECOND_KEYTAB")));
        ZkException e = assertThrows(ZkException.class,
                () -> Client.connect(env("ZK_KRB5_CONNECT"), options().sasl(wrong)));
        assertEquals(ZkException.Code.AUTH_FAILED, e.getCode());
        assertTrue(e.getMessage().contains(env("ZK_KRB5_PRINCIPAL")), e.getMessage());
    }

    /**
     * {@code zk-harness proxy} before a server: {@link #connect} goes through it by the
     * certificate's host name (TLS runs end to end through the proxy), {@link #send} a command.
     */
    static final class FaultProxy implements AutoCloseable {
        private final Process process;
        private final java.io.BufferedReader out;
        private final java.io.Writer in;
        final String connect;

        FaultProxy(String server) throws Exception {
            process = new ProcessBuilder(env("ZK_HARNESS"), "proxy", server.replace("localhost", "127.0.0.1"))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            out = new java.io.BufferedReader(new java.io.InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            in = new java.io.OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            String line = line();
            assertTrue(line.startsWith("ZK_CONNECT="), line);
            connect = line.substring("ZK_CONNECT=".length()).replace("127.0.0.1", "localhost");
        }

        /** The next line, or a failure after 30 s (the proxy hung or died). */
        private String line() throws Exception {
            java.util.concurrent.CompletableFuture<String> next =
                java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    try { return out.readLine(); } catch (java.io.IOException e) { throw new java.io.UncheckedIOException(e); }
                });
            String line = next.get(30, java.util.concurrent.TimeUnit.SECONDS);
            assertNotNull(line, "the proxy exited");
            return line;
        }

        void send(String command) throws Exception {
            in.write(command + "\n");
            in.flush();
            assertEquals("OK", line(), command);
        }

        @Override
        public void close() throws Exception {
            in.close();
            if (!process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }

    @Test
    void aNewSessionTheServerRefusesAfterLostIsReported(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path cert = dir.resolve("client.pem");
        Path key = dir.resolve("client-key.pem");
        Files.copy(CERTS.resolve("client.pem"), cert);
        Files.copy(CERTS.resolve("client-key.pem"), key);
        try (FaultProxy proxy = new FaultProxy(STRICT);
             Client c = Client.connect(proxy.connect, options().sessionTimeout(Duration.ofSeconds(2))
                 .tls(tls().identity(cert, key)).sasl(alice()))) {
            java.util.concurrent.CountDownLatch lost = new java.util.concurrent.CountDownLatch(1);
            c.addConnectionStateListener((client, state) -> {
                if (state == ConnectionState.LOST) lost.countDown();
            });
            assertTrue(c.sessionError().isEmpty());
            // The certificate file is re-read when it changes: the next session presents this one.
            Files.copy(CERTS.resolve("client-expired.pem"), cert, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            Files.copy(CERTS.resolve("client-expired-key.pem"), key, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            proxy.send("hole on");
            assertTrue(lost.await(30, java.util.concurrent.TimeUnit.SECONDS), "LOST within 30 s");
            proxy.send("hole off");
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (c.sessionError().isEmpty()) {
                assertTrue(System.nanoTime() < deadline, "no refusal reported within 30 s");
                Thread.sleep(50);
            }
            ZkException err = c.sessionError().get();
            assertTrue(err.getMessage().contains("refused our client certificate"), err.getMessage());
            assertNotEquals(ConnectionState.RECONNECTED, c.getState());
        }
    }
}
