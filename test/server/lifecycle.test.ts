import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/server/config.js'
import { spawnedServers } from '../support/spawn-server.js'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'

const { cleanups, startProcess, tempDataDir } = spawnedServers('lifecycle')

describe('lifecycle', () => {
  it('threads and their transcripts survive a restart; following a cold thread shows the persisted transcript without building a runtime', async () => {
    let h: Harness = await startHarness()
    const dataDir = h.dataDir
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }))
    await api(h.url, 'POST', '/api/threads', { id: 'kept', title: 'Kept thread' })
    const tab = await SseClient.open(`${h.url}/api/threads/kept/follow`)
    await api(h.url, 'POST', '/api/threads/kept/prompt', { message: 'remember me' })
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    tab.close()
    await h.close({ keepData: true })

    h = await startHarness({ dataDir })
    cleanups.push(() => h.close())
    expect((await api(h.url, 'GET', '/api/threads/kept')).body).toMatchObject({ title: 'Kept thread', live: false, busy: false, run: 1 })
    const cold = await SseClient.open(`${h.url}/api/threads/kept/follow`)
    const snapshot = (await cold.waitFor(is('snapshot'))).data
    cold.close()
    expect(snapshot.status).toEqual({ live: false, busy: false, run: 1 })
    expect(snapshot.transcript).toMatchObject([
      { kind: 'user', text: 'remember me' },
      { kind: 'assistant', text: 'You said: remember me' },
    ])
    expect(h.registry.liveThreads()).toEqual([])
    // A cold thread is not live: abort and answers peek and find nothing.
    expect((await api(h.url, 'POST', '/api/threads/kept/abort')).status).toBe(404)
    expect((await api(h.url, 'POST', '/api/threads/kept/dialog', { id: 'x', confirmed: true })).status).toBe(404)
    // The next prompt continues the numbering.
    expect((await api(h.url, 'POST', '/api/threads/kept/prompt', { message: 'again' })).body).toMatchObject({ run: 2 })
  })

  it('SIGTERM with an open follow: queued prompts are reported rejected, open questions settle aborted, followers see live false, and the process exits 0', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'threadhost-sigterm-'))
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }))
    const server = startProcess(['--port', '0', '--data-dir', dataDir, '--demo-delay-ms', '10'])
    const url = await server.url
    await api(url, 'POST', '/api/threads', { id: 'bye' })
    const tab = await SseClient.open(`${url}/api/threads/bye/follow`)
    await api(url, 'POST', '/api/threads/bye/prompt', { message: 'call ui_dialog {"method":"confirm","title":"Sure?","message":"?"}' })
    await tab.waitFor(is('extension-ui-request'))
    const queued = await api(url, 'POST', '/api/threads/bye/prompt', { message: 'never runs' })
    expect(queued.body).toMatchObject({ queued: true })

    server.child.kill('SIGTERM')
    expect(await server.exit).toBe(0)
    await tab.waitFor(is('status', { live: false }))
    expect(tab.frames.find((f) => f.event === 'prompt-rejected')?.data).toMatchObject({ messageId: queued.body.messageId, reason: 'shutdown' })
    expect(tab.frames.find((f) => f.event === 'dialog-settled')?.data).toMatchObject({ outcome: 'aborted' })
    for (let i = 0; i < 50 && !tab.ended; i++) await new Promise((r) => setTimeout(r, 20))
    expect(tab.ended).toBe(true)
  })

  it('an unusable --model stops the start with pi\'s reason, naming the flag', async () => {
    const server = startProcess(['--port', '0', '--model', 'nobody/nothing'])
    server.url.catch(() => {}) // it listens before pi checks the flag, or not at all
    expect(await server.exit).toBe(2)
    expect(server.output()).toMatch(/--model nobody\/nothing: Unknown model 'nobody\/nothing'/)
    expect(server.output()).not.toMatch(/threadhost stopped/)
  })

  it('a port already in use stops the start with one line naming the port, and exit code 1', async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise((resolve) => taken.close(resolve)))
    const port = (taken.address() as { port: number }).port
    const dataDir = await tempDataDir()
    const server = startProcess(['--port', String(port), '--data-dir', dataDir])
    expect(await server.exit).toBe(1)
    expect(server.output()).toContain(`port ${port} is in use on 127.0.0.1`)
    expect(server.output()).not.toMatch(/Cause|threadhost stopped|at .*\.ts:\d+/)
  })

  it('a second threadhost on the same data dir refuses to start, naming the dir; once the first is killed with -9 the data dir is free again', async () => {
    const dataDir = await tempDataDir()
    const first = startProcess(['--port', '0', '--data-dir', dataDir])
    await first.url
    const second = startProcess(['--port', '0', '--data-dir', dataDir])
    second.url.catch(() => {}) // it never listens, by design
    expect(await second.exit).toBe(1)
    expect(second.output()).toContain(`another threadhost is already running on ${dataDir}`)
    first.child.kill('SIGKILL')
    await first.exit
    const third = startProcess(['--port', '0', '--data-dir', dataDir])
    expect(await third.url).toMatch(/^http:/)
  }, 60_000) // three server starts: slow on a loaded machine

  it('a taken port is found before pi and the host load: no agent-dir survey, no store opened', async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise((resolve) => taken.close(resolve)))
    const port = (taken.address() as { port: number }).port
    const dataDir = await tempDataDir()
    const server = startProcess(['--port', String(port), '--data-dir', join(dataDir, 'never')])
    expect(await server.exit).toBe(1)
    expect(server.output().trim()).toBe(`threadhost: port ${port} is in use on 127.0.0.1 (another threadhost?); stop it or choose another with --port`)
    expect(existsSync(join(dataDir, 'never'))).toBe(false)
  })

  it('binding a non-loopback host without a token generates one (test/server/token.test.ts starts it); a short token is refused', async () => {
    expect(parseConfig(['--host', '0.0.0.0'], {})).toMatchObject({ host: '0.0.0.0', tokenGenerated: true, token: expect.stringMatching(/^\S{16,}$/) })
    expect(() => parseConfig(['--host', '0.0.0.0', '--token', 't'], {})).toThrow(/at least 16 characters/)
    expect(parseConfig(['--host', '0.0.0.0', '--token', 't'.repeat(16)], {})).toMatchObject({ host: '0.0.0.0', token: 't'.repeat(16) })
    const defaults = parseConfig([], { PORT: '5000' })
    expect(defaults).toMatchObject({ port: 5000, host: '127.0.0.1', idleMs: 600_000, inspector: true, workspaces: [process.cwd()] })
    expect(defaults.model).toBeUndefined()
    expect(() => parseConfig(['--port', 'abc'], {})).toThrow(/--port takes an integer/)
  })
})
