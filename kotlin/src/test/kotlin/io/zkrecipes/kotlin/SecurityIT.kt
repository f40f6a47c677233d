package io.zkrecipes.kotlin

import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import kotlin.time.Duration.Companion.seconds

/** TLS, SASL DIGEST-MD5 and ACL policies against the harness's secured servers (tests/with-secure-zk). */
class SecurityIT {
    private fun env(name: String) = System.getenv(name)?.takeIf { it.isNotEmpty() }
        ?: error("$name is not set: run the tests through tests/with-secure-zk")

    private val tlsAt = env("ZK_TLS_CONNECT")
    private val strictAt = env("ZK_TLS_STRICT_CONNECT")
    private val certs = env("ZK_CERTS")
    private val tls = Tls(ca = "$certs/ca.pem")
    private val mutual = tls.copy(cert = "$certs/client.pem", key = "$certs/client-key.pem")
    private fun alice() = Sasl.DigestMd5("alice", "alice-secret".toCharArray())
    private fun options(tls: Tls? = null, sasl: Sasl? = null, acl: AclPolicy? = null) =
        ClientOptions(connectTimeout = 8.seconds, tls = tls, sasl = sasl, acl = acl)

    @Test
    fun lockAndQueueOverTlsWithSasl(): Unit = runBlocking {
        Client.connect(tlsAt, options(tls, alice())).use { c ->
            assertTrue(c.isTls)
            assertTrue("sasl:alice" in c.authenticatedAs, c.authenticatedAs.toString())
            val lock = c.writeLock(Zk.path("tls-lock"))
            val hold = present(lock.acquire())
            assertTrue(hold.fencingToken > 0)
            hold.release()
            val q = c.queue(Zk.path("tls-queue"))
            q.offer("over tls".toByteArray())
            assertEquals("over tls", present(q.poll()).decodeToString())
        }
        Client.connect(strictAt, options(mutual, alice())).use { c ->
            assertTrue(c.whoami().any { it.startsWith("x509:") && "CN=zkclient" in it })
        }
    }

    @Test
    fun failuresNameTheirCause(): Unit = runBlocking {
        val unknown = assertThrows<ZkException.TlsRefused> { runBlocking { Client.connect(tlsAt, options(Tls("$certs/other-ca.pem"))) } }
        assertTrue("unknown CA" in unknown.message!!, unknown.message)
        val port = tlsAt.substringAfterLast(':')
        val mismatch = assertThrows<ZkException.TlsRefused> { runBlocking { Client.connect("127.0.0.1:$port", options(tls)) } }
        assertTrue("hostname mismatch" in mismatch.message!!, mismatch.message)
        Client.connect("127.0.0.1:$port", options(tls.copy(verifyHostname = false))).close()
        val noCert = assertThrows<ZkException.TlsRefused> { runBlocking { Client.connect(strictAt, options(tls, alice())) } }
        assertTrue("requires a client certificate" in noCert.message!!, noCert.message)
        val wrong = assertThrows<ZkException.AuthFailed> {
            runBlocking { Client.connect(tlsAt, options(tls, Sasl.DigestMd5("alice", "wrong-one".toCharArray()))) }
        }
        assertFalse("wrong-one" in wrong.message!!)
        val missing = assertThrows<ZkException.InvalidArgument> { runBlocking { Client.connect(tlsAt, options(Tls("$certs/missing.pem"))) } }
        assertTrue("missing.pem" in missing.message!!)
        assertFalse("alice-secret" in options(tls, alice()).toString())
    }

    @Test
    fun creatorPolicyKeepsBobOut(): Unit = runBlocking {
        val dir = Zk.path("creator")
        Client.connect(tlsAt, options(tls, alice(), AclPolicy.CreatorWorldRead)).use { a ->
            Client.connect(tlsAt, options(tls, Sasl.DigestMd5("bob", "bob-secret".toCharArray()))).use { b ->
                a.queue(dir).offer("alice's".toByteArray())
                assertEquals("alice's", present(b.queue(dir).peek()).decodeToString())
                val e = assertThrows<ZkException.NoAuth> { runBlocking { b.queue(dir).poll() } }
                assertTrue("sasl:bob" in e.message!! && dir in e.message!!, e.message)
            }
        }
        val listed = Zk.path("acl-list")
        Client.connect(tlsAt, options(tls, alice(), AclPolicy.Entries(listOf(Acl("all", "sasl", "alice"), Acl(1, "sasl", "bob"))))).use { a ->
            Client.connect(tlsAt, options(tls)).use { anonymous ->
                a.queue(listed).offer(byteArrayOf(1))
                assertThrows<ZkException.NoAuth> { runBlocking { anonymous.queue(listed).peek() } }
            }
        }
    }

    @Test
    fun kerberosWithTheClientKeytab(): Unit = runBlocking {
        Client.connect(env("ZK_KRB5_CONNECT"), options(sasl = Sasl.Gssapi())).use { c ->
            assertEquals(listOf("sasl:client"), c.authenticatedAs)
            val q = c.queue(Zk.path("krb5"))
            q.offer(byteArrayOf(7))
            assertEquals(7, present(q.poll())[0].toInt())
        }
    }

    @Test
    fun twoClientsOfOneProcessAreTwoKerberosPrincipals(): Unit = runBlocking {
        val own = Sasl.Gssapi(
            principal = env("ZK_KRB5_SECOND_PRINCIPAL"),
            keytab = java.nio.file.Path.of(env("ZK_KRB5_SECOND_KEYTAB")),
        )
        Client.connect(env("ZK_KRB5_CONNECT"), options(sasl = own)).use { reporter ->
            Client.connect(env("ZK_KRB5_CONNECT"), options(sasl = Sasl.Gssapi())).use { client ->
                assertEquals(listOf("sasl:reporter"), reporter.authenticatedAs)
                assertEquals(listOf("sasl:client"), client.authenticatedAs)
            }
        }
        assertThrows<ZkException.AuthFailed> {
            runBlocking { Client.connect(env("ZK_KRB5_CONNECT"), options(sasl = own.copy(principal = env("ZK_KRB5_PRINCIPAL")))) }
        }
    }

    /**
     * `zk-harness proxy` before a server: [connect] goes through it by the certificate's host
     * name (TLS runs end to end through the proxy); [send] gives it a command.
     */
    private inner class FaultProxy(server: String) : AutoCloseable {
        private val process = ProcessBuilder(env("ZK_HARNESS"), "proxy", server.replace("localhost", "127.0.0.1"))
            .redirectError(ProcessBuilder.Redirect.INHERIT).start()
        private val out = process.inputStream.bufferedReader()
        private val input = process.outputStream.bufferedWriter()

        /** The next line, or a failure after 30 s (the proxy hung or died). */
        private fun line(): String =
            java.util.concurrent.CompletableFuture.supplyAsync { out.readLine() }
                .get(30, java.util.concurrent.TimeUnit.SECONDS) ?: error("the proxy exited")

        val connect: String = line().also { assertTrue(it.startsWith("ZK_CONNECT="), it) }
            .removePrefix("ZK_CONNECT=").replace("127.0.0.1", "localhost")

        fun send(command: String) {
            input.write(command + "\n")
            input.flush()
            assertEquals("OK", line(), command)
        }

        override fun close() {
            input.close()
            if (!process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) process.destroyForcibly()
        }
    }

    @Test
    fun aNewSessionTheServerRefusesAfterLostIsReported(): Unit = runBlocking {
        val dir = kotlin.io.path.createTempDirectory("zkrecipes-relost-")
        val cert = dir.resolve("client.pem")
        val key = dir.resolve("client-key.pem")
        java.nio.file.Files.copy(java.nio.file.Path.of(certs, "client.pem"), cert)
        java.nio.file.Files.copy(java.nio.file.Path.of(certs, "client-key.pem"), key)
        try {
            FaultProxy(strictAt).use { proxy ->
                val identity = tls.copy(cert = cert.toString(), key = key.toString())
                Client.connect(proxy.connect, options(identity, alice()).copy(sessionTimeout = 2.seconds)).use { c ->
                    assertEquals(null, c.sessionError)
                    // The certificate file is re-read when it changes: the next session presents this one.
                    val replace = java.nio.file.StandardCopyOption.REPLACE_EXISTING
                    java.nio.file.Files.copy(java.nio.file.Path.of(certs, "client-expired.pem"), cert, replace)
                    java.nio.file.Files.copy(java.nio.file.Path.of(certs, "client-expired-key.pem"), key, replace)
                    proxy.send("hole on")
                    withTimeout(30.seconds) { c.state.first { it == ConnectionState.LOST } }
                    proxy.send("hole off")
                    val err = withTimeout(30.seconds) {
                        var err = c.sessionError
                        while (err == null) {
                            delay(50)
                            err = c.sessionError
                        }
                        err
                    }
                    assertTrue("refused our client certificate" in err.detail, err.toString())
                    assertTrue(c.state.value != ConnectionState.RECONNECTED)
                }
            }
        } finally {
            dir.toFile().deleteRecursively()
        }
    }
}
