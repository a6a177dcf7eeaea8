/**
 * The composer's `/` completions: while the draft is a `/word`, the thread's commands that match it
 * are listed under the box (asked once per thread, again only after a failed ask). Up/Down pick,
 * Tab or Enter takes the picked one (Enter on an exact, complete name sends it as typed), Escape
 * closes the list for this word without stopping the run. Shortcuts are keys to press, not names
 * to type, so they are never offered — but they are among the commands it holds for the composer.
 */
import { html, nothing, type ReactiveController, type ReactiveControllerHost } from 'lit'
import type { CommandInfo } from '../schemas/index.js'

/** The `/word` being typed at the start of the draft (before any space or newline), or undefined. */
export function commandQuery(draft: string): string | undefined {
  const m = /^\/([^\s]*)$/.exec(draft)
  return m ? m[1] : undefined
}

/** Commands for `/query`: names that start with it first, then names that contain it; at most 8. */
export function matchCommands(commands: readonly CommandInfo[], query: string): CommandInfo[] {
  const q = query.toLowerCase()
  const starts = commands.filter((c) => c.name.toLowerCase().startsWith(q))
  const contains = commands.filter((c) => !c.name.toLowerCase().startsWith(q) && c.name.toLowerCase().includes(q))
  return [...starts, ...contains].slice(0, 8)
}

/** What the completions read of the composer. */
export interface CompletionHost extends ReactiveControllerHost {
  readonly draft: string
  readonly disabled: boolean
  readonly loadCommands: (() => Promise<CommandInfo[]>) | undefined
}

export class CommandCompletion implements ReactiveController {
  #commands: CommandInfo[] | undefined
  #active = 0
  /** Escape closed the list for this `/word`; typing reopens it. */
  #dismissed = false
  #commandsFor: unknown
  #commandsAsked: unknown

  constructor(
    private readonly host: CompletionHost,
    /** Takes a completion into the draft. */
    private readonly complete: (command: CommandInfo) => void,
  ) {
    host.addController(this)
  }

  hostConnected(): void {}

  /** The thread's commands and shortcuts, once asked. */
  get commands(): readonly CommandInfo[] | undefined {
    return this.#commands
  }

  /** From the host's willUpdate: another thread's loader drops the commands; a changed draft opens, asks or resets. */
  changed(loaderChanged: boolean, draftChanged: boolean): void {
    if (loaderChanged && this.#commandsFor !== this.host.loadCommands) {
      this.#commands = undefined
      this.#commandsAsked = undefined
    }
    if (draftChanged) {
      if (commandQuery(this.host.draft) === undefined) this.#dismissed = false
      else void this.ask()
      this.#active = 0
    }
  }

  /** The completions shown now: the draft is `/word`, the commands are known, and Escape did not close them. */
  get suggestions(): CommandInfo[] {
    const q = commandQuery(this.host.draft)
    if (q === undefined || this.#dismissed || !this.#commands || this.host.disabled) return []
    return matchCommands(this.#commands.filter((c) => c.kind !== 'shortcut'), q)
  }

  get #activeIndex(): number {
    return Math.min(this.#active, Math.max(0, this.suggestions.length - 1))
  }

  /** The textarea's ARIA for the list (a combobox's listbox). */
  get aria(): { controls: string | typeof nothing; activedescendant: string | typeof nothing } {
    const open = this.suggestions.length > 0
    return { controls: open ? 'commands' : nothing, activedescendant: open ? `command-${this.#activeIndex}` : nothing }
  }

  /** A key in the box while the list is open; true when the list took it. */
  onKey(e: KeyboardEvent): boolean {
    const suggestions = this.suggestions
    if (!suggestions.length || e.isComposing) return false
    const n = suggestions.length
    const active = this.#activeIndex
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault()
      this.#active = (active + (e.key === 'ArrowDown' ? 1 : n - 1)) % n
      this.host.requestUpdate()
      return true
    }
    if (e.key === 'Tab' || (e.key === 'Enter' && !e.shiftKey && !e.altKey)) {
      const exact = suggestions[active].name === commandQuery(this.host.draft)
      if (e.key === 'Tab' || !exact) {
        e.preventDefault()
        this.take(suggestions[active])
        return true
      }
    }
    if (e.key === 'Escape') {
      // Closes the list; the pane's Escape (stop the run) is not also triggered.
      e.preventDefault()
      e.stopPropagation()
      this.#dismissed = true
      this.host.requestUpdate()
      return true
    }
    return false
  }

  take(command: CommandInfo): void {
    this.#dismissed = false
    this.complete(command)
  }

  render() {
    const suggestions = this.suggestions
    if (!suggestions.length) return nothing
    const active = this.#activeIndex
    return html`<ul class="commands" id="commands" role="listbox" aria-label="Commands">
      ${suggestions.map(
        (c, i) => html`<li
          id=${`command-${i}`}
          role="option"
          aria-selected=${i === active ? 'true' : 'false'}
          @mousedown=${(e: Event) => e.preventDefault()}
          @click=${() => this.take(c)}
        >
          <span class="name">/${c.name}</span><span class="desc">${c.description}</span>
        </li>`,
      )}
    </ul>`
  }

  /** Asks the thread's commands, once per loader (again after a failed ask). */
  ask(): Promise<void> {
    const load = this.host.loadCommands
    if (!load || this.#commandsAsked === load) return Promise.resolve()
    this.#commandsAsked = load
    return load().then(
      (c) => {
        if (this.host.loadCommands !== load) return
        this.#commandsFor = load
        this.#commands = c
        this.host.requestUpdate()
      },
      () => {
        if (this.#commandsAsked === load) this.#commandsAsked = undefined // ask again next time
      },
    )
  }
}
