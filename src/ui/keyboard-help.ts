/**
 * The thread's keys, listed where a person looks for them: a "Keys" button by the thread's settings
 * (or `?` anywhere in the pane outside a text field) opens a list of threadhost's own keys and of the
 * shortcuts the thread's extensions registered (pi's `registerShortcut`), each with its description
 * and a Run button. An extension's shortcut pressed anywhere in the pane runs on the thread (the
 * composer runs those pressed in it); one the browser keeps for itself (Ctrl+W …) is run by its button.
 */
import { css, html, LitElement, nothing } from 'lit'
import { customElement, property, query, state } from 'lit/decorators.js'
import type { CommandInfo } from '../schemas/index.js'
import { browserCanDeliver, keyIdOf, normalizeKey } from './shortcut-keys.js'
import { tokens } from './styles.js'

/** threadhost's own keys, as the composer and the pane take them. */
const OWN_KEYS: Array<[keys: string, what: string]> = [
  ['Enter', 'Send the message (during a run: steer it into the run)'],
  ['Shift+Enter', 'A new line in the message'],
  ['Escape', 'Stop the run'],
  ['Alt+Up', 'During a run: take the queued messages back into the box (the run goes on)'],
  ['/', 'Commands: type / at the start of the message'],
  ['?', 'This list (outside a text field)'],
]

/** pi's key id as a person reads it: `ctrl+shift+u` → `Ctrl+Shift+U`. */
export function keyLabel(id: string): string {
  return normalizeKey(id)
    .split('+')
    .map((part) => (part.length === 1 ? part.toUpperCase() : part[0].toUpperCase() + part.slice(1)))
    .join('+')
}

const editable = (el: Element | undefined) =>
  !!el && (el instanceof HTMLTextAreaElement || el instanceof HTMLInputElement || el instanceof HTMLSelectElement || (el as HTMLElement).isContentEditable)

@customElement('keyboard-help')
export class KeyboardHelp extends LitElement {
  /** The thread's commands (threadhost's and pi's): the shortcuts among them are listed. */
  @property({ attribute: false }) loadCommands: (() => Promise<CommandInfo[]>) | undefined
  /** Runs an extension's shortcut on the thread by its key id. */
  @property({ attribute: false }) runShortcut: ((key: string) => Promise<void>) | undefined
  @state() private shortcuts: CommandInfo[] | undefined
  @state() private error = ''
  @query('dialog') private dialog?: HTMLDialogElement
  #root: Node | undefined

  static override styles = [
    tokens,
    css`
    .open {
      font: inherit;
      font-size: 0.8rem;
      padding: 0.15rem 0.55rem;
      border-radius: 6px;
      border: 1px solid var(--th-border);
      background: none;
      color: var(--th-fg-soft);
      cursor: pointer;
    }
    dialog {
      border: 1px solid var(--th-border);
      border-radius: var(--th-radius);
      background: var(--th-bg);
      color: var(--th-fg);
      box-shadow: var(--th-shadow);
      padding: 1rem 1.25rem;
      width: min(32rem, 90vw);
    }
    dialog::backdrop {
      background: rgb(0 0 0 / 0.25);
    }
    h2 {
      font-size: 1rem;
      margin: 0 0 0.5rem;
    }
    h3 {
      font-size: 0.85rem;
      margin: 1rem 0 0.35rem;
      color: var(--th-fg-soft);
    }
    dl {
      display: grid;
      grid-template-columns: max-content 1fr max-content;
      gap: 0.35rem 0.75rem;
      margin: 0;
      align-items: center;
    }
    dt kbd {
      font-family: var(--th-mono);
      font-size: 0.8rem;
      border: 1px solid var(--th-border);
      border-bottom-width: 2px;
      border-radius: 4px;
      padding: 0 0.3rem;
      background: var(--th-bg-soft);
    }
    dd {
      margin: 0;
    }
    .own dd {
      grid-column: span 2;
    }
    .note,
    .kept {
      color: var(--th-fg-soft);
      font-size: 0.8rem;
    }
    button.run,
    .close {
      font: inherit;
      font-size: 0.8rem;
      padding: 0.1rem 0.6rem;
      border-radius: 6px;
      border: 1px solid var(--th-border);
      background: var(--th-bg-soft);
      color: inherit;
      cursor: pointer;
    }
    .footer {
      display: flex;
      justify-content: flex-end;
      margin-top: 1rem;
    }
    [role='alert'] {
      color: var(--th-danger);
      font-size: 0.85rem;
    }
  `,
  ]

  override connectedCallback(): void {
    super.connectedCallback()
    // The pane's whole tree: a key pressed anywhere in it (its events reach its shadow root).
    this.#root = this.getRootNode()
    this.#root.addEventListener('keydown', this.#onKey as EventListener)
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback()
    this.#root?.removeEventListener('keydown', this.#onKey as EventListener)
  }

  override willUpdate(changed: Map<string, unknown>): void {
    // Another thread: its own shortcuts.
    if (changed.has('loadCommands')) this.shortcuts = undefined
  }

  override render() {
    return html`<button type="button" class="open" aria-haspopup="dialog" title="Keyboard shortcuts (?)" @click=${this.open}>Keys</button>
      <dialog aria-label="Keyboard shortcuts" @close=${() => (this.error = '')}>
        <h2>Keyboard shortcuts</h2>
        <dl class="own">
          ${OWN_KEYS.map(([keys, what]) => html`<dt><kbd>${keys}</kbd></dt><dd>${what}</dd>`)}
        </dl>
        <h3>From this thread's extensions</h3>
        ${this.#extensionKeys()}
        ${this.error ? html`<p role="alert">${this.error}</p>` : nothing}
        <div class="footer"><button type="button" class="close" @click=${() => this.dialog?.close()}>Close</button></div>
      </dialog>`
  }

  #extensionKeys() {
    const shortcuts = this.shortcuts
    if (!shortcuts) return html`<p class="note">Loading…</p>`
    if (shortcuts.length === 0) return html`<p class="note">None: no extension of this thread registered a shortcut.</p>`
    return html`<dl class="extension" aria-label="Extension shortcuts">
      ${shortcuts.map(
        (s) => html`<dt><kbd>${keyLabel(s.name)}</kbd></dt>
          <dd>
            ${s.description || 'No description'}
            ${browserCanDeliver(s.name) ? nothing : html`<span class="kept">(the browser keeps this key: use Run)</span>`}
          </dd>
          <dd><button type="button" class="run" aria-label=${`Run ${keyLabel(s.name)}`} @click=${() => this.#run(s.name, true)}>Run</button></dd>`,
      )}
    </dl>`
  }

  /** Opens the list, loading the thread's shortcuts once. */
  open = async (): Promise<void> => {
    if (!this.dialog?.open) this.dialog?.showModal()
    await this.#load()
  }

  async #load(): Promise<CommandInfo[]> {
    if (this.shortcuts) return this.shortcuts
    try {
      const commands = (await this.loadCommands?.()) ?? []
      this.shortcuts = commands.filter((c) => c.kind === 'shortcut')
    } catch (err) {
      this.error = `Could not load the thread's shortcuts: ${(err as Error).message}`
      this.shortcuts = []
    }
    return this.shortcuts
  }

  async #run(key: string, fromList: boolean): Promise<void> {
    try {
      await this.runShortcut?.(key)
      if (fromList) this.dialog?.close()
    } catch (err) {
      this.error = `Could not run ${keyLabel(key)}: ${(err as Error).message}`
      if (!fromList) await this.open()
    }
  }

  #onKey = (e: KeyboardEvent): void => {
    if (e.defaultPrevented || e.isComposing) return
    const path = e.composedPath()
    const target = path[0] as Element | undefined
    // The composer runs the shortcuts pressed in it; a text field keeps its keys.
    if (path.some((n) => (n as Element).localName === 'composer-box')) return
    if (e.key === '?' && !e.ctrlKey && !e.altKey && !e.metaKey && !editable(target)) {
      e.preventDefault()
      void this.open()
      return
    }
    if (!(e.ctrlKey || e.altKey || e.metaKey)) return
    const pressed = keyIdOf(e)
    if (!pressed || !browserCanDeliver(pressed)) return
    const known = this.shortcuts?.find((s) => normalizeKey(s.name) === pressed)
    if (known) {
      e.preventDefault()
      void this.#run(known.name, false)
      return
    }
    // Not loaded yet: this press runs its shortcut once they are known.
    if (!this.shortcuts) {
      void this.#load().then((list) => {
        const found = list.find((s) => normalizeKey(s.name) === pressed)
        if (found) void this.#run(found.name, false)
      })
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'keyboard-help': KeyboardHelp
  }
}
