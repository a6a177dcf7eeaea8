/**
 * Each reply says which model wrote it and what it used, as pi's REAL openai-completions provider
 * reported it from a local chat-completions server: live on `assistant-end`, and the same from the
 * persisted transcript after a restart.
 */
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { Snapshot } from '../../src/schemas/index.js'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'
import { copyFixtureAgentDir, LocalLlm, MODEL, MODEL_ID, PROVIDER } from './local-llm.js'

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

describe('reply usage', () => {
  it("a reply from the local OpenAI-compatible server carries its model, provider, tokens and cost, live and after a restart", async () => {
    const llm = new LocalLlm()
    await llm.start()
    cleanups.push(() => llm.close())
    const agentDir = await copyFixtureAgentDir(llm.url)
    cleanups.push(() => rm(agentDir, { recursive: true, force: true }))
    // Prices per million tokens, so pi's own cost arithmetic has something to multiply.
    const file = join(agentDir, 'models.json')
    const models = JSON.parse(await readFile(file, 'utf8'))
    models.providers[PROVIDER].models[0].cost = { input: 3, output: 15, cacheRead: 0, cacheWrite: 0 }
    await writeFile(file, JSON.stringify(models))

    let h: Harness = await startHarness({ agentDir })
    const dataDir = h.dataDir
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }))
    await api(h.url, 'POST', '/api/threads', { id: 'costly', model: MODEL })
    const tab = await SseClient.open(`${h.url}/api/threads/costly/follow`)
    await api(h.url, 'POST', '/api/threads/costly/prompt', { message: 'how much?' })
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    tab.close()
    // The local server reports 10 prompt and 5 completion tokens for every reply.
    const expected = {
      model: MODEL_ID,
      provider: PROVIDER,
      usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: expect.closeTo((10 * 3 + 5 * 15) / 1e6, 12) },
    }
    const end = tab.frames.find((f) => f.event === 'assistant-end')!
    expect(end.data).toMatchObject({ text: 'Local model heard: how much?', ...expected })
    await h.close({ keepData: true })

    h = await startHarness({ dataDir, agentDir })
    cleanups.push(() => h.close())
    const cold = await SseClient.open(`${h.url}/api/threads/costly/follow`)
    const snapshot = (await cold.waitFor(is('snapshot'))).data as Snapshot
    cold.close()
    expect(snapshot.transcript.find((e) => e.kind === 'assistant')).toMatchObject(expected)
  })

  it('the demo model says it is demo and reports no usage worth a cost', async () => {
    const h = await startHarness()
    cleanups.push(() => h.close())
    await api(h.url, 'POST', '/api/threads', { id: 'd1' })
    const tab = await SseClient.open(`${h.url}/api/threads/d1/follow`)
    await api(h.url, 'POST', '/api/threads/d1/prompt', { message: 'hi' })
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    tab.close()
    const end = tab.frames.find((f) => f.event === 'assistant-end')!
    expect(end.data).toMatchObject({ model: 'demo', usage: { cost: 0 } })
  })
})
