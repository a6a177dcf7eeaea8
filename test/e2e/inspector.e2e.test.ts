/**
 * The machine inspector end to end: the real server on the demo model, the built client, Debian's
 * Chromium. A confirm opens a dialog machine; the inspector shows it open beside the running thread;
 * the answer settles it, it leaves the live tree, and its recorded history still shows it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, Page } from 'playwright'
import { api, launch, newThread, startServer, type Server } from './harness.js'

const CONFIRM = 'call ui_dialog {"method":"confirm","title":"Deploy?","message":"to prod"}'

interface ActorNode {
  actorId: string
  id: string
  machineId: string
  value: unknown
  children: ActorNode[]
}

describe('machine inspector', () => {
  let server: Server
  let browser: Browser
  let page: Page

  beforeAll(async () => {
    server = await startServer()
    browser = await launch()
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } })
  })
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  const graph = () => page.getByRole('img', { name: /machine; active:/ })
  const stateValue = () => page.getByTestId('state-value')

  test('a confirm: thread running and dialog open; answered, the dialog settles, leaves the live tree, and its history stays', async () => {
    const threadId = await newThread(server.url, 'Deploy')
    await page.goto(`${server.url}/#/inspect`)
    await page.getByRole('status').filter({ hasText: 'Recording' }).waitFor()

    expect((await api(server.url, 'POST', `/api/threads/${threadId}/prompt`, { message: CONFIRM })).status).toBe(202)

    const threadItem = page.getByRole('button', { name: `thread thread:${threadId}: running` })
    await threadItem.waitFor()
    const dialogItem = page.getByRole('button', { name: /^dialog [0-9a-f]{8}: open$/ })
    await dialogItem.waitFor()

    await threadItem.click()
    await expect.poll(() => graph().getAttribute('aria-label')).toBe('thread machine; active: thread.running')
    await expect.poll(() => stateValue().textContent()).toBe('running')

    await dialogItem.click()
    await expect.poll(() => graph().getAttribute('aria-label')).toBe('dialog machine; active: dialog.open')
    expect(await page.locator('machine-graph').evaluate((el) => el.shadowRoot!.querySelectorAll('.edge.taken').length)).toBe(1)

    const { body } = await api<{ threads: ActorNode[] }>(server.url, 'GET', '/api/debug/actors')
    const dialog = body.threads.find((t) => t.actorId === `thread:${threadId}`)!.children.find((c) => c.machineId === 'dialog')!
    expect((await api(server.url, 'POST', `/api/threads/${threadId}/dialog`, { id: dialog.id, confirmed: true })).status).toBe(204)

    // The shown actor has settled: the picture follows it to its final state.
    await expect.poll(() => graph().getAttribute('aria-label')).toBe('dialog machine; active: dialog.settled')
    await expect.poll(() => stateValue().textContent()).toBe('settled (done)')
    // It has left the live tree; the stopped list still offers its history, and says it ended done.
    await dialogItem.waitFor({ state: 'detached' })
    const stopped = page.getByRole('button', { name: `dialog ${dialog.id.slice(0, 8)}: done` })
    await stopped.waitFor()
    await expect.poll(() => threadItem.isVisible()).toBe(true)

    // Time travel: the entry where it opened shows it open again, with its context digest.
    await stopped.click()
    const log = page.getByRole('listbox', { name: 'Recorded history' })
    await log.getByRole('option', { name: /^ANSWER from thread:/ }).waitFor()
    await log.getByRole('option', { name: /^open xstate.init/ }).click()
    await expect.poll(() => graph().getAttribute('aria-label')).toBe('dialog machine; active: dialog.open')
    await expect.poll(() => page.getByLabel('Context digest').textContent()).toContain('"title": "Deploy?"')
    await expect.poll(() => page.getByText(/as it was after entry #\d+/).isVisible()).toBe(true)

    // And by keyboard: End goes to the last entry (stopped: the last state it had), Escape back to live.
    await log.focus()
    await page.keyboard.press('End')
    await expect.poll(() => stateValue().textContent()).toBe('settled (done)')
    // Home is its start; `asked` is left by an eventless transition, so the first state it shows is open.
    await page.keyboard.press('Home')
    await expect.poll(() => graph().getAttribute('aria-label')).toBe('dialog machine; active: dialog.open')
    await page.keyboard.press('Escape')
    await expect.poll(() => page.getByText(/as it was after entry/).count()).toBe(0)
  })

  test('the thread pane links to the inspector for its thread', async () => {
    const threadId = await newThread(server.url, 'Linked')
    expect((await api(server.url, 'POST', `/api/threads/${threadId}/prompt`, { message: 'hello' })).status).toBe(202)
    await page.goto(`${server.url}/#/threads/${threadId}`)
    await page.getByRole('link', { name: 'Inspect' }).click()
    await expect.poll(() => page.url()).toContain(`#/inspect?thread=${threadId}`)
    await expect.poll(() => stateValue().textContent()).toMatch(/^(running|idle)$/)
    await expect.poll(() => page.getByRole('heading', { level: 2 }).first().textContent()).toContain(`thread:${threadId}`)
  })
})
