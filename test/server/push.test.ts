/**
 * Notifications through the Push API, against a local HTTP push endpoint standing in for the browser
 * vendor's push service: what arrives there is decrypted here as a browser would (RFC 8291,
 * aes128gcm) with the browser's own keys, and its VAPID header (RFC 8292) checked against the key the
 * server hands out. A push service that answers 410 has the subscription removed, on disk too.
 */
import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, verify, type ECDH } from 'node:crypto'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { PushNotifier } from '../../src/host/push/notifier.js'
import { PushSubscriptions } from '../../src/host/push/subscriptions.js'
import type { PushMessage } from '../../src/schemas/push.js'
import { api, startHarness, type Harness } from './harness.js'

interface Received {
  path: string
  headers: IncomingHttpHeaders
  body: Buffer
}

/** The vendor's push service, locally: takes pushes, answers `status` (201 unless told otherwise). */
class LocalPushService {
  status = 201
  readonly #waiting: ((r: Received) => void)[] = []
  readonly #unread: Received[] = []
  readonly #server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (c: Buffer) => chunks.push(c))
    request.on('end', () => {
      response.writeHead(this.status).end()
      const received = { path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks) }
      const waiter = this.#waiting.shift()
      if (waiter) waiter(received)
      else this.#unread.push(received)
    })
  })
  url = ''

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.#server.address() as { port: number }).port}`
    return this
  }

  /** The next push to arrive. */
  next(): Promise<Received> {
    const unread = this.#unread.shift()
    return unread ? Promise.resolve(unread) : new Promise((resolve) => this.#waiting.push(resolve))
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()))
  }
}

/** A browser's side of a subscription: its P-256 key pair and auth secret. */
function browser(endpoint: string) {
  const ecdh = createECDH('prime256v1')
  ecdh.generateKeys()
  const auth = randomBytes(16)
  return {
    ecdh,
    auth,
    subscription: { endpoint, expirationTime: null, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') } },
  }
}

/** RFC 8291 / RFC 8188 as the browser decrypts a push: one record, padding after a 0x02 delimiter. */
function decrypt(body: Buffer, ua: ECDH, authSecret: Buffer): string {
  const salt = body.subarray(0, 16)
  const idLength = body[20]
  const serverKey = body.subarray(21, 21 + idLength)
  const record = body.subarray(21 + idLength)
  const ikm = hkdfSync('sha256', ua.computeSecret(serverKey), authSecret, Buffer.concat([Buffer.from('WebPush: info\0'), ua.getPublicKey(), serverKey]), 32)
  const cek = hkdfSync('sha256', Buffer.from(ikm), salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16)
  const nonce = hkdfSync('sha256', Buffer.from(ikm), salt, Buffer.from('Content-Encoding: nonce\0'), 12)
  const decipher = createDecipheriv('aes-128-gcm', Buffer.from(cek), Buffer.from(nonce))
  decipher.setAuthTag(record.subarray(-16))
  const plain = Buffer.concat([decipher.update(record.subarray(0, -16)), decipher.final()])
  let end = plain.length - 1
  while (plain[end] === 0) end--
  expect(plain[end]).toBe(2)
  return plain.subarray(0, end).toString('utf8')
}

/** `Authorization: vapid t=<JWT>, k=<key>`: the JWT is ES256-signed by `publicKey` for the endpoint's origin. */
function checkVapid(authorization: string | undefined, publicKey: string, endpointOrigin: string): void {
  const match = /^vapid t=([^,]+),\s*k=(\S+)$/.exec(authorization ?? '')
  expect(match, authorization).not.toBeNull()
  const [, jwt, k] = match!
  expect(k).toBe(publicKey)
  const [header, payload, signature] = jwt.split('.')
  const point = Buffer.from(publicKey, 'base64url')
  const key = createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33, 65).toString('base64url') },
    format: 'jwk',
  })
  const signed = verify('sha256', Buffer.from(`${header}.${payload}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'))
  expect(signed).toBe(true)
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { aud: string; exp: number; sub: string }
  expect(claims.aud).toBe(endpointOrigin)
  expect(claims.exp * 1000).toBeGreaterThan(Date.now())
  expect(claims.sub).toMatch(/^(mailto:|https:)/)
}

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function setUp() {
  const dataDir = mkdtempSync(join(tmpdir(), 'threadhost-push-'))
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
  const service = await new LocalPushService().start()
  cleanups.push(() => service.close())
  const push = PushNotifier.open(dataDir, () => {})
  const h: Harness = await startHarness({ dataDir, demoDelayMs: 2, push })
  cleanups.push(() => h.close({ keepData: true }))
  return { dataDir, service, push, h }
}

describe('notifications through the Push API', () => {
  it('a run that ends reaches a subscribed browser as a push encrypted for it, with VAPID auth by the key the server hands out', async () => {
    const { dataDir, service, push, h } = await setUp()
    const key = await api(h.url, 'GET', '/api/push/key')
    expect(key.status).toBe(200)
    const tab = browser(`${service.url}/push/phone-1`)
    expect((await api(h.url, 'PUT', '/api/push/subscription', tab.subscription)).status).toBe(204)

    await api(h.url, 'POST', '/api/threads', { id: 'p', title: 'Release notes' })
    await api(h.url, 'POST', '/api/threads/p/prompt', { message: 'hello there' })
    const arrived = await service.next()
    expect(arrived.path).toBe('/push/phone-1')
    expect(arrived.headers['content-encoding']).toBe('aes128gcm')
    expect(Number(arrived.headers.ttl)).toBeGreaterThan(0)
    checkVapid(arrived.headers.authorization, key.body.publicKey, service.url)
    const message = JSON.parse(decrypt(arrived.body, tab.ecdh, tab.auth)) as PushMessage
    expect(message).toEqual({ kind: 'run-ended', threadId: 'p', title: 'Release notes', body: 'You said: hello there', url: './#/threads/p' })

    // The keys were made on this first start and are kept, readable by the owner alone; so is the subscription.
    await push.settled()
    expect(statSync(join(dataDir, 'push', 'vapid.json')).mode & 0o077).toBe(0)
    expect(PushNotifier.open(dataDir, () => {}).vapid.publicKey).toBe(key.body.publicKey)
    expect(new PushSubscriptions(join(dataDir, 'push')).list()).toEqual([{ endpoint: tab.subscription.endpoint, keys: tab.subscription.keys }])
  })

  it('a question that waits is pushed; a push service that answers 410 has the subscription removed, on disk too', async () => {
    const { dataDir, service, push, h } = await setUp()
    const tab = browser(`${service.url}/push/laptop`)
    await api(h.url, 'PUT', '/api/push/subscription', tab.subscription)
    service.status = 410

    await api(h.url, 'POST', '/api/threads', { id: 'q', title: 'Deploy' })
    await api(h.url, 'POST', '/api/threads/q/prompt', { message: 'call ui_dialog {"method":"select","title":"Which region?","options":["us-east","eu-west"]}' })
    const message = JSON.parse(decrypt((await service.next()).body, tab.ecdh, tab.auth)) as PushMessage
    expect(message).toMatchObject({ kind: 'question', threadId: 'q', title: 'Deploy', body: 'A question waits: Which region?' })

    await push.settled()
    expect(push.subscriptions.list()).toEqual([])
    expect(new PushSubscriptions(join(dataDir, 'push')).list()).toEqual([])
  })

  it('unsubscribing removes the browser; a subscription to a plain-http endpoint beyond loopback is refused', async () => {
    const { dataDir, service, push, h } = await setUp()
    const tab = browser(`${service.url}/push/tablet`)
    await api(h.url, 'PUT', '/api/push/subscription', tab.subscription)
    expect(push.subscriptions.list()).toHaveLength(1)
    expect((await api(h.url, 'DELETE', '/api/push/subscription', { endpoint: tab.subscription.endpoint })).status).toBe(204)
    expect(push.subscriptions.list()).toEqual([])
    expect(new PushSubscriptions(join(dataDir, 'push')).list()).toEqual([])

    const elsewhere = browser('http://push.example.com/abc')
    expect((await api(h.url, 'PUT', '/api/push/subscription', elsewhere.subscription)).status).toBe(400)
    expect(readdirSync(join(dataDir, 'push', 'subscriptions'))).toEqual([])
    expect(push.subscriptions.list()).toEqual([])
  })
})
