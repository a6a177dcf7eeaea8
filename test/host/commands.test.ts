import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { closest, parseCommand } from '../../src/host/commands.js'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import { FakeRuntimeFactory, hostOptions } from './fake-runtime.js'

let dir: string
let runtimes: FakeRuntimeFactory
let registry: ThreadRegistry

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'threadhost-commands-'))
  runtimes = new FakeRuntimeFactory()
  registry = await ThreadRegistry.open(hostOptions(dir, runtimes))
})

afterEach(async () => {
  await registry.shutdown()
  await rm(dir, { recursive: true, force: true })
})

const send = (message: string) => registry.prompt('t', { message, admission: 'enqueue', deliverAs: 'steer' })

describe('slash commands', () => {
  it('text that is not /word is a prompt; a path-like /a/b is text too', () => {
    expect(parseCommand('hello /name', [])).toEqual({ kind: 'text' })
    expect(parseCommand('/usr/bin is odd', [])).toEqual({ kind: 'text' })
  })

  it('close matches come nearest first, at most three, prefixes included', () => {
    expect(closest('nmae', ['name', 'model', 'thinking'])).toEqual(['/name'])
    expect(closest('mod', ['model', 'modal', 'name'])).toEqual(['/modal', '/model'])
    expect(closest('zzzzzz', ['name'])).toEqual([])
  })

  it('GET commands lists threadhost\'s own and the runtime\'s', async () => {
    await registry.create({ id: 't' })
    const names = (await registry.commands('t'))?.map((c) => `${c.kind}:${c.name}`)
    expect(names).toEqual(['threadhost:name', 'threadhost:model', 'threadhost:thinking', 'threadhost:compact', 'threadhost:new', 'extension:deploy'])
    expect(await registry.commands('nope')).toBeUndefined()
  })

  it('an unknown /command is refused with the closest names and reaches neither the runtime nor the feed', async () => {
    await registry.create({ id: 't' })
    expect(await send('/nmae Sprint notes')).toEqual({ kind: 'unknown-command', name: 'nmae', suggestions: ['/name'] })
    expect(await send('/depoly now')).toEqual({ kind: 'unknown-command', name: 'depoly', suggestions: ['/deploy'] })
    expect(runtimes.get('t').calls).toEqual([])
  })

  it('/name, /model and /thinking change the thread and start no run; a runtime command is prompted as text', async () => {
    await registry.create({ id: 't' })
    expect(await send('/name Sprint notes')).toMatchObject({ kind: 'command-done', summary: { title: 'Sprint notes' } })
    expect(await send('/model lab/deep')).toMatchObject({ kind: 'command-done', summary: { model: 'lab/deep' } })
    expect(await send('/thinking high')).toMatchObject({ kind: 'command-done', summary: { thinkingLevel: 'high' } })
    expect(await send('/model lab/locked')).toEqual({ kind: 'invalid', reason: expect.stringMatching(/no credentials/) })
    expect(await send('/thinking loud')).toEqual({ kind: 'invalid', reason: expect.stringMatching(/one of off/) })
    expect(runtimes.get('t').calls).toEqual(['configure:lab/deep:', 'configure::high'])
    expect(await send('/deploy now')).toMatchObject({ kind: 'admitted' })
    expect(runtimes.get('t').calls.at(-1)).toBe('prompt:/deploy now')
  })
})
