/**
 * A steer or follow-up carries the run its tab shows: queued into that run, never into another.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'

let h: Harness
beforeAll(async () => {
  h = await startHarness({ demoDelayMs: 2 })
})
afterAll(() => h.close())

describe('steer and follow-up carry the run', () => {
  it('a steer naming a run that is not the current one is 409 stale-run and queues nothing; naming the current run it is queued', async () => {
    await api(h.url, 'POST', '/api/threads', { id: 's1' })
    const tab = await SseClient.open(`${h.url}/api/threads/s1/follow`)
    try {
      // The question holds run 1 open until it is answered.
      expect((await api(h.url, 'POST', '/api/threads/s1/prompt', { message: 'call ui_dialog {"method":"confirm","title":"Go?"}' })).status).toBe(202)
      const asked = await tab.waitFor(is('extension-ui-request'))

      const stale = await api(h.url, 'POST', '/api/threads/s1/prompt', { message: 'meant for run 2', deliverAs: 'steer', run: 2 })
      expect(stale).toMatchObject({ status: 409, body: { reason: 'stale-run' } })
      expect(h.registry.store.journal('s1').prompts).toHaveLength(1)

      const current = await api(h.url, 'POST', '/api/threads/s1/prompt', { message: 'meant for run 1', deliverAs: 'followUp', run: 1 })
      expect(current).toMatchObject({ status: 202, body: { run: 1, queued: true } })
      await api(h.url, 'POST', '/api/threads/s1/dialog', { id: asked.data.id, confirmed: true })
      await tab.waitFor(is('status', { busy: false }))
      expect(tab.frames.filter(is('user-message')).map((f) => f.data.text)).not.toContain('meant for run 2')
    } finally {
      tab.close()
    }
  })
})
