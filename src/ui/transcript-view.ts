/** The conversation, as the projection folds it, plus this tab's optimistic bubbles. role=log. */
import { LitElement, css, html, nothing, type TemplateResult } from 'lit'
import { customElement, property } from 'lit/decorators.js'
import { repeat } from 'lit/directives/repeat.js'
import { unsafeHTML } from 'lit/directives/unsafe-html.js'
import type { ToolResult, TranscriptEntry, WorkingState } from '../schemas/index.js'
import { renderMarkdown } from './markdown.js'
import { controls, tokens } from './styles.js'
import type { PendingPrompt } from './thread-store.js'

const cache = new Map<string, string>()
function markdown(text: string): string {
  let out = cache.get(text)
  if (out === undefined) {
    out = renderMarkdown(text)
    if (cache.size > 300) cache.delete(cache.keys().next().value as string)
    cache.set(text, out)
  }
  return out
}

function pretty(v: unknown): string {
  try {
    return typeof v === 'string' ? v : JSON.stringify(v, null, 2)
  } catch {
    return String(v)
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

function argsPreview(args: unknown): string {
  if (args === undefined || args === null) return ''
  const s = typeof args === 'string' ? args : JSON.stringify(args)
  return s.length > 80 ? `${s.slice(0, 79)}…` : s
}

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

  static override styles = [
    tokens,
    controls,
    css`
      :host {
        display: block;
      }
      [role='log'] {
        display: flex;
        flex-direction: column;
        gap: 0.75rem;
        padding: 1.25rem 0 0.5rem;
      }
      .empty {
        color: var(--th-fg-soft);
        text-align: center;
        padding: 3rem 1rem;
      }
      .empty strong {
        display: block;
        color: var(--th-fg);
        font-size: 1.1rem;
        margin-bottom: 0.25rem;
      }
      .user {
        align-self: flex-end;
        max-width: min(80%, 42rem);
        background: var(--th-user-bg);
        color: var(--th-user-fg);
        padding: 0.55rem 0.9rem;
        border-radius: 18px 18px 4px 18px;
        white-space: pre-wrap;
        overflow-wrap: anywhere;
        line-height: 1.45;
      }
      .user.pending {
        opacity: 0.6;
        background: transparent;
        color: var(--th-fg);
        border: 1px dashed var(--th-border);
      }
      .tag {
        display: block;
        font-size: 0.72rem;
        opacity: 0.85;
        margin-top: 0.2rem;
        text-align: right;
      }
      .assistant {
        align-self: stretch;
        line-height: 1.6;
        overflow-wrap: anywhere;
      }
      .assistant > :first-child {
        margin-top: 0;
      }
      .assistant > :last-child {
        margin-bottom: 0;
      }
      .assistant pre {
        background: var(--th-bg-sunk);
        border: 1px solid var(--th-border);
        border-radius: 8px;
        padding: 0.75rem 0.9rem;
        overflow-x: auto;
        font-size: 0.85rem;
        line-height: 1.45;
      }
      .assistant code {
        font-family: var(--th-mono);
        font-size: 0.88em;
      }
      .assistant :not(pre) > code {
        background: var(--th-bg-sunk);
        padding: 0.1em 0.35em;
        border-radius: 4px;
      }
      .assistant a {
        color: var(--th-accent);
      }
      .assistant table {
        border-collapse: collapse;
      }
      .assistant th,
      .assistant td {
        border: 1px solid var(--th-border);
        padding: 0.3rem 0.6rem;
      }
      .assistant blockquote {
        margin: 0;
        padding-left: 0.9rem;
        border-left: 3px solid var(--th-border);
        color: var(--th-fg-soft);
      }
      .cursor {
        display: inline-block;
        width: 0.5em;
        height: 1em;
        vertical-align: text-bottom;
        background: var(--th-accent);
        border-radius: 2px;
        animation: blink 1s steps(2) infinite;
      }
      .thinking {
        color: var(--th-fg-soft);
        font-size: 0.9rem;
      }
      @keyframes blink {
        50% {
          opacity: 0;
        }
      }
      details.tool {
        border: 1px solid var(--th-border);
        border-radius: 10px;
        background: var(--th-bg-soft);
        font-size: 0.875rem;
      }
      details.tool summary {
        display: flex;
        align-items: center;
        gap: 0.5rem;
        padding: 0.5rem 0.75rem;
        cursor: pointer;
        list-style: none;
      }
      details.tool summary::-webkit-details-marker {
        display: none;
      }
      details.tool summary::before {
        content: '▸';
        color: var(--th-fg-soft);
        transition: transform 120ms;
      }
      details.tool[open] summary::before {
        transform: rotate(90deg);
      }
      .tool-name {
        font-family: var(--th-mono);
        font-weight: 600;
      }
      .tool-args {
        font-family: var(--th-mono);
        color: var(--th-fg-soft);
        overflow: hidden;
        text-overflow: ellipsis;
        white-space: nowrap;
        flex: 1;
        min-width: 0;
      }
      .state {
        font-size: 0.75rem;
        padding: 0.1rem 0.5rem;
        border-radius: 999px;
        border: 1px solid currentColor;
        white-space: nowrap;
      }
      .state.running {
        color: var(--th-accent);
      }
      .state.unknown {
        color: var(--th-fg-soft);
        border-style: dashed;
      }
      .state.done {
        color: var(--th-ok);
      }
      .state.error {
        color: var(--th-danger);
      }
      .tool-body {
        padding: 0 0.75rem 0.75rem;
      }
      .tool-body h4 {
        margin: 0.5rem 0 0.25rem;
        font-size: 0.75rem;
        text-transform: uppercase;
        letter-spacing: 0.04em;
        color: var(--th-fg-soft);
      }
      .tool-body pre {
        margin: 0;
        background: var(--th-bg);
        border: 1px solid var(--th-border);
        border-radius: 6px;
        padding: 0.5rem 0.65rem;
        font-family: var(--th-mono);
        font-size: 0.8rem;
        white-space: pre-wrap;
        overflow-wrap: anywhere;
        max-height: 20rem;
        overflow: auto;
      }
      .tool-body .tool-note {
        margin: 0.3rem 0 0;
        color: var(--th-fg-soft);
        font-size: 0.75rem;
      }
      .notify {
        align-self: center;
        font-size: 0.85rem;
        padding: 0.35rem 0.8rem;
        border-radius: 999px;
        background: var(--th-bg-sunk);
        color: var(--th-fg-soft);
      }
      .notify.warning {
        background: var(--th-warn-soft);
        color: var(--th-warn);
      }
      .notify.error,
      .error {
        background: var(--th-danger-soft);
        color: var(--th-danger);
      }
      .error,
      .rejected {
        padding: 0.5rem 0.8rem;
        border-radius: 8px;
        font-size: 0.875rem;
      }
      .rejected {
        align-self: flex-end;
        max-width: min(80%, 42rem);
        background: var(--th-warn-soft);
        color: var(--th-warn);
        overflow-wrap: anywhere;
      }
      .rejected .text {
        display: block;
        margin-top: 0.2rem;
        white-space: pre-wrap;
        color: var(--th-fg);
      }
      .stopped {
        display: flex;
        align-items: center;
        gap: 0.6rem;
        color: var(--th-danger);
        font-size: 0.8rem;
        font-weight: 600;
        text-transform: uppercase;
        letter-spacing: 0.05em;
      }
      .stopped::before,
      .stopped::after {
        content: '';
        flex: 1;
        border-top: 1px solid currentColor;
        opacity: 0.35;
      }
    `,
  ]

  override render() {
    const entries = this.entries
    const lastIsStreaming = entries.at(-1)?.kind === 'assistant' && (entries.at(-1) as { streaming: boolean }).streaming
    return html`<div role="log" aria-label="Transcript" aria-live="polite">
      ${entries.length === 0 && this.pending.length === 0
        ? html`<div class="empty"><strong>Start the conversation</strong>Type a message below. Enter sends, Shift+Enter adds a line.</div>`
        : nothing}
      ${repeat(entries, (e, i) => key(e, i), (e) => this.#entry(e))}
      ${repeat(
        this.pending,
        (p) => `pending:${p.messageId}`,
        (p) =>
          // No whitespace around the text: the bubble is pre-wrap, and it would show as blank lines.
          html`<div class="user pending" data-pending=${p.messageId}>${p.text}<span class="tag"
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

  /** A prompt that will never run. This tab's own shows its text (it is back in the draft too). */
  #rejected(messageId: string, reason: string): TemplateResult {
    const text = this.rejectedTexts[messageId]
    return html`<div class="rejected" data-rejected=${messageId}>
      Not delivered (${reason})${text !== undefined
        ? html`: put back into your draft<span class="text">${text}</span>`
        : nothing}
    </div>`
  }

  #entry(e: TranscriptEntry): TemplateResult {
    switch (e.kind) {
      case 'user':
        return html`<div class="user" data-message=${e.messageId}>${e.text}</div>`
      case 'assistant':
        return html`<div class="assistant" data-message=${e.messageId}>
          ${unsafeHTML(e.streaming ? withCaret(markdown(e.text)) : markdown(e.text))}
        </div>`
      case 'tool': {
        const unknown = e.state === 'running' && this.offline
        const label = unknown ? 'unknown' : e.state === 'running' ? 'running' : e.state === 'done' ? 'done' : 'error'
        const out = e.state === 'running' ? e.partial : e.result
        return html`<details class="tool" data-tool=${e.toolCallId}>
          <summary>
            <span class="tool-name">${e.name}</span>
            <span class="tool-args">${argsPreview(e.args)}</span>
            <span
              class="state ${unknown ? 'unknown' : e.state}"
              title=${unknown ? 'The connection is down: whether it is still running is known again once it is back.' : ''}
              >${label}</span
            >
          </summary>
          <div class="tool-body">
            <h4>Arguments</h4>
            <pre>${pretty(e.args)}</pre>
            ${out && hasOutput(out) ? html`<h4>${e.state === 'running' ? 'Progress' : 'Result'}</h4>${toolOutput(out)}` : nothing}
          </div>
        </details>`
      }
      case 'notify':
        return html`<div class="notify ${e.level}" role="status">${e.message}</div>`
      case 'stopped':
        return html`<div class="stopped" role="note">Stopped</div>`
      case 'rejected':
        return this.#rejected(e.messageId, e.reason)
      case 'handled':
        return html`<div class="user handled" data-message=${e.messageId}>${e.text}<span class="tag">handled by an extension</span></div>`
      case 'error':
        return html`<div class="error" role="alert">${e.message}</div>`
    }
  }
}

const hasOutput = (r: ToolResult) => r.text !== '' || r.truncated !== undefined || (r.images?.length ?? 0) > 0 || r.details !== undefined

/**
 * A tool's output as the feed carries it: its text preformatted (tool output is mostly terminal
 * text, not Markdown), then what the host left out — cut characters, images — said, not hidden.
 * Details are shown only when there is nothing else: they are for renderers, the text is for people.
 */
function toolOutput(r: ToolResult): TemplateResult {
  const images = r.images ?? []
  const showDetails = r.text === '' && images.length === 0 && r.details !== undefined
  return html`${r.text !== '' || r.truncated ? html`<pre class="output">${r.text}</pre>` : nothing}
    ${r.truncated ? html`<p class="tool-note">… ${r.truncated} more characters not shown.</p>` : nothing}
    ${images.map((i) => html`<p class="tool-note image">[image: ${i.mimeType}, not shown]</p>`)}
    ${showDetails ? html`<pre class="output details">${pretty(r.details)}</pre>` : nothing}`
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
