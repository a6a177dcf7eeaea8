/** Under each message in Chromium: what a reply used, and the Edit / Regenerate / Fork actions. */
import { afterEach, describe, expect, test } from 'vitest'
import '../../src/ui/transcript-view.js'
import type { ForkRequestDetail, TranscriptView } from '../../src/ui/transcript-view.js'
import { usageLine } from '../../src/ui/reply-usage.js'
import type { ReplyUsage, TranscriptEntry } from '../../src/schemas/index.js'

const usage = (patch: Partial<ReplyUsage> = {}): ReplyUsage => ({ input: 1234, output: 340, cacheRead: 0, cacheWrite: 0, totalTokens: 1574, cost: 0.0031, ...patch })

const conversation: TranscriptEntry[] = [
  { kind: 'user', messageId: 'u1', text: 'plan it', run: 1 },
  { kind: 'assistant', messageId: 'a1', text: 'Here is the plan.', streaming: false, stopReason: 'stop', model: 'claude-x', provider: 'anthropic', usage: usage() },
  { kind: 'user', messageId: 'u2', text: 'and now?', run: 2 },
  { kind: 'assistant', messageId: 'a2', text: 'Still writ', streaming: true },
]

async function mount(entries: TranscriptEntry[], forkable = true) {
  const el = document.createElement('transcript-view') as TranscriptView
  el.entries = entries
  el.forkable = forkable
  document.body.append(el)
  await el.updateComplete
  return { el, root: el.shadowRoot! }
}

afterEach(() => {
  document.body.innerHTML = ''
})

describe('reply meta', () => {
  test('a reply shows its model, tokens in and out, and its cost only when it cost something', () => {
    expect(usageLine({ model: 'claude-x', usage: usage() })).toBe('claude-x · 1.2k in / 340 out · $0.0031')
    expect(usageLine({ model: 'demo', usage: usage({ input: 12, output: 4, cost: 0 }) })).toBe('demo · 12 in / 4 out')
    expect(usageLine({ model: 'demo', usage: usage({ input: 0, output: 0, cost: 0 }) })).toBe('demo')
    // Cached prompt tokens are read too: they count as "in".
    expect(usageLine({ model: 'c', usage: usage({ input: 100, cacheRead: 1000, cacheWrite: 200, output: 50, cost: 0 }) })).toBe('c · 1.3k in / 50 out')
    expect(usageLine({ model: 'big', usage: usage({ input: 25_000, output: 1_250_000, cost: 1.5 }) })).toBe('big · 25k in / 1.3M out · $1.50')
    expect(usageLine({})).toBe('')
  })

  test('the usage line is drawn under a finished reply, not under one still streaming', async () => {
    const { root } = await mount(conversation)
    expect([...root.querySelectorAll('.meta .usage')].map((n) => n.textContent)).toEqual(['claude-x · 1.2k in / 340 out · $0.0031'])
  })

  test("Regenerate on a finished reply and Fork on a prompt ask the pane; Edit opens the prompt's editor in place; none while the thread cannot fork", async () => {
    const { el, root } = await mount(conversation)
    const asked: ForkRequestDetail[] = []
    el.addEventListener('fork', (e) => asked.push((e as CustomEvent<ForkRequestDetail>).detail))
    const buttons = [...root.querySelectorAll<HTMLButtonElement>('button.fork-message')]
    expect(buttons.map((b) => b.textContent?.trim())).toEqual(['Edit', 'Fork', 'Regenerate', 'Edit', 'Fork'])
    for (const b of buttons.filter((b) => b.dataset.fork !== 'edit')) b.click()
    expect(asked).toEqual([
      { messageId: 'u1', mode: 'fork' },
      { messageId: 'a1', mode: 'regenerate' },
      { messageId: 'u2', mode: 'fork' },
    ])
    buttons[3].click()
    await el.updateComplete
    expect([...root.querySelectorAll('user-turn')].map((t) => t.hasAttribute('editing'))).toEqual([false, true])
    el.forkable = false
    await el.updateComplete
    expect(root.querySelectorAll('button.fork-message')).toHaveLength(0)
  })
})
