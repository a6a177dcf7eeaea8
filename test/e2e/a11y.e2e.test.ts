/**
 * Accessibility, checked by axe-core (loaded into the page from node_modules) on the real server and
 * the built client: the thread pane (empty with the demo examples, then with a conversation, a tool
 * call and a code block), an open question card, the open-questions view and the inspector page, in
 * light and dark. Zero violations, each reported with its rule, impact and the nodes it found.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright'
import { card, launch, newThread, openThread, send, startServer, type Server } from './harness.js'
import { violations } from './axe.js'

const CONFIRM = 'call ui_dialog {"method":"confirm","title":"Deploy?","message":"to prod"}'

describe('accessibility (axe-core)', () => {
  let server: Server
  let browser: Browser
  let context: BrowserContext
  let page: Page

  beforeAll(async () => {
    server = await startServer()
    browser = await launch()
    // The page's CSP allows only its own scripts: the test's axe is let in by bypassing it here.
    context = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 860 }, reducedMotion: 'reduce' })
    page = await context.newPage()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  for (const scheme of ['light', 'dark'] as const) {
    test(`${scheme}: the thread pane, empty (demo examples), with a conversation, a tool call and code, and a fork of it, has no violations`, async () => {
      await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' })
      const threadId = await newThread(server.url)
      await openThread(page, server.url, threadId)
      await page.getByRole('list', { name: 'Try the demo model' }).waitFor()
      expect(await violations(page)).toEqual([])

      await send(page, 'call read {"path":"nowhere.md"}')
      await page.getByRole('log').getByText('nowhere.md').first().waitFor({ timeout: 20_000 })
      await page.getByRole('log').getByText('You said', { exact: false }).or(page.getByRole('log').locator('.assistant')).first().waitFor()
      await send(page, 'Here is code:\n```ts\nconst a: number = 1\n```')
      await page.getByRole('button', { name: 'Copy code' }).first().waitFor({ timeout: 20_000 })
      await page.getByRole('status', { name: 'Connection: Connected' }).waitFor()
      await page.waitForFunction(() => !document.querySelector('app-shell')?.shadowRoot?.querySelector('thread-pane')?.shadowRoot?.querySelector('.cursor'))
      expect(await violations(page)).toEqual([])

      // The thread's keys (the Keys button), then closed again.
      await page.getByRole('button', { name: 'Keys' }).click()
      await page.getByText('Stop the run').waitFor()
      expect(await violations(page)).toEqual([])
      await page.keyboard.press('Escape')

      // A prompt's editor, open in place (Edit).
      await page.getByRole('log').getByRole('button', { name: 'Edit this message' }).last().click()
      await page.getByRole('log').getByRole('textbox', { name: 'Edited message' }).waitFor()
      expect(await violations(page)).toEqual([])
      await page.keyboard.press('Escape')

      // A fork of it (Fork on a prompt): the "Forked from" link and the prefilled composer.
      await page.getByRole('log').getByRole('button', { name: 'Fork a new thread from here' }).last().click()
      await page.getByText('Forked from').waitFor({ timeout: 20_000 })
      await page.getByRole('status', { name: 'Connection: Connected' }).waitFor()
      expect(await violations(page)).toEqual([])
    })

    test(`${scheme}: an open question card, and the open-questions view, have no violations`, async () => {
      await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' })
      const threadId = await newThread(server.url, 'Deploy')
      await openThread(page, server.url, threadId)
      await send(page, CONFIRM)
      await card(page, 'Deploy?').waitFor({ timeout: 20_000 })
      expect(await violations(page)).toEqual([])

      await page.goto(`${server.url}/#/questions`)
      await page.getByRole('region', { name: 'Open questions' }).getByRole('link', { name: /Deploy/ }).waitFor({ timeout: 15_000 })
      expect(await violations(page)).toEqual([])
      await page.goto(`${server.url}/#/threads/${threadId}`)
      await card(page, 'Deploy?').getByRole('button', { name: 'No' }).click()
    })

    test(`${scheme}: the inspector page has no violations`, async () => {
      await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' })
      await page.goto(`${server.url}/#/inspect`)
      await page.getByRole('status').filter({ hasText: 'Recording' }).waitFor()
      await page.waitForTimeout(500)
      expect(await violations(page)).toEqual([])
    })
  }
})
