package io.zkrecipes;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Hands out one service's instances by a {@link ProviderStrategy} (Curator's
 * {@code ServiceProvider}), from a {@link ServiceCache} of its own: a disabled instance is never
 * handed out, nor one with enough errors noted ({@link #noteError}) until its
 * {@link DownInstancePolicy} timeout passes.
 */
public final class ServiceProvider extends NativeObject {
    private final String name;

    ServiceProvider(ServiceDiscovery registry, String name, ProviderStrategy strategy, DownInstancePolicy policy) {
        super(registry.withRegistry(h -> Native.serviceProviderNew(h, Objects.requireNonNull(name, "name"),
            strategy.name(), policy != null, policy == null ? 0 : policy.timeout().toNanos() / 1e6,
            policy != null, policy == null ? 0 : policy.errorThreshold())), Native::serviceProviderFree);
        this.name = name;
    }

    /** Loads the service's instances; returns once they are in. An interrupt throws {@link InterruptedException}. */
    public void start() throws InterruptedException {
        Native.joinInterruptibly(this.<Void>begin(Native::serviceProviderStart));
    }

    /** As {@link #start()}. */
    public CompletableFuture<Void> startAsync() {
        return async(() -> this.<Void>begin(Native::serviceProviderStart));
    }

    /** The instance the strategy picks, empty when none is up. */
    public Optional<ServiceInstance> getInstance() {
        return ServiceInstance.list(with(h -> Native.serviceProviderInstances(h, false))).stream().findFirst();
    }

    /** Every instance of the service, down ones included. */
    public List<ServiceInstance> getAllInstances() {
        return ServiceInstance.list(with(h -> Native.serviceProviderInstances(h, true)));
    }

    /** Notes that a call to {@code instance} failed: past the policy's threshold it is left out for its timeout. */
    public void noteError(ServiceInstance instance) {
        String[] fields = Objects.requireNonNull(instance, "instance").fields();
        use(h -> Native.serviceProviderNoteError(h, fields));
    }

    public String getName() {
        return name;
    }

    public ProviderStrategy getStrategy() {
        return ProviderStrategy.valueOf(with(Native::serviceProviderSettings)[0]);
    }

    /** The policy in force (Curator's default unless one was given). */
    public DownInstancePolicy getDownInstancePolicy() {
        String[] settings = with(Native::serviceProviderSettings);
        return new DownInstancePolicy(Duration.ofMillis(Long.parseLong(settings[1])), Integer.parseInt(settings[2]));
    }

    /** Stops following the service. Closing twice is harmless. */
    @Override
    public void close() {
        closeAfter(() -> use(Native::serviceProviderClose), null);
    }

    @Override
    public String toString() {
        return describe(name);
    }
}
