/**
 * What a chat user reaches for daily, end to end on a real OpenAI-compatible provider served locally
 * (test/server/local-llm.ts) through pi's own provider: the model's thinking, message times, the
 * thread's totals. Each test opens its own thread on the fixture model in a fresh page.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { BrowserContext, Page } from 'playwright'
import { afterEach, describe, expect, test } from 'vitest'
import { addVisionModel, imageUrls, MODEL, VISION_MODEL } from '../server/local-llm.js'
import { violations as axeViolations } from './axe.js'
import { api, openThread, providerRig, send } from './harness.js'

describe('chat habits on a real provider, in the browser', () => {
  let context: BrowserContext
  let page: Page
  const rig = providerRig(async (agentDir, workspace) => {
    await addVisionModel(agentDir)
    // pi would compact by itself past its threshold; here the person does, from the header's warning.
    await writeFile(join(agentDir, 'settings.json'), JSON.stringify({ compaction: { enabled: false, keepRecentTokens: 1 } }))
  })
  afterEach(async () => {
    await context?.close()
  })

  async function openFixtureThread(title: string, model = MODEL): Promise<string> {
    const created = await api<{ threadId: string }>(rig.server.url, 'POST', '/api/threads', { title, model, cwd: rig.workspace })
    expect(created.status).toBe(201)
    context = await rig.browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 800 }, reducedMotion: 'reduce' })
    context.setDefaultTimeout(45_000)
    page = await context.newPage()
    await openThread(page, rig.server.url, created.body.threadId)
    return created.body.threadId
  }
  const transcript = (p: Page = page) => p.getByRole('log', { name: 'Transcript' })
  const idle = (p: Page = page) => p.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 20_000 })

  test('a reasoning stream shows as a collapsed "Thought for N s" block above the reply, opened on demand, live and after a reload', async () => {
    await openFixtureThread('A model that thinks')
    rig.llm.reasoning.push('The user greets me. I should greet back politely.')
    await send(page, 'hello thinker')
    await transcript().locator('.assistant').filter({ hasText: 'Local model heard: hello thinker' }).waitFor()
    await idle()
    for (const p of [page, null]) {
      if (p === null) await page.reload()
      const thought = transcript().locator('details.thought')
      await expect.poll(() => thought.locator('summary').innerText()).toMatch(/^Thought for \d+ s$/)
      // Collapsed: the reasoning is there to open, not in the way.
      expect(await thought.getAttribute('open')).toBeNull()
      await thought.locator('summary').click()
      await expect.poll(() => thought.locator('.thought-text').innerText()).toBe('The user greets me. I should greet back politely.')
      expect(await axeViolations(page)).toEqual([])
    }
  })

  test("every message carries pi's time: shown under prompts and replies after a reload and in a fork, never only when this tab saw it arrive", async () => {
    const threadId = await openFixtureThread('Times')
    const started = Date.now()
    await send(page, 'first words')
    await transcript().locator('.assistant').filter({ hasText: 'Local model heard: first words' }).waitFor()
    await idle()
    await send(page, 'second words')
    await transcript().locator('.assistant').filter({ hasText: 'Local model heard: second words' }).waitFor()
    await idle()
    const ended = Date.now()
    /** The times under the messages, as the page has them (each a <time datetime>). */
    const times = (p: Page) => transcript(p).locator('.meta time').evaluateAll((els) => els.map((e) => Date.parse(e.getAttribute('datetime')!)))
    const inWindow = (t: number) => t >= started - 1000 && t <= ended + 1000

    // A fresh page knows nothing it saw arrive: the times are the thread's own.
    await page.reload()
    await transcript().locator('.assistant').filter({ hasText: 'second words' }).waitFor()
    const reloaded = await times(page)
    expect(reloaded).toHaveLength(4)
    expect(reloaded.every(inWindow)).toBe(true)
    expect([...reloaded].sort((a, b) => a - b)).toEqual(reloaded)

    // A fork keeps the times of the history it copies.
    const second = await transcript().locator('.user[data-message]').nth(1).getAttribute('data-message')
    const fork = await api<{ thread: { threadId: string } }>(rig.server.url, 'POST', `/api/threads/${threadId}/fork`, { fromMessageId: second })
    expect(fork.status).toBe(201)
    await openThread(page, rig.server.url, fork.body.thread.threadId)
    await transcript().locator('.assistant').filter({ hasText: 'first words' }).waitFor()
    expect(await times(page)).toEqual(reloaded.slice(0, 2))
  })

  test("the header keeps the thread's totals (tokens, cost, context fill) and, near a full context, offers /compact in one click", async () => {
    await openFixtureThread('Totals')
    // The fixture model's window is 32k: a reply that read 27k leaves it 84% full.
    rig.llm.usage.push({ prompt_tokens: 1200, completion_tokens: 300 }, { prompt_tokens: 26_500, completion_tokens: 500 })
    const totals = page.getByLabel('Thread totals')
    await send(page, 'first')
    await transcript().locator('.assistant').filter({ hasText: 'Local model heard: first' }).waitFor()
    await idle()
    await expect.poll(() => totals.innerText()).toContain('↑1.2k ↓300')
    await expect.poll(() => totals.innerText()).toContain('5% of 32k')
    expect(await page.getByRole('button', { name: 'Compact now' }).count()).toBe(0)
    await send(page, 'second')
    await transcript().locator('.assistant').filter({ hasText: 'Local model heard: second' }).waitFor()
    await idle()
    await expect.poll(() => totals.innerText()).toContain('↑28k ↓800')
    await expect.poll(() => totals.innerText()).toContain('84% of 32k')
    const warning = page.getByRole('status').filter({ hasText: 'The context is 84% full' })
    await warning.waitFor()
    expect(await axeViolations(page)).toEqual([])
    const before = rig.llm.requests.length
    await warning.getByRole('button', { name: 'Compact now' }).click()
    // pi summarises with the model, and the context's fill is unknown again until the next reply.
    await transcript().getByText('The conversation was compacted').waitFor()
    expect(rig.llm.requests.length).toBeGreaterThan(before)
    await warning.waitFor({ state: 'detached' })
    await expect.poll(() => totals.innerText()).not.toContain('% of')
  })

  /** A 1×1 PNG, as a file the page can be given. */
  const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')
  const box = () => page.getByRole('textbox', { name: 'Message' })
  const attachments = () => page.getByRole('list', { name: 'Images to send' }).getByRole('img')

  /** A paste or a drop of a PNG on the composer, as the browser delivers one (a DataTransfer holding the file). */
  async function deliver(kind: 'paste' | 'drop', name: string) {
    await page.evaluate(
      ({ kind, name, bytes }) => {
        const composer = document.querySelector('app-shell')!.shadowRoot!.querySelector('thread-pane')!.shadowRoot!.querySelector('composer-box')!
        const target = composer.shadowRoot!.querySelector(kind === 'paste' ? 'textarea' : '.box')!
        const data = new DataTransfer()
        data.items.add(new File([new Uint8Array(bytes)], name, { type: 'image/png' }))
        const event =
          kind === 'paste'
            ? new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true, composed: true })
            : new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true, composed: true })
        target.dispatchEvent(event)
      },
      { kind, name, bytes: [...PNG] },
    )
  }

  test('images picked and pasted reach the model as image parts and show as thumbnails, live and after a reload', async () => {
    await openFixtureThread('Look at this', VISION_MODEL)
    await page.getByLabel('Attach images').setInputFiles({ name: 'one.png', mimeType: 'image/png', buffer: PNG })
    await deliver('paste', 'two.png')
    await expect.poll(() => attachments().count()).toBe(2)
    expect(await axeViolations(page)).toEqual([])
    await send(page, 'describe these')
    await transcript().locator('.assistant').filter({ hasText: 'Local model heard: describe these' }).waitFor()
    expect(imageUrls(rig.llm.requests.at(-1)!)).toHaveLength(2)
    expect(await attachments().count()).toBe(0)
    const thumbs = transcript().locator('.user').filter({ hasText: 'describe these' }).getByRole('img')
    expect(await thumbs.count()).toBe(2)
    await idle()
    await page.reload()
    await transcript().locator('.user').filter({ hasText: 'describe these' }).waitFor()
    expect(await thumbs.count()).toBe(2)
    expect(await axeViolations(page)).toEqual([])
  })

  test('an image dropped on a thread whose model takes none is refused there, in words, and nothing is attached', async () => {
    await openFixtureThread('Text only')
    await deliver('drop', 'photo.png')
    await page.getByRole('alert').filter({ hasText: `The model ${MODEL} does not take images` }).waitFor()
    expect(await page.getByRole('list', { name: 'Images to send' }).count()).toBe(0)
  })

  test("a queued prompt's images come back with its text when Stop hands it back", async () => {
    await openFixtureThread('Stop with an image', VISION_MODEL)
    // A reply that thinks at length keeps the run busy while the next prompt is queued.
    rig.llm.reasoning.push('hmm '.repeat(2000))
    await send(page, 'think long')
    const stop = page.locator('composer-box').getByRole('button', { name: 'Stop' })
    await stop.waitFor()
    await deliver('paste', 'queued.png')
    await expect.poll(() => attachments().count()).toBe(1)
    await send(page, 'queued with an image')
    await expect.poll(() => attachments().count()).toBe(0)
    await page.getByRole('list', { name: 'Queued prompts' }).getByText('queued with an image').waitFor()
    await stop.click()
    await expect.poll(() => box().inputValue()).toBe('queued with an image')
    await expect.poll(() => attachments().count()).toBe(1)
  })
})
