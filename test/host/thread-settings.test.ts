import { mkdirSync, symlinkSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SqliteThreadStore } from '../../src/host/store/sqlite.js'
import type { ThreadStore } from '../../src/host/store/port.js'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import { Workspaces } from '../../src/host/workspaces.js'
import { FakeRuntimeFactory, hostOptions } from './fake-runtime.js'

let dir: string
let root: string
let runtimes: FakeRuntimeFactory
let registry: ThreadRegistry

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'threadhost-settings-'))
  root = join(dir, 'root')
  mkdirSync(join(root, 'app'), { recursive: true })
  runtimes = new FakeRuntimeFactory()
  registry = await ThreadRegistry.open(hostOptions(dir, runtimes, { workspaces: new Workspaces([root]) }))
})

afterEach(async () => {
  await registry.shutdown()
  await rm(dir, { recursive: true, force: true })
})

describe('a thread\'s model, thinking level and workspace', () => {
  it('is created with them, and its runtime is built with them', async () => {
    expect(await registry.create({ id: 't', model: 'lab/deep', thinkingLevel: 'high', cwd: 'app' })).toEqual({ kind: 'created', threadId: 't' })
    expect(registry.get('t')).toMatchObject({ model: 'lab/deep', thinkingLevel: 'high', cwd: join(root, 'app') })
    await registry.prompt('t', { message: 'hi', admission: 'enqueue', deliverAs: 'steer' })
    expect(runtimes.options[0]).toMatchObject({ model: 'lab/deep', thinkingLevel: 'high', cwd: join(root, 'app') })
  })

  it('an unknown model, one without credentials, or a cwd outside the roots is refused and nothing is created', async () => {
    mkdirSync(join(dir, 'outside'))
    symlinkSync(join(dir, 'outside'), join(root, 'escape'))
    const refusals = [
      await registry.create({ id: 'a', model: 'nobody/nothing' }),
      await registry.create({ id: 'b', model: 'lab/locked' }),
      await registry.create({ id: 'c', cwd: join(dir, 'outside') }),
      await registry.create({ id: 'd', cwd: 'escape' }),
      await registry.create({ id: 'e', cwd: 'missing' }),
    ]
    expect(refusals.map((r) => r.kind)).toEqual(['invalid', 'invalid', 'invalid', 'invalid', 'invalid'])
    expect(refusals.map((r) => (r.kind === 'invalid' ? r.reason : ''))).toEqual([
      expect.stringMatching(/Unknown model 'nobody\/nothing'/),
      expect.stringMatching(/no credentials/),
      expect.stringMatching(/outside the allowed roots/),
      expect.stringMatching(/outside the allowed roots/),
      expect.stringMatching(/does not exist/),
    ])
    expect(registry.list()).toEqual([])
  })

  it('the thread machine numbers runs and tells the runtime; after a crash left the session ahead of the index, runs continue above it', async () => {
    await registry.create({ id: 't' })
    runtimes.persistedRuns.set('t', 5)
    expect(await registry.prompt('t', { message: 'hi', admission: 'enqueue', deliverAs: 'steer' })).toMatchObject({ kind: 'admitted', run: 6 })
    runtimes.get('t').settle()
    await new Promise((r) => setTimeout(r, 10))
    expect(await registry.prompt('t', { message: 'again', admission: 'enqueue', deliverAs: 'steer' })).toMatchObject({ run: 7 })
    expect(runtimes.get('t').runs).toEqual([6, 7])
  })

  it('PATCH changes the model between runs, is refused during a run, and refuses a model without credentials', async () => {
    await registry.create({ id: 't' })
    await registry.prompt('t', { message: 'hi', admission: 'enqueue', deliverAs: 'steer' })
    expect(await registry.update('t', { model: 'lab/fast' })).toEqual({ kind: 'busy' })
    runtimes.get('t').settle()
    await new Promise((r) => setTimeout(r, 10))
    expect(await registry.update('t', { model: 'lab/locked' })).toMatchObject({ kind: 'invalid' })
    expect(await registry.update('t', { model: 'lab/fast', thinkingLevel: 'low' })).toMatchObject({
      kind: 'updated',
      summary: { model: 'lab/fast', thinkingLevel: 'low' },
    })
    expect(runtimes.get('t').calls).toContain('configure:lab/fast:low')
    expect(await registry.update('nope', { title: 'x' })).toEqual({ kind: 'unknown' })
  })

  it('a model change whose row write the disk refuses leaves the thread as it was: the row and the runtime keep the old model', async () => {
    await registry.shutdown()
    let failPut = false
    const inner = SqliteThreadStore.open(join(dir, 'faulty')).store
    const store = new Proxy(inner, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown
        if (typeof value !== 'function') return value
        if (name === 'putThread' && failPut) return () => { throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }) }
        return (value as (...a: unknown[]) => unknown).bind(target)
      },
    }) as ThreadStore
    runtimes = new FakeRuntimeFactory()
    registry = await ThreadRegistry.open(hostOptions(dir, runtimes, { store }))
    await registry.create({ id: 't', model: 'lab/deep' })
    await registry.prompt('t', { message: 'hi', admission: 'enqueue', deliverAs: 'steer' })
    runtimes.get('t').settle()
    await new Promise((r) => setTimeout(r, 10))

    failPut = true
    await expect(registry.update('t', { model: 'lab/fast' })).rejects.toThrow(/ENOSPC/)
    failPut = false
    expect(runtimes.get('t').calls.filter((c) => c.startsWith('configure:'))).toEqual([])
    expect(registry.get('t')).toMatchObject({ model: 'lab/deep' })
  })
})
