/**
 * A command sent to a node that does not own its thread is passed on to the owner once it is
 * valid (bad input is refused where it arrives, as the owner refuses it), and the owner's answer
 * comes back as the owner gave it (server/cluster-http.ts): whatever a tab sends, it gets the same
 * status, body and Retry-After through any node, and a refusal changes nothing in the thread's log
 * and takes the thread from no one.
 */
import { describe, expect, it } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import { api, is, SseClient } from './harness.js'
import { inProcessNodes } from './in-process-cluster.js'

/** A raw request: the body sent as given, with the content type given. */
async function raw(url: string, path: string, body: string, contentType = 'application/json') {
  const response = await fetch(url + path, { method: 'POST', headers: { 'content-type': contentType }, body })
  return { status: response.status, body: await response.text(), retryAfter: response.headers.get('retry-after'), csp: response.headers.get('content-security-policy') }
}

describe('a command through a node that does not own the thread', () => {
  const { node: start, tabs } = inProcessNodes('forwarded')
  const node = (cluster: MemoryCluster, name: string) => start(cluster, name)

  it('gets the answer the owner gives, the same refusal of bad input included, and a refusal writes nothing', async () => {
    const cluster = new MemoryCluster()
    const a = await node(cluster, 'na')
    const b = await node(cluster, 'nb')
    expect((await api(a.url, 'POST', '/api/threads', { id: 'f1' })).status).toBe(201)
    const tab = await SseClient.open(`${a.url}/api/threads/f1/follow`)
    tabs.push(tab)
    expect(await api(a.url, 'POST', '/api/threads/f1/prompt', { message: 'hello' })).toMatchObject({ status: 202, body: { run: 1 } })
    await tab.waitFor(is('settled', { run: 1 }))
    expect(a.node.owns('f1')).toBe(true)
    const logged = cluster.logs.get('f1')!.length

    // Bad input (refused by the node it reaches), then refusals only the owner can give (passed on).
    const cases: Array<[string, string, string?]> = [
      ['/api/threads/f1/prompt', '{"message": '],
      ['/api/threads/f1/prompt', '{"mesage":"typo"}'],
      ['/api/threads/f1/prompt', '{"message":"hi"}', 'text/plain'],
      ['/api/threads/f1/prompt', '{"message":"hi"}', 'application/json; charset=latin1'],
      ['/api/threads/f1/abort', '{}'],
      ['/api/threads/f1/abort', `{"pad":"${'x'.repeat(1 << 20)}"}`],
      ['/api/threads/f1/dialog', '{"id":"q-none","value":true}'],
    ]
    for (const [path, body, type] of cases) {
      const there = await raw(b.url, path, body, type)
      const here = await raw(a.url, path, body, type)
      expect(there.status, `${path} ${body.slice(0, 20)}`).toBeGreaterThanOrEqual(400)
      expect(there).toEqual(here)
    }
    expect(cluster.logs.get('f1')!.length).toBe(logged)
    expect(a.node.owns('f1')).toBe(true)
    expect(b.node.owns('f1')).toBe(false)

    // And a command it takes: run on the owner, its answer back through b.
    const prompted = await raw(b.url, '/api/threads/f1/prompt', '{"message":"through b"}')
    expect(prompted).toMatchObject({ status: 202, csp: expect.stringContaining("frame-ancestors 'none'") })
    expect(JSON.parse(prompted.body)).toMatchObject({ run: 2, queued: false })
    await tab.waitFor(is('settled', { run: 2 }))
    expect(b.node.owns('f1')).toBe(false)
  })
})
