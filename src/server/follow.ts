/**
 * GET /api/threads/:id/follow — Server-Sent Events: a snapshot, then every observation in order.
 *
 * Frames come from the feed already encoded, so each follower costs one socket write per frame.
 * A follower whose socket buffer passes the high-water mark is closed rather than waited on: a
 * stalled tab never delays the run or the other tabs, and its EventSource reconnects with
 * Last-Event-ID and resumes from the ring (or gets a fresh snapshot).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Feed, Follower } from '../host/feed.js'
import { encodeSnapshot } from '../host/frame.js'

export interface FollowOptions {
  heartbeatMs: number
  /** Bytes buffered for one follower before it is dropped. */
  highWaterMark: number
  retryMs: number
}

export const defaultFollowOptions: FollowOptions = { heartbeatMs: 15_000, highWaterMark: 1 << 20, retryMs: 1000 }

/** `Last-Event-ID` wins over `?after=`; anything that is not a non-negative integer means "from a snapshot". */
export function resumePoint(request: FastifyRequest<{ Querystring: { after?: string } }>): number | undefined {
  const raw = (request.headers['last-event-id'] as string | undefined) ?? request.query.after
  if (raw === undefined || !/^\d{1,15}$/.test(raw.trim())) return undefined
  return Number(raw.trim())
}

export function streamFeed(
  request: FastifyRequest<{ Querystring: { after?: string } }>,
  reply: FastifyReply,
  feed: Feed,
  options: FollowOptions,
): void {
  reply.hijack()
  const raw = reply.raw
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  })
  raw.write(`retry: ${options.retryMs}\n\n`)
  raw.socket?.setNoDelay(true)

  let closed = false
  let checking = false
  const stop = (end: () => void) => {
    if (closed) return
    closed = true
    unfollow()
    clearInterval(heartbeat)
    end()
  }
  const close = () => stop(() => raw.end())
  // Node corks a response for the rest of the tick, so a burst of frames sits in the buffer even
  // for a fast tab. Judge the backlog only after the socket has had its chance to flush.
  const checkBacklog = () => {
    checking = false
    if (raw.writableLength <= options.highWaterMark) return
    request.log.warn({ threadId: feed.view.threadId, buffered: raw.writableLength }, 'follower fell behind; closing it so it resumes')
    stop(() => raw.destroy())
  }
  const follower: Follower = {
    send: (frame) => {
      if (closed) return
      raw.write(frame)
      if (!checking && raw.writableLength > options.highWaterMark) {
        checking = true
        setImmediate(checkBacklog)
      }
    },
    close,
  }

  // Resume and subscribe in one synchronous step, so no frame falls between them.
  const resume = feed.resume(resumePoint(request))
  const unfollow = feed.follow(follower)
  if (resume.kind === 'snapshot') raw.write(encodeSnapshot(resume.snapshot))
  else for (const frame of resume.frames) raw.write(frame)

  const heartbeat = setInterval(() => raw.write(': heartbeat\n\n'), options.heartbeatMs)
  heartbeat.unref()
  request.raw.on('close', close)
}
