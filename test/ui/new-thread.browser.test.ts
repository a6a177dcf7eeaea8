/** Choosing a thread's model and thinking level, and seeing where it works: the pane header in Chromium. */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { page, userEvent } from 'vitest/browser'
import '../../src/ui/app-shell.js'
import type { AppShell } from '../../src/ui/app-shell.js'
import { ApiError } from '../../src/ui/api.js'
import { followConfig } from '../../src/ui/follow-client.js'
import type { ModelList, ThreadSummary, UpdateThreadBody } from '../../src/schemas/index.js'
import { FakeEventSource, fakeApi, fakeEventSource, model, snapshotOf, summary, until } from './helpers.js'

followConfig.eventSource = fakeEventSource

const MODELS: ModelList = {
  models: [
    model('demo', { label: 'Demo (offline)' }),
    model('lab/deep', { label: 'Deep Lab', reasoning: true }),
    model('lab/fast', { label: 'Fast Lab' }),
  ],
  // Not the first in the list: the picker must follow the server, not the order.
  default: 'lab/fast',
}

/** A server of one: threads it created or changed are what it lists next. */
function server(overrides: Parameters<typeof fakeApi>[0] = {}) {
  let threads: ThreadSummary[] = []
  const api = fakeApi({
    listModels: vi.fn(async () => MODELS),
    listThreads: vi.fn(async () => threads),
    createThread: vi.fn(async () => {
      threads = [summary('fresh', { title: 'Fresh', model: MODELS.default, cwd: '/home/ada/code/shop', live: false })]
      return { threadId: 'fresh' }
    }),
    updateThread: vi.fn(async (id: string, body: UpdateThreadBody) => {
      threads = threads.map((t) => (t.threadId === id ? { ...t, ...body, updatedAt: Date.now() } : t))
      return threads.find((t) => t.threadId === id)!
    }),
    ...overrides,
  })
  return { api, seed: (t: ThreadSummary[]) => (threads = t) }
}

function mount(api: ReturnType<typeof fakeApi>) {
  const el = document.createElement('app-shell') as AppShell
  el.api = api
  document.body.append(el)
  return el
}

/** New thread, then its first message: that is what makes the thread (the empty state makes none). */
async function newThread(api: ReturnType<typeof fakeApi>) {
  mount(api)
  await page.getByRole('button', { name: 'New thread' }).click()
  await page.getByRole('textbox', { name: 'Message' }).fill('hello')
  await userEvent.keyboard('{Enter}')
  await until(() => location.hash === '#/threads/fresh')
}

const modelSelect = () => page.getByRole('combobox', { name: 'Model' })
const thinkingSelect = () => page.getByRole('combobox', { name: 'Thinking' })
const optionTexts = (select: ReturnType<typeof modelSelect>) =>
  [...(select.element() as HTMLSelectElement).options].map((o) => o.textContent?.trim())

beforeEach(async () => {
  await page.viewport(1280, 800)
  FakeEventSource.instances = []
})

afterEach(() => {
  document.body.innerHTML = ''
  location.hash = ''
})

describe('a thread’s model, thinking level and workspace', () => {
  test('New thread and a first message start a thread on the server’s default model; the Model picker lists every model by its label', async () => {
    const { api } = server()
    await newThread(api)
    expect(api.createThread).toHaveBeenCalledOnce()
    expect(api.createThread.mock.calls[0][0] ?? {}).not.toHaveProperty('model') // the server picks its default
    await expect.element(modelSelect()).toHaveValue('lab/fast')
    expect(optionTexts(modelSelect())).toEqual(['Demo (offline)', 'Deep Lab', 'Fast Lab'])
    await expect.element(modelSelect()).toHaveDisplayValue('Fast Lab')
    expect(api.listModels).toHaveBeenCalledOnce()
  })

  test('choosing another model changes the thread for its next run, and the header and the list show it', async () => {
    const { api } = server()
    await newThread(api)
    await expect.element(modelSelect()).toHaveValue('lab/fast')
    await modelSelect().selectOptions('Demo (offline)')
    await until(() => api.updateThread.mock.calls.length === 1)
    expect(api.updateThread).toHaveBeenCalledWith('fresh', { model: 'demo' })
    await expect.element(modelSelect()).toHaveDisplayValue('Demo (offline)')
    const link = page.getByRole('navigation', { name: 'Threads' }).getByRole('link', { name: /Fresh/ })
    await expect.element(link).toHaveTextContent(/· demo ·/)
    expect(page.getByRole('alert').elements()).toHaveLength(0)
  })

  test('a model change refused because a run is in flight says so and the picker goes back to the thread’s model', async () => {
    const { api } = server({
      updateThread: vi.fn(async () => {
        throw new ApiError(409, { error: 'a run is in progress; change the model or thinking level between runs', code: 'THREAD_BUSY', reason: 'busy' })
      }),
    })
    await newThread(api)
    await expect.element(modelSelect()).toHaveValue('lab/fast')
    await modelSelect().selectOptions('Deep Lab')
    await expect.element(page.getByRole('alert')).toHaveTextContent('Busy: change the model when the run ends.')
    await expect.element(modelSelect()).toHaveValue('lab/fast')
    await expect.element(modelSelect()).toBeEnabled()
  })

  test('a model the server cannot use is refused with the server’s own reason, and nothing changes', async () => {
    const { api } = server({
      updateThread: vi.fn(async () => {
        throw new ApiError(422, { error: 'no credentials for provider lab', code: 'SETTINGS_REFUSED' })
      }),
    })
    await newThread(api)
    await modelSelect().selectOptions('Deep Lab')
    await expect.element(page.getByRole('alert')).toHaveTextContent('Model not changed: no credentials for provider lab')
    await expect.element(modelSelect()).toHaveValue('lab/fast')
    await expect.element(thinkingSelect()).not.toBeInTheDocument() // still the non-reasoning model
  })

  test('Thinking is offered only for a reasoning model: default (unset) and off … xhigh, and a choice is saved on the thread', async () => {
    const { api } = server()
    await newThread(api)
    await expect.element(modelSelect()).toHaveValue('lab/fast')
    expect(thinkingSelect().elements()).toHaveLength(0)
    await modelSelect().selectOptions('Deep Lab')
    await expect.element(thinkingSelect()).toBeVisible()
    await expect.element(thinkingSelect()).toHaveDisplayValue('default')
    expect(optionTexts(thinkingSelect())).toEqual(['default', 'off', 'minimal', 'low', 'medium', 'high', 'xhigh'])
    await thinkingSelect().selectOptions('high')
    await until(() => api.updateThread.mock.calls.length === 2)
    expect(api.updateThread).toHaveBeenLastCalledWith('fresh', { thinkingLevel: 'high' })
    await expect.element(thinkingSelect()).toHaveValue('high')
    // Back on a model that does not reason, the control goes away.
    await modelSelect().selectOptions('Fast Lab')
    await expect.element(thinkingSelect()).not.toBeInTheDocument()
  })

  test('while a run is in flight the Model and Thinking selects cannot be changed; they can again once it ends', async () => {
    const { api, seed } = server()
    seed([summary('deep', { title: 'Deep work', model: 'lab/deep', thinkingLevel: 'low' })])
    location.hash = '#/threads/deep'
    mount(api)
    await expect.element(thinkingSelect()).toHaveValue('low')
    await until(() => FakeEventSource.instances.length > 0)
    const es = FakeEventSource.last()
    es.open()
    es.snapshot(snapshotOf('deep', { seq: 3, status: { live: true, busy: true, run: 1 } }))
    await expect.element(modelSelect()).toBeDisabled()
    await expect.element(thinkingSelect()).toBeDisabled()
    es.snapshot(snapshotOf('deep', { seq: 4, status: { live: true, busy: false, run: 1 } }))
    await expect.element(modelSelect()).toBeEnabled()
    await expect.element(thinkingSelect()).toBeEnabled()
  })

  test('the header names the thread’s workspace folder, with the full path on hover, and every select has a label', async () => {
    const { api } = server()
    await newThread(api)
    const pane = document.querySelector('app-shell')!.shadowRoot!.querySelector('thread-pane')!
    const settings = () => pane.shadowRoot!.querySelector('thread-settings')?.shadowRoot
    await until(() => !!settings()?.querySelector('.folder'))
    const folder = settings()!.querySelector('.folder') as HTMLElement
    expect(folder.textContent).toContain('shop')
    expect(folder.title).toBe('/home/ada/code/shop')
    await modelSelect().selectOptions('Deep Lab')
    await expect.element(thinkingSelect()).toBeVisible()
    const selects = [...settings()!.querySelectorAll('select')]
    expect(selects).toHaveLength(2)
    for (const select of selects) expect(select.labels?.[0]?.textContent?.trim()).toMatch(/^(Model|Thinking)$/)
  })

  test('without a model list (an older server, or it failed) the header still names the thread’s model', async () => {
    const { api, seed } = server({ listModels: vi.fn(async () => Promise.reject(new Error('offline'))) })
    seed([summary('plain', { title: 'Plain', model: 'lab/fast' })])
    location.hash = '#/threads/plain'
    mount(api)
    const settings = () => document.querySelector('app-shell')!.shadowRoot!.querySelector('thread-pane')?.shadowRoot?.querySelector('thread-settings')?.shadowRoot
    await until(() => !!settings()?.querySelector('.settings'))
    expect(settings()!.querySelector('.settings')!.textContent).toContain('lab/fast')
    expect(modelSelect().elements()).toHaveLength(0)
  })
})
