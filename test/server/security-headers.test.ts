import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startHarness, type Harness } from './harness.js'

let h: Harness
beforeEach(async () => {
  h = await startHarness({})
})
afterEach(async () => {
  await h.close()
})

describe('browser safety headers', () => {
  it('the page is served with a CSP that allows no remote image, script or connection and no framing, plus nosniff and no-referrer', async () => {
    for (const path of ['/', '/api/threads']) {
      const res = await fetch(`${h.url}${path}`)
      const csp = res.headers.get('content-security-policy') ?? ''
      const directive = (name: string) => csp.split(';').map((d) => d.trim()).find((d) => d.startsWith(`${name} `))
      expect(directive('img-src'), path).toBe("img-src 'self' data:")
      expect(directive('script-src'), path).toBe("script-src 'self'")
      expect(directive('connect-src'), path).toBe("connect-src 'self'")
      expect(directive('frame-ancestors'), path).toBe("frame-ancestors 'none'")
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff')
      expect(res.headers.get('referrer-policy'), path).toBe('no-referrer')
    }
  })

  it('every answer carries the same headers as the first, whatever its route, status or kind (a stream too)', async () => {
    const SAFETY = /^(content-security-policy|cross-origin-|origin-agent-cluster|referrer-policy|x-)/
    const safety = (res: Response) => Object.fromEntries([...res.headers].filter(([name]) => SAFETY.test(name)))
    const first = safety(await fetch(`${h.url}/`))
    expect(Object.keys(first).length).toBeGreaterThan(5)
    const created = await fetch(`${h.url}/api/threads`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"id":"s1"}' })
    expect(created.status).toBe(201)
    expect(safety(created)).toEqual(first)
    for (const path of ['/', '/api/threads', '/api/nope', '/api/threads/s1']) expect(safety(await fetch(`${h.url}${path}`)), path).toEqual(first)
    const refused = await fetch(`${h.url}/api/threads/s1/prompt`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"mesage":"typo"}' })
    expect(refused.status).toBe(400)
    expect(safety(refused)).toEqual(first)
    const controller = new AbortController()
    const stream = await fetch(`${h.url}/api/threads/s1/follow`, { headers: { accept: 'text/event-stream' }, signal: controller.signal })
    expect(stream.headers.get('content-type')).toContain('text/event-stream')
    expect(safety(stream)).toMatchObject(first)
    controller.abort()
  })
})
