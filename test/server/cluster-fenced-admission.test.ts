/**
 * A prompt admitted on a node that loses the thread before the prompt's `accepted` record is in the
 * thread's log (another node appended first: the append is refused, the writer fenced): the prompt
 * must not be answered 202 — the new owner's log holds nothing of it, so it would be neither run nor
 * reported `owner-lost`. It is answered 503 `OWNER_CHANGED` with `Retry-After`, and the machine never
 * takes it. Two nodes in this process on the in-process engine; the seam refuses the append that
 * carries the prompt's record, as the engine refuses a fenced writer's.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import { Fenced, type ClusterEngine, type ThreadRecord } from '../../src/host/cluster/port.js'
import { api } from './harness.js'
import { carriesAccepted, startNode, type InProcessNode } from './in-process-cluster.js'

/** Another node took the thread just before this one's prompt record went in: that append is refused. */
const takenBeforeThePrompt = (engine: ClusterEngine): ClusterEngine => ({
  ...engine,
  logs: {
    ...engine.logs,
    append: (threadId, record, expected, id) =>
      carriesAccepted(record) ? Promise.reject(new Fenced(threadId, 'another node appended first')) : engine.logs.append(threadId, record, expected, id),
  },
})

describe('a prompt whose node lost the thread before the prompt was in its log', () => {
  let dataDir: string
  const nodes: InProcessNode[] = []
  afterEach(async () => {
    for (const node of nodes.splice(0).reverse()) await node.close()
    await rm(dataDir, { recursive: true, force: true })
  })

  it('is answered 503 OWNER_CHANGED with Retry-After, not 202, and no run starts for it', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'threadhost-fenced-admission-'))
    const cluster = new MemoryCluster()
    const a = await startNode(cluster, 'na', dataDir, { engine: takenBeforeThePrompt })
    nodes.push(a)
    expect((await api(a.url, 'POST', '/api/threads', { id: 'f1' })).status).toBe(201)
    const answer = await api(a.url, 'POST', '/api/threads/f1/prompt', { message: 'never in the log' }, { 'idempotency-key': 'fenced-once' })
    expect(answer.status).toBe(503)
    expect(answer.body).toMatchObject({ code: 'OWNER_CHANGED' })
    expect(answer.headers.get('retry-after')).toBe('1')
    // Nothing of it ran: the thread's log has no run started and no user message.
    const frames = (cluster.logs.get('f1') ?? []).flatMap(function frames(r: ThreadRecord): string[] {
      return r.kind === 'batch' ? r.records.flatMap(frames) : r.kind === 'frames' ? r.frames : []
    })
    expect(frames.filter((f) => f.includes('"type":"user-message"') || f.includes('"busy":true'))).toEqual([])
  })
})
