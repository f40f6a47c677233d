// zkrecipes from Kotlin coroutines: uncontended acquire + release (binding overhead vs Rust).
// Compiled with the Kotlin JAR's test classes; same protocol as the other contestants.
import io.zkrecipes.kotlin.Client
import kotlinx.coroutines.runBlocking
import java.util.Locale

object ZkrecipesKotlin {
    @JvmStatic
    fun main(args: Array<String>) {
        val n = args.getOrNull(2)?.toInt() ?: 2000
        val root = "/bench/kotlin-${ProcessHandle.current().pid()}"
        runBlocking {
            Client.connect(args[1]).use { client ->
                when (args[0]) {
                    "cycle" -> {
                        val lock = client.writeLock("$root/cycle")
                        repeat(System.getenv("ZKRECIPES_BENCH_WARMUP")?.toInt() ?: 1000) { lock.acquire()!!.release() }
                        println("READY")
                        System.out.flush()
                        readln()
                        val samples = LongArray(n)
                        val started = System.nanoTime()
                        for (i in 0 until n) {
                            val t = System.nanoTime()
                            lock.acquire()!!.release()
                            samples[i] = System.nanoTime() - t
                        }
                        val seconds = (System.nanoTime() - started) / 1e9
                        samples.sort()
                        println(
                            String.format(
                                Locale.ROOT, "{\"ops\":%d,\"seconds\":%.4f,\"median_ms\":%.4f,\"p99_ms\":%.4f}",
                                n, seconds, samples[n / 2] / 1e6, samples[minOf(n - 1, n * 99 / 100)] / 1e6,
                            ),
                        )
                    }
                    else -> error("unknown workload ${args[0]}")
                }
            }
        }
    }
}
