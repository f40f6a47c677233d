package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeAcl

/**
 * TLS to every server. [ca], [cert] and [key] are paths (re-read when the files change) or PEM
 * text. `verifyHostname = false` accepts any host name the CA signed: unsafe against a man in
 * the middle with any certificate of that CA.
 */
data class Tls(
    val ca: String,
    val cert: String? = null,
    val key: String? = null,
    val verifyHostname: Boolean = true,
)

/** SASL authentication of the session. */
sealed class Sasl {
    /** A user of the server's JAAS `Server` section; [clear] wipes the password copy. */
    class DigestMd5(val username: String, password: CharArray) : Sasl() {
        private val password: CharArray = password.copyOf()

        internal fun passwordBytes(): ByteArray = String(password).toByteArray(Charsets.UTF_8)

        fun clear() = password.fill('\u0000')

        override fun toString() = "Sasl.DigestMd5($username, <password>)"
    }

    /**
     * Kerberos: by default the ticket cache (`KRB5CCNAME`) or a client keytab (`KRB5_CLIENT_KTNAME`);
     * [principal] (`name@REALM`) and [keytab] give this client an identity of its own, as a JAAS
     * `Client` section does. [service] and [host] name the server principal.
     */
    data class Gssapi(
        val service: String = "zookeeper",
        val host: String? = null,
        val principal: String? = null,
        val keytab: java.nio.file.Path? = null,
    ) : Sasl()
}

/** One ACL entry: `Acl("rwcda", "sasl", "alice")`; perms as letters, "all" or bits (1 to 31). */
data class Acl(val perms: String, val scheme: String, val id: String) {
    constructor(perms: Int, scheme: String, id: String) : this(perms.toString(), scheme, id)
}

/** The ACL of every node the recipes create; default: open without credentials, creator with any. */
sealed class AclPolicy(internal val name: String?) {
    object Open : AclPolicy("open")
    object Creator : AclPolicy("creator")
    object CreatorWorldRead : AclPolicy("creator-world-read")
    data class Entries(val entries: List<Acl>) : AclPolicy(null)

    internal fun nativeEntries(): List<NativeAcl>? =
        (this as? Entries)?.entries?.map { NativeAcl(it.perms, it.scheme, it.id) }
}
