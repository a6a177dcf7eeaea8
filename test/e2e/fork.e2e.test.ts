/**
 * Edit, regenerate, fork and readable titles, on the real server and the demo model: Edit and
 * Regenerate send a new version of a prompt in the same thread (‹ 2 / 2 ›); a fork opens as a new
 * thread named as a fork and linked to its parent, with the prompt in the composer; an untitled
 * thread is listed by its first prompt with its last message as a preview.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, Page } from 'playwright'
import { api, launch, newThread, openThread, send, startServer, type Server } from './harness.js'

describe('fork, edit and regenerate on the demo model', () => {
  let server: Server
  let browser: Browser
  let page: Page

  beforeAll(async () => {
    server = await startServer()
    browser = await launch()
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  })
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  const log = () => page.getByRole('log')
  const threadInHash = () => decodeURIComponent(new URL(page.url()).hash.replace('#/threads/', ''))

  async function twoReplies(title: string): Promise<string> {
    const threadId = await newThread(server.url, title)
    await openThread(page, server.url, threadId)
    await send(page, 'first thing')
    await log().getByText('You said: first thing').waitFor({ timeout: 20_000 })
    await send(page, 'second thing')
    await log().getByText('You said: second thing').waitFor({ timeout: 20_000 })
    return threadId
  }

  test('Fork on a prompt opens a new thread named as a fork, linked to its parent, with the prompt in the composer to edit', async () => {
    const parent = await twoReplies('Planning')
    const prompt = log().locator('.user', { hasText: 'second thing' })
    await prompt.waitFor()
    // From the keyboard: the prompt's Fork button, focused, and Enter.
    const fork = log().getByRole('button', { name: 'Fork a new thread from here' }).nth(1)
    await fork.focus()
    await page.keyboard.press('Enter')
    await page.waitForFunction((id) => !location.hash.endsWith(`/${id}`), parent)
    const forked = threadInHash()
    expect(forked).not.toBe(parent)
    const box = page.getByRole('textbox', { name: 'Message' })
    await expect.poll(() => box.inputValue()).toBe('second thing')
    expect(await box.evaluate((el) => el === (el.getRootNode() as ShadowRoot).activeElement)).toBe(true)
    // The fork holds the history before the prompt, and names its parent as a link.
    await log().getByText('You said: first thing').waitFor()
    expect(await log().getByText('You said: second thing').count()).toBe(0)
    await page.getByText('Forked from').waitFor()
    expect(await page.locator('thread-pane').getByRole('link', { name: 'Planning' }).getAttribute('href')).toBe(`#/threads/${parent}`)
    const named = await api<{ title: string }>(server.url, 'GET', `/api/threads/${forked}`)
    expect(named.body.title).toBe('Planning (fork)')
    // Edited and sent, it runs in the fork only.
    await box.fill('second thing, edited')
    await box.press('Enter')
    await log().getByText('You said: second thing, edited').waitFor({ timeout: 20_000 })
    const list = await api<{ threads: { threadId: string; preview?: string }[] }>(server.url, 'GET', '/api/threads')
    expect(list.body.threads.find((t) => t.threadId === parent)?.preview).toBe('You said: second thing')
  })

  test('Edit on a prompt sends a new version in the same thread; ‹ shows the first version again', async () => {
    const threadId = await twoReplies('Versions')
    await log().getByRole('button', { name: 'Edit this message' }).nth(1).click()
    const editor = log().getByRole('textbox', { name: 'Edited message' })
    await editor.fill('second thing, edited')
    await editor.press('Enter')
    await log().getByText('You said: second thing, edited').waitFor({ timeout: 20_000 })
    expect(await log().locator('.user').allTextContents()).toEqual(['first thing', 'second thing, edited'])
    const versions = log().getByRole('group', { name: 'Versions of this message' })
    await expect.poll(() => versions.textContent()).toContain('2 / 2')
    expect(threadInHash()).toBe(threadId)
    await versions.getByRole('button', { name: 'Previous version' }).click()
    await log().getByText('You said: second thing', { exact: true }).waitFor({ timeout: 20_000 })
    expect(await log().locator('.user').allTextContents()).toEqual(['first thing', 'second thing'])
    await expect.poll(() => versions.textContent()).toContain('1 / 2')
    const list = await api<{ threads: { threadId: string }[] }>(server.url, 'GET', '/api/threads')
    expect(list.body.threads.filter((t) => t.threadId === threadId)).toHaveLength(1)
  })

  test('Regenerate on a reply sends its prompt again in the same thread, as its second version', async () => {
    const threadId = await twoReplies('Regen')
    const before = (await api<{ threads: unknown[] }>(server.url, 'GET', '/api/threads')).body.threads.length
    await log().getByRole('button', { name: 'Regenerate this reply' }).nth(1).click()
    const versions = log().getByRole('group', { name: 'Versions of this message' })
    await expect.poll(() => versions.textContent(), { timeout: 20_000 }).toContain('2 / 2')
    await log().getByText('You said: second thing').waitFor({ timeout: 20_000 })
    expect(await log().locator('.user').allTextContents()).toEqual(['first thing', 'second thing'])
    expect(threadInHash()).toBe(threadId)
    expect((await api<{ threads: unknown[] }>(server.url, 'GET', '/api/threads')).body.threads).toHaveLength(before)
  })

  test('an untitled thread is listed by its first prompt, with its last message as the preview', async () => {
    const threadId = await newThread(server.url)
    await openThread(page, server.url, threadId)
    const item = page.getByRole('navigation', { name: 'Threads' }).locator(`a[data-thread="${threadId}"]`)
    expect((await item.locator('.title').textContent())?.trim()).toBe('New thread')
    await send(page, 'Draft the release notes for Friday\nwith the list of fixes')
    await log().getByText('You said: Draft the release notes').waitFor({ timeout: 20_000 })
    await expect.poll(async () => (await item.locator('.title').textContent())?.trim(), { timeout: 15_000 }).toBe(
      'Draft the release notes for Friday with the list of fixes',
    )
    await expect.poll(async () => (await item.locator('[data-preview]').textContent())?.trim(), { timeout: 15_000 }).toMatch(/^You said: Draft/)
    // A reload (a cold list, as after a restart) says the same.
    await page.reload()
    await item.locator('.title').filter({ hasText: 'Draft the release notes' }).waitFor({ timeout: 15_000 })
  })

  test('each reply says which model wrote it', async () => {
    const threadId = await newThread(server.url, 'Usage')
    await openThread(page, server.url, threadId)
    await send(page, 'how much')
    await log().getByText('You said: how much').waitFor({ timeout: 20_000 })
    await expect.poll(async () => (await log().locator('.meta .usage').first().textContent())?.trim()).toMatch(/^demo/)
  })
})
