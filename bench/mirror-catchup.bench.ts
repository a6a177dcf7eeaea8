/**
 * `npm run bench:mirror`: how long a node takes to start mirroring a long thread (the first tab on a
 * node that has not read it, or a takeover), reading its log from the first record against reading it
 * from the newest checkpoint (src/host/cluster/thread-mirror.ts), in the same run on a real
 * `nats-server -js`; and what a checkpoint of that thread costs its owner (the snapshot and its JSON,
 * on the event loop).
 *
 * The thread: BENCH_RECORDS records (default 100,000) of one streamed delta each, a new reply every 200,
 * as a run's frames land one append at a time. Figures are the median and worst of BENCH_ROUNDS (5).
 * Not a test: nothing here asserts a time. Numbers go to docs/benchmarks.md by hand.
 */
import { connectNats } from '../src/host/cluster/nats.js'
import type { ThreadLogs } from '../src/host/cluster/port.js'
import { lastFrame, ThreadMirror } from '../src/host/cluster/thread-mirror.js'
import { Feed } from '../src/host/feed.js'
import { initialView } from '../src/shared/projection.js'
import { natsMissing, startNats } from '../test/support/nats-server.js'

const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5))
const ID = 'a long thread'

if (natsMissing) {
  console.error(natsMissing)
  process.exit(1)
}
const nats = await startNats()
const engine = await connectNats({ servers: [nats.url] }, 'bench')
try {
  const owner = new Feed(initialView(ID))
  let last = 0
  let reply = 0
  const started = performance.now()
  for (let r = 0; r < RECORDS; r++) {
    const frames: string[] = []
    if (r % 200 === 0) frames.push(lastFrame(owner, owner.append({ type: 'assistant-start', messageId: `m${++reply}`, at: r }))!.toString('utf8'))
    frames.push(lastFrame(owner, owner.append({ type: 'assistant-delta', messageId: `m${reply}`, text: 'lorem ipsum dolor ' }))!.toString('utf8'))
    last = await engine.logs.append(ID, { kind: 'frames', frames }, last)
  }
  console.log(`${RECORDS} records (${owner.seq} frames) appended in ${((performance.now() - started) / 1000).toFixed(1)} s`)

  // What the owner's mirror pays for one checkpoint of this thread.
  const costs: number[] = []
  for (let k = 0; k < ROUNDS + 2; k++) {
    owner.append({ type: 'assistant-delta', messageId: `m${reply}`, text: '.' })
    const t = performance.now()
    JSON.stringify({ view: owner.snapshot(), openPrompts: [], keyed: [], keyOf: [] })
    costs.push(performance.now() - t)
  }

  // The owner's mirror folds the log, keeping a checkpoint every 1,000 records (one at a time: the
  // newest may be a little short of the end).
  const keeper = new ThreadMirror(ID, engine.logs, async () => initialView(ID), { checkpoints: { every: 1000, writes: () => true } })
  keeper.start()
  await keeper.ready()
  await new Promise((resolve) => setTimeout(resolve, 1000))
  keeper.stop()
  const kept = (await engine.logs.checkpoint(ID))!

  const readyIn = async (logs: ThreadLogs) => {
    const t = performance.now()
    const mirror = new ThreadMirror(ID, logs, async () => initialView(ID))
    mirror.start()
    await mirror.ready()
    const ms = performance.now() - t
    if (mirror.feed!.seq !== owner.seq - ROUNDS - 2) throw new Error(`the mirror folded to seq ${mirror.feed!.seq}`)
    mirror.stop()
    return ms
  }
  const whole: number[] = []
  const fromCheckpoint: number[] = []
  const wholeLog: ThreadLogs = { ...engine.logs, checkpoint: async () => undefined }
  for (let k = 0; k < ROUNDS; k++) {
    whole.push(await readyIn(wholeLog))
    fromCheckpoint.push(await readyIn(engine.logs))
  }
  const figure = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b)
    return `${sorted[Math.floor(sorted.length / 2)].toFixed(1)} / ${sorted[sorted.length - 1].toFixed(1)} ms`
  }
  console.log(`\n| a mirror of ${RECORDS} records, ready in (median / worst of ${ROUNDS}) | |`)
  console.log('|---|---|')
  console.log(`| reading the whole log | ${figure(whole)} |`)
  console.log(`| from the newest checkpoint, ${last - kept.position} records before the end (${(kept.state.length / 1024).toFixed(0)} KiB) | ${figure(fromCheckpoint)} |`)
  console.log(`| a checkpoint's snapshot and JSON on the owner (after 2 warm-up) | ${figure(costs.slice(2))} |`)
} finally {
  await engine.close()
  await nats.stop()
}
