/**
 * One Server-Sent Events response: headers, a `retry:` hint, heartbeats (a `heartbeat` event naming
 * its interval, at once and then at that interval), and the backlog rule.
 *
 * Frames arrive already encoded. A client is judged by sustained lag, not by one burst: a run that
 * streams as fast as the model can (thousands of frames in one tick) leaves megabytes in a fast
 * tab's buffer for a moment, and that tab is fine. A client is closed only when its backlog has
 * stayed above the high-water mark for `lagMs` without once draining (a tab that stopped reading),
 * or when the backlog passes `maxBufferedBytes` (a bound on memory, far above any burst). Its
 * EventSource then reconnects with Last-Event-ID and resumes, so a stalled tab never delays
 * anything else.
 *
 * The response is delimited by closing the connection, not by chunked transfer-encoding (valid
 * HTTP/1.1 for a response, RFC 9112 §6.3), and its frames are written to the socket itself. Every
 * follower pays for every frame, so the write is kept to the least: through Node's response each
 * frame was four writes gathered into one writev — a chunk-size line, its CRLF, the frame, a CRLF —
 * behind a cork released on the next tick, and every reader then had to decode the chunks. One
 * `socket.write` of the frame's bytes costs a follower about a third less of the server's CPU per
 * streamed chunk (bench/compare.ts, the paced scenario's slope). An event stream never ends but by
 * closing, so the connection is not kept alive for another request anyway.
 */
import type { ServerResponse } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'

export interface StreamOptions {
  heartbeatMs: number
  /** Bytes buffered for one client above which it counts as lagging. */
  highWaterMark: number
  retryMs: number
  /** How long a client may stay above the high-water mark, never draining, before it is closed. */
  lagMs?: number
  /** A client with more than this buffered is closed at once, however long it has lagged. */
  maxBufferedBytes?: number
  /** Told each time a lagging client is closed (the metrics count it). */
  onDropped?: (reason: 'lag' | 'buffer-limit') => void
  /** Told once a follow has its snapshot or resume frames: the frames after these are what it streams (the metrics count them). */
  onJoined?: (response: ServerResponse) => void
}

export const defaultStreamOptions: StreamOptions = {
  heartbeatMs: 15_000,
  highWaterMark: 1 << 20,
  retryMs: 1000,
  lagMs: 5_000,
  maxBufferedBytes: 64 << 20,
}

export interface EventStream {
  send(frame: Buffer | string): void
  /** Ends the response normally (the thread is gone, the server is closing). */
  close(): void
  /** Bytes written to this client that its socket has not yet handed to the kernel. */
  readonly buffered: number
}

/** Where a stream's bytes go: its socket, or its response (both are this much alike). */
interface Sink {
  write(chunk: Buffer | string): boolean
  readonly writableLength: number
  on(event: 'drain', listener: () => void): unknown
  off(event: 'drain', listener: () => void): unknown
}

/** `Last-Event-ID` wins over `?after=`; anything that is not a non-negative integer means "from the start". */
export function resumePoint(request: FastifyRequest<{ Querystring: { after?: string } }>): number | undefined {
  const raw = (request.headers['last-event-id'] as string | undefined) ?? request.query.after
  if (raw === undefined || !/^\d{1,15}$/.test(raw.trim())) return undefined
  return Number(raw.trim())
}

/**
 * Closing a lagging client destroys its socket, which fails every write still queued on it. Many
 * clients found lagging at once (a network switch dropping 40 tabs) are closed a few per turn of
 * the event loop, so the drops never stall the frames going to everyone else.
 */
const DROPS_PER_TURN = 4
const dropQueue: (() => void)[] = []
let dropping = false
function scheduleDrop(drop: () => void): void {
  dropQueue.push(drop)
  if (dropping) return
  dropping = true
  const turn = () => {
    for (let i = 0; i < DROPS_PER_TURN && dropQueue.length; i++) dropQueue.shift()!()
    if (dropQueue.length) setImmediate(turn)
    else dropping = false
  }
  setImmediate(turn)
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
  // Without a length or chunking, Node ends the body by closing the connection (and says `Connection: close`).
  raw.useChunkedEncodingByDefault = false
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
  })
  // The heartbeat names its interval, so a tab can tell a silent stream from a dead one
  // (follow-connection.ts); it has no id, so it moves no one's Last-Event-ID.
  const beat = `event: heartbeat\ndata: ${options.heartbeatMs}\n\n`
  raw.write(`retry: ${options.retryMs}\n\n${beat}`)
  // The head goes out now: a response corks its socket on write until the next tick (see `send`).
  if (raw.writableCorked) raw.uncork()
  raw.socket?.setNoDelay(true)
  // A response has its socket unless it waits behind another response on a kept-alive connection;
  // only then do frames go through the response, which writes them once the one before it is done.
  const out: Sink = raw.socket ?? raw

  const lagMs = options.lagMs ?? defaultStreamOptions.lagMs!
  const maxBuffered = Math.max(options.maxBufferedBytes ?? defaultStreamOptions.maxBufferedBytes!, options.highWaterMark)
  let ended = false
  /** When the backlog last went above the high-water mark without draining since; undefined while it is below. */
  let lagSince: number | undefined
  let timer: NodeJS.Timeout | undefined
  let dropQueued = false
  let urgent = false
  const end = (finish: () => void) => {
    if (ended) return
    ended = true
    clearInterval(heartbeat)
    if (timer) clearTimeout(timer)
    out.off('drain', drained)
    finish()
    onEnd()
  }
  const drop = (why: string) => {
    if (ended || dropQueued) return
    dropQueued = true
    options.onDropped?.(why === 'over the buffer limit' ? 'buffer-limit' : 'lag')
    request.log.warn({ url: request.url, buffered: raw.writableLength, why }, 'event-stream client fell behind; closing it so it resumes')
    scheduleDrop(() => end(() => raw.destroy()))
  }
  // Judged after the socket has had its chances to flush: right after a burst, even a fast client's
  // backlog is large (what the kernel's buffer has not taken yet).
  const check = () => {
    timer = undefined
    urgent = false
    if (ended) return
    const buffered = out.writableLength
    if (buffered > maxBuffered) return drop('over the buffer limit')
    if (buffered <= options.highWaterMark) {
      lagSince = undefined
      return
    }
    lagSince ??= performance.now()
    const lagged = performance.now() - lagSince
    if (lagged >= lagMs) return drop(`above the high-water mark for ${Math.round(lagged)} ms`)
    timer = setTimeout(check, Math.max(1, lagMs - lagged))
    timer.unref()
  }
  /** The socket emptied its buffer: whatever lag there was is over. */
  function drained() {
    lagSince = undefined
  }
  out.on('drain', drained)
  const heartbeat = setInterval(() => write(beat), options.heartbeatMs)
  heartbeat.unref()
  request.raw.on('close', () => end(() => raw.end()))
  function write(frame: Buffer | string): void {
    out.write(frame)
    // A response corks itself on write and uncorks on the next tick, which comes only once the
    // microtask queue is empty: after whatever this frame lets run (a settled dialog resumes the
    // extension's run there, for milliseconds). Frames come here already joined: send them now.
    if (out === raw && raw.writableCorked) raw.uncork()
  }

  return {
    send(frame) {
      if (ended) return
      write(frame)
      const buffered = out.writableLength
      if (buffered <= options.highWaterMark) return
      if (buffered > maxBuffered && !urgent) {
        // Looked at again once the socket has had its chance to flush.
        urgent = true
        if (timer) clearTimeout(timer)
        timer = setTimeout(check, 0)
        return
      }
      if (lagSince === undefined) {
        lagSince = performance.now()
        if (timer) clearTimeout(timer)
        timer = setTimeout(check, lagMs)
        timer.unref()
      }
    },
    close: () => end(() => raw.end()),
    get buffered() {
      return out.writableLength
    },
  }
}
