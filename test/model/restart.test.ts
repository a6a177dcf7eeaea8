/**
 * The server as its own process, stopped by SIGTERM or killed by SIGKILL mid-run and started again
 * on the same data: the walk's invariants across the restart. The thread machine predicts what a
 * graceful shutdown writes (queued prompts rejected `shutdown`, steering first; the open question
 * settled `aborted`; the run settled aborted; `status {live: false}`); after either signal every
 * prompt answered 202 has exactly one fate in the new life's snapshot, a tab resuming with its
 * Last-Event-ID gets a snapshot strictly above it (no id reused), and the next frames are contiguous
 * and byte-identical on every tab.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { api } from '../server/harness.js'
import { startProcess } from '../support/spawn-server.js'
import { Follower, sleep, type Connection, type Frame } from './follower.js'
import { MACHINE_FRAMES, ThreadModel } from './thread-model.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})
const agentDir = mkdtempSync(join(tmpdir(), 'threadhost-agent-'))
afterAll(() => rmSync(agentDir, { recursive: true, force: true }))

const CONFIRM = `call ui_dialog ${JSON.stringify({ method: 'confirm', title: 'Deploy?' })}`

/** Tabs whose frames are checked as they come: contiguous seq per connection, one byte string per seq. */
function tabs() {
  const bySeq = new Map<string, string>()
  const threadOf = new Map<Follower, string>()
  const problems: string[] = []
  const onFrame = (f: Follower, c: Connection, frame: Frame) => {
    if (c.lastSeq !== undefined && frame.seq !== c.lastSeq + 1) problems.push(`${f.name}: #${frame.seq} after #${c.lastSeq}`)
    if (frame.event === 'snapshot') return
    const key = `${threadOf.get(f)}#${frame.seq}`
    const seen = bySeq.get(key)
    if (seen === undefined) bySeq.set(key, frame.raw)
    else if (seen !== frame.raw) problems.push(`${f.name}: #${frame.seq} differs between tabs`)
  }
  const open = (name: string, thread = 'r') => {
    const f = new Follower(name, onFrame)
    threadOf.set(f, thread)
    cleanups.push(() => f.close())
    return f
  }
  return { open, problems }
}

async function until(what: string, ok: () => boolean, ms = 10_000) {
  const end = Date.now() + ms
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(5)
  }
}

const has = (f: Follower, pred: (d: any) => boolean) => f.current!.frames.some((fr) => pred(fr.data))

async function scenario(signal: 'SIGTERM' | 'SIGKILL') {
  const dataDir = mkdtempSync(join(tmpdir(), 'threadhost-model-restart-'))
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
  const args = ['--port', '0', '--data-dir', dataDir, '--demo-delay-ms', '5']
  const first = startProcess(args, { agentDir, cleanups })
  const url = await first.url
  const t = tabs()
  const model = new ThreadModel('r')

  expect((await api(url, 'POST', '/api/threads', { id: 'r' })).status).toBe(201)
  const A = t.open('A')
  const B = t.open('B')
  await A.open(url, 'r')
  await B.open(url, 'r')
  await A.first()
  await B.first()

  // run 1 blocks on a question; three prompts queue behind it
  const accepted: string[] = []
  const prompt = async (thread: string, message: string, deliverAs: 'steer' | 'followUp' = 'steer') => {
    const modelId = thread === 'r' ? model.prompt(message, 'enqueue', deliverAs) : undefined
    const r = await api(url, 'POST', `/api/threads/${thread}/prompt`, { message, deliverAs })
    expect(r.status).toBe(202)
    accepted.push(r.body.messageId)
    if (modelId) {
      model.serverIds.set(modelId, r.body.messageId)
      const [reply] = model.take(modelId)
      expect(reply).toMatchObject({ type: 'prompt.admitted', run: r.body.run, queued: r.body.queued })
    }
    return r.body
  }
  await prompt('r', CONFIRM)
  await until('the question', () => has(A, (d) => d.type === 'extension-ui-request'))
  const asked = A.current!.frames.find((f) => f.event === 'extension-ui-request')!.data
  model.send({ type: 'ASK', dialogId: asked.id, spec: asked.dialog, origin: asked.origin })
  await prompt('r', 'first steer')
  await prompt('r', 'a follow-up', 'followUp')
  await prompt('r', 'second steer')
  // a second thread streams when the signal comes, with a follow-up queued
  await prompt('r2', 'slow 10000')
  const C = t.open('C', 'r2')
  await C.open(url, 'r2')
  await until('r2 streaming', () => has(C, (d) => d.type === 'assistant-delta'))
  await prompt('r2', 'after the slow one', 'followUp')
  await until('the queue frames', () => has(A, (d) => d.type === 'queue' && d.steering.length === 2 && d.followUp.length === 1))
  await sleep(50)
  const seenBefore = { A: A.lastSeq, B: B.lastSeq, C: C.lastSeq }
  model.expected.length = 0

  first.child.kill(signal)
  const code = await first.exit
  await until('the tabs to close', () => [A, B, C].every((f) => f.current!.ended), 5000)
  if (signal === 'SIGTERM') {
    expect(code).toBe(0)
    // what the machine writes on a shutdown, in its order
    model.send({ type: 'DISPOSE', reason: 'shutdown', dialogOutcome: 'aborted' })
    const written = A.current!.frames.filter((f) => f.seq > seenBefore.A && MACHINE_FRAMES.has(f.event)).map((f) => f.data)
    const expected = model.expected.map((e) =>
      e.type === 'prompt-rejected' ? { ...e, messageId: model.serverIds.get(e.messageId) } : e,
    )
    expect(written).toMatchObject(expected)
    expect(expected.map((e) => e.type)).toEqual(['prompt-rejected', 'prompt-rejected', 'prompt-rejected', 'dialog-settled', 'settled', 'status'])
  }
  expect(t.problems).toEqual([])

  // the same data, a new process
  const second = startProcess(args, { agentDir, cleanups })
  const url2 = await second.url
  await B.open(url2, 'r', { after: seenBefore.B, afterRestart: true })
  const snap = (await B.first())!
  // never a reused id: a snapshot strictly above what the tab saw
  expect(snap.event).toBe('snapshot')
  expect(snap.seq).toBeGreaterThan(seenBefore.B)
  const C2 = await C.open(url2, 'r2', { after: seenBefore.C, afterRestart: true })
  const snap2 = (await C.first())!
  expect(snap2.event).toBe('snapshot')
  expect(snap2.seq).toBeGreaterThan(seenBefore.C)
  expect(C2.status).toBe(200)

  // every prompt answered 202 has exactly one fate in the new life's snapshot: ran (user) or
  // reported (rejected / handled) — after SIGTERM as after SIGKILL (BUG-2, docs/testing.md)
  const fates = new Map<string, string[]>()
  for (const s of [snap, snap2])
    for (const e of s.data.transcript as { kind: string; messageId?: string; reason?: string }[])
      if (e.messageId && ['user', 'rejected', 'handled'].includes(e.kind))
        fates.set(e.messageId, [...(fates.get(e.messageId) ?? []), e.kind === 'rejected' ? `rejected ${e.reason}` : e.kind])
  for (const id of accepted) expect(fates.get(id) ?? [], `prompt ${id}`).toHaveLength(1)
  const reason = signal === 'SIGTERM' ? 'shutdown' : 'restart'
  expect([...fates.values()].flat().filter((f) => f.startsWith('rejected')).sort()).toEqual(Array(4).fill(`rejected ${reason}`))
  // the runs in flight ended stopped; no question is left open
  for (const s of [snap, snap2]) {
    expect(s.data.openDialogs).toEqual([])
    expect(s.data.status).toMatchObject({ live: false, busy: false })
    expect((s.data.transcript as { kind: string }[]).some((e) => e.kind === 'stopped')).toBe(true)
  }

  // the run counter never goes back, and the next frames are contiguous and byte-identical on every tab
  const D = t.open('D')
  await D.open(url2, 'r')
  await D.first()
  const next = await api(url2, 'POST', '/api/threads/r/prompt', { message: 'after the restart' })
  expect(next).toMatchObject({ status: 202, body: { run: 2, queued: false } })
  await until('run 2 to settle', () => has(B, (d) => d.type === 'status' && d.run === 2 && !d.busy) && has(D, (d) => d.type === 'status' && d.run === 2 && !d.busy))
  const ids = B.current!.frames.map((f) => f.seq)
  expect(ids.every((id, i) => i === 0 || id === ids[i - 1] + 1)).toBe(true)
  // a tab that saw the head resumes with exactly the frames after it
  const head = B.current!.lastSeq!
  const E = t.open('E')
  await E.open(url2, 'r', { after: head })
  await api(url2, 'POST', '/api/threads/r/prompt', { message: 'once more' })
  const firstAfter = (await E.first())!
  expect(firstAfter.event).not.toBe('snapshot')
  expect(firstAfter.seq).toBe(head + 1)
  await until('run 3 to settle', () => has(E, (d) => d.type === 'status' && d.run === 3 && !d.busy))
  expect(t.problems).toEqual([])
  second.child.kill('SIGTERM')
  expect(await second.exit).toBe(0)
}

describe('the walk across a restart of the server process', () => {
  it('SIGTERM mid-run: the shutdown writes what the thread machine predicts, then every 202 prompt has one fate and a resuming tab gets a snapshot above its last id', async () => {
    await scenario('SIGTERM')
  }, 60_000)

  it('SIGKILL mid-run: after the restart every 202 prompt has one fate (ran or rejected restart), no id is reused, and the frames after are contiguous and identical on every tab', async () => {
    await scenario('SIGKILL')
  }, 60_000)
})
