/**
 * The main screens, light and dark, from a real server. `npm run screenshots` writes them into
 * docs/screenshots/; `npm test` only checks that they render and leaves the tracked files alone.
 */
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser } from 'playwright'
import { WRITE_SCREENSHOTS, card, launch, newThread, openThread, screenshot, send, startServer, type Server } from './harness.js'

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
  beforeAll(async () => {
    server = await startServer()
    browser = await launch()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

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
})
