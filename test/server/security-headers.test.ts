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
})
