/**
 * The main screens, light and dark, from a real server. `npm run screenshots` writes them into
 * docs/screenshots/; `npm test` only checks that they render and leaves the tracked files alone.
 *
 * The server is set up so every screen can be reached: an agent dir holding pi's own question.ts
 * (a terminal component) and a second model (so New thread offers a model picker), two workspace
 * roots of which the first is a git repository with edits allowed (the Changes panel).
 */
import { execFileSync } from 'node:child_process'
import { createECDH, randomBytes } from 'node:crypto'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright'
import type { TerminalView } from '../../src/ui/terminal-view.js'
import { WRITE_SCREENSHOTS, api, card, launch, newThread, openThread, screenshot, send, startServer, type Server } from './harness.js'

const EXAMPLES = fileURLToPath(new URL('../../node_modules/@earendil-works/pi-coding-agent/examples/extensions/', import.meta.url))
const DAY = 24 * 60 * 60 * 1000

const SHOTS = join('docs', 'screenshots')
/** Every tracked screenshot's size and mtime: unchanged after a run that was not asked to write. */
function shots(): Record<string, string> {
  try {
    return Object.fromEntries(
      readdirSync(SHOTS)
        .filter((f) => f.endsWith('.png'))
        .map((f) => {
          const st = statSync(join(SHOTS, f))
          return [f, `${st.size}:${st.mtimeMs}`]
        }),
    )
  } catch {
    return {}
  }
}

describe('screenshots', () => {
  let server: Server
  let browser: Browser
  let tmp: string
  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'threadhost-e2e-shots-'))
    const agentDir = join(tmp, 'agent')
    mkdirSync(join(agentDir, 'extensions'), { recursive: true })
    copyFileSync(join(EXAMPLES, 'question.ts'), join(agentDir, 'extensions', 'question.ts'))
    // A second model to pick from; nothing is ever sent to it.
    const model = { id: 'local-chat', name: 'Local chat (OpenAI-compatible)', reasoning: false, input: ['text'], contextWindow: 32000, maxTokens: 4096 }
    const provider = { baseUrl: 'http://127.0.0.1:9/v1', api: 'openai-completions', apiKey: 'unused', models: [{ ...model, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }] }
    writeFileSync(join(agentDir, 'models.json'), JSON.stringify({ providers: { local: provider } }))
    const repo = join(tmp, 'webapp')
    const docs = join(tmp, 'handbook')
    mkdirSync(repo)
    mkdirSync(docs)
    const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' }
    execFileSync('git', ['init', '-q'], { cwd: repo })
    writeFileSync(join(repo, 'app.ts'), 'export const answer = 41\nexport const greeting = "hello"\n')
    execFileSync('git', ['add', '.'], { cwd: repo, env })
    execFileSync('git', ['commit', '-q', '-m', 'start'], { cwd: repo, env })
    const policy = join(tmp, 'policy.json')
    writeFileSync(policy, JSON.stringify({ tools: { write: 'allow', edit: 'allow' } }))
    server = await startServer({ args: ['--agent-dir', agentDir, '--workspace', repo, '--workspace', docs, '--tools-policy', policy, '--demo-delay-ms', '5'] })
    browser = await launch()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    if (tmp) rmSync(tmp, { recursive: true, force: true })
  })

  async function desktop(scheme: 'light' | 'dark' = 'light', size = { width: 1280, height: 800 }): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: size, colorScheme: scheme })
    context.setDefaultTimeout(45_000) // generous: the machines here are small and busy
    return { context, page: await context.newPage() }
  }
  const idle = (page: Page) => page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 20_000 })
  /** Light, then the same page in dark: the styles follow the colour scheme. */
  async function both(page: Page, name: string): Promise<void> {
    await page.emulateMedia({ colorScheme: 'light' })
    await screenshot(page, `${name}-light`)
    await page.emulateMedia({ colorScheme: 'dark' })
    await screenshot(page, `${name}-dark`)
    await page.emulateMedia({ colorScheme: 'light' })
  }

  test('main screens in light and dark (written into docs/screenshots only by npm run screenshots)', async () => {
    const before = shots()
    await newThread(server.url, 'Onboarding notes')
    const id = await newThread(server.url, 'Release checklist')
    for (const scheme of ['light', 'dark'] as const) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: scheme })
      const page = await context.newPage()
      if (scheme === 'light') {
        await page.goto(server.url + '/')
        await page.getByRole('button', { name: 'New thread' }).waitFor()
        await screenshot(page, `welcome-${scheme}`)
        await openThread(page, server.url, id)
        await send(page, 'What is left before the **1.4 release**? Check `CHANGELOG.md` first.')
        await page.getByRole('log').getByText('You said').waitFor({ timeout: 15_000 })
        await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 15_000 })
        await send(page, 'call ui_dialog {"method":"confirm","title":"Deploy to production?","message":"Release 1.4 goes to all regions."}')
      } else {
        await openThread(page, server.url, id)
      }
      await card(page, 'Deploy to production?').waitFor({ timeout: 15_000 })
      await screenshot(page, `thread-dialog-${scheme}`)
      const narrow = await context.newPage()
      await narrow.setViewportSize({ width: 390, height: 780 })
      await openThread(narrow, server.url, id)
      await card(narrow, 'Deploy to production?').waitFor()
      await screenshot(narrow, `mobile-${scheme}`)
      await context.close()
    }
    // Leave the question answered so the run ends cleanly.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    await openThread(page, server.url, id)
    await card(page, 'Deploy to production?').getByRole('button', { name: 'Yes', exact: true }).click()
    await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 15_000 })
    await screenshot(page, 'thread-light')
    await page.emulateMedia({ colorScheme: 'dark' })
    await screenshot(page, 'thread-dark')
    await context.close()
    if (!WRITE_SCREENSHOTS) expect(shots()).toEqual(before)
  })

  test('New thread with its workspace and model pickers, the list by date, a search with its snippets, and an unknown thread URL', async () => {
    const before = shots()
    const flaky = await newThread(server.url, 'Flaky CI on main')
    await api(server.url, 'POST', `/api/threads/${flaky}/prompt`, { message: 'The pelican test fails on main about once in ten runs: find out why.' })
    await newThread(server.url, 'Quarterly numbers')
    const { context, page } = await desktop()
    // A fresh server has only today's threads: its list is answered aged so the picture shows the date groups.
    const aged: Record<string, number> = { 'Onboarding notes': DAY, 'Quarterly numbers': 4 * DAY }
    await page.route('**/api/threads', async (route) => {
      if (route.request().method() !== 'GET') return route.continue()
      const response = await route.fetch()
      const body = (await response.json()) as { threads: { title: string; updatedAt: number }[] }
      for (const t of body.threads) t.updatedAt -= aged[t.title] ?? 0
      await route.fulfill({ response, json: body })
    })
    await page.goto(server.url + '/')
    const nav = page.getByRole('navigation', { name: 'Threads' })
    for (const group of ['Today', 'Yesterday', 'Previous 7 days']) await nav.getByRole('heading', { name: group }).waitFor()
    await screenshot(page, 'list-light')

    await page.getByRole('searchbox', { name: 'Search threads' }).fill('pelican')
    await expect.poll(() => nav.locator('mark').first().textContent(), { timeout: 20_000 }).toMatch(/pelican/i)
    await both(page, 'search')
    await page.getByRole('searchbox', { name: 'Search threads' }).fill('')

    await page.getByRole('button', { name: 'New thread', exact: true }).click()
    await page.getByRole('heading', { level: 1, name: 'New thread' }).waitFor()
    await page.getByRole('combobox', { name: 'Workspace' }).waitFor()
    await page.getByRole('combobox', { name: 'Model' }).waitFor()
    await both(page, 'new-thread')

    await page.goto(`${server.url}/#/threads/no-such-thread`)
    await page.getByRole('heading', { level: 1, name: 'No such thread' }).waitFor({ timeout: 15_000 })
    await screenshot(page, 'not-found-light')
    await context.close()
    if (!WRITE_SCREENSHOTS) expect(shots()).toEqual(before)
  })

  test("a pi terminal component (question.ts), the Changes panel with a run's diff, versions after an Edit, and the keys list", async () => {
    const before = shots()
    const { context, page } = await desktop()
    const terminal = card(page, 'Terminal')
    const shown = () => terminal.locator('terminal-view').evaluate((el) => (el as TerminalView).text)
    await openThread(page, server.url, await newThread(server.url, 'Pick a colour'))
    await send(page, 'call question {"question":"Which colour should the banner be?","options":[{"label":"Red"},{"label":"Green"},{"label":"Blue"}]}')
    await expect.poll(shown, { timeout: 45_000 }).toContain('Which colour should the banner be?')
    await page.keyboard.press('ArrowDown')
    await expect.poll(shown).toContain('> 2. Green')
    // The transcript scrolls: the picture shows the whole component, not its top edge.
    const whole = (p: Page) => card(p, 'Terminal').evaluate((el) => el.scrollIntoView({ block: 'end' }))
    await whole(page)
    await screenshot(page, 'terminal-light')
    const dark = await desktop('dark')
    await openThread(dark.page, server.url, decodeURIComponent(new URL(page.url()).hash.replace('#/threads/', '')))
    await expect.poll(() => card(dark.page, 'Terminal').locator('terminal-view').evaluate((el) => (el as TerminalView).text), { timeout: 45_000 }).toContain('> 2. Green')
    await whole(dark.page)
    await screenshot(dark.page, 'terminal-dark')
    await dark.context.close()
    await page.keyboard.press('Enter')
    await page.getByText('User selected: 2. Green').first().waitFor()
    await idle(page)

    await openThread(page, server.url, await newThread(server.url, 'Bump the answer'))
    await send(page, `call edit ${JSON.stringify({ path: 'app.ts', edits: [{ oldText: '41', newText: '42' }] })}`)
    const panel = page.locator('changes-view')
    await panel.getByText('Changes · 1 file').click()
    await panel.getByText('Run 1 · 1 file').waitFor()
    await panel.getByRole('button', { name: 'Diff' }).click()
    await panel.getByText('+export const answer = 42').waitFor()
    await idle(page)
    await panel.getByText('+export const answer = 42').evaluate((el) => el.scrollIntoView({ block: 'end' }))
    await both(page, 'changes')

    await openThread(page, server.url, await newThread(server.url, 'Release plan'))
    const log = page.getByRole('log')
    await send(page, 'List what ships in 1.4')
    await log.getByText('You said: List what ships in 1.4').waitFor({ timeout: 20_000 })
    await send(page, 'And what slips to 1.5?')
    await log.getByText('You said: And what slips to 1.5?').waitFor({ timeout: 20_000 })
    await idle(page)
    await log.getByRole('button', { name: 'Edit this message' }).nth(1).click()
    const editor = log.getByRole('textbox', { name: 'Edited message' })
    await editor.fill('And what moves to 1.5?')
    await editor.press('Enter')
    await log.getByText('You said: And what moves to 1.5?').waitFor({ timeout: 20_000 })
    await idle(page)
    await expect.poll(() => log.getByRole('group', { name: 'Versions of this message' }).textContent()).toContain('2 / 2')
    await both(page, 'versions')

    await page.getByRole('button', { name: 'Keys', exact: true }).click()
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor()
    await both(page, 'keys')
    await context.close()
    if (!WRITE_SCREENSHOTS) expect(shots()).toEqual(before)
  })

  test('the notifications switch turned on, and the list and a thread on a 390×844 phone', async () => {
    const before = shots()
    const { context, page } = await desktop()
    await context.grantPermissions(['notifications'], { origin: server.url })
    // Headless Chromium has no vendor push service: a push manager stands in, and the switch is turned off again before the end.
    const ecdh = createECDH('prime256v1')
    ecdh.generateKeys()
    const keys = { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') }
    await context.addInitScript((keys) => {
      let current: PushSubscription | null = null
      PushManager.prototype.getSubscription = async () => current
      PushManager.prototype.subscribe = async (options?: PushSubscriptionOptionsInit) => {
        const endpoint = 'http://127.0.0.1:9/push/screenshots'
        current = {
          endpoint,
          expirationTime: null,
          options: { applicationServerKey: (options?.applicationServerKey as Uint8Array).buffer, userVisibleOnly: true },
          toJSON: () => ({ endpoint, expirationTime: null, keys }),
          unsubscribe: async () => ((current = null), true),
          getKey: () => null,
        } as unknown as PushSubscription
        return current
      }
    }, keys)
    await page.goto(server.url + '/')
    const bell = page.getByRole('button', { name: 'Notifications' })
    await bell.click()
    await expect.poll(() => bell.getAttribute('aria-pressed'), { timeout: 30_000 }).toBe('true')
    await both(page, 'notifications')
    await bell.click()
    await expect.poll(() => bell.getAttribute('aria-pressed'), { timeout: 30_000 }).toBe('false')
    await context.close()

    const trip = await newThread(server.url, 'Trip to Lisbon')
    await api(server.url, 'POST', `/api/threads/${trip}/prompt`, { message: 'Plan **three days** in Lisbon: trams, `pastéis`, and one day trip.' })
    const phone = await desktop('light', { width: 390, height: 844 })
    const link = phone.page.getByRole('navigation', { name: 'Threads' }).getByRole('link', { name: /Trip to Lisbon/ })
    await phone.page.goto(server.url + '/')
    await link.waitFor()
    await both(phone.page, 'phone-list')
    await link.click()
    await phone.page.getByRole('status', { name: 'Connection: Connected' }).waitFor()
    await phone.page.getByRole('log').getByText('You said').first().waitFor()
    await idle(phone.page)
    await both(phone.page, 'phone-thread')
    await phone.context.close()
    if (!WRITE_SCREENSHOTS) expect(shots()).toEqual(before)
  })
})
