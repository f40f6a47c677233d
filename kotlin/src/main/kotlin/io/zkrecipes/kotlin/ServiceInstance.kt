package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeServiceInstance
import io.zkrecipes.kotlin.ffi.serviceInstanceBuild
import io.zkrecipes.kotlin.ffi.serviceInstanceFromJson
import io.zkrecipes.kotlin.ffi.serviceInstanceToJson
import io.zkrecipes.kotlin.ffi.springPayload as nativeSpringPayload

/** How an instance's node lives (Curator's `ServiceType`). */
enum class ServiceType {
    /** An ephemeral node: it goes with its registrant's session (and is made again under the next one). */
    DYNAMIC,

    /** A persistent node, for instances registered on another's behalf. */
    STATIC,

    /** A persistent node never purged by anybody but its owner. */
    PERMANENT,

    /** An ephemeral sequential node: several registrations of one id each get a node. */
    DYNAMIC_SEQUENTIAL,
}

/**
 * One instance of a service, as Curator's `ServiceInstance` has it, written in Curator's JSON
 * byte for byte (Curator, Spring Cloud Zookeeper and every zkrecipes language read each other's
 * instances). Immutable; made by `ServiceInstance(name, ...)`, which completes it (a random UUID
 * for [id], now for [registrationTimeUtc]) and checks it: a name or id that is no node name, a
 * port outside 0..65535, a [payloadJson] that is not JSON or a [uriSpec] not closed is
 * [ZkException.InvalidArgument] naming the field.
 *
 * [payloadJson] is JSON text (`"null"` when none); [extraFieldsJson] holds the fields another
 * writer added, written back by an update.
 */
class ServiceInstance private constructor(private val fields: NativeServiceInstance) {
    val name: String get() = fields.name
    val id: String get() = fields.id!!
    val address: String? get() = fields.address
    val port: Int? get() = fields.port?.toInt()
    val sslPort: Int? get() = fields.sslPort?.toInt()
    val payloadJson: String get() = fields.payload!!

    /** Milliseconds since the epoch. */
    val registrationTimeUtc: Long get() = fields.registrationTimeUtc!!
    val serviceType: ServiceType get() = ServiceType.valueOf(fields.serviceType!!)

    /** The URI template (`{scheme}://{address}:{port}`), when one was given. */
    val uriSpec: String? get() = fields.uriSpec

    /** Whether a provider may hand it out. */
    val enabled: Boolean get() = fields.enabled!!
    val extraFieldsJson: String get() = fields.extra!!

    /** The URI [uriSpec] makes for this instance (Curator's `buildUriSpec()`); `null` without a spec. */
    val uri: String? get() = fields.uri

    /** This instance with some fields changed, checked again. */
    fun copy(
        id: String = this.id,
        address: String? = this.address,
        port: Int? = this.port,
        sslPort: Int? = this.sslPort,
        payloadJson: String = this.payloadJson,
        serviceType: ServiceType = this.serviceType,
        uriSpec: String? = this.uriSpec,
        enabled: Boolean = this.enabled,
        registrationTimeUtc: Long = this.registrationTimeUtc,
        extraFieldsJson: String = this.extraFieldsJson,
    ): ServiceInstance = invoke(
        name, id, address, port, sslPort, payloadJson, serviceType, uriSpec, enabled, registrationTimeUtc, extraFieldsJson,
    )

    /** The JSON Curator writes for this instance (a registry node's data). */
    fun toJson(): ByteArray = native { serviceInstanceToJson(fields) }

    internal fun native(): NativeServiceInstance = fields

    override fun equals(other: Any?) = other is ServiceInstance && other.fields == fields

    override fun hashCode() = fields.hashCode()

    override fun toString() =
        "ServiceInstance($name/$id${address?.let { ", $it" } ?: ""}${port?.let { ":$it" } ?: ""}, $serviceType" +
            "${if (enabled) "" else ", disabled"})"

    companion object {
        /** An instance of the service [name]; every other field may stay unset. */
        operator fun invoke(
            name: String,
            id: String? = null,
            address: String? = null,
            port: Int? = null,
            sslPort: Int? = null,
            payloadJson: String? = null,
            serviceType: ServiceType = ServiceType.DYNAMIC,
            uriSpec: String? = null,
            enabled: Boolean = true,
            registrationTimeUtc: Long? = null,
            extraFieldsJson: String? = null,
        ): ServiceInstance = of(
            native {
                serviceInstanceBuild(
                    NativeServiceInstance(
                        name, id, address, port?.toLong(), sslPort?.toLong(), payloadJson, registrationTimeUtc,
                        serviceType.name, uriSpec, enabled, extraFieldsJson, null,
                    ),
                )
            },
        )

        /** The instance Curator's JSON (a registry node's data) describes; [ZkException.InvalidArgument] if it is not one. */
        fun fromJson(json: ByteArray): ServiceInstance = of(native { serviceInstanceFromJson(json) })

        /**
         * Spring Cloud Zookeeper's payload (its `ZookeeperInstance`: the application's instance
         * id, its name, string metadata), as JSON text for [payloadJson].
         */
        fun springPayload(id: String, name: String, metadata: Map<String, String> = emptyMap()): String =
            nativeSpringPayload(id, name, metadata)

        internal fun of(fields: NativeServiceInstance) = ServiceInstance(fields)
    }
}
