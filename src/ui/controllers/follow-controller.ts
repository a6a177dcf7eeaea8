/**
 * Following one thread, as a lifecycle of the element that shows it: while the host is connected
 * and names a thread, a thread store and its SSE connection (FollowClient) exist for that thread;
 * another thread, or the host leaving the page, lets them go (the connection closes, the store's
 * timers stop). The host re-renders on every change of the store or of the connection.
 *
 * A follow that never connects asks whether the thread exists at all: a 404 means its first message
 * will create it (`absent`), which the badge says instead of "Connecting".
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit'
import { isNotFound, type Api } from '../api.js'
import { FollowClient, followConfig, type ConnectionState, type EventSourceFactory } from '../follow-client.js'
import { answerLabel, createThreadStore, type ThreadStore, type ThreadStoreContext } from '../thread-store.js'
import type { DialogAnswerBody } from '../../schemas/index.js'

export interface FollowOptions {
  /** The thread to follow ('' for none), read when the host connects and before each of its updates. */
  threadId: () => string
  api: () => Pick<Api, 'followUrl' | 'getThread'>
  eventSource: () => EventSourceFactory | undefined
  /**
   * A store was just made for `threadId` (before the first frame): what the host wires to it or
   * resets for a new thread. What it returns is called when the store is let go of.
   */
  attached?: (store: ThreadStore, threadId: string) => (() => void) | void
  /** The store is about to change (the host re-renders after): e.g. to note the scroll position first. */
  beforeChange?: () => void
}

/** What a host sees of the thread it follows, for as long as it follows it. */
interface Following {
  threadId: string
  store: ThreadStore
  client: FollowClient
  /** Aborted when the store is let go of: the timers of its effects stop. */
  life: AbortController
  off: (() => void)[]
}

export class FollowController implements ReactiveController {
  #on: Following | undefined
  #ctx: ThreadStoreContext | undefined
  #connection: ConnectionState = 'connecting'
  #absent = false
  #existsAsked = false

  constructor(
    private readonly host: ReactiveControllerHost & { isConnected: boolean },
    private readonly options: FollowOptions,
  ) {
    host.addController(this)
  }

  /** The followed thread's store (undefined while none is followed). */
  get store(): ThreadStore | undefined {
    return this.#on?.store
  }

  /** The store's context as of the last change. */
  get ctx(): ThreadStoreContext | undefined {
    return this.#ctx
  }

  /**
   * Answers an open question of the followed thread, as every view that shows its cards does: marked
   * answering before the POST (the settle can reach the follow before the 204 reaches us); a 404 means
   * it is no longer open — when it was answered, another tab's answer won the race.
   */
  async answer(api: Pick<Api, 'answerDialog'>, threadId: string, body: DialogAnswerBody): Promise<void> {
    const store = this.store
    const dialog = this.ctx?.view.openDialogs.find((d) => d.id === body.id)
    store?.trigger.answering({ id: body.id, label: answerLabel(dialog, body as unknown as Record<string, unknown>) })
    try {
      await api.answerDialog(threadId, body)
    } catch (err) {
      store?.trigger.answerFailed({ id: body.id, refused: isNotFound(err) })
      throw err
    }
  }

  get connection(): ConnectionState {
    return this.#connection
  }

  get live(): boolean {
    return this.#connection === 'live'
  }

  /** The server says the thread does not exist (yet): its first message creates it. */
  get absent(): boolean {
    return this.#absent
  }

  /** Reconnect now (the first prompt created the thread that the follow could not find). */
  retryNow(): void {
    this.#on?.client.retryNow()
  }

  hostConnected(): void {
    this.#sync()
  }

  /** Runs before each render: a new thread id is followed from this render on. */
  hostUpdate(): void {
    this.#sync()
  }

  hostDisconnected(): void {
    this.#detach()
  }

  #sync() {
    const id = this.options.threadId()
    if (!this.host.isConnected || id === (this.#on?.threadId ?? '')) return
    this.#detach()
    if (id) this.#attach(id)
  }

  #attach(threadId: string) {
    const life = new AbortController()
    const store = createThreadStore(threadId, { signal: life.signal })
    const api = this.options.api()
    const client = new FollowClient(store, (after) => api.followUrl(threadId, after), this.options.eventSource() ?? followConfig.eventSource)
    const on: Following = { threadId, store, client, life, off: [] }
    this.#on = on
    this.#ctx = store.getSnapshot().context
    this.#absent = false
    this.#existsAsked = false
    const sub = store.subscribe((s) => {
      this.options.beforeChange?.()
      this.#ctx = s.context
      this.host.requestUpdate()
    })
    on.off.push(
      () => sub.unsubscribe(),
      client.onState((c) => {
        this.#connection = c
        this.host.requestUpdate()
        if (client.actor.getSnapshot().value === 'backingOff' && !store.getSnapshot().context.synced) void this.#askExists(on)
      }),
    )
    const undo = this.options.attached?.(store, threadId)
    if (undo) on.off.push(undo)
    client.start()
    this.#connection = client.state
    this.host.requestUpdate()
  }

  #detach() {
    const on = this.#on
    if (!on) return
    this.#on = undefined
    for (const off of on.off) off()
    on.client.stop()
    on.life.abort()
  }

  /** The follow never connected: is there a thread at all? (A 404 means its first message will create it.) */
  async #askExists(on: Following) {
    if (this.#existsAsked) return
    this.#existsAsked = true
    try {
      await this.options.api().getThread(on.threadId)
    } catch (err) {
      if (this.#on !== on) return
      if (isNotFound(err)) {
        this.#absent = true
        this.host.requestUpdate()
      } else this.#existsAsked = false // ask again at the next failure
    }
  }
}
