/**
 * A data dir that is read-only when threadhost starts: it starts degraded instead of refusing —
 * reads and follows are served, every request that writes is 503 read-only, health says why, and
 * nothing in the data dir changes. The data dir is made read-only for the server alone by a
 * read-only bind mount in its own user and mount namespace (`unshare -rm`), which holds for root
 * too; where that is not allowed, a non-root run falls back to `chmod 0555`, and a root run without
 * namespaces skips (chmod does not stop root).
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { ThreadSummary } from '../../src/schemas/index.js'
import { startProcess as start } from '../support/spawn-server.js'
import { api, is, SseClient, NO_EXTENSIONS } from './harness.js'

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const agentDir = mkdtempSync(join(tmpdir(), 'threadhost-agent-'))
afterAll(() => rmSync(agentDir, { recursive: true, force: true }))

/** Runs the command with its first argument bind-mounted read-only over itself, in namespaces of its own. */
const READ_ONLY_MOUNT = ['sh', '-c', 'd=$1; shift; mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" && exec "$@"', 'sh']

/** How this machine can make a dir read-only for the server: a namespace mount, chmod (non-root), or not at all. */
function readOnlyMethod(): 'mount' | 'chmod' | undefined {
  const probe = mkdtempSync(join(tmpdir(), 'threadhost-ro-probe-'))
  try {
    const mounted = spawnSync('unshare', ['-rm', ...READ_ONLY_MOUNT, probe, 'sh', '-c', 'touch "$0/x" 2>/dev/null && exit 1 || exit 0', probe])
    if (mounted.status === 0) return 'mount'
    return process.getuid?.() === 0 ? undefined : 'chmod'
  } finally {
    rmSync(probe, { recursive: true, force: true })
  }
}
const method = readOnlyMethod()
if (!method) console.warn('read-only-start: skipped — running as root and mount namespaces (unshare -rm) are not allowed here, so no dir can be made read-only for the server')

/** Every file under dir with a digest of its bytes. */
function contents(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name)
      if (statSync(path).isDirectory()) walk(path)
      else out[path.slice(dir.length)] = createHash('sha256').update(readFileSync(path)).digest('hex')
    }
  }
  walk(dir)
  return out
}

describe('a data dir read-only at start', () => {
  it.skipIf(!method)(
    'starts degraded: threads are listed and followed, every write is 503 read-only before it runs, health says read-only, the data dir is unchanged, and writes work again on the next start',
    async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'threadhost-read-only-'))
      cleanups.push(() => rm(dataDir, { recursive: true, force: true }))
      const args = ['--port', '0', '--data-dir', dataDir, '--demo-delay-ms', '2']
      const first = start(args, { agentDir, cleanups })
      const url = await first.url
      await api(url, 'POST', '/api/threads', { id: 'one', title: 'One' })
      const tab = await SseClient.open(`${url}/api/threads/one/follow`)
      cleanups.push(() => tab.close())
      expect((await api(url, 'POST', '/api/threads/one/prompt', { message: 'hello' })).status).toBe(202)
      await tab.waitFor(is('status', { busy: false, run: 1 }))
      tab.close()
      first.child.kill('SIGTERM')
      expect(await first.exit).toBe(0)

      const before = contents(dataDir)
      if (method === 'chmod') {
        chmodSync(dataDir, 0o555)
        cleanups.push(() => chmodSync(dataDir, 0o755))
      }
      const second = start(args, { agentDir, cleanups, ...(method === 'mount' ? { wrap: ['unshare', '-rm', ...READ_ONLY_MOUNT, dataDir] } : {}) })
      const url2 = await second.url
      // Held until the threads are recovered (the server listens before that; health says starting until then).
      await api(url2, 'GET', '/api/threads')
      const health = await api(url2, 'GET', '/api/health')
      expect(health.body).toMatchObject({ status: 'degraded', fault: 'read-only' })
      const threads = (await api(url2, 'GET', '/api/threads')).body.threads as ThreadSummary[]
      expect(threads.map((t) => [t.threadId, t.title, t.run])).toEqual([['one', 'One', 1]])
      const follower = await SseClient.open(`${url2}/api/threads/one/follow`)
      cleanups.push(() => follower.close())
      const snapshot = await follower.waitFor(is('snapshot'))
      expect(snapshot.data.transcript).toMatchObject([{ kind: 'user', text: 'hello' }, { kind: 'assistant' }])

      const prompt = await api(url2, 'POST', '/api/threads/one/prompt', { message: 'lost?' })
      expect([prompt.status, prompt.body.reason]).toEqual([503, 'read-only'])
      const create = await api(url2, 'POST', '/api/threads', { id: 'two' })
      expect([create.status, create.body.reason]).toEqual([503, 'read-only'])
      const rename = await api(url2, 'PATCH', '/api/threads/one', { title: 'Renamed' })
      expect([rename.status, rename.body.reason]).toEqual([503, 'read-only'])
      const remove = await api(url2, 'DELETE', '/api/threads/one')
      expect([remove.status, remove.body.reason]).toEqual([503, 'read-only'])
      expect((await api(url2, 'GET', '/api/threads')).body.threads.map((t: ThreadSummary) => t.title)).toEqual(['One'])
      follower.close()
      second.child.kill('SIGTERM')
      expect(await second.exit).toBe(0)
      expect(contents(dataDir)).toEqual(before)

      if (method === 'chmod') chmodSync(dataDir, 0o755)
      const third = start(args, { agentDir, cleanups })
      const url3 = await third.url
      await api(url3, 'GET', '/api/threads') // held until the threads are recovered, as above
      expect((await api(url3, 'GET', '/api/health')).body).toEqual({ status: 'ok', extensions: NO_EXTENSIONS })
      const again = await SseClient.open(`${url3}/api/threads/one/follow`)
      cleanups.push(() => again.close())
      expect((await api(url3, 'POST', '/api/threads/one/prompt', { message: 'writable again' })).status).toBe(202)
      await again.waitFor(is('status', { busy: false, run: 2 }))
      third.child.kill('SIGKILL')
    },
    90_000,
  )
})
