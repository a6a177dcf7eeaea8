/** The structured log: one line per request, and the warnings the flows ask for. */
import { Writable } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'

let h: Harness
const lines: Record<string, any>[] = []
beforeEach(async () => {
  lines.length = 0
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
      done()
    },
  })
  h = await startHarness({ demoDelayMs: 2, token: 's3cret', logger: { level: 'info', stream } })
})
afterEach(async () => {
  await h.close()
})

const auth = { authorization: 'Bearer s3cret' }

describe('request logging', () => {
  it('one info line per request with route, status and time, never the URL; a stop logs the count restored, not the texts; an answer naming no open question warns', async () => {
    await api(h.url, 'POST', '/api/threads', { id: 'l1' }, auth)
    const tab = await SseClient.open(`${h.url}/api/threads/l1/follow?token=s3cret`)
    await api(h.url, 'POST', '/api/threads/l1/prompt', { message: 'slow 300' }, auth)
    await tab.waitFor(is('assistant-delta'))
    await api(h.url, 'POST', '/api/threads/l1/prompt', { message: 'secret queued text' }, auth)
    expect((await api(h.url, 'POST', '/api/threads/l1/abort', undefined, auth)).body.restored).toEqual(['secret queued text'])
    await tab.waitFor(is('settled'))
    expect((await api(h.url, 'POST', '/api/threads/l1/dialog', { id: 'nope', confirmed: true }, auth)).status).toBe(404)
    tab.close()
    await new Promise((r) => setTimeout(r, 50))

    const requests = lines.filter((l) => l.msg === 'request')
    expect(requests.map((l) => `${l.method} ${l.route} ${l.status}`)).toEqual(
      expect.arrayContaining([
        'POST /api/threads 201',
        'POST /api/threads/:id/prompt 202',
        'POST /api/threads/:id/abort 200',
        'POST /api/threads/:id/dialog 404',
      ]),
    )
    for (const l of requests) expect(l).toMatchObject({ level: 30, ms: expect.any(Number) })
    expect(lines.some((l) => l.msg === 'incoming request' || l.msg === 'request completed')).toBe(false)
    const everything = JSON.stringify(lines)
    expect(everything).not.toContain('s3cret')
    expect(everything).not.toContain('secret queued text')
    expect(lines.find((l) => l.msg === 'abort: queue restored to the caller')).toMatchObject({ level: 30, threadId: 'l1', restored: 1 })
    expect(lines.find((l) => l.msg === 'answer names no open question')).toMatchObject({ level: 40, threadId: 'l1', dialogId: 'nope' })
  })
})
