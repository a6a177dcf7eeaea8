/** The page: thread list (live/busy, open-question badge, New thread) and hash routing. */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { page } from 'vitest/browser'
import '../../src/ui/app-shell.js'
import type { AppShell } from '../../src/ui/app-shell.js'
import { threadIdFromHash } from '../../src/ui/app-shell.js'
import { followConfig } from '../../src/ui/follow-client.js'
import { FakeEventSource, confirmDialog, fakeApi, fakeEventSource, snapshotOf, summary, until } from './helpers.js'

followConfig.eventSource = fakeEventSource

function mount(api = fakeApi()) {
  const el = document.createElement('app-shell') as AppShell
  el.api = api
  document.body.append(el)
  return { el, api }
}

beforeEach(async () => {
  await page.viewport(1280, 800) // wide: the list and the pane side by side
})

afterEach(() => {
  document.body.innerHTML = ''
  location.hash = ''
})

describe('app shell', () => {
  test('routes by #/threads/<id>', () => {
    expect(threadIdFromHash('#/threads/abc')).toBe('abc')
    expect(threadIdFromHash('#/threads/a%20b')).toBe('a b')
    expect(threadIdFromHash('#/')).toBe('')
  })

  test('lists threads with state, model, workspace and a badge for open questions; selecting one opens its pane', async () => {
    const api = fakeApi({
      listThreads: vi.fn(async () => [
        summary('alpha', { title: 'Alpha', busy: true, openDialogs: 2, updatedAt: Date.now() }),
        summary('beta', { title: 'Beta', live: false, model: 'lab/deep', cwd: '/home/ada/code/shop' }),
      ]),
    })
    mount(api)
    const nav = page.getByRole('navigation', { name: 'Threads' })
    await expect.element(nav.getByRole('link', { name: /Alpha/ })).toBeVisible()
    await expect.element(nav.getByLabelText('2 open questions')).toBeVisible()
    await expect.element(nav.getByRole('link', { name: /Beta/ })).toHaveTextContent('idle')
    await expect.element(nav.getByRole('link', { name: /Beta/ })).toHaveTextContent(/lab\/deep · shop/)
    await nav.getByRole('link', { name: /Beta/ }).click()
    await until(() => location.hash === '#/threads/beta')
    await expect.element(page.getByRole('heading', { name: 'Beta' })).toBeVisible()
    await expect.element(page.getByRole('log')).toBeInTheDocument()
    await until(() => FakeEventSource.instances.some((es) => es.url === '/api/threads/beta/follow'))
  })

  test('a thread deleted in another tab closes its pane and says so', async () => {
    let threads = [summary('gone', { title: 'Doomed' }), summary('kept', { title: 'Kept' })]
    const api = fakeApi({ listThreads: vi.fn(async () => threads) })
    location.hash = '#/threads/gone'
    const { el } = mount(api)
    await expect.element(page.getByRole('heading', { name: 'Doomed' })).toBeVisible()
    threads = [threads[1]]
    await el.refresh()
    await until(() => location.hash === '#/')
    await expect.element(page.getByRole('status')).toHaveTextContent('“Doomed” was deleted in another tab.')
  })

  test('New thread opens the empty state; its first message creates the thread and navigates to it', async () => {
    const api = fakeApi({ createThread: vi.fn(async () => ({ threadId: 'fresh' })) })
    mount(api)
    await page.getByRole('button', { name: 'New thread' }).click()
    expect(api.createThread).not.toHaveBeenCalled()
    await page.getByRole('textbox', { name: 'Message' }).fill('first words')
    await page.getByRole('button', { name: 'Send' }).click()
    await until(() => location.hash === '#/threads/fresh')
    expect(api.createThread).toHaveBeenCalledOnce()
    await expect.element(page.getByRole('textbox', { name: 'Message' })).toBeVisible()
  })

  test('the followed thread is live in the list: its follow, not the poll, shows busy and open questions', async () => {
    location.hash = '#/threads/alpha'
    FakeEventSource.instances = []
    mount(fakeApi({ listThreads: vi.fn(async () => [summary('alpha', { title: 'Alpha', busy: false, openDialogs: 0 })]) }))
    const link = page.getByRole('navigation', { name: 'Threads' }).getByRole('link', { name: /Alpha/ })
    await expect.element(link).toHaveTextContent('active')
    await until(() => FakeEventSource.instances.length > 0)
    const es = FakeEventSource.last()
    es.open()
    es.snapshot(snapshotOf('alpha', { seq: 2, status: { live: true, busy: true, run: 1 }, openDialogs: [confirmDialog()] }))
    await expect.element(link).toHaveTextContent('working')
    await expect.element(link.getByLabelText('1 open question')).toBeVisible()
  })

  test("an extension that failed to load or in session_start, or clashes on a tool name, shows over the pane with pi's words until dismissed", async () => {
    const list = {
      loaded: [{ name: 'hello.ts', path: '/home/ada/.pi/agent/extensions/hello.ts', scope: 'user' as const, tools: ['hello'], commands: [], shortcuts: [] }],
      failed: [
        { path: '/home/ada/.pi/agent/extensions/broken.ts', scope: 'user' as const, error: "Cannot find module './no-such-module.js'" },
        { path: '/home/ada/.pi/agent/extensions/greeter.ts', scope: 'user' as const, error: 'no config file', event: 'session_start', threadId: 'alpha' },
      ],
      clashes: [{ path: '/home/ada/.pi/agent/extensions/zz.ts', scope: 'user' as const, message: 'Tool "hello" conflicts with hello.ts' }],
    }
    location.hash = '#/threads/alpha'
    mount(fakeApi({ listThreads: vi.fn(async () => [summary('alpha', { title: 'Alpha' })]), listExtensions: vi.fn(async () => list) }))
    const notice = page.getByRole('status').filter({ hasText: 'your pi extensions' })
    await expect.element(notice).toHaveTextContent('2 extension failures and 1 tool-name clash')
    await notice.getByText('your pi extensions').click()
    await expect.element(notice.getByText(/broken\.ts did not load: Cannot find module/)).toBeVisible()
    await expect.element(notice.getByText(/greeter\.ts failed on session_start: no config file/)).toBeVisible()
    await expect.element(notice.getByText(/zz\.ts Tool "hello" conflicts/)).toBeVisible()
    await expect.element(page.getByRole('heading', { name: 'Alpha' })).toBeVisible()
    await page.getByRole('button', { name: 'Dismiss the extension notice' }).click()
    await expect.element(notice).not.toBeInTheDocument()
  })
})
