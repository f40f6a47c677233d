// Type-checked in `make test` with `tsc --strict --noEmit`.
import * as diagnosticsChannel from 'node:diagnostics_channel'
import { MeterProvider } from '@opentelemetry/sdk-metrics'
import {
  Client, ZkError, configureLogging, setLogLevel, flushLogs, LOG_CHANNELS, instrumentOpenTelemetry,
  type OpenTelemetryInstrumentation,
  type ElectionEvent, type LatchEvent, type LatchParticipant, type LogMessage, type MetricPoint, type Histogram,
} from 'zkrecipes'

async function main(connect: string): Promise<void> {
  const client = await Client.connect(connect, { sessionTimeoutMs: 10_000, identity: 'worker-1' })
  client.on('state', (state) => console.log('connection', state))

  const lock = client.writeLock('/examples/lock')
  lock.on('acquired', (event) => console.log('fencing token', event.fencingToken))
  lock.on('lost', (event) => console.error('lost the lock:', event.reason.code))
  if (await lock.acquire({ timeoutMs: 5_000 })) {
    const token: bigint | null = lock.fencingToken
    console.log('holding with fencing token', token)
    await lock.release()
  }

  const jobs = client.queue('/examples/jobs')
  await jobs.offer('resize image 42')
  const job: Buffer | null = await jobs.take({ timeoutMs: 5_000 })
  console.log('took', job?.toString())
  try {
    await jobs.remove()
  } catch (err) {
    if (err instanceof ZkError && err.code === 'NO_SUCH_ELEMENT') console.log('queue empty')
  }

  const election = client.leaderElection('/examples/election', 'worker-1')
  election.on('event', (event: ElectionEvent) => console.log('election', event.type))
  election.on('elected_complete', () => console.log('leading'))
  await election.start()
  await election.awaitLeadership({ timeoutMs: 5_000 })
  await election.stop()

  {
    await using latch = client.leaderLatch('/examples/latch', { id: 'worker-1' })
    latch.on('event', (event: LatchEvent) => console.log('latch', event.type))
    latch.on('not_leader', (event) => console.log('stepped down', event.reason?.code))
    await latch.start()
    const fencing: bigint | null = await latch.awaitLeadership({ timeoutMs: 5_000 })
    const leader: LatchParticipant | null = await latch.leader()
    console.log('latch token', fencing, 'leader', leader?.id)
  }

  const gate = client.barrier('/examples/gate')
  await gate.set()
  await gate.remove()
  const released: boolean = await gate.wait({ timeoutMs: 5_000 })
  const round = client.doubleBarrier('/examples/round', 1)
  if (await round.enter({ timeoutMs: 5_000 })) {
    console.log('released', released, 'members', await round.members())
    await round.leave({ timeoutMs: 5_000 })
  }

  // Logs: a channel per recipe, and an optional process-wide logger (console here).
  diagnosticsChannel.subscribe('zkrecipes:lock', (message) => {
    const event = message as LogMessage
    console.log(event.level, event.message, event.fields.fencing_token)
  })
  configureLogging({ logger: console, level: 'info' })
  setLogLevel('debug', 'zkrecipes.lock')
  console.log('channels', LOG_CHANNELS.join(', '))

  // Metrics: this client's numbers, looked up or as Prometheus text.
  const metrics = client.metrics()
  const timeouts: number = metrics.counter('zkrecipes.lock.acquisitions', { outcome: 'timeout' })
  const waiting: number = metrics.gauge('zkrecipes.lock.waiters')
  const waits: Histogram | null = metrics.histogram('zkrecipes.lock.wait.duration')
  const p99: number | null = waits?.quantile(0.99) ?? null
  for (const point of metrics.points as readonly MetricPoint[]) {
    const shown = point.instrument === 'histogram' ? point.histogram.count : point.value
    console.log(point.name, point.attributes, shown)
  }
  console.log(timeouts, waiting, p99, metrics.toPrometheus().length)
  const unpathed = await Client.connect(connect, { metricPaths: false, logger: console })
  await unpathed.close()

  // Metrics in OpenTelemetry: every recording fed to an SDK's meter until the client closes.
  const meterProvider = new MeterProvider()
  const otel: OpenTelemetryInstrumentation = instrumentOpenTelemetry(client, { meterProvider })
  const fed: boolean = await otel.flush({ timeoutMs: 1_000 })
  console.log('fed', fed, otel.closed, otel.dropped)

  await client.close()
  await flushLogs({ timeoutMs: 1_000 })
}

main(process.argv[2] ?? '127.0.0.1:2181').catch((err: unknown) => {
  console.error(err)
  process.exitCode = 1
})
