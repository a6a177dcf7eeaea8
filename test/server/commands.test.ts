import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Value } from 'typebox/value'
import { CommandReceipt } from '../../src/schemas/index.js'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'

let h: Harness
const tabs: SseClient[] = []

let agentDir: string

beforeEach(async () => {
  // The user's own pi settings: keep almost nothing unsummarised, so a short demo thread can compact.
  agentDir = mkdtempSync(join(tmpdir(), 'threadhost-agent-'))
  writeFileSync(join(agentDir, 'settings.json'), JSON.stringify({ compaction: { keepRecentTokens: 1 } }))
  h = await startHarness({ demoDelayMs: 0, agentDir })
})
afterEach(async () => {
  for (const t of tabs.splice(0)) t.close()
  await h.close()
  rmSync(agentDir, { recursive: true, force: true })
})

const prompt = (thread: string, message: string) => api(h.url, 'POST', `/api/threads/${thread}/prompt`, { message })

describe('threadhost commands over HTTP, on the real pi runtime', () => {
  it('/compact summarises a thread between runs through pi and says so on the feed; too early it is 422 with pi\'s reason, during a run 409', async () => {
    await api(h.url, 'POST', '/api/threads', { id: 'c' })
    const tab = await SseClient.open(`${h.url}/api/threads/c/follow`)
    tabs.push(tab)
    const early = await prompt('c', '/compact')
    expect(early.status).toBe(422)
    expect(early.body.error).toMatch(/Nothing to compact/)
    for (const [i, text] of ['hello there', 'and a second message'].entries()) {
      await prompt('c', text)
      await tab.waitFor(is('settled', { run: i + 1 }))
    }
    const compacted = await prompt('c', '/compact keep it short')
    expect(compacted.body.error).toBeUndefined()
    expect(compacted.status).toBe(200)
    expect(Value.Check(CommandReceipt, compacted.body)).toBe(true)
    expect(compacted.body).toMatchObject({ threadId: 'c', command: 'compact' })
    expect((await tab.waitFor(is('notify', { level: 'info' }))).data.message).toMatch(/compacted/)

    // A run held open by a question.
    await prompt('c', 'call ui_dialog {"method":"confirm","title":"Hold on?"}')
    await tab.waitFor(is('extension-ui-request'))
    const busy = await prompt('c', '/compact')
    expect(busy.status).toBe(409)
    await api(h.url, 'POST', '/api/threads/c/abort')
  })

  it('/model, /thinking and /compact during a run are 409 THREAD_BUSY saying they apply between runs, not that the prompt asked not to be queued', async () => {
    await api(h.url, 'POST', '/api/threads', { id: 'm' })
    const tab = await SseClient.open(`${h.url}/api/threads/m/follow`)
    tabs.push(tab)
    // A run held open by a question.
    await prompt('m', 'call ui_dialog {"method":"confirm","title":"Hold on?"}')
    await tab.waitFor(is('extension-ui-request'))
    for (const [command, name] of [['/model demo', 'model'], ['/thinking low', 'thinking'], ['/compact', 'compact']]) {
      const busy = await prompt('m', command)
      expect(busy.status, command).toBe(409)
      expect(busy.body, command).toMatchObject({ code: 'THREAD_BUSY', reason: 'busy' })
      expect(busy.body.error, command).toContain(`/${name} applies between runs`)
      expect(busy.body.error, command).not.toMatch(/asked not to be queued/)
    }
    await api(h.url, 'POST', '/api/threads/m/abort')
  })

  it('/new answers with a new thread on the same model and workspace; the first thread is unchanged', async () => {
    await api(h.url, 'POST', '/api/threads', { id: 'first', thinkingLevel: 'low' })
    const reply = await prompt('first', '/new Second try')
    expect(reply.status).toBe(200)
    expect(Value.Check(CommandReceipt, reply.body)).toBe(true)
    const created = reply.body.thread as { threadId: string; title: string; model: string; cwd: string; thinkingLevel?: string }
    const first = (await api(h.url, 'GET', '/api/threads/first')).body
    expect(created).toMatchObject({ title: 'Second try', model: first.model, cwd: first.cwd, thinkingLevel: 'low' })
    expect(created.threadId).not.toBe('first')
    expect((await api(h.url, 'GET', `/api/threads/${created.threadId}`)).status).toBe(200)
  })
})
