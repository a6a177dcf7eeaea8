/**
 * Taking the queue back (pi's Alt+Up) over real sockets, with the real pi runtime on the demo model:
 * the queued prompts come back as a stop hands them back, and the run goes on.
 * Titles are cited by docs/flows/prompt.md; the docs gate keeps them in step.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'

let h: Harness
const clients: SseClient[] = []
const follow = async (thread: string) => {
  const client = await SseClient.open(`${h.url}/api/threads/${thread}/follow`)
  clients.push(client)
  return client
}
/** A `queue` frame holding exactly these texts. */
const queueIs = (steering: string[], followUp: string[]) => (f: { event: string; data: any }) =>
  f.event === 'queue' && JSON.stringify(f.data.steering) === JSON.stringify(steering) && JSON.stringify(f.data.followUp) === JSON.stringify(followUp)
const prompt = (thread: string, message: string, extra: Record<string, unknown> = {}) =>
  api(h.url, 'POST', `/api/threads/${thread}/prompt`, { message, ...extra })

beforeEach(async () => {
  h = await startHarness({ demoDelayMs: 5 })
})
afterEach(async () => {
  for (const c of clients.splice(0)) c.close()
  await h.close()
})

describe('taking the queue back over HTTP', () => {
  it('POST …/queue/take during a slow run hands back both queued prompts, steering first, to the caller; every tab sees the queue emptied; the run still finishes and the next prompt runs', async () => {
    expect((await api(h.url, 'POST', '/api/threads/never/queue/take')).status).toBe(404)
    await api(h.url, 'POST', '/api/threads', { id: 't1' })
    const tab = await follow('t1')
    const other = await follow('t1')
    expect((await prompt('t1', 'slow 300')).body).toMatchObject({ run: 1, queued: false })
    await tab.waitFor(is('assistant-delta'))
    const first = await prompt('t1', 'first queued', { deliverAs: 'followUp' })
    const second = await prompt('t1', 'second queued')
    expect(first.body).toMatchObject({ run: 1, queued: true })
    expect(second.body).toMatchObject({ run: 1, queued: true })
    await other.waitFor(queueIs(['second queued'], ['first queued']))

    // naming another run is stale and takes nothing
    expect(await api(h.url, 'POST', '/api/threads/t1/queue/take', { run: 7 })).toMatchObject({ status: 409, body: { code: 'RUN_STALE', reason: 'stale-run' } })
    const key = { 'idempotency-key': 'take-1' }
    const take = await api(h.url, 'POST', '/api/threads/t1/queue/take', { run: 1 }, key)
    expect(take).toMatchObject({ status: 200, body: { threadId: 't1', restored: ['second queued', 'first queued'] } })
    // a retry with the same key is the first answer, replayed; nothing is taken twice
    const again = await api(h.url, 'POST', '/api/threads/t1/queue/take', { run: 1 }, key)
    expect(again).toMatchObject({ status: 200, body: take.body })
    expect(again.headers.get('idempotent-replayed')).toBe('true')

    // every follower sees the emptied queue while the run is still going
    for (const t of [tab, other]) await t.waitFor(queueIs([], []))
    const emptied = tab.frames.findLastIndex(queueIs([], []))
    const settled = await tab.waitFor(is('settled', { run: 1 }))
    expect(settled.data).toMatchObject({ run: 1, aborted: false })
    expect(emptied).toBeLessThan(tab.frames.indexOf(settled))
    // the run ran to its end: its reply is whole, and none of the taken prompts ran
    expect(tab.frames.filter(is('assistant-end'))).toHaveLength(1)
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    expect(tab.frames.filter(is('user-message')).map((f) => f.data.text)).toEqual(['slow 300'])
    // their journal entries are settled as a stop settles them: handed back
    const fates = h.registry.store.journal('t1').prompts.map((p) => [p.text, p.fate?.kind])
    expect(fates).toEqual(expect.arrayContaining([['first queued', 'restored'], ['second queued', 'restored']]))

    // idle: nothing to take
    expect(await api(h.url, 'POST', '/api/threads/t1/queue/take')).toMatchObject({ status: 409, body: { code: 'THREAD_IDLE', reason: 'idle' } })
    expect(await prompt('t1', 'next one')).toMatchObject({ status: 202, body: { run: 2, queued: false } })
    await other.waitFor(is('assistant-end', { text: 'You said: next one' }))
    expect(other.frames.filter(is('user-message')).map((f) => f.data.text)).toEqual(['slow 300', 'next one'])
  })
})
