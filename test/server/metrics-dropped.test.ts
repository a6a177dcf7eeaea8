/** GET /metrics counts followers closed for falling behind, so a lagging network shows in the numbers. */
import net from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { api, is, sleep, SseClient, startHarness, type Harness } from './harness.js'

let h: Harness
beforeEach(async () => {
  h = await startHarness({ demoDelayMs: 0, follow: { highWaterMark: 1024, lagMs: 100 } })
})
afterEach(async () => {
  await h.close()
})

const droppedForLag = async () => {
  const text = await (await fetch(`${h.url}/metrics`)).text()
  return Number(/^threadhost_followers_dropped_total\{reason="lag"\} (\S+)$/m.exec(text)?.[1] ?? 0)
}

describe('metrics: followers dropped', () => {
  it('a follower that stops reading is closed for lag and counted; a reading one is not', async () => {
    await api(h.url, 'POST', '/api/threads', { id: 'lag' })
    const corked = new Promise<net.Socket>((resolve) =>
      h.app.server.once('connection', (socket) => {
        socket.cork()
        resolve(socket)
      }),
    )
    const stalled = net.connect(Number(new URL(h.url).port), '127.0.0.1')
    stalled.write('GET /api/threads/lag/follow HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n')
    const serverSide = await corked
    const reading = await SseClient.open(`${h.url}/api/threads/lag/follow`)
    expect(await droppedForLag()).toBe(0)
    await api(h.url, 'POST', '/api/threads/lag/prompt', { message: 'slow 2000' })
    await reading.waitFor(is('status', { busy: false, run: 1 }))
    for (let i = 0; i < 100 && !serverSide.destroyed; i++) await sleep(20)
    expect(serverSide.destroyed).toBe(true)
    expect(await droppedForLag()).toBe(1)
    expect(reading.ended).toBe(false)
    reading.close()
    stalled.destroy()
  })
})
