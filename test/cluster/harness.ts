/**
 * What the cluster tests share: the PID-namespace wrapper, a tab that follows a thread and rotates
 * over the nodes when its stream closes, the JSON API helper, and a cluster of spawned nodes on one
 * nats-server sharing one data dir and one workspace.
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { join } from 'node:path'
import type { NatsServer } from '../support/nats-server.js'
import type { ServerProcess, spawnedServers } from '../support/spawn-server.js'

export const namespaces =
  process.getuid?.() === 0 && spawnSync('unshare', ['--pid', '--fork', '--kill-child', 'true']).status === 0
    ? ['unshare', '--pid', '--fork', '--kill-child']
    : undefined

export interface Frame {
  id: number
  event: string
  bytes: string
  data: Record<string, unknown>
}

/** A tab: follows a thread over SSE, and on a closed stream reconnects to the next node with its last seq. */
export class Follower {
  readonly frames: Frame[] = []
  readonly snapshots: Frame[] = []
  lastId: number | undefined
  #response?: IncomingMessage
  #closed = false
  #node: number

  constructor(
    private readonly urls: () => string[],
    private readonly threadId: string,
    node: number,
  ) {
    this.#node = node
    this.#connect()
  }

  #connect(): void {
    if (this.#closed) return
    const urls = this.urls()
    const base = urls[this.#node % urls.length]
    const req = httpRequest(`${base}/api/threads/${this.threadId}/follow`, {
      headers: { accept: 'text/event-stream', ...(this.lastId !== undefined ? { 'last-event-id': String(this.lastId) } : {}) },
    })
    const retry = () => {
      this.#response = undefined
      this.#node++
      if (!this.#closed) setTimeout(() => this.#connect(), 200)
    }
    req.on('error', retry)
    req.on('response', (response) => {
      this.#response = response
      let buffer = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        buffer += chunk
        let end: number
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const raw = buffer.slice(0, end + 2)
          buffer = buffer.slice(end + 2)
          const id = /^id: (\d+)$/m.exec(raw)
          const event = /^event: (.+)$/m.exec(raw)
          const data = /^data: (.*)$/m.exec(raw)
          if (!id || !event || !data) continue
          const frame = { id: Number(id[1]), event: event[1], bytes: raw, data: JSON.parse(data[1]) as Record<string, unknown> }
          if (frame.event === 'snapshot') this.snapshots.push(frame)
          else this.frames.push(frame)
          this.lastId = frame.id
        }
      })
      response.on('end', retry)
      response.on('error', () => {})
    })
    req.end()
  }

  has(predicate: (f: Frame) => boolean): boolean {
    return this.frames.some(predicate)
  }

  close(): void {
    this.#closed = true
    this.#response?.destroy()
  }
}

export async function api(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  })
  const text = await response.text()
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined }
}

export const settledRun = (run: number, aborted: boolean) => (f: Frame) => f.event === 'settled' && f.data.run === run && f.data.aborted === aborted

export async function startCluster(servers: ReturnType<typeof spawnedServers>, nats: NatsServer, names: string[], extra: string[] = []) {
  const { startProcess, tempDataDir } = servers
  const dataDir = await tempDataDir()
  const workspace = join(dataDir, 'ws')
  mkdirSync(workspace, { recursive: true })
  const nodes = new Map<string, { server: ServerProcess; url: string }>()
  const started = new Map<string, { server: ServerProcess; url: string }>()
  const start = async (name: string) => {
    const args = ['--port', '0', '--data-dir', dataDir, '--workspace', workspace, '--model', 'demo', '--demo-delay-ms', '20', '--cluster', nats.url, '--node-name', name, '--log-level', 'warn', ...extra]
    const server = startProcess(args, namespaces ? { wrap: namespaces } : {})
    started.set(name, { server, url: await server.url })
  }
  await Promise.all(names.map(start))
  for (const name of names) nodes.set(name, started.get(name)!)
  return {
    nodes,
    dataDir,
    workspace,
    urls: () => [...nodes.values()].map((n) => n.url),
    /** Starts (or restarts) a node under that name and adds it to `nodes`. */
    async start(name: string) {
      await start(name)
      nodes.set(name, started.get(name)!)
      return nodes.get(name)!
    },
  }
}

/** The node process itself (the namespace's first process when it runs in one; else the spawned child). */
export function nodePid(server: ServerProcess): number {
  const pid = server.child.pid!
  if (!namespaces) return pid
  const child = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout.trim().split('\n')[0]
  if (!child) throw new Error(`no process under ${pid} (the namespace's node)`)
  return Number(child)
}

/** PIDs of the processes whose command line contains `pattern` (the test's own pgrep left out). */
export function processesMatching(pattern: string): number[] {
  const out = spawnSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).stdout.trim()
  return out ? out.split('\n').map(Number) : []
}

/** A `--tools-policy` file that lets the model's bash run without asking (the fault tests run real tools). */
export function bashAllowedPolicy(dir: string): string {
  const file = join(dir, 'tools-policy.json')
  writeFileSync(file, JSON.stringify({ tools: { bash: 'allow' } }))
  return file
}
