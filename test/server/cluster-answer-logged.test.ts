/**
 * An answer to a question reaches the run only once the answer's record is in the thread's log
 * (docs/flows/cluster.md, "An answer"): the run never acts on an answer a takeover would not find,
 * and its next step — pi's turn, its writes — does not hold the owner's event loop while the answer
 * is acknowledged, sent to the followers there and answered 204. The seam holds the append that
 * carries `dialog-settled`, as a slow engine would.
 */
import { describe, expect, it } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import type { ClusterEngine, ThreadRecord } from '../../src/host/cluster/port.js'
import type { Observation } from '../../src/schemas/index.js'
import { api, is, sleep, SseClient } from './harness.js'
import { inProcessNodes } from './in-process-cluster.js'

const CONFIRM = 'call ui_dialog {"method":"confirm","title":"Deploy?","message":"to prod"}'

const framesOf = (record: ThreadRecord): string[] => (record.kind === 'batch' ? record.records.flatMap(framesOf) : record.kind === 'frames' ? record.frames : [])

/** Holds the append that carries a `dialog-settled` frame until `release`. */
function holdingTheSettle() {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let held!: () => void
  const reached = new Promise<void>((resolve) => (held = resolve))
  const seam = (engine: ClusterEngine): ClusterEngine => ({
    ...engine,
    logs: {
      ...engine.logs,
      append: async (threadId, record, expected, id) => {
        if (framesOf(record).some((frame) => frame.includes('event: dialog-settled\n'))) {
          held()
          await released
        }
        return engine.logs.append(threadId, record, expected, id)
      },
    },
  })
  return { seam, reached, release }
}

describe('an answer on a cluster node', () => {
  const { node, tabs } = inProcessNodes('answer-logged')

  it('reaches the run only once its record is in the log, and the run then goes on with it', async () => {
    const hold = holdingTheSettle()
    const a = await node(new MemoryCluster(), 'na', { engine: hold.seam })
    expect((await api(a.url, 'POST', '/api/threads', { id: 'q1' })).status).toBe(201)
    const tab = await SseClient.open(`${a.url}/api/threads/q1/follow`)
    tabs.push(tab)
    expect(await api(a.url, 'POST', '/api/threads/q1/prompt', { message: CONFIRM })).toMatchObject({ status: 202, body: { run: 1 } })
    const asked = await tab.waitFor(is('extension-ui-request'))

    // What the owner's own feed takes from here: the answer's settle, and whatever the run does next.
    const feed = (await a.registry.ownFeed('q1'))!
    const after: Observation['type'][] = []
    feed.observe((o) => void after.push(o.type))
    const answered = api(a.url, 'POST', '/api/threads/q1/dialog', { id: asked.data.id, confirmed: true })
    try {
      await hold.reached
      // Time for the run to take its next steps, had the answer reached it.
      await sleep(150)
      expect(after).toEqual(['dialog-settled'])
    } finally {
      hold.release()
    }
    expect((await answered).status).toBe(204)
    await tab.waitFor(is('settled', { run: 1 }))
    // The tool got the answer: its result says so, after the settle.
    const types = tab.frames.map((f) => f.event)
    expect(types.indexOf('dialog-settled')).toBeLessThan(types.indexOf('tool-end'))
    const ended = tab.frames.find((f) => f.event === 'tool-end')!.data
    expect(ended).toMatchObject({ isError: false })
    expect(JSON.stringify(ended.result)).toContain('answered')
  })
})
