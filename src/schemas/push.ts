/**
 * Notifications on the phone (and any browser): the bodies of the push routes, and the message a push
 * carries to the service worker (src/ui/public/sw.js), which shows it unless a tab is in view.
 */
import { Type, type Static } from 'typebox'

/** base64url, as a browser gives its subscription keys. */
const Base64Url = Type.String({ pattern: '^[A-Za-z0-9_-]+=*$', minLength: 1, maxLength: 200 })

/**
 * Where the browser vendor's push service takes pushes for this browser. https only: the server sends
 * to whatever is stored here, so a plain-http endpoint is taken on loopback alone (a local stand-in).
 */
const Endpoint = Type.String({ pattern: '^(https://|http://(127\\.\\d+\\.\\d+\\.\\d+|localhost|\\[::1\\])[:/])', maxLength: 2048 })

/** A browser's PushSubscription in its JSON form (`expirationTime` is ignored). */
export const PushSubscriptionBody = Type.Object({
  endpoint: Endpoint,
  expirationTime: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
  keys: Type.Object({ p256dh: Base64Url, auth: Base64Url }),
})
export type PushSubscriptionBody = Static<typeof PushSubscriptionBody>

export const PushUnsubscribeBody = Type.Object({ endpoint: Type.String({ maxLength: 2048 }) })
export type PushUnsubscribeBody = Static<typeof PushUnsubscribeBody>

/** The server's VAPID public key: the browser subscribes with it as `applicationServerKey`. */
export const PushKey = Type.Object({ publicKey: Base64Url })
export type PushKey = Static<typeof PushKey>

/** What one push says: a question waits on a thread, or a thread's run ended. */
export const PushMessage = Type.Object({
  kind: Type.Union([Type.Literal('question'), Type.Literal('run-ended')]),
  threadId: Type.String(),
  title: Type.String(),
  body: Type.String(),
  /** The page to open on a click, relative to the app's root. */
  url: Type.String(),
})
export type PushMessage = Static<typeof PushMessage>
