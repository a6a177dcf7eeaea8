/** GET /metrics: a run and a dialog move the counters that describe them. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'

let h: Harness
const tabs: SseClient[] = []
beforeEach(async () => {
  h = await startHarness({ demoDelayMs: 2 })
})
afterEach(async () => {
  for (const t of tabs.splice(0)) t.close()
  await h.close()
})

/** The scrape as `name{labels}` → value. */
async function scrape(): Promise<Map<string, number>> {
  const res = await fetch(`${h.url}/metrics`)
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/)
  const values = new Map<string, number>()
  for (const line of (await res.text()).split('\n')) {
    const match = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line)
    if (match) values.set(match[1], Number(match[2]))
  }
  return values
}
const delta = (before: Map<string, number>, after: Map<string, number>, key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0)

describe('metrics', () => {
  it('a run with a dialog moves runs, dialogs, prompts, followers, frames and HTTP counters', async () => {
    await api(h.url, 'POST', '/api/threads', { id: 'm1' })
    const before = await scrape()
    const tab = await SseClient.open(`${h.url}/api/threads/m1/follow`)
    tabs.push(tab)
    await tab.waitFor(is('snapshot'))
    expect((await scrape()).get('threadhost_followers')).toBe(1)

    await api(h.url, 'POST', '/api/threads/m1/prompt', { message: 'call ui_dialog {"method":"confirm","title":"Deploy?","message":"to prod"}' })
    const asked = await tab.waitFor(is('extension-ui-request'))
    expect((await api(h.url, 'POST', '/api/threads/m1/prompt', { message: 'not now', admission: 'reject' })).status).toBe(409)
    expect((await api(h.url, 'POST', '/api/threads/m1/prompt', { message: 'after that' })).status).toBe(202)
    expect((await api(h.url, 'POST', '/api/threads/m1/dialog', { id: asked.data.id, confirmed: true })).status).toBe(204)
    await tab.waitFor(is('settled', { run: 1 }))
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    // A second run, stopped.
    await api(h.url, 'POST', '/api/threads/m1/prompt', { message: 'slow 400' })
    await tab.waitFor(is('assistant-delta'))
    expect((await api(h.url, 'POST', '/api/threads/m1/abort')).status).toBe(200)
    await tab.waitFor(is('settled', { run: 2 }))

    const after = await scrape()
    const moved = (key: string) => delta(before, after, key)
    expect(moved('threadhost_runs_started_total')).toBe(2)
    expect(moved('threadhost_runs_settled_total')).toBe(2)
    expect(moved('threadhost_runs_aborted_total')).toBe(1)
    expect(moved('threadhost_run_duration_seconds_count{aborted="false"}')).toBe(1)
    expect(moved('threadhost_run_duration_seconds_count{aborted="true"}')).toBe(1)
    expect(moved('threadhost_dialogs_opened_total{method="confirm"}')).toBe(1)
    expect(moved('threadhost_dialogs_settled_total{outcome="answered"}')).toBe(1)
    expect(moved('threadhost_dialog_open_seconds_count{outcome="answered"}')).toBe(1)
    expect(moved('threadhost_prompts_total{kind="admitted"}')).toBe(2)
    expect(moved('threadhost_prompts_total{kind="queued"}')).toBe(1)
    expect(moved('threadhost_prompts_total{kind="busy"}')).toBe(1)
    expect(moved('threadhost_http_requests_total{method="POST",route="/api/threads/:id/dialog",status="204"}')).toBe(1)
    expect(moved('threadhost_http_requests_total{method="POST",route="/api/threads/:id/prompt",status="409"}')).toBe(1)
    // Every frame the tab saw after its snapshot was counted once for it, and its bytes with it.
    expect(moved('threadhost_follow_frames_out_total')).toBeGreaterThanOrEqual(tab.frames.filter((f) => f.event !== 'snapshot').length)
    expect(moved('threadhost_follow_bytes_out_total')).toBeGreaterThan(tab.frames.reduce((n, f) => n + f.raw.length, 0) - 1)
    expect(after.get('threadhost_threads{state="live"}')).toBe(1)

    // A retry answered from its Idempotency-Key admitted nothing new and is not counted again.
    const first = await api(h.url, 'POST', '/api/threads/m1/prompt', { message: 'once' }, { 'idempotency-key': 'metrics-once' })
    const again = await api(h.url, 'POST', '/api/threads/m1/prompt', { message: 'once' }, { 'idempotency-key': 'metrics-once' })
    expect(again.body).toEqual(first.body)
    const later = await scrape()
    expect(delta(after, later, 'threadhost_prompts_total{kind="admitted"}') + delta(after, later, 'threadhost_prompts_total{kind="queued"}')).toBe(1)

    tab.close()
    for (let i = 0; i < 50 && (await scrape()).get('threadhost_followers') !== 0; i++) await new Promise((r) => setTimeout(r, 20))
    expect((await scrape()).get('threadhost_followers')).toBe(0)
  })
})
