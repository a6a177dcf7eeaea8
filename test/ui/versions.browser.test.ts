/**
 * Edit and Regenerate as versions of one conversation, in Chromium (the pane against a scripted
 * EventSource and an API of spies): Edit opens the prompt's editor in place and sends a new version;
 * the pager (‹ 2 / 2 ›) asks for another version; a `branch` frame replaces what the tab shows.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { page, userEvent } from 'vitest/browser'
import '../../src/ui/thread-pane.js'
import type { TranscriptEntry } from '../../src/schemas/index.js'
import { FakeEventSource, fakeApi, feed, mountPane, snapshotOf, until } from './helpers.js'

beforeEach(() => {
  FakeEventSource.instances = []
})
afterEach(() => {
  document.body.innerHTML = ''
})

/** The element that has focus, looked for through every open shadow root. */
function deepActive(): Element | null {
  let el: Element | null = document.activeElement
  while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement
  return el
}

const first: TranscriptEntry[] = [
  { kind: 'user', messageId: 'u1', text: 'plan the release', run: 1 },
  { kind: 'assistant', messageId: 'a1', text: 'You said: plan the release', streaming: false, stopReason: 'stop' },
  { kind: 'user', messageId: 'u2', text: 'and the notes', run: 2 },
  { kind: 'assistant', messageId: 'a2', text: 'You said: and the notes', streaming: false, stopReason: 'stop' },
]

async function following(entries: TranscriptEntry[]) {
  const api = fakeApi({
    editMessage: vi.fn(async (id: string) => ({ threadId: id, messageId: 'u3', run: 3, queued: false })),
    switchVersion: vi.fn(async () => undefined),
    forkThread: vi.fn(),
  })
  const { es } = mountPane(api)
  await until(() => FakeEventSource.instances.length === 1)
  es().open()
  es().snapshot(snapshotOf('t1', { seq: 10, status: { live: true, busy: false, run: 2 }, transcript: entries }))
  const log = page.getByRole('log')
  await expect.element(log.getByText('and the notes', { exact: true })).toBeVisible()
  return { api, es, log, n: feed(11) }
}

describe('versions of a prompt', () => {
  test('Edit opens the prompt in place, Enter sends it as a new version of it (no new thread), and Escape closes the editor untouched', async () => {
    const { api, log } = await following(first)
    await log.getByRole('button', { name: 'Edit this message' }).first().click()
    const editor = log.getByRole('textbox', { name: 'Edited message' })
    await expect.element(editor).toHaveValue('plan the release')
    await until(() => deepActive() === editor.element())
    await userEvent.keyboard('{Escape}')
    await expect.element(editor).not.toBeInTheDocument()
    expect(api.editMessage).not.toHaveBeenCalled()

    await log.getByRole('button', { name: 'Edit this message' }).first().click()
    await userEvent.fill(editor, 'plan the launch')
    await userEvent.keyboard('{Enter}')
    await until(() => api.editMessage.mock.calls.length === 1)
    expect(api.editMessage).toHaveBeenCalledWith('t1', 'u1', 'plan the launch')
    expect(api.forkThread).not.toHaveBeenCalled()
    await expect.element(editor).not.toBeInTheDocument()
  })

  test('Regenerate on a reply sends its prompt again in place', async () => {
    const { api, log } = await following(first)
    await log.getByRole('button', { name: 'Regenerate this reply' }).first().click()
    await until(() => api.editMessage.mock.calls.length === 1)
    expect(api.editMessage.mock.calls[0]).toEqual(['t1', 'a1', undefined])
  })

  test('a branch frame replaces the conversation every tab shows; the new version says 2 / 2 and ‹ asks for the first, › is off at the last', async () => {
    const { api, es, log, n } = await following(first)
    es().frame(n({ type: 'branch', transcript: [] }))
    await expect.element(log.getByText('and the notes', { exact: true })).not.toBeInTheDocument()
    es().frame(n({ type: 'status', live: true, busy: true, run: 3 }))
    es().frame(n({ type: 'user-message', messageId: 'u3', text: 'plan the launch', run: 3, versions: ['u1', 'u3'] }))
    es().frame(n({ type: 'settled', run: 3, aborted: false }))
    es().frame(n({ type: 'status', live: true, busy: false, run: 3 }))
    const versions = log.getByRole('group', { name: 'Versions of this message' })
    await expect.element(versions).toHaveTextContent('2 / 2')
    await expect.element(versions.getByRole('button', { name: 'Next version' })).toBeDisabled()
    await versions.getByRole('button', { name: 'Previous version' }).click()
    await until(() => api.switchVersion.mock.calls.length === 1)
    expect(api.switchVersion).toHaveBeenCalledWith('t1', 'u1')

    // The server moved: the first version's conversation, whole.
    es().frame(n({ type: 'branch', transcript: [{ ...first[0], versions: ['u1', 'u3'] } as TranscriptEntry, ...first.slice(1)] }))
    await expect.element(log.getByText('and the notes', { exact: true })).toBeVisible()
    await expect.element(versions).toHaveTextContent('1 / 2')
    await expect.element(versions.getByRole('button', { name: 'Previous version' })).toBeDisabled()
  })

  test('the versions cannot be changed during a run', async () => {
    const { es, log, n } = await following([{ ...first[0], versions: ['u1', 'u3'] } as TranscriptEntry, ...first.slice(1)])
    es().frame(n({ type: 'status', live: true, busy: true, run: 3 }))
    const versions = log.getByRole('group', { name: 'Versions of this message' })
    await expect.element(versions.getByRole('button', { name: 'Next version' })).toBeDisabled()
  })
})
