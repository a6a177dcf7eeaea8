/**
 * The pi-host floor of `npm run bench`: pi itself plus the least a host of followed threads must do.
 *
 * Each thread is one pi `AgentSession` built as pi's SDK documents it (docs/sdk.md: `createAgentSession`
 * with a `ModelRuntime`, file-backed `SettingsManager` and `SessionManager`, a `DefaultResourceLoader`
 * with no extensions), on the same `demo` model and pacing as threadhost's (`--demo-delay-ms`). Each
 * pi event is mapped to threadhost's frame (the same mapper and encoder), numbered, encoded once and
 * written to every follower at once, one `res.write` per frame per follower. No machines, journal,
 * projection, policy, ring or extensions; a follower with more than 1 MiB buffered is closed.
 *
 * It speaks the part of threadhost's API the bench uses, so a scenario runs against it unchanged:
 *   GET  /api/threads                 200 [] (the start-up probe)
 *   POST /api/threads {id}            201; the session is built at the first prompt, as threadhost's runtime is
 *   GET  /api/threads/:id             {busy, run}
 *   POST /api/threads/:id/prompt      202 {run}: `session.prompt(message)`; 409 while a run is in flight
 *   POST /api/threads/:id/abort       200 once `session.abort()` resolved
 *   GET  /api/threads/:id/follow      SSE: a status frame, then every frame
 * A run is bracketed by two status frames (`busy` true, then false), as threadhost's is.
 *
 * Not a server anyone should run: bench/compare.ts builds it with esbuild (like bench/pi-heap.ts) and
 * starts it with bench/probe.mjs preloaded.
 */
import { mkdirSync, mkdtempSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAgentSession, DefaultResourceLoader, ModelRuntime, SessionManager, SettingsManager, type AgentSession } from '@earendil-works/pi-coding-agent'
import { createDemoProvider } from '../src/runtime/demo-model.js'
import { EventMapper } from '../src/runtime/map-events.js'
import { encodeObservation } from '../src/host/frame.js'
import type { Observation, ObservationInput } from '../src/schemas/index.js'

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : fallback
}
const port = Number(arg('--port', '0'))
const delayMs = Number(arg('--demo-delay-ms', '0'))
const dir = arg('--data-dir', '') || mkdtempSync(join(tmpdir(), 'threadhost-bench-floor-'))
const agentDir = join(dir, 'agent')
const cwd = dir
mkdirSync(agentDir, { recursive: true })
const HWM = 1 << 20

const modelRuntime = await ModelRuntime.create({ authPath: join(agentDir, 'auth.json'), modelsPath: join(agentDir, 'models.json'), allowModelNetwork: false })
const demo = createDemoProvider({ delayMs })
modelRuntime.registerNativeProvider(demo.provider)

class Thread {
  session?: AgentSession
  seq = 0
  run = 0
  busy = false
  readonly followers = new Set<ServerResponse>()
  #messageId = ''
  readonly #mapper = new EventMapper({ userMessageId: () => this.#messageId })

  constructor(readonly id: string) {}

  async build(): Promise<AgentSession> {
    const settingsManager = SettingsManager.create(cwd, agentDir)
    const resourceLoader = new DefaultResourceLoader({ cwd, agentDir, settingsManager, noExtensions: true })
    await resourceLoader.reload()
    const sessionDir = join(dir, 'sessions', this.id)
    mkdirSync(sessionDir, { recursive: true })
    const { session } = await createAgentSession({ cwd, agentDir, modelRuntime, model: demo.model, settingsManager, resourceLoader, sessionManager: SessionManager.create(cwd, sessionDir) })
    session.subscribe((event) => {
      for (const runtimeEvent of this.#mapper.map(event)) this.append(runtimeEvent.type === 'user-message' ? { ...runtimeEvent, run: this.run } : runtimeEvent)
    })
    return session
  }

  append(input: ObservationInput | Record<string, unknown>): void {
    const frame = encodeObservation({ ...input, seq: ++this.seq } as Observation)
    for (const res of this.followers) {
      res.write(frame)
      if (res.writableLength > HWM) {
        this.followers.delete(res)
        res.destroy()
      }
    }
  }

  status(): void {
    this.append({ type: 'status', live: true, busy: this.busy, run: this.run })
  }

  async prompt(message: string): Promise<void> {
    this.session ??= await this.build()
    this.#messageId = `m${this.run}`
    try {
      await this.session.prompt(message)
    } catch (error) {
      this.append({ type: 'failure', message: String(error) })
    }
    this.busy = false
    this.status()
  }
}

const threads = new Map<string, Thread>()

const readJson = (req: IncomingMessage) =>
  new Promise<any>((resolve) => {
    const parts: Buffer[] = []
    req.on('data', (d: Buffer) => parts.push(d))
    req.on('end', () => {
      try {
        resolve(parts.length ? JSON.parse(Buffer.concat(parts).toString()) : {})
      } catch {
        resolve({})
      }
    })
  })

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}

const server = createServer(async (req, res) => {
  const [, api, route, id, action] = (req.url ?? '/').split('?')[0].split('/')
  if (api !== 'api' || route !== 'threads') return json(res, 404, {})
  if (!id) {
    if (req.method === 'GET') return json(res, 200, [])
    const body = await readJson(req)
    const thread = new Thread(String(body.id ?? `t${threads.size + 1}`))
    threads.set(thread.id, thread)
    return json(res, 201, { id: thread.id })
  }
  const thread = threads.get(id)
  if (!thread) return json(res, 404, {})
  if (req.method === 'GET' && !action) return json(res, 200, { id, busy: thread.busy, run: thread.run })
  if (req.method === 'GET' && action === 'follow') {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' })
    res.write('retry: 1000\n\n')
    res.socket?.setNoDelay(true)
    res.write(encodeObservation({ type: 'status', live: true, busy: thread.busy, run: thread.run, seq: thread.seq } as Observation))
    thread.followers.add(res)
    req.on('close', () => thread.followers.delete(res))
    return
  }
  if (req.method === 'POST' && action === 'prompt') {
    const body = await readJson(req)
    if (thread.busy) return json(res, 409, { error: 'busy' })
    thread.busy = true
    thread.run++
    thread.status()
    json(res, 202, { run: thread.run, queued: false })
    return void thread.prompt(String(body.message ?? ''))
  }
  if (req.method === 'POST' && action === 'abort') {
    await readJson(req)
    await thread.session?.abort()
    return json(res, 200, {})
  }
  json(res, 404, {})
})
server.listen(port, '127.0.0.1', () => {
  const address = server.address()
  console.log(`pi-floor listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}`)
})
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0))
