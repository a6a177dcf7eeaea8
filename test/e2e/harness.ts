/**
 * e2e harness: a real threadhost server (src/server/main.ts, started by test/support/spawn-server.ts
 * with `--port 0 --data-dir <tmp>`) and Debian's Chromium driven by playwright. Two pages follow the
 * same thread, like two tabs.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { chromium, type Browser, type Locator, type Page } from 'playwright'
import { afterAll, beforeAll } from 'vitest'
import { CHROMIUM_ARGS } from '../chromium.js'
import { copyFixtureAgentDir, LocalLlm } from '../server/local-llm.js'
import { spawnServer } from '../support/spawn-server.js'

export { CHROMIUM_ARGS }

export interface Server {
  url: string
  stop(): Promise<void>
}

/**
 * `args` are extra command-line flags for the server, e.g. `['--agent-dir', dir, '--workspace', ws]`;
 * without an `--agent-dir` among them the server gets a fresh, empty one under its data dir.
 */
export async function startServer(options: { args?: string[] } = {}): Promise<Server> {
  const dataDir = mkdtempSync(join(tmpdir(), 'threadhost-e2e-'))
  const extra = options.args ?? []
  const agentDir = extra.includes('--agent-dir') ? [] : ['--agent-dir', join(dataDir, 'agent')]
  const server = spawnServer({ args: ['--port', '0', '--data-dir', dataDir, ...agentDir, ...extra] })
  const url = await server.url.catch((error: unknown) => {
    rmSync(dataDir, { recursive: true, force: true })
    throw error
  })
  return {
    url,
    async stop() {
      await server.stop(5000)
      // The server may still be flushing a session file as it exits: retry, and never fail a test on it.
      try {
        rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 })
      } catch (err) {
        console.warn(`[e2e] could not remove ${dataDir}: ${(err as Error).message}`)
      }
    },
  }
}

export async function launch(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH
  if (!executablePath) throw new Error('CHROMIUM_PATH is not set: apt-get install -y chromium')
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS, headless: true })
}

export async function api<T = unknown>(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T }
}

export async function newThread(base: string, title?: string): Promise<string> {
  const res = await api<{ threadId: string }>(base, 'POST', '/api/threads', title ? { title } : {})
  if (res.status !== 201) throw new Error(`POST /api/threads → ${res.status}`)
  return res.body.threadId
}

/** Open the thread in a page and wait until its follow is live. */
export async function openThread(page: Page, base: string, threadId: string): Promise<void> {
  await page.goto(`${base}/#/threads/${encodeURIComponent(threadId)}`)
  await page.getByRole('status', { name: 'Connection: Connected' }).waitFor({ timeout: 45_000 })
}

export async function send(page: Page, text: string): Promise<void> {
  const box = page.getByRole('textbox', { name: 'Message' })
  await box.fill(text)
  await box.press('Enter')
}

export const card = (page: Page, title: string): Locator => page.getByRole('dialog', { name: title })

export async function gone(locator: Locator, timeout = 15_000): Promise<void> {
  await locator.waitFor({ state: 'detached', timeout })
}

/**
 * docs/screenshots/ is tracked: it is rewritten only when asked (`npm run screenshots`, which sets
 * THREADHOST_SCREENSHOTS=1). Otherwise the screen is still rendered and captured, and checked to be
 * a picture, so `npm test` proves the screens render without touching the working tree.
 */
export const WRITE_SCREENSHOTS = process.env.THREADHOST_SCREENSHOTS === '1'

export async function screenshot(page: Page, name: string): Promise<void> {
  // Cards fade in; with motion reduced (as a person may ask for) a picture is never taken mid-fade.
  await page.emulateMedia({ reducedMotion: 'reduce' })
  if (!WRITE_SCREENSHOTS) {
    const png = await page.screenshot()
    if (png.length < 1000 || png.subarray(1, 4).toString('latin1') !== 'PNG') throw new Error(`the ${name} screen did not render`)
    return
  }
  const file = join('docs', 'screenshots', `${name}.png`)
  mkdirSync(dirname(file), { recursive: true })
  await page.screenshot({ path: file })
}

/** The open dialog ids as the page's pane holds them (reads through the shadow roots). */
export async function openDialogIds(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const pane = document.querySelector('app-shell')?.shadowRoot?.querySelector('thread-pane')
    const cards = pane?.shadowRoot?.querySelectorAll('dialog-card') ?? []
    return [...cards].map((c) => (c as unknown as { dialog: { id: string } }).dialog.id)
  })
}

/** A real server on a temp copy of the user's-pi fixture agent dir, whose model is a scripted provider on loopback, and a browser. */
export interface ProviderRig {
  llm: LocalLlm
  agentDir: string
  workspace: string
  server: Server
  browser: Browser
}

/**
 * The rig for a describe block, started once before its tests and removed after them. `prepare` gets
 * the agent dir and the workspace before the server starts (settings, AGENTS.md, more models).
 */
export function providerRig(prepare: (agentDir: string, workspace: string) => Promise<void> = async () => {}): ProviderRig {
  const rig = {} as ProviderRig
  beforeAll(async () => {
    rig.llm = new LocalLlm()
    await rig.llm.start()
    rig.agentDir = await copyFixtureAgentDir(rig.llm.url)
    rig.workspace = mkdtempSync(join(tmpdir(), 'threadhost-e2e-ws-'))
    await prepare(rig.agentDir, rig.workspace)
    rig.server = await startServer({ args: ['--agent-dir', rig.agentDir, '--workspace', rig.workspace] })
    rig.browser = await launch()
  })
  afterAll(async () => {
    await rig.browser?.close()
    await rig.server?.stop()
    await rig.llm?.close()
    if (rig.agentDir) rmSync(rig.agentDir, { recursive: true, force: true })
    if (rig.workspace) rmSync(rig.workspace, { recursive: true, force: true })
  })
  return rig
}
