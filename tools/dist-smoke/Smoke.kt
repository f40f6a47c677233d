import io.zkrecipes.kotlin.Client
import kotlinx.coroutines.runBlocking
import java.util.UUID
import kotlin.time.Duration.Companion.seconds

/** One lock acquire/release and one queue offer/take through the Kotlin JAR: `java SmokeKt HOST:PORT`. */
fun main(args: Array<String>): Unit = runBlocking {
    val root = "/dist-smoke/${UUID.randomUUID()}"
    Client.connect(args[0]).use { client ->
        val hold = client.writeLock("$root/lock").acquire(10.seconds) ?: error("the free lock was not acquired")
        val token = hold.fencingToken
        check(token > 0) { "token $token" }
        hold.release()
        val queue = client.queue("$root/queue")
        queue.offer("job-1".toByteArray())
        check(queue.take(10.seconds)?.decodeToString() == "job-1") { "took the wrong job" }
        check(queue.poll() == null) { "the queue is not empty" }
        println("kotlin ${System.getProperty("os.arch")}: lock token $token, queue ok")
    }
}
