import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createFauxCore, createProvider } from '@earendil-works/pi-ai'
import { PiModels } from '../../src/runtime/index.js'
import { answered, FakeBridge, piRuntimes, Recorder, tempDir, type TestRuntime } from './helpers.js'
const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function setup(opts: { demoDelayMs?: number; threadId?: string; dataDir?: string } = {}) {
  let dataDir = opts.dataDir
  if (!dataDir) {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    dataDir = tmp.dir
  }
  const factory = await piRuntimes({ dataDir, demoDelayMs: opts.demoDelayMs ?? 0 })
  const ui = new FakeBridge()
  const runtime = await factory.create({ threadId: opts.threadId ?? 't1', model: 'demo', ui })
  cleanups.push(() => runtime.dispose())
  const rec = new Recorder(runtime)
  return { factory, ui, runtime, rec, dataDir }
}

const prompt = (runtime: TestRuntime, text: string, messageId = `m-${text.length}-${Math.random()}`) => {
  runtime.prompt({ messageId, text })
  return messageId
}

describe('pi runtime adapter (demo model, real AgentSession)', () => {
  it('a prompt streams back "You said:" and then settles, not aborted, with nothing unclaimed', async () => {
    const { runtime, rec } = await setup()
    const id = prompt(runtime, 'hello there')
    const settled = await rec.next('settled')
    expect(settled).toEqual({ type: 'settled', aborted: false, unclaimed: [] })
    expect(rec.of('user-message')).toEqual([{ type: 'user-message', messageId: id, text: 'hello there', at: expect.any(Number) }])
    expect(rec.text()).toBe('You said: hello there')
    expect(rec.of('assistant-delta').length).toBeGreaterThan(1)
    const end = rec.of('assistant-end')[0]
    expect(end).toMatchObject({ text: 'You said: hello there', stopReason: 'stop' })
    expect(rec.of('assistant-start')[0].messageId).toBe(end.messageId)
    // settled is the last thing a run reports
    expect(rec.events.at(-1)?.type).toBe('settled')
  })

  it('call ui_dialog asks the bridge, and the answered value reaches the tool and the final reply', async () => {
    const { runtime, rec, ui } = await setup()
    prompt(runtime, 'call ui_dialog {"method":"select","title":"Pick","options":["red","blue"]}')
    const ask = await ui.nthAsk(0)
    expect(ask.request.spec).toEqual({ method: 'select', title: 'Pick', options: ['red', 'blue'] })
    expect(ask.request.origin).toEqual({ kind: 'extension' })
    expect(ask.request.signal).toBeDefined()
    ask.resolve(answered({ value: 'blue' }))
    await rec.next('settled')
    const toolEnd = rec.of('tool-end')[0]
    expect(toolEnd.isError).toBe(false)
    expect(toolEnd.result).toMatchObject({ text: '{"outcome":"answered","value":"blue"}' })
    expect(rec.of('assistant-end').at(-1)?.text).toBe('Tool results:\n- ui_dialog: {"outcome":"answered","value":"blue"}')
  })

  it('call lines become tool calls in order: "call a {}" then "call b {}"', async () => {
    const { runtime, rec } = await setup()
    prompt(runtime, 'call a {"x":1}\n  call b {}  \n')
    await rec.next('settled')
    expect(rec.of('tool-start').map((e) => [e.name, e.args])).toEqual([
      ['a', { x: 1 }],
      ['b', {}],
    ])
    expect(rec.of('assistant-end')[0].stopReason).toBe('toolUse')
    expect(rec.of('tool-end').every((e) => e.isError)).toBe(true) // no such tools
    expect(rec.of('assistant-end').at(-1)?.text).toMatch(/^Tool results:\n- a \(error\): .*\n- b \(error\): /)
  })

  it('the model catalog refuses an unknown model, naming it', async () => {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    const models = await PiModels.create({ agentDir: tmp.dir })
    expect(await models.check('nope')).toEqual({ ok: false, reason: expect.stringMatching(/Unknown model 'nope'/) })
    expect(await models.check('nobody/nothing')).toEqual({ ok: false, reason: expect.stringMatching(/Unknown model 'nobody\/nothing'/) })
    expect(await models.check('demo')).toMatchObject({ ok: true, model: { name: 'demo', provider: 'threadhost' } })
  })

  it("new threads default to pi's own default model when it has credentials, else to demo", async () => {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    const agentDir = join(tmp.dir, 'agent')
    mkdirSync(agentDir, { recursive: true })
    const provider = (apiKey?: string) => ({
      baseUrl: 'http://127.0.0.1:9/v1',
      api: 'openai-completions',
      ...(apiKey ? { apiKey } : {}),
      models: [{ id: 'tiny', name: 'Tiny', contextWindow: 4096, maxTokens: 512 }],
    })
    writeFileSync(join(agentDir, 'models.json'), JSON.stringify({ providers: { local: provider('none-needed'), keyless: provider() } }))
    writeFileSync(join(agentDir, 'settings.json'), JSON.stringify({ defaultProvider: 'local', defaultModel: 'tiny' }))
    const models = await PiModels.create({ agentDir })
    expect(await models.piDefault(agentDir, tmp.dir)).toBe('local/tiny')
    expect((await models.list()).map((m) => m.name)).toEqual(['demo', 'local/tiny'])
    writeFileSync(join(agentDir, 'settings.json'), JSON.stringify({ defaultProvider: 'keyless', defaultModel: 'tiny' }))
    expect(await models.piDefault(agentDir, tmp.dir)).toBe('demo')
  })

  it('the model catalog refuses a known model without credentials, naming the provider, and does not list it', async () => {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    const models = await PiModels.create({ agentDir: tmp.dir })
    const core = createFauxCore({ provider: 'locked' })
    models.register(
      createProvider({
        id: 'locked',
        auth: { apiKey: { name: 'locked key', resolve: async () => undefined } },
        models: core.models,
        api: { stream: core.stream, streamSimple: core.streamSimple },
      }),
    )
    const name = `locked/${core.models[0].id}`
    expect(await models.check(name)).toEqual({ ok: false, reason: expect.stringMatching(/no credentials.*'locked'/) })
    expect((await models.list()).map((m) => m.name)).not.toContain(name)
  })

  it('run numbers count prompts and carry on across a restart', async () => {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    const first = await setup({ threadId: 'n', dataDir: tmp.dir })
    prompt(first.runtime, 'one')
    await first.rec.next('settled')
    prompt(first.runtime, 'two')
    await first.rec.next('settled', 2)
    await first.runtime.dispose()
    const second = await setup({ threadId: 'n', dataDir: tmp.dir })
    prompt(second.runtime, 'three')
    await second.rec.next('settled')
    expect(second.runtime.transcript().flatMap((e) => (e.kind === 'user' ? [e.run] : []))).toEqual([1, 2, 3])
  })

  it('several threads run side by side, each on its own faux registration', async () => {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    const a = await setup({ threadId: 'a', dataDir: tmp.dir })
    const b = await setup({ threadId: 'b', dataDir: tmp.dir })
    prompt(a.runtime, 'from a')
    prompt(b.runtime, 'from b')
    await Promise.all([a.rec.next('settled'), b.rec.next('settled')])
    expect(a.rec.text()).toBe('You said: from a')
    expect(b.rec.text()).toBe('You said: from b')
  })

  it('the conversation survives a restart: readTranscript reads the file cold, a new runtime resumes it', async () => {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    const first = await setup({ threadId: 'keep', dataDir: tmp.dir })
    const id = prompt(first.runtime, 'remember me')
    await first.rec.next('settled')
    const live = first.runtime.transcript()
    expect(existsSync(join(tmp.dir, 'sessions', 'keep', 'session.jsonl'))).toBe(true)
    await first.runtime.dispose()

    const factory = first.factory.factory
    const cold = await factory.readTranscript('keep')
    expect(cold).toEqual(live)
    expect(cold).toEqual([
      { kind: 'user', messageId: id, text: 'remember me', run: 1, at: expect.any(Number) },
      {
        kind: 'assistant',
        messageId: first.rec.of('assistant-end')[0].messageId,
        at: expect.any(Number),
        text: 'You said: remember me',
        streaming: false,
        stopReason: 'stop',
        model: 'demo',
        provider: 'threadhost',
        usage: expect.objectContaining({ cost: 0 }),
      },
    ])

    const second = await setup({ threadId: 'keep', dataDir: tmp.dir })
    prompt(second.runtime, 'again')
    await second.rec.next('settled')
    const entries = second.runtime.transcript()
    expect(entries.filter((e) => e.kind === 'user').map((e) => [e.text, 'run' in e ? e.run : 0])).toEqual([
      ['remember me', 1],
      ['again', 2],
    ])

    await factory.remove('keep')
    expect(await factory.readTranscript('keep')).toEqual([])
  })
})
