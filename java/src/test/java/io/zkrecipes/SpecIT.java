package io.zkrecipes;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The behaviour specs of tests/spec, run against the JAR: every scenario is a test. The format
 * and the calls are in tests/spec/README.md; the Python, Node.js and Kotlin runners run the same
 * files.
 */
class SpecIT {
    static final Path SPECS = Path.of(System.getenv().getOrDefault("ZKRECIPES_SPECS", "../tests/spec"));
    /** How long an {@code acquire} or {@code await_leadership} waits. */
    static final long WAIT_SECONDS = 10;

    record Step(int line, List<String> words, String expected) {}

    record Scenario(String file, String name, List<Step> steps, List<String> only) {}

    static List<Scenario> scenarios() throws Exception {
        List<Scenario> found = new ArrayList<>();
        try (Stream<Path> files = Files.list(SPECS)) {
            for (Path spec : files.filter(p -> p.toString().endsWith(".spec")).sorted().toList()) {
                List<String> lines = Files.readAllLines(spec);
                for (int at = 0; at < lines.size(); at++) {
                    String text = lines.get(at).split("#", 2)[0].trim();
                    if (text.isEmpty()) {
                        continue;
                    }
                    if (text.startsWith("scenario ")) {
                        String file = spec.getFileName().toString().replace(".spec", "");
                        found.add(new Scenario(file, text.substring("scenario ".length()), new ArrayList<>(), new ArrayList<>()));
                        continue;
                    }
                    if (text.startsWith("only ")) {
                        found.get(found.size() - 1).only().addAll(Arrays.asList(text.substring(5).trim().split("\\s+")));
                        continue;
                    }
                    String[] parts = text.split("=>", 2);
                    String expected = parts.length == 2 ? parts[1].trim() : null;
                    found.get(found.size() - 1).steps()
                        .add(new Step(at + 1, Arrays.asList(parts[0].trim().split("\\s+")), expected));
                }
            }
        }
        return found;
    }

    @TestFactory
    Stream<DynamicTest> specs() throws Exception {
        return scenarios().stream().filter(s -> s.only().isEmpty() || s.only().contains("java")).map(s -> DynamicTest.dynamicTest(s.file() + ": " + s.name(), () -> {
            Runner runner = new Runner("/spec-" + UUID.randomUUID().toString().substring(0, 12));
            try {
                for (Step step : s.steps()) {
                    runner.step(step);
                }
            } finally {
                runner.close();
            }
        }));
    }

    /** ZKRECIPES_SPEC_MUTATE=1: a wrong expectation, to show the runner can fail. */
    static String mutated(String expected) {
        return "true".equals(expected) && System.getenv("ZKRECIPES_SPEC_MUTATE") != null ? "false" : expected;
    }

    static String shown(Object value) {
        if (value == null) {
            return "none";
        }
        if (value instanceof byte[] bytes) {
            return new String(bytes, StandardCharsets.UTF_8);
        }
        if (value instanceof AtomicValue<?> atomic) {
            return String.valueOf(atomic.postValue());
        }
        return String.valueOf(value);
    }

    static final class Runner {
        final String root;
        final Map<String, Client> clients = new HashMap<>();
        final Map<String, Object> objects = new HashMap<>();
        final Map<String, Deque<Lease>> leases = new HashMap<>();
        final Map<String, Deque<Delivery>> jobs = new HashMap<>();

        Runner(String root) {
            this.root = root;
        }

        String path(String word) {
            return word.startsWith("=") ? word.substring(1) : root + "/" + word;
        }

        Object make(Client client, String kind, String at, List<String> args) {
            return switch (kind) {
                case "lock" -> new WriteLock(client, at);
                case "multi_lock" -> new MultiLock(client,
                    java.util.stream.Stream.concat(java.util.stream.Stream.of(at), args.stream().map(this::path)).toList());
                case "read_lock" -> new ReadWriteLock(client, at).readLock();
                case "write_lock" -> new ReadWriteLock(client, at).writeLock();
                case "queue" -> new DistributedQueue(client, at);
                case "atomic_long" -> new DistributedAtomicLong(client, at);
                case "shared_count" -> new SharedCount(client, at, Integer.parseInt(args.get(0)));
                case "semaphore" -> new Semaphore(client, at, Integer.parseInt(args.get(0)));
                case "latch" -> new LeaderLatch(client, at);
                case "barrier" -> new Barrier(client, at);
                case "double_barrier" -> new DoubleBarrier(client, at, Integer.parseInt(args.get(0)));
                case "work_queue" -> new WorkQueue(client, at);
                case "election" -> new LeaderElectionSupport(client, at, args.get(0));
                case "persistent_node" -> new PersistentNode(client, at, NodeMode.valueOf(args.get(0).toUpperCase()),
                    args.get(1).getBytes(StandardCharsets.UTF_8));
                case "node_cache" -> Cache.node(client, at);
                case "group_member" -> new GroupMember(client, at, args.get(0), args.get(1).getBytes(StandardCharsets.UTF_8));
                case "service_discovery" -> client.serviceDiscovery(at);
                default -> throw new IllegalArgumentException("no kind " + kind);
            };
        }

        Object call(String name, Object obj, String verb, List<String> args) throws Exception {
            if (obj instanceof Semaphore semaphore) {
                Deque<Lease> held = leases.computeIfAbsent(name, n -> new ArrayDeque<>());
                return switch (verb) {
                    case "acquire", "try_acquire" -> {
                        Lease lease = verb.equals("acquire")
                            ? semaphore.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS) : semaphore.tryAcquire();
                        if (lease != null) {
                            held.add(lease);
                        }
                        yield lease != null;
                    }
                    case "release" -> done(() -> held.removeFirst().release());
                    case "held" -> semaphore.getHeld();
                    default -> throw unknown("semaphore", verb);
                };
            }
            if (obj instanceof HeldLock<?> lock) {
                return switch (verb) {
                    case "acquire" -> lock.tryLock(WAIT_SECONDS, TimeUnit.SECONDS);
                    case "try_acquire" -> lock.tryLock();
                    case "release" -> done(lock::unlock);
                    case "held" -> lock.isHeldByCurrentThread();
                    default -> throw unknown("lock", verb);
                };
            }
            if (obj instanceof DistributedQueue queue) {
                return switch (verb) {
                    case "offer" -> queue.offer(args.get(0).getBytes(StandardCharsets.UTF_8));
                    case "poll" -> queue.poll();
                    case "size" -> queue.size();
                    default -> throw unknown("queue", verb);
                };
            }
            if (obj instanceof DistributedAtomicLong counter) {
                return switch (verb) {
                    case "get" -> counter.get();
                    case "increment" -> counter.increment();
                    case "add" -> counter.add(Long.parseLong(args.get(0)));
                    case "compare_and_set" -> counter
                        .compareAndSet(Long.parseLong(args.get(0)), Long.parseLong(args.get(1))).succeeded();
                    default -> throw unknown("atomic_long", verb);
                };
            }
            if (obj instanceof SharedCount count) {
                return switch (verb) {
                    case "start" -> done(count::start);
                    case "get" -> count.getCount();
                    case "set" -> done(() -> count.setCount(Integer.parseInt(args.get(0))));
                    case "close" -> done(count::close);
                    default -> throw unknown("shared_count", verb);
                };
            }
            if (obj instanceof LeaderLatch latch) {
                return switch (verb) {
                    case "start" -> done(latch::start);
                    case "await_leadership" -> latch.awaitLeadership(WAIT_SECONDS, TimeUnit.SECONDS).isPresent();
                    case "has_leadership" -> latch.hasLeadership();
                    case "close" -> done(latch::close);
                    default -> throw unknown("latch", verb);
                };
            }
            if (obj instanceof LeaderElectionSupport election) {
                return switch (verb) {
                    case "start" -> done(election::start);
                    case "await_leadership" -> election.awaitLeadership(WAIT_SECONDS, TimeUnit.SECONDS);
                    case "is_leader" -> election.isLeader();
                    case "stop" -> done(election::stop);
                    default -> throw unknown("election", verb);
                };
            }
            if (obj instanceof Barrier barrier) {
                return switch (verb) {
                    case "set" -> done(barrier::setBarrier);
                    case "remove" -> done(barrier::removeBarrier);
                    case "is_set" -> barrier.isSet();
                    case "wait" -> barrier.waitOnBarrier(0, TimeUnit.SECONDS);
                    default -> throw unknown("barrier", verb);
                };
            }
            if (obj instanceof DoubleBarrier barrier) {
                return switch (verb) {
                    case "enter" -> barrier.enter(WAIT_SECONDS, TimeUnit.SECONDS);
                    case "try_enter" -> barrier.enter(0, TimeUnit.SECONDS);
                    case "leave" -> barrier.leave(WAIT_SECONDS, TimeUnit.SECONDS);
                    default -> throw unknown("double_barrier", verb);
                };
            }
            if (obj instanceof WorkQueue queue) {
                Deque<Delivery> kept = jobs.computeIfAbsent(name, n -> new ArrayDeque<>());
                return switch (verb) {
                    case "offer" -> done(() -> queue.offer(args.get(0).getBytes(StandardCharsets.UTF_8)));
                    case "consume", "try_consume" -> {
                        Delivery job = queue.consume(verb.equals("consume") ? WAIT_SECONDS : 0, TimeUnit.SECONDS);
                        if (job == null) {
                            yield null;
                        }
                        kept.add(job);
                        yield job.getData();
                    }
                    case "ack" -> done(() -> kept.removeFirst().ack());
                    case "nack" -> done(() -> kept.removeFirst().nack());
                    case "size" -> queue.size();
                    default -> throw unknown("work_queue", verb);
                };
            }
            if (obj instanceof PersistentNode node) {
                return switch (verb) {
                    case "start" -> done(node::start);
                    case "close" -> done(node::close);
                    default -> throw unknown("persistent_node", verb);
                };
            }
            if (obj instanceof Cache cache) {
                return switch (verb) {
                    case "start" -> done(cache::start);
                    case "data" -> cache.get(cache.getPath()).map(ChildData::getData).orElse(null);
                    case "close" -> done(cache::close);
                    default -> throw unknown("node_cache", verb);
                };
            }
            if (obj instanceof GroupMember member) {
                return switch (verb) {
                    case "start" -> done(member::start);
                    case "members" -> String.join(",", new java.util.TreeSet<>(member.getCurrentMembers().keySet()));
                    case "close" -> done(member::close);
                    default -> throw unknown("group_member", verb);
                };
            }
            if (obj instanceof ServiceDiscovery registry) {
                return discovery(registry, verb, args);
            }
            throw new IllegalArgumentException("no object " + name);
        }

        static Object discovery(ServiceDiscovery registry, String verb, List<String> args) throws Exception {
            java.util.function.Predicate<ServiceInstance> named =
                i -> i.getName().equals(args.get(0)) && i.getId().equals(args.get(1));
            return switch (verb) {
                case "register" -> registry.registerService(ServiceInstance.builder(args.get(0)).id(args.get(1))
                    .port(Integer.parseInt(args.get(2))).serviceType(ServiceType.valueOf(args.get(3).toUpperCase())).build());
                case "update" -> done(() -> registry.updateService(registry.getRegistered().stream().filter(named).findFirst()
                    .map(ServiceInstance::toBuilder).orElse(ServiceInstance.builder(args.get(0)).id(args.get(1)))
                    .port(Integer.parseInt(args.get(2))).build()));
                case "unregister" -> done(() -> registry.unregisterService(ServiceInstance.builder(args.get(0)).id(args.get(1)).build()));
                case "registered" -> registry.getRegistered().stream().anyMatch(named);
                case "names" -> joinedOrNone(registry.queryForNames());
                case "ids" -> joinedOrNone(registry.queryForInstances(args.get(0)).stream().map(ServiceInstance::getId).toList());
                case "port" -> registry.queryForInstance(args.get(0), args.get(1)).map(ServiceInstance::getPort).orElse(null);
                case "close" -> done(registry::close);
                default -> throw unknown("service_discovery", verb);
            };
        }

        /** Sorted and joined by commas; null (shown as none) when there is none. */
        static String joinedOrNone(List<String> words) {
            return words.isEmpty() ? null : String.join(",", new java.util.TreeSet<>(words));
        }

        /** A verb that answers nothing. */
        interface Action {
            void run() throws Exception;
        }

        /** Runs a verb that answers nothing: its result shows as {@code none}. */
        static Object done(Action action) throws Exception {
            action.run();
            return null;
        }

        static IllegalArgumentException unknown(String kind, String verb) {
            return new IllegalArgumentException("no " + kind + " call " + verb);
        }

        void step(Step step) throws Exception {
            List<String> words = step.words();
            String said = "line " + step.line() + ": " + String.join(" ", words);
            if (words.get(0).equals("client")) {
                clients.put(words.get(1), Client.connect(Zk.connect()));
                return;
            }
            String actor = words.get(0);
            String verb = words.get(1);
            List<String> args = words.subList(2, words.size());
            String expected = mutated(step.expected());
            Object result = null;
            try {
                if (clients.containsKey(actor) && verb.equals("close")) {
                    clients.get(actor).close();
                } else if (clients.containsKey(actor)) {
                    objects.put(args.get(0), make(clients.get(actor), verb, path(args.get(1)), args.subList(2, args.size())));
                } else {
                    result = call(actor, objects.get(actor), verb, args);
                }
            } catch (ZkException e) {
                assertEquals(expected, "error " + e.getCode().name(), said + " threw " + e.getMessage());
                return;
            }
            if (expected != null) {
                assertEquals(expected, "ok".equals(expected) ? "ok" : shown(result), said);
            }
        }

        void close() {
            clients.values().forEach(Client::close);
        }
    }
}
