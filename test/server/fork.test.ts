import { rm } from 'node:fs/promises'
import { afterEach, describe, expect, it } from 'vitest'
import type { ForkReceipt, Snapshot, ThreadSummary } from '../../src/schemas/index.js'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function started(): Promise<Harness> {
  const h = await startHarness()
  cleanups.push(() => h.close())
  return h
}

/** Two finished runs on `threadId`; returns the settled snapshot's transcript. */
async function twoRuns(h: Harness, threadId: string): Promise<Snapshot['transcript']> {
  await api(h.url, 'POST', '/api/threads', { id: threadId, title: 'Source' })
  const tab = await SseClient.open(`${h.url}/api/threads/${threadId}/follow`)
  await api(h.url, 'POST', `/api/threads/${threadId}/prompt`, { message: 'first question' })
  await tab.waitFor(is('status', { busy: false, run: 1 }))
  await api(h.url, 'POST', `/api/threads/${threadId}/prompt`, { message: 'second question' })
  await tab.waitFor(is('status', { busy: false, run: 2 }))
  tab.close()
  return transcriptOf(h, threadId)
}

async function transcriptOf(h: Harness, threadId: string): Promise<Snapshot['transcript']> {
  const tab = await SseClient.open(`${h.url}/api/threads/${threadId}/follow`)
  const snapshot = (await tab.waitFor(is('snapshot'))).data as Snapshot
  tab.close()
  return snapshot.transcript
}

const idOf = (transcript: Snapshot['transcript'], kind: 'user' | 'assistant', text: string) => {
  const entry = transcript.find((e) => e.kind === kind && e.text.includes(text))
  if (!entry || !('messageId' in entry)) throw new Error(`no ${kind} entry with ${text}`)
  return entry.messageId
}

describe('fork', () => {
  it('forking at a user message makes a linked thread holding the history before it, and hands the message back for editing', async () => {
    const h = await started()
    const source = await twoRuns(h, 'src')
    const res = await api(h.url, 'POST', '/api/threads/src/fork', { fromMessageId: idOf(source, 'user', 'second question') })
    expect(res.status).toBe(201)
    const receipt = res.body as ForkReceipt
    expect(receipt.prompt).toBe('second question')
    expect(receipt.thread).toMatchObject({ parentId: 'src', model: 'demo', live: false })
    const forkId = receipt.thread.threadId
    expect(forkId).not.toBe('src')
    expect((await transcriptOf(h, forkId)).map((e) => [e.kind, 'text' in e ? e.text : ''])).toEqual([
      ['user', 'first question'],
      ['assistant', 'You said: first question'],
    ])
    // The source is untouched, and the fork runs on from its own history with the next run number.
    expect(await transcriptOf(h, 'src')).toEqual(source)
    const tab = await SseClient.open(`${h.url}/api/threads/${forkId}/follow`)
    expect((await api(h.url, 'POST', `/api/threads/${forkId}/prompt`, { message: 'second, edited' })).body).toMatchObject({ run: 2 })
    await tab.waitFor(is('status', { busy: false, run: 2 }))
    tab.close()
    expect((await transcriptOf(h, forkId)).filter((e) => e.kind === 'user').map((e) => 'text' in e && e.text)).toEqual(['first question', 'second, edited'])
  })

  it('forking at a reply cuts before the prompt that produced it, so sending the prompt again regenerates it', async () => {
    const h = await started()
    const source = await twoRuns(h, 'regen')
    const res = await api(h.url, 'POST', '/api/threads/regen/fork', { fromMessageId: idOf(source, 'assistant', 'You said: second') })
    expect(res.status).toBe(201)
    const receipt = res.body as ForkReceipt
    expect(receipt.prompt).toBe('second question')
    expect((await transcriptOf(h, receipt.thread.threadId)).filter((e) => e.kind === 'user')).toHaveLength(1)
  })

  it('forking at the first prompt makes an empty thread that is still linked to its parent', async () => {
    const h = await started()
    const source = await twoRuns(h, 'first')
    const res = await api(h.url, 'POST', '/api/threads/first/fork', { fromMessageId: idOf(source, 'user', 'first question') })
    expect(res.status).toBe(201)
    const { thread } = res.body as ForkReceipt
    expect(thread).toMatchObject({ parentId: 'first', title: 'Source (fork)', run: 0 })
    expect(await transcriptOf(h, thread.threadId)).toEqual([])
    const tab = await SseClient.open(`${h.url}/api/threads/${thread.threadId}/follow`)
    expect((await api(h.url, 'POST', `/api/threads/${thread.threadId}/prompt`, { message: 'a fresh start' })).body).toMatchObject({ run: 1 })
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    tab.close()
    expect((await api(h.url, 'GET', `/api/threads/${thread.threadId}`)).body).toMatchObject({ parentId: 'first', title: 'Source (fork)', preview: 'You said: a fresh start' })
  })

  it('a thread can be forked mid-run: the fork holds what was persisted before the prompt, and a message the persisted transcript does not hold is a 404', async () => {
    const h = await started()
    await api(h.url, 'POST', '/api/threads', { id: 'busy' })
    const tab = await SseClient.open(`${h.url}/api/threads/busy/follow`)
    await api(h.url, 'POST', '/api/threads/busy/prompt', { message: 'done before' })
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    // Run 2 parks on a question, so the thread is busy while it is forked.
    await api(h.url, 'POST', '/api/threads/busy/prompt', { message: 'call ui_dialog {"method":"confirm","title":"Sure?","message":"?"}' })
    await tab.waitFor(is('extension-ui-request'))
    const parked = tab.frames.find((f) => f.event === 'user-message' && f.data.text.startsWith('call ui_dialog'))!.data.messageId
    const res = await api(h.url, 'POST', '/api/threads/busy/fork', { fromMessageId: parked })
    expect(res.status).toBe(201)
    expect((res.body as ForkReceipt).prompt).toContain('call ui_dialog')
    expect((await transcriptOf(h, (res.body as ForkReceipt).thread.threadId)).map((e) => e.kind)).toEqual(['user', 'assistant'])
    const streaming = tab.frames.filter((f) => f.event === 'assistant-start').at(-1)!.data.messageId
    expect((await api(h.url, 'POST', '/api/threads/busy/fork', { fromMessageId: streaming })).status).toBe(404)
    tab.close()
  })

  it('the fork route answers 404 for an unknown thread or message, 400 for a bad body, and creates nothing then', async () => {
    const h = await started()
    await twoRuns(h, 'codes')
    expect((await api(h.url, 'POST', '/api/threads/nope/fork', { fromMessageId: 'x' })).status).toBe(404)
    expect((await api(h.url, 'POST', '/api/threads/codes/fork', { fromMessageId: 'no-such-message' })).status).toBe(404)
    expect((await api(h.url, 'POST', '/api/threads/codes/fork', {})).status).toBe(400)
    expect((await api(h.url, 'POST', '/api/threads/codes/fork', { fromMessageId: 'x', extra: 1 })).status).toBe(400)
    expect(((await api(h.url, 'GET', '/api/threads')).body as { threads: ThreadSummary[] }).threads.map((t) => t.threadId)).toEqual(['codes'])
  })

  it('a repeated fork with the same Idempotency-Key gets the first answer back and forks once', async () => {
    const h = await started()
    const source = await twoRuns(h, 'once')
    const body = { fromMessageId: idOf(source, 'user', 'second question') }
    const headers = { 'idempotency-key': 'fork-once-1' }
    const first = await api(h.url, 'POST', '/api/threads/once/fork', body, headers)
    const again = await api(h.url, 'POST', '/api/threads/once/fork', body, headers)
    expect(first.status).toBe(201)
    expect(again.body).toEqual(first.body)
    expect(((await api(h.url, 'GET', '/api/threads')).body as { threads: ThreadSummary[] }).threads).toHaveLength(2)
  })

  it('the fork and its link to the parent survive a restart', async () => {
    let h = await startHarness()
    const dataDir = h.dataDir
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }))
    const source = await twoRuns(h, 'parent')
    const { thread } = (await api(h.url, 'POST', '/api/threads/parent/fork', { fromMessageId: idOf(source, 'user', 'second question') })).body as ForkReceipt
    await h.close({ keepData: true })

    h = await startHarness({ dataDir })
    cleanups.push(() => h.close())
    expect((await api(h.url, 'GET', `/api/threads/${thread.threadId}`)).body).toMatchObject({
      parentId: 'parent',
      title: 'Source (fork)',
      preview: 'You said: first question',
      live: false,
    })
    expect((await transcriptOf(h, thread.threadId)).map((e) => e.kind)).toEqual(['user', 'assistant'])
  })
})
