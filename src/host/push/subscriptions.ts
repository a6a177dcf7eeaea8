/**
 * The browsers that asked to be notified: one subscription per browser (its push endpoint is the
 * key), kept in `push/subscriptions.json` in the data dir so they outlive a restart. Small by nature
 * (a person's browsers), so the file is rewritten whole on each change.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { PushSubscriptionBody } from '../../schemas/push.js'
import { writeDurably } from './durable-file.js'

export interface PushSubscriptionRecord {
  endpoint: string
  keys: { p256dh: string; auth: string }
}

export class PushSubscriptions {
  readonly #byEndpoint = new Map<string, PushSubscriptionRecord>()

  /** `dir` undefined: kept in memory only (tests of other things, which never subscribe). */
  constructor(private readonly dir?: string) {
    const file = this.#file
    if (file && existsSync(file)) {
      for (const s of JSON.parse(readFileSync(file, 'utf8')) as PushSubscriptionRecord[]) this.#byEndpoint.set(s.endpoint, s)
    }
  }

  get #file(): string | undefined {
    return this.dir === undefined ? undefined : join(this.dir, 'subscriptions.json')
  }

  list(): PushSubscriptionRecord[] {
    return [...this.#byEndpoint.values()]
  }

  /** Adds or replaces the browser's subscription (a browser that subscribes again gets new keys). */
  add(subscription: PushSubscriptionBody): void {
    const { endpoint, keys } = subscription
    this.#byEndpoint.set(endpoint, { endpoint, keys: { p256dh: keys.p256dh, auth: keys.auth } })
    this.#save()
  }

  /** Whether it was there. */
  remove(endpoint: string): boolean {
    if (!this.#byEndpoint.delete(endpoint)) return false
    this.#save()
    return true
  }

  #save(): void {
    const file = this.#file
    if (!file) return
    mkdirSync(this.dir!, { recursive: true, mode: 0o700 })
    writeDurably(file, JSON.stringify(this.list(), null, 2) + '\n')
  }
}
