/**
 * The public contract over real sockets, with the real pi runtime on the demo model.
 * Titles are cited by docs/flows/*.md; the docs gate keeps them in step.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { project, initialView } from '../../src/shared/projection.js'
import { api, is, sleep, SseClient, startHarness, type Harness } from './harness.js'

let h: Harness
const clients: SseClient[] = []
const follow = async (thread: string, headers: Record<string, string> = {}, query = '') => {
  const client = await SseClient.open(`${h.url}/api/threads/${thread}/follow${query}`, headers)
  clients.push(client)
  return client
}
const prompt = (thread: string, message: string, extra: Record<string, unknown> = {}) =>
  api(h.url, 'POST', `/api/threads/${thread}/prompt`, { message, ...extra })

const CONFIRM = 'call ui_dialog {"method":"confirm","title":"Deploy?","message":"to prod"}'
const SELECT = 'call ui_dialog {"method":"select","title":"Pick one","options":["red","green"]}'

beforeEach(async () => {
  h = await startHarness({ demoDelayMs: 5 })
})
afterEach(async () => {
  for (const c of clients.splice(0)) c.close()
  await h.close()
})

describe('abort over HTTP', () => {
  it('POST …/abort tells pi once and answers with the restored queue; the run still ends on the follow by its settle, not by the route', async () => {
    expect((await api(h.url, 'POST', '/api/threads/never/abort')).status).toBe(404)
    await api(h.url, 'POST', '/api/threads', { id: 't1' })
    const tab = await follow('t1')
    expect((await prompt('t1', 'slow 400')).body).toMatchObject({ run: 1, queued: false })
    await tab.waitFor(is('assistant-delta'))
    expect((await prompt('t1', 'first queued')).body).toMatchObject({ run: 1, queued: true })
    expect((await prompt('t1', 'second queued', { deliverAs: 'followUp' })).body).toMatchObject({ queued: true })

    const stop = await api(h.url, 'POST', '/api/threads/t1/abort')
    expect(stop).toMatchObject({ status: 200, body: { threadId: 't1', restored: ['first queued', 'second queued'] } })
    // The route answered, but the run has not ended by the route: busy stays true until the settle.
    const idle = await tab.waitFor(is('status', { busy: false, run: 1 }))
    const events = tab.events()
    const emptied = events.lastIndexOf('queue')
    expect(tab.frames[emptied].data).toMatchObject({ steering: [], followUp: [] })
    expect(emptied).toBeLessThan(events.indexOf('settled'))
    expect(tab.frames.find((f) => f.event === 'settled')!.data).toMatchObject({ run: 1, aborted: true })
    expect(events.indexOf('settled')).toBeLessThan(tab.frames.indexOf(idle))
    // None of the restored prompts ran.
    expect(tab.frames.filter((f) => f.event === 'user-message').map((f) => f.data.text)).toEqual(['slow 400'])
    expect(await api(h.url, 'POST', '/api/threads/t1/abort')).toMatchObject({ status: 409 })
  })

  it('a prompt sent while a stop is pending waits for that run to settle and starts the next run', async () => {
    await api(h.url, 'POST', '/api/threads', { id: 't2' })
    const tab = await follow('t2')
    await prompt('t2', 'slow 400')
    await tab.waitFor(is('assistant-delta'))
    await api(h.url, 'POST', '/api/threads/t2/abort')
    const next = await prompt('t2', 'after the stop')
    expect(next).toMatchObject({ status: 202, body: { run: 2, queued: false } })
    await tab.waitFor(is('assistant-end', { text: 'You said: after the stop' }))
    const settledAt = tab.frames.findIndex(is('settled', { run: 1 }))
    const userAt = tab.frames.findIndex(is('user-message', { text: 'after the stop' }))
    expect(settledAt).toBeGreaterThanOrEqual(0)
    expect(settledAt).toBeLessThan(userAt)
  })

  it('abort naming a run that is not the current one is refused with 409 and stops nothing', async () => {
    await prompt('t3', 'slow 200')
    expect(await api(h.url, 'POST', '/api/threads/t3/abort', { run: 5 })).toMatchObject({ status: 409, body: { reason: 'stale-run' } })
    expect(await api(h.url, 'POST', '/api/threads/t3/abort', { run: 1 })).toMatchObject({ status: 200 })
  })
})

describe('dialogs over HTTP', () => {
  it('POST …/dialog: 422 leaves the question open, 404 for an unknown id, 204 once, then 404 on replay; the settle frame precedes the status frame', async () => {
    await api(h.url, 'POST', '/api/threads', { id: 'd1' })
    const tab = await follow('d1')
    await prompt('d1', SELECT)
    const asked = await tab.waitFor(is('extension-ui-request'))
    const id = asked.data.id as string
    expect(asked.data).toMatchObject({ blocking: true, dialog: { method: 'select', options: ['red', 'green'] }, origin: { kind: expect.any(String) } })

    const wrong = await api(h.url, 'POST', '/api/threads/d1/dialog', { id, value: 'blue' })
    expect(wrong).toMatchObject({ status: 422, body: { refusal: "'blue' is not one of the offered options" } })
    expect(await api(h.url, 'POST', '/api/threads/d1/dialog', { id, confirmed: true })).toMatchObject({ status: 422 })
    expect((await api(h.url, 'GET', '/api/threads/d1')).body).toMatchObject({ openDialogs: 1 })
    expect(await api(h.url, 'POST', '/api/threads/d1/dialog', { id: 'no-such-question', value: 'red' })).toMatchObject({ status: 404 })
    expect(await api(h.url, 'POST', '/api/threads/d1/dialog', { value: 'red' })).toMatchObject({ status: 400 })

    expect((await api(h.url, 'POST', '/api/threads/d1/dialog', { id, value: 'green' })).status).toBe(204)
    expect((await api(h.url, 'POST', '/api/threads/d1/dialog', { id, value: 'green' })).status).toBe(404)

    const idle = await tab.waitFor(is('status', { busy: false, run: 1 }))
    const settle = tab.frames.findIndex(is('dialog-settled', { id, outcome: 'answered' }))
    expect(settle).toBeGreaterThan(tab.frames.indexOf(asked))
    expect(settle).toBeLessThan(tab.frames.indexOf(idle))
    const reply = tab.frames.filter((f) => f.event === 'assistant-end').at(-1)!
    expect(reply.data.text).toContain('green')
  })

  it('one tab answers, two others get the same dialog-settled frame', async () => {
    await api(h.url, 'POST', '/api/threads', { id: 'd2' })
    const tabs = [await follow('d2'), await follow('d2'), await follow('d2')]
    await prompt('d2', CONFIRM)
    const asked = await tabs[0].waitFor(is('extension-ui-request'))
    expect((await api(h.url, 'POST', '/api/threads/d2/dialog', { id: asked.data.id, confirmed: true })).status).toBe(204)
    const settles = await Promise.all(tabs.map((t) => t.waitFor(is('dialog-settled'))))
    expect(new Set(settles.map((f) => f.raw)).size).toBe(1)
    expect(settles[0].data).toMatchObject({ id: asked.data.id, outcome: 'answered' })
  })

  it('all followers of a thread receive byte-identical frames', async () => {
    await api(h.url, 'POST', '/api/threads', { id: 'bytes' })
    const a = await follow('bytes')
    const b = await follow('bytes')
    await prompt('bytes', 'hello everyone')
    await Promise.all([a, b].map((t) => t.waitFor(is('status', { busy: false, run: 1 }))))
    const after = (t: SseClient) => t.frames.filter((f) => f.event !== 'snapshot').map((f) => f.raw)
    expect(after(a)).toEqual(after(b))
    expect(after(a).length).toBeGreaterThan(4)
  })

  it('a follow opened under an open question finds it in snapshot.openDialogs', async () => {
    await api(h.url, 'POST', '/api/threads', { id: 'd3' })
    const first = await follow('d3')
    await prompt('d3', CONFIRM)
    const asked = await first.waitFor(is('extension-ui-request'))
    const late = await follow('d3')
    const snapshot = await late.waitFor(is('snapshot'))
    expect(snapshot.data.openDialogs).toEqual([
      { id: asked.data.id, dialog: { method: 'confirm', title: 'Deploy?', message: 'to prod' }, origin: asked.data.origin },
    ])
    expect(snapshot.data.status).toMatchObject({ live: true, busy: true })
  })

  it('Stop during a question settles it aborted, the tool sees its cancel value, and the run ends', async () => {
    await api(h.url, 'POST', '/api/threads', { id: 'd4' })
    const tab = await follow('d4')
    await prompt('d4', CONFIRM)
    const asked = await tab.waitFor(is('extension-ui-request'))
    expect(await api(h.url, 'POST', '/api/threads/d4/abort')).toMatchObject({ status: 200, body: { restored: [] } })
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    const settleAt = tab.frames.findIndex(is('dialog-settled', { id: asked.data.id, outcome: 'aborted' }))
    expect(settleAt).toBeGreaterThan(0)
    expect(settleAt).toBeLessThan(tab.frames.findIndex(is('settled')))
    expect(tab.frames.find((f) => f.event === 'settled')!.data.aborted).toBe(true)
    expect((await api(h.url, 'POST', '/api/threads/d4/dialog', { id: asked.data.id, confirmed: true })).status).toBe(404)
  })
})

describe('follow and resume', () => {
  it('following an id that was never created is 404; a created thread starts with a snapshot', async () => {
    expect((await follow('ghost')).status).toBe(404)
    await api(h.url, 'POST', '/api/threads', { id: 'fresh' })
    const tab = await follow('fresh')
    const snap = await tab.waitFor(is('snapshot'))
    expect(snap).toMatchObject({ id: '0', data: { threadId: 'fresh', seq: 0, status: { live: false }, transcript: [] } })
  })

  it('resume with Last-Event-ID loses and duplicates nothing; a too-old or unknown id gets a snapshot', async () => {
    await api(h.url, 'POST', '/api/threads', { id: 'r1' })
    const whole = await follow('r1')
    await prompt('r1', 'slow 60')
    const cutAt = await whole.waitFor(is('assistant-delta'))
    const resumed = await follow('r1', { 'last-event-id': cutAt.id! })
    await whole.waitFor(is('status', { busy: false, run: 1 }))
    await resumed.waitFor(is('status', { busy: false, run: 1 }))
    const tail = whole.frames.filter((f) => Number(f.id) > Number(cutAt.id) && f.event !== 'snapshot').map((f) => f.raw)
    expect(resumed.frames.map((f) => f.raw)).toEqual(tail)

    const ahead = await follow('r1', {}, '?after=999999')
    expect((await ahead.waitFor(is('snapshot'))).data.seq).toBe(whole.frames.at(-1)!.data.seq)
  })

  it('the snapshot at seq N equals the fold of frames 1..N seen by a follower from the start', async () => {
    await api(h.url, 'POST', '/api/threads', { id: 'fold' })
    const early = await follow('fold')
    await prompt('fold', SELECT)
    const asked = await early.waitFor(is('extension-ui-request'))
    const late = await follow('fold')
    const snapshot = (await late.waitFor(is('snapshot'))).data
    let view = early.frames[0].data
    for (const f of early.frames.slice(1)) if (f.data.seq <= snapshot.seq) view = project(view, f.data)
    expect(view).toEqual(snapshot)
    await api(h.url, 'POST', '/api/threads/fold/dialog', { id: asked.data.id, value: 'red' })
    expect(initialView('fold').seq).toBe(0)
  })

  it('a follower that falls behind the high-water mark is closed and can resume, while the run and other tabs go on', async () => {
    await h.close()
    h = await startHarness({ demoDelayMs: 0, follow: { highWaterMark: 16 * 1024, lagMs: 100 } })
    await api(h.url, 'POST', '/api/threads', { id: 'slowtab' })
    // A tab on a stalled network: its own connection, whose server side is corked so every write
    // stays buffered in the server.
    const corked = new Promise<import('node:net').Socket>((resolve) =>
      h.app.server.once('connection', (socket) => {
        socket.cork()
        resolve(socket)
      }),
    )
    const net = await import('node:net')
    const stalledClient = net.connect(Number(new URL(h.url).port), '127.0.0.1')
    stalledClient.write('GET /api/threads/slowtab/follow HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n')
    const serverSide = await corked
    const healthy = await follow('slowtab')
    await prompt('slowtab', 'slow 400')
    const done = await healthy.waitFor(is('status', { busy: false, run: 1 }))
    expect(healthy.frames.filter((f) => f.event === 'assistant-delta').length).toBeGreaterThanOrEqual(400)
    // Judged by sustained lag: it is closed once it has stayed behind for lagMs.
    for (let i = 0; i < 100 && !serverSide.destroyed; i++) await sleep(20)
    expect(serverSide.destroyed).toBe(true)
    stalledClient.destroy()
    // The dropped tab reconnects from the last frame it saw (here: none) and misses nothing.
    const lastSeen = '0'
    const back = await follow('slowtab', { 'last-event-id': lastSeen })
    await back.waitFor(is('status', { busy: false, run: 1 }))
    const expected = healthy.frames.filter((f) => f.id !== undefined && Number(f.id) > Number(lastSeen) && f.event !== 'snapshot')
    const got = back.frames.filter((f) => f.event !== 'snapshot')
    if (got.length && back.frames[0].event === 'snapshot') expect(back.frames[0].data.seq).toBe(done.data.seq)
    else expect(got.map((f) => f.raw)).toEqual(expected.map((f) => f.raw))
  })
})

describe('threads', () => {
  it('threads can be created, listed, renamed and deleted with the documented codes', async () => {
    expect(await api(h.url, 'POST', '/api/threads', { id: 'c1', title: 'First' })).toMatchObject({ status: 201, body: { threadId: 'c1' } })
    expect(await api(h.url, 'POST', '/api/threads', { id: 'c1' })).toMatchObject({ status: 409 })
    expect(await api(h.url, 'POST', '/api/threads', { id: 'bad id!' })).toMatchObject({ status: 400 })
    expect(await api(h.url, 'POST', '/api/threads', { nonsense: 1 })).toMatchObject({ status: 400 })
    const made = await api(h.url, 'POST', '/api/threads', {})
    expect(made).toMatchObject({ status: 201, body: { threadId: expect.any(String) } })
    expect((await api(h.url, 'GET', '/api/threads')).body.threads.map((t: any) => t.threadId).sort()).toEqual(['c1', made.body.threadId].sort())
    expect(await api(h.url, 'GET', '/api/threads/c1')).toMatchObject({
      status: 200,
      body: { threadId: 'c1', title: 'First', live: false, busy: false, run: 0, openDialogs: 0 },
    })
    expect(await api(h.url, 'PATCH', '/api/threads/c1', { title: 'Renamed' })).toMatchObject({ status: 200, body: { title: 'Renamed' } })
    expect((await api(h.url, 'GET', '/api/threads/nope')).status).toBe(404)
    expect((await api(h.url, 'GET', '/api/threads/bad%20id')).status).toBe(400)
    expect((await api(h.url, 'DELETE', '/api/threads/c1')).status).toBe(204)
    expect((await api(h.url, 'DELETE', '/api/threads/c1')).status).toBe(404)
  })

  it('deleting a live thread settles its open question cancelled and ends its followers', async () => {
    await api(h.url, 'POST', '/api/threads', { id: 'gone' })
    const tab = await follow('gone')
    await prompt('gone', CONFIRM)
    await tab.waitFor(is('extension-ui-request'))
    expect((await api(h.url, 'DELETE', '/api/threads/gone')).status).toBe(204)
    await tab.waitFor(is('dialog-settled', { outcome: 'cancelled' }))
    await tab.waitFor(is('status', { live: false }))
    for (let i = 0; i < 50 && !tab.ended; i++) await sleep(20)
    expect(tab.ended).toBe(true)
  })

  it('prompt bodies are checked: 400 for a bad body, 413 for a too large prompt, 409 when busy and admission is reject', async () => {
    expect((await api(h.url, 'POST', '/api/threads/p1/prompt', { message: '' })).status).toBe(400)
    expect((await api(h.url, 'POST', '/api/threads/p1/prompt', { text: 'hi' })).status).toBe(400)
    expect((await api(h.url, 'POST', '/api/threads/p1/prompt', '{not json')).status).toBe(400)
    expect((await api(h.url, 'POST', '/api/threads/p1/prompt', { message: 'x'.repeat(100_001) })).status).toBe(413)
    expect((await api(h.url, 'POST', '/api/threads/p1/prompt', { message: 'y'.repeat(2_000_000) })).status).toBe(413)
    await prompt('p1', 'slow 100')
    expect(await prompt('p1', 'not now', { admission: 'reject' })).toMatchObject({ status: 409, body: { reason: 'busy' } })
  })

  it('with a token, every /api route needs it as a bearer header (or ?token= for EventSource)', async () => {
    await h.close()
    h = await startHarness({ token: 's3cret' })
    expect((await api(h.url, 'GET', '/api/threads')).status).toBe(401)
    expect((await api(h.url, 'GET', '/api/threads', undefined, { authorization: 'Bearer wrong' })).status).toBe(401)
    expect((await api(h.url, 'GET', '/api/threads', undefined, { authorization: 'Bearer s3cret' })).status).toBe(200)
    await api(h.url, 'POST', '/api/threads', { id: 'tok' }, { authorization: 'Bearer s3cret' })
    expect((await follow('tok', {}, '?token=s3cret')).status).toBe(200)
    expect((await follow('tok')).status).toBe(401)
    // The check is made on the route the router matched, so an encoded path is no way around it.
    expect((await api(h.url, 'POST', '/%61pi/threads/tok/prompt', { message: 'sneak' })).status).toBe(401)
    expect((await api(h.url, 'GET', '/api/threads?token=s3cret')).status).toBe(401)
  })

  it('without a token only this host may call the API: a foreign Origin or Host is refused with 403', async () => {
    expect((await api(h.url, 'POST', '/api/threads', { id: 'o1' }, { origin: h.url })).status).toBe(201)
    expect((await api(h.url, 'POST', '/api/threads/o1/prompt', { message: 'x' }, { origin: 'https://evil.example' })).status).toBe(403)
    const rebound = await new Promise<number>((resolve, reject) => {
      const { port } = new URL(h.url)
      import('node:http').then(({ request }) =>
        request({ port, host: '127.0.0.1', path: '/api/threads', headers: { host: `evil.example:${port}` } }, (res) => resolve(res.statusCode!))
          .on('error', reject)
          .end(),
      )
    })
    expect(rebound).toBe(403)
    expect((await api(h.url, 'GET', '/api/threads')).status).toBe(200)
  })

  it('without a built web client, / says how to build it and where the API is described', async () => {
    const page = await fetch(`${h.url}/`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toMatch(/text\/html/)
    expect(await page.text()).toMatch(/npm run build.*docs\/api\.md/s)
  })

  it('create and abort take no body even when the client sends content-type: application/json', async () => {
    const empty = { 'content-type': 'application/json' }
    const res = await fetch(`${h.url}/api/threads`, { method: 'POST', headers: empty })
    expect(res.status).toBe(201)
    const { threadId } = (await res.json()) as { threadId: string }
    expect((await fetch(`${h.url}/api/threads/${threadId}/abort`, { method: 'POST', headers: empty })).status).toBe(404)
  })
})
