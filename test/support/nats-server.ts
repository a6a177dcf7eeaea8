/**
 * A real `nats-server -js` for the cluster tests: on loopback, a free port, a temp store dir, stopped
 * by its PID. Where Debian's nats-server is not installed (`apt-get install nats-server`), `natsMissing`
 * says so and the tests that need it are skipped with that message. `kill` and `restart` are an
 * engine outage: the same port and the same store dir, so what the engine had acknowledged is back.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const natsMissing: string | undefined =
  spawnSync('nats-server', ['--version'], { stdio: 'ignore' }).status === 0
    ? undefined
    : 'nats-server is not installed: the cluster tests need Debian\'s nats-server (apt-get install -y nats-server); skipped'

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
    server.on('error', reject)
  })
}

export interface NatsServer {
  url: string
  /** The running process (a new one after `restart`). */
  readonly child: ChildProcess
  /** kill -9 of the engine; resolves once it has exited. */
  kill(): Promise<void>
  /** Starts it again on the same port and store dir (after `kill`, or kills it first); resolves once it is ready. */
  restart(): Promise<void>
  stop(): Promise<void>
}

/** `args`: more of nats-server's flags (its sign-in, TLS, a config file), after the ones every test server has. */
export async function startNats(options: { args?: string[] } = {}): Promise<NatsServer> {
  const dir = mkdtempSync(join(tmpdir(), 'threadhost-nats-'))
  const port = await freePort()
  const launch = async () => {
    const child = spawn('nats-server', ['-js', '-sd', dir, '-a', '127.0.0.1', '-p', String(port), ...(options.args ?? [])], { stdio: ['ignore', 'pipe', 'pipe'] })
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
    let output = ''
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        if (/Server is ready/.test(output)) resolve()
      }
      child.stdout!.on('data', onData)
      child.stderr!.on('data', onData)
      child.on('exit', (code) => reject(new Error(`nats-server exited (${code}):\n${output}`)))
    })
    return { child, exited }
  }
  let current = await launch()
  const kill = async () => {
    const { child, exited } = current
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await exited
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    get child() {
      return current.child
    },
    kill,
    async restart() {
      await kill()
      current = await launch()
    },
    async stop() {
      await kill()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
