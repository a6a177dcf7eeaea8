/**
 * The registry's slots at the edges of their lives, where a request meets a thread that is being
 * built, deleted or let go: each test pins what a caller sees in that window (found in review of
 * the registry split, and held to what the registry did before it).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import type { FakeRuntime } from './fake-runtime.js'
import { FakeRuntimeFactory, hostOptions } from './fake-runtime.js'

let dir: string
let runtimes: FakeRuntimeFactory
let registry: ThreadRegistry

async function open(idleMs = 60_000): Promise<void> {
  dir = await mkdtemp(join(tmpdir(), 'threadhost-slot-races-'))
  runtimes = new FakeRuntimeFactory()
  registry = await ThreadRegistry.open(hostOptions(dir, runtimes, { idleMs }))
}

afterEach(async () => {
  for (const fake of runtimes.runtimes.values()) fake.settle()
  await registry.shutdown()
  await rm(dir, { recursive: true, force: true })
})

const prompt = (id: string, message: string) => registry.prompt(id, { message, admission: 'enqueue', deliverAs: 'steer' })
const tick = () => new Promise((resolve) => setTimeout(resolve, 5))

function gate(): { open: () => void; passed: Promise<void> } {
  let open!: () => void
  const passed = new Promise<void>((resolve) => (open = resolve))
  return { open, passed }
}

/** Every runtime built from here waits at the gate. */
function holdBuilds(g: { passed: Promise<void> }): void {
  const create = runtimes.create.bind(runtimes)
  runtimes.create = async (options) => {
    await g.passed
    return create(options)
  }
}

/** The thread's runtime takes until the gate opens to be let go. */
function holdDispose(fake: FakeRuntime, g: { passed: Promise<void> }): void {
  const dispose = fake.dispose.bind(fake)
  fake.dispose = async () => {
    await g.passed
    return dispose()
  }
}

/** Waits until the thread's live thread has retired and its runtime is being let go. */
async function untilReleasing(id: string): Promise<void> {
  while (registry.liveThreads().length > 0 || registry.get(id)?.live) await tick()
}

describe('a thread deleted while its runtime is being built', () => {
  it('is gone for every caller from the moment of the delete, not once the build ends', async () => {
    await open()
    const g = gate()
    holdBuilds(g)
    const prompted = prompt('t1', 'hello')
    await tick()
    const deleted = registry.delete('t1')
    await tick()
    expect(registry.get('t1')).toBeUndefined()
    expect(registry.list().map((s) => s.threadId)).not.toContain('t1')
    expect(await registry.feed('t1')).toBeUndefined()
    expect((await registry.update('t1', { title: 'renamed' })).kind).toBe('unknown')
    expect(await registry.delete('t1')).toEqual({ kind: 'unknown' })
    g.open()
    expect(await prompted).toMatchObject({ kind: 'rejected', reason: 'deleted' })
    expect(await deleted).toEqual({ kind: 'deleted' })
  })
})

describe('a thread asked to build again while its old runtime is let go', () => {
  it('a model change waits for the new run and is refused busy, as during any build', async () => {
    await open(20)
    await prompt('t1', 'one')
    const first = runtimes.get('t1')
    first.settle()
    const g = gate()
    holdDispose(first, g)
    await untilReleasing('t1')
    const again = prompt('t1', 'two')
    await tick()
    const update = registry.update('t1', { model: 'lab/fast' })
    g.open()
    expect((await again).kind).toBe('admitted')
    expect((await update).kind).toBe('busy')
    expect(runtimes.options.map((o) => o.model)).toEqual(['demo', 'demo'])
  })

  it('keeps its feed when the last follower leaves, so resuming tabs get their frames', async () => {
    await open(20)
    await prompt('t1', 'one')
    const first = runtimes.get('t1')
    first.settle()
    const feed = (await registry.feed('t1'))!
    const unfollow = feed.follow({ send: () => {}, close: () => {} } as never)
    const g = gate()
    holdDispose(first, g)
    await untilReleasing('t1')
    const again = prompt('t1', 'two')
    await tick()
    unfollow()
    g.open()
    await again
    expect(await registry.feed('t1')).toBe(feed)
  })
})

describe('/compact on a thread deleted while it compacts', () => {
  it('still answers with the thread as it was', async () => {
    await open()
    await prompt('t1', 'hi')
    const fake = runtimes.get('t1')
    fake.settle()
    const g = gate()
    fake.compact = async () => g.passed
    const compacted = prompt('t1', '/compact')
    await tick()
    const deleted = registry.delete('t1')
    await tick()
    g.open()
    expect(await compacted).toMatchObject({ kind: 'command-done', command: 'compact', summary: { threadId: 't1' } })
    await deleted
  })
})
