/**
 * Benchmarks for the hot path: appending an observation and fanning it out, and what a thread's
 * feed costs in memory, in-process. Run with `npm run bench:feed` (`npm run bench` is the comparison
 * over real sockets, bench/compare.ts); numbers go to docs/benchmarks.md by hand.
 * Not a test: nothing here asserts a time.
 */
import { Feed } from '../src/host/feed.js'
import { initialView } from '../src/shared/projection.js'
import type { ObservationInput } from '../src/schemas/index.js'

const delta = (i: number): ObservationInput => ({ type: 'assistant-delta', messageId: 'm1', text: `word${i % 10} ` })

function appendRate(followers: number, frames = 50_000, history = 0): { perSecond: number; bytesPerFollower: number } {
  const feed = new Feed(initialView('bench'))
  // A thread with a past: `history` transcript entries before the reply that streams.
  for (let i = 0; i < history; i++) feed.append({ type: 'user-message', messageId: `u${i}`, text: 'earlier', run: 1 })
  feed.append({ type: 'assistant-start', messageId: 'm1' })
  const written = new Array<number>(followers).fill(0)
  for (let f = 0; f < followers; f++) feed.follow({ send: (frame) => void (written[f] += frame.length), close() {} })
  const started = process.hrtime.bigint()
  for (let i = 0; i < frames; i++) feed.append(delta(i))
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  return { perSecond: Math.round(frames / seconds), bytesPerFollower: written[0] ?? 0 }
}

/** Heap and buffer bytes (a frame's bytes live outside the heap, in pool slabs) per feed. */
function memoryPerThread(idle: boolean, threads = 200, framesEach = 2000): number {
  const used = () => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers
  globalThis.gc?.()
  const before = used()
  const feeds: Feed[] = []
  for (let t = 0; t < threads; t++) {
    const feed = new Feed(initialView(`t${t}`))
    feed.append({ type: 'assistant-start', messageId: 'm1' })
    for (let i = 0; i < framesEach; i++) feed.append(delta(i))
    feed.append({ type: 'assistant-end', messageId: 'm1', text: 'done', stopReason: 'stop' })
    // The run is over and nobody follows: the feed keeps only the tail of its ring.
    if (idle) feed.append({ type: 'status', live: true, busy: false, run: 1 })
    feeds.push(feed)
  }
  globalThis.gc?.()
  const after = used()
  return Math.round((after - before) / feeds.length)
}

// Warm up the JIT before measuring.
appendRate(10, 20_000)
for (const followers of [0, 1, 10, 100]) {
  const { perSecond, bytesPerFollower } = appendRate(followers)
  console.log(`append + fan-out to ${String(followers).padStart(3)} followers: ${perSecond.toLocaleString('en')} frames/s (${bytesPerFollower} bytes to each)`)
}
for (const history of [100, 1000, 10_000]) {
  const { perSecond } = appendRate(1, 20_000, history)
  console.log(`append + fan-out to   1 follower, ${String(history).padStart(5)} transcript entries before the reply: ${perSecond.toLocaleString('en')} frames/s`)
}
const steadier = globalThis.gc ? '' : ' (run with --expose-gc for a steadier number)'
console.log(`memory per thread, heap and frame bytes (a 2000-frame run, ring full): ${(memoryPerThread(false) / 1024).toFixed(0)} KiB${steadier}`)
console.log(`the same once the run is over and nobody follows (ring trimmed to its tail): ${(memoryPerThread(true) / 1024).toFixed(0)} KiB${steadier}`)
