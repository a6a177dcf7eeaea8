/**
 * The browsers that asked to be notified: one subscription per browser (its push endpoint is the
 * key), kept in the data dir so they outlive a restart — one file each, `push/subscriptions/<hash of
 * the endpoint>.json`, so processes sharing the data dir (a cluster's nodes) never lose each other's:
 * each change writes or removes one file (written beside under a unique name, then renamed into
 * place), and the list is the folder's files, read again whenever the folder changed.
 *
 * `push/subscriptions.json` (one file for all, rewritten whole: the last writer won) is moved into
 * the folder once, by whichever process first renames it aside.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import type { PushSubscriptionBody } from '../../schemas/push.js'
import { createDurably, removeDurably, writeDurably } from './durable-file.js'

export interface PushSubscriptionRecord {
  endpoint: string
  keys: { p256dh: string; auth: string }
}

const LEGACY = 'subscriptions.json'
const MIGRATING = 'subscriptions.json.migrating'
const QUIET_NS = 2_000_000_000n

export class PushSubscriptions {
  /** In memory only; or the folder's list as last read, and the folder's change time it was read at. */
  #byEndpoint = new Map<string, PushSubscriptionRecord>()
  #readAt?: bigint
  #quiet = false
  readonly #folder?: string

  /** `dir` undefined: kept in memory only (tests of other things, which never subscribe). */
  constructor(private readonly dir?: string) {
    if (dir === undefined) return
    this.#folder = join(dir, 'subscriptions')
    this.#migrate(dir)
  }

  list(): PushSubscriptionRecord[] {
    if (this.#folder !== undefined) this.#refresh(this.#folder)
    return [...this.#byEndpoint.values()]
  }

  /** Adds or replaces the browser's subscription (a browser that subscribes again gets new keys). */
  add(subscription: PushSubscriptionBody): void {
    const { endpoint, keys } = subscription
    const record = { endpoint, keys: { p256dh: keys.p256dh, auth: keys.auth } }
    if (this.#folder !== undefined) {
      mkdirSync(this.#folder, { recursive: true, mode: 0o700 })
      writeDurably(this.#fileOf(endpoint), JSON.stringify(record) + '\n')
      this.#readAt = undefined
    }
    this.#byEndpoint.set(endpoint, record)
  }

  /** Whether it was there. */
  remove(endpoint: string): boolean {
    if (this.#folder === undefined) return this.#byEndpoint.delete(endpoint)
    const removed = removeDurably(this.#fileOf(endpoint))
    this.#byEndpoint.delete(endpoint)
    this.#readAt = undefined
    return removed
  }

  #fileOf(endpoint: string): string {
    return join(this.#folder!, `${createHash('sha256').update(endpoint).digest('base64url')}.json`)
  }

  /** Reads the folder again when it changed since the last read (another process added or removed one). */
  #refresh(folder: string): void {
    const changed = statSync(folder, { bigint: true, throwIfNoEntry: false })?.mtimeNs
    if (changed === undefined) {
      this.#byEndpoint.clear()
      this.#readAt = undefined
      return
    }
    // A folder's change time ticks coarsely (a few ms; a shared mount's clock may differ): a list read
    // soon after a change may have missed another in the same tick, so it is trusted once the folder
    // had been quiet for a while when it was read.
    if (changed === this.#readAt && this.#quiet) return
    const byEndpoint = new Map<string, PushSubscriptionRecord>()
    for (const name of readdirSync(folder)) {
      if (!name.endsWith('.json')) continue
      try {
        const record = JSON.parse(readFileSync(join(folder, name), 'utf8')) as PushSubscriptionRecord
        byEndpoint.set(record.endpoint, record)
      } catch {
        // removed since the listing
      }
    }
    this.#byEndpoint = byEndpoint
    this.#readAt = changed
    this.#quiet = BigInt(Date.now()) * 1_000_000n - changed > QUIET_NS
  }

  /** The one-file list of older versions, moved into the folder by the process that renames it aside first. */
  #migrate(dir: string): void {
    try {
      renameSync(join(dir, LEGACY), join(dir, MIGRATING))
    } catch {
      // none, or another process took it
    }
    const migrating = join(dir, MIGRATING)
    if (!existsSync(migrating)) return
    let records: PushSubscriptionRecord[] = []
    try {
      records = JSON.parse(readFileSync(migrating, 'utf8')) as PushSubscriptionRecord[]
    } catch {
      // another process finished it meanwhile
    }
    mkdirSync(this.#folder!, { recursive: true, mode: 0o700 })
    // Never over a subscription written since: that one is newer.
    for (const record of records) createDurably(this.#fileOf(record.endpoint), JSON.stringify(record) + '\n')
    try {
      unlinkSync(migrating)
    } catch {
      // another process removed it
    }
  }
}
