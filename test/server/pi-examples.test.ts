/**
 * pi's own example extensions, loaded unmodified from node_modules into a temp agent dir's
 * `extensions/`, driven over HTTP/SSE as a user's browser tab would: what the host owes each of them
 * across its layers (issue 19).
 */
import { execFileSync } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'
import { LocalLlm } from './local-llm.js'

const EXAMPLES = fileURLToPath(new URL('../../node_modules/@earendil-works/pi-coding-agent/examples/extensions/', import.meta.url))

let h: Harness | undefined
let agentDir: string | undefined
const clients: SseClient[] = []

/** A threadhost whose agent dir holds exactly these example files, as a pi user would install them. */
async function withExamples(
  files: string[],
  options: { demoDelayMs?: number; idleMs?: number; agentFiles?: Record<string, unknown> } = {},
): Promise<Harness> {
  agentDir = await mkdtemp(join(tmpdir(), 'threadhost-examples-'))
  await mkdir(join(agentDir, 'extensions'))
  for (const file of files) await copyFile(join(EXAMPLES, file), join(agentDir, 'extensions', file))
  // The user's own pi settings beside them (models.json, presets.json …), as JSON.
  for (const [name, json] of Object.entries(options.agentFiles ?? {})) await writeFile(join(agentDir, name), JSON.stringify(json))
  h = await startHarness({ agentDir, demoDelayMs: options.demoDelayMs ?? 20, ...(options.idleMs ? { idleMs: options.idleMs } : {}) })
  return h
}

/** threadhost stopped and started again on the same data and agent dirs: every thread is cold, read from its files. */
async function restart(): Promise<Harness> {
  const dataDir = h!.dataDir
  await h!.close({ keepData: true })
  h = await startHarness({ agentDir, dataDir, demoDelayMs: 20 })
  return h
}

async function follow(thread: string): Promise<SseClient> {
  const client = await SseClient.open(`${h!.url}/api/threads/${thread}/follow`)
  clients.push(client)
  return client
}

let llm: LocalLlm | undefined

afterEach(async () => {
  for (const c of clients.splice(0)) c.close()
  await h?.close()
  await llm?.close()
  llm = undefined
  if (agentDir) await rm(agentDir, { recursive: true, force: true })
  h = agentDir = undefined
})

describe('titlebar-spinner.ts: ctx.ui.setTitle', () => {
  it("animates the pane's live title during a run and never renames or rewrites the thread", async () => {
    const host = await withExamples(['titlebar-spinner.ts'], { demoDelayMs: 60 })
    await api(host.url, 'POST', '/api/threads', { id: 'spin', title: 'Release planning' })
    const tab = await follow('spin')
    const writes = () => host.registry.store.threads().find((t) => t.threadId === 'spin')!.updatedAt
    expect((await api(host.url, 'POST', '/api/threads/spin/prompt', { message: 'tell me a long story' })).status).toBe(202)
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    const titles = tab.frames.filter(is('title')).map((f) => f.data.title as string)
    expect(titles.some((t) => /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] π/.test(t))).toBe(true)
    const before = writes()
    expect((await api(host.url, 'GET', '/api/threads/spin')).body).toMatchObject({ title: 'Release planning' })
    const late = await follow('spin')
    expect((await late.waitFor(is('snapshot'))).data.liveTitle).toBe(titles.at(-1))
    expect(writes()).toBe(before)
  })
})

describe('send-user-message.ts: a run the extension starts', () => {
  it('/ask starts the next run of the thread: busy, stoppable, and a prompt sent during it is queued into it and runs', async () => {
    const host = await withExamples(['send-user-message.ts'], { demoDelayMs: 30 })
    await api(host.url, 'POST', '/api/threads', { id: 'ask' })
    const tab = await follow('ask')
    expect((await api(host.url, 'POST', '/api/threads/ask/prompt', { message: '/ask slow 40' })).status).toBe(202)
    await tab.waitFor(is('status', { busy: true, run: 2 }))
    expect((await api(host.url, 'GET', '/api/threads/ask')).body).toMatchObject({ busy: true, run: 2 })
    await tab.waitFor(is('assistant-delta'))
    const queued = await api(host.url, 'POST', '/api/threads/ask/prompt', { message: 'and then this', deliverAs: 'followUp' })
    expect(queued).toMatchObject({ status: 202, body: { run: 2, queued: true } })
    await tab.waitFor((f) => f.event === 'user-message' && f.data.text === 'and then this')
    await tab.waitFor(is('status', { busy: false }))
    const users = tab.frames.filter(is('user-message')).map((f) => [f.data.text, f.data.run])
    expect(users).toEqual([
      ['slow 40', 2],
      ['and then this', 2],
    ])
    expect(tab.frames.some((f) => f.event === 'prompt-rejected')).toBe(false)
  })

  it('Stop ends a run the extension started, with the queue handed back', async () => {
    const host = await withExamples(['send-user-message.ts'], { demoDelayMs: 30 })
    await api(host.url, 'POST', '/api/threads', { id: 'stop' })
    const tab = await follow('stop')
    await api(host.url, 'POST', '/api/threads/stop/prompt', { message: '/ask slow 200' })
    await tab.waitFor(is('assistant-delta'))
    await api(host.url, 'POST', '/api/threads/stop/prompt', { message: 'queued text', deliverAs: 'followUp' })
    const stopped = await api(host.url, 'POST', '/api/threads/stop/abort', {})
    expect(stopped).toMatchObject({ status: 200, body: { restored: ['queued text'] } })
    await tab.waitFor(is('settled', { run: 2, aborted: true }))
  })
})

describe('widget-placement.ts: setWidget with a placement', () => {
  it('keeps where each widget asked to go, live and in a late follower’s snapshot', async () => {
    const host = await withExamples(['widget-placement.ts'])
    await api(host.url, 'POST', '/api/threads', { id: 'place' })
    const tab = await follow('place')
    // Building the thread's runtime (its commands) starts its session: the example sets its widgets then.
    expect((await api(host.url, 'GET', '/api/threads/place/commands')).status).toBe(200)
    const below = await tab.waitFor((f) => f.event === 'widget' && f.data.key === 'widget-below')
    expect(below.data).toMatchObject({ lines: ['Below editor widget'], placement: 'belowEditor' })
    const above = tab.frames.find((f) => f.event === 'widget' && f.data.key === 'widget-above')!
    expect(above.data.placement).toBeUndefined()
    const late = await follow('place')
    const snapshot = (await late.waitFor(is('snapshot'))).data
    expect(snapshot.widgets).toEqual({ 'widget-above': ['Above editor widget'], 'widget-below': ['Below editor widget'] })
    expect(snapshot.widgetPlacements).toEqual({ 'widget-below': 'belowEditor' })
  })
})

describe('message-renderer.ts: pi.sendMessage with display: true', () => {
  it("shows the extension's message to every follower as a transcript entry labelled with its customType, and again after a restart", async () => {
    const host = await withExamples(['message-renderer.ts'])
    await api(host.url, 'POST', '/api/threads', { id: 'disk' })
    const tab = await follow('disk')
    // pi writes a session file once it holds a reply: a conversation first, then the extension's message.
    expect((await api(host.url, 'POST', '/api/threads/disk/prompt', { message: 'hello' })).status).toBe(202)
    await tab.waitFor(is('settled', { run: 1 }))
    expect((await api(host.url, 'POST', '/api/threads/disk/prompt', { message: '/status warn disk full' })).status).toBe(202)
    const shown = await tab.waitFor(is('custom-message'))
    expect(shown.data).toMatchObject({ customType: 'status-update', text: 'disk full' })
    await tab.waitFor(is('settled', { run: 2 }))
    const entry = { kind: 'custom', customType: 'status-update', text: 'disk full' }
    const late = await follow('disk')
    expect((await late.waitFor(is('snapshot'))).data.transcript).toContainEqual(entry)

    const again = await restart()
    const reader = await SseClient.open(`${again.url}/api/threads/disk/follow`)
    clients.push(reader)
    const snapshot = (await reader.waitFor(is('snapshot'))).data
    expect(snapshot.status.live).toBe(false)
    expect(snapshot.transcript).toContainEqual(entry)
  })
})

describe('session-name.ts: pi.setSessionName', () => {
  it('titles the thread at once, in its summary and the list, while it is still live', async () => {
    const host = await withExamples(['session-name.ts'])
    await api(host.url, 'POST', '/api/threads', { id: 'sn' })
    const tab = await follow('sn')
    expect((await api(host.url, 'POST', '/api/threads/sn/prompt', { message: '/session-name Release notes' })).status).toBe(202)
    await tab.waitFor(is('settled', { run: 1 }))
    expect((await api(host.url, 'GET', '/api/threads/sn')).body).toMatchObject({ title: 'Release notes', live: true })
    expect((await api(host.url, 'GET', '/api/threads')).body.threads.find((t: { threadId: string }) => t.threadId === 'sn').title).toBe('Release notes')
  })
})

describe('preset.ts: pi.setModel and pi.setThinkingLevel', () => {
  it('the thread reports the model and thinking level the preset switched to at once, and a rebuild after an idle release runs on them', async () => {
    llm = new LocalLlm()
    await llm.start()
    const local = {
      baseUrl: llm.url,
      api: 'openai-completions',
      apiKey: 'local-key',
      models: [{ id: 'chat', name: 'Local chat', reasoning: true, input: ['text'], contextWindow: 32000, maxTokens: 4096, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }],
    }
    const host = await withExamples(['preset.ts'], {
      idleMs: 300,
      agentFiles: {
        'models.json': { providers: { 'my-local': local } },
        'presets.json': { local: { provider: 'my-local', model: 'chat', thinkingLevel: 'high' } },
      },
    })
    await api(host.url, 'POST', '/api/threads', { id: 'pre', model: 'demo' })
    const tab = await follow('pre')
    expect((await api(host.url, 'POST', '/api/threads/pre/prompt', { message: '/preset local' })).status).toBe(202)
    await tab.waitFor(is('settled', { run: 1 }))
    const switched = { model: 'my-local/chat', thinkingLevel: 'high' }
    expect((await api(host.url, 'GET', '/api/threads/pre')).body).toMatchObject({ ...switched, live: true })
    expect((await api(host.url, 'GET', '/api/threads')).body.threads.find((t: { threadId: string }) => t.threadId === 'pre')).toMatchObject(switched)

    // Idle: the runtime is released; the next prompt builds the thread again, on what the preset chose.
    await tab.waitFor((f) => f.event === 'status' && f.data.live === false)
    expect((await api(host.url, 'POST', '/api/threads/pre/prompt', { message: 'hello' })).status).toBe(202)
    const reply = await tab.waitFor(is('assistant-end'))
    expect(reply.data).toMatchObject({ provider: 'my-local', model: 'chat', text: 'Local model heard: hello' })
    expect(llm.requests).toHaveLength(1)
  })
})

describe('confirm-destructive.ts: session_before_fork', () => {
  it("asks the source thread's extension before a fork: a no refuses it with 409 FORK_CANCELLED and writes nothing, a yes forks; a cold source is built to ask", async () => {
    const host = await withExamples(['confirm-destructive.ts'])
    await api(host.url, 'POST', '/api/threads', { id: 'src' })
    const tab = await follow('src')
    expect((await api(host.url, 'POST', '/api/threads/src/prompt', { message: 'first question' })).status).toBe(202)
    await tab.waitFor(is('settled', { run: 1 }))
    const fromMessageId = tab.frames.find(is('user-message'))!.data.messageId as string
    const threads = async () => (await api(host.url, 'GET', '/api/threads')).body.threads.length

    const refused = api(host.url, 'POST', '/api/threads/src/fork', { fromMessageId })
    const asked = await tab.waitFor(is('extension-ui-request'))
    expect(asked.data.dialog).toMatchObject({ method: 'select', options: ['Yes, create fork', 'No, stay in current session'] })
    expect((await api(host.url, 'POST', '/api/threads/src/dialog', { id: asked.data.id, value: 'No, stay in current session' })).status).toBe(204)
    const no = await refused
    expect(no.status).toBe(409)
    expect(no.body).toMatchObject({ code: 'FORK_CANCELLED', reason: 'fork-cancelled' })
    expect(await threads()).toBe(1)

    // After a restart the source is cold: its extensions are still asked.
    const again = await restart()
    const reader = await SseClient.open(`${again.url}/api/threads/src/follow`)
    clients.push(reader)
    const forked = api(again.url, 'POST', '/api/threads/src/fork', { fromMessageId })
    const second = await reader.waitFor(is('extension-ui-request'))
    expect((await api(again.url, 'POST', '/api/threads/src/dialog', { id: second.data.id, value: 'Yes, create fork' })).status).toBe(204)
    const yes = await forked
    expect(yes.status).toBe(201)
    expect(yes.body).toMatchObject({ prompt: 'first question', thread: { parentId: 'src' } })
  })
})

describe('dirty-repo-guard.ts: session_before_fork', () => {
  it('a fork of a thread whose workspace has uncommitted changes waits for the guard, and its no refuses the fork', async () => {
    const host = await withExamples(['dirty-repo-guard.ts'])
    const repo = join(host.dataDir, 'repo')
    await mkdir(repo)
    execFileSync('git', ['init', '-q'], { cwd: repo })
    await writeFile(join(repo, 'notes.txt'), 'not committed')
    await api(host.url, 'POST', '/api/threads', { id: 'dirty', cwd: repo })
    const tab = await follow('dirty')
    expect((await api(host.url, 'POST', '/api/threads/dirty/prompt', { message: 'hello' })).status).toBe(202)
    await tab.waitFor(is('settled', { run: 1 }))
    const fromMessageId = tab.frames.find(is('user-message'))!.data.messageId as string
    const refused = api(host.url, 'POST', '/api/threads/dirty/fork', { fromMessageId })
    const asked = await tab.waitFor(is('extension-ui-request'))
    expect(asked.data.dialog.title).toContain('1 uncommitted file(s). fork anyway?')
    expect((await api(host.url, 'POST', '/api/threads/dirty/dialog', { id: asked.data.id, value: 'No, let me commit first' })).status).toBe(204)
    expect((await refused).body).toMatchObject({ code: 'FORK_CANCELLED' })
  })
})
