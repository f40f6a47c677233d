package io.zkrecipes;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Curator's service discovery registry ({@code curator-x-discovery}), on its layout: instance
 * {@code <basePath>/<name>/<id>}, whose data is the instance's JSON as Curator writes it. Curator,
 * Spring Cloud Zookeeper and every zkrecipes language see each other's instances.
 *
 * <p>A registered instance is kept: its node is made again after its session expired or
 * somebody deleted it ({@code REREGISTERED}), until {@link #unregisterService} or
 * {@link #close()}. A DYNAMIC instance whose id another live session holds is refused at once
 * (NODE_EXISTS, naming that session), where Curator would take the node over.
 *
 * <pre>{@code
 * try (ServiceDiscovery discovery = client.serviceDiscovery("/services")) {
 *     discovery.registerService(ServiceInstance.builder("api").address("10.0.0.7").port(8080).build());
 *     try (ServiceProvider provider = discovery.serviceProvider("api")) {
 *         provider.start();
 *         provider.getInstance().ifPresent(api -> call(api.getAddress(), api.getPort()));
 *     }
 * }
 * }</pre>
 */
public final class ServiceDiscovery extends NativeObject {
    private final String basePath;
    private final EventSink<DiscoveryListener> events =
        dataEvents("service discovery", (l, name, data) -> l.onEvent(DiscoveryEvent.of(name, data)));

    /** The registry under {@code basePath} (INVALID_PATH at once); nothing is sent before a call. */
    public ServiceDiscovery(Client client, String basePath) {
        super(Objects.requireNonNull(client, "client").withHandle(
            h -> Native.serviceDiscoveryNew(h, Objects.requireNonNull(basePath, "basePath"))),
            Native::serviceDiscoveryFree);
        this.basePath = basePath;
    }

    private <T> Native.Op<T> call(int op, ServiceInstance instance, String name, String id) {
        String[] fields = instance == null ? null : instance.fields();
        return begin((h, f) -> Native.serviceDiscoveryCall(h, op, fields, name, id, f));
    }

    /**
     * Registers {@code instance} and keeps it registered; returns once its node exists. An
     * interrupt throws {@link InterruptedException} and leaves the registration to this object
     * (made once it can be; {@link #close()} removes it).
     */
    public ServiceInstance registerService(ServiceInstance instance) throws InterruptedException {
        return registered(Native.joinInterruptibly(this.<byte[]>call(0, Objects.requireNonNull(instance, "instance"), null, null)));
    }

    /** As {@link #registerService}; cancelling the future ends the wait only. */
    public CompletableFuture<ServiceInstance> registerServiceAsync(ServiceInstance instance) {
        return async(() -> this.<byte[]>call(0, Objects.requireNonNull(instance, "instance"), null, null))
            .thenApply(ServiceDiscovery::registered);
    }

    private static ServiceInstance registered(byte[] packed) {
        return ServiceInstance.list(packed).get(0);
    }

    /** Writes {@code instance}'s new fields to its node, and keeps them for every re-create. */
    public void updateService(ServiceInstance instance) {
        Native.join(this.<Void>call(1, Objects.requireNonNull(instance, "instance"), null, null));
    }

    /** Stops keeping {@code instance} and deletes its node (confirmed). Unknown instances are no error. */
    public void unregisterService(ServiceInstance instance) {
        Objects.requireNonNull(instance, "instance");
        Native.join(this.<Void>call(2, null, instance.getName(), instance.getId()));
    }

    /** The instances this object keeps registered. */
    public List<ServiceInstance> getRegistered() {
        return ServiceInstance.list(with(Native::serviceDiscoveryRegistered));
    }

    /** The name of every service in the registry, sorted. */
    public List<String> queryForNames() {
        return ServiceInstance.texts(Native.join(this.<byte[]>call(4, null, null, null)));
    }

    /** Every instance of {@code name} in the registry (read now, from the server). */
    public List<ServiceInstance> queryForInstances(String name) {
        return ServiceInstance.list(Native.join(this.<byte[]>call(5, null, Objects.requireNonNull(name, "name"), null)));
    }

    /** As {@link #queryForInstances}. */
    public CompletableFuture<List<ServiceInstance>> queryForInstancesAsync(String name) {
        return async(() -> this.<byte[]>call(5, null, Objects.requireNonNull(name, "name"), null))
            .thenApply(ServiceInstance::list);
    }

    /** The instance {@code id} of {@code name}, empty if there is none. */
    public Optional<ServiceInstance> queryForInstance(String name, String id) {
        byte[] packed = Native.join(this.<byte[]>call(6, null, Objects.requireNonNull(name, "name"),
            Objects.requireNonNull(id, "id")));
        return ServiceInstance.list(packed).stream().findFirst();
    }

    /** A cache of {@code name}'s instances (Curator's {@code serviceCacheBuilder().name(name).build()}); closed with this object. */
    public ServiceCache serviceCache(String name) {
        return new ServiceCache(this, name);
    }

    /** A round-robin {@link ServiceProvider} of {@code name}, with Curator's default down-instance policy. */
    public ServiceProvider serviceProvider(String name) {
        return new ServiceProvider(this, name, ProviderStrategy.ROUND_ROBIN, null);
    }

    /** A {@link ServiceProvider} of {@code name}. */
    public ServiceProvider serviceProvider(String name, ProviderStrategy strategy, DownInstancePolicy policy) {
        return new ServiceProvider(this, name, Objects.requireNonNull(strategy, "strategy"),
            Objects.requireNonNull(policy, "policy"));
    }

    /** Registrations' events from now on: {@code REREGISTERED}, {@code REGISTRATION_STOPPED}. */
    public void addListener(DiscoveryListener listener) {
        listen(events, listener, Native::serviceDiscoverySubscribe);
    }

    public void removeListener(DiscoveryListener listener) {
        events.remove(listener);
    }

    public String getBasePath() {
        return basePath;
    }

    /** Runs {@code call} with the registry's handle (for its caches and providers). */
    <T> T withRegistry(java.util.function.LongFunction<T> call) {
        return with(call);
    }

    /**
     * Unregisters every instance (each delete confirmed) and closes this object's caches and
     * providers, then frees it. Closing twice is harmless.
     */
    @Override
    public void close() {
        closeAfter(() -> Native.join(this.<Void>call(3, null, null, null)), events);
    }

    @Override
    public String toString() {
        return describe(basePath);
    }
}
