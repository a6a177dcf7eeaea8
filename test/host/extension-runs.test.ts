/**
 * A run the runtime starts itself (an extension's pi.sendUserMessage) is a run of the thread: busy,
 * numbered after the last, stoppable with its queue handed back, and a prompt sent during it queues
 * into it — nothing accepted is lost (issue 19, item 1).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Observation } from '../../src/schemas/index.js'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import { FakeRuntimeFactory, hostOptions } from './fake-runtime.js'

let dir: string
let runtimes: FakeRuntimeFactory
let registry: ThreadRegistry

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'threadhost-extension-runs-'))
  runtimes = new FakeRuntimeFactory()
  registry = await ThreadRegistry.open(hostOptions(dir, runtimes))
})
afterEach(async () => {
  for (const fake of runtimes.runtimes.values()) fake.settle()
  await registry.shutdown()
  await rm(dir, { recursive: true, force: true })
})

const prompt = (message: string, deliverAs: 'steer' | 'followUp' = 'steer') => registry.prompt('t1', { message, admission: 'enqueue', deliverAs })

describe('a run an extension starts', () => {
  it('is the next run of the thread: busy, numbered, its user message carrying the run, ended by its own settle', async () => {
    await prompt('/deploy')
    const fake = runtimes.get('t1')
    fake.settle()
    const seen: Observation[] = []
    ;(await registry.feed('t1'))!.observe((o) => seen.push(o))
    fake.startOwnRun('summarize the deploy')
    expect(registry.get('t1')).toMatchObject({ busy: true, run: 2 })
    expect(fake.calls).toContain('adopt:2')
    expect(seen.find((o) => o.type === 'user-message')).toMatchObject({ text: 'summarize the deploy', run: 2 })
    fake.settle()
    expect(registry.get('t1')).toMatchObject({ busy: false, run: 2 })
    expect(seen.filter((o) => o.type === 'settled')).toMatchObject([{ run: 2, aborted: false }])
  })

  it('a prompt sent during it is queued into it, not started as a run that never runs', async () => {
    await prompt('hello')
    const fake = runtimes.get('t1')
    fake.settle()
    fake.startOwnRun('from the extension')
    expect(await prompt('and also this')).toMatchObject({ kind: 'admitted', run: 2, queued: true })
    expect(fake.calls.at(-1)).toBe('steer:and also this')
    expect(fake.runs).toEqual([1, 2])
  })

  it('can be stopped, and the prompts queued into it are handed back', async () => {
    await prompt('hello')
    const fake = runtimes.get('t1')
    fake.settle()
    fake.startOwnRun('from the extension')
    await prompt('later', 'followUp')
    expect(await registry.abort('t1')).toEqual({ kind: 'stopped', restored: ['later'] })
    expect(fake.calls).toContain('abort')
  })
})
