package io.zkrecipes.kotlin

import kotlinx.coroutines.runBlocking
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
        val unknown = assertThrows<ZkException.ConnectionLoss> { runBlocking { Client.connect(tlsAt, options(Tls("$certs/other-ca.pem"))) } }
        assertTrue("unknown CA" in unknown.message!!, unknown.message)
        val port = tlsAt.substringAfterLast(':')
        val mismatch = assertThrows<ZkException.ConnectionLoss> { runBlocking { Client.connect("127.0.0.1:$port", options(tls)) } }
        assertTrue("hostname mismatch" in mismatch.message!!, mismatch.message)
        Client.connect("127.0.0.1:$port", options(tls.copy(verifyHostname = false))).close()
        val noCert = assertThrows<ZkException.ConnectionLoss> { runBlocking { Client.connect(strictAt, options(tls, alice())) } }
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
}
