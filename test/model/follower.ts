/**
 * A tab following a thread over a real socket: every connection it made, every frame each one got
 * (raw bytes and parsed), and whether the server ended it. A test-only `mutate` lets the walk prove
 * its own invariants bite (a follower-side corruption must be caught and shrunk).
 */
import { project } from '../../src/shared/projection.js'
import type { Snapshot } from '../../src/schemas/index.js'

export interface Frame {
  seq: number
  event: string
  data: any
  raw: string
}

export interface Connection {
  /** The Last-Event-ID it resumed with, if any. */
  after?: number
  /** This connection came after a server restart: a snapshot must be strictly above `after`. */
  afterRestart: boolean
  status: number
  frames: Frame[]
  ended: boolean
  lastSeq?: number
  /** The first frame it got (a snapshot, or the frame after its Last-Event-ID). */
  first?: Frame
  /** The snapshot it started from, folded with every frame since (projection.ts), when it started from a snapshot. */
  view?: Snapshot
  /** Frames dropped from the front of `frames` to bound memory on long walks. */
  dropped: number
  controller: AbortController
}

export class Follower {
  readonly conns: Connection[] = []

  constructor(
    readonly name: string,
    readonly onFrame: (follower: Follower, conn: Connection, frame: Frame) => void,
    readonly mutate?: (raw: string) => string,
  ) {}

  get current(): Connection | undefined {
    return this.conns.at(-1)
  }

  /** The highest seq this tab has taken, over all its connections. */
  get lastSeq(): number {
    let max = 0
    for (const c of this.conns) if (c.lastSeq !== undefined && c.lastSeq > max) max = c.lastSeq
    return max
  }

  async open(url: string, threadId: string, opts: { after?: number; afterRestart?: boolean } = {}): Promise<Connection> {
    const controller = new AbortController()
    const conn: Connection = { after: opts.after, afterRestart: opts.afterRestart ?? false, status: 0, frames: [], ended: false, dropped: 0, controller }
    this.conns.push(conn)
    const headers: Record<string, string> = { accept: 'text/event-stream' }
    if (opts.after !== undefined) headers['last-event-id'] = String(opts.after)
    const response = await fetch(`${url}/api/threads/${threadId}/follow`, { headers, signal: controller.signal })
    conn.status = response.status
    if (!response.ok || !response.body) {
      conn.ended = true
      await response.text().catch(() => {})
      return conn
    }
    void this.#pump(conn, response.body)
    return conn
  }

  async #pump(conn: Connection, body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder()
    let buffer = ''
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true })
        let cut: number
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut + 2)
          buffer = buffer.slice(cut + 2)
          this.#take(conn, this.mutate ? this.mutate(block) : block)
        }
      }
    } catch {
      // closed by us
    }
    conn.ended = true
  }

  #take(conn: Connection, raw: string): void {
    let id: string | undefined
    let event: string | undefined
    let data = ''
    for (const line of raw.split('\n')) {
      if (line.startsWith('id: ')) id = line.slice(4)
      else if (line.startsWith('event: ')) event = line.slice(7)
      else if (line.startsWith('data: ')) data += line.slice(6)
    }
    if (!event || event === 'heartbeat') return // retry hint, heartbeat
    const frame: Frame = { seq: Number(id), event, data: JSON.parse(data), raw }
    conn.frames.push(frame)
    if (!conn.first) conn.first = frame
    if (frame.event === 'snapshot') conn.view = frame.data
    else if (conn.view) conn.view = project(conn.view, frame.data)
    this.onFrame(this, conn, frame)
    conn.lastSeq = frame.seq
  }

  /** Waits for the current connection's first frame. */
  async first(timeoutMs = 5000): Promise<Frame | undefined> {
    const conn = this.current
    const until = Date.now() + timeoutMs
    while (conn && !conn.first && !conn.ended && Date.now() < until) await sleep(2)
    return conn?.first
  }

  closeCurrent(): void {
    this.current?.controller.abort()
  }

  close(): void {
    for (const c of this.conns) c.controller.abort()
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
