package io.zkrecipes.kotlin

import kotlinx.coroutines.runBlocking
import kotlin.system.exitProcess
import kotlin.time.Duration.Companion.seconds

/**
 * A program with the zkrecipes-kotlin JAR, its three dependencies and no Micrometer on its
 * classpath (MicrometerIT runs it): the library loads, locks and counts without it. Arguments:
 * the connect string and a lock path; prints what it saw.
 */
object WithoutMicrometer {
    @JvmStatic
    fun main(args: Array<String>): Unit = runBlocking {
        if (runCatching { Class.forName("io.micrometer.core.instrument.MeterRegistry") }.isSuccess) {
            println("micrometer is on the classpath: this program checks nothing")
            exitProcess(1)
        }
        val (connect, path) = args
        Client.connect(connect).use { client ->
            present(client.writeLock(path).acquire(10.seconds)).release()
            val acquired = client.metrics().counter("zkrecipes.lock.acquisitions", mapOf("path" to path))
            println("acquired $acquired, no micrometer")
        }
    }
}
