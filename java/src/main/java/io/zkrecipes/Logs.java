package io.zkrecipes;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * The library's events in the host's logging: each of the core's loggers ({@code zkrecipes.lock},
 * {@code zkrecipes.session}, ...) is the {@link System.Logger} of that name, so that SLF4J, Log4j 2
 * and JUL get the events through their System.Logger bridges.
 *
 * <p>The core forwards an event only at a level its logger takes: {@link #refresh} asks each
 * System.Logger what it would log and tells the core the most verbose level, so that an event
 * nobody would see costs no crossing into the JVM. It runs when {@link Client} is loaded, at each
 * client's creation and in {@link Client#refreshLogLevels()}.
 */
final class Logs {
    /** The core's logger names, in the order the native library numbers them. */
    private static final String[] NAMES = Native.names(6);
    /** Their System.Loggers, and last the root {@code zkrecipes}'s, which tells of dropped events. */
    private static final System.Logger[] LOGGERS =
        Stream.concat(Arrays.stream(NAMES), Stream.of("zkrecipes")).map(System::getLogger).toArray(System.Logger[]::new);
    /** The core's levels by number (0 OFF, 1 ERROR ... 5 TRACE) as System.Logger's. */
    private static final Level[] LEVELS = {Level.OFF, Level.ERROR, Level.WARNING, Level.INFO, Level.DEBUG, Level.TRACE};
    /** Asked from the most verbose: the first a logger takes is the core's level for it. */
    private static final Level[] MOST_VERBOSE_FIRST = {Level.TRACE, Level.DEBUG, Level.INFO, Level.WARNING, Level.ERROR};

    /** Whether the core forwards events yet: from the first refresh that finds a logger on. */
    private static boolean forwarding;

    private Logs() {}

    /** Sets the core's level of every logger from its System.Logger's {@code isLoggable}. */
    static synchronized void refresh() {
        boolean anyOn = false;
        for (int i = 0; i < NAMES.length; i++) {
            Level level = mostVerbose(LOGGERS[i]);
            anyOn |= level != Level.OFF;
            // Level's names are the core's (WARNING included), which parses them.
            Native.logLevel(NAMES[i], level.getName());
        }
        if (anyOn && !forwarding) {
            // No forwarding before a logger is on: the core's events then cost nothing at all.
            Native.logForward();
            forwarding = true;
        }
    }

    private static Level mostVerbose(System.Logger logger) {
        for (Level level : MOST_VERBOSE_FIRST) {
            try {
                if (logger.isLoggable(level)) {
                    return level;
                }
            } catch (RuntimeException broken) {
                // A logging backend that cannot answer gets nothing, rather than failing a connect.
                return Level.OFF;
            }
        }
        return Level.OFF;
    }

    /** One event, on the native log delivery thread: nothing a logger throws stops the ones after it. */
    static void deliver(int logger, int level, String line) {
        try {
            LOGGERS[logger].log(LEVELS[level], line);
        } catch (Throwable lost) {
            // Only this record is lost: there is nowhere sensible left to tell it.
        }
    }

    /** Waits until the events emitted so far are logged; false if {@code timeout} passed first. */
    static boolean flush(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        return Native.logFlush(timeout.getSeconds() + timeout.getNano() / 1e9);
    }
}
