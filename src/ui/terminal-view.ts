/**
 * A pi terminal component in the page: its screen (ANSI-styled lines, drawn as styled runs in a
 * monospace block of its width) and a focusable surface that turns key presses and pastes into the
 * terminal bytes the component parses (terminal-keys.ts), sent one after another through `send`.
 * While another tab holds the input lease the view is read-only and says so; its keys are not sent.
 */
import { LitElement, css, html, nothing } from 'lit'
import { customElement, property, state } from 'lit/decorators.js'
import type { TerminalScreen, TerminalTypist } from '../schemas/index.js'
import { ansiRuns } from './ansi.js'
import { answered, describeError, isNotFound } from './api.js'
import { ClockController } from './controllers/clock-controller.js'
import { terminalBytes } from './terminal-keys.js'

/**
 * This tab's name when it types into a component (its input lease is held under it). Kept in the
 * tab's sessionStorage, so a reload mid-component is the same typist, not a stranger locked out
 * until the lease it held itself runs out.
 */
export const TAB_ID = tabId()

function tabId(): string {
  const fresh = () => globalThis.crypto?.randomUUID?.() ?? `tab-${Math.random().toString(36).slice(2)}`
  try {
    const kept = sessionStorage.getItem('threadhost.tab')
    if (kept) return kept
    const id = fresh()
    sessionStorage.setItem('threadhost.tab', id)
    return id
  } catch {
    return fresh()
  }
}

/** ANSI lines as styled runs, a newline between lines, for a `<pre>` (also the widgets' renderer). */
export function ansiBlock(lines: readonly string[]) {
  return lines.map(
    (line, i) => html`${i > 0 ? '\n' : nothing}${ansiRuns(line).map((r) => (r.style ? html`<span style=${r.style}>${r.text}</span>` : r.text))}`,
  )
}

@customElement('terminal-view')
export class TerminalView extends LitElement {
  @property({ attribute: false }) screen?: TerminalScreen
  @property({ attribute: false }) typist?: TerminalTypist
  /** Sends one key or paste (terminal bytes); rejects as the input route refused it. */
  @property({ attribute: false }) send: (data: string) => Promise<void> = async () => {}
  @property({ attribute: false }) now: () => number = () => Date.now()
  @property() label = 'Terminal'

  @state() private error = ''
  /** Keys go out in order, each after the one before has been taken. */
  #queue: Promise<void> = Promise.resolve()
  /** The note changes when another tab's lease runs out. */
  #clock = new ClockController(this, { when: () => this.watching })

  static override styles = css`
    :host {
      display: block;
    }
    .surface {
      background: var(--term-bg, #1e1e1e);
      color: var(--term-fg, #e5e5e5);
      border-radius: 6px;
      padding: 0.5rem 0.75rem;
      overflow-x: auto;
      outline: none;
      border: 2px solid transparent;
    }
    .surface:focus-visible,
    .surface:focus {
      border-color: var(--accent, #4f8cff);
    }
    .surface.watching {
      opacity: 0.9;
    }
    .screen {
      margin: 0;
      font-family: ui-monospace, 'SFMono-Regular', Menlo, Consolas, 'DejaVu Sans Mono', monospace;
      font-size: 0.85rem;
      line-height: 1.25;
      white-space: pre;
      min-width: var(--cols, 80ch);
    }
    .note {
      font-size: 0.8rem;
      margin: 0.35rem 0 0;
      opacity: 0.8;
    }
    .error {
      color: var(--danger, #d33);
    }
  `

  /** Another tab types into it now: this one watches. */
  get watching(): boolean {
    const t = this.typist
    return !!t && t.tab !== TAB_ID && t.until > this.now()
  }

  override focus(): void {
    this.renderRoot.querySelector<HTMLElement>('.surface')?.focus()
  }

  override render() {
    const s = this.screen
    const watching = this.watching
    return html`<div
        class="surface ${watching ? 'watching' : ''}"
        tabindex="0"
        role="application"
        aria-roledescription="terminal"
        aria-label=${this.label}
        aria-readonly=${watching ? 'true' : 'false'}
        @keydown=${this.#onKey}
        @paste=${this.#onPaste}
      >
        <pre class="screen" style=${`--cols: ${s?.cols ?? 80}ch`}>${ansiBlock(s?.lines ?? [])}</pre>
      </div>
      <p class="note" role="status">
        ${watching ? 'Another tab is typing: you are watching.' : 'Click here and type: your keys go to the extension (Esc, arrows and Enter included).'}
      </p>
      ${this.error ? html`<p class="note error" role="alert">${this.error}</p>` : nothing}`
  }

  #onKey = (e: KeyboardEvent) => {
    if (e.isComposing) return
    const bytes = terminalBytes(e)
    if (bytes === undefined) return
    // Every key it takes is the component's: not the card's Escape, not the pane's stop.
    e.preventDefault()
    e.stopPropagation()
    this.#type(bytes)
  }

  #onPaste = (e: ClipboardEvent) => {
    const text = e.clipboardData?.getData('text/plain')
    if (!text) return
    e.preventDefault()
    e.stopPropagation()
    this.#type(text.replace(/\r?\n/g, '\r'))
  }

  #type(bytes: string): void {
    if (this.watching) {
      this.error = 'Another tab is typing into this: wait until it stops.'
      return
    }
    this.#queue = this.#queue.then(async () => {
      try {
        await this.send(bytes)
        this.error = ''
      } catch (err) {
        // Settled meanwhile: the card is about to leave.
        if (isNotFound(err)) return
        this.error = answered(err, 'INPUT_LEASED') ? 'Another tab is typing into this: wait until it stops.' : describeError(err)
      }
    })
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'terminal-view': TerminalView
  }
}
