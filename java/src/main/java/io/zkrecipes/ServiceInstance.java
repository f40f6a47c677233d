package io.zkrecipes;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One instance of a service, as Curator's {@code ServiceInstance} has it, written in Curator's
 * JSON byte for byte (so Curator's {@code ServiceDiscovery}, Spring Cloud Zookeeper and every
 * zkrecipes language read each other's instances). Immutable; made by {@link #builder(String)},
 * which completes it (a random UUID for the id, now for the registration time) and checks it.
 *
 * <p>The payload is JSON text (Curator's {@code JsonInstanceSerializer} writes the payload
 * object as JSON; {@code "null"} when there is none). Fields another writer added are kept as
 * {@link #getExtraFieldsJson()} and written back by an update.
 *
 * <pre>{@code
 * ServiceInstance api = ServiceInstance.builder("api")
 *     .address("10.0.0.7").port(8080)
 *     .uriSpec("{scheme}://{address}:{port}")
 *     .payloadJson("{\"zone\":\"eu-1\"}")
 *     .build();
 * }</pre>
 */
public final class ServiceInstance {
    private final String name;
    private final String id;
    private final String address;
    private final Integer port;
    private final Integer sslPort;
    private final String payloadJson;
    private final long registrationTimeUTC;
    private final ServiceType serviceType;
    private final String uriSpec;
    private final boolean enabled;
    private final String extraFieldsJson;
    private final String uri;

    private ServiceInstance(List<String> f) {
        name = f.get(0);
        id = f.get(1);
        address = f.get(2);
        port = f.get(3) == null ? null : Integer.valueOf(f.get(3));
        sslPort = f.get(4) == null ? null : Integer.valueOf(f.get(4));
        payloadJson = f.get(5);
        registrationTimeUTC = Long.parseLong(f.get(6));
        serviceType = ServiceType.valueOf(f.get(7));
        uriSpec = f.get(8);
        enabled = Boolean.parseBoolean(f.get(9));
        extraFieldsJson = f.get(10);
        uri = f.get(11);
    }

    /** A builder of an instance of the service {@code name}. */
    public static Builder builder(String name) {
        return new Builder(Objects.requireNonNull(name, "name"));
    }

    /** A builder holding this instance's fields: change some, {@link Builder#build()} again. */
    public Builder toBuilder() {
        Builder b = new Builder(name);
        b.id = id;
        b.address = address;
        b.port = port;
        b.sslPort = sslPort;
        b.payloadJson = payloadJson;
        b.registrationTimeUTC = registrationTimeUTC;
        b.serviceType = serviceType;
        b.uriSpec = uriSpec;
        b.enabled = enabled;
        b.extraFieldsJson = extraFieldsJson;
        return b;
    }

    /** The instance Curator's JSON (a registry node's data) describes; INVALID_ARGUMENT if it is not one. */
    public static ServiceInstance fromJson(byte[] json) {
        return list(Native.serviceInstanceFromJson(Objects.requireNonNull(json, "json"))).get(0);
    }

    /** The JSON Curator writes for this instance (a registry node's data). */
    public byte[] toJson() {
        return Native.serviceInstanceToJson(fields());
    }

    /**
     * Spring Cloud Zookeeper's payload (its {@code ZookeeperInstance}: the application's instance
     * id, its name, string metadata), as JSON text for {@link Builder#payloadJson}: Spring's
     * {@code DiscoveryClient} lists an instance registered with it.
     */
    public static String springPayload(String id, String name, Map<String, String> metadata) {
        List<String> pairs = new ArrayList<>();
        Objects.requireNonNull(metadata, "metadata").forEach((k, v) -> {
            pairs.add(k);
            pairs.add(v);
        });
        return Native.springPayload(Objects.requireNonNull(id, "id"), Objects.requireNonNull(name, "name"),
            pairs.toArray(new String[0]));
    }

    public String getName() {
        return name;
    }

    public String getId() {
        return id;
    }

    public String getAddress() {
        return address;
    }

    /** The port, {@code null} when none. */
    public Integer getPort() {
        return port;
    }

    /** The TLS port, {@code null} when none. */
    public Integer getSslPort() {
        return sslPort;
    }

    /** The payload as JSON text ({@code "null"} when none). */
    public String getPayloadJson() {
        return payloadJson;
    }

    /** When the instance was made, in milliseconds since the epoch. */
    public long getRegistrationTimeUTC() {
        return registrationTimeUTC;
    }

    public ServiceType getServiceType() {
        return serviceType;
    }

    /** The URI template (Curator's {@code UriSpec}: {@code {scheme}://{address}:{port}}), when one was given. */
    public Optional<String> getUriSpec() {
        return Optional.ofNullable(uriSpec);
    }

    /** Whether a provider may hand it out (Curator writes {@code enabled} only when false). */
    public boolean isEnabled() {
        return enabled;
    }

    /** Fields another writer added, as a JSON object's text ({@code "{}"} when none). */
    public String getExtraFieldsJson() {
        return extraFieldsJson;
    }

    /** The URI the spec makes for this instance (Curator's {@code buildUriSpec()}), empty without a spec. */
    public Optional<String> buildUriSpec() {
        return Optional.ofNullable(uri);
    }

    /** The fields as the native library takes them (bindings/java/src/discovery.rs). */
    String[] fields() {
        return new String[] {
            name, id, address, port == null ? null : port.toString(), sslPort == null ? null : sslPort.toString(),
            payloadJson, Long.toString(registrationTimeUTC), serviceType.name(), uriSpec,
            Boolean.toString(enabled), extraFieldsJson,
        };
    }

    /** Packed instances as the native library sends them: 12 fields each (`pack_instance`). */
    static List<ServiceInstance> list(byte[] packed) {
        if (packed == null) {
            return List.of();
        }
        ByteBuffer buffer = ByteBuffer.wrap(packed);
        List<ServiceInstance> instances = new ArrayList<>();
        while (buffer.hasRemaining()) {
            List<String> f = new ArrayList<>(12);
            for (int i = 0; i < 12; i++) {
                f.add(field(buffer));
            }
            instances.add(new ServiceInstance(f));
        }
        return Collections.unmodifiableList(instances);
    }

    /** One packed text: its length (-1: none), then its UTF-8. */
    static String field(ByteBuffer buffer) {
        int length = buffer.getInt();
        if (length < 0) {
            return null;
        }
        byte[] bytes = new byte[length];
        buffer.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** Packed texts, each a length then the UTF-8 (a list of names). */
    static List<String> texts(byte[] packed) {
        ByteBuffer buffer = ByteBuffer.wrap(packed);
        List<String> texts = new ArrayList<>();
        while (buffer.hasRemaining()) {
            texts.add(field(buffer));
        }
        return Collections.unmodifiableList(texts);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ServiceInstance other && java.util.Arrays.equals(fields(), other.fields());
    }

    @Override
    public int hashCode() {
        return java.util.Arrays.hashCode(fields());
    }

    @Override
    public String toString() {
        return "ServiceInstance[" + name + "/" + id + (address == null ? "" : ", " + address)
            + (port == null ? "" : ":" + port) + ", " + serviceType + (enabled ? "" : ", disabled") + "]";
    }

    /** Builds a {@link ServiceInstance}; every field but the name may stay unset. */
    public static final class Builder {
        private final String name;
        private String id;
        private String address;
        private Integer port;
        private Integer sslPort;
        private String payloadJson;
        private Long registrationTimeUTC;
        private ServiceType serviceType;
        private String uriSpec;
        private Boolean enabled;
        private String extraFieldsJson;

        private Builder(String name) {
            this.name = name;
        }

        /** The instance's id, its node's name (a random UUID when unset). */
        public Builder id(String id) {
            this.id = id;
            return this;
        }

        public Builder address(String address) {
            this.address = address;
            return this;
        }

        /** 0 to 65535 (checked by {@link #build()}). */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        public Builder sslPort(int sslPort) {
            this.sslPort = sslPort;
            return this;
        }

        /** Any JSON value, as text. */
        public Builder payloadJson(String payloadJson) {
            this.payloadJson = payloadJson;
            return this;
        }

        /** Milliseconds since the epoch (now when unset). */
        public Builder registrationTimeUTC(long registrationTimeUTC) {
            this.registrationTimeUTC = registrationTimeUTC;
            return this;
        }

        /** {@link ServiceType#DYNAMIC} when unset. */
        public Builder serviceType(ServiceType serviceType) {
            this.serviceType = Objects.requireNonNull(serviceType, "serviceType");
            return this;
        }

        /** A Curator URI template, such as {@code {scheme}://{address}:{port}}. */
        public Builder uriSpec(String uriSpec) {
            this.uriSpec = uriSpec;
            return this;
        }

        public Builder enabled(boolean enabled) {
            this.enabled = enabled;
            return this;
        }

        /** Fields another writer uses, as a JSON object's text; written with the instance. */
        public Builder extraFieldsJson(String extraFieldsJson) {
            this.extraFieldsJson = extraFieldsJson;
            return this;
        }

        /**
         * The instance. INVALID_ARGUMENT naming the field: a name or id that is no node name, a
         * port outside 0 to 65535, a payload that is not JSON, a URI template not closed.
         */
        public ServiceInstance build() {
            String[] fields = {
                name, id, address, port == null ? null : port.toString(), sslPort == null ? null : sslPort.toString(),
                payloadJson, registrationTimeUTC == null ? null : registrationTimeUTC.toString(),
                serviceType == null ? null : serviceType.name(), uriSpec,
                enabled == null ? null : enabled.toString(), extraFieldsJson,
            };
            return list(Native.serviceInstanceBuild(fields)).get(0);
        }
    }
}
