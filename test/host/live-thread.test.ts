/**
 * One LiveThread on the fake runtime: what the host carries out for the thread machine, where the
 * registry's paths cannot steer it (a runtime whose clearQueue throws; pi's does not).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Feed } from '../../src/host/feed.js'
import { LiveThread } from '../../src/host/live-thread.js'
import type { Observation } from '../../src/schemas/index.js'
import { initialView } from '../../src/shared/projection.js'
import { FakeRuntime } from './fake-runtime.js'

const confirm = { spec: { method: 'confirm' as const, title: 'Deploy?', message: 'to prod' }, origin: { kind: 'extension' as const } }

const threads: LiveThread[] = []
afterEach(async () => {
  for (const t of threads.splice(0)) await t.dispose('deleted', 'cancelled')
})

/** A live thread on a fake runtime, its feed observed from the start; `inLog` as a cluster node gives it. */
function liveThread(idleMs = 60_000, inLog?: () => Promise<unknown>) {
  const feed = new Feed(initialView('t1'))
  const seen: Observation[] = []
  feed.observe((o) => seen.push(o))
  const thread = new LiveThread({ threadId: 't1', feed, run: 0, idleMs, onRetired: () => {}, ...(inLog ? { inLog } : {}) })
  const runtime = new FakeRuntime(thread.ui)
  thread.attach(runtime)
  threads.push(thread)
  return { thread, runtime, seen }
}

describe('live thread: a stop', () => {
  it('hands back the queued prompts with the ids they were admitted under, steering first', async () => {
    const { thread, runtime } = liveThread()
    await thread.prompt({ messageId: 'p1', text: 'hello', admission: 'enqueue', deliverAs: 'steer' })
    await thread.prompt({ messageId: 'f1', text: 'later', admission: 'enqueue', deliverAs: 'followUp' })
    await thread.prompt({ messageId: 's1', text: 'now', admission: 'enqueue', deliverAs: 'steer' })
    runtime.holdAbort = true
    expect(await thread.stop()).toEqual({
      kind: 'stopped',
      restored: [
        { messageId: 's1', text: 'now' },
        { messageId: 'f1', text: 'later' },
      ],
    })
    runtime.settle()
  })

  it('⚠ a stop must stop: if clearing the queue throws, the runtime is still told to abort, the open question settles aborted, nothing is restored and the loss is said', async () => {
    const { thread, runtime, seen } = liveThread()
    await thread.prompt({ messageId: 'p1', text: 'hello', admission: 'enqueue', deliverAs: 'steer' })
    await thread.prompt({ messageId: 's1', text: 'now', admission: 'enqueue', deliverAs: 'steer' })
    const question = runtime.ui.ask(confirm)
    runtime.clearThrows = true
    runtime.holdAbort = true
    expect(await thread.stop()).toEqual({ kind: "stopped", restored: [] })
    expect(runtime.calls.slice(-2)).toEqual(['clearQueue', 'abort'])
    expect(await question).toEqual({ outcome: 'aborted' })
    expect(seen.find((o) => o.type === 'failure')).toMatchObject({ message: 'the queue could not be cleared: queue mirror corrupted' })
    // the run still ends by its own settle
    runtime.settle()
    const order = seen.map((o) => o.type).filter((t) => ['failure', 'dialog-settled', 'settled'].includes(t))
    expect(order).toEqual(['failure', 'dialog-settled', 'settled'])
    expect(thread.busy).toBe(false)
  })

  it('a delete still releases the runtime when clearing its queue throws, and says the loss', async () => {
    const { thread, runtime, seen } = liveThread()
    await thread.prompt({ messageId: 'p1', text: 'hello', admission: 'enqueue', deliverAs: 'steer' })
    runtime.clearThrows = true
    await thread.dispose('deleted', 'cancelled')
    expect(runtime.calls).toContain('abort')
    expect(runtime.disposed).toBe(true)
    expect(seen.find((o) => o.type === 'failure')).toMatchObject({ message: 'the queue could not be cleared: queue mirror corrupted' })
  })
})

describe('live thread: a question bound to the run', () => {
  it("a question whose signal the runtime fires as the thread ends the run settles as the thread decides: aborted on a stop, cancelled on a delete", async () => {
    for (const [how, outcome] of [
      ['stop', 'aborted'],
      ['delete', 'cancelled'],
    ] as const) {
      const { thread, runtime, seen } = liveThread()
      await thread.prompt({ messageId: 'p1', text: 'hello', admission: 'enqueue', deliverAs: 'steer' })
      // the tool's signal: pi raises it synchronously inside abort()
      const run = new AbortController()
      runtime.onAbort = () => run.abort()
      const question = runtime.ui.ask({ ...confirm, signal: run.signal })
      if (how === 'stop') await thread.stop()
      else await thread.dispose('deleted', 'cancelled')
      expect(await question).toEqual({ outcome })
      expect(seen.filter((o) => o.type === 'dialog-settled')).toMatchObject([{ outcome }])
    }
  })

  it("a question whose extension takes it back by its own signal settles aborted, and the thread stays live", async () => {
    const { thread, runtime, seen } = liveThread()
    const own = new AbortController()
    const question = runtime.ui.ask({ ...confirm, signal: own.signal })
    own.abort()
    expect(await question).toEqual({ outcome: 'aborted' })
    expect(seen.filter((o) => o.type === 'dialog-settled')).toMatchObject([{ outcome: 'aborted' }])
    expect(thread.live).toBe(true)
  })

  it('on a cluster node, where an answer reaches the run once it is in the log, an open question at a stop, a delete or a shutdown still gives the extension the outcome its followers saw', async () => {
    for (const [how, outcome] of [
      ['stop', 'aborted'],
      ['delete', 'cancelled'],
      ['shutdown', 'aborted'],
    ] as const) {
      // The log acknowledges on the next turn, as an engine would: the thread may end before it does.
      const { thread, runtime, seen } = liveThread(60_000, () => new Promise((resolve) => setTimeout(resolve, 5)))
      await thread.prompt({ messageId: 'p1', text: 'hello', admission: 'enqueue', deliverAs: 'steer' })
      const question = runtime.ui.ask(confirm)
      if (how === 'stop') await thread.stop()
      else await thread.dispose(how === 'delete' ? 'deleted' : 'shutdown', outcome)
      expect(await question, how).toEqual({ outcome })
      expect(seen.filter((o) => o.type === 'dialog-settled')).toMatchObject([{ outcome }])
      if (how === 'stop') runtime.settle()
    }
  })
})
