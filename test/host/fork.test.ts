import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { forkPrompt } from '../../src/host/fork.js'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import type { TranscriptEntry } from '../../src/schemas/index.js'
import { FakeRuntimeFactory, hostOptions } from './fake-runtime.js'

const transcript: TranscriptEntry[] = [
  { kind: 'user', messageId: 'u1', text: 'first', run: 1 },
  { kind: 'assistant', messageId: 'a1', text: 'one', streaming: false },
  { kind: 'user', messageId: 'u2', text: 'second', run: 2 },
  { kind: 'tool', toolCallId: 't1', name: 'bash', args: {}, state: 'done' },
  { kind: 'assistant', messageId: 'a2', text: 'two', streaming: false },
]

let dir: string
let runtimes: FakeRuntimeFactory
let registry: ThreadRegistry

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'threadhost-fork-'))
  runtimes = new FakeRuntimeFactory()
  registry = await ThreadRegistry.open(hostOptions(dir, runtimes))
})

afterEach(async () => {
  await registry.shutdown()
  await rm(dir, { recursive: true, force: true })
})

describe('fork', () => {
  it('a fork cuts before the user message named, or before the prompt that produced the reply named', () => {
    expect(forkPrompt(transcript, 'u2')).toEqual({ messageId: 'u2', text: 'second' })
    expect(forkPrompt(transcript, 'a2')).toEqual({ messageId: 'u2', text: 'second' })
    expect(forkPrompt(transcript, 'a1')).toEqual({ messageId: 'u1', text: 'first' })
    expect(forkPrompt(transcript, 'nope')).toBeUndefined()
  })

  it("the fork keeps the source's model, thinking level and workspace, and is linked to it", async () => {
    await registry.create({ id: 'src', title: 'Source', model: 'lab/deep', thinkingLevel: 'high' })
    runtimes.transcripts.set('src', transcript)
    const outcome = await registry.fork('src', 'a2')
    if (outcome.kind !== 'forked') throw new Error(outcome.kind)
    expect(outcome.prompt).toBe('second')
    // it counts runs on from the history it holds (run 1 is in it), before any runtime is built
    expect(outcome.summary).toMatchObject({ model: 'lab/deep', thinkingLevel: 'high', cwd: dir, parentId: 'src', run: 1 })
    expect(runtimes.transcripts.get(outcome.summary.threadId)).toEqual(transcript.slice(0, 2))
    expect(registry.get('src')).not.toHaveProperty('parentId')
  })

  it('an unknown thread or message forks nothing', async () => {
    await registry.create({ id: 'src' })
    runtimes.transcripts.set('src', transcript)
    expect(await registry.fork('nope', 'u1')).toEqual({ kind: 'unknown' })
    expect(await registry.fork('src', 'nope')).toEqual({ kind: 'unknown-message' })
    expect(registry.list().map((t) => t.threadId)).toEqual(['src'])
  })

  it('a runtime that cannot fork is said so, and nothing is created', async () => {
    const plain = new FakeRuntimeFactory()
    Object.defineProperty(plain, 'fork', { value: undefined })
    const other = await ThreadRegistry.open(hostOptions(dir, plain, { store: undefined, dataDir: join(dir, 'other') }))
    await other.create({ id: 'src' })
    plain.transcripts.set('src', transcript)
    expect((await other.fork('src', 'u1')).kind).toBe('invalid')
    expect(other.list()).toHaveLength(1)
    await other.shutdown()
  })
})
