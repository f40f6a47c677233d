'use strict'
// zkrecipes from Node.js: uncontended acquire + release (binding overhead vs Rust),
// lock objects made and dropped (run with --expose-gc), and locks held at once.
const readline = require('node:readline')
const zk = require('zkrecipes')

async function go () {
  console.log('READY')
  await new Promise((resolve) => readline.createInterface({ input: process.stdin }).once('line', resolve))
}

// After READY: `GO`, n timed calls of `op`; or bursts `RUN k`, each answered
// `OK <its median ms>`, until `END` (run.py interleaves two contestants' bursts).
async function bursts (n, op) {
  console.log('READY')
  const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]()
  const samples = []
  const median = (sorted) => sorted.length ? sorted[sorted.length >> 1] : 0
  for (;;) {
    const { value: line, done } = await lines.next()
    const words = done ? ['END'] : line.trim().split(/\s+/)
    const runs = words[0] === 'RUN'
    const count = runs ? Number(words[1]) : words[0] === 'END' ? 0 : n
    const burst = []
    for (let i = 0; i < count; i++) {
      const t = process.hrtime.bigint()
      await op()
      burst.push(Number(process.hrtime.bigint() - t) / 1e6)
    }
    samples.push(...burst)
    if (!runs) break
    burst.sort((a, b) => a - b)
    console.log(`OK ${median(burst).toFixed(4)}`)
  }
  samples.sort((a, b) => a - b)
  const k = samples.length
  console.log(JSON.stringify({
    ops: k,
    seconds: samples.reduce((a, b) => a + b, 0) / 1e3,
    median_ms: median(samples),
    p99_ms: samples[Math.min(k - 1, Math.floor(k * 0.99))]
  }))
}

class Plain extends require('node:events').EventEmitter {
  constructor (dir) { super(); this._native = { dir } }
}

function collect () {
  for (let i = 0; i < 3; i++) global.gc()
}

async function main () {
  const [workload, connect, count, idleSeconds] = process.argv.slice(2)
  const n = Number(count || 2000)
  const client = await zk.Client.connect(connect)
  const root = `/bench/node-${process.pid}`
  if (workload === 'objects' || workload === 'baseline') {
    // `baseline`: as many plain EventEmitters with a path each, to tell what
    // V8 itself keeps after such a burst from what the library keeps.
    const make = workload === 'objects'
      ? (i) => client.writeLock(`${root}/objects/l-${i}`)
      : (i) => new Plain(`${root}/objects/l-${i}`)
    await go()
    const started = process.hrtime.bigint()
    collect()
    const before = process.memoryUsage().rss
    let locks = []
    for (let i = 0; i < n; i++) locks.push(make(i))
    const peak = process.memoryUsage().rss
    locks = null
    collect()
    // Native memory is freed by finalizers that run after the collection, and
    // V8 gives its grown heap back only once idle for a few seconds (argv[5]).
    for (let k = 0; k < Number(idleSeconds || 8); k++) await new Promise((resolve) => setTimeout(resolve, 1000))
    collect()
    const after = process.memoryUsage().rss
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    console.log(JSON.stringify({ ops: n, seconds, bytes_per_object: (peak - before) / n, retained_mb: (after - before) / 1e6 }))
  } else if (workload === 'held') {
    await go()
    const started = process.hrtime.bigint()
    collect()
    const before = process.memoryUsage().rss
    const locks = []
    for (let i = 0; i < n; i++) {
      const lock = client.writeLock(`${root}/held/l-${i}`)
      await lock.acquire()
      locks.push(lock)
    }
    const grown = process.memoryUsage().rss
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    console.log(JSON.stringify({ ops: n, seconds, bytes_per_held_lock: (grown - before) / n }))
    for (const lock of locks) await lock.release()
  } else if (workload === 'cycle') {
    const lock = client.writeLock(`${root}/cycle`)
    for (let i = 0; i < Number(process.env.ZKRECIPES_BENCH_WARMUP ?? 1000); i++) { await lock.acquire(); await lock.release() }
    await bursts(n, async () => { await lock.acquire(); await lock.release() })
  } else {
    throw new Error(`unknown workload ${workload}`)
  }
  await client.close()
  process.exit(0)
}
main().catch((err) => { console.error(err); process.exit(1) })
