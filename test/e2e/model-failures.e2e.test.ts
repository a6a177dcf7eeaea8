/**
 * A real OpenAI-compatible provider that fails (test/server/local-llm.ts): a 500 pi retries until it
 * gives up, a 429 a retry gets past, a stream cut mid-reply. pi's retries show as ONE line in every
 * tab on the thread, the failure is shown where the transcript ends, and the next prompt streams
 * without a reload. pi retries quickly here: the agent dir's settings say so.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { BrowserContext, Page } from 'playwright'
import { afterEach, describe, expect, test } from 'vitest'
import { MODEL } from '../server/local-llm.js'
import { violations as axeViolations } from './axe.js'
import { api, openThread, providerRig, send } from './harness.js'

describe('a provider that fails, in the browser', () => {
  let context: BrowserContext
  let tabs: Page[]
  const rig = providerRig(async (agentDir, workspace) => {
    await writeFile(join(agentDir, 'settings.json'), JSON.stringify({ retry: { enabled: true, maxRetries: 2, baseDelayMs: 20 } }))
  })
  afterEach(async () => {
    await context?.close()
  })

  /** A thread on the fixture model, open in two tabs. */
  async function twoTabs(title: string): Promise<string> {
    const created = await api<{ threadId: string }>(rig.server.url, 'POST', '/api/threads', { title, model: MODEL, cwd: rig.workspace })
    expect(created.status).toBe(201)
    context = await rig.browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 800 }, reducedMotion: 'reduce' })
    context.setDefaultTimeout(45_000)
    tabs = [await context.newPage(), await context.newPage()]
    for (const tab of tabs) await openThread(tab, rig.server.url, created.body.threadId)
    return created.body.threadId
  }

  const transcript = (tab: Page) => tab.getByRole('log', { name: 'Transcript' })
  /** Every line the transcript shows about a failure: boxes and retry lines. */
  const failureLines = (tab: Page) => transcript(tab).locator('.error, .retry')
  const idle = (tab: Page) => tab.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 20_000 })

  async function nextPromptStreams(): Promise<void> {
    await send(tabs[0], 'and again')
    for (const tab of tabs) await transcript(tab).locator('.assistant').filter({ hasText: 'Local model heard: and again' }).waitFor()
    for (const tab of tabs) await tab.getByRole('status', { name: 'Connection: Connected' }).waitFor()
  }

  test('a 500 pi retries until it gives up is one failure in every tab, with its retries counted, and the next prompt streams', async () => {
    await twoTabs('A provider answering 500')
    const before = rig.llm.requests.length
    for (let i = 0; i < 3; i++) rig.llm.failures.push({ status: 500, message: 'The server had an error while processing your request' })
    await send(tabs[0], 'hello there')
    for (const tab of tabs) {
      await transcript(tab).getByRole('alert').filter({ hasText: 'gave up after 2 retries' }).waitFor()
      await idle(tab)
      expect(await failureLines(tab).count()).toBe(1)
      expect(await failureLines(tab).innerText()).toContain('500')
      await tab.getByRole('status', { name: 'Connection: Connected' }).waitFor()
    }
    expect(rig.llm.requests.length - before).toBe(3)
    expect(await axeViolations(tabs[1])).toEqual([])
    await nextPromptStreams()
    // After a reload the failure is still one line.
    await tabs[1].reload()
    await transcript(tabs[1]).getByRole('alert').filter({ hasText: 'gave up after 2 retries' }).waitFor()
    expect(await failureLines(tabs[1]).count()).toBe(1)
  })

  test('a 429 a retry gets past is one line saying so in every tab, above the reply, live and after a reload', async () => {
    await twoTabs('A provider answering 429')
    rig.llm.failures.push({ status: 429, message: 'Rate limit reached for requests' })
    await send(tabs[0], 'hello after a limit')
    for (const tab of tabs) {
      await transcript(tab).locator('.assistant').filter({ hasText: 'Local model heard: hello after a limit' }).waitFor()
      await transcript(tab).getByRole('note').filter({ hasText: 'answered on retry 1/2' }).waitFor()
      expect(await failureLines(tab).count()).toBe(1)
    }
    await idle(tabs[0])
    await tabs[1].reload()
    await transcript(tabs[1]).getByRole('note').filter({ hasText: 'answered on retry 1' }).waitFor()
    expect(await failureLines(tabs[1]).count()).toBe(1)
    expect(await transcript(tabs[1]).getByRole('alert').count()).toBe(0)
  })

  test('a stream cut mid-reply, every time, shows the failure in the second tab too, and the next prompt streams', async () => {
    await twoTabs('A provider whose stream is cut')
    for (let i = 0; i < 3; i++) rig.llm.failures.push({ cut: 'Half an ans' })
    await send(tabs[0], 'hello over a bad line')
    for (const tab of tabs) {
      await transcript(tab).getByRole('alert').filter({ hasText: 'gave up after 2 retries' }).waitFor()
      await idle(tab)
      expect(await failureLines(tab).count()).toBe(1)
    }
    await nextPromptStreams()
  })
})
