package io.zkrecipes;

import static io.zkrecipes.Zk.code;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** ServiceDiscovery, ServiceCache and ServiceProvider from Java, against a real ZooKeeper. */
class DiscoveryIT {
    static final class Heard extends Zk.Recorder<ServiceCacheEvent> implements ServiceCacheListener {
        Heard() {
            super("service cache event");
        }

        @Override
        public void onEvent(ServiceCacheEvent event) {
            record(event);
        }

        ServiceCacheEvent next(ServiceCacheEvent.Type type) throws InterruptedException {
            ServiceCacheEvent event = next();
            assertEquals(type, event.type(), event.toString());
            return event;
        }
    }

    static final class Told extends Zk.Recorder<DiscoveryEvent> implements DiscoveryListener {
        Told() {
            super("discovery event");
        }

        @Override
        public void onEvent(DiscoveryEvent event) {
            record(event);
        }
    }

    private static Set<String> ids(List<ServiceInstance> instances) {
        return instances.stream().map(ServiceInstance::getId).collect(Collectors.toSet());
    }

    @Test
    void anInstanceIsRegisteredSeenUpdatedAndUnregistered() throws Exception {
        String base = Zk.path("services");
        try (Client a = Zk.client(); Client b = Zk.client();
             ServiceDiscovery registrant = a.serviceDiscovery(base);
             ServiceDiscovery reader = new ServiceDiscovery(b, base);
             ServiceCache cache = reader.serviceCache("api")) {
            Heard heard = new Heard();
            cache.addListener(heard);
            cache.start();
            assertEquals(ServiceCacheEvent.Type.INITIALIZED, heard.next().type());
            ServiceInstance api = ServiceInstance.builder("api").id("one").address("10.0.0.7").port(8080)
                .uriSpec("{scheme}://{address}:{port}").payloadJson("{\"zone\":\"eu-1\"}").build();
            assertEquals(Integer.valueOf(8080), api.getPort());
            assertTrue(api.getRegistrationTimeUTC() > 0, "the builder stamps the time");
            assertEquals(ServiceType.DYNAMIC, api.getServiceType());
            assertEquals("http://10.0.0.7:8080", api.buildUriSpec().orElseThrow());
            ServiceInstance registered = registrant.registerService(api);
            assertEquals(api, registered);
            ServiceCacheEvent added = heard.next(ServiceCacheEvent.Type.ADDED);
            assertEquals(api, added.instance(), "the reader sees the instance as written");
            assertEquals(List.of("api"), reader.queryForNames());
            assertEquals(List.of(api), reader.queryForInstances("api"));
            assertEquals(List.of(api), reader.queryForInstancesAsync("api").get(10, TimeUnit.SECONDS));
            assertEquals(api, reader.queryForInstance("api", "one").orElseThrow());
            assertTrue(reader.queryForInstance("api", "two").isEmpty());
            assertEquals(List.of(api), registrant.getRegistered());

            ServiceInstance moved = api.toBuilder().port(9090).enabled(false).build();
            registrant.updateService(moved);
            ServiceCacheEvent changed = heard.next(ServiceCacheEvent.Type.CHANGED);
            assertEquals(moved, changed.instance());
            assertEquals(api, changed.oldInstance());
            assertFalse(changed.instance().isEnabled());
            assertEquals(List.of(moved), cache.getInstances());

            registrant.unregisterService(moved);
            assertEquals(moved, heard.next(ServiceCacheEvent.Type.REMOVED).instance());
            assertEquals(List.of(), reader.queryForInstances("api"));
            assertEquals(List.of(), registrant.getRegistered());
            registrant.unregisterService(moved); // unknown now: no error
        }
    }

    @Test
    void theJsonIsCuratorsAndRoundTrips() throws Exception {
        String json = "{\"name\":\"s\",\"id\":\"i\",\"address\":\"h\",\"port\":1,\"sslPort\":null,"
            + "\"payload\":{\"@class\":\"x.Y\",\"a\":[1]},\"registrationTimeUTC\":5,\"serviceType\":\"PERMANENT\","
            + "\"uriSpec\":{\"parts\":[{\"value\":\"scheme\",\"variable\":true},{\"value\":\"://x\",\"variable\":false}]},"
            + "\"enabled\":false,\"weight\":7}";
        ServiceInstance read = ServiceInstance.fromJson(json.getBytes(StandardCharsets.UTF_8));
        assertEquals("{\"@class\":\"x.Y\",\"a\":[1]}", read.getPayloadJson());
        assertEquals("{\"weight\":7}", read.getExtraFieldsJson(), "another writer's field is kept");
        assertEquals(ServiceType.PERMANENT, read.getServiceType());
        assertEquals("{scheme}://x", read.getUriSpec().orElseThrow());
        assertEquals(json, new String(read.toJson(), StandardCharsets.UTF_8), "written back byte for byte");
        assertEquals(read, read.toBuilder().build());
        assertEquals(ZkException.Code.INVALID_ARGUMENT,
            code(() -> ServiceInstance.fromJson("{".getBytes(StandardCharsets.UTF_8))));
        String spring = ServiceInstance.springPayload("app-1", "app", Map.of("instance_status", "UP"));
        assertTrue(spring.startsWith("{\"@class\":\"org.springframework.cloud.zookeeper.discovery.ZookeeperInstance\""), spring);
        ServiceInstance withSpring = ServiceInstance.builder("app").payloadJson(spring).build();
        assertEquals(spring, withSpring.getPayloadJson());
    }

    @Test
    void badFieldsAreInvalidArgumentNamingTheField() throws Exception {
        Map<String, ServiceInstance.Builder> wrong = Map.of(
            "a service name", ServiceInstance.builder("a/b"),
            "an instance id", ServiceInstance.builder("a").id(".."),
            "port is a port", ServiceInstance.builder("a").port(70000),
            "ssl_port is a port", ServiceInstance.builder("a").sslPort(-1),
            "not JSON", ServiceInstance.builder("a").payloadJson("{"),
            "not closed", ServiceInstance.builder("a").uriSpec("{a"),
            "extra fields", ServiceInstance.builder("a").extraFieldsJson("[1]"));
        wrong.forEach((why, builder) -> {
            ZkException e = assertThrows(ZkException.class, builder::build, why);
            assertEquals(ZkException.Code.INVALID_ARGUMENT, e.getCode());
            assertTrue(e.getMessage().contains(why), e.getMessage());
        });
        assertThrows(NullPointerException.class, () -> ServiceInstance.builder(null));
        try (Client a = Zk.client(); ServiceDiscovery discovery = a.serviceDiscovery(Zk.path("bad"))) {
            assertEquals(ZkException.Code.INVALID_PATH, code(() -> a.serviceDiscovery("services")));
            assertEquals(ZkException.Code.INVALID_ARGUMENT, code(() -> discovery.serviceCache("a/b")));
            assertEquals(ZkException.Code.INVALID_ARGUMENT, code(() -> discovery.serviceProvider("a",
                ProviderStrategy.RANDOM, new DownInstancePolicy(Duration.ZERO, 2))));
            assertEquals(ZkException.Code.INVALID_ARGUMENT, code(() -> discovery.serviceProvider("a",
                ProviderStrategy.RANDOM, new DownInstancePolicy(Duration.ofSeconds(1), 0))));
            assertEquals(ZkException.Code.NO_NODE,
                code(() -> discovery.updateService(ServiceInstance.builder("a").build())), "update before register");
            assertThrows(NullPointerException.class, () -> discovery.registerService(null));
            CompletableFuture<ServiceInstance> refused = discovery.registerServiceAsync(null);
            assertTrue(refused.isCompletedExceptionally(), "an async call fails its future");
        }
    }

    @Test
    void aDynamicIdHeldByAnotherSessionIsRefusedAndADeletedOneComesBack() throws Exception {
        String base = Zk.path("services-taken");
        try (Client a = Zk.client(); Client b = Zk.client();
             ServiceDiscovery first = a.serviceDiscovery(base);
             ServiceDiscovery second = b.serviceDiscovery(base)) {
            Told told = new Told();
            first.addListener(told);
            ServiceInstance api = ServiceInstance.builder("api").id("one").port(1).build();
            first.registerService(api);
            ZkException taken = assertThrows(ZkException.class, () -> second.registerService(api));
            assertEquals(ZkException.Code.NODE_EXISTS, taken.getCode());
            assertTrue(taken.getMessage().contains("session"), taken.getMessage());
            assertEquals(List.of(), second.getRegistered(), "the refused registration is not kept");

            Zk.rm(base + "/api/one");
            DiscoveryEvent back = told.next();
            assertEquals(new DiscoveryEvent(DiscoveryEvent.Type.REREGISTERED, "api", "one", null), back);
            assertEquals(List.of(api), second.queryForInstances("api"));
        }
    }

    @Test
    void aProviderHandsOutUpInstancesAndLeavesOutDownOnes() throws Exception {
        String base = Zk.path("services-provider");
        try (Client a = Zk.client(); ServiceDiscovery discovery = a.serviceDiscovery(base)) {
            for (String id : List.of("x", "y", "z")) {
                discovery.registerService(ServiceInstance.builder("api").id(id).port(1).enabled(!id.equals("z")).build());
            }
            try (ServiceProvider provider = discovery.serviceProvider("api", ProviderStrategy.ROUND_ROBIN,
                    new DownInstancePolicy(Duration.ofMinutes(5), 1))) {
                provider.start();
                assertEquals(ProviderStrategy.ROUND_ROBIN, provider.getStrategy());
                assertEquals(new DownInstancePolicy(Duration.ofMinutes(5), 1), provider.getDownInstancePolicy());
                assertEquals(Set.of("x", "y", "z"), ids(provider.getAllInstances()));
                Set<String> handed = new java.util.HashSet<>();
                for (int i = 0; i < 6; i++) {
                    handed.add(provider.getInstance().orElseThrow().getId());
                }
                assertEquals(Set.of("x", "y"), handed, "a disabled instance is never handed out");
                provider.noteError(discovery.queryForInstance("api", "x").orElseThrow());
                for (int i = 0; i < 4; i++) {
                    assertEquals("y", provider.getInstance().orElseThrow().getId(), "x is down");
                }
                provider.close();
                assertEquals(ZkException.Code.CLOSED, code(provider::getInstance));
                provider.close(); // twice: harmless
            }
            try (ServiceProvider empty = discovery.serviceProvider("none")) {
                empty.start();
                assertTrue(empty.getInstance().isEmpty());
                assertEquals(DownInstancePolicy.DEFAULT, empty.getDownInstancePolicy());
            }
        }
    }

    @Test
    void closingTheRegistryUnregistersAndClosesItsCaches() throws Exception {
        String base = Zk.path("services-close");
        try (Client a = Zk.client(); Client b = Zk.client(); ServiceDiscovery reader = b.serviceDiscovery(base)) {
            ServiceDiscovery registrant = a.serviceDiscovery(base);
            ServiceCache own = registrant.serviceCache("api");
            own.start();
            registrant.registerService(ServiceInstance.builder("api").id("s").serviceType(ServiceType.STATIC).build());
            assertEquals(1, reader.queryForInstances("api").size());
            registrant.close();
            assertEquals(List.of(), reader.queryForInstances("api"), "a static instance is unregistered by close too");
            assertEquals(ZkException.Code.CLOSED, code(own::start), "the registry closed its cache");
            registrant.close(); // twice: harmless
            own.close();
            assertEquals(List.of(), own.getInstances());
            assertEquals(ZkException.Code.CLOSED, code(registrant::queryForNames));
        }
    }
}
