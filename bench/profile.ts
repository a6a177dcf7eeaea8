/**
 * `node --import tsx bench/profile.ts [words] [runs]`: where the server's CPU goes per streamed
 * delta. Starts the compiled server as `npm run bench` does (with bench/probe.mjs preloaded), follows
 * one thread with one raw-socket follower, runs `slow <words>` (default 10 000) `runs` times (default
 * 3) with `--demo-delay-ms 0` while V8's CPU profiler samples the server (started and stopped over
 * the probe, so start-up is not in it), and prints the self time per part (pi, the host, node, GC)
 * and per function, per delivered frame.
 *
 * Not a test and not part of `npm run bench`: a tool for reading the hot path. The profile is kept
 * (its path is printed) for Chrome DevTools.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { SourceMap } from 'node:module'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { spawnServer } from '../test/support/spawn-server.js'

const root = resolve(import.meta.dirname, '..')
const WORDS = Number(process.argv[2] ?? 10_000)
const RUNS = Number(process.argv[3] ?? 3)
const TOP = Number(process.env.PROFILE_TOP ?? 30)

interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }
  children?: number[]
}
interface Profile {
  nodes: Node[]
  samples: number[]
  timeDeltas: number[]
  startTime: number
  endTime: number
}

/** Self time per function (µs), from a .cpuprofile. */
export function selfTimes(profile: Profile): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, Node>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n)
  const out = new Map<string, number>()
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i])!
    let key = frameKey(node.callFrame)
    // A native call made by the store is node:sqlite's statement or commit (fsync included).
    const caller = parent.get(node.id)
    if (!node.callFrame.url && caller && / src\/host\/store\/sqlite(\.ts|\/)/.test(frameKey(caller.callFrame))) key = `${node.callFrame.functionName} (node:sqlite)`
    out.set(key, (out.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0))
  }
  return out
}

/** The compiled server's source maps (its entry and its chunks), so a function is named by its place in src/, not in the build. */
const built = join(root, 'dist/server')
const bundleMaps = new Map<string, SourceMap>(
  (existsSync(built) ? readdirSync(built) : []).filter((f) => f.endsWith('.js.map')).map((f) => [f.slice(0, -'.map'.length), new SourceMap(JSON.parse(readFileSync(join(built, f), 'utf8')))]),
)

function frameKey(f: Node['callFrame']): string {
  const bundleMap = f.url.includes('dist/server/') ? bundleMaps.get(f.url.slice(f.url.lastIndexOf('/') + 1)) : undefined
  if (bundleMap) {
    const entry = bundleMap.findEntry(f.lineNumber, f.columnNumber) as { originalSource?: string; originalLine?: number }
    if (entry.originalSource) return `${f.functionName || '(anonymous)'} ${entry.originalSource.replace(/.*?\/src\//, 'src/')}:${(entry.originalLine ?? 0) + 1}`
  }
  return `${f.functionName || '(anonymous)'} ${where(f.url)}:${f.lineNumber + 1}`
}

/** A short place: the package a file belongs to, or the project path. */
function where(url: string): string {
  if (!url) return '(native)'
  const nm = url.lastIndexOf('node_modules/')
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length)
  if (url.startsWith('node:')) return url
  return url.replace(/^file:\/\//, '').replace(root + '/', '')
}

/** Which part of the system a function belongs to. */
export function owner(key: string): string {
  if (key.includes('@earendil-works/')) return 'pi'
  if (key.includes('(node:sqlite)')) return 'sqlite (journal commits)'
  // The demo model stands in for the LLM provider: a real one would parse a network stream instead.
  if (key.includes(' src/runtime/demo-model.ts')) return 'demo model'
  if (/ (dist|src)\//.test(key)) return 'host'
  if (key.includes(' node:')) return 'node'
  if (key.startsWith('(garbage collector)')) return 'gc'
  if (key.startsWith('(program)') || key.startsWith('(idle)') || key.includes('(native)')) return 'vm/native'
  return 'other packages'
}

function follow(port: number, path: string, onData: (chunk: Buffer) => void): Promise<() => void> {
  return new Promise((resolveOpen) => {
    const sock = connect(port, '127.0.0.1')
    sock.setNoDelay(true)
    sock.once('connect', () => sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`))
    sock.once('data', () => resolveOpen(() => sock.destroy()))
    sock.on('data', onData)
    sock.on('error', () => {})
  })
}

async function main() {
  const { buildServer, serverStale } = (await import(join(root, 'scripts/build-server.mjs'))) as { buildServer(): Promise<void>; serverStale(): boolean }
  if (serverStale()) await buildServer()
  const dir = mkdtempSync(join(tmpdir(), 'threadhost-profile-'))
  const server = spawnServer({
    entry: 'compiled',
    node: ['--expose-gc', '--import', join(root, 'bench/probe.mjs'), '--enable-source-maps'],
    args: ['--port', '0', '--data-dir', dir, '--agent-dir', join(dir, 'agent'), '--workspace', dir, '--model', 'demo', '--demo-delay-ms', '0', '--inspector', 'off'],
    ipc: true,
  })
  const proc = server.child
  const probe = (message: object) =>
    new Promise<any>((ok) => {
      proc.once('message', ok)
      proc.send!(message)
    })
  const url = (await server.url).replace('localhost', '127.0.0.1')
  const port = Number(new URL(url).port)
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(url + path, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined })
    return r.json().catch(() => undefined)
  }
  await api('POST', '/api/threads', { id: 'p' })
  let frames = 0
  let seen = ''
  let waitFor: { marker: string; done: () => void } | undefined
  const stop = await follow(port, '/api/threads/p/follow', (chunk) => {
    const text = chunk.toString('latin1')
    frames += text.split('\nevent: ').length - 1
    seen = (seen + text).slice(-200)
    if (waitFor && seen.includes(waitFor.marker)) {
      const w = waitFor
      waitFor = undefined
      w.done()
    }
  })
  const runTo = (run: number, message: string) =>
    new Promise<void>((done) => {
      waitFor = { marker: `"busy":false,"run":${run},`, done }
      void api('POST', '/api/threads/p/prompt', { message })
    })
  await runTo(1, 'warm up')
  // A first run warms the JIT, as the bench's warm-up does; only the runs after it are sampled.
  await runTo(2, `slow ${WORDS}`)
  const framesBefore = frames
  await probe({ probe: 'prof-start' })
  for (let r = 0; r < RUNS; r++) await runTo(3 + r, `slow ${WORDS}`)
  const { profile: text } = await probe({ probe: 'prof-stop' })
  const delivered = frames - framesBefore
  // Then the same runs again under the sampling heap profiler: what is allocated per frame, and by whom.
  await probe({ probe: 'alloc-start' })
  for (let r = 0; r < RUNS; r++) await runTo(3 + RUNS + r, `slow ${WORDS}`)
  const { profile: allocText } = await probe({ probe: 'alloc-stop' })
  stop()
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
  const file = join(tmpdir(), `threadhost-${Date.now()}.cpuprofile`)
  writeFileSync(file, text)
  const profile = JSON.parse(text) as Profile
  const times = selfTimes(profile)
  // The profiler's own work (the inspector session answering Profiler.stop) is not the server's.
  for (const k of [...times.keys()]) if (k.startsWith('post node:inspector')) times.delete(k)
  const total = [...times.values()].reduce((a, b) => a + b, 0)
  const idle = [...times.entries()].filter(([k]) => k.startsWith('(idle)')).reduce((a, [, v]) => a + v, 0)
  const busy = total - idle
  console.log(`${delivered} frames delivered to one follower over ${RUNS} × slow ${WORDS}; profile ${file}`)
  console.log(`main thread busy ${(busy / 1000).toFixed(0)} ms of ${(total / 1000).toFixed(0)} ms sampled \n`)
  const byOwner = new Map<string, number>()
  for (const [k, v] of times) if (!k.startsWith('(idle)')) byOwner.set(owner(k), (byOwner.get(owner(k)) ?? 0) + v)
  console.log('| part | self ms | µs per frame |')
  console.log('|---|---|---|')
  for (const [o, v] of [...byOwner].sort((a, b) => b[1] - a[1])) console.log(`| ${o} | ${(v / 1000).toFixed(0)} | ${(v / delivered).toFixed(2)} |`)
  console.log(`\n| function | part | self ms | % of busy |`)
  console.log('|---|---|---|---|')
  for (const [k, v] of [...times].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    console.log(`| \`${k}\` | ${owner(k)} | ${(v / 1000).toFixed(1)} | ${((100 * v) / busy).toFixed(1)} |`)
  }
  const allocs = allocated(JSON.parse(allocText))
  const allocTotal = [...allocs.values()].reduce((a, b) => a + b, 0)
  const allocByOwner = new Map<string, number>()
  for (const [k, v] of allocs) allocByOwner.set(owner(k), (allocByOwner.get(owner(k)) ?? 0) + v)
  console.log(`\nallocated (sampled) ${(allocTotal / delivered).toFixed(0)} bytes per frame`)
  console.log('| part | bytes per frame |')
  console.log('|---|---|')
  for (const [o, v] of [...allocByOwner].sort((a, b) => b[1] - a[1])) console.log(`| ${o} | ${(v / delivered).toFixed(0)} |`)
  console.log(`\n| allocating function | part | bytes per frame |`)
  console.log('|---|---|---|')
  for (const [k, v] of [...allocs].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`| \`${k}\` | ${owner(k)} | ${(v / delivered).toFixed(0)} |`)
}

interface AllocNode {
  callFrame: Node['callFrame']
  selfSize: number
  children: AllocNode[]
}
/** Bytes allocated per function (self), from a sampling heap profile. */
function allocated(profile: { head: AllocNode }): Map<string, number> {
  const out = new Map<string, number>()
  const walk = (n: AllocNode) => {
    const key = frameKey(n.callFrame)
    if (n.selfSize) out.set(key, (out.get(key) ?? 0) + n.selfSize)
    for (const c of n.children) walk(c)
  }
  walk(profile.head)
  return out
}

await main()
