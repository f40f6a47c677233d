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
                        bursts(n) { lock.acquire()!!.release() }
                    }
                    else -> error("unknown workload ${args[0]}")
                }
            }
        }
    }

    /**
     * After READY: `GO`, n timed calls of [op]; or bursts `RUN k`, each answered
     * `OK <its median ms>`, until `END` (run.py interleaves two contestants' bursts).
     */
    private suspend inline fun bursts(n: Int, op: () -> Unit) {
        println("READY")
        System.out.flush()
        val samples = ArrayList<Long>(n)
        val median = { sorted: List<Long> -> if (sorted.isEmpty()) 0.0 else sorted[sorted.size / 2] / 1e6 }
        while (true) {
            val words = (readlnOrNull() ?: "END").trim().split(Regex("\\s+"))
            val runs = words[0] == "RUN"
            val count = if (runs) words[1].toInt() else if (words[0] == "END") 0 else n
            val burst = ArrayList<Long>(count)
            repeat(count) {
                val t = System.nanoTime()
                op()
                burst.add(System.nanoTime() - t)
            }
            samples.addAll(burst)
            if (!runs) break
            burst.sort()
            println(String.format(Locale.ROOT, "OK %.4f", median(burst)))
            System.out.flush()
        }
        samples.sort()
        val k = samples.size
        println(
            String.format(
                Locale.ROOT, "{\"ops\":%d,\"seconds\":%.4f,\"median_ms\":%.4f,\"p99_ms\":%.4f}",
                k, samples.sum() / 1e9, median(samples), if (k == 0) 0.0 else samples[minOf(k - 1, k * 99 / 100)] / 1e6,
            ),
        )
    }
}
