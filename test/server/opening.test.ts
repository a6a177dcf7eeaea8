/**
 * The server listens before its registry is open (src/server/serve.ts): the web client and health
 * answer at once, and every request that needs a thread waits until recovery is done — held, not
 * refused, and then answered as it would have been. The registry's opening is the test's to finish.
 */
import { rm } from 'node:fs/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import { buildApp } from '../../src/server/app.js'
import { openingRegistry } from '../../src/server/opening.js'
import { spawnedServers } from '../support/spawn-server.js'
import { api, is, NO_EXTENSIONS, piHost, SseClient, startHarness } from './harness.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})
const spawned = spawnedServers('opening')

/** A request whose answer the test can look for without waiting on it. */
function sent<T>(request: Promise<T>): { settled: () => boolean; answer: Promise<T> } {
  let settled = false
  const answer = request.finally(() => (settled = true))
  return { settled: () => settled, answer }
}

describe('the server while its registry opens', () => {
  it('a request sent while the registry opens is held, not refused, and answered from the recovered threads once recovery is done; the page and health answer at once', async () => {
    // A first life leaves a thread with one run in the data dir.
    const first = await startHarness()
    const id = 'kept'
    await api(first.url, 'POST', '/api/threads', { id, title: 'Kept thread' })
    const tab = await SseClient.open(`${first.url}/api/threads/${id}/follow`)
    expect((await api(first.url, 'POST', `/api/threads/${id}/prompt`, { message: 'hello' })).status).toBe(202)
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    tab.close()
    await first.close({ keepData: true })
    cleanups.push(() => rm(first.dataDir, { recursive: true, force: true }))

    // The second listens with its registry still opening.
    let open!: (registry: ThreadRegistry) => void
    let failed!: (error: unknown) => void
    const opening = new Promise<ThreadRegistry>((resolve, reject) => ((open = resolve), (failed = reject)))
    cleanups.push(async () => failed(new Error('the test ended')))
    const app = await buildApp({ registry: openingRegistry(opening) })
    cleanups.push(() => app.close())
    const url = await app.listen({ port: 0, host: '127.0.0.1' })

    const list = sent(api(url, 'GET', '/api/threads'))
    const thread = sent(api(url, 'GET', `/api/threads/${id}`))
    const prompt = sent(api(url, 'POST', `/api/threads/${id}/prompt`, { message: 'sent while it opened' }))
    expect((await api(url, 'GET', '/')).status).toBe(200)
    const health = await api(url, 'GET', '/api/health')
    expect(health.status).toBe(200)
    expect(health.body).toMatchObject({ status: 'starting' })
    expect((await api(url, 'GET', '/api/openapi.json')).status).toBe(200)
    // Sent before the answers above came back, and still waiting: nothing read a registry that is not open.
    expect([list.settled(), thread.settled(), prompt.settled()]).toEqual([false, false, false])

    const registry = await ThreadRegistry.open(await piHost(first.dataDir))
    cleanups.push(() => registry.shutdown())
    open(registry)

    expect((await list.answer).body.threads.map((t: { threadId: string }) => t.threadId)).toEqual([id])
    expect((await thread.answer).body).toMatchObject({ threadId: id, title: 'Kept thread', run: 1 })
    expect(await prompt.answer).toMatchObject({ status: 202, body: { run: 2 } })
    expect((await api(url, 'GET', '/api/health')).body).toEqual({ status: 'ok', extensions: NO_EXTENSIONS })
  })

  it('a host that fails to open after the server listens still stops the start: the reason, exit code 2, and a thread request sent meanwhile is not answered from threads never recovered', async () => {
    const server = spawned.startProcess(['--port', '0', '--data-dir', await spawned.tempDataDir(), '--model', 'nobody/nothing'])
    const url = await server.url
    const held = await api(url, 'GET', '/api/threads').catch((error: Error) => ({ status: 0, body: error.message }))
    expect(held.status).not.toBe(200)
    expect(await server.exit).toBe(2)
    expect(server.output()).toMatch(/--model nobody\/nothing: Unknown model 'nobody\/nothing'/)
  })
})
