/**
 * The server's VAPID key pair: made on the first start and kept in the data dir, so a browser that
 * subscribed stays subscribed across restarts (its subscription is bound to this public key).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import webpush from 'web-push'
import { createDurably } from './durable-file.js'

export interface VapidKeys {
  /** base64url of the uncompressed P-256 point: what the browser takes as `applicationServerKey`. */
  publicKey: string
  privateKey: string
}

/** The keys in `dir/vapid.json`, made (and written readable by the owner alone) when there are none. */
export function vapidKeys(dir: string): VapidKeys {
  const file = join(dir, 'vapid.json')
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    // Nodes of a cluster share the data dir and may start at once: the first pair written is everyone's.
    if (createDurably(file, JSON.stringify(webpush.generateVAPIDKeys(), null, 2) + '\n')) chmodSync(file, 0o600)
  }
  const { publicKey, privateKey } = JSON.parse(readFileSync(file, 'utf8')) as Partial<VapidKeys>
  if (typeof publicKey === 'string' && typeof privateKey === 'string') return { publicKey, privateKey }
  throw new Error(`${file} holds no VAPID key pair; remove it to make a new one (browsers then subscribe again)`)
}
