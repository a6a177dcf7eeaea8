/** The conversation, as the projection folds it, plus this tab's optimistic bubbles. role=log. */
import { LitElement, html, nothing, type TemplateResult } from 'lit'
import { customElement, property, state } from 'lit/decorators.js'
import { repeat } from 'lit/directives/repeat.js'
import { unsafeHTML } from 'lit/directives/unsafe-html.js'
import type { PromptImage, TranscriptEntry, WorkingState } from '../schemas/index.js'
import { dataUrl } from './prompt-images.js'
import { onHighlighterReady } from './highlight.js'
import { renderMarkdown } from './markdown.js'
import type { PendingPrompt } from './thread-store.js'
import { renderTool } from './tool-view.js'
import { usageLine } from './reply-usage.js'
import { transcriptViewStyles } from './transcript-view.styles.js'
import './message-versions.js'

/**
 * Edit opens the prompt's editor and sends a new version of it in place; Regenerate sends a reply's
 * prompt again in place (both versions of one conversation: message-versions.ts); Fork makes a new
 * thread holding the history before the prompt, its text in the composer.
 */
export type ForkMode = 'edit' | 'regenerate' | 'fork'
export interface ForkRequestDetail {
  messageId: string
  mode: ForkMode
}

const cache = new Map<string, string>()
function markdown(text: string): string {
  let out = cache.get(text)
  if (out === undefined) {
    out = renderMarkdown(text, { copyButtons: true })
    if (cache.size > 300) cache.delete(cache.keys().next().value as string)
    cache.set(text, out)
  }
  return out
}
// Code shown before the highlighter loaded is rendered again, coloured.
onHighlighterReady(() => cache.clear())

/** What the demo model answers (README, "The demo model"): a newcomer's first prompts, one click each. */
export const DEMO_EXAMPLES: { label: string; text: string }[] = [
  { label: 'Echo a message', text: 'Hello, threadhost!' },
  { label: 'Stream a long reply', text: 'slow 40' },
  { label: 'Ask me to confirm', text: 'call ui_dialog {"method":"confirm","title":"Deploy?","message":"to prod"}' },
  {
    label: 'Ask me a question',
    text: 'call ask_user_question {"question":"Which database?","mode":"single","options":[{"label":"Postgres"},{"label":"SQLite"}]}',
  },
  { label: 'Run a shell command', text: 'call bash {"command":"ls"}' },
  { label: 'Write a file', text: 'call write {"path":"a.md","content":"hi"}' },
  { label: 'Read a file', text: 'call read {"path":"a.md"}' },
]

/** A clock time for a message, with the full date and time on hover; nothing when the time is unknown. */
function timeOf(at: number | undefined) {
  if (at === undefined) return nothing
  const d = new Date(at)
  return html`<time datetime=${d.toISOString()} title=${d.toLocaleString()}
    >${d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}</time
  >`
}

/** Put text on the clipboard; `execCommand` where the async clipboard is not offered (plain http). */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text)
      return true
    }
  } catch {
    // fall through to the old way
  }
  const area = document.createElement('textarea')
  area.value = text
  area.setAttribute('readonly', '')
  area.style.position = 'fixed'
  area.style.opacity = '0'
  document.body.append(area)
  area.select()
  try {
    return document.execCommand('copy')
  } catch {
    return false
  } finally {
    area.remove()
  }
}

const CARET = '<span class="cursor" aria-hidden="true"></span>'

/**
 * The streaming caret goes inside the last block the Markdown made (before its closing tags), so it
 * sits at the end of the last line instead of on a line of its own after the paragraph.
 */
export function withCaret(rendered: string): string {
  const closing = /(?:<\/[a-z][a-z0-9]*>\s*)+$/i.exec(rendered)
  if (!closing) return rendered + CARET
  return rendered.slice(0, closing.index) + CARET + rendered.slice(closing.index)
}

/** How long a message brought into view stays marked. */
const REVEALED_MS = 2500

@customElement('transcript-view')
export class TranscriptView extends LitElement {
  @property({ attribute: false }) entries: TranscriptEntry[] = []
  @property({ attribute: false }) pending: PendingPrompt[] = []
  @property({ type: Boolean }) busy = false
  /** A question is open: the run waits for a human, not for the model. */
  @property({ type: Boolean }) waiting = false
  /** The busy indicator as extensions set it: their message instead of "Working", or hidden. */
  @property({ attribute: false }) working: WorkingState = { visible: true }
  /** The follow is down: what was "running" may have ended meanwhile, so it is not called running. */
  @property({ type: Boolean }) offline = false
  /** Texts of this tab's prompts that were refused (`prompt-rejected`), by messageId: the entry shows them. */
  @property({ attribute: false }) rejectedTexts: Record<string, string> = {}
  /** When this tab saw each message and tool call arrive (thread-store's `arrivedAt`): for entries whose time pi did not say. */
  @property({ attribute: false }) arrivedAt: Record<string, number> = {}
  /** The thread's model: on `demo`, the empty transcript offers what the demo model can do. */
  @property() model = ''
  /** Offer Edit on prompts and Regenerate on replies (each forks the thread: the pane handles `fork`). */
  @property({ type: Boolean }) forkable = false

  /** The user message whose editor is open (Edit), if any. */
  @state() private editing = ''
  /** Tool rows show their output (pi's Ctrl+O); collapsed to one line each by default. */
  @state() toolsOpen = false
  /** Tool calls whose long output the person unfolded. */
  @state() private expanded = new Set<string>()
  /** The message whose Copy button was just pressed ("Copied" for a moment). */
  @state() private copied = ''
  #copiedTimer: ReturnType<typeof setTimeout> | undefined
  #offReady: (() => void) | undefined

  override connectedCallback(): void {
    super.connectedCallback()
    this.#offReady = onHighlighterReady(() => this.requestUpdate())
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback()
    this.#offReady?.()
    clearTimeout(this.#copiedTimer)
  }

  static override styles = transcriptViewStyles

  override render() {
    const entries = this.entries
    const lastIsStreaming = entries.at(-1)?.kind === 'assistant' && (entries.at(-1) as { streaming: boolean }).streaming
    const tools = entries.some((e) => e.kind === 'tool')
    return html`${tools
        ? html`<div class="tools-toggle">
            <button type="button" class="ghost" aria-pressed=${this.toolsOpen ? 'true' : 'false'} title="Ctrl+O" @click=${() => this.toggleTools()}>
              Show tool output
            </button>
          </div>`
        : nothing}
      <div role="log" aria-label="Transcript" aria-live="polite" @click=${this.#onClick} @edit-close=${() => (this.editing = '')}>
      ${entries.length === 0 && this.pending.length === 0 ? this.#empty() : nothing}
      ${repeat(entries, (e, i) => key(e, i), (e) => this.#entry(e))}
      ${repeat(
        this.pending,
        (p) => `pending:${p.messageId}`,
        (p) =>
          // No whitespace around the text: the bubble is pre-wrap, and it would show as blank lines.
          html`<div class="user pending" data-pending=${p.messageId}>${p.text}${thumbnails(p.images)}<span class="tag"
              >${p.queued ? `Queued · ${p.deliverAs === 'followUp' ? 'follow-up' : 'steer'}` : 'Sending…'}</span
            ></div>`,
      )}
      ${this.busy && !lastIsStreaming && this.pending.length === 0
        ? this.waiting
          ? html`<div class="thinking">Waiting for your answer…</div>`
          : this.working.visible
            ? html`<div class="thinking">${this.working.message ?? 'Working'}<span class="cursor" aria-hidden="true"></span></div>`
            : nothing
        : nothing}
    </div>`
  }

  /** The empty thread: how to start, and on the demo model what it can do, each a button that fills the composer. */
  #empty() {
    const demo = this.model === 'demo'
    return html`<div class="empty">
      <strong>Start the conversation</strong>Type a message below. Enter sends, Shift+Enter adds a line.
      ${demo
        ? html`<p class="demo-intro">This thread runs on the offline <b>demo</b> model. Try what it can do:</p>
            <ul class="examples" aria-label="Try the demo model">
              ${DEMO_EXAMPLES.map(
                (x) => html`<li>
                  <button type="button" title=${x.text} @click=${() => this.#compose(x.text)}>${x.label}</button>
                </li>`,
              )}
            </ul>
            <p class="demo-more">Type <kbd>/</kbd> for commands.</p>`
        : nothing}
    </div>`
  }

  /** Every tool row open, or every one back to its summary line (pi's Ctrl+O). */
  /** Scrolls the message into view and marks it for a moment; false when it is not shown. */
  reveal(messageId: string): boolean {
    const el = this.renderRoot.querySelector<HTMLElement>(`[data-message="${CSS.escape(messageId)}"]`)
    if (!el) return false
    el.scrollIntoView({ block: 'center' })
    el.classList.add('revealed')
    el.setAttribute('tabindex', '-1')
    el.focus({ preventScroll: true })
    setTimeout(() => el.classList.remove('revealed'), REVEALED_MS)
    return true
  }

  toggleTools(): void {
    this.toolsOpen = !this.toolsOpen
  }

  #compose(text: string, images?: readonly PromptImage[]) {
    this.dispatchEvent(new CustomEvent('compose', { bubbles: true, composed: true, detail: { text, ...(images?.length ? { images } : {}) } }))
  }

  /** Copy buttons: a code block's (inside the rendered Markdown) and a message's. */
  #onClick = (e: Event) => {
    const target = e.target as Element | null
    const codeButton = target?.closest?.('[data-copy-code]')
    if (codeButton) {
      const pre = codeButton.parentElement?.querySelector('pre')
      if (!pre) return
      void copyText(pre.textContent ?? '').then((ok) => {
        codeButton.textContent = ok ? 'Copied' : 'Copy failed'
        setTimeout(() => (codeButton.textContent = 'Copy'), 1500)
      })
    }
  }

  #copyMessage(id: string, text: string) {
    void copyText(text).then((ok) => {
      if (!ok) return
      this.copied = id
      clearTimeout(this.#copiedTimer)
      this.#copiedTimer = setTimeout(() => (this.copied = ''), 1500)
    })
  }

  /** Under a message: when it was written (pi's time, else when this tab saw it arrive), what the reply used, a Copy button and the fork action. */
  #meta(id: string, text: string, side: 'start' | 'end', copy = true, extra: { usage?: string; fork?: ForkMode; at?: number } = {}) {
    return html`<div class="meta ${side}">
      ${timeOf(extra.at ?? this.arrivedAt[id])}
      ${extra.usage ? html`<span class="usage">${extra.usage}</span>` : nothing}
      ${copy
        ? html`<button type="button" class="ghost copy-message" aria-label="Copy message" @click=${() => this.#copyMessage(id, text)}>
            ${this.copied === id ? 'Copied' : 'Copy'}
          </button>`
        : nothing}
      ${extra.fork && this.forkable ? (extra.fork === 'edit' ? [this.#forkButton(id, 'edit'), this.#forkButton(id, 'fork')] : this.#forkButton(id, extra.fork)) : nothing}
    </div>`
  }

  #forkButton(id: string, mode: ForkMode) {
    const [label, title, text] = FORK_BUTTONS[mode]
    return html`<button type="button" class="ghost fork-message" data-fork=${mode} aria-label=${label} title=${title} @click=${() => this.#fork(id, mode)}>
      ${text}
    </button>`
  }

  /** Edit opens the prompt's editor here; Regenerate and Fork go to the pane. */
  #fork(messageId: string, mode: ForkMode) {
    if (mode === 'edit') {
      this.editing = messageId
      return
    }
    this.dispatchEvent(new CustomEvent<ForkRequestDetail>('fork', { bubbles: true, composed: true, detail: { messageId, mode } }))
  }

  #toggle(id: string) {
    const next = new Set(this.expanded)
    if (next.has(id)) next.delete(id)
    else next.add(id)
    this.expanded = next
  }

  /** A prompt that will never run. This tab's own shows its text (it is back in the draft too). */
  #rejected(messageId: string, reason: string, sent: string | undefined, images?: readonly PromptImage[]): TemplateResult {
    const text = this.rejectedTexts[messageId]
    if (text !== undefined) {
      return html`<div class="rejected" data-rejected=${messageId}>
        Not delivered (${reason}): put back into your draft<span class="text">${text}</span>
      </div>`
    }
    // Not this tab's (or this tab was reloaded): the text is shown and can be sent again from here.
    return html`<div class="rejected" data-rejected=${messageId}>
      Not delivered (${reason})${sent !== undefined
        ? html`<span class="text">${sent}</span>${thumbnails(images)}
            <button type="button" class="ghost" @click=${() => this.#compose(sent, images)}>Put in my draft</button>`
        : nothing}
    </div>`
  }

  #entry(e: TranscriptEntry): TemplateResult {
    switch (e.kind) {
      case 'user':
        return html`<user-turn message-id=${e.messageId} text=${e.text} .versions=${e.versions} ?editing=${this.editing === e.messageId}
            ?enabled=${this.forkable && !this.busy}><div class="user" data-message=${e.messageId}>${e.text}${thumbnails(e.images)}</div></user-turn>
          ${this.#meta(e.messageId, e.text, 'end', true, { fork: 'edit', at: e.at })}`
      case 'assistant':
        // A failed call's empty reply: its failure (or retry line) says everything.
        if (!e.streaming && e.text === '' && e.thinking === undefined) return html``
        // The reply has begun but said nothing yet: the model is thinking, whether or not it shows its thoughts.
        if (e.streaming && e.text === '' && e.thinking === undefined) {
          return html`<div class="thinking" data-message=${e.messageId}>Thinking…<span class="cursor" aria-hidden="true"></span></div>`
        }
        return html`${e.thinking !== undefined ? thoughtBlock(e) : nothing}${e.text === '' && e.thinking !== undefined
            ? nothing
            : html`<div class="assistant" data-message=${e.messageId}>
                ${unsafeHTML(e.streaming ? withCaret(markdown(e.text)) : markdown(e.text))}
              </div>`}
          ${e.text === ''
            ? nothing
            : this.#meta(e.messageId, e.text, 'start', !e.streaming, e.streaming ? { at: e.at } : { usage: usageLine(e), fork: 'regenerate', at: e.at })}`
      case 'tool':
        return renderTool(e, {
          offline: this.offline,
          expanded: this.expanded.has(e.toolCallId),
          toggleExpanded: () => this.#toggle(e.toolCallId),
          open: this.toolsOpen || e.state === 'error',
          time: timeOf(e.at ?? this.arrivedAt[e.toolCallId]),
        })
      case 'notify':
        return html`<div class="notify ${e.level}" role="status">${e.message}</div>`
      case 'stopped':
        return html`<div class="stopped" role="note">Stopped</div>`
      case 'rejected':
        return this.#rejected(e.messageId, e.reason, e.text, e.images)
      case 'handled':
        return html`<div class="user handled" data-message=${e.messageId}>${e.text}<span class="tag">handled by an extension</span></div>`
      case 'custom':
        return html`<div class="custom" data-custom=${e.customType}><span class="label">${e.customType}</span>${e.text}</div>`
      case 'error':
        return html`<div class="error" role="alert">${e.message}</div>`
      case 'retry':
        return retryLine(e)
    }
  }
}

/** A prompt's images, as thumbnails. */
function thumbnails(images: readonly PromptImage[] | undefined) {
  if (!images?.length) return nothing
  return html`<span class="thumbs">${images.map(
    (image, i) => html`<img src=${dataUrl(image)} alt=${`Image ${i + 1} of ${images.length}`} loading="lazy" />`,
  )}</span>`
}

/** "Thought for N s" — or, while the reply still only thinks, "Thinking…". */
export function thoughtLabel(e: Extract<TranscriptEntry, { kind: 'assistant' }>): string {
  if (e.streaming && e.text === '') return 'Thinking…'
  if (e.thinkingMs === undefined) return 'Thought'
  const s = Math.max(1, Math.round(e.thinkingMs / 1000))
  return `Thought for ${s} s`
}

/** What the model thought before it answered: collapsed under its label, opened on demand. */
function thoughtBlock(e: Extract<TranscriptEntry, { kind: 'assistant' }>): TemplateResult {
  const live = e.streaming && e.text === ''
  return html`<details class="thought" data-thought=${e.messageId}>
    <summary>${thoughtLabel(e)}${live ? html`<span class="cursor" aria-hidden="true"></span>` : nothing}</summary>
    <div class="thought-text">${e.thinking}</div>
  </details>`
}

/** pi's retries of a failed model call, as one line: what failed and how many attempts so far. */
export function retryLine(e: Extract<TranscriptEntry, { kind: 'retry' }>): TemplateResult {
  const of = e.maxAttempts !== undefined ? `${e.attempt}/${e.maxAttempts}` : `${e.attempt}`
  switch (e.state) {
    case 'retrying':
      return html`<div class="retry" role="status" data-retry=${e.state}>The model failed (${e.message}); retrying ${of}…</div>`
    case 'recovered':
      return html`<div class="retry recovered" role="note" data-retry=${e.state}>The model failed; it answered on retry ${of}.</div>`
    case 'failed':
      return html`<div class="error" role="alert" data-retry=${e.state}>${e.message}
        <span class="attempts">(gave up after ${e.attempt} ${e.attempt === 1 ? 'retry' : 'retries'})</span></div>`
  }
}

const FORK_BUTTONS: Record<ForkMode, [label: string, title: string, text: string]> = {
  edit: ['Edit this message', 'Edit this message and send it again here: a new version of it', 'Edit'],
  regenerate: ['Regenerate this reply', 'Ask for this reply again here: a new version of its prompt', 'Regenerate'],
  fork: ['Fork a new thread from here', 'A new thread holding the conversation before this message, with it in the composer', 'Fork'],
}

function key(e: TranscriptEntry, i: number): string {
  switch (e.kind) {
    case 'user':
    case 'assistant':
      return `${e.kind}:${e.messageId}:${i}`
    case 'tool':
      return `tool:${e.toolCallId}`
    default:
      return `${e.kind}:${i}`
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'transcript-view': TranscriptView
  }
}
