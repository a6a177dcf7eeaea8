/**
 * pi's session tree, in place (issues 19 and 20): Edit and Regenerate as versions of one prompt in
 * the same thread, a version chosen, and the command context's session actions — `ctx.navigateTree`
 * (the same move), `ctx.fork`, `ctx.switchSession`, `ctx.waitForIdle` — driven over HTTP/SSE with a
 * fixture extension loaded from a temp agent dir as a user's own.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { sessionPaths } from '../../src/runtime/index.js'
import { api, is, SseClient, startHarness, type Frame, type Harness } from './harness.js'

const FIXTURE = fileURLToPath(new URL('../fixtures/session-actions/', import.meta.url))

let h: Harness | undefined
let agentDir: string | undefined
const clients: SseClient[] = []

afterEach(async () => {
  for (const c of clients.splice(0)) c.close()
  await h?.close()
  if (agentDir) await rm(agentDir, { recursive: true, force: true })
  h = agentDir = undefined
})

async function host(options: { demoDelayMs?: number; dataDir?: string } = {}): Promise<Harness> {
  if (!agentDir) {
    agentDir = await mkdtemp(join(tmpdir(), 'threadhost-tree-'))
    await cp(FIXTURE, agentDir, { recursive: true })
  }
  h = await startHarness({ agentDir, demoDelayMs: options.demoDelayMs ?? 2, ...(options.dataDir ? { dataDir: options.dataDir } : {}) })
  return h
}

/** A new thread, followed. */
async function thread(id: string, title?: string): Promise<SseClient> {
  expect((await api(h!.url, 'POST', '/api/threads', { id, ...(title ? { title } : {}) })).status).toBe(201)
  return follow(id)
}

async function follow(thread: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const client = await SseClient.open(`${h!.url}/api/threads/${thread}/follow`, headers)
  clients.push(client)
  return client
}

/** Sends a prompt and waits for its run to settle on `tab`. */
async function say(tab: SseClient, thread: string, message: string): Promise<string> {
  const sent = await api(h!.url, 'POST', `/api/threads/${thread}/prompt`, { message })
  expect(sent.status).toBe(202)
  await tab.waitFor(is('settled', { run: sent.body.run }))
  return sent.body.messageId as string
}

/** What a tab that follows now is shown: the snapshot's transcript, as [kind, text] with a user message's version count. */
async function shown(thread: string) {
  const tab = await follow(thread)
  const snapshot = await tab.waitFor(is('snapshot'))
  tab.close()
  return said(snapshot.data.transcript)
}

function said(transcript: Array<{ kind: string; text?: string; versions?: string[] }>) {
  return transcript.filter((e) => e.kind === 'user' || e.kind === 'assistant').map((e) => (e.versions ? [e.kind, e.text, e.versions.length] : [e.kind, e.text]))
}

describe('Edit and Regenerate as versions of one prompt', () => {
  it('an Edit sends the new text in place of the old in the same thread; the prompt then has two versions, and each can be shown again, also after a restart', async () => {
    await host()
    const tab = await thread('t1', 'Release planning')
    const first = await say(tab, 't1', 'plan the release')
    await say(tab, 't1', 'and the notes')

    const edit = await api(h!.url, 'POST', '/api/threads/t1/edit', { messageId: first, text: 'plan the launch' })
    expect(edit.status).toBe(202)
    // Every follower is told the conversation went back to before the prompt, then sees the new version.
    const branch = await tab.waitFor(is('branch'))
    expect(branch.data.transcript).toEqual([])
    const version = await tab.waitFor((f) => is('user-message')(f) && f.data.text === 'plan the launch')
    expect(version.data.versions).toEqual([first, edit.body.messageId])
    await tab.waitFor(is('settled', { run: edit.body.run }))

    expect(await shown('t1')).toEqual([
      ['user', 'plan the launch', 2],
      ['assistant', 'You said: plan the launch'],
    ])
    const threads = (await api(h!.url, 'GET', '/api/threads')).body.threads as Array<{ title: string }>
    expect(threads.map((t) => t.title)).toEqual(['Release planning'])

    // The first version again, with the conversation that followed it.
    const back = await api(h!.url, 'POST', '/api/threads/t1/version', { messageId: first })
    expect(back).toMatchObject({ status: 200, body: { threadId: 't1', messageId: first } })
    const moved = await tab.waitFor((f) => is('branch')(f) && f.data.transcript.length > 0)
    const original = [
      ['user', 'plan the release', 2],
      ['assistant', 'You said: plan the release'],
      ['user', 'and the notes'],
      ['assistant', 'You said: and the notes'],
    ]
    expect(said(moved.data.transcript)).toEqual(original)

    // The branch is written down: threadhost started again on the same data resumes on it.
    const dataDir = h!.dataDir
    for (const c of clients.splice(0)) c.close()
    await h!.close({ keepData: true })
    await host({ dataDir })
    expect(await shown('t1')).toEqual(original)
    // And the conversation goes on from there.
    const again = await follow('t1')
    await say(again, 't1', 'ship it')
    expect((await shown('t1')).slice(-2)).toEqual([
      ['user', 'ship it'],
      ['assistant', 'You said: ship it'],
    ])
  })

  it('a Regenerate at a reply sends its prompt again in place; a tab that resumes from before it never shows the old reply', async () => {
    await host()
    const tab = await thread('t2')
    const prompt = await say(tab, 't2', 'tell me a joke')
    const reply = tab.frames.find(is('assistant-end'))!.data.messageId as string
    const seen = tab.frames.at(-1)!.id!

    const regenerate = await api(h!.url, 'POST', '/api/threads/t2/edit', { messageId: reply })
    expect(regenerate.status).toBe(202)
    await tab.waitFor(is('settled', { run: regenerate.body.run }))
    expect(await shown('t2')).toEqual([
      ['user', 'tell me a joke', 2],
      ['assistant', 'You said: tell me a joke'],
    ])

    // A tab that was away since before the Regenerate replays the branch frame before the new version.
    const resumed = await follow('t2', { 'last-event-id': seen })
    await resumed.waitFor(is('settled', { run: regenerate.body.run }))
    const events = resumed.events()
    expect(events[0]).not.toBe('snapshot')
    expect(events.indexOf('branch')).toBeLessThan(events.indexOf('user-message'))
    const version = resumed.frames.find(is('user-message'))!
    expect(version.data.versions).toEqual([prompt, regenerate.body.messageId])
  })

  it('is refused during a run (409 busy) and for a message the conversation does not hold (404); nothing moves', async () => {
    await host({ demoDelayMs: 40 })
    const tab = await thread('t3')
    const first = await say(tab, 't3', 'one')
    const running = await api(h!.url, 'POST', '/api/threads/t3/prompt', { message: 'a long answer please, with many words in it' })
    await tab.waitFor(is('assistant-delta'))
    const busy = await api(h!.url, 'POST', '/api/threads/t3/edit', { messageId: first, text: 'uno' })
    expect(busy).toMatchObject({ status: 409, body: { code: 'THREAD_BUSY', reason: 'busy' } })
    const busySwitch = await api(h!.url, 'POST', '/api/threads/t3/version', { messageId: first })
    expect(busySwitch).toMatchObject({ status: 409, body: { code: 'THREAD_BUSY' } })
    await tab.waitFor(is('settled', { run: running.body.run }))
    expect(await api(h!.url, 'POST', '/api/threads/t3/edit', { messageId: 'nope', text: 'x' })).toMatchObject({
      status: 404,
      body: { code: 'MESSAGE_NOT_FOUND' },
    })
    expect(tab.events()).not.toContain('branch')
  })

  it('an Edit repeated with the same Idempotency-Key moves and sends once', async () => {
    await host()
    const tab = await thread('t4')
    const first = await say(tab, 't4', 'hello')
    const key = { 'idempotency-key': 'edit-once' }
    const a = await api(h!.url, 'POST', '/api/threads/t4/edit', { messageId: first, text: 'hi' }, key)
    await tab.waitFor(is('settled', { run: a.body.run }))
    const b = await api(h!.url, 'POST', '/api/threads/t4/edit', { messageId: first, text: 'hi' }, key)
    expect(b.status).toBe(202)
    expect(b.headers.get('idempotent-replayed')).toBe('true')
    expect(b.body).toEqual(a.body)
    expect(tab.frames.filter(is('branch'))).toHaveLength(1)
  })
})

describe("the command context's session actions", () => {
  it('ctx.navigateTree() moves the thread in place: every follower gets the branch, the prompt stepped above is in the editor, and a restart resumes there', async () => {
    await host()
    const tab = await thread('n1')
    await say(tab, 'n1', 'first thing')
    await say(tab, 'n1', 'second thing')
    const other = await follow('n1')
    await api(h!.url, 'POST', '/api/threads/n1/prompt', { message: '/back' })
    for (const t of [tab, other]) {
      const branch = await t.waitFor(is('branch'))
      expect(branch.data.transcript).toEqual([])
    }
    expect((await tab.waitFor(is('editor-text'))).data.text).toBe('first thing')
    expect((await tab.waitFor((f) => is('notify')(f) && /navigateTree answered/.test(f.data.message))).data.message).toContain('{"cancelled":false}')
    await tab.waitFor(is('settled'))
    const dataDir = h!.dataDir
    for (const c of clients.splice(0)) c.close()
    await h!.close({ keepData: true })
    await host({ dataDir })
    expect(await shown('n1')).toEqual([])
  })

  it("ctx.fork() makes a new thread named as a fork, holding the history before the entry, and tells the tab where it is; the fork's extensions hear session_start fork", async () => {
    await host()
    const tab = await thread('f1', 'Launch')
    await say(tab, 'f1', 'alpha')
    await say(tab, 'f1', 'beta')
    await api(h!.url, 'POST', '/api/threads/f1/prompt', { message: '/fork-second' })
    const told = await tab.waitFor((f) => is('notify')(f) && /forked this thread/.test(f.data.message))
    const id = decodeURIComponent(/#\/threads\/(\S+)$/.exec(told.data.message)![1])
    expect((await tab.waitFor((f) => is('notify')(f) && /fork answered/.test(f.data.message))).data.message).toContain('{"cancelled":false}')
    const fork = (await api(h!.url, 'GET', `/api/threads/${id}`)).body
    expect(fork).toMatchObject({ title: 'Launch (fork)', parentId: 'f1' })
    expect(await shown(id)).toEqual([
      ['user', 'alpha'],
      ['assistant', 'You said: alpha'],
    ])
    // As pi starts a session it forked: session_start {reason: 'fork', previousSessionFile} on its first build.
    const forkTab = await follow(id)
    await say(forkTab, id, 'gamma')
    const began = await forkTab.waitFor((f) => is('notify')(f) && /^session_start/.test(f.data.message))
    expect(began.data.message).toBe(`session_start fork from ${sessionPaths(h!.dataDir, 'f1').file}`)
  })

  it("a thread forked by POST …/fork hears on its first build how it began (session_start fork, naming its source's session), and a plain start on the next", async () => {
    await host()
    const tab = await thread('src')
    const first = await say(tab, 'src', 'alpha')
    const forked = await api(h!.url, 'POST', '/api/threads/src/fork', { fromMessageId: first })
    expect(forked.status).toBe(201)
    const id = forked.body.thread.threadId as string
    const forkTab = await follow(id)
    await say(forkTab, id, 'beta')
    expect((await forkTab.waitFor((f) => is('notify')(f) && /^session_start/.test(f.data.message))).data.message).toBe(
      `session_start fork from ${sessionPaths(h!.dataDir, 'src').file}`,
    )
    // A second build (after a restart) is a plain start again.
    const dataDir = h!.dataDir
    for (const c of clients.splice(0)) c.close()
    await h!.close({ keepData: true })
    await host({ dataDir })
    const again = await follow(id)
    await say(again, id, 'gamma')
    expect(again.frames.some((f) => is('notify')(f) && /^session_start/.test(f.data.message))).toBe(false)
  })

  it("ctx.switchSession() to a thread's session links the tab to that thread; to any other file it says nothing changed", async () => {
    await host()
    await api(h!.url, 'POST', '/api/threads', { id: 'elsewhere' })
    const tab = await thread('s1')
    await say(tab, 's1', 'hello')
    const target = sessionPaths(h!.dataDir, 'elsewhere').file
    await api(h!.url, 'POST', '/api/threads/s1/prompt', { message: `/switch ${target}` })
    const link = await tab.waitFor((f) => is('notify')(f) && /switched to another thread/.test(f.data.message))
    expect(link.data.message).toMatch(/#\/threads\/elsewhere$/)
    expect((await tab.waitFor((f) => is('notify')(f) && /switchSession answered/.test(f.data.message))).data.message).toContain('{"cancelled":false}')

    await api(h!.url, 'POST', '/api/threads/s1/prompt', { message: '/switch /tmp/not-a-thread.jsonl' })
    const refused = await tab.waitFor((f: Frame) => is('notify')(f) && /not a thread of this threadhost/.test(f.data.message))
    expect(refused.data.level).toBe('warning')
    const answers = tab.frames.filter((f) => is('notify')(f) && /switchSession answered/.test(f.data.message))
    await tab.waitFor(() => tab.frames.filter((f) => is('notify')(f) && /switchSession answered/.test(f.data.message)).length === 2)
    expect(tab.frames.filter((f) => is('notify')(f) && /switchSession answered/.test(f.data.message)).at(-1)!.data.message).toContain('{"cancelled":true}')
    expect(answers.length).toBeGreaterThan(0)
  })

  it('ctx.waitForIdle() waits for the run an extension just started: the reply is there when it returns', async () => {
    await host({ demoDelayMs: 10 })
    const tab = await thread('w1')
    await api(h!.url, 'POST', '/api/threads/w1/prompt', { message: '/relay are you there' })
    const told = await tab.waitFor((f) => is('notify')(f) && /^idle;/.test(f.data.message))
    expect(told.data.message).toBe('idle; the last reply is: You said: are you there')
  })
})
