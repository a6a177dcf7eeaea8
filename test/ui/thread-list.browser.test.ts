/**
 * The list, the empty state of New thread, navigation and search, in Chromium (issue 20): a thread
 * is made by its first message, typed keys are never lost to a slow create, every workspace root is
 * offered, the list is grouped by date and one Tab stop, the search finds what was said, and unknown
 * thread URLs and refusals are said in words a person can act on.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { page, userEvent } from 'vitest/browser'
import '../../src/ui/app-shell.js'
import type { AppShell } from '../../src/ui/app-shell.js'
import { ApiError } from '../../src/ui/api.js'
import { followConfig } from '../../src/ui/follow-client.js'
import { dateGroup } from '../../src/ui/thread-list.js'
import type { ModelList, ThreadSummary } from '../../src/schemas/index.js'
import { FakeEventSource, fakeApi, fakeEventSource, model, mountPane, snapshotOf, summary, until } from './helpers.js'
import '../../src/ui/thread-pane.js'

followConfig.eventSource = fakeEventSource

function deepActive(): Element | null {
  let el: Element | null = document.activeElement
  while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement
  return el
}
const hasFocus = (loc: { element(): Element }) => () => deepActive() === loc.element()
const nav = () => page.getByRole('navigation', { name: 'Threads' })
const box = () => page.getByRole('textbox', { name: 'Message' })
const focusIsMessageBox = () => deepActive()?.getAttribute('aria-label') === 'Message'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function mount(api: ReturnType<typeof fakeApi>) {
  const el = document.createElement('app-shell') as AppShell
  el.api = api
  document.body.append(el)
  return el
}

/** A server of one: what it created is what it lists next; `createMs` is how long a create takes. */
function server(createMs = 0, overrides: Parameters<typeof fakeApi>[0] = {}) {
  let threads: ThreadSummary[] = []
  let n = 0
  const api = fakeApi({
    listThreads: vi.fn(async () => threads),
    createThread: vi.fn(async () => {
      await sleep(createMs)
      const threadId = `made-${++n}`
      threads = [summary(threadId, { title: 'New thread' }), ...threads]
      return { threadId }
    }),
    ...overrides,
  })
  return { api, threads: () => threads }
}

beforeEach(async () => {
  await page.viewport(1280, 800)
  FakeEventSource.instances = []
})

afterEach(() => {
  document.body.innerHTML = ''
  location.hash = ''
})

describe('New thread: a thread exists when its first message is sent', () => {
  test('New thread opens an empty state and makes nothing, however often it is clicked; the first message makes one thread and opens it', async () => {
    const { api } = server()
    mount(api)
    const button = page.getByRole('button', { name: 'New thread' })
    await button.click()
    await button.click()
    await button.click()
    await expect.element(page.getByRole('heading', { level: 1, name: 'New thread' })).toBeVisible()
    expect(location.hash).toBe('#/new')
    await until(focusIsMessageBox)
    expect(api.createThread).not.toHaveBeenCalled()

    await userEvent.keyboard('Plan the sprint{Enter}')
    await until(() => location.hash === '#/threads/made-1')
    expect(api.createThread).toHaveBeenCalledOnce()
    expect(api.prompt).toHaveBeenCalledExactlyOnceWith('made-1', 'Plan the sprint')
    await until(() => FakeEventSource.instances.length > 0)
    expect(FakeEventSource.last().url).toContain('/api/threads/made-1/follow')
  })

  test('keys typed right after New thread, and while a 250 ms create is on its way, are never lost', async () => {
    const { api } = server(250)
    mount(api)
    await page.getByRole('button', { name: 'New thread' }).click()
    // No waiting for anything: the keys follow the click as a fast typist's would.
    await userEvent.keyboard('Fix the login bug{Enter}')
    await userEvent.keyboard('and the logout one')
    await until(() => location.hash === '#/threads/made-1')
    expect(api.prompt).toHaveBeenCalledExactlyOnceWith('made-1', 'Fix the login bug')
    // What was typed while the thread was being made is in the new thread's composer.
    await expect.element(box()).toHaveValue('and the logout one')
    await until(focusIsMessageBox)
    expect(api.createThread).toHaveBeenCalledOnce()
  })

  test('every workspace root and every model can be chosen first; the thread is made there, with that model', async () => {
    const models: ModelList = { models: [model('demo', { label: 'Demo' }), model('lab/deep', { label: 'Deep Lab' })], default: 'demo' }
    const { api } = server(0, {
      listModels: vi.fn(async () => models),
      listWorkspaces: vi.fn(async () => ({ roots: ['/home/ada/app', '/home/ada/lib'], default: '/home/ada/app' })),
    })
    location.hash = '#/new'
    mount(api)
    const workspace = page.getByRole('combobox', { name: 'Workspace' })
    await expect.element(workspace).toHaveValue('/home/ada/app')
    await workspace.selectOptions('/home/ada/lib')
    await page.getByRole('combobox', { name: 'Model' }).selectOptions('Deep Lab')
    await box().fill('hello')
    await userEvent.keyboard('{Enter}')
    await until(() => api.createThread.mock.calls.length === 1)
    expect(api.createThread).toHaveBeenCalledWith({ cwd: '/home/ada/lib', model: 'lab/deep' })
  })

  test('on a phone the empty state is the whole screen, with a way back to the list', async () => {
    await page.viewport(390, 844)
    location.hash = '#/new'
    mount(fakeApi({ listThreads: vi.fn(async () => [summary('a', { title: 'Alpha' })]) }))
    await expect.element(page.getByRole('heading', { level: 1, name: 'New thread' })).toBeVisible()
    const list = document.querySelector('app-shell')!.shadowRoot!.querySelector('thread-list')!
    expect(getComputedStyle(list).display).toBe('none')
    await page.getByRole('link', { name: '‹ All threads' }).click()
    await until(() => location.hash === '#/')
    await expect.element(nav().getByRole('link', { name: /Alpha/ })).toBeVisible()
    expect(page.getByRole('main').elements()).toHaveLength(1)
  })

  test('a first message the server refuses leaves no thread behind, gives the text back and says why in words', async () => {
    const { api } = server(0, {
      prompt: vi.fn(async () => {
        throw new ApiError(409, { error: 'thread made-1 is unavailable: its session file is damaged (x)', code: 'THREAD_UNAVAILABLE', reason: 'unavailable' })
      }),
    })
    location.hash = '#/new'
    mount(api)
    await box().fill('will not go')
    await userEvent.keyboard('{Enter}')
    await until(() => api.deleteThread.mock.calls.length === 1)
    expect(api.deleteThread).toHaveBeenCalledWith('made-1')
    await expect.element(box()).toHaveValue('will not go')
    expect(location.hash).toBe('#/new')
    await expect.element(page.getByRole('alert')).toHaveTextContent('This thread is unavailable: its session file is damaged.')
  })
})

describe('the thread list', () => {
  const DAY = 86_400_000
  const now = Date.now()
  const at = (daysAgo: number) => {
    const d = new Date(now)
    d.setHours(12, 0, 0, 0)
    return d.getTime() - daysAgo * DAY
  }

  test('groups the threads by date: Today, Yesterday, Previous 7 days, Previous 30 days, Older', async () => {
    expect(dateGroup(at(0), at(0) + 1000)).toBe('Today')
    mount(
      fakeApi({
        listThreads: vi.fn(async () => [
          summary('a', { title: 'Fresh', updatedAt: now - 1000 }),
          summary('b', { title: 'Last night', updatedAt: at(1) }),
          summary('c', { title: 'Monday', updatedAt: at(4) }),
          summary('d', { title: 'Last month', updatedAt: at(20) }),
          summary('e', { title: 'Ancient', updatedAt: at(90) }),
        ]),
      }),
    )
    await expect.element(nav().getByRole('link', { name: /Ancient/ })).toBeVisible()
    const headings = nav().getByRole('heading', { level: 2 }).elements().map((h) => h.textContent?.trim())
    expect(headings).toEqual(['Today', 'Yesterday', 'Previous 7 days', 'Previous 30 days', 'Older'])
    await expect.element(nav().getByRole('region', { name: 'Yesterday' }).getByRole('link', { name: /Last night/ })).toBeVisible()
    await expect.element(nav().getByRole('region', { name: 'Older' }).getByRole('link', { name: /Ancient/ })).toBeVisible()
  })

  test('the threads are one Tab stop: the arrow keys move between them, F2 renames, and Tab leaves the list', async () => {
    mount(fakeApi({ listThreads: vi.fn(async () => ['One', 'Two', 'Three'].map((t, i) => summary(t.toLowerCase(), { title: t, updatedAt: now - i * 1000 }))) }))
    const link = (name: string) => nav().getByRole('link', { name: new RegExp(name) })
    await expect.element(link('Three')).toBeVisible()
    const tabbable = nav().element().querySelectorAll('[tabindex="0"], a:not([tabindex]), button:not([tabindex="-1"])')
    expect([...tabbable].map((e) => e.textContent?.trim().split(/\s+/)[0])).toEqual(['Open', 'One'])
    ;(link('One').element() as HTMLElement).focus()
    await userEvent.keyboard('{ArrowDown}')
    await until(hasFocus(link('Two')))
    await userEvent.keyboard('{End}')
    await until(hasFocus(link('Three')))
    await userEvent.keyboard('{ArrowUp}')
    await until(hasFocus(link('Two')))
    // The stop moved with the focus: Tab leaves the list and Shift+Tab comes back to Two.
    await userEvent.keyboard('{Tab}')
    await until(() => !nav().element().contains(deepActive()) && deepActive() !== null)
    await userEvent.keyboard('{Shift>}{Tab}{/Shift}')
    await until(hasFocus(link('Two')))
    await userEvent.keyboard('{F2}')
    const input = page.getByRole('textbox', { name: 'New title for “Two”' })
    await until(hasFocus(input))
  })

  test('the first Tab stop skips past the list to the conversation', async () => {
    location.hash = '#/threads/one'
    mount(fakeApi({ listThreads: vi.fn(async () => [summary('one', { title: 'One' })]) }))
    await expect.element(page.getByRole('heading', { name: 'One' })).toBeVisible()
    ;(document.activeElement as HTMLElement | null)?.blur()
    const skip = page.getByRole('link', { name: 'Skip to the conversation' })
    ;(skip.element() as HTMLElement).focus()
    await userEvent.keyboard('{Enter}')
    await until(() => deepActive()?.localName === 'main')
    expect(location.hash).toBe('#/threads/one')
  })

  test('the search finds threads by what was said in them, with the matching words shown', async () => {
    const api = fakeApi({
      listThreads: vi.fn(async () => [summary('a', { title: 'Deploy pipeline' }), summary('b', { title: 'Untitled musings' })]),
      searchThreads: vi.fn(async (q: string) =>
        q === 'zebra'
          ? [{ threadId: 'b', title: 'Untitled musings', messageId: 'm1', kind: 'user' as const, snippet: 'the zebra crossing', matches: [[4, 9]] as Array<[number, number]> }]
          : [],
      ),
    })
    mount(api)
    await expect.element(nav().getByRole('link', { name: /Deploy pipeline/ })).toBeVisible()
    await page.getByRole('searchbox', { name: 'Search threads' }).fill('zebra')
    const found = nav().getByRole('link', { name: /Untitled musings/ })
    await expect.element(found).toHaveTextContent(/You: the zebra crossing/)
    expect(found.element().querySelector('mark')?.textContent).toBe('zebra')
    expect(nav().getByRole('link', { name: /Deploy pipeline/ }).elements()).toHaveLength(0)
    expect(api.searchThreads).toHaveBeenCalledWith('zebra')
  })
})

describe('navigation and what goes wrong', () => {
  test('an unknown thread URL shows a clear not-found view with a way back', async () => {
    location.hash = '#/threads/nosuch'
    mount(
      fakeApi({
        listThreads: vi.fn(async () => [summary('real', { title: 'Real' })]),
        getThread: vi.fn(async (id: string) => {
          throw new ApiError(404, { error: `no thread ${id}`, code: 'THREAD_NOT_FOUND' })
        }),
      }),
    )
    await expect.element(page.getByRole('heading', { level: 1, name: 'No such thread' })).toBeVisible()
    await expect.element(page.getByText('There is no thread “nosuch” here')).toBeVisible()
    expect(page.getByRole('textbox', { name: 'Message' }).elements()).toHaveLength(0)
    await page.getByRole('link', { name: 'Back to all threads' }).click()
    await until(() => location.hash === '#/')
    await expect.element(page.getByRole('heading', { level: 1, name: 'Welcome to threadhost' })).toBeVisible()
  })

  test('the header’s Rename puts the focus in the title field, the title selected', async () => {
    location.hash = '#/threads/one'
    mount(fakeApi({ listThreads: vi.fn(async () => [summary('one', { title: 'One' })]) }))
    await until(() => FakeEventSource.instances.length > 0)
    FakeEventSource.last().open()
    FakeEventSource.last().snapshot(snapshotOf('one', { seq: 1 }))
    await page.getByRole('button', { name: 'Rename', exact: true }).click()
    const input = page.getByRole('textbox', { name: 'Thread title' })
    await until(hasFocus(input))
    const el = input.element() as HTMLInputElement
    expect([el.selectionStart, el.selectionEnd]).toEqual([0, 'One'.length])
  })

  test('a model change refused because the session file is damaged says unavailable, not busy', async () => {
    location.hash = '#/threads/one'
    mount(
      fakeApi({
        listThreads: vi.fn(async () => [summary('one', { title: 'One' })]),
        listModels: vi.fn(async () => ({ models: [model('demo'), model('lab/deep', { label: 'Deep Lab' })], default: 'demo' })),
        updateThread: vi.fn(async () => {
          throw new ApiError(409, { error: 'thread one is unavailable: its session file is damaged (x)', code: 'THREAD_UNAVAILABLE', reason: 'unavailable' })
        }),
      }),
    )
    await page.getByRole('combobox', { name: 'Model' }).selectOptions('Deep Lab')
    const alert = page.getByRole('alert')
    await expect.element(alert).toHaveTextContent(/Unavailable: the model cannot change while this thread's session file is damaged/)
    expect(alert.element().textContent).not.toMatch(/Busy/)
  })

  test('a refusal is said in words a person can act on, not the server’s developer text', async () => {
    mount(
      fakeApi({
        listThreads: vi.fn(async () => [summary('a', { title: 'Gone soon' })]),
        renameThread: vi.fn(async () => {
          throw new ApiError(404, { error: 'no thread a', code: 'THREAD_NOT_FOUND' })
        }),
      }),
    )
    const edit = page.getByRole('button', { name: 'Edit title of “Gone soon”' })
    await expect.element(edit).toBeInTheDocument()
    ;(edit.element() as HTMLElement).click()
    await page.getByRole('textbox', { name: 'New title for “Gone soon”' }).fill('New name')
    await userEvent.keyboard('{Enter}')
    const alert = page.getByRole('alert')
    await expect.element(alert).toHaveTextContent('Could not rename: This thread no longer exists (it may have been deleted in another tab).')
    expect(alert.element().textContent).not.toContain('no thread a')
  })

  test('threadhost’s own commands say what they did: /name, /model and /compact start no run, yet are not silent', async () => {
    const api = fakeApi({
      prompt: vi.fn(async (id: string, text: string) => {
        const [command, ...rest] = text.slice(1).split(' ')
        const thread = summary(id, command === 'name' ? { title: rest.join(' ') } : command === 'model' ? { model: rest[0] } : {})
        return { threadId: id, command, thread }
      }),
    })
    const { es } = mountPane(api)
    await until(() => FakeEventSource.instances.length === 1)
    es().open()
    es().snapshot(snapshotOf('t1', { seq: 1 }))
    const send = async (text: string) => {
      await box().fill(text)
      await userEvent.keyboard('{Enter}')
    }
    await send('/name Release plan')
    await expect.element(page.getByRole('status').filter({ hasText: 'Renamed — this thread is now “Release plan”' })).toBeVisible()
    await send('/model lab/deep')
    await expect.element(page.getByRole('status').filter({ hasText: 'Model changed — lab/deep answers from the next message on' })).toBeVisible()
    await send('/compact')
    await expect.element(page.getByRole('status').filter({ hasText: 'Compacted' })).toBeVisible()
  })
})
