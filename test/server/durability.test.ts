/**
 * Fault tests on a real threadhost process: SIGKILL in the middle of a burst, SIGTERM, a corrupt
 * database. Each starts the server with a temp data dir and a fresh pi agent dir, kills it, starts
 * it again on the same data dir and checks what the contract promises (docs/flows/durability.md).
 */
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { spawnedServers } from '../support/spawn-server.js'
import { api, is, SseClient, type Frame } from './harness.js'

const { cleanups, startProcess, tempDataDir } = spawnedServers('durable')

const lastSeq = (tab: SseClient) => Math.max(0, ...tab.frames.map((f) => Number(f.id ?? f.data.seq ?? 0)))

/** Follows with Last-Event-ID and returns the first frame: a snapshot above `after`, or exactly the frame after it. */
async function resume(url: string, threadId: string, after: number): Promise<{ first: Frame; tab: SseClient }> {
  const tab = await SseClient.open(`${url}/api/threads/${threadId}/follow`, { 'last-event-id': String(after) })
  cleanups.push(() => tab.close())
  const first = await tab.waitFor(() => true)
  return { first, tab }
}

describe('durability', () => {
  it('SIGKILL during a burst of queued prompts across threads: every 202 is in the transcript or reported prompt-rejected restart, and a resuming follower never sees a reused seq', async () => {
    const dataDir = await tempDataDir()
    const args = ['--port', '0', '--data-dir', dataDir, '--demo-delay-ms', '40']
    const first = startProcess(args)
    const url = await first.url
    const threads = ['a', 'b', 'c']
    const tabs = new Map<string, SseClient>()
    for (const id of threads) {
      await api(url, 'POST', '/api/threads', { id })
      const tab = await SseClient.open(`${url}/api/threads/${id}/follow`)
      tabs.set(id, tab)
      expect((await api(url, 'POST', `/api/threads/${id}/prompt`, { message: `start ${id}` })).status).toBe(202)
    }
    for (const [id, tab] of tabs) await tab.waitFor(is('status', { busy: true, run: 1 }))
    // A burst: every thread gets many queued prompts at once, steers and follow-ups mixed.
    const sends = threads.flatMap((id) =>
      Array.from({ length: 40 }, (_, i) =>
        api(url, 'POST', `/api/threads/${id}/prompt`, { message: `${id} queued ${i}`, deliverAs: i % 2 ? 'followUp' : 'steer' }).then((r) => ({ id, r })),
      ),
    )
    // And the first prompt of a brand-new thread, whose session file pi has not written yet.
    sends.push(api(url, 'POST', '/api/threads/fresh/prompt', { message: 'first words' }).then((r) => ({ id: 'fresh', r })))
    const answered = await Promise.all(sends)
    const accepted = answered.filter(({ r }) => r.status === 202).map(({ id, r }) => ({ id, messageId: r.body.messageId as string }))
    expect(accepted.length).toBe(answered.length)
    const seen = new Map([...tabs].map(([id, tab]) => [id, lastSeq(tab)]))
    first.child.kill('SIGKILL')
    await first.exit
    for (const tab of tabs.values()) tab.close()

    const second = startProcess(args)
    const url2 = await second.url
    const listed = (await api(url2, 'GET', '/api/threads')).body.threads.map((t: { threadId: string }) => t.threadId)
    expect(listed.sort()).toEqual(['a', 'b', 'c', 'fresh'])
    let reportedRestart = 0
    for (const id of [...threads, 'fresh']) {
      const after = seen.get(id) ?? 0
      const { first: frame } = await resume(url2, id, after)
      // A snapshot (the new life starts above every seq of the old one) — never a reused id.
      expect(frame.event).toBe('snapshot')
      expect(frame.data.seq).toBeGreaterThan(after)
      const transcript = frame.data.transcript as { kind: string; messageId?: string; reason?: string; run?: number }[]
      const ran = new Set(transcript.filter((e) => e.kind === 'user').map((e) => e.messageId))
      const rejected = new Set(transcript.filter((e) => e.kind === 'rejected' && e.reason === 'restart').map((e) => e.messageId))
      reportedRestart += rejected.size
      for (const p of accepted.filter((p) => p.id === id)) {
        expect(ran.has(p.messageId) || rejected.has(p.messageId), `${id} ${p.messageId}`).toBe(true)
      }
      // The run in flight was ended: it shows stopped.
      expect(transcript.some((e) => e.kind === 'stopped')).toBe(true)
    }
    // The kill really landed mid-burst: queued prompts were still waiting.
    expect(reportedRestart).toBeGreaterThan(0)
    // Later followers still see the reports (kept in every snapshot), and a tab that saw the reports resumes with nothing missing.
    const again = await resume(url2, 'b', 0)
    const head = again.first.data.seq as number
    expect((again.first.data.transcript as { kind: string }[]).some((e) => e.kind === 'rejected')).toBe(true)
    // A tab that saw this new life's head resumes with exactly the frames after it: none yet, then the next run's.
    const current = await SseClient.open(`${url2}/api/threads/b/follow`, { 'last-event-id': String(head) })
    cleanups.push(() => current.close())
    await api(url2, 'POST', '/api/threads/b/prompt', { message: 'after the crash' })
    await current.waitFor(is('settled'))
    expect(current.frames[0].event).not.toBe('snapshot')
    expect(Number(current.frames[0].id)).toBe(head + 1)
    second.child.kill('SIGKILL')
  }, 60_000)

  it('SIGTERM then restart keeps seq monotonic: a follower resuming with its last seq gets a snapshot above it, and the next frames are numbered above it too', async () => {
    const dataDir = await tempDataDir()
    const args = ['--port', '0', '--data-dir', dataDir, '--demo-delay-ms', '5']
    const first = startProcess(args)
    const url = await first.url
    await api(url, 'POST', '/api/threads', { id: 'term' })
    const tab = await SseClient.open(`${url}/api/threads/term/follow`)
    for (let i = 0; i < 3; i++) {
      await api(url, 'POST', '/api/threads/term/prompt', { message: `round ${i}` })
      await tab.waitFor(is('status', { busy: false, run: i + 1 }))
    }
    first.child.kill('SIGTERM')
    expect(await first.exit).toBe(0)
    const after = lastSeq(tab)
    tab.close()

    for (let life = 0; life < 2; life++) {
      const next = startProcess(args)
      const url2 = await next.url
      const { first: frame, tab: resumed } = await resume(url2, 'term', after)
      expect(frame.event).toBe('snapshot')
      expect(frame.data.seq).toBeGreaterThan(after)
      await api(url2, 'POST', '/api/threads/term/prompt', { message: `life ${life}` })
      await resumed.waitFor(is('status', { busy: false, run: 4 + life }))
      const ids = resumed.frames.slice(1).map((f) => Number(f.id))
      expect(ids.every((id, i) => id > frame.data.seq && (i === 0 || id === ids[i - 1] + 1))).toBe(true)
      resumed.close()
      next.child.kill('SIGTERM')
      expect(await next.exit).toBe(0)
    }
  }, 60_000)

  it('a corrupt database file still starts: it is set aside, rebuilt, and the threads are listed from their session directories', async () => {
    const dataDir = await tempDataDir()
    const args = ['--port', '0', '--data-dir', dataDir, '--demo-delay-ms', '2']
    const first = startProcess(args)
    const url = await first.url
    for (const id of ['one', 'two']) {
      await api(url, 'POST', '/api/threads', { id })
      const tab = await SseClient.open(`${url}/api/threads/${id}/follow`)
      await api(url, 'POST', `/api/threads/${id}/prompt`, { message: `hello ${id}` })
      await tab.waitFor(is('status', { busy: false, run: 1 }))
      tab.close()
    }
    first.child.kill('SIGTERM')
    expect(await first.exit).toBe(0)
    writeFileSync(join(dataDir, 'threadhost.db'), 'this is not a database, it was overwritten by accident\n'.repeat(200))
    rmSync(join(dataDir, 'threadhost.db-wal'), { force: true })
    rmSync(join(dataDir, 'threadhost.db-shm'), { force: true })

    const second = startProcess(args)
    const url2 = await second.url
    // Held until the threads are recovered (the server listens before that): the index is rebuilt by then.
    const threads = (await api(url2, 'GET', '/api/threads')).body.threads as { threadId: string; run: number }[]
    expect(second.output().match(/thread index rebuilt/g)).toHaveLength(1)
    expect(threads.map((t) => t.threadId).sort()).toEqual(['one', 'two'])
    expect(threads.every((t) => t.run === 1)).toBe(true)
    const { first: frame } = await resume(url2, 'one', 0)
    expect(frame.data.transcript).toMatchObject([{ kind: 'user', text: 'hello one' }, { kind: 'assistant' }])
    // The next prompt continues the numbering on the rebuilt index.
    expect((await api(url2, 'POST', '/api/threads/one/prompt', { message: 'again' })).body).toMatchObject({ run: 2 })
    second.child.kill('SIGKILL')
  }, 60_000)
})
