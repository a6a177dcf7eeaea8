/**
 * The daily-use parts of the web client against the real server on the demo model: the empty
 * thread's examples, tool calls drawn as pi draws them (a write's content, a read's file excerpt,
 * bash as a command with terminal output), and `/` commands listed by the server.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, Page } from 'playwright'
import { launch, newThread, openThread, send, startServer, type Server } from './harness.js'

describe('daily use on the demo model', () => {
  let server: Server
  let browser: Browser
  let page: Page
  let workspace: string

  beforeAll(async () => {
    workspace = mkdtempSync(join(tmpdir(), 'threadhost-ws-'))
    server = await startServer({ args: ['--workspace', workspace] })
    browser = await launch()
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  })
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    rmSync(workspace, { recursive: true, force: true })
  })

  const log = () => page.getByRole('log')

  test('an example fills the composer; the write it makes shows the path and content, and a read shows the file excerpt', async () => {
    const threadId = await newThread(server.url)
    await openThread(page, server.url, threadId)
    await page.getByRole('list', { name: 'Try the demo model' }).getByRole('button', { name: 'Write a file' }).click()
    const box = page.getByRole('textbox', { name: 'Message' })
    expect(await box.inputValue()).toBe('call write {"path":"a.md","content":"hi"}')
    // Tool rows are collapsed to one line until tool output is opened: Ctrl+O, as in pi.
    await box.press('Control+o')
    await box.press('Enter')
    const ask = page.getByRole('dialog', { name: /Allow write to a\.md/ })
    await ask.getByRole('button', { name: 'Allow once' }).click()
    const write = log().locator('details.tool.write')
    await write.locator('pre.content').filter({ hasText: 'hi' }).waitFor({ timeout: 20_000 })
    expect(await write.locator('summary code.path').textContent()).toBe('a.md')
    await write.getByText('done', { exact: true }).waitFor()

    await send(page, 'call read {"path":"a.md"}')
    const read = log().locator('details.tool.read')
    await read.locator('pre.output.file').filter({ hasText: 'hi' }).waitFor({ timeout: 20_000 })
    expect(await read.locator('summary code.path').textContent()).toBe('a.md')
    // The pane's header names the thread by its first prompt while it has no title of its own.
    await page.getByText('call write {"path":"a.md","content":"hi"}', { exact: true }).first().waitFor()
  })

  test('bash: the command as code, its output as terminal text', async () => {
    const threadId = await newThread(server.url, 'Shell')
    await openThread(page, server.url, threadId)
    await send(page, 'call bash {"command":"printf \'one\\\\ntwo\\\\n\'"}')
    await page.getByRole('dialog', { name: /Allow bash to run this command/ }).getByRole('button', { name: 'Allow once' }).click()
    const bash = log().locator('details.tool.bash')
    // Tool rows are collapsed to one line until tool output is opened (the page may have it open from the test before).
    const toggle = page.getByRole('button', { name: 'Show tool output' })
    if ((await toggle.getAttribute('aria-pressed')) !== 'true') await toggle.click()
    await bash.locator('pre.terminal').filter({ hasText: 'two' }).waitFor({ timeout: 20_000 })
    expect(await bash.locator('summary code.command').textContent()).toBe("$ printf 'one\\ntwo\\n'")
    expect((await bash.locator('pre.terminal').textContent())?.trim()).toBe('one\ntwo')
  })

  test('typing / lists the thread’s commands from the server; /name completes, and sending it renames the thread', async () => {
    const threadId = await newThread(server.url)
    await openThread(page, server.url, threadId)
    const box = page.getByRole('textbox', { name: 'Message' })
    await box.click()
    await box.pressSequentially('/na')
    await page.getByRole('listbox', { name: 'Commands' }).getByRole('option', { name: /^\/name/ }).waitFor({ timeout: 20_000 })
    await box.press('Enter')
    expect(await box.inputValue()).toBe('/name ')
    await box.pressSequentially('Release notes')
    await box.press('Enter')
    await page.getByRole('heading', { name: 'Release notes' }).waitFor({ timeout: 15_000 })
  })
})
