/**
 * The real threadhost for the model walk: the pi runtime on the demo model, in this process, with
 * one probe around the runtime factory — it counts, per thread and run, how often the host tells
 * the runtime to stop (the oracle checks "at most once per run", and exactly when the machine did).
 * The probe only observes: every call goes through to pi unchanged.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import type { AgentRuntime, RuntimeFactory } from '../../src/runtime/port.js'
import { buildApp } from '../../src/server/app.js'
import { piHost } from '../server/harness.js'

export interface AbortRecord {
  /** The run the runtime was last asked to start. */
  run: number
  /** Stops told while the thread was not being released, per run. */
  aborts: Map<number, number>
  /** Set by the walk just before it deletes the thread or shuts the server down: the release's own stop is not a "tell". */
  releasing: boolean
}

export class AbortProbe {
  readonly threads = new Map<string, AbortRecord>()

  record(threadId: string): AbortRecord {
    let r = this.threads.get(threadId)
    if (!r) this.threads.set(threadId, (r = { run: 0, aborts: new Map(), releasing: false }))
    return r
  }

  wrap(factory: RuntimeFactory): RuntimeFactory {
    return {
      create: async (options) => {
        const runtime: AgentRuntime = await factory.create(options)
        const rec = this.record(options.threadId)
        rec.releasing = false
        const prompt = runtime.prompt.bind(runtime)
        const abort = runtime.abort.bind(runtime)
        runtime.prompt = (p, run) => {
          rec.run = run
          return prompt(p, run)
        }
        runtime.abort = () => {
          if (!rec.releasing) rec.aborts.set(rec.run, (rec.aborts.get(rec.run) ?? 0) + 1)
          return abort()
        }
        return runtime
      },
      ...(factory.listPersisted ? { listPersisted: () => factory.listPersisted!() } : {}),
      readTranscript: (id) => factory.readTranscript(id),
      remove: (id) => factory.remove(id),
    }
  }
}

export interface ModelServer {
  url: string
  app: FastifyInstance
  registry: ThreadRegistry
  dataDir: string
  probe: AbortProbe
  /** A graceful shutdown (what SIGTERM does), keeping the data dir for the next start. */
  stop(): Promise<void>
  close(): Promise<void>
}

/** The walk's own pi agent dir: one extension that reaches the machine where the demo model cannot. */
const WALK_AGENT = fileURLToPath(new URL('../fixtures/walk-agent', import.meta.url))

export interface ModelServerOptions {
  dataDir?: string
  demoDelayMs?: number
  probe?: AbortProbe
  /** The idle timeout (default 10 minutes: never, within a walk). */
  idleMs?: number
  /** Load the walk's extension (test/fixtures/walk-agent), copied into the data dir as its agent dir. */
  levers?: boolean
}

export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'threadhost-model-')))
  const probe = options.probe ?? new AbortProbe()
  const agentDir = join(dataDir, 'agent')
  if (options.levers) await cp(WALK_AGENT, agentDir, { recursive: true })
  const host = await piHost(dataDir, { demoDelayMs: options.demoDelayMs ?? 2, agentDir, ...(options.idleMs ? { idleMs: options.idleMs } : {}) })
  const registry = await ThreadRegistry.open({ ...host, runtimes: probe.wrap(host.runtimes) })
  const app = await buildApp({ registry })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    await registry.shutdown()
    await app.close()
  }
  return {
    url,
    app,
    registry,
    dataDir,
    probe,
    stop,
    async close() {
      await stop()
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}
