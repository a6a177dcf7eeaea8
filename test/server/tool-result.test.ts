/**
 * The tool-result contract end to end: what the server really sends for a tool's result (live, and
 * folded from pi's session for a cold thread) is exactly the `ToolResult` the client is built for.
 */
import { rm } from 'node:fs/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { Value } from 'typebox/value'
import { Snapshot, ToolEndObservation, ToolResult } from '../../src/schemas/index.js'
import { ALLOW_ONCE } from '../../src/runtime/index.js'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** Two lines on stdout: the newline must reach the client as a newline, not as JSON's `\n`. */
const TWO_LINES = `call bash ${JSON.stringify({ command: "printf 'a\\nb'" })}`

describe('tool results on the wire', () => {
  it("the server's real tool-end frame for a multi-line bash result validates against ToolResult, and so does the cold thread's folded transcript", async () => {
    let h: Harness = await startHarness({ demoDelayMs: 2 })
    const dataDir = h.dataDir
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }))
    await api(h.url, 'POST', '/api/threads', { id: 'lines' })
    const tab = await SseClient.open(`${h.url}/api/threads/lines/follow`)
    cleanups.push(() => tab.close())
    await api(h.url, 'POST', '/api/threads/lines/prompt', { message: TWO_LINES })
    // bash asks first under the default tool policy.
    const asked = await tab.waitFor(is('extension-ui-request'))
    const answered = await api(h.url, 'POST', '/api/threads/lines/dialog', { id: asked.data.id, value: ALLOW_ONCE })
    expect(answered.status, JSON.stringify(answered.body)).toBeLessThan(300)

    const end = await tab.waitFor(is('tool-end'))
    expect(Value.Errors(ToolEndObservation, end.data)).toEqual([])
    expect(Value.Check(ToolResult, end.data.result)).toBe(true)
    expect(end.data).toMatchObject({ isError: false, result: { text: 'a\nb' } })
    // On the wire the newline is JSON's escape inside the string, which parses back to a real one.
    expect(end.raw).toContain('"text":"a\\nb"')
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    tab.close()
    await h.close({ keepData: true })

    // Cold: the snapshot is folded from pi's session file (transcript.ts), through the same compaction.
    h = await startHarness({ dataDir })
    cleanups.push(() => h.close())
    const cold = await SseClient.open(`${h.url}/api/threads/lines/follow`)
    const snapshot = (await cold.waitFor(is('snapshot'))).data
    cold.close()
    expect(snapshot.status.live).toBe(false)
    expect(Value.Errors(Snapshot, snapshot)).toEqual([])
    const tool = snapshot.transcript.find((e: { kind: string }) => e.kind === 'tool')
    expect(tool).toMatchObject({ name: 'bash', state: 'done', result: { text: 'a\nb' } })
  })
})
