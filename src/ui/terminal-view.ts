/**
 * A pi terminal component in the page: an xterm.js terminal of the component's size that shows its
 * screen, and whose typed keys, pastes and input-method text (xterm's `onData`: the very byte
 * sequences pi-tui parses) go out through `send`, one after another. While another tab holds the
 * input lease the view is read-only and says so; its keys are not sent.
 *
 * The screen is written into the terminal as a terminal would get it: each changed line at its row
 * (`CSI row;1H`, the line erased, the line), then the cursor where the component put it. Only the
 * lines that differ from what is shown are written (shared/terminal-screen.ts diffs them), the whole
 * screen when the size changes (and so when it opens or the page reloads). xterm.js is loaded only
 * when a component opens.
 */
import type { Terminal } from '@xterm/xterm'
import xtermCss from '@xterm/xterm/css/xterm.css?inline'
import { LitElement, css, html, nothing, unsafeCSS } from 'lit'
import { customElement, property, state } from 'lit/decorators.js'
import type { TerminalScreen, TerminalTypist } from '../schemas/index.js'
import { diffScreen } from '../shared/terminal-screen.js'
import { answered, describeError, isNotFound } from './api.js'
import { ClockController } from './controllers/clock-controller.js'

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

const CSI = '\x1b['
const EMPTY: TerminalScreen = { cols: 80, rows: 24, lines: [] }

/**
 * The part of a screen the page shows, as its own screen: the component's lines (a card as tall as
 * they are, as pi draws a component inline), and when there are more than `rows` of them the last
 * `rows`, as a terminal of that height scrolls.
 */
export function visibleScreen(screen: TerminalScreen): TerminalScreen {
  const from = Math.max(0, screen.lines.length - screen.rows)
  const lines = screen.lines.slice(from)
  const c = screen.cursor
  const cursor = c && c.row >= from ? { row: c.row - from, col: c.col } : undefined
  return { cols: screen.cols, rows: Math.max(1, lines.length), lines, ...(cursor ? { cursor } : {}) }
}

/** The bytes that turn the terminal showing `before` (none: anything) into one showing `after`; same size. */
export function screenBytes(before: TerminalScreen | undefined, after: TerminalScreen): string {
  // No autowrap: a line measured a cell too wide is cut at the edge, never spilled onto the next row.
  let out = before ? '' : `${CSI}?7l${CSI}0m${CSI}H${CSI}2J`
  for (const change of diffScreen(before, after).changes) {
    change.lines.forEach((line, k) => {
      out += `${CSI}${change.at + k + 1};1H${CSI}0m${CSI}2K${line}${CSI}0m`
    })
  }
  const c = after.cursor
  return out + (c ? `${CSI}${c.row + 1};${c.col + 1}H${CSI}?25h` : `${CSI}?25l`)
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
  #term?: Terminal
  /** What the terminal shows (or will, once xterm has parsed what was written). */
  #shown?: TerminalScreen
  #drawnFrom?: TerminalScreen
  #opening = false
  #focusWanted = false

  static override styles = [
    unsafeCSS(xtermCss),
    css`
      :host {
        display: block;
      }
      .surface {
        background: var(--term-bg, #1e1e1e);
        border-radius: 6px;
        padding: 0.5rem 0.75rem;
        overflow-x: auto;
        border: 2px solid transparent;
      }
      .surface:focus-within {
        border-color: var(--accent, #4f8cff);
      }
      .surface.watching {
        opacity: 0.9;
      }
      .note {
        font-size: 0.8rem;
        margin: 0.35rem 0 0;
        opacity: 0.8;
      }
      .error {
        color: var(--danger, #d33);
      }
    `,
  ]

  /** Another tab types into it now: this one watches. */
  get watching(): boolean {
    const t = this.typist
    return !!t && t.tab !== TAB_ID && t.until > this.now()
  }

  /** The screen as plain text, row by row, as xterm holds it (for whoever reads it without colours). */
  get text(): string {
    const term = this.#term
    if (!term) return ''
    const buffer = term.buffer.active
    const rows: string[] = []
    for (let y = 0; y < term.rows; y++) rows.push(buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? '')
    return rows.join('\n')
  }

  override focus(): void {
    if (this.#term) this.#term.focus()
    else this.#focusWanted = true
  }

  override connectedCallback(): void {
    super.connectedCallback()
    if (this.hasUpdated) void this.#open()
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback()
    this.#term?.dispose()
    this.#term = undefined
    this.#shown = undefined
  }

  protected override firstUpdated(): void {
    void this.#open()
  }

  protected override updated(): void {
    this.#draw()
  }

  override render() {
    const watching = this.watching
    return html`<div
        class="surface ${watching ? 'watching' : ''}"
        role="application"
        aria-roledescription="terminal"
        aria-label=${this.label}
        @keydown=${this.#onKey}
      >
        <div class="xterm-host"></div>
      </div>
      <p class="note" role="status">
        ${watching ? 'Another tab is typing: you are watching.' : 'Click here and type: your keys go to the extension (Esc, arrows and Enter included).'}
      </p>
      ${this.error ? html`<p class="note error" role="alert">${this.error}</p>` : nothing}`
  }

  async #open(): Promise<void> {
    if (this.#term || this.#opening) return
    this.#opening = true
    try {
      const { Terminal } = await import('@xterm/xterm')
      const host = this.renderRoot.querySelector<HTMLElement>('.xterm-host')
      if (!this.isConnected || this.#term || !host) return
      const size = visibleScreen(this.screen ?? EMPTY)
      const term = new Terminal({
        cols: size.cols,
        rows: size.rows,
        scrollback: 0,
        cursorBlink: false,
        // The rows xterm draws are hidden from assistive technology; this mode keeps a text copy for it.
        screenReaderMode: true,
        fontFamily: "ui-monospace, 'SFMono-Regular', Menlo, Consolas, 'DejaVu Sans Mono', monospace",
        fontSize: 13,
        theme: { background: '#1e1e1e', foreground: '#e5e5e5', cursor: '#e5e5e5' },
      })
      // Ctrl+V pastes and Ctrl+C with a selection copies, as in the browser (xterm would send ^V and ^C).
      term.attachCustomKeyEventHandler(
        (e) => !(e.ctrlKey && !e.altKey && !e.metaKey && (e.key.toLowerCase() === 'v' || (e.key.toLowerCase() === 'c' && term.hasSelection()))),
      )
      term.onData((data) => this.#type(data))
      term.open(host)
      this.#term = term
      this.#draw()
      if (this.#focusWanted) term.focus()
      this.#focusWanted = false
    } finally {
      this.#opening = false
    }
  }

  #draw(): void {
    const term = this.#term
    if (!term) return
    if (this.#shown && this.#drawnFrom === this.screen) return
    this.#drawnFrom = this.screen
    const next = visibleScreen(this.screen ?? EMPTY)
    let before = this.#shown
    if (!before || before.cols !== next.cols || before.rows !== next.rows) {
      if (term.cols !== next.cols || term.rows !== next.rows) term.resize(next.cols, next.rows)
      before = undefined
    }
    term.write(screenBytes(before, next))
    this.#shown = next
  }

  /** Every key typed here is the component's: not the card's Escape, not the pane's stop or shortcuts. */
  #onKey = (e: KeyboardEvent) => {
    if (e.metaKey) return
    e.stopPropagation()
    // xterm sends Shift+Tab (CSI Z) but lets the browser move focus too: the component's tabs need it here.
    if (e.key === 'Tab') e.preventDefault()
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
