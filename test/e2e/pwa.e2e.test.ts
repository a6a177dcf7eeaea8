/**
 * The installable app in Chromium against the real server: the manifest and its icons, a service
 * worker that keeps the shell (the app opens with the server gone) and never answers or keeps an API
 * request, and the bell that subscribes this browser to pushes.
 *
 * Headless Chromium has no vendor push service to subscribe at, so the bell's test stands a
 * PushManager in for the browser's, whose subscription names a local push endpoint: what the server
 * then sends there is what the browser's push service would have carried.
 */
import { createECDH, randomBytes } from 'node:crypto'
import { createServer, type Server as HttpServer } from 'node:http'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright'
import { api, launch, startServer, type Server } from './harness.js'

describe('the installable app', () => {
  let server: Server
  let browser: Browser

  beforeAll(async () => {
    server = await startServer()
    browser = await launch()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  /**
   * A page whose service worker is active and, unless `controlled` is false, controls it; when it never
   * is, the failure says how far the worker got.
   */
  async function controlledPage(context: BrowserContext, { controlled = true } = {}): Promise<Page> {
    const page = await context.newPage()
    const seen: string[] = []
    page.on('console', (m) => seen.push(`console: ${m.text()}`))
    page.on('pageerror', (e) => seen.push(`error: ${e.message}`))
    await page.goto(`${server.url}/`)
    try {
      await page.waitForFunction(() => navigator.serviceWorker.getRegistration().then((r) => r?.active?.state === 'activated'), undefined, { timeout: 30_000, polling: 100 })
      if (!controlled) return page
      // The worker claims its pages when it activates, but a fresh Chromium sometimes leaves the page it was
      // registered from (and, rarely, the next load too) uncontrolled: a navigation under the active worker is.
      for (let load = 0; load < 3; load++) {
        if (load > 0 || !(await page.evaluate(() => navigator.serviceWorker.controller !== null))) await page.reload()
        const taken = await page
          .waitForFunction(() => navigator.serviceWorker.controller !== null, undefined, { timeout: 10_000, polling: 100 })
          .then(() => true, () => false)
        if (taken) return page
      }
      await page.waitForFunction(() => navigator.serviceWorker.controller !== null, undefined, { timeout: 100, polling: 100 })
    } catch (error) {
      const state = await page.evaluate(async () => {
        const r = await navigator.serviceWorker.getRegistration()
        return JSON.stringify({ readyState: document.readyState, registered: !!r, installing: r?.installing?.state, waiting: r?.waiting?.state, active: r?.active?.state, controlled: !!navigator.serviceWorker.controller })
      })
      throw new Error(`the service worker did not take the page: ${state}\n${seen.join('\n')}`, { cause: error })
    }
    return page
  }

  test('the manifest and icons load, the service worker registers, and Chromium finds the app installable', async () => {
    const context = await browser.newContext()
    // Installable needs the worker active, not this page under it (the next test proves it takes pages);
    // the first worker of a fresh browser sometimes leaves the page it was registered from uncontrolled.
    const page = await controlledPage(context, { controlled: false })
    const scriptURL = await page.evaluate(async () => (await navigator.serviceWorker.ready).active?.scriptURL)
    expect(scriptURL).toBe(`${server.url}/sw.js`)

    const href = await page.evaluate(() => document.querySelector<HTMLLinkElement>('link[rel=manifest]')?.href)
    const manifest = (await (await fetch(href!)).json()) as { name: string; display: string; start_url: string; icons: { src: string; sizes: string; type: string; purpose: string }[] }
    expect(manifest).toMatchObject({ name: 'threadhost', display: 'standalone', start_url: './' })
    for (const icon of manifest.icons) {
      const response = await fetch(new URL(icon.src, href))
      expect(response.status, icon.src).toBe(200)
      expect(response.headers.get('content-type'), icon.src).toContain(icon.type)
      if (icon.type === 'image/png') {
        const png = Buffer.from(await response.arrayBuffer())
        expect(`${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`, icon.src).toBe(icon.sizes)
      }
    }
    expect(manifest.icons.some((i) => i.purpose === 'maskable')).toBe(true)

    const cdp = await context.newCDPSession(page)
    const { errors } = (await cdp.send('Page.getAppManifest')) as { errors: { message: string }[] }
    expect(errors).toEqual([])
    const { installabilityErrors } = (await cdp.send('Page.getInstallabilityErrors')) as { installabilityErrors: { errorId: string }[] }
    // A playwright context is an incognito profile, where Chromium installs nothing; anything else would be ours.
    expect(installabilityErrors.filter((e) => e.errorId !== 'in-incognito')).toEqual([])
    await context.close()
  })

  test('the service worker keeps the shell, never an API answer: /api goes to the network, and the app opens with the server gone', async () => {
    const context = await browser.newContext()
    const page = await controlledPage(context)
    const answers = new Map<string, boolean>()
    page.on('response', (response) => answers.set(new URL(response.url()).pathname, response.fromServiceWorker()))
    await page.reload()
    await page.getByRole('button', { name: 'New thread' }).waitFor()
    await page.evaluate(async () => {
      await fetch('./api/threads')
      await fetch('./api/health')
      await fetch('./api/openapi.json')
    })
    expect(answers.get('/api/threads')).toBe(false)
    expect(answers.get('/api/health')).toBe(false)
    // The page and its scripts come from the worker.
    expect(answers.get('/')).toBe(true)
    expect([...answers].some(([path, fromWorker]) => path.startsWith('/assets/') && fromWorker)).toBe(true)

    const kept = await page.evaluate(async () => {
      const urls: string[] = []
      for (const name of await caches.keys()) for (const request of await (await caches.open(name)).keys()) urls.push(new URL(request.url).pathname)
      return urls
    })
    expect(kept).toContain('/')
    expect(kept.filter((path) => path.startsWith('/api') || path === '/metrics')).toEqual([])

    // Offline: the shell still opens from what the worker kept (the list then says it cannot reach the server).
    await context.setOffline(true)
    await page.reload()
    await page.getByRole('button', { name: 'New thread' }).waitFor()
    expect(await page.title()).toBe('threadhost')
    await context.close()
  })

  test('the bell subscribes this browser: the server keeps the subscription, and a run that ends is pushed to its endpoint', async () => {
    const pushes: Buffer[] = []
    let arrived: () => void = () => {}
    const pushed = new Promise<void>((resolve) => (arrived = resolve))
    const endpoint: HttpServer = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (c: Buffer) => chunks.push(c))
      request.on('end', () => {
        pushes.push(Buffer.concat(chunks))
        response.writeHead(201).end()
        arrived()
      })
    })
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve))
    const endpointUrl = `http://127.0.0.1:${(endpoint.address() as { port: number }).port}/push/this-browser`
    const ecdh = createECDH('prime256v1')
    ecdh.generateKeys()
    const keys = { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') }

    const context = await browser.newContext()
    await context.grantPermissions(['notifications'], { origin: server.url })
    // The browser's push manager, standing in: it subscribes at the local endpoint with the key it is given.
    await context.addInitScript(
      ({ endpointUrl, keys }) => {
        let current: PushSubscription | null = null
        PushManager.prototype.getSubscription = async () => current
        PushManager.prototype.subscribe = async (options?: PushSubscriptionOptionsInit) => {
          current = {
            endpoint: endpointUrl,
            expirationTime: null,
            options: { applicationServerKey: (options?.applicationServerKey as Uint8Array).buffer, userVisibleOnly: true },
            toJSON: () => ({ endpoint: endpointUrl, expirationTime: null, keys }),
            unsubscribe: async () => ((current = null), true),
            getKey: () => null,
          } as unknown as PushSubscription
          return current
        }
      },
      { endpointUrl, keys },
    )
    try {
      const page = await controlledPage(context)
      const bell = page.getByRole('button', { name: 'Notifications' })
      expect(await bell.getAttribute('aria-pressed')).toBe('false')
      await bell.click()
      await page.waitForFunction(() =>
        document.querySelector('app-shell')?.shadowRoot?.querySelector('thread-list')?.shadowRoot?.querySelector('push-toggle')?.shadowRoot?.querySelector('button[aria-pressed=true]:not([disabled])'),
      )

      const { body } = await api<{ threadId: string }>(server.url, 'POST', '/api/threads', { title: 'Pushed' })
      await api(server.url, 'POST', `/api/threads/${body.threadId}/prompt`, { message: 'hi' })
      await pushed
      expect(pushes).toHaveLength(1)
      // aes128gcm: a 16-byte salt, the record size, then the server's 65-byte ephemeral key.
      expect(pushes[0][20]).toBe(65)

      // Off again: the server forgets this browser.
      await bell.click()
      await page.waitForFunction(() =>
        document.querySelector('app-shell')?.shadowRoot?.querySelector('thread-list')?.shadowRoot?.querySelector('push-toggle')?.shadowRoot?.querySelector('button[aria-pressed=false]:not([disabled])'),
      )
    } finally {
      await context.close()
      await new Promise((resolve) => endpoint.close(resolve))
    }
  })
})
