/**
 * pi's fire-and-forget ctx.ui calls over real sockets: a third-party-style extension on the real pi
 * runtime (demo model) calls them, and every follower gets the same frames. Titles are cited by
 * docs/flows/extension-ui.md; the docs gate keeps them in step.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Type } from 'typebox'
import type { ExtensionFactory } from '@earendil-works/pi-coding-agent'
import { projectAll } from '../../src/shared/projection.js'
import type { Observation } from '../../src/schemas/index.js'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'

/** An extension tool that puts things on the host's screen, as an extension would from any handler. */
const screenExtension: ExtensionFactory = (pi) => {
  pi.registerTool({
    name: 'screen',
    label: 'screen',
    description: 'test extension that uses ctx.ui',
    parameters: Type.Object({ step: Type.String() }),
    async execute(_id, p, _signal, _u, ctx) {
      if (p.step === 'show') {
        ctx.ui.setStatus('git', 'main')
        ctx.ui.setStatus('git', 'main') // unchanged: not sent again
        ctx.ui.setStatus('tmp', 'x')
        ctx.ui.setStatus('tmp', undefined)
        ctx.ui.setWidget('todo', ['- index', '- summarize'])
        ctx.ui.setWorkingMessage('Indexing…')
        ctx.ui.setTitle('Indexed repo')
        ctx.ui.setEditorText('now summarize it')
        ctx.ui.notify('indexing done', 'info')
      } else if (p.step === 'read') {
        return { content: [{ type: 'text', text: `editor: ${ctx.ui.getEditorText()}` }], details: {} }
      } else {
        ctx.ui.setStatus('git', undefined)
        ctx.ui.setWidget('todo', undefined)
      }
      return { content: [{ type: 'text', text: 'ok' }], details: {} }
    },
  })
}

let h: Harness
const clients: SseClient[] = []
const follow = async (thread: string) => {
  const client = await SseClient.open(`${h.url}/api/threads/${thread}/follow`)
  clients.push(client)
  return client
}
const prompt = (thread: string, message: string) => api(h.url, 'POST', `/api/threads/${thread}/prompt`, { message })

beforeEach(async () => {
  h = await startHarness({ demoDelayMs: 2, extraExtensions: [screenExtension] })
})
afterEach(async () => {
  for (const c of clients.splice(0)) c.close()
  await h.close()
})

describe('extension UI over SSE', () => {
  it('two followers get the same status-item, widget, working, title, editor-text and notify frames; a late follower finds statusItems, widgets and working in its snapshot', async () => {
    await api(h.url, 'POST', '/api/threads', { id: 'x1' })
    const tabs = [await follow('x1'), await follow('x1')]
    await prompt('x1', 'call screen {"step":"show"}')
    await Promise.all(tabs.map((t) => t.waitFor(is('status', { busy: false, run: 1 }))))

    const after = (t: SseClient) => t.frames.filter((f) => f.event !== 'snapshot').map((f) => f.raw)
    expect(after(tabs[0])).toEqual(after(tabs[1]))
    const shown = tabs[0].frames.filter((f) => ['status-item', 'widget', 'working', 'title', 'editor-text', 'notify'].includes(f.event))
    expect(shown.map((f) => ({ type: f.data.type, ...without(f.data, 'seq', 'type') }))).toEqual([
      { type: 'status-item', key: 'git', text: 'main' },
      { type: 'status-item', key: 'tmp', text: 'x' },
      { type: 'status-item', key: 'tmp' },
      { type: 'widget', key: 'todo', lines: ['- index', '- summarize'] },
      { type: 'working', message: 'Indexing…', visible: true },
      { type: 'title', title: 'Indexed repo' },
      { type: 'editor-text', text: 'now summarize it' },
      { type: 'notify', message: 'indexing done', level: 'info' },
    ])

    const late = await follow('x1')
    const snapshot = (await late.waitFor(is('snapshot'))).data
    expect(snapshot.statusItems).toEqual({ git: 'main' })
    expect(snapshot.widgets).toEqual({ todo: ['- index', '- summarize'] })
    expect(snapshot.working).toEqual({ message: 'Indexing…', visible: true })
    // A toast is transient: it is in no snapshot and no transcript.
    expect(JSON.stringify(snapshot.transcript)).not.toContain('indexing done')
    // The snapshot is the fold of the frames the first tab saw.
    const first = tabs[0].frames[0].data
    const folded = projectAll(first, tabs[0].frames.slice(1).map((f) => f.data as Observation))
    expect(JSON.parse(JSON.stringify(folded))).toEqual(snapshot)

    // setTitle is the pane's live title, in every snapshot while live; it renames nothing.
    expect(snapshot.liveTitle).toBe('Indexed repo')
    expect((await api(h.url, 'GET', '/api/threads/x1')).body.title).not.toBe('Indexed repo')
  })

  it('clearing a status item or widget removes it from every follower and from the snapshot', async () => {
    await api(h.url, 'POST', '/api/threads', { id: 'x2' })
    const tab = await follow('x2')
    await prompt('x2', 'call screen {"step":"show"}')
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    await prompt('x2', 'call screen {"step":"clear"}')
    await tab.waitFor(is('status', { busy: false, run: 2 }))
    expect(tab.frames.filter((f) => f.event === 'status-item' && f.data.key === 'git').map((f) => f.data.text)).toEqual(['main', undefined])
    const late = await follow('x2')
    const snapshot = (await late.waitFor(is('snapshot'))).data
    expect(snapshot).toMatchObject({ statusItems: {}, widgets: {} })
  })

  it('getEditorText reads the draft a tab last reported; a draft for a thread that is not live is 404 and builds nothing', async () => {
    expect((await api(h.url, 'PUT', '/api/threads/cold/draft', { text: 'x' })).status).toBe(404)
    await api(h.url, 'POST', '/api/threads', { id: 'x3' })
    const tab = await follow('x3')
    await prompt('x3', 'call screen {"step":"read"}')
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    expect(tab.frames.find(is('tool-end'))?.data.result).toMatchObject({ text: 'editor: ' })
    expect((await api(h.url, 'PUT', '/api/threads/x3/draft', { text: 'half-typed question' })).status).toBe(204)
    await prompt('x3', 'call screen {"step":"read"}')
    await tab.waitFor(is('status', { busy: false, run: 2 }))
    expect(tab.frames.filter(is('tool-end')).at(-1)?.data.result).toMatchObject({ text: 'editor: half-typed question' })
    expect((await api(h.url, 'GET', '/api/threads/cold')).status).toBe(404)
  })
})

function without(data: Record<string, unknown>, ...keys: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([k]) => !keys.includes(k)))
}
