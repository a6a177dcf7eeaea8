/**
 * Fan-out over real sockets: one run on the demo model (no delay) followed by 1, 20 and 100 tabs,
 * plus 5 stalled tabs that never read. Reports how long the run took as the first tab saw it and
 * how far behind the last tab finished. A stalled tab must change neither. Run with `npm run bench`.
 */
import { api, is, SseClient, startHarness } from '../test/server/harness.js'
import { connect } from 'node:net'

async function once(followers: number, stalled: number, words: number) {
  const h = await startHarness({ demoDelayMs: 0 })
  await api(h.url, 'POST', '/api/threads', { id: 'bench' })
  const sockets = Array.from({ length: stalled }, () => {
    const s = connect(Number(new URL(h.url).port), '127.0.0.1')
    s.write('GET /api/threads/bench/follow HTTP/1.1\r\nHost: localhost\r\n\r\n')
    s.pause()
    return s
  })
  const tabs = await Promise.all(Array.from({ length: followers }, () => SseClient.open(`${h.url}/api/threads/bench/follow`)))
  // Warm the runtime so the measured run is the run, not pi's start-up.
  await api(h.url, 'POST', '/api/threads/bench/prompt', { message: 'warm up' })
  await tabs[0].waitFor(is('status', { busy: false, run: 1 }))
  const started = performance.now()
  await api(h.url, 'POST', '/api/threads/bench/prompt', { message: `slow ${words}` })
  const done = (t: SseClient) => t.waitFor(is('status', { busy: false, run: 2 }), 120_000).then(() => performance.now())
  const finished = await Promise.all(tabs.map(done))
  const first = Math.min(...finished) - started
  const last = Math.max(...finished) - started
  for (const t of tabs) t.close()
  for (const s of sockets) s.destroy()
  await h.close()
  return { first, last }
}

const words = 2000
for (const [followers, stalled] of [
  [1, 0],
  [20, 0],
  [100, 0],
  [100, 5],
] as const) {
  const { first, last } = await once(followers, stalled, words)
  console.log(
    `${String(followers).padStart(3)} tabs + ${stalled} stalled: a ${words}-chunk run took ${first.toFixed(0)} ms; the last tab was ${(last - first).toFixed(0)} ms behind`,
  )
}
