/**
 * The token: at least 16 non-blank characters, never matched by a blank; beyond loopback without
 * one, threadhost makes one, prints it once and requires it.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/server/config.js'
import { apiGuard } from '../../src/server/guard.js'
import { api, startHarness, type Harness } from './harness.js'
import { startProcess } from '../support/spawn-server.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})
const scratch = mkdtempSync(join(tmpdir(), 'threadhost-token-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const TOKEN = 'a-token-of-24-characters'

describe('the token', () => {
  it('--token must be at least 16 non-blank characters; a blank one never opens the API or the streams', async () => {
    for (const bad of ['', '   ', ' '.repeat(20), 'short', 'fifteen-chars!!', 'sixteen chars ok']) {
      expect(() => parseConfig(['--token', bad], {}), JSON.stringify(bad)).toThrow(/--token must be at least 16 characters with no blanks/)
      if (bad) expect(() => parseConfig([], { THREADHOST_TOKEN: bad }), JSON.stringify(bad)).toThrow(/THREADHOST_TOKEN must be at least 16/)
    }
    expect(parseConfig(['--token', TOKEN], {}).token).toBe(TOKEN)
    expect(parseConfig([], { THREADHOST_TOKEN: TOKEN }).token).toBe(TOKEN)
    expect(() => apiGuard({ token: '   ', closing: () => false })).toThrow(/blank/)

    const h: Harness = await startHarness({ token: TOKEN })
    cleanups.push(() => h.close())
    await api(h.url, 'POST', '/api/threads', { id: 't1' }, { authorization: `Bearer ${TOKEN}` })
    for (const query of ['?token=%20%20%20', '?token=', `?token=${TOKEN}%20`]) {
      expect((await fetch(`${h.url}/api/threads/t1/follow${query}`)).status, query).toBe(401)
    }
    expect((await api(h.url, 'GET', '/api/threads', undefined, { authorization: 'Bearer    ' })).status).toBe(401)
    const ok = await fetch(`${h.url}/api/threads/t1/follow?token=${TOKEN}`)
    expect(ok.status).toBe(200)
    await ok.body?.cancel()
  })

  it('binding beyond loopback without a token generates one, prints it once and requires it', async () => {
    const dataDir = join(scratch, 'data')
    const server = startProcess(['--host', '0.0.0.0', '--port', '0', '--data-dir', dataDir, '--workspace', scratch], {
      agentDir: join(scratch, 'agent'),
      cleanups,
    })
    const url = (await server.url).replace('0.0.0.0', '127.0.0.1')
    const printed = [...server.output().matchAll(/generated one: (\S+)/g)].map((m) => m[1])
    expect(printed).toHaveLength(1)
    const token = printed[0]
    expect(token).toMatch(/^\S{16,}$/)
    expect(server.output().split(token).length - 1).toBe(2) // the line and the URL to open, once
    expect((await api(url, 'GET', '/api/threads')).status).toBe(401)
    expect((await api(url, 'GET', '/api/threads', undefined, { authorization: `Bearer ${token}` })).status).toBe(200)
  })
})
