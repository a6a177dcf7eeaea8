import { afterEach, describe, expect, it } from 'vitest'
import { Type } from 'typebox'
import type { ExtensionFactory } from '@earendil-works/pi-coding-agent'
import { createExtensionUi } from '../../src/runtime/index.js'
import type { DialogResolution } from '../../src/runtime/port.js'
import { answered, FakeBridge, piRuntimes, Recorder, tempDir } from './helpers.js'

const quiet = { info: () => {}, warn: () => {}, error: () => {} }
const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A third-party-style extension tool that calls ctx.ui.<method> and reports exactly what pi returned. */
const probeExtension: ExtensionFactory = (pi) => {
  pi.registerTool({
    name: 'probe',
    label: 'probe',
    description: 'test probe',
    parameters: Type.Object({ method: Type.String(), timeout: Type.Optional(Type.Number()) }),
    async execute(_id, p, signal, _u, ctx) {
      const opts = { ...(signal ? { signal } : {}), ...(p.timeout ? { timeout: p.timeout } : {}) }
      let value: unknown
      if (p.method === 'confirm') value = await ctx.ui.confirm('Sure?', 'really', opts)
      else if (p.method === 'select') value = await ctx.ui.select('Pick', ['a', 'b'], opts)
      else if (p.method === 'input') value = await ctx.ui.input('Name', 'your name', opts)
      else if (p.method === 'editor') value = await ctx.ui.editor('Edit', 'draft')
      else if (p.method === 'custom') value = await ctx.ui.custom(() => ({ render: () => [], invalidate() {} }))
      else if (p.method === 'notify') {
        ctx.ui.notify('hello', 'warning')
        ctx.ui.setStatus('k', 'working')
        ctx.ui.setStatus('k', undefined)
      } else if (p.method === 'surface') {
        ctx.ui.setWidget('todo', ['- a', '- b'])
        ctx.ui.setWidget('fancy', () => ({ render: () => [], invalidate() {} }))
        ctx.ui.setWidget('todo', undefined)
        ctx.ui.setWorkingMessage('Indexing…')
        ctx.ui.setWorkingVisible(false)
        ctx.ui.setWorkingMessage()
        ctx.ui.setTitle('Indexed repo')
        ctx.ui.setEditorText('try: summarize')
        ctx.ui.pasteToEditor('pasted')
        value = ctx.ui.getEditorText()
      } else if (p.method === 'terminal') {
        ctx.ui.setFooter(() => ({ render: () => [], invalidate() {} }))
        ctx.ui.setHeader(undefined)
        const off = ctx.ui.onTerminalInput(() => undefined)
        off()
        value = [ctx.ui.setTheme('dark'), ctx.ui.getAllThemes(), await ctx.ui.custom(() => ({ render: () => [], invalidate() {} }))]
      }
      return { content: [{ type: 'text', text: JSON.stringify({ value: value === undefined ? '<undefined>' : value }) }], details: {} }
    },
  })
}

async function setup() {
  const tmp = tempDir()
  cleanups.push(tmp.cleanup)
  const warnings: string[] = []
  const log = { ...quiet, warn: (m: string) => warnings.push(m) }
  const factory = await piRuntimes({ dataDir: tmp.dir, log, extraExtensions: () => [probeExtension] })
  const ui = new FakeBridge()
  const runtime = await factory.create({ threadId: 'd', model: 'demo', ui })
  cleanups.push(() => runtime.dispose())
  return { ui, runtime, rec: new Recorder(runtime), warnings }
}

/** Runs `call probe {...}`, settles the one dialog it opens with `resolution`, returns what the extension saw. */
async function probe(method: string, resolution: DialogResolution | undefined, extra: Record<string, unknown> = {}) {
  const s = await setup()
  s.runtime.prompt({ messageId: 'p', text: `call probe ${JSON.stringify({ method, ...extra })}` })
  const ask = resolution ? await s.ui.nthAsk(0) : undefined
  ask?.resolve(resolution!)
  await s.rec.next('settled')
  const text = s.rec.of('tool-end')[0].result.text
  return { ...s, ask, seen: (JSON.parse(text) as { value: unknown }).value }
}

describe('ExtensionUIContext bound to the session: pi dialog calls → UiBridge.ask', () => {
  it('confirm answered {confirmed:true} → true; any non-answer → false', async () => {
    const yes = await probe('confirm', answered({ confirmed: true }))
    expect(yes.ask?.request.spec).toEqual({ method: 'confirm', title: 'Sure?', message: 'really' })
    expect(yes.seen).toBe(true)
    expect((await probe('confirm', answered({ confirmed: false }))).seen).toBe(false)
    expect((await probe('confirm', { outcome: 'cancelled' })).seen).toBe(false)
    expect((await probe('confirm', { outcome: 'refused' })).seen).toBe(false)
  })

  it('select answered → the value; cancelled/timeout → undefined', async () => {
    const pick = await probe('select', answered({ value: 'b' }))
    expect(pick.ask?.request.spec).toEqual({ method: 'select', title: 'Pick', options: ['a', 'b'] })
    expect(pick.seen).toBe('b')
    expect((await probe('select', { outcome: 'cancelled' })).seen).toBe('<undefined>')
    expect((await probe('select', { outcome: 'timeout' })).seen).toBe('<undefined>')
  })

  it('input answered → the value (placeholder passed on); aborted → undefined', async () => {
    const typed = await probe('input', answered({ value: 'Ada' }))
    expect(typed.ask?.request.spec).toEqual({ method: 'input', title: 'Name', placeholder: 'your name' })
    expect(typed.seen).toBe('Ada')
    expect((await probe('input', { outcome: 'aborted' })).seen).toBe('<undefined>')
  })

  it('editor answered → the value (prefill passed on, no signal since pi gives none); cancelled → undefined', async () => {
    const edited = await probe('editor', answered({ value: 'final text' }))
    expect(edited.ask?.request.spec).toEqual({ method: 'editor', title: 'Edit', prefill: 'draft' })
    expect(edited.ask?.request.signal).toBeUndefined()
    expect(edited.seen).toBe('final text')
    expect((await probe('editor', { outcome: 'cancelled' })).seen).toBe('<undefined>')
  })

  it('the extension timeout and signal are passed through to the bridge', async () => {
    const r = await probe('confirm', { outcome: 'timeout' }, { timeout: 1234 })
    expect(r.ask?.request.timeoutMs).toBe(1234)
    expect(r.ask?.request.signal).toBeInstanceOf(AbortSignal)
    expect(r.seen).toBe(false)
  })

  it('custom() resolves undefined with a logged warning; notify reaches ui.notify and setStatus reaches ui.setStatus, not notify', async () => {
    const c = await probe('custom', undefined)
    expect(c.seen).toBe('<undefined>')
    expect(c.warnings.join('\n')).toMatch(/custom/)
    const n = await probe('notify', undefined)
    expect(n.ui.notes).toEqual([{ message: 'hello', level: 'warning' }])
    expect(n.ui.shown).toEqual([
      ['setStatus', 'k', 'working'],
      ['setStatus', 'k', undefined],
    ])
  })

  it('setWidget (lines only), setWorkingMessage/Visible, setTitle, setEditorText and pasteToEditor reach the bridge; getEditorText returns the last text set', async () => {
    const s = await probe('surface', undefined)
    expect(s.ui.shown).toEqual([
      ['setWidget', 'todo', ['- a', '- b']],
      ['setWidget', 'todo', undefined],
      ['setWorking', { message: 'Indexing…', visible: true }],
      ['setWorking', { message: 'Indexing…', visible: false }],
      ['setWorking', { visible: false }],
      ['setTitle', 'Indexed repo'],
      ['setEditorText', 'try: summarize'],
      ['setEditorText', 'pasted'],
    ])
    expect(s.seen).toBe('pasted')
    // The widget factory is TUI-only: ignored, with the one terminal warning of the session.
    expect(s.ui.notes).toEqual([{ message: expect.stringMatching(/^An extension needs a terminal: it called ui\.setWidget\(\)/), level: 'warning' }])
  })

  it('terminal-only calls keep pi\'s RPC behaviour and tell the people watching about each one, naming "an extension"', async () => {
    const t = await probe('terminal', undefined)
    expect(t.seen).toEqual([{ success: false, error: 'Themes are not supported by this host' }, [], null])
    expect(t.ui.notes).toEqual(
      ['setFooter', 'onTerminalInput', 'setTheme', 'custom'].map((method) => ({
        message: `An extension needs a terminal: it called ui.${method}(), which this web host cannot show.`,
        level: 'warning',
      })),
    )
    expect(t.warnings.join('\n')).toMatch(/setFooter[\s\S]*onTerminalInput[\s\S]*setTheme[\s\S]*custom/)
    expect(t.ui.shown).toEqual([])
  })

  it('an already-aborted signal resolves the cancel value at once and never asks the bridge', async () => {
    const ui = new FakeBridge()
    const ctx = createExtensionUi(ui, quiet)
    const signal = AbortSignal.abort()
    expect(await ctx.confirm('t', 'm', { signal })).toBe(false)
    expect(await ctx.select('t', ['a'], { signal })).toBeUndefined()
    expect(await ctx.input('t', undefined, { signal })).toBeUndefined()
    expect(ui.asks).toHaveLength(0)
  })

  it('a bridge that throws gives the extension its cancel value instead of breaking the tool', async () => {
    const ui = new FakeBridge()
    ui.ask = async () => {
      throw new Error('bridge down')
    }
    const ctx = createExtensionUi(ui, quiet)
    expect(await ctx.confirm('t', 'm')).toBe(false)
    expect(await ctx.select('t', ['a'])).toBeUndefined()
  })
})

describe('ui_dialog tool', () => {
  async function dialog(args: Record<string, unknown>, resolution?: DialogResolution) {
    const s = await setup()
    s.runtime.prompt({ messageId: 'p', text: `call ui_dialog ${JSON.stringify(args)}` })
    const ask = resolution ? await s.ui.nthAsk(0) : undefined
    ask?.resolve(resolution!)
    await s.rec.next('settled')
    const end = s.rec.of('tool-end')[0]
    return { ask, end, text: (end.result as { text: string }).text }
  }

  it('confirm answered → {"outcome":"answered","value":true}', async () => {
    const r = await dialog({ method: 'confirm', title: 'Go?', message: 'now' }, answered({ confirmed: true }))
    expect(r.ask?.request.spec).toEqual({ method: 'confirm', title: 'Go?', message: 'now' })
    expect(r.text).toBe('{"outcome":"answered","value":true}')
  })

  it('input with timeoutMs passes the timeout and reports the timeout outcome', async () => {
    const r = await dialog({ method: 'input', title: 'Name', placeholder: 'x', timeoutMs: 500 }, { outcome: 'timeout' })
    expect(r.ask?.request.timeoutMs).toBe(500)
    expect(r.text).toBe('{"outcome":"timeout","value":null}')
  })

  it('editor goes to the bridge directly, with the tool as origin, and returns the text', async () => {
    const r = await dialog({ method: 'editor', title: 'Write', prefill: 'abc', timeoutMs: 900 }, answered({ value: 'abcdef' }))
    expect(r.ask?.request.spec).toEqual({ method: 'editor', title: 'Write', prefill: 'abc' })
    expect(r.ask?.request.origin).toMatchObject({ kind: 'tool', name: 'ui_dialog' })
    expect(r.ask?.request.origin.toolCallId).toBeTruthy()
    expect(r.ask?.request.timeoutMs).toBe(900)
    expect(r.ask?.request.signal).toBeInstanceOf(AbortSignal)
    expect(r.text).toBe('{"outcome":"answered","value":"abcdef"}')
  })

  it('questionnaire goes to the bridge and returns the answers', async () => {
    const questions = [{ id: 'q', prompt: 'Color?', mode: 'single', options: [{ value: 'r', label: 'Red' }], allowOther: false }]
    const r = await dialog({ method: 'questionnaire', title: 'Survey', questions }, answered({ answers: [{ id: 'q', value: 'r' }] }))
    expect(r.ask?.request.spec).toEqual({ method: 'questionnaire', title: 'Survey', questions })
    expect(r.text).toBe('{"outcome":"answered","value":[{"id":"q","value":"r"}]}')
  })

  it('select without options is a clear tool error and asks nothing', async () => {
    const r = await dialog({ method: 'select', title: 'Pick' })
    expect(r.end.isError).toBe(true)
    expect(r.text).toMatch(/'select' needs a non-empty options array/)
  })

  it('a malformed questionnaire is a clear tool error', async () => {
    const r = await dialog({ method: 'questionnaire', title: 'S', questions: [{ id: 'q' }] })
    expect(r.end.isError).toBe(true)
    expect(r.text).toMatch(/questions must be objects/)
  })
})
