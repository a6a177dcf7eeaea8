/**
 * A scrolling transcript that follows its end while the person is at the end, and stays where they
 * are once they scroll up (when `scrolledUp` says so, the host offers a "Jump to latest" button).
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit'

/** Closer to the end than this (px) counts as at the end. */
const NEAR_END = 80

export interface StickToEndOptions {
  /** The element that scrolls. */
  scroller: () => HTMLElement | null | undefined
  /** What renders inside it after the host (its new entries are laid out once it has updated). */
  content?: () => { updateComplete: Promise<unknown> } | null | undefined
}

export class StickToEndController implements ReactiveController {
  #stick = true
  #scrolledUp = false

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly options: StickToEndOptions,
  ) {
    host.addController(this)
  }

  /** The person scrolled up from the end. */
  get scrolledUp(): boolean {
    return this.#scrolledUp
  }

  /** Follow the end again (a new thread, or this tab just sent something). */
  stick(): void {
    this.#stick = true
  }

  /** Stop following the end (a message was brought into view); "Jump to latest" is offered. */
  release(): void {
    this.#stick = false
    this.#setScrolledUp(true)
  }

  reset(): void {
    this.#stick = true
    this.#setScrolledUp(false)
  }

  /** Note whether the person is at the end, before what is shown changes. */
  remember(): void {
    const el = this.options.scroller()
    if (el) this.#stick = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_END
  }

  onScroll = (): void => {
    this.remember()
    this.#setScrolledUp(!this.#stick)
  }

  /** Back to the end, following it again. */
  jumpToEnd(): void {
    const el = this.options.scroller()
    if (!el) return
    this.#stick = true
    this.#setScrolledUp(false)
    el.scrollTop = el.scrollHeight
  }

  hostUpdated(): void {
    const el = this.options.scroller()
    if (!this.#stick || !el) return
    el.scrollTop = el.scrollHeight
    // The content renders after the host: follow the end once its new entries are laid out.
    void this.options.content?.()?.updateComplete.then(() => {
      const now = this.options.scroller()
      if (this.#stick && now) now.scrollTop = now.scrollHeight
    })
  }

  #setScrolledUp(up: boolean) {
    if (this.#scrolledUp === up) return
    this.#scrolledUp = up
    this.host.requestUpdate()
  }
}
