/** The inspector page in Chromium: a thread with no machine running says so instead of laying out forever. */
import { afterEach, expect, test, vi } from 'vitest'
import { page } from 'vitest/browser'
import '../../src/ui/inspector/inspector-page.js'
import type { InspectorPage } from '../../src/ui/inspector/inspector-page.js'

afterEach(() => {
  document.body.innerHTML = ''
  location.hash = ''
})

test('Inspect on a thread that never ran says there is nothing to draw yet, not "Laying out…" forever', async () => {
  location.hash = '#/inspect?thread=cold1'
  const el = document.createElement('inspector-page') as InspectorPage
  const machine = vi.fn(async () => {
    throw new Error('no machine should be asked for')
  })
  el.api = { actors: vi.fn(async () => []), machine, eventsUrl: () => '/api/debug/events-not-here' }
  document.body.append(el)
  await expect.element(page.getByRole('status').filter({ hasText: 'Nothing to draw yet' })).toBeVisible()
  await expect.element(page.getByText(/thread:cold1 has no machine running/)).toBeVisible()
  expect(page.getByText('Laying out…').elements()).toHaveLength(0)
  expect(machine).not.toHaveBeenCalled()
})
