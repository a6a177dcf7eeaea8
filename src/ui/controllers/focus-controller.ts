/**
 * Focus follows the work: into the composer when a thread opens, onto a card when a question
 * arrives, back to the composer (or the next card) once it settles — and never away from someone
 * typing a message, so a keystroke cannot land in a card by surprise. Looked at after every update
 * of the host.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit'

interface Focusable {
  focus(): void
  readonly updateComplete: Promise<unknown>
  readonly shadowRoot: ShadowRoot | null
}

export interface FocusTargets {
  /** Where a message is typed; `draft` is what is typed there now. */
  composer: () => (Focusable & { readonly draft: string }) | null | undefined
  /** The open questions' cards, in order. */
  cards: () => (Focusable & { readonly dialog?: { id: string } })[]
  /** The ids of the open questions now (undefined while the host shows no thread). */
  openDialogs: () => string[] | undefined
}

/** The element that has the focus, looked for through open shadow roots. */
function deepActiveElement(): Element | null {
  let el: Element | null = document.activeElement
  while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement
  return el
}

export class FocusController implements ReactiveController {
  /** Put the focus in the composer once it is rendered (the thread just opened). */
  #onOpen = false
  /** The open questions at the last update, to see which arrived and which left. */
  #seen = new Set<string>()

  constructor(
    host: ReactiveControllerHost,
    private readonly targets: FocusTargets,
  ) {
    host.addController(this)
  }

  /** A thread was just opened: the focus goes into it once it is shown. */
  opened(): void {
    this.#onOpen = true
    this.#seen = new Set()
  }

  hostUpdated(): void {
    const ids = this.targets.openDialogs()
    const composer = this.targets.composer()
    if (!ids || !composer) return
    const arrived = ids.filter((id) => !this.#seen.has(id))
    const left = [...this.#seen].some((id) => !ids.includes(id))
    this.#seen = new Set(ids)
    const cards = this.targets.cards()
    const active = deepActiveElement()
    const inCard = cards.some((c) => c.shadowRoot?.contains(active ?? null))
    const lost = !active || active === document.body || active === document.documentElement
    const typing = composer.shadowRoot?.contains(active ?? null) === true && composer.draft.trim() !== ''
    if (arrived.length > 0 && !inCard && !typing) {
      // A question arrived: answering it is what the run waits for.
      this.#onOpen = false
      const card = cards.find((c) => c.dialog?.id === arrived[0])
      if (card) void card.updateComplete.then(() => card.focus())
      return
    }
    if (this.#onOpen || (left && lost)) {
      this.#onOpen = false
      // The next open question if there is one, else the composer.
      const target: Focusable = cards[0] ?? composer
      void target.updateComplete.then(() => target.focus())
    }
  }
}
