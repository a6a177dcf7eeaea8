/**
 * `GET /api/search` over the real pi runtime on the demo model: a prompt and its reply are found by
 * their words, after a restart too; and `GET /api/workspaces` lists every `--workspace` root.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { SearchHit } from '../../src/schemas/search.js'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

describe('GET /api/search', () => {
  it('finds a thread by the words of its prompt and of its reply, with the snippet, live and after a restart', async () => {
    let h: Harness = await startHarness()
    const dataDir = h.dataDir
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }))
    await api(h.url, 'POST', '/api/threads', { id: 'quiet', title: 'Unrelated title' })
    await api(h.url, 'POST', '/api/threads', { id: 'other' })
    const tab = await SseClient.open(`${h.url}/api/threads/quiet/follow`)
    await api(h.url, 'POST', '/api/threads/quiet/prompt', { message: 'the zebra crossing near the bakery' })
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    tab.close()

    const found = await api(h.url, 'GET', '/api/search?q=zebr%20bakery')
    expect(found.status).toBe(200)
    expect(found.body.results).toHaveLength(1)
    const [hit] = found.body.results
    expect(hit).toMatchObject({ threadId: 'quiet', title: 'Unrelated title', kind: 'user' })
    // The API's hit is the schema's, nothing of how the host orders hits.
    expect(Object.keys(hit).sort()).toEqual(Object.keys(SearchHit.properties).sort())
    expect(hit.matches.map(([s, e]: [number, number]) => hit.snippet.slice(s, e))).toEqual(['zebra', 'bakery'])
    expect((await api(h.url, 'GET', '/api/search?q=giraffe')).body).toEqual({ results: [] })
    expect((await api(h.url, 'GET', '/api/search?q=')).status).toBe(400)
    await h.close({ keepData: true })

    h = await startHarness({ dataDir })
    cleanups.push(() => h.close())
    expect((await api(h.url, 'GET', '/api/search?q=zebra')).body.results).toMatchObject([{ threadId: 'quiet' }])
  })
})

describe('GET /api/workspaces', () => {
  it('lists every --workspace root, the default first', async () => {
    const a = await mkdtemp(join(tmpdir(), 'threadhost-root-a-'))
    const b = await mkdtemp(join(tmpdir(), 'threadhost-root-b-'))
    cleanups.push(() => rm(a, { recursive: true, force: true }), () => rm(b, { recursive: true, force: true }))
    const h = await startHarness({ workspaces: [a, b] })
    cleanups.push(() => h.close())
    const res = await api(h.url, 'GET', '/api/workspaces')
    expect(res.body).toEqual({ roots: [realpathSync(a), realpathSync(b)], default: realpathSync(a) })
    // The second root is one a thread can be created in.
    const created = await api(h.url, 'POST', '/api/threads', { cwd: realpathSync(b) })
    expect(created.status).toBe(201)
  })
})
