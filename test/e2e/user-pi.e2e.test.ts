/**
 * End to end with the user's own pi: the real server process started with `--agent-dir` on a temp
 * copy of test/fixtures/agent (its extension, template, skill and models.json) and `--workspace` on
 * a temp folder; the fixture model is pi's real `openai-completions` provider talking to a scripted
 * chat-completions server on loopback (test/server/local-llm.ts). Debian's Chromium drives the built
 * client: everything a user does here goes through the page.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { BrowserContext, Page } from 'playwright'
import { afterEach, describe, expect, test } from 'vitest'
import { MODEL, textOf } from '../server/local-llm.js'
import { api, card, gone, openThread, providerRig, send } from './harness.js'

describe("the user's own pi in the browser", () => {
  let context: BrowserContext
  let page: Page
  const rig = providerRig(async (agentDir, workspace) => {
    await writeFile(join(workspace, 'AGENTS.md'), '# Project context\n\nAn e2e workspace.\n')
  })

  /** A thread on the fixture model in the temp rig.workspace, open in a fresh page. */
  async function openFixtureThread(title: string): Promise<string> {
    const created = await api<{ threadId: string }>(rig.server.url, 'POST', '/api/threads', { title, model: MODEL, cwd: rig.workspace })
    expect(created.status).toBe(201)
    context = await rig.browser.newContext({ viewport: { width: 1280, height: 800 } })
    context.setDefaultTimeout(45_000) // generous: CI machines here are small and busy
    page = await context.newPage()
    await openThread(page, rig.server.url, created.body.threadId)
    return created.body.threadId
  }
  afterEach(async () => {
    await context?.close()
  })

  test("the extension's four questions are answered on their cards in the page, and the model's reply shows the answers", async () => {
    await openFixtureThread('Fixture questions')
    const before = rig.llm.requests.length
    await send(page, 'please use fixture_ask')

    // select: pick one of the offered options.
    const colour = card(page, 'Colour for the fixture?')
    await colour.getByRole('button', { name: 'green', exact: true }).click()
    await gone(colour)

    // confirm: Yes.
    const go = card(page, 'Go ahead?')
    await go.getByText('Use green for the fixture').waitFor()
    await go.getByRole('button', { name: 'Yes', exact: true }).click()
    await gone(go)

    // input: type a name and submit it.
    const name = card(page, 'Your name?')
    await name.getByRole('textbox', { name: 'Your name?' }).fill('Grace')
    await name.getByRole('button', { name: 'Submit' }).click()
    await gone(name)

    // editor: the prefill is there; replace it with two lines and submit.
    const notes = card(page, 'Any notes?')
    const area = notes.getByRole('textbox', { name: 'Any notes?' })
    await expect.poll(() => area.inputValue()).toBe('prefilled notes')
    await area.fill('ship it\non Friday')
    await notes.getByRole('button', { name: 'Submit' }).click()
    await gone(notes)

    // The model's final reply, streamed into the transcript, carries every answer.
    const reply = page.getByRole('log', { name: 'Transcript' }).locator('.assistant').filter({ hasText: 'Thanks, the tool said:' })
    await reply.waitFor()
    await expect
      .poll(() => reply.innerText())
      .toMatch(/Thanks, the tool said: colour=green go=true name=Grace notes=ship it\s+on Friday/)
    await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 15_000 })

    // The local server got the tool call's result exactly as the cards answered it.
    const mine = rig.llm.requests.slice(before)
    expect(mine).toHaveLength(2)
    const toolResult = mine[1].messages.find((m) => m.role === 'tool')
    expect(textOf(toolResult?.content)).toBe('colour=green go=true name=Grace notes=ship it\non Friday')
  })

  test("the extension's /fixture-status shows its status item and widget above the composer, its live title in the header and fills the empty composer", async () => {
    const threadId = await openFixtureThread('Before the fixture')
    const before = rig.llm.requests.length
    await send(page, '/fixture-status')

    await page.getByRole('list', { name: 'Extension status' }).getByText('ready', { exact: true }).waitFor()
    const widget = page.getByLabel('Extension widgets').locator('[data-widget="fixture"]')
    await expect.poll(() => widget.innerText()).toBe('line one\nline two')
    // The extension's title is the pane's live title; the thread keeps its own (issue 19: setTitle renames nothing).
    await page.getByRole('heading', { name: 'Fixture title' }).waitFor()
    await expect.poll(() => page.getByRole('textbox', { name: 'Message' }).inputValue()).toBe('from the fixture')

    expect((await api<{ title: string }>(rig.server.url, 'GET', `/api/threads/${threadId}`)).body.title).toBe('Before the fixture')
    // A command the extension handled never reaches the model: its run ends without a request.
    await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 15_000 })
    expect(rig.llm.requests.length).toBe(before)
  })

  test('a model that refuses shows its failure in every tab, the tabs stay connected, and the next prompt streams without a reload', async () => {
    const threadId = await openFixtureThread('A provider that fails')
    const second = await context.newPage()
    await openThread(second, rig.server.url, threadId)
    rig.llm.failures.push({ status: 401, message: 'Incorrect API key provided' })
    await send(page, 'hello there')
    for (const tab of [page, second]) {
      await tab.getByRole('alert').filter({ hasText: 'Incorrect API key' }).waitFor()
      await tab.getByRole('status', { name: 'Connection: Connected' }).waitFor()
    }
    await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 15_000 })
    await send(page, 'and again')
    for (const tab of [page, second]) await tab.getByText('and again').first().waitFor()
    await expect.poll(() => rig.llm.requests.length).toBeGreaterThanOrEqual(2)
    await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 15_000 })
    await second.getByRole('status', { name: 'Connection: Connected' }).waitFor()
  })
})
