/**
 * threadhost as its own process (`src/server/main.ts` under tsx), for tests that signal, kill and
 * restart it. The pi agent dir is the test's own, never the developer's ~/.pi.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach } from 'vitest'

export interface ServerProcess {
  child: ChildProcess
  /** Resolves with the URL once it listens; rejects if it exits first. */
  url: Promise<string>
  output: () => string
  /** The exit code, or -1 when a signal ended it. */
  exit: Promise<number | null>
}

/** Starts the server; the process is killed when the test's cleanups run. */
export function startProcess(
  args: string[],
  /** `wrap`: a command the server runs under (e.g. one that mounts its data dir read-only first). */
  options: { agentDir: string; cleanups: (() => unknown)[]; wrap?: string[] },
): ServerProcess {
  const env = { ...process.env, PI_CODING_AGENT_DIR: options.agentDir }
  const command = [...(options.wrap ?? []), process.execPath, '--import', 'tsx', 'src/server/main.ts', ...args]
  const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env })
  let output = ''
  const url = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /threadhost listening on (http:\/\/\S+)/.exec(output)
      if (match) resolve(match[1])
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.on('exit', () => reject(new Error(`exited before listening:\n${output}`)))
  })
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))))
  options.cleanups.push(() => void child.kill('SIGKILL'))
  return { child, url, output: () => output, exit }
}

/**
 * The setup every file that spawns the server shares: cleanups run (last first) after each test,
 * one empty agent dir for the file, and data dirs in the temp folder that go with the test.
 */
export function spawnedServers(name: string): {
  cleanups: (() => unknown)[]
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
    startProcess: (args, options = {}) => startProcess(args, { agentDir, cleanups, ...options }),
    async tempDataDir() {
      const dir = await mkdtemp(join(tmpdir(), `threadhost-${name}-`))
      cleanups.push(() => rm(dir, { recursive: true, force: true }))
      return dir
    },
  }
}
