package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeLogSink
import io.zkrecipes.kotlin.ffi.flushLogs
import io.zkrecipes.kotlin.ffi.forwardLogs
import io.zkrecipes.kotlin.ffi.logLoggers
import io.zkrecipes.kotlin.ffi.setLogLevel
import java.lang.System.Logger.Level
import kotlin.time.Duration
import kotlin.time.DurationUnit

/**
 * The library's events in the JVM's logging, as the Java library has them: each of the core's
 * loggers (`zkrecipes.lock`, `zkrecipes.session`, ...) is the [System.Logger] of that name, so that
 * SLF4J, Log4j 2 and JUL get the events through their System.Logger bridges, and no dependency
 * comes with it.
 *
 * The core forwards an event only at a level its logger takes: [refresh] asks each System.Logger
 * what it would log and tells the core the most verbose level, so that an event nobody would see
 * costs no crossing into the JVM. It runs when [Client] is loaded, at each connect and in
 * [Client.refreshLogLevels].
 */
internal object Logs {
    private val names: List<String>
    private val loggers: List<System.Logger>

    /** The core's levels by number (0 OFF, 1 ERROR ... 5 TRACE) as System.Logger's. */
    private val levels = arrayOf(Level.OFF, Level.ERROR, Level.WARNING, Level.INFO, Level.DEBUG, Level.TRACE)

    /** Asked from the most verbose: the first a logger takes is the core's level for it. */
    private val mostVerboseFirst = listOf(Level.TRACE, Level.DEBUG, Level.INFO, Level.WARNING, Level.ERROR)

    /** Whether the core forwards events yet: from the first refresh that finds a logger on. */
    private var forwarding = false

    init {
        NativeLibrary.ensure()
        names = logLoggers()
        // The root `zkrecipes` last: it tells of dropped events (the core numbers it so).
        loggers = (names + "zkrecipes").map { System.getLogger(it) }
    }

    @Synchronized
    fun refresh() {
        var anyOn = false
        names.forEachIndexed { at, name ->
            val level = mostVerbose(loggers[at])
            anyOn = anyOn || level != Level.OFF
            // Level's names are the core's (WARNING included), which parses them.
            native { setLogLevel(name, level.name) }
        }
        if (anyOn && !forwarding) {
            // The core calls the sink on its delivery thread, which JNA attaches to the JVM once,
            // as the daemon "zkrecipes-log" (NativeLibrary sets that up).
            forwardLogs(Sink)
            forwarding = true
        }
    }

    private fun mostVerbose(logger: System.Logger): Level =
        try {
            mostVerboseFirst.firstOrNull { logger.isLoggable(it) } ?: Level.OFF
        } catch (broken: RuntimeException) {
            // A logging backend that cannot answer gets nothing, rather than failing a connect.
            Level.OFF
        }

    /** Logs each event on the core's delivery thread: nothing a logger throws stops the ones after it. */
    private object Sink : NativeLogSink {
        override fun log(logger: Int, level: Int, line: String) {
            try {
                loggers[logger].log(levels[level], line)
            } catch (lost: Throwable) {
                // Only this record is lost: there is nowhere sensible left to tell it.
            }
        }
    }

    /** Waits until the events emitted so far are logged; false if [timeout] passed first. */
    fun flush(timeout: Duration): Boolean = native { flushLogs(timeout.toDouble(DurationUnit.MILLISECONDS)) }
}
