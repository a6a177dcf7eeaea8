/**
 * Who may call the API (and read /metrics). Checked on the matched route, never on the raw URL: the router decodes
 * `/%61pi/…` to `/api/…`, and a prefix test on the raw URL would wave it through.
 *
 * - While shutting down, every API route answers 503.
 * - With a token: `Authorization: Bearer <token>`; `?token=` only on the SSE streams, because
 *   EventSource cannot send headers.
 * - Two `Host` headers are a 400 on every route.
 * - Without a token (loopback only): the Host must be a loopback name and a browser's Origin must be
 *   that same host, so a page elsewhere — or one whose domain rebinds to 127.0.0.1 — cannot drive an
 *   agent that has a shell.
 */
import { timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { guardOutcomes } from '../schemas/outcomes.js'
import { replyWith } from './responses.js'

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i
const STREAM_ROUTE = /\/(follow|events)$/

export function apiGuard(options: { token?: string; closing: () => boolean }) {
  if (options.token !== undefined && !/\S/.test(options.token)) throw new Error('the token must not be blank')
  return async (request: FastifyRequest, reply: FastifyReply) => {
    // Two Host headers: node keeps the first, a proxy may route by the other. Ambiguous, so refused.
    if (hostHeaders(request.raw.rawHeaders) > 1) return replyWith(reply, guardOutcomes, { kind: 'bad-request', message: 'a request carries one Host header' }, undefined)
    const route = request.routeOptions.url
    // /metrics tells how busy the agents are; it is guarded like the API it describes.
    if (!route?.startsWith('/api/') && route !== '/metrics') return
    if (options.closing()) return replyWith(reply.header('retry-after', '5'), guardOutcomes, { kind: 'closing' }, undefined)
    if (options.token) {
      const queryToken = request.method === 'GET' && STREAM_ROUTE.test(route) ? (request.query as { token?: string })?.token : undefined
      if (!matches(bearer(request.headers.authorization) ?? queryToken, options.token)) {
        return replyWith(reply.header('www-authenticate', 'Bearer'), guardOutcomes, { kind: 'token-required' }, undefined)
      }
      return
    }
    const host = request.headers.host ?? ''
    const origin = request.headers.origin
    if (!LOOPBACK_HOST.test(host) || (origin !== undefined && !sameHost(origin, host))) {
      return replyWith(reply, guardOutcomes, { kind: 'foreign-origin' }, undefined)
    }
  }
}

function hostHeaders(raw: string[]): number {
  let count = 0
  for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === 'host') count++
  return count
}

function bearer(header: string | undefined): string | undefined {
  const match = header && /^bearer\s+(.+)$/i.exec(header.trim())
  return match ? match[1] : undefined
}

function matches(given: string | undefined, token: string): boolean {
  if (!given || !/\S/.test(given)) return false
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

function sameHost(origin: string, host: string): boolean {
  try {
    return new URL(origin).host.toLowerCase() === host.toLowerCase()
  } catch {
    return false
  }
}
