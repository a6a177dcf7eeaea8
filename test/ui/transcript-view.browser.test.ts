/** The transcript's tool entries in Chromium, fed the `ToolResult` the server sends (never pi's raw shape). */
import { afterEach, describe, expect, test } from 'vitest'
import { page } from 'vitest/browser'
import '../../src/ui/transcript-view.js'
import type { TranscriptView } from '../../src/ui/transcript-view.js'
import type { ToolResult, TranscriptEntry } from '../../src/schemas/index.js'

type ToolEntry = Extract<TranscriptEntry, { kind: 'tool' }>

const tool = (result: ToolResult, patch: Partial<ToolEntry> = {}): ToolEntry => ({
  kind: 'tool',
  toolCallId: 'c1',
  name: 'bash',
  args: { command: 'seq 2' },
  state: 'done',
  result,
  ...patch,
})

async function mount(entries: TranscriptEntry[]) {
  const el = document.createElement('transcript-view') as TranscriptView
  el.entries = entries
  // What a tool shows once its row is open (rows are collapsed to their summary line by default).
  el.toolsOpen = true
  document.body.append(el)
  await el.updateComplete
  return { el, root: el.shadowRoot! }
}

/** How many line boxes the browser laid a node's text out in. */
function renderedLines(node: Node): number {
  const range = document.createRange()
  range.selectNodeContents(node)
  return new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size
}

afterEach(() => {
  document.body.innerHTML = ''
})

describe('transcript tool output', () => {
  test('a multi-line tool result renders as separate lines of preformatted text, not as JSON with a literal \\n', async () => {
    const { root } = await mount([tool({ text: 'a\nb' })])
    const pre = root.querySelector('pre.output') as HTMLElement
    await expect.element(pre).toBeVisible()
    expect(pre.textContent).toBe('a\nb')
    expect(pre.innerText.split('\n')).toEqual(['a', 'b'])
    expect(renderedLines(pre)).toBe(2)
    // The bug this guards: the client fell back to JSON and showed `{"text": "a\\nb"}`.
    expect(root.querySelector('.tool-body')!.textContent).not.toContain('\\n')
    expect(root.querySelector('.tool-body')!.textContent).not.toContain('"text"')
  })

  test('a running tool shows its latest partial result as progress', async () => {
    const { root } = await mount([tool({ text: '' }, { state: 'running', result: undefined, partial: { text: 'step 1\nstep 2' } })])
    await expect.element(page.getByRole('heading', { name: 'Progress' })).toBeVisible()
    expect((root.querySelector('pre.output') as HTMLElement).innerText.split('\n')).toEqual(['step 1', 'step 2'])
  })

  test('what the host left out is said: the characters cut and each image by type', async () => {
    const { root } = await mount([tool({ text: 'head', truncated: 1234, images: [{ mimeType: 'image/png' }] })])
    await expect.element(page.getByText('… 1234 more characters not shown.')).toBeVisible()
    await expect.element(page.getByText('[image: image/png, not shown]')).toBeVisible()
    expect(root.querySelector('pre.output')!.textContent).toBe('head')
  })

  test('the final reply beside a tool entry is still Markdown, not preformatted text', async () => {
    const { root } = await mount([
      tool({ text: 'a\nb' }),
      { kind: 'assistant', messageId: 'm1', text: 'The output has **two** lines.\n\nDone.', streaming: false, stopReason: 'stop' },
    ])
    const reply = root.querySelector('[data-message="m1"]') as HTMLElement
    expect(reply.querySelector('strong')?.textContent).toBe('two')
    expect(reply.querySelectorAll('p')).toHaveLength(2)
    expect(reply.querySelector('pre')).toBeNull()
  })
})

describe("an extension's displayed message", () => {
  test('renders as a plain message block labelled with its customType, its text as written', async () => {
    const { root } = await mount([{ kind: 'custom', customType: 'status-update', text: 'disk full\n<b>not bold</b>' }])
    const block = root.querySelector('[data-custom="status-update"]') as HTMLElement
    await expect.element(block).toBeVisible()
    expect(block.querySelector('.label')!.textContent).toBe('status-update')
    expect(block.querySelector('b')).toBeNull()
    expect(block.innerText).toContain('disk full\n<b>not bold</b>')
  })
})

describe('thinking', () => {
  const reply = (patch: Partial<Extract<TranscriptEntry, { kind: 'assistant' }>>): TranscriptEntry => ({
    kind: 'assistant',
    messageId: 'a1',
    text: '',
    streaming: true,
    ...patch,
  })
  test('while the reply only thinks it says "Thinking…"; once it answers, "Thought for N s" over the reply, collapsed', async () => {
    const { el, root } = await mount([reply({})])
    // Before its first token the reply is a "Thinking…" state, not an empty bubble.
    expect(root.querySelector('.thinking')!.textContent).toBe('Thinking…')
    el.entries = [reply({ thinking: 'Hmm, let me see.' })]
    await el.updateComplete
    const summary = () => root.querySelector('details.thought summary')!.textContent!.trim()
    expect(summary()).toBe('Thinking…')
    expect(root.querySelector('.assistant')).toBeNull()
    el.entries = [reply({ thinking: 'Hmm, let me see.', text: 'Yes.', streaming: false, stopReason: 'stop', thinkingMs: 4200 })]
    await el.updateComplete
    expect(summary()).toBe('Thought for 4 s')
    expect((root.querySelector('details.thought') as HTMLDetailsElement).open).toBe(false)
    expect(root.querySelector('.assistant')!.textContent).toContain('Yes.')
  })
})
