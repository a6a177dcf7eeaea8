/**
 * Extensions' keyboard shortcuts (`pi.registerShortcut`) over HTTP (issue 19): listed with the
 * thread's commands as `kind: shortcut`, run by `POST …/shortcut` on the live thread as the key
 * press runs them in pi's terminal, and refused with a clear 404 for a key no extension registered.
 * pi's `plan-mode/` example (ctrl+alt+p) is loaded unmodified from node_modules.
 */
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { api, is, SseClient, startHarness } from './harness.js'

const EXAMPLES = fileURLToPath(new URL('../../node_modules/@earendil-works/pi-coding-agent/examples/extensions/', import.meta.url))

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

describe('extension shortcuts', () => {
  it("plan-mode's ctrl+alt+p is listed with the thread's commands and runs its handler on the live thread; an unknown key is 404 SHORTCUT_NOT_FOUND", async () => {
    const agentDir = await mkdtemp(join(tmpdir(), 'threadhost-shortcuts-'))
    cleanups.push(() => rm(agentDir, { recursive: true, force: true }))
    await mkdir(join(agentDir, 'extensions'))
    await cp(join(EXAMPLES, 'plan-mode'), join(agentDir, 'extensions', 'plan-mode'), { recursive: true })
    const h = await startHarness({ agentDir })
    cleanups.push(() => h.close())
    await api(h.url, 'POST', '/api/threads', { id: 'plan' })

    const listed = await api(h.url, 'GET', '/api/threads/plan/commands')
    expect(listed.body.commands).toContainEqual({ name: 'ctrl+alt+p', description: 'Toggle plan mode', kind: 'shortcut' })

    const tab = await SseClient.open(`${h.url}/api/threads/plan/follow`)
    cleanups.push(() => tab.close())
    const ran = await api(h.url, 'POST', '/api/threads/plan/shortcut', { key: 'ctrl+alt+p' })
    expect(ran).toMatchObject({ status: 202, body: { threadId: 'plan', key: 'ctrl+alt+p' } })
    expect((await tab.waitFor(is('notify'))).data.message).toContain('Plan mode enabled')
    expect((await tab.waitFor(is('status-item', { key: 'plan-mode' }))).data.text).toContain('plan')

    const unknown = await api(h.url, 'POST', '/api/threads/plan/shortcut', { key: 'ctrl+alt+z' })
    expect(unknown).toMatchObject({ status: 404, body: { code: 'SHORTCUT_NOT_FOUND', shortcuts: ['ctrl+alt+p'] } })
    expect((await api(h.url, 'POST', '/api/threads/nobody/shortcut', { key: 'ctrl+alt+p' })).body.code).toBe('THREAD_NOT_FOUND')
  })
})
