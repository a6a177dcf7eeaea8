/**
 * pi's terminal components (`ctx.ui.custom()`) over HTTP/SSE (issue 21): pi's own example
 * extensions, copied unmodified from node_modules into a temp agent dir, driven by keys posted as
 * terminal bytes while every follower watches the same screen, and settled for every follower
 * exactly like dialogs.
 */
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import type { Observation, OpenDialog, Snapshot } from '../../src/schemas/index.js'
import { projectAll } from '../../src/shared/projection.js'
import { api, is, SseClient, startHarness, type Frame, type Harness } from './harness.js'

const EXAMPLES = fileURLToPath(new URL('../../node_modules/@earendil-works/pi-coding-agent/examples/extensions/', import.meta.url))
const KEY = { up: '\x1b[A', down: '\x1b[B', right: '\x1b[C', enter: '\r', escape: '\x1b', tab: '\t' }

let h: Harness | undefined
let agentDir: string | undefined
const clients: SseClient[] = []

afterEach(async () => {
  for (const c of clients.splice(0)) c.close()
  await h?.close()
  if (agentDir) await rm(agentDir, { recursive: true, force: true })
  h = agentDir = undefined
})

async function withExamples(files: string[]): Promise<Harness> {
  agentDir = await mkdtemp(join(tmpdir(), 'threadhost-terminal-'))
  await mkdir(join(agentDir, 'extensions'))
  for (const file of files) await copyFile(join(EXAMPLES, file), join(agentDir, 'extensions', file))
  h = await startHarness({ agentDir, demoDelayMs: 5 })
  return h
}

async function follow(thread: string): Promise<SseClient> {
  const client = await SseClient.open(`${h!.url}/api/threads/${thread}/follow`)
  clients.push(client)
  return client
}

/** What a tab shows: its snapshot folded with every frame after it, by the shared projection. */
function viewOf(tab: SseClient): Snapshot {
  const at = tab.frames.findLastIndex((f) => f.event === 'snapshot')
  return projectAll(tab.frames[at].data as Snapshot, tab.frames.slice(at + 1).map((f) => f.data as Observation))
}

function terminalOf(tab: SseClient): OpenDialog | undefined {
  return viewOf(tab).openDialogs.find((d) => d.dialog.method === 'terminal')
}

const screenText = (d: OpenDialog | undefined) => (d?.screen?.lines ?? []).map((l) => stripVTControlCharacters(l)).join('\n')

/** Waits until the tab's screen of its open component matches. */
async function screenMatching(tab: SseClient, pattern: RegExp): Promise<OpenDialog> {
  await tab.waitFor(() => pattern.test(screenText(terminalOf(tab))))
  return terminalOf(tab)!
}

const key = (thread: string, dialogId: string, data: unknown, tab = 'A') =>
  api(h!.url, 'POST', `/api/threads/${thread}/dialog/${dialogId}/input`, { data, tab })

const QUESTION = 'call question {"question":"Which colour?","options":[{"label":"Red"},{"label":"Green"},{"label":"Blue"}]}'

describe('question.ts over HTTP/SSE', () => {
  it('is a question every follower sees: one tab types (arrows, Enter), the other watches the same screen, and both see it settled answered once', async () => {
    const host = await withExamples(['question.ts'])
    await api(host.url, 'POST', '/api/threads', { id: 'q' })
    const a = await follow('q')
    const b = await follow('q')
    await api(host.url, 'POST', '/api/threads/q/prompt', { message: QUESTION })
    const open = await screenMatching(a, /Which colour\?[\s\S]*> 1\. Red/)
    expect(open.dialog).toMatchObject({ method: 'terminal', cols: 80 })
    expect((await key('q', open.id, KEY.down)).status).toBe(204)
    await screenMatching(a, /> 2\. Green/)
    await screenMatching(b, /> 2\. Green/)
    // Tab B is refused while A holds the input, and told until when.
    const refused = await key('q', open.id, KEY.down, 'B')
    expect(refused).toMatchObject({ status: 409, body: { code: 'INPUT_LEASED' } })
    expect(terminalOf(b)?.typist?.tab).toBe('A')
    expect((await key('q', open.id, KEY.enter)).status).toBe(204)
    for (const tab of [a, b]) await tab.waitFor(is('dialog-settled', { id: open.id, outcome: 'answered' }))
    for (const tab of [a, b]) expect(tab.frames.filter(is('dialog-settled', { id: open.id }))).toHaveLength(1)
    const end = await a.waitFor(is('tool-end'))
    expect(end.data.result.text).toMatch(/User selected: 2\. Green/)
    // Settled: a key is a 404; a key that is not terminal bytes is a 422 while it is open.
    expect(await key('q', open.id, KEY.enter)).toMatchObject({ status: 404, body: { code: 'QUESTION_NOT_OPEN' } })
  })

  it('refuses input that is not a string of bounded length (422), and an answer payload (422): only its keys answer it', async () => {
    const host = await withExamples(['question.ts'])
    await api(host.url, 'POST', '/api/threads', { id: 'bad' })
    const a = await follow('bad')
    await api(host.url, 'POST', '/api/threads/bad/prompt', { message: QUESTION })
    const open = await screenMatching(a, /Which colour\?/)
    expect(await key('bad', open.id, 5)).toMatchObject({ status: 422, body: { code: 'INPUT_REFUSED' } })
    expect(await key('bad', open.id, 'x'.repeat(5000))).toMatchObject({ status: 422, body: { code: 'INPUT_REFUSED' } })
    expect(await key('bad', open.id, '')).toMatchObject({ status: 422 })
    const answer = await api(host.url, 'POST', '/api/threads/bad/dialog', { id: open.id, value: 'Red' })
    expect(answer).toMatchObject({ status: 422, body: { code: 'ANSWER_REFUSED' } })
    expect(terminalOf(a)).toBeDefined()
    await key('bad', open.id, KEY.escape)
    await a.waitFor(is('dialog-settled', { id: open.id, outcome: 'answered' }))
    expect((await a.waitFor(is('tool-end'))).data.result.text).toMatch(/User cancelled/)
  })

  it('a tab that joins (or reloads) mid-component gets the screen in its snapshot, equal to what the watching tab folded', async () => {
    const host = await withExamples(['question.ts'])
    await api(host.url, 'POST', '/api/threads', { id: 'late' })
    const a = await follow('late')
    await api(host.url, 'POST', '/api/threads/late/prompt', { message: QUESTION })
    const open = await screenMatching(a, /Which colour\?/)
    await key('late', open.id, KEY.down)
    await key('late', open.id, KEY.down)
    await screenMatching(a, /> 3\. Blue/)
    const late = await follow('late')
    const snapshot = (await late.waitFor(is('snapshot'))).data as Snapshot
    const shown = snapshot.openDialogs.find((d) => d.id === open.id)
    expect(shown?.screen).toEqual(terminalOf(a)?.screen)
    expect(screenText(shown)).toMatch(/> 3\. Blue/)
    await key('late', open.id, KEY.enter)
    await late.waitFor(is('dialog-settled', { id: open.id, outcome: 'answered' }))
  })

  it('Stop during a component settles it aborted for every follower and the tool gets its cancel value', async () => {
    const host = await withExamples(['question.ts'])
    await api(host.url, 'POST', '/api/threads', { id: 'stop' })
    const a = await follow('stop')
    await api(host.url, 'POST', '/api/threads/stop/prompt', { message: QUESTION })
    const open = await screenMatching(a, /Which colour\?/)
    expect((await api(host.url, 'POST', '/api/threads/stop/abort', {})).status).toBe(200)
    await a.waitFor(is('dialog-settled', { id: open.id, outcome: 'aborted' }))
    await a.waitFor(is('settled', { aborted: true }))
    expect(viewOf(a).openDialogs).toEqual([])
    expect(await key('stop', open.id, KEY.enter)).toMatchObject({ status: 404 })
  })
})

describe('questionnaire.ts over HTTP/SSE', () => {
  const TWO = {
    questions: [
      { id: 'scope', label: 'Scope', prompt: 'Which scope?', options: [{ value: 'all', label: 'All' }, { value: 'mine', label: 'Mine' }] },
      { id: 'when', label: 'When', prompt: 'When?', options: [{ value: 'now', label: 'Now' }, { value: 'later', label: 'Later' }] },
    ],
  }

  it('several questions: Enter answers and moves to the next tab, Tab moves between them, Enter on Submit answers the tool', async () => {
    const host = await withExamples(['questionnaire.ts'])
    await api(host.url, 'POST', '/api/threads', { id: 'qn' })
    const a = await follow('qn')
    await api(host.url, 'POST', '/api/threads/qn/prompt', { message: `call questionnaire ${JSON.stringify(TWO)}` })
    const open = await screenMatching(a, /Which scope\?/)
    await key('qn', open.id, KEY.down)
    await key('qn', open.id, KEY.enter)
    await screenMatching(a, /When\?/)
    await key('qn', open.id, KEY.tab)
    await screenMatching(a, /Ready to submit[\s\S]*Unanswered: When/)
    await key('qn', open.id, '\x1b[Z')
    await screenMatching(a, /When\?/)
    await key('qn', open.id, KEY.enter)
    await screenMatching(a, /Press Enter to submit/)
    await key('qn', open.id, KEY.enter)
    const end = await a.waitFor(is('tool-end'))
    expect(end.data.result.text).toBe('Scope: user selected: 2. Mine\nWhen: user selected: 1. Now')
  })

  it('two components asked in one tool batch are shown one at a time, in order (FIFO); Stop drains the waiting one unshown', async () => {
    const host = await withExamples(['questionnaire.ts'])
    await api(host.url, 'POST', '/api/threads', { id: 'fifo' })
    const a = await follow('fifo')
    const one = { questions: [{ id: 'a', prompt: 'First?', options: [{ value: 'x', label: 'X' }] }] }
    const two = { questions: [{ id: 'b', prompt: 'Second?', options: [{ value: 'y', label: 'Y' }] }] }
    const three = { questions: [{ id: 'c', prompt: 'Third?', options: [{ value: 'z', label: 'Z' }] }] }
    await api(host.url, 'POST', '/api/threads/fifo/prompt', {
      message: [one, two, three].map((q) => `call questionnaire ${JSON.stringify(q)}`).join('\n'),
    })
    const first = await screenMatching(a, /First\?/)
    expect(viewOf(a).openDialogs).toHaveLength(1)
    await key('fifo', first.id, KEY.enter)
    await a.waitFor(is('dialog-settled', { id: first.id, outcome: 'answered' }))
    const second = await screenMatching(a, /Second\?/)
    expect(second.id).not.toBe(first.id)
    expect(viewOf(a).openDialogs).toHaveLength(1)
    await api(host.url, 'POST', '/api/threads/fifo/abort', {})
    await a.waitFor(is('dialog-settled', { id: second.id, outcome: 'aborted' }))
    await a.waitFor(is('settled', { aborted: true }))
    // The third was never shown: one request per component shown, none for it.
    expect(a.frames.filter(is('extension-ui-request'))).toHaveLength(2)
    const drawn = a.frames.filter((f: Frame) => f.event === 'terminal-frame')
    expect(drawn.some((f) => /Third\?/.test(JSON.stringify(f.data)))).toBe(false)
  })
})

describe('todo.ts and snake.ts over HTTP/SSE', () => {
  it('/todos shows the list and Escape closes it; /snake renders, moves on an arrow key, and Escape quits', async () => {
    const host = await withExamples(['todo.ts', 'snake.ts'])
    await api(host.url, 'POST', '/api/threads', { id: 'cmd' })
    const a = await follow('cmd')
    await api(host.url, 'POST', '/api/threads/cmd/prompt', { message: '/todos' })
    const todos = await screenMatching(a, /Todos[\s\S]*No todos yet/)
    await key('cmd', todos.id, KEY.escape)
    await a.waitFor(is('dialog-settled', { id: todos.id, outcome: 'answered' }))
    await a.waitFor(is('status', { busy: false }))

    await api(host.url, 'POST', '/api/threads/cmd/prompt', { message: '/snake' })
    const snake = await screenMatching(a, /SNAKE/)
    const framesBefore = a.frames.filter(is('terminal-frame', { id: snake.id })).length
    expect((await key('cmd', snake.id, KEY.up)).status).toBe(204)
    await a.waitFor(() => a.frames.filter(is('terminal-frame', { id: snake.id })).length > framesBefore)
    await key('cmd', snake.id, KEY.escape)
    await a.waitFor(is('dialog-settled', { id: snake.id, outcome: 'answered' }))
    expect(a.events()).not.toContain('failure')
  })
})
