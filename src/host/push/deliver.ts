/**
 * One push to one browser: web-push encrypts the message for the subscription (RFC 8291, aes128gcm)
 * and signs the VAPID header (RFC 8292); the request itself goes through fetch, which speaks http as
 * well as https (web-push's own sender is https-only, and a local stand-in for the vendor's push
 * service in the tests is plain http).
 */
import webpush from 'web-push'
import type { PushMessage } from '../../schemas/push.js'
import type { PushSubscriptionRecord } from './subscriptions.js'
import type { VapidKeys } from './vapid.js'

/** Who runs this server, for the push service's operator (RFC 8292 `sub`); any mailto: or https: URL. */
export const VAPID_SUBJECT = 'mailto:threadhost@example.com'

/** How long the push service keeps a message for a browser that is offline: an hour, then it is stale. */
const TTL_SECONDS = 60 * 60
const TIMEOUT_MS = 10_000

/** The push service's answer: its HTTP status (201 taken; 404 and 410 mean the subscription is gone). */
export async function deliver(subscription: PushSubscriptionRecord, message: PushMessage, vapid: VapidKeys): Promise<number> {
  const request = webpush.generateRequestDetails(subscription, JSON.stringify(message), {
    vapidDetails: { subject: VAPID_SUBJECT, ...vapid },
    TTL: TTL_SECONDS,
    urgency: message.kind === 'question' ? 'high' : 'normal',
    contentEncoding: 'aes128gcm',
  })
  const response = await fetch(request.endpoint, {
    method: request.method,
    // fetch sets the length itself.
    headers: Object.fromEntries(Object.entries(request.headers).filter(([name]) => name.toLowerCase() !== 'content-length').map(([name, value]) => [name, String(value)])),
    body: new Uint8Array(request.body),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  })
  await response.body?.cancel()
  return response.status
}
