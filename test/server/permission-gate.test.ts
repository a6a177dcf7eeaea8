/**
 * An extension that gates tool calls itself (pi's `permission-gate.ts`, loaded unmodified from
 * node_modules) beside threadhost's tool policy (issue 19). pi runs `tool_call` handlers in load
 * order, the user's extensions before threadhost's own: the extension's question comes first, and
 * when it blocks, the policy never asks; when it allows, the policy asks. Each card says who asks.
 */
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { ALLOW_ONCE, TOOL_POLICY_ORIGIN } from '../../src/runtime/index.js'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'

const EXAMPLES = fileURLToPath(new URL('../../node_modules/@earendil-works/pi-coding-agent/examples/extensions/', import.meta.url))

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function gated(): Promise<{ h: Harness; tab: SseClient }> {
  const agentDir = await mkdtemp(join(tmpdir(), 'threadhost-gate-'))
  cleanups.push(() => rm(agentDir, { recursive: true, force: true }))
  await mkdir(join(agentDir, 'extensions'))
  await copyFile(join(EXAMPLES, 'permission-gate.ts'), join(agentDir, 'extensions', 'permission-gate.ts'))
  const h = await startHarness({ agentDir })
  cleanups.push(() => h.close())
  await api(h.url, 'POST', '/api/threads', { id: 'g' })
  const tab = await SseClient.open(`${h.url}/api/threads/g/follow`)
  cleanups.push(() => tab.close())
  return { h, tab }
}

const DANGEROUS = `call bash ${JSON.stringify({ command: 'rm -rf ./no-such-dir' })}`
const asks = (tab: SseClient) => tab.frames.filter(is('extension-ui-request'))

describe("permission-gate.ts beside threadhost's tool policy", () => {
  it("asks first as an extension; once it allows, threadhost's policy asks under its own name, and the call runs when both allow", async () => {
    const { h, tab } = await gated()
    await api(h.url, 'POST', '/api/threads/g/prompt', { message: DANGEROUS })
    const gate = await tab.waitFor(is('extension-ui-request'))
    expect(gate.data).toMatchObject({ origin: { kind: 'extension' }, dialog: { method: 'select', options: ['Yes', 'No'] } })
    expect(gate.data.origin.name).toBeUndefined()
    expect(gate.data.dialog.title).toContain('Dangerous command')
    await api(h.url, 'POST', '/api/threads/g/dialog', { id: gate.data.id, value: 'Yes' })

    const policy = await tab.waitFor((f) => f.event === 'extension-ui-request' && f.data.id !== gate.data.id)
    expect(policy.data).toMatchObject({ origin: { kind: 'extension', name: TOOL_POLICY_ORIGIN }, dialog: { title: expect.stringContaining('Allow bash to run this command?') } })
    await api(h.url, 'POST', '/api/threads/g/dialog', { id: policy.data.id, value: ALLOW_ONCE })
    expect((await tab.waitFor(is('tool-end'))).data.isError).toBe(false)
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    expect(asks(tab)).toHaveLength(2)
  })

  it("blocked by the extension, the call never reaches threadhost's policy: one question, and the model gets the extension's reason", async () => {
    const { h, tab } = await gated()
    await api(h.url, 'POST', '/api/threads/g/prompt', { message: DANGEROUS })
    const gate = await tab.waitFor(is('extension-ui-request'))
    await api(h.url, 'POST', '/api/threads/g/dialog', { id: gate.data.id, value: 'No' })
    const end = await tab.waitFor(is('tool-end'))
    expect(end.data).toMatchObject({ isError: true, result: { text: expect.stringContaining('Blocked by user') } })
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    expect(asks(tab)).toHaveLength(1)
  })
})
