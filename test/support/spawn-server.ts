/**
 * threadhost as its own process, for the tests that signal, kill and restart it, the e2e suite and
 * the benches: one way to start it, to know its URL, and to stop it. The server is node running
 * `src/server/main.ts` under tsx (or the compiled `dist/server/main.js`) directly — one process, so a
 * signal reaches the server itself, not a wrapper.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, afterEach } from 'vitest'

const root = resolve(import.meta.dirname, '../..')

export interface SpawnOptions {
  /** threadhost's own flags (or the script's, with `script`). */
  args: string[]
  /** `tsx` (default): src/server/main.ts from the sources; `compiled`: dist/server/main.js (`npm run build:server`). */
  entry?: 'tsx' | 'compiled'
  /** Another node server instead of threadhost (the bench's baseline); it too prints `<name> listening on <url>`. */
  script?: string
  /** node's flags before the entry, e.g. the bench's `['--expose-gc', '--import', 'bench/probe.mjs']`. */
  node?: string[]
  /** A command the server runs under (e.g. one that mounts its data dir read-only first). */
  wrap?: string[]
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv
  /** An IPC channel to the server (the bench's probe answers on it). */
  ipc?: boolean
}

export interface ServerProcess {
  child: ChildProcess
  /** Resolves with the URL it printed once it listens; rejects if it exits first. */
  url: Promise<string>
  /** What it wrote to stdout and stderr (the last megabyte). */
  output: () => string
  /** The exit code, or -1 when a signal ended it. */
  exit: Promise<number | null>
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves with how it exited. */
  stop(graceMs?: number): Promise<number | null>
}

const LISTENING = /^\S+ listening on (http:\/\/\S+)\r?\n/m
const KEPT = 1 << 20

export function spawnServer(options: SpawnOptions): ServerProcess {
  const entry = options.script ?? (options.entry === 'compiled' ? join(root, 'dist/server/main.js') : join(root, 'src/server/main.ts'))
  const loader = options.script === undefined && options.entry !== 'compiled' ? ['--import', 'tsx'] : []
  const command = [...(options.wrap ?? []), process.execPath, ...(options.node ?? []), ...loader, entry, ...options.args]
  const child = spawn(command[0], command.slice(1), {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe', ...(options.ipc ? (['ipc'] as const) : [])],
    env: { ...process.env, NO_COLOR: '1', ...options.env },
  })
  let output = ''
  let listening = false
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))))
  const url = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (output.length > 2 * KEPT) output = output.slice(-KEPT)
      const match = listening ? null : LISTENING.exec(output)
      if (match) {
        listening = true
        resolve(match[1].replace(/\/$/, ''))
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.on('exit', (code, signal) => reject(new Error(`the server exited (${code ?? signal}) before it listened:\n${output}`)))
  })
  // A start that fails is the caller's to await; an unawaited one is no unhandled rejection.
  url.catch(() => {})
  return {
    child,
    url,
    output: () => output,
    exit,
    async stop(graceMs = 20_000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
        await exit
        clearTimeout(timer)
      }
      return exit
    },
  }
}

/**
 * The server with the test's own pi agent dir (never the developer's ~/.pi), killed when the
 * test's cleanups run.
 */
export function startProcess(
  args: string[],
  options: { agentDir: string; cleanups: (() => unknown)[]; wrap?: string[] },
): ServerProcess {
  const server = spawnServer({ args, env: { PI_CODING_AGENT_DIR: options.agentDir }, ...(options.wrap ? { wrap: options.wrap } : {}) })
  options.cleanups.push(() => void server.child.kill('SIGKILL'))
  return server
}

/**
 * The setup every test file that spawns the server shares: cleanups run (last first) after each
 * test, one empty agent dir for the file, and data dirs in the temp folder that go with the test.
 */
export function spawnedServers(name: string): {
  cleanups: (() => unknown)[]
  agentDir: string
  startProcess: (args: string[], options?: { wrap?: string[] }) => ServerProcess
  tempDataDir: () => Promise<string>
} {
  const cleanups: (() => unknown)[] = []
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })
  const agentDir = mkdtempSync(join(tmpdir(), 'threadhost-agent-'))
  afterAll(() => rmSync(agentDir, { recursive: true, force: true }))
  return {
    cleanups,
    agentDir,
    startProcess: (args, options = {}) => startProcess(args, { agentDir, cleanups, ...options }),
    async tempDataDir() {
      const dir = await mkdtemp(join(tmpdir(), `threadhost-${name}-`))
      cleanups.push(() => rm(dir, { recursive: true, force: true }))
      return dir
    },
  }
}
