/**
 * A host's live threads share one actor system (src/host/thread-system.ts): each thread's machine
 * still acts on its own thread, a retired thread's actor stops and frees its systemId, and a thread
 * built again before its old actor stopped is not refused for the clash.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Feed } from '../../src/host/feed.js'
import { LiveThread } from '../../src/host/live-thread.js'
import { stopThread, threadSystem } from '../../src/host/thread-system.js'
import type { Observation } from '../../src/schemas/index.js'
import { initialView } from '../../src/shared/projection.js'
import { parentOf } from '../../src/shared/xstate-internals.js'
import { FakeRuntime } from './fake-runtime.js'

const threads: LiveThread[] = []
afterEach(async () => {
  for (const t of threads.splice(0)) await t.dispose('deleted', 'cancelled')
})

function liveThread(threadId: string, system: ReturnType<typeof threadSystem>) {
  const feed = new Feed(initialView(threadId))
  const seen: Observation[] = []
  feed.observe((o) => seen.push(o))
  const thread = new LiveThread({ threadId, feed, run: 0, idleMs: 60_000, system, onRetired: () => {} })
  const runtime = new FakeRuntime(thread.ui)
  thread.attach(runtime)
  threads.push(thread)
  return { thread, runtime, seen }
}

describe('thread system', () => {
  it("threads share one actor system: a prompt runs on its own thread only, and a retired thread's actor stops and frees its id for the next build", async () => {
    const system = threadSystem()
    const one = liveThread('t1', system)
    const two = liveThread('t2', system)
    expect(one.thread.actor.system).toBe(two.thread.actor.system)
    expect(await one.thread.prompt({ text: 'hello', admission: 'reject', deliverAs: 'steer' })).toMatchObject({ kind: 'admitted', run: 1 })
    expect(one.seen.some((o) => o.type === 'status' && o.busy)).toBe(true)
    expect(two.seen.some((o) => o.type === 'status' && o.busy)).toBe(false)
    expect(one.runtime.calls).toEqual(['prompt:hello'])
    expect(two.runtime.calls).toEqual([])

    // As the registry stops a thread's actor once it went cold (slot-lifecycle.ts).
    stopThread(two.thread.actor)
    expect(two.thread.actor.getSnapshot().status).toBe('stopped')
    expect(system.system.get('thread:t2')).toBeUndefined()
    expect(system.system.get('thread:t1')).toBe(one.thread.actor)
    const again = liveThread('t2', system)
    expect(parentOf(again.thread.actor)).toBe(system)
    expect(again.thread.live).toBe(true)
  })

  it("a thread whose machine fails leaves nothing registered in the shared system: its ask-queue stops, and the thread built again asks", async () => {
    const system = threadSystem()
    const failing = liveThread('t1', system)
    void failing.thread.askUser({ id: 'q1', prompt: 'which?', mode: 'single', allowOther: false, options: [{ label: 'a', value: 'a' }] }, {}).catch(() => {})
    expect(system.system.get('askQueue:t1')).toBeDefined()
    failing.runtime.prompt = () => {
      throw new Error('boom')
    }
    void failing.thread.prompt({ text: 'hello', admission: 'reject', deliverAs: 'steer' })
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(failing.thread.actor.getSnapshot().status).toBe('error')
    expect(system.system.get('thread:t1')).toBeUndefined()
    expect(system.system.get('askQueue:t1')).toBeUndefined()

    const again = liveThread('t1', system)
    expect(parentOf(again.thread.actor)).toBe(system)
    void again.thread.askUser({ id: 'q2', prompt: 'which now?', mode: 'single', allowOther: false, options: [{ label: 'a', value: 'a' }] }, {}).catch(() => {})
    expect(again.thread.actor.getSnapshot().status).toBe('active')
    expect(system.system.get('askQueue:t1')).toBeDefined()
  })

  it('a thread built again while its old actor is still registered gets an actor system of its own', () => {
    const system = threadSystem()
    const old = liveThread('t1', system)
    const again = liveThread('t1', system)
    expect(again.thread.actor.system).not.toBe(old.thread.actor.system)
    expect(parentOf(again.thread.actor)).toBeUndefined()
    expect(again.thread.live).toBe(true)
  })
})
