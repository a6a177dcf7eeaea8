/**
 * The follow stream under load, over real sockets with the demo model streaming as fast as it can:
 * bursts never close a fast follower, a huge reply arrives whole, and followers that never read
 * are closed for their sustained lag while the others get everything. No test here asserts a time.
 */
import type { Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { api, is, sleep, SseClient, startHarness, type Harness } from './harness.js'

let h: Harness | undefined
const clients: SseClient[] = []
afterEach(async () => {
  for (const c of clients.splice(0)) c.close()
  await h?.close()
  h = undefined
})

async function follow(thread: string): Promise<SseClient> {
  const c = await SseClient.open(`${h!.url}/api/threads/${thread}/follow`)
  clients.push(c)
  return c
}

describe('follow under load', () => {
  it('a 10,000-chunk run streamed with no delay never closes a fast follower under the default drop rule', async () => {
    h = await startHarness({ demoDelayMs: 0 })
    await api(h.url, 'POST', '/api/threads', { id: 'burst' })
    const tabs = [await follow('burst'), await follow('burst'), await follow('burst')]
    await api(h.url, 'POST', '/api/threads/burst/prompt', { message: 'slow 10000' })
    await Promise.all(tabs.map((t) => t.waitFor(is('status', { busy: false, run: 1 }), 60_000)))
    for (const t of tabs) {
      expect(t.ended).toBe(false)
      expect(t.frames.filter((f) => f.event === 'assistant-delta')).toHaveLength(10_000)
    }
  }, 90_000)

  it('a 99,000-character reply streamed with no delay reaches every fast follower whole', async () => {
    h = await startHarness({ demoDelayMs: 0 })
    await api(h.url, 'POST', '/api/threads', { id: 'big' })
    const tabs = [await follow('big'), await follow('big')]
    const message = 'x'.repeat(99_000 - 'You said: '.length)
    expect((await api(h.url, 'POST', '/api/threads/big/prompt', { message })).status).toBe(202)
    const ends = await Promise.all(tabs.map((t) => t.waitFor(is('assistant-end'), 60_000)))
    for (const [i, t] of tabs.entries()) {
      expect(ends[i].data.text).toHaveLength(99_000)
      const streamed = t.frames.filter((f) => f.event === 'assistant-delta').map((f) => f.data.text as string)
      expect(streamed.join('')).toBe(ends[i].data.text)
      expect(t.ended).toBe(false)
    }
    // A tab that joins now gets the whole reply in its snapshot.
    const late = await follow('big')
    const snapshot = await late.waitFor(is('snapshot'))
    expect(snapshot.data.transcript.at(-1)).toMatchObject({ kind: 'assistant', streaming: false, text: ends[0].data.text })
  }, 90_000)

  it('40 followers that never read are all closed for their sustained lag, while a fast follower gets the whole run', async () => {
    h = await startHarness({ demoDelayMs: 0, follow: { highWaterMark: 16 * 1024, lagMs: 200 } })
    await api(h.url, 'POST', '/api/threads', { id: 'stalls' })
    // Tabs on a stalled network: their server side is corked, so every write stays buffered there.
    const corked: Socket[] = []
    const onConnection = (socket: Socket) => {
      socket.cork()
      corked.push(socket)
    }
    h.app.server.on('connection', onConnection)
    const net = await import('node:net')
    const port = Number(new URL(h.url).port)
    const stalled = Array.from({ length: 40 }, () => {
      const s = net.connect(port, '127.0.0.1')
      s.on('error', () => {})
      s.write('GET /api/threads/stalls/follow HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n')
      return s
    })
    for (let i = 0; i < 100 && corked.length < 40; i++) await sleep(10)
    h.app.server.off('connection', onConnection)
    expect(corked).toHaveLength(40)
    await sleep(50)
    const healthy = await follow('stalls')
    await api(h.url, 'POST', '/api/threads/stalls/prompt', { message: 'slow 2000' })
    await healthy.waitFor(is('status', { busy: false, run: 1 }), 60_000)
    expect(healthy.frames.filter((f) => f.event === 'assistant-delta')).toHaveLength(2000)
    expect(healthy.ended).toBe(false)
    for (let i = 0; i < 200 && !corked.every((s) => s.destroyed); i++) await sleep(20)
    expect(corked.filter((s) => s.destroyed)).toHaveLength(40)
    for (const s of stalled) s.destroy()
  }, 90_000)
})
