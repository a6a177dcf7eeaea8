import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Observation } from '../../src/schemas/index.js'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import { FakeModelCatalog, FakeRuntimeFactory, hostOptions } from './fake-runtime.js'

let dir: string
let runtimes: FakeRuntimeFactory
let registry: ThreadRegistry

const prompt = (id: string, message: string, extra: Partial<{ admission: 'enqueue' | 'reject'; deliverAs: 'steer' | 'followUp' }> = {}) =>
  registry.prompt(id, { message, admission: 'enqueue', deliverAs: 'steer', ...extra })

/** Waits for what must happen (instead of sleeping and hoping it did). */
async function until(done: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms
  while (!done()) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 2))
  }
}

async function observe(id: string): Promise<Observation[]> {
  const seen: Observation[] = []
  const feed = await registry.feed(id)
  feed!.observe((o) => seen.push(o))
  return seen
}

const confirm = { spec: { method: 'confirm' as const, title: 'Deploy?', message: 'to prod' }, origin: { kind: 'extension' as const } }

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'threadhost-registry-'))
  runtimes = new FakeRuntimeFactory()
  registry = await ThreadRegistry.open(hostOptions(dir, runtimes))
})

afterEach(async () => {
  for (const fake of runtimes.runtimes.values()) {
    fake.holdAbort = false
    fake.settle()
  }
  await registry.shutdown()
  await rm(dir, { recursive: true, force: true })
})

describe('thread registry', () => {
  it('a prompt to an unknown id creates the thread, builds its runtime and starts run 1', async () => {
    const outcome = await prompt('t1', 'hello')
    expect(outcome).toMatchObject({ kind: 'admitted', run: 1, queued: false })
    expect(runtimes.built).toEqual(['t1'])
    expect(runtimes.get('t1').calls).toEqual(['prompt:hello'])
    expect(registry.get('t1')).toMatchObject({ live: true, busy: true, run: 1 })
  })

  it('abort stops the run and never disposes; a repeat while it is pending is the same answer, not a second call; the next prompt waits for the settle', async () => {
    await prompt('t1', 'hello')
    const fake = runtimes.get('t1')
    fake.holdAbort = true
    expect(await registry.abort('t1')).toEqual({ kind: 'stopped', restored: [] })
    expect(await registry.abort('t1')).toEqual({ kind: 'stopped', restored: [] })
    expect(fake.calls.filter((c) => c === 'abort')).toHaveLength(1)
    expect(fake.disposed).toBe(false)

    let started = false
    const next = prompt('t1', 'again').then((o) => ((started = true), o))
    // Wait for what must happen — the prompt parked behind the stop — then check it did not start.
    await until(() => registry.liveThreads()[0]?.actor.getSnapshot().context.pending.length === 1)
    expect(started).toBe(false)
    expect(fake.calls).not.toContain('prompt:again')
    fake.settle()
    expect(await next).toMatchObject({ kind: 'admitted', run: 2, queued: false })
    expect(fake.calls).toEqual(['prompt:hello', 'clearQueue', 'abort', 'prompt:again'])
  })

  it('abort hands back the queued prompts in order, steering first, and clears the runtime queue; a repeat restores nothing', async () => {
    await prompt('t1', 'hello')
    await prompt('t1', 'f1', { deliverAs: 'followUp' })
    await prompt('t1', 's1')
    await prompt('t1', 's2')
    const fake = runtimes.get('t1')
    fake.holdAbort = true
    expect(await registry.abort('t1')).toEqual({ kind: 'stopped', restored: ['s1', 's2', 'f1'] })
    expect(fake.steering).toEqual([])
    expect(fake.followUps).toEqual([])
    expect(await registry.abort('t1')).toEqual({ kind: 'stopped', restored: [] })
  })

  it('a question a tool asks from its abort listener as its thread is deleted is refused, never left waiting — with or without a question open', async () => {
    for (const [id, open] of [
      ['t1', false],
      ['t2', true],
    ] as const) {
      await prompt(id, 'hello')
      const fake = runtimes.get(id)
      const first = open ? fake.ui.ask(confirm) : undefined
      let asked: ReturnType<typeof fake.ui.ask> | undefined
      fake.onAbort = () => void (asked = fake.ui.ask(confirm))
      expect(await registry.delete(id)).toEqual({ kind: 'deleted' })
      expect(asked).toBeDefined()
      expect(await asked).toEqual({ outcome: 'refused' })
      if (first) expect((await first).outcome).toBe('cancelled')
    }
  })

  it('abort on a thread that is not live is not-live, and with nothing in flight is idle; neither reaches the runtime', async () => {
    expect(await registry.abort('never')).toEqual({ kind: 'not-live' })
    await prompt('t1', 'hello')
    runtimes.get('t1').settle()
    expect(await registry.abort('t1')).toEqual({ kind: 'idle' })
    expect(runtimes.get('t1').calls).toEqual(['prompt:hello'])
  })

  it('abort naming a run that is not the current run is refused as stale', async () => {
    await prompt('t1', 'hello')
    expect(await registry.abort('t1', 7)).toEqual({ kind: 'stale-run' })
    expect(runtimes.get('t1').calls).not.toContain('abort')
  })

  it('on a stop the feed shows the emptied queue, then each open dialog settled aborted, then settled, then status not busy', async () => {
    await prompt('t1', 'hello')
    await prompt('t1', 'queued')
    const fake = runtimes.get('t1')
    const seen = await observe('t1')
    const asked = fake.ui.ask(confirm)
    registry.abort('t1')
    expect(await asked).toEqual({ outcome: 'aborted', answer: undefined })
    await until(() => seen.some((o) => o.type === 'status'))
    const types = seen.map((o) => o.type)
    expect(types).toEqual(['extension-ui-request', 'queue', 'dialog-settled', 'settled', 'status'])
    expect(seen.at(-2)).toMatchObject({ type: 'settled', run: 1, aborted: true })
    expect(seen.at(-1)).toMatchObject({ type: 'status', busy: false, live: true, run: 1 })
  })

  it('a question asked while a stop is pending is refused with its cancel value and shows nothing', async () => {
    await prompt('t1', 'hello')
    const fake = runtimes.get('t1')
    fake.holdAbort = true
    registry.abort('t1')
    const seen = await observe('t1')
    expect(await fake.ui.ask(confirm)).toEqual({ outcome: 'refused' })
    expect(seen.filter((o) => o.type === 'extension-ui-request' || o.type === 'dialog-settled')).toEqual([])
  })

  it('a dialog answer is checked against the question it names: unknown is 404-like, a wrong answer is refused and stays open, a right one settles once', async () => {
    await prompt('t1', 'hello')
    const fake = runtimes.get('t1')
    const asked = fake.ui.ask({ spec: { method: 'select', title: 'Pick', options: ['a', 'b'] }, origin: { kind: 'extension' } })
    const feed = await registry.feed('t1')
    const [open] = feed!.view.openDialogs
    expect(await registry.answer('t1', { id: 'nope', value: 'a' })).toEqual({ kind: 'unknown' })
    expect(await registry.answer('t1', { id: open.id, value: 'c' })).toEqual({ kind: 'refused', refusal: "'c' is not one of the offered options" })
    expect(feed!.view.openDialogs).toHaveLength(1)
    expect(await registry.answer('t1', { id: open.id, value: 'b' })).toEqual({ kind: 'answered' })
    expect(await asked).toEqual({ outcome: 'answered', answer: { value: 'b' } })
    expect(await registry.answer('t1', { id: open.id, value: 'b' })).toEqual({ kind: 'unknown' })
    expect(feed!.view.openDialogs).toEqual([])
  })

  it('a dialog with a timeout settles timeout and the extension sees no answer', async () => {
    await prompt('t1', 'hello')
    const seen = await observe('t1')
    const result = await runtimes.get('t1').ui.ask({ ...confirm, timeoutMs: 10 })
    expect(result.outcome).toBe('timeout')
    expect(seen.find((o) => o.type === 'extension-ui-request')).toMatchObject({ expiresAt: expect.any(Number) })
    expect(seen.find((o) => o.type === 'dialog-settled')).toMatchObject({ outcome: 'timeout' })
  })

  it("a dialog whose extension signal aborts settles aborted; a signal already aborted shows nothing", async () => {
    await prompt('t1', 'hello')
    const seen = await observe('t1')
    const controller = new AbortController()
    const asked = runtimes.get('t1').ui.ask({ ...confirm, signal: controller.signal })
    controller.abort()
    expect((await asked).outcome).toBe('aborted')
    expect(await runtimes.get('t1').ui.ask({ ...confirm, signal: controller.signal })).toEqual({ outcome: 'refused' })
    expect(seen.filter((o) => o.type === 'extension-ui-request')).toHaveLength(1)
  })

  it('unclaimed prompts reported at a settle start the next run instead of riding into a later one', async () => {
    await prompt('t1', 'hello')
    const fake = runtimes.get('t1')
    fake.settle([{ messageId: 'm9', text: 'late steer' }])
    expect(fake.calls).toEqual(['prompt:hello', 'prompt:late steer'])
    expect(registry.get('t1')).toMatchObject({ busy: true, run: 2 })
  })

  it('admission reject refuses a prompt while busy and queues nothing', async () => {
    await prompt('t1', 'hello')
    expect(await prompt('t1', 'no', { admission: 'reject' })).toEqual({ kind: 'busy' })
    expect(runtimes.get('t1').calls).toEqual(['prompt:hello'])
  })

  it('delete disposes a live thread: its open dialogs settle cancelled and its runtime is released', async () => {
    await prompt('t1', 'hello')
    const fake = runtimes.get('t1')
    const asked = fake.ui.ask(confirm)
    expect(await registry.delete('t1')).toEqual({ kind: 'deleted' })
    expect((await asked).outcome).toBe('cancelled')
    expect(fake.disposed).toBe(true)
    expect(registry.get('t1')).toBeUndefined()
    expect(await registry.delete('t1')).toEqual({ kind: 'unknown' })
  })

  it('shutdown reports queued prompts rejected with reason shutdown and settles open dialogs aborted', async () => {
    await prompt('t1', 'hello')
    await prompt('t1', 'waiting')
    const fake = runtimes.get('t1')
    const seen = await observe('t1')
    const asked = fake.ui.ask(confirm)
    await registry.shutdown()
    expect((await asked).outcome).toBe('aborted')
    expect(seen.find((o) => o.type === 'prompt-rejected')).toMatchObject({ reason: 'shutdown' })
    expect(seen.at(-1)).toMatchObject({ type: 'status', live: false })
    expect(await prompt('t1', 'after')).toEqual({ kind: 'closing' })
  })

  it('an idle thread goes cold after the idle time: followers see live false and the next prompt builds a new runtime', async () => {
    await registry.shutdown()
    registry = await ThreadRegistry.open(hostOptions(dir, runtimes, { idleMs: 20 }))
    await prompt('t2', 'hello')
    runtimes.get('t2').settle()
    const seen = await observe('t2')
    await new Promise((r) => setTimeout(r, 60))
    expect(seen.at(-1)).toMatchObject({ type: 'status', live: false })
    expect(runtimes.get('t2').disposed).toBe(true)
    expect(await prompt('t2', 'again')).toMatchObject({ kind: 'admitted', run: 2 })
    expect(runtimes.built).toEqual(['t2', 't2'])
  })

  it('a deleted id cannot be reused until its files are gone, and the new thread keeps its own', async () => {
    await prompt('t1', 'hello')
    const fake = runtimes.get('t1')
    fake.holdAbort = true
    const deleting = registry.delete('t1')
    expect(await prompt('t1', 'too soon')).toEqual({ kind: 'rejected', reason: 'deleted' })
    expect(await registry.create({ id: 't1' })).toEqual({ kind: 'taken' })
    expect(registry.get('t1')).toBeUndefined()
    fake.settle()
    expect(await deleting).toEqual({ kind: 'deleted' })
    expect(await registry.create({ id: 't1', title: 'Second life' })).toEqual({ kind: 'created', threadId: 't1' })
    await registry.shutdown()
    registry = await ThreadRegistry.open(hostOptions(dir, runtimes))
    expect(registry.get('t1')).toMatchObject({ title: 'Second life' })
  })

  it('ask_user_question calls waiting when a thread is deleted hear cancelled instead of hanging', async () => {
    await prompt('t1', 'hello')
    const fake = runtimes.get('t1')
    const question = { id: 'q1', prompt: 'Pick', mode: 'single' as const, options: [{ value: 'a', label: 'a' }], allowOther: false }
    const shown = fake.ui.askUser(question, {})
    const waiting = fake.ui.askUser(question, {})
    await registry.delete('t1')
    expect(await shown).toEqual({ status: 'cancelled' })
    expect(await waiting).toEqual({ status: 'cancelled' })
  })

  it('a prompt that reaches a thread just as it is disposed is answered rejected, never left waiting', async () => {
    await prompt('t1', 'hello')
    const [live] = registry.liveThreads()
    await registry.delete('t1')
    expect(await live.prompt({ text: 'late', admission: 'enqueue', deliverAs: 'steer' })).toEqual({ kind: 'rejected', reason: 'disposed' })
  })

  it('a run interrupted by delete or shutdown still ends on the feed: settled aborted, then status not live', async () => {
    await prompt('t1', 'hello')
    const seen = await observe('t1')
    await registry.shutdown()
    expect(seen.map((o) => o.type).slice(-2)).toEqual(['settled', 'status'])
    expect(seen.at(-2)).toMatchObject({ run: 1, aborted: true })
  })

  it('a cold thread nobody follows keeps no feed in memory; following it again reads it back', async () => {
    await registry.create({ id: 'cold' })
    const first = await registry.feed('cold')
    const unfollow = first!.follow({ send: () => {}, close: () => {} })
    expect(await registry.feed('cold')).toBe(first)
    unfollow()
    const second = await registry.feed('cold')
    expect(second).not.toBe(first)
    expect(second!.seq).toBe(first!.seq)
  })

  it('threads survive a restart: the index keeps titles and run counters', async () => {
    await registry.create({ id: 'keep', title: 'Kept' })
    await prompt('keep', 'hello')
    runtimes.get('keep').settle()
    await registry.shutdown()
    registry = await ThreadRegistry.open(hostOptions(dir, runtimes))
    expect(registry.get('keep')).toMatchObject({ title: 'Kept', live: false, run: 1 })
    expect(await registry.create({ id: 'keep' })).toEqual({ kind: 'taken' })
  })

  it('a thread whose session file is damaged is listed unavailable: prompts and model changes are refused, no runtime is built, a rename and a delete still work', async () => {
    await registry.create({ id: 'hurt', title: 'Hurt' })
    await registry.create({ id: 'fine' })
    runtimes.damage('hurt', 'line 3 is not JSON')
    expect(await prompt('hurt', 'hello')).toEqual({ kind: 'rejected', reason: 'unavailable' })
    expect(registry.get('hurt')).toMatchObject({ unavailable: 'line 3 is not JSON', live: false })
    expect(await prompt('hurt', 'again')).toEqual({ kind: 'rejected', reason: 'unavailable' })
    expect(await registry.update('hurt', { model: 'other' })).toEqual({ kind: 'unavailable', reason: 'line 3 is not JSON' })
    expect(runtimes.built).not.toContain('hurt')
    // Only that thread: the others run as before.
    expect(await prompt('fine', 'hello')).toMatchObject({ kind: 'admitted', run: 1 })
    expect(registry.get('fine')?.unavailable).toBeUndefined()
    expect(await registry.update('hurt', { title: 'Renamed' })).toMatchObject({ kind: 'updated', summary: { title: 'Renamed' } })
    expect(await registry.delete('hurt')).toEqual({ kind: 'deleted' })
    expect(registry.get('hurt')).toBeUndefined()
  })

  it('a damaged session found while following a cold thread makes it unavailable at once, without building a runtime', async () => {
    await registry.create({ id: 'cold' })
    runtimes.damage('cold', 'its header line is not a session header')
    const feed = await registry.feed('cold')
    expect(feed?.view.transcript).toEqual([])
    expect(registry.get('cold')?.unavailable).toBe('its header line is not a session header')
    expect(await registry.commands('cold')).toBeDefined()
    expect(runtimes.built).toEqual([])
  })

  it('a session file found damaged by the check after a start is listed unavailable before anyone touches the thread', async () => {
    await registry.create({ id: 'old', title: 'Old' })
    await registry.shutdown()
    runtimes.damage('old', 'line 2 is not a JSON entry')
    const persisted = [{ threadId: 'old', createdAt: 1, updatedAt: 1, lastRun: 0, damaged: 'line 2 is not a JSON entry' }]
    registry = await ThreadRegistry.open(hostOptions(dir, Object.assign(runtimes, { listPersisted: async () => persisted })))
    await registry.surveyed
    expect(registry.list()).toEqual([expect.objectContaining({ threadId: 'old', title: 'Old', unavailable: 'line 2 is not a JSON entry' })])
    expect(runtimes.built).toEqual([])
  })

  it('an untitled thread is listed by its first prompt and last reply after a restart, without reading its conversation', async () => {
    await prompt('t', 'Plan the release')
    runtimes.get('t').emit({ type: 'user-message', messageId: 'x', text: 'Plan the release' })
    runtimes.get('t').emit({ type: 'assistant-end', messageId: 'r1', text: 'Here is a plan.', stopReason: 'stop' })
    runtimes.get('t').settle()
    await registry.shutdown()
    const blind = Object.assign(runtimes, {
      readTranscript: async () => {
        throw new Error('a summary must not read the conversation')
      },
    })
    registry = await ThreadRegistry.open(hostOptions(dir, blind))
    expect(registry.get('t')).toMatchObject({ title: 'Plan the release', preview: 'Here is a plan.' })
  })

  it('a rename that finishes after a delete of its thread does not bring the thread back at the next start', async () => {
    await registry.create({ id: 'gone', title: 'Gone' })
    let allow!: () => void
    const checked = new Promise<void>((r) => (allow = r))
    const models = new FakeModelCatalog()
    const check = models.check.bind(models)
    models.check = async (name) => {
      await checked
      return check(name)
    }
    await registry.shutdown()
    registry = await ThreadRegistry.open(hostOptions(dir, runtimes, { models }))
    const renamed = registry.update('gone', { title: 'Renamed', model: 'lab/fast' })
    expect(await registry.delete('gone')).toEqual({ kind: 'deleted' })
    allow()
    await renamed
    await registry.shutdown()
    registry = await ThreadRegistry.open(hostOptions(dir, runtimes))
    expect(registry.get('gone')).toBeUndefined()
  })

  it('a shutdown waits for a delete under way: what was answered deleted stays deleted', async () => {
    await prompt('going', 'hello')
    runtimes.get('going').settle()
    // its runtime takes a while to let go, so the delete is still under way when the shutdown starts
    let finish!: () => void
    const releasing = new Promise<void>((r) => (finish = r))
    const runtime = runtimes.get('going')
    const dispose = runtime.dispose.bind(runtime)
    runtime.dispose = async () => {
      await releasing
      return dispose()
    }
    const deleted = registry.delete('going')
    const stopped = registry.shutdown()
    finish()
    expect(await deleted).toEqual({ kind: 'deleted' })
    await stopped
    registry = await ThreadRegistry.open(hostOptions(dir, runtimes))
    expect(registry.get('going')).toBeUndefined()
  })

  it('a runtime that fails to build leaves the thread cold, and the next prompt builds again', async () => {
    const create = runtimes.create.bind(runtimes)
    let fail = true
    runtimes.create = async (options) => {
      if (fail) throw new Error('provider down')
      return create(options)
    }
    expect(await prompt('flaky', 'one')).toEqual({ kind: 'build-failed', reason: 'provider down' })
    expect(registry.get('flaky')).toMatchObject({ live: false, run: 0 })
    fail = false
    expect(await prompt('flaky', 'two')).toMatchObject({ kind: 'admitted', run: 1 })
  })

  it('a delete while the runtime is being built disposes what the build made; nothing of the thread stays live', async () => {
    let finish!: () => void
    const gate = new Promise<void>((r) => (finish = r))
    const create = runtimes.create.bind(runtimes)
    runtimes.create = async (options) => {
      await gate
      return create(options)
    }
    const prompted = prompt('short', 'hello')
    await until(() => registry.get('short') !== undefined)
    const deleted = registry.delete('short')
    finish()
    expect(await prompted).toEqual({ kind: 'rejected', reason: 'deleted' })
    expect(await deleted).toEqual({ kind: 'deleted' })
    expect(runtimes.get('short').disposed).toBe(true)
    expect(registry.liveThreads()).toEqual([])
    expect(registry.get('short')).toBeUndefined()
  })

  it('a thread whose machine fails ends as a stopped thread does — said, its queue handed back, its question and run settled aborted, its runtime released — and the next prompt builds it again', async () => {
    await prompt('t1', 'first')
    const seen = await observe('t1')
    const fake = runtimes.get('t1')
    expect(await prompt('t1', 'later', { deliverAs: 'followUp' })).toMatchObject({ kind: 'admitted', run: 1, queued: true })
    const heard = fake.ui.ask(confirm)
    await until(() => seen.some((o) => o.type === 'extension-ui-request'))
    const dialogId = seen.find((o) => o.type === 'extension-ui-request')!.id
    // An action that throws fails the machine: the runtime refuses to queue.
    fake.followUp = () => {
      throw new Error('boom')
    }
    // The request the machine was handling when it failed is answered, not left hanging.
    expect(await prompt('t1', 'breaks it', { deliverAs: 'followUp' })).toMatchObject({ kind: 'rejected' })
    await until(() => fake.disposed)
    const after = seen.filter((o) => o.type !== 'queue')
    expect(after.find((o) => o.type === 'failure')).toMatchObject({ message: expect.stringContaining('boom') })
    expect(after.filter((o) => o.type === 'prompt-rejected')).toMatchObject([{ text: 'later' }])
    expect(after.filter((o) => o.type === 'dialog-settled')).toEqual([expect.objectContaining({ id: dialogId, outcome: 'aborted' })])
    // The extension that asked hears what every follower saw.
    expect(await heard).toEqual({ outcome: 'aborted' })
    expect(after.filter((o) => o.type === 'settled')).toEqual([expect.objectContaining({ run: 1, aborted: true })])
    expect(registry.get('t1')).toMatchObject({ live: false, busy: false, openDialogs: 0 })

    expect(await prompt('t1', 'again')).toMatchObject({ kind: 'admitted', run: 2, queued: false })
    expect(runtimes.built).toEqual(['t1', 't1'])
    expect(runtimes.get('t1')).not.toBe(fake)
    expect(registry.get('t1')).toMatchObject({ live: true, busy: true, run: 2 })
  })

  it('a machine that fails in the step that settled its run settles it once, and hands back the prompt it was carrying into the next', async () => {
    await prompt('t1', 'first')
    const seen = await observe('t1')
    const fake = runtimes.get('t1')
    fake.prompt = () => {
      throw new Error('boom')
    }
    // The run ends with a prompt it did not take: the machine settles the run, then starts the next with it, which throws.
    fake.settle([{ messageId: 'carried-1', text: 'carried' }])
    await until(() => fake.disposed)
    expect(seen.filter((o) => o.type === 'settled')).toEqual([expect.objectContaining({ run: 1 })])
    expect(seen.filter((o) => o.type === 'prompt-rejected')).toEqual([expect.objectContaining({ messageId: 'carried-1', text: 'carried' })])
    expect(seen.at(-1)).toMatchObject({ type: 'status', live: false, busy: false })
    expect(await prompt('t1', 'again')).toMatchObject({ kind: 'admitted', run: 2 })
  })
})
