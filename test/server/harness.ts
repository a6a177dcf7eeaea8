/**
 * A real threadhost on a real socket for server tests: the pi runtime on the demo model, a temp
 * data directory, and an SSE reader that keeps every frame it saw (raw and parsed).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { ExtensionFactory } from '@earendil-works/pi-coding-agent'
import { ThreadRegistry, type RegistryOptions } from '../../src/host/thread-registry.js'
import { Workspaces } from '../../src/host/workspaces.js'
import { createPiRuntimeFactory, PiModels } from '../../src/runtime/index.js'
import { buildApp, type AppOptions } from '../../src/server/app.js'
import { debugRoutes } from '../../src/server/debug-routes.js'

export interface Harness {
  url: string
  app: FastifyInstance
  registry: ThreadRegistry
  dataDir: string
  close(opts?: { keepData?: boolean }): Promise<void>
}

const quiet = { info() {}, warn() {}, error() {} }

/**
 * Registry options on the real pi runtime: the demo model, `<dataDir>/agent` as the agent dir (a
 * fresh machine unless the test puts pi files there) and the data dir as the one workspace root.
 */
export async function piHost(
  dataDir: string,
  options: { demoDelayMs?: number; idleMs?: number; agentDir?: string; workspaces?: string[]; extraExtensions?: ExtensionFactory[] } = {},
): Promise<RegistryOptions> {
  const agentDir = options.agentDir ?? join(dataDir, 'agent')
  const models = await PiModels.create({ agentDir, demoDelayMs: options.demoDelayMs ?? 2 })
  return {
    dataDir,
    runtimes: createPiRuntimeFactory({
      dataDir,
      agentDir,
      models,
      log: quiet,
      ...(options.extraExtensions ? { extraExtensions: () => options.extraExtensions! } : {}),
    }),
    models,
    workspaces: new Workspaces(options.workspaces ?? [dataDir]),
    defaultModel: 'demo',
    idleMs: options.idleMs ?? 600_000,
  }
}

export async function startHarness(
  options: {
    dataDir?: string
    demoDelayMs?: number
    idleMs?: number
    agentDir?: string
    workspaces?: string[]
    /** Third-party-style extensions loaded into every thread's pi session. */
    extraExtensions?: ExtensionFactory[]
    /** The inspector's routes too, as `npm start` on loopback has them. */
    inspector?: boolean
  } & Partial<AppOptions> = {},
): Promise<Harness> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'threadhost-server-')))
  const registry = await ThreadRegistry.open(await piHost(dataDir, options))
  const plugins = [...(options.plugins ?? []), ...(options.inspector ? [debugRoutes({ registry })] : [])]
  const app = await buildApp({ registry, ...options, plugins })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  return {
    url,
    app,
    registry,
    dataDir,
    async close({ keepData = false } = {}) {
      await registry.shutdown()
      await app.close()
      if (!keepData) await rm(dataDir, { recursive: true, force: true })
    },
  }
}

/** `extensions` on `GET /api/health` when the agent dir holds none. */
export const NO_EXTENSIONS = { loaded: 0, failed: 0, clashes: 0 }

export async function api(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url + path, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await response.text()
  let json: any
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = text
  }
  return { status: response.status, body: json, headers: response.headers }
}

export interface Frame {
  id?: string
  event: string
  data: any
  raw: string
}

/** Follows a thread over a real socket and keeps every frame. */
export class SseClient {
  readonly frames: Frame[] = []
  readonly #controller = new AbortController()
  #buffer = ''
  #waiters: { match: (f: Frame) => boolean; resolve: (f: Frame) => void }[] = []
  ended = false
  status = 0

  static async open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const client = new SseClient()
    const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: client.#controller.signal })
    client.status = response.status
    if (!response.ok || !response.body) {
      client.ended = true
      return client
    }
    void client.#pump(response.body)
    return client
  }

  async #pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder()
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        this.#buffer += decoder.decode(chunk, { stream: true })
        let cut: number
        while ((cut = this.#buffer.indexOf('\n\n')) >= 0) {
          const block = this.#buffer.slice(0, cut + 2)
          this.#buffer = this.#buffer.slice(cut + 2)
          this.#take(block)
        }
      }
    } catch {
      // aborted by close()
    }
    this.ended = true
  }

  #take(raw: string): void {
    const frame: Partial<Frame> = { raw }
    let data = ''
    for (const line of raw.split('\n')) {
      if (line.startsWith('id: ')) frame.id = line.slice(4)
      else if (line.startsWith('event: ')) frame.event = line.slice(7)
      else if (line.startsWith('data: ')) data += line.slice(6)
    }
    if (!frame.event || frame.event === 'heartbeat') return // retry hints and heartbeats
    frame.data = JSON.parse(data)
    this.frames.push(frame as Frame)
    for (const w of this.#waiters.filter((w) => w.match(frame as Frame))) {
      this.#waiters.splice(this.#waiters.indexOf(w), 1)
      w.resolve(frame as Frame)
    }
  }

  /** The first frame (already seen or still to come) that matches. */
  waitFor(match: (f: Frame) => boolean, timeoutMs = 10_000): Promise<Frame> {
    const seen = this.frames.find(match)
    if (seen) return Promise.resolve(seen)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching frame within ${timeoutMs} ms; saw ${this.frames.map((f) => f.event).join(', ')}`)), timeoutMs)
      this.#waiters.push({ match, resolve: (f) => (clearTimeout(timer), resolve(f)) })
    })
  }

  events(): string[] {
    return this.frames.map((f) => f.event)
  }

  close(): void {
    this.#controller.abort()
  }
}

export const is = (event: string, extra: Record<string, unknown> = {}) => (f: Frame) =>
  f.event === event && Object.entries(extra).every(([k, v]) => f.data[k] === v)

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
