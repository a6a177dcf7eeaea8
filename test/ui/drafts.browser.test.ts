/**
 * A draft belongs to its thread: switching threads shows each thread's own unsent text (Enter can
 * never send thread A's text to thread B), and it survives a reload (issue 20).
 */
import { afterEach, describe, expect, test } from 'vitest'
import { page, userEvent } from 'vitest/browser'
import '../../src/ui/thread-pane.js'
import { followConfig } from '../../src/ui/follow-client.js'
import { FakeEventSource, fakeApi, fakeEventSource, mountPane, snapshotOf, until } from './helpers.js'

followConfig.eventSource = fakeEventSource

const box = () => page.getByRole('textbox', { name: 'Message' })

async function follow(threadId: string): Promise<void> {
  await until(() => FakeEventSource.last()?.url.includes(`/${threadId}/`) ?? false)
  const es = FakeEventSource.last()
  es.open()
  es.snapshot(snapshotOf(threadId, { seq: 1, status: { live: true, busy: false, run: 0 } }))
  await expect.element(box()).toBeVisible()
}

afterEach(() => {
  document.body.replaceChildren()
  FakeEventSource.instances.length = 0
  localStorage.clear()
})

describe('drafts are kept per thread', () => {
  test('text typed in one thread stays with it when another thread is opened, and comes back with it', async () => {
    const { el } = mountPane(fakeApi(), 'a')
    await follow('a')
    await userEvent.type(box(), 'Fix the login bug')
    el.threadId = 'b'
    await follow('b')
    await expect.element(box()).toHaveValue('')
    await userEvent.type(box(), 'Other thought')
    el.threadId = 'a'
    await follow('a')
    await expect.element(box()).toHaveValue('Fix the login bug')
  })

  test('a draft survives a reload of the page, and sending it clears it', async () => {
    const api = fakeApi()
    const first = mountPane(api, 'a')
    await follow('a')
    await userEvent.type(box(), 'half a thought')
    first.el.remove()
    mountPane(api, 'a')
    await follow('a')
    await expect.element(box()).toHaveValue('half a thought')
    await userEvent.type(box(), '{Enter}')
    await until(() => api.prompt.mock.calls.length === 1)
    await expect.element(box()).toHaveValue('')
    expect(localStorage.getItem('threadhost:draft:a')).toBeNull()
  })
})
