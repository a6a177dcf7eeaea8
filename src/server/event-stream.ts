/**
 * One Server-Sent Events response: headers, a `retry:` hint, heartbeats, and the backlog rule.
 *
 * Frames arrive already encoded. A client whose socket buffer stays past the high-water mark is
 * closed rather than waited on, so a stalled tab never delays anything else; its EventSource
 * reconnects with Last-Event-ID and resumes. Node corks a response for the rest of a tick, so a
 * burst sits in the buffer even for a fast client: the backlog is judged only after the socket
 * has had its chance to flush.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'

export interface StreamOptions {
  heartbeatMs: number
  /** Bytes buffered for one client before it is dropped. */
  highWaterMark: number
  retryMs: number
}

export const defaultStreamOptions: StreamOptions = { heartbeatMs: 15_000, highWaterMark: 1 << 20, retryMs: 1000 }

export interface EventStream {
  send(frame: Buffer | string): void
  /** Ends the response normally (the thread is gone, the server is closing). */
  close(): void
}

/** `Last-Event-ID` wins over `?after=`; anything that is not a non-negative integer means "from the start". */
export function resumePoint(request: FastifyRequest<{ Querystring: { after?: string } }>): number | undefined {
  const raw = (request.headers['last-event-id'] as string | undefined) ?? request.query.after
  if (raw === undefined || !/^\d{1,15}$/.test(raw.trim())) return undefined
  return Number(raw.trim())
}

export function openEventStream(
  request: FastifyRequest,
  reply: FastifyReply,
  options: StreamOptions,
  /** Called once, however the stream ends: the client left, it fell behind, or close(). */
  onEnd: () => void,
): EventStream {
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

  let ended = false
  let checking = false
  const end = (finish: () => void) => {
    if (ended) return
    ended = true
    clearInterval(heartbeat)
    finish()
    onEnd()
  }
  const checkBacklog = () => {
    checking = false
    if (raw.writableLength <= options.highWaterMark) return
    request.log.warn({ url: request.url, buffered: raw.writableLength }, 'event-stream client fell behind; closing it so it resumes')
    end(() => raw.destroy())
  }
  const heartbeat = setInterval(() => raw.write(': heartbeat\n\n'), options.heartbeatMs)
  heartbeat.unref()
  request.raw.on('close', () => end(() => raw.end()))

  return {
    send(frame) {
      if (ended) return
      raw.write(frame)
      if (!checking && raw.writableLength > options.highWaterMark) {
        checking = true
        setImmediate(checkBacklog)
      }
    },
    close: () => end(() => raw.end()),
  }
}
