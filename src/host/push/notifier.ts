/**
 * Notifications for the person away from the tab: when a question waits on a thread, or a thread's
 * run ends, every subscribed browser gets a push (the service worker shows it only when no tab of the
 * app is in view, src/ui/public/sw.js). A subscription the push service says is gone (404, 410) is
 * removed; any other failure is logged and the subscription kept.
 */
import { join } from 'node:path'
import webpush from 'web-push'
import type { Observation, ObservationOf } from '../../schemas/observation.js'
import type { PushMessage, PushSubscriptionBody } from '../../schemas/push.js'
import type { Feed } from '../feed.js'
import type { Log } from '../store/journal.js'
import { deliver } from './deliver.js'
import { PushSubscriptions } from './subscriptions.js'
import { vapidKeys, type VapidKeys } from './vapid.js'

/** What the notifier needs of the host: every feed's observations, and a thread's title. */
export interface PushHost {
  observeFeeds(observer: (threadId: string, feed: Feed, o: Observation) => void): () => void
  get(threadId: string): { title: string } | undefined
}

const BODY_CHARS = 140

export class PushNotifier {
  readonly #pending = new Set<Promise<void>>()
  #unwatch: (() => void) | undefined

  private constructor(
    readonly vapid: VapidKeys,
    readonly subscriptions: PushSubscriptions,
    private readonly log: Log,
  ) {}

  /** Keys and subscriptions under `dataDir/push`, made on the first start. */
  static open(dataDir: string, log: Log): PushNotifier {
    const dir = join(dataDir, 'push')
    return new PushNotifier(vapidKeys(dir), new PushSubscriptions(dir), log)
  }

  /** Keys made for this process and subscriptions in memory: for an app built without a data dir of its own (tests). */
  static inMemory(log: Log): PushNotifier {
    return new PushNotifier(webpush.generateVAPIDKeys(), new PushSubscriptions(), log)
  }

  subscribe(subscription: PushSubscriptionBody): void {
    this.subscriptions.add(subscription)
  }

  unsubscribe(endpoint: string): void {
    this.subscriptions.remove(endpoint)
  }

  /** Starts notifying for `host`'s threads; the returned function stops it. */
  watch(host: PushHost): () => void {
    this.#unwatch?.()
    const unwatch = host.observeFeeds((threadId, feed, o) => this.#observe(host, threadId, feed, o))
    this.#unwatch = unwatch
    return () => {
      unwatch()
      if (this.#unwatch === unwatch) this.#unwatch = undefined
    }
  }

  /** Every push under way has been answered (or failed): for a shutdown and for tests. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all(this.#pending)
  }

  #observe(host: PushHost, threadId: string, feed: Feed, o: Observation): void {
    if (this.#unwatch === undefined || (o.type !== 'extension-ui-request' && o.type !== 'settled')) return
    if (this.subscriptions.list().length === 0) return
    const title = host.get(threadId)?.title || 'threadhost'
    const url = `./#/threads/${encodeURIComponent(threadId)}`
    const message: PushMessage =
      o.type === 'extension-ui-request'
        ? { kind: 'question', threadId, title, body: `A question waits: ${o.dialog.title ?? 'your answer is needed'}`, url }
        : { kind: 'run-ended', threadId, title, body: this.#ended(feed, o), url }
    this.#send(message)
  }

  #ended(feed: Feed, o: ObservationOf<'settled'>): string {
    if (o.aborted) return 'Stopped.'
    const last = feed.view.transcript.findLast((entry) => entry.kind === 'assistant')
    const text = last && 'text' in last ? last.text.trim().replace(/\s+/g, ' ') : ''
    if (!text) return 'Done.'
    return text.length > BODY_CHARS ? `${text.slice(0, BODY_CHARS - 1)}…` : text
  }

  #send(message: PushMessage): void {
    for (const subscription of this.subscriptions.list()) {
      const sent = deliver(subscription, message, this.vapid).then(
        (status) => {
          if (status === 404 || status === 410) {
            this.subscriptions.remove(subscription.endpoint)
            this.log('info', `push: the push service says a subscription is gone (${status}); removed it`)
          } else if (status < 200 || status >= 300) {
            this.log('warn', `push: the push service answered ${status}; the subscription is kept`)
          }
        },
        (error: unknown) => this.log('warn', `push: could not reach the push service: ${(error as Error).message}`),
      )
      const tracked = sent.finally(() => this.#pending.delete(tracked))
      this.#pending.add(tracked)
    }
  }
}
