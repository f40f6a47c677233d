package io.zkrecipes.kotlin

import io.opentelemetry.api.GlobalOpenTelemetry
import io.opentelemetry.sdk.OpenTelemetrySdk
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter
import io.opentelemetry.sdk.trace.SdkTracerProvider
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor
import kotlinx.coroutines.runBlocking
import kotlin.system.exitProcess
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * A program that waits on a lock and a queue with no OpenTelemetry tracer provider
 * (OpenTelemetryIT runs it). Arguments: `absent` (the API must not be on the classpath) or
 * `unset` (it is, with the SDK, and no provider is set until [Traced] sets one and waits once
 * more), the connect string and a lock path. Prints what it saw.
 */
object WithoutOpenTelemetry {
    @JvmStatic
    fun main(args: Array<String>): Unit = runBlocking {
        val (mode, connect, path) = args
        val onClasspath = runCatching { Class.forName("io.opentelemetry.api.GlobalOpenTelemetry") }.isSuccess
        if (onClasspath != (mode == "unset")) {
            println("the OpenTelemetry API is ${if (onClasspath) "" else "not "}on the classpath: $mode checks nothing")
            exitProcess(1)
        }
        waitOnce(connect, path)
        if (!onClasspath) {
            println("waited without opentelemetry")
            return@runBlocking
        }
        // Loaded only now: its loading marks where the waits without a provider ended in the
        // JVM's class-load log.
        val spans = Traced.run(connect, path)
        println("untraced waits done; $spans span once a provider was set")
    }

    /** An acquire and a take that times out: each a wait with a span when traced. */
    suspend fun waitOnce(connect: String, path: String) {
        Client.connect(connect).use { client ->
            present(client.writeLock(path).acquire(10.seconds)).release()
            check(client.queue("$path-queue").take(10.milliseconds) == null) { "an item in a new queue" }
        }
    }

    /** The application sets a provider after the library has waited without one. */
    object Traced {
        suspend fun run(connect: String, path: String): Int {
            val exporter = InMemorySpanExporter.create()
            OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .build().use { sdk ->
                    GlobalOpenTelemetry.set(sdk)
                    Client.connect(connect).use { client -> present(client.writeLock(path).acquire(10.seconds)).release() }
                    return exporter.finishedSpanItems.count { it.name == "zkrecipes.lock.acquire" }
                }
        }
    }
}
