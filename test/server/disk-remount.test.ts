/**
 * A disk the kernel switches read-only under a running server (ext4 `errors=remount-ro`):
 * `access()` and `statfs()` still say the data dir is writable, reads work, and every write fails —
 * SQLite says `disk I/O error`. The first request to meet it must be refused as any unwritable disk
 * is (503, nothing changed), and health must say `degraded` until writes work again.
 * (test/host/disk-faults.ts makes SQLite's writes fail so; tests may not remount a disk.)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import { buildApp } from '../../src/server/app.js'
import { diskFaults } from '../host/disk-faults.js'
import { contract } from './contract.js'
import { api, piHost, NO_EXTENSIONS } from './harness.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function start(dataDir: string) {
  const registry = await ThreadRegistry.open(await piHost(dataDir))
  const app = await buildApp({ registry })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await registry.shutdown()
    await app.close()
  }
  cleanups.push(close)
  return { url, registry, close }
}

async function remountedServer() {
  const dataDir = await mkdtemp(join(tmpdir(), 'threadhost-remount-'))
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }))
  // Installed before the store opens, so every statement it prepares is watched.
  const disk = diskFaults(dataDir)
  cleanups.push(() => disk.restore())
  cleanups.push(() => disk.fail(undefined))
  return { dataDir, disk, ...(await start(dataDir)) }
}

describe('a disk switched read-only under a running server', () => {
  it('a write that meets a disk I/O error is refused 503 read-only, nothing is created, and health says degraded until writes work again', async () => {
    const { url, disk } = await remountedServer()
    const check = await contract(url)
    expect((await api(url, 'POST', '/api/threads', { id: 'kept', title: 'Kept' })).status).toBe(201)
    const before = (await api(url, 'GET', '/api/threads')).body

    disk.fail('io')
    const refused = await api(url, 'POST', '/api/threads', { id: 'new' })
    expect(refused).toMatchObject({ status: 503, body: { reason: 'read-only', error: expect.stringContaining('disk I/O error') } })
    check('POST', '/api/threads', refused)
    expect((await api(url, 'GET', '/api/threads')).body).toEqual(before)
    const health = await api(url, 'GET', '/api/health')
    expect(health.body).toMatchObject({ status: 'degraded', fault: 'read-only', reason: expect.stringContaining('disk I/O error') })
    check('GET', '/api/health', health)
    // Now that the fault is known, the next write is refused before it runs.
    expect(await api(url, 'PATCH', '/api/threads/kept', { title: 'Renamed' })).toMatchObject({ status: 503, body: { reason: 'read-only' } })

    disk.fail(undefined)
    expect((await api(url, 'GET', '/api/health')).body).toEqual({ status: 'ok', extensions: NO_EXTENSIONS })
    expect((await api(url, 'POST', '/api/threads', { id: 'new' })).status).toBe(201)
  })

  it('a rename or a delete that meets a disk I/O error is refused 503 and changes nothing, neither now nor after a restart', async () => {
    const { url, disk, dataDir, close } = await remountedServer()
    expect((await api(url, 'POST', '/api/threads', { id: 'kept', title: 'Kept' })).status).toBe(201)
    const before = (await api(url, 'GET', '/api/threads')).body

    disk.fail('io')
    expect(await api(url, 'PATCH', '/api/threads/kept', { title: 'Renamed' })).toMatchObject({ status: 503, body: { reason: 'read-only' } })
    expect((await api(url, 'GET', '/api/threads')).body).toEqual(before)
    // The disk came back for a moment (health probed it), and went again before the delete.
    disk.fail(undefined)
    expect((await api(url, 'GET', '/api/health')).body).toEqual({ status: 'ok', extensions: NO_EXTENSIONS })
    disk.fail('io')
    expect(await api(url, 'DELETE', '/api/threads/kept')).toMatchObject({ status: 503, body: { reason: 'read-only' } })
    expect((await api(url, 'GET', '/api/threads')).body).toEqual(before)
    expect((await api(url, 'GET', '/api/threads/kept')).body).toMatchObject({ title: 'Kept' })

    disk.fail(undefined)
    await close()
    const again = await start(dataDir)
    expect((await api(again.url, 'GET', '/api/threads')).body).toMatchObject({ threads: [{ threadId: 'kept', title: 'Kept' }] })
  })
})
