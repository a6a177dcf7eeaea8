/**
 * End to end: a real server, the built client and Debian's Chromium; two pages follow one thread
 * like two tabs. Runs once src/server/main.ts exists (skipped before, with a warning).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright'
import {
  api,
  card,
  gone,
  launch,
  newThread,
  openDialogIds,
  openThread,
  send,
 
  startServer,
  type Server,
} from './harness.js'

const CONFIRM = 'call ui_dialog {"method":"confirm","title":"Deploy?","message":"to prod"}'
const SELECT = 'call ui_dialog {"method":"select","title":"Region?","options":["eu-west","us-east"]}'

describe('two tabs on one thread', () => {
  let server: Server
  let browser: Browser
  let context: BrowserContext
  let a: Page
  let b: Page
  let threadId: string

  beforeAll(async () => {
    server = await startServer()
    browser = await launch()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  async function twoTabs(title: string) {
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    context.setDefaultTimeout(45_000) // generous: CI machines here are small and busy
    a = await context.newPage()
    b = await context.newPage()
    threadId = await newThread(server.url, title)
    await openThread(a, server.url, threadId)
    await openThread(b, server.url, threadId)
  }
  afterEach(async () => {
    await context?.close()
  })

  test('a confirm appears in both tabs; one answers; the other card leaves "answered in another tab"', async () => {
    await twoTabs('Deploy')
    await send(a, CONFIRM)
    await card(a, 'Deploy?').waitFor()
    await card(b, 'Deploy?').waitFor()
    await card(a, 'Deploy?').getByRole('button', { name: 'Yes', exact: true }).click()
    await gone(card(b, 'Deploy?'))
    await gone(card(a, 'Deploy?'))
    await b.getByText('answered in another tab').waitFor()
    expect(await a.getByText('answered in another tab').count()).toBe(0)
    // The run goes on and ends in both tabs.
    await a.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 15_000 })
  })

  test('a select answer outside the options is refused (422): the card stays open and shows the refusal', async () => {
    await twoTabs('Regions')
    await send(a, SELECT)
    const region = card(a, 'Region?')
    await region.waitFor()
    const [id] = await openDialogIds(a)
    expect(id).toBeTruthy()

    // A script posts a value the extension never offered.
    const raw = await a.evaluate(
      async ([thread, dialogId]) => {
        const res = await fetch(`/api/threads/${thread}/dialog`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id: dialogId, value: 'mars' }),
        })
        return { status: res.status, body: await res.json() }
      },
      [threadId, id] as const,
    )
    expect(raw.status).toBe(422)
    expect(JSON.stringify(raw.body)).toContain('not one of the offered options')
    await region.waitFor()

    // The same through the card, its request rewritten on the way out by a script: the refusal shows on the card.
    await a.route('**/dialog', (route) =>
      route.continue({ postData: JSON.stringify({ ...route.request().postDataJSON(), value: 'mars' }) }),
    )
    const refused = a.waitForResponse((r) => r.url().endsWith('/dialog') && r.request().method() === 'POST')
    await region.getByRole('button', { name: 'us-east' }).click()
    expect((await refused).status()).toBe(422)
    await region.getByRole('alert').filter({ hasText: 'not one of the offered options' }).waitFor()
    expect(await region.isVisible()).toBe(true)
    expect(await card(b, 'Region?').isVisible()).toBe(true)
    await a.unroute('**/dialog')
    await region.getByRole('button', { name: 'eu-west' }).click()
    await gone(region)
    await gone(card(b, 'Region?'))
  })

  test('Stop with two queued prompts puts both texts back into the draft, in order', async () => {
    await twoTabs('Slow run')
    await send(a, 'slow 200')
    await a.getByRole('button', { name: 'Stop' }).waitFor()
    await send(a, 'first queued')
    await send(a, 'second queued')
    const queue = a.getByRole('list', { name: 'Queued prompts' })
    await queue.getByText('second queued').waitFor()
    // The other tab sees the queue too.
    await b.getByRole('list', { name: 'Queued prompts' }).getByText('second queued').waitFor()

    await a.getByRole('button', { name: 'Stop' }).click()
    const box = a.getByRole('textbox', { name: 'Message' })
    await expect.poll(() => box.inputValue(), { timeout: 10_000 }).toBe('first queued\n\nsecond queued')
    await a.getByRole('log').getByRole('note').filter({ hasText: 'Stopped' }).waitFor()
    // The bubbles of prompts the runtime never claimed left the transcript.
    await expect.poll(() => a.getByRole('log').getByText('first queued').count()).toBe(0)
    await expect.poll(() => b.getByRole('list', { name: 'Queued prompts' }).count()).toBe(0)
  })

  test('Stop in tab A hands tab B’s queued text to A, says so there, and B gets its own text back into its draft', async () => {
    await twoTabs('Shared queue')
    await send(a, 'slow 200')
    await a.getByRole('button', { name: 'Stop' }).waitFor()
    await b.getByRole('button', { name: 'Stop' }).waitFor()
    await send(a, 'queued in a')
    await send(b, 'queued in b')
    await a.getByRole('list', { name: 'Queued prompts' }).getByText('queued in b').waitFor()
    await b.getByRole('list', { name: 'Queued prompts' }).getByText('queued in a').waitFor()

    await a.getByRole('button', { name: 'Stop' }).click()
    const boxA = a.getByRole('textbox', { name: 'Message' })
    const boxB = b.getByRole('textbox', { name: 'Message' })
    // The server hands every text to the stopping tab (the contract), steering in queue order.
    await expect.poll(() => boxA.inputValue(), { timeout: 10_000 }).toBe('queued in a\n\nqueued in b')
    await a.getByRole('status').filter({ hasText: 'another tab' }).filter({ hasText: 'queued in b' }).waitFor()
    // Tab B is told, and keeps its own text.
    await expect.poll(() => boxB.inputValue(), { timeout: 10_000 }).toBe('queued in b')
    await b.getByRole('status').filter({ hasText: 'withdrawn' }).waitFor()
    expect(await boxB.inputValue()).not.toContain('queued in a')
  })

  test('Escape in the composer stops the run and puts the queue back; Alt+Enter queues a follow-up', async () => {
    await twoTabs('Keys')
    await send(a, 'slow 200')
    await a.getByRole('button', { name: 'Stop' }).waitFor()
    const box = a.getByRole('textbox', { name: 'Message' })
    await box.fill('later, please')
    await box.press('Alt+Enter')
    await a.getByRole('list', { name: 'Queued prompts' }).getByText('later, please').waitFor()
    await expect.poll(() => a.getByRole('list', { name: 'Queued prompts' }).textContent()).toMatch(/Follow-up\s*later, please/)
    await box.press('Escape')
    await expect.poll(() => box.inputValue(), { timeout: 10_000 }).toBe('later, please')
    await a.getByRole('log').getByRole('note').filter({ hasText: 'Stopped' }).waitFor()
    await a.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 15_000 })
  })

  test('New thread, then type: the text goes into the empty state’s composer, and only the first message makes a thread', async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    await page.goto(`${server.url}/`)
    const count = async () => (await api<{ threads: unknown[] }>(server.url, 'GET', '/api/threads')).body.threads.length
    const before = await count()
    const newThread = page.getByRole('button', { name: 'New thread' })
    await newThread.click()
    await newThread.click()
    await expect.poll(() => page.evaluate(() => {
      let el: Element | null = document.activeElement
      while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement
      return el?.getAttribute('aria-label')
    })).toBe('Message')
    await page.keyboard.type('a few words with spaces')
    expect(await page.getByRole('textbox', { name: 'Message' }).inputValue()).toBe('a few words with spaces')
    expect(await count()).toBe(before)
    await page.keyboard.press('Enter')
    await page.getByRole('status', { name: 'Connection: Connected' }).waitFor({ timeout: 45_000 })
    await page.getByRole('log').getByText('a few words with spaces').first().waitFor({ timeout: 20_000 })
    expect(await count()).toBe(before + 1)
  })

  test('a reload under an open question shows the card again', async () => {
    await twoTabs('Reload')
    await send(a, CONFIRM)
    await card(b, 'Deploy?').waitFor()
    await b.reload()
    await b.getByRole('status', { name: 'Connection: Connected' }).waitFor({ timeout: 15_000 })
    await card(b, 'Deploy?').waitFor()
    await card(b, 'Deploy?').getByRole('button', { name: 'No', exact: true }).click()
    await gone(card(a, 'Deploy?'))
    await a.getByText('answered in another tab').waitFor()
  })

  test('the list shows the thread, its busy state and the open-question badge; rename and delete work', async () => {
    await twoTabs('Listed')
    await send(a, CONFIRM)
    await card(a, 'Deploy?').waitFor()
    const nav = a.getByRole('navigation', { name: 'Threads' })
    await nav.getByLabel('1 open question').waitFor({ timeout: 10_000 })
    await a.getByRole('button', { name: 'Rename' }).click()
    await a.getByRole('textbox', { name: 'Thread title' }).fill('Renamed thread')
    await a.getByRole('textbox', { name: 'Thread title' }).press('Enter')
    await nav.getByRole('link', { name: /Renamed thread/ }).waitFor()
    await b.getByRole('navigation', { name: 'Threads' }).getByRole('link', { name: /Renamed thread/ }).waitFor({ timeout: 10_000 })
    await card(a, 'Deploy?').getByRole('button', { name: 'Cancel' }).click()
    await a.getByText('Deploy? — cancelled').waitFor()
    await a.getByRole('button', { name: 'Delete', exact: true }).click()
    await a.getByRole('alertdialog').getByRole('button', { name: 'Delete thread' }).click()
    await nav.getByRole('link', { name: /Renamed thread/ }).waitFor({ state: 'detached' })
    expect((await api(server.url, 'GET', `/api/threads/${threadId}`)).status).toBe(404)
  })
})
