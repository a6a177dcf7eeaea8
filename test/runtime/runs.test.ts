import { afterEach, describe, expect, it } from 'vitest'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { createFauxCore, createProvider, fauxAssistantMessage, fauxProvider } from '@earendil-works/pi-ai'
import type { ExtensionFactory } from '@earendil-works/pi-coding-agent'
import { takeQueued } from '../../src/runtime/index.js'
import { answered, FakeBridge, piRuntimes, Recorder, tempDir, type PiTestOptions } from './helpers.js'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function setup(extra: Omit<Partial<PiTestOptions>, 'dataDir'> = {}, model = 'demo') {
  const tmp = tempDir()
  cleanups.push(tmp.cleanup)
  const factory = await piRuntimes({ dataDir: tmp.dir, ...extra })
  const ui = new FakeBridge()
  const runtime = await factory.create({ threadId: 'r', model, ui })
  cleanups.push(() => runtime.dispose())
  return { ui, runtime, rec: new Recorder(runtime), dir: tmp.dir }
}

const CONFIRM = 'call ui_dialog {"method":"confirm","title":"Proceed?"}'

describe('runs: steer, follow-up, Stop and settle', () => {
  it('a steered prompt is delivered after the tool batch as user-message with its own messageId', async () => {
    const { runtime, rec, ui } = await setup()
    runtime.prompt({ messageId: 'p1', text: CONFIRM })
    const ask = await ui.nthAsk(0)
    runtime.steer({ messageId: 's1', text: 'turn left' })
    runtime.followUp({ messageId: 'f1', text: 'and then stop' })
    await rec.queueIs({ steering: ['turn left'], followUp: ['and then stop'] })
    ask.resolve(answered({ confirmed: true }))
    const settled = await rec.next('settled')
    expect(settled).toEqual({ type: 'settled', aborted: false, unclaimed: [] })
    expect(rec.of('user-message').map((e) => [e.messageId, e.text])).toEqual([
      ['p1', CONFIRM],
      ['s1', 'turn left'],
      ['f1', 'and then stop'],
    ])
    const replies = rec.of('assistant-end').map((e) => e.text)
    expect(replies).toContain('You said: turn left')
    expect(replies.at(-1)).toBe('You said: and then stop')
    expect(rec.of('queue').at(-1)).toEqual({ type: 'queue', steering: [], followUp: [] })
    // the transcript keeps the host's ids and the run
    const users = runtime.transcript().filter((e) => e.kind === 'user')
    expect(users.map((e) => [e.messageId, e.run])).toEqual([
      ['p1', 1],
      ['s1', 1],
      ['f1', 1],
    ])
  })

  it('Stop while a tool waits on a dialog: clearQueue, abort, bridge settles aborted → tool gets its cancel value, settled {aborted:true}', async () => {
    const { runtime, rec, ui } = await setup()
    runtime.prompt({ messageId: 'p1', text: CONFIRM })
    const ask = await ui.nthAsk(0)
    // host-style Stop
    const cleared = runtime.clearQueue()
    const stopping = runtime.abort()
    expect(ask.request.signal?.aborted).toBe(true) // pi raised the signal synchronously
    ui.settleAllAborted()
    await stopping
    const settled = await rec.next('settled')
    expect(cleared).toEqual({ steering: [], followUp: [] })
    expect(settled).toEqual({ type: 'settled', aborted: true, unclaimed: [] })
    expect(rec.of('tool-end')[0].result.text).toBe('{"outcome":"aborted","value":false}')
    expect(runtime.transcript().some((e) => e.kind === 'stopped')).toBe(true)
  })

  it('Stop while ask_user_question waits: the tool reports cancelled and nothing hangs', async () => {
    const { runtime, rec, ui } = await setup()
    runtime.prompt({ messageId: 'p1', text: 'call ask_user_question {"question":"Why?","mode":"text"}' })
    const q = await ui.nthQuestion(0)
    runtime.clearQueue()
    const stopping = runtime.abort()
    q.resolve({ status: 'cancelled' })
    await stopping
    expect(await rec.next('settled')).toMatchObject({ aborted: true })
    expect(rec.of('tool-end')[0].result.text).toBe('cancelled')
  })

  it('Stop with queued steer and follow-ups hands them back (steering first) and none of them ever runs', async () => {
    const { runtime, rec, ui } = await setup()
    runtime.prompt({ messageId: 'p1', text: CONFIRM })
    await ui.nthAsk(0)
    runtime.followUp({ messageId: 'f1', text: 'later one' })
    runtime.steer({ messageId: 's1', text: 'now one' })
    runtime.followUp({ messageId: 'f2', text: 'later two' })
    runtime.steer({ messageId: 's2', text: 'now two' })

    const cleared = runtime.clearQueue()
    const stopping = runtime.abort()
    ui.settleAllAborted()
    await stopping
    expect(await rec.next('settled')).toEqual({ type: 'settled', aborted: true, unclaimed: [] })
    expect(cleared).toEqual({
      steering: [
        { messageId: 's1', text: 'now one' },
        { messageId: 's2', text: 'now two' },
      ],
      followUp: [
        { messageId: 'f1', text: 'later one' },
        { messageId: 'f2', text: 'later two' },
      ],
    })
    expect(rec.of('queue').at(-1)).toEqual({ type: 'queue', steering: [], followUp: [] })

    // A later prompt does not carry them along.
    runtime.prompt({ messageId: 'p2', text: 'fresh start' })
    await rec.next('settled', 2)
    expect(rec.of('user-message').map((e) => e.messageId)).toEqual(['p1', 'p2'])
    const texts = runtime.transcript().map((e) => ('text' in e ? e.text : e.kind))
    for (const t of ['now one', 'now two', 'later one', 'later two']) {
      expect(texts.join('\n')).not.toContain(t)
    }
    expect(rec.of('assistant-end').at(-1)?.text).toBe('You said: fresh start')
  })

  it('"slow 50" stops promptly when aborted mid-stream', async () => {
    const { runtime, rec } = await setup({ demoDelayMs: 10 })
    runtime.prompt({ messageId: 'p', text: 'slow 50' })
    await rec.next('assistant-delta', 3)
    const t0 = Date.now()
    await runtime.abort()
    const settled = await rec.next('settled')
    expect(Date.now() - t0).toBeLessThan(200)
    expect(settled.aborted).toBe(true)
    const end = rec.of('assistant-end')[0]
    expect(end.stopReason).toBe('aborted')
    expect(rec.text().split(' ').length).toBeLessThan(50)
    expect(runtime.transcript().at(-1)).toEqual({ kind: 'stopped', run: 1 })
  })

  it('"slow 5" streams exactly one word per chunk when not stopped', async () => {
    const { runtime, rec } = await setup({ demoDelayMs: 2 })
    runtime.prompt({ messageId: 'p', text: 'slow 5' })
    await rec.next('settled')
    expect(rec.of('assistant-delta').map((e) => e.text)).toEqual(['one ', 'two ', 'sky ', 'sun ', 'red'])
  })

  it('an extension listening to streamed deltas still hears every one, with its context', async () => {
    const heard: string[] = []
    const listener: ExtensionFactory = (pi) => {
      pi.on('turn_start', () => void heard.push('turn'))
      pi.on('message_update', (event, ctx) => {
        const e = event.assistantMessageEvent
        if (e.type === 'text_delta') heard.push(`${e.delta}@${ctx.cwd === undefined ? '?' : 'cwd'}`)
      })
    }
    const { runtime, rec } = await setup({ demoDelayMs: 2, extraExtensions: () => [listener] })
    runtime.prompt({ messageId: 'p', text: 'slow 3' }, 1)
    await rec.next('settled')
    expect(heard).toEqual(['turn', 'one @cwd', 'two @cwd', 'sky@cwd'])
    expect(rec.of('assistant-delta').map((e) => e.text)).toEqual(['one ', 'two ', 'sky'])
  })

  it('a prompt that arrives too late for the run (queued after the agent finished) comes back as unclaimed on settle', async () => {
    // pi 1.x drains follow-ups before it settles, but an extension's own agent_settled handler runs
    // after the loop is over and before subscribers hear the settle: a follow-up landing there is stranded.
    let settling!: () => void
    const ending = new Promise<void>((r) => (settling = r))
    const slowEnd: ExtensionFactory = (pi) => {
      pi.on('agent_settled', async () => {
        settling()
        await new Promise((r) => setTimeout(r, 150))
      })
    }
    const { runtime, rec } = await setup({ extraExtensions: () => [slowEnd] })
    runtime.prompt({ messageId: 'p', text: 'hi' })
    await ending
    runtime.followUp({ messageId: 'late', text: 'too late' })
    const settled = await rec.next('settled')
    expect(settled.unclaimed).toEqual([{ messageId: 'late', text: 'too late' }])
    expect(rec.of('queue').at(-1)).toEqual({ type: 'queue', steering: [], followUp: [] })
    // and it is gone from pi's queue: the next run does not pick it up
    runtime.prompt({ messageId: 'p2', text: 'next' })
    await rec.next('settled', 2)
    expect(rec.of('user-message').map((e) => e.messageId)).toEqual(['p', 'p2'])
  })

  it('steer or follow-up with no run in progress is refused rather than left to ride into the next run', async () => {
    const { runtime, rec } = await setup()
    runtime.followUp({ messageId: 'x', text: 'orphan' })
    expect(rec.of('prompt-rejected')).toEqual([{ type: 'prompt-rejected', messageId: 'x', reason: expect.stringMatching(/No run/) }])
  })

  it('a steer sent while the run is stopping is refused, not slipped into the aborted run', async () => {
    const { runtime, rec, ui } = await setup()
    runtime.prompt({ messageId: 'p1', text: CONFIRM })
    await ui.nthAsk(0)
    runtime.clearQueue()
    const stopping = runtime.abort()
    runtime.steer({ messageId: 's-late', text: 'sneak in' })
    ui.settleAllAborted()
    await stopping
    await rec.next('settled')
    expect(rec.of('prompt-rejected')).toEqual([{ type: 'prompt-rejected', messageId: 's-late', reason: 'The run is stopping.' }])
    expect(rec.of('user-message').map((e) => e.messageId)).toEqual(['p1'])
  })

  it('takeQueued matches texts oldest-first, keeps ids, and still returns a text the mirror lost', () => {
    const mirror = [
      { messageId: 'a', text: 'same' },
      { messageId: 'b', text: 'other' },
      { messageId: 'c', text: 'same' },
    ]
    const taken = takeQueued(mirror, ['same', 'same', 'ghost'])
    expect(taken.slice(0, 2)).toEqual([
      { messageId: 'a', text: 'same' },
      { messageId: 'c', text: 'same' },
    ])
    expect(taken[2].text).toBe('ghost')
    expect(taken[2].messageId).toBeTruthy()
    expect(mirror).toEqual([{ messageId: 'b', text: 'other' }])
  })

  it('a rejected prompt (no API key for the model) reports prompt-rejected and then settles', async () => {
    // A provider whose credentials are gone by the time the prompt runs (a logout, an expired login).
    const faux = createFauxCore({ provider: 'nokey' })
    const nokey = createProvider({
      id: 'nokey',
      auth: { apiKey: { name: 'nokey key', resolve: async () => undefined } },
      models: faux.models,
      api: { stream: faux.stream, streamSimple: faux.streamSimple },
    })
    const { runtime, rec } = await setup({ providers: [nokey] }, `nokey/${faux.models[0].id}`)
    runtime.prompt({ messageId: 'p', text: 'hi' })
    const settled = await rec.next('settled')
    expect(rec.of('prompt-rejected')).toEqual([{ type: 'prompt-rejected', messageId: 'p', reason: expect.stringMatching(/nokey/i) }])
    expect(settled).toEqual({ type: 'settled', aborted: false, unclaimed: [] })
  })

  it('an assistant message that ends in error is reported as assistant-end and an error event', async () => {
    const faux = fauxProvider({ provider: 'scripted' })
    faux.setResponses([fauxAssistantMessage('', { stopReason: 'error', errorMessage: 'model exploded' })])
    const { runtime, rec } = await setup({ providers: [faux.provider] }, `scripted/${faux.models[0].id}`)
    runtime.prompt({ messageId: 'p', text: 'hi' })
    await rec.next('settled')
    expect(rec.of('assistant-end')[0].stopReason).toBe('error')
    expect(rec.of('failure')).toEqual([{ type: 'failure', message: 'model exploded' }])
    expect(runtime.transcript().at(-1)).toEqual({ kind: 'error', message: 'model exploded' })
  })

  it('bash asks first, showing the command: "Deny" blocks it with a clear reason; "Allow once" runs it', async () => {
    const { runtime, rec, ui, dir } = await setup()
    runtime.prompt({ messageId: 'p', text: 'call bash {"command":"echo made > blocked.txt"}' })
    const ask = await ui.nthAsk(0)
    expect(ask.request.spec).toEqual({
      method: 'select',
      title: 'Allow bash to run this command?\n$ echo made > blocked.txt',
      options: ['Allow once', 'Allow for this thread', 'Deny'],
    })
    ask.resolve(answered({ value: 'Deny' }))
    await rec.next('settled')
    const blocked = rec.of('tool-end')[0]
    expect(blocked.isError).toBe(true)
    expect((blocked.result as { text: string }).text).toMatch(/denied this bash call/)
    expect(existsSync(join(dir, 'blocked.txt'))).toBe(false)

    runtime.prompt({ messageId: 'p2', text: 'call bash {"command":"echo hello-from-bash"}' })
    ;(await ui.nthAsk(1)).resolve(answered({ value: 'Allow once' }))
    await rec.next('settled', 2)
    const ran = rec.of('tool-end')[1]
    expect(ran.isError).toBe(false)
    expect((ran.result as { text: string }).text).toContain('hello-from-bash')
  })
})
