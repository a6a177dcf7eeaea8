/**
 * The thread list, the empty state of New thread and navigation on the real server and the built
 * client (issue 20): a create slowed to 250 ms loses no key, the search finds a thread by what was
 * said in it, and axe-core finds no violation on the list, the empty state, the not-found view and
 * a pane being renamed — at desktop size and on a 390×844 phone, light and dark.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright'
import { api, launch, newThread, openThread, send, startServer, type Server } from './harness.js'
import { violations } from './axe.js'


const deepActiveLabel = (page: Page) =>
  page.evaluate(() => {
    let el: Element | null = document.activeElement
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement
    return el?.getAttribute('aria-label')
  })

let server: Server
let browser: Browser
const roots: string[] = []

beforeAll(async () => {
  roots.push(mkdtempSync(join(tmpdir(), 'threadhost-root-app-')), mkdtempSync(join(tmpdir(), 'threadhost-root-lib-')))
  server = await startServer({ args: roots.flatMap((r) => ['--workspace', r]) })
  browser = await launch()
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
  for (const r of roots) rmSync(r, { recursive: true, force: true })
})

async function context(width: number, height: number, scheme: 'light' | 'dark' = 'light'): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ bypassCSP: true, viewport: { width, height }, colorScheme: scheme, reducedMotion: 'reduce' })
  return { ctx, page: await ctx.newPage() }
}

describe('New thread on the real server', () => {
  test('with the create slowed to 250 ms, “Fix the login bug” typed right after New thread arrives whole, in the chosen second workspace root', async () => {
    const { ctx, page } = await context(1280, 800)
    try {
      await page.route('**/api/threads', async (route) => {
        if (route.request().method() === 'POST') await new Promise((r) => setTimeout(r, 250))
        await route.continue()
      })
      await page.goto(`${server.url}/`)
      const before = (await api<{ threads: unknown[] }>(server.url, 'GET', '/api/threads')).body.threads.length
      await page.getByRole('button', { name: 'New thread', exact: true }).click()
      await page.keyboard.type('Fix the login bug')
      await page.keyboard.press('Enter')
      await page.keyboard.type(' next')
      await page.getByRole('log').getByText('Fix the login bug', { exact: true }).waitFor({ timeout: 30_000 })
      await expect.poll(() => page.getByRole('textbox', { name: 'Message' }).inputValue()).toBe(' next')
      expect(await deepActiveLabel(page)).toBe('Message')
      expect((await api<{ threads: unknown[] }>(server.url, 'GET', '/api/threads')).body.threads.length).toBe(before + 1)

      // Another, in the second root: the workspace is chosen before anything exists.
      await page.getByRole('button', { name: 'New thread', exact: true }).click()
      const workspace = page.getByRole('combobox', { name: 'Workspace' })
      await workspace.waitFor()
      const second = (await api<{ roots: string[] }>(server.url, 'GET', '/api/workspaces')).body.roots[1]
      await workspace.selectOption(second)
      await send(page, 'in the library')
      await page.getByRole('log').getByText('in the library', { exact: true }).waitFor({ timeout: 30_000 })
      const id = decodeURIComponent(/#\/threads\/(.+)$/.exec(page.url())![1])
      expect((await api<{ cwd: string }>(server.url, 'GET', `/api/threads/${id}`)).body.cwd).toBe(second)
    } finally {
      await ctx.close()
    }
  })

  test('the search box finds a thread by a word said in it, with the snippet', async () => {
    const { ctx, page } = await context(1280, 800)
    try {
      const id = await newThread(server.url, 'Plain title')
      await openThread(page, server.url, id)
      await send(page, 'the quokka smiles at dawn')
      await page.getByRole('log').getByText('You said', { exact: false }).first().waitFor({ timeout: 30_000 })
      await page.getByRole('searchbox', { name: 'Search threads' }).fill('quokk')
      const link = page.getByRole('navigation', { name: 'Threads' }).getByRole('link', { name: /Plain title/ })
      await expect.poll(() => link.locator('mark').first().textContent(), { timeout: 10_000 }).toBe('quokka')
    } finally {
      await ctx.close()
    }
  })

  test('opening a search hit brings the message that matched into view, far up a long transcript, and offers the way back to the end', async () => {
    const { ctx, page } = await context(1280, 800)
    try {
      const id = await newThread(server.url, 'Long thread')
      const settled = async () => expect.poll(async () => (await api<{ busy: boolean; run: number }>(server.url, 'GET', `/api/threads/${id}`)).body, { timeout: 30_000 })
      await api(server.url, 'POST', `/api/threads/${id}/prompt`, { message: 'the wombat digs at noon' })
      await (await settled()).toMatchObject({ busy: false, run: 1 })
      for (let run = 2; run <= 8; run++) {
        await api(server.url, 'POST', `/api/threads/${id}/prompt`, { message: `filler ${run}\n${'more lines to scroll past\n'.repeat(12)}` })
        await (await settled()).toMatchObject({ busy: false, run })
      }
      await openThread(page, server.url, await newThread(server.url, 'Somewhere else'))
      await page.getByRole('searchbox', { name: 'Search threads' }).fill('wombat')
      const link = page.getByRole('navigation', { name: 'Threads' }).getByRole('link', { name: /Long thread/ })
      await expect.poll(() => link.locator('mark').first().textContent(), { timeout: 10_000 }).toBe('wombat')
      await link.click()
      const message = page.getByRole('log', { name: 'Transcript' }).getByText('the wombat digs at noon', { exact: true })
      await expect
        .poll(() => message.evaluate((el) => {
          const r = el.getBoundingClientRect()
          return r.top >= 0 && r.bottom <= window.innerHeight
        }), { timeout: 15_000 })
        .toBe(true)
      await page.getByRole('button', { name: /Scroll to bottom/ }).waitFor()
    } finally {
      await ctx.close()
    }
  })
})

describe('accessibility of the list, the empty state and navigation (axe-core)', () => {
  for (const [label, width, height] of [
    ['desktop', 1280, 860],
    ['phone 390×844', 390, 844],
  ] as const) {
    for (const scheme of ['light', 'dark'] as const) {
      test(`${label}, ${scheme}: the list (grouped, searched), the empty state, a not-found URL and a thread being renamed have no violations`, async () => {
        const { ctx, page } = await context(width, height, scheme)
        try {
          const id = await newThread(server.url, `Axe ${label} ${scheme}`)
          await api(server.url, 'POST', `/api/threads/${id}/prompt`, { message: 'a word for the search: pelican' })
          await page.goto(`${server.url}/`)
          const nav = page.getByRole('navigation', { name: 'Threads' })
          await nav.getByRole('heading', { name: 'Today' }).waitFor()
          expect(await page.getByRole('main').count()).toBe(1)
          expect(await page.getByRole('heading', { level: 1 }).count()).toBeGreaterThan(0)
          expect(await violations(page)).toEqual([])

          await page.getByRole('searchbox', { name: 'Search threads' }).fill('pelican')
          await nav.locator('mark').first().waitFor({ timeout: 15_000 })
          expect(await violations(page)).toEqual([])

          await page.getByRole('button', { name: 'New thread', exact: true }).click()
          await page.getByRole('heading', { level: 1, name: 'New thread' }).waitFor()
          expect(await page.getByRole('main').count()).toBe(1)
          expect(await violations(page)).toEqual([])

          await page.goto(`${server.url}/#/threads/no-such-thread`)
          await page.getByRole('heading', { level: 1, name: 'No such thread' }).waitFor({ timeout: 15_000 })
          expect(await violations(page)).toEqual([])

          await openThread(page, server.url, id)
          expect(await page.getByRole('main').count()).toBe(1)
          expect(await page.getByRole('heading', { level: 1 }).count()).toBeGreaterThan(0)
          await page.getByRole('button', { name: 'Rename', exact: true }).click()
          await expect.poll(() => deepActiveLabel(page)).toBe('Thread title')
          expect(await violations(page)).toEqual([])
        } finally {
          await ctx.close()
        }
      })
    }
  }
})
