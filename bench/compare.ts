/**
 * `npm run bench`: threadhost against two floors, in the same run, on loopback.
 *
 * - **the pi-host floor** (bench/pi-floor.ts): pi's own `AgentSession`s built as its SDK documents
 *   them, on the same demo model and pacing, each pi event mapped to threadhost's frame, encoded once
 *   and written to every follower — pi plus the least a host must do. It speaks the part of
 *   threadhost's API the bench uses, so every scenario where pi does the work runs on it unchanged.
 * - **the raw broadcaster** (bench/baseline-server.mjs): no agent at all; it replays the very frames
 *   threadhost produced for the same run, in the same bursts — the floor of fan-out alone.
 *
 * Every server runs as its own process (its CPU is read from /proc), the followers live in separate
 * client processes (bench/clients.mjs), and every figure is measured A C B (threadhost, floor, raw)
 * round after round (BENCH_ROUNDS, default 3), so the machine's load hits all three alike. Each row
 * prints threadhost ÷ floor and threadhost ÷ raw beside the issue's target.
 *
 * Not a test: nothing here asserts a time. Numbers go to docs/benchmarks.md by hand.
 * `--quick` (or BENCH_QUICK=1): fewer rounds, shorter runs, a lower concurrent ladder — a few minutes.
 * BENCH_SERVER=tsx runs threadhost from its sources through tsx (to measure a tree without a build);
 * BENCH_ROUNDS=n sets the rounds; BENCH_ONLY=fanout,paced,first,dialog,startup,npm,heap,cold,big,stall,concurrent,cluster
 * picks scenarios (cluster: 3 nodes on nats-server against the embedded node, bench/cluster.ts); BENCH_HEAP_THREADS=n sets how many idle live threads the heap figure divides by
 * (default 100); BENCH_COLD_THREADS=n the cold-thread figure's threads (default 10,000) and BENCH_COLD_LIVED how
 * many of them run a prompt and go back cold (default 1200: fewer leave compiled code still growing in the per-thread figure); BENCH_CONCURRENT_MAX=k caps the concurrent scenario's threads (default 1280) and
 * BENCH_CONCURRENT_WINDOW_MS its measuring window per step (default 2000). BENCH_BEFORE=path/to/main.js (another
 * compiled tree, e.g. a copy of dist/server made before a change: keep it two levels under the root, beside dist/server,
 * so it finds dist/client) runs the first-token and the heap scenarios on it too, interleaved with this tree's in every round.
 */
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { spawnServer, type ServerProcess } from '../test/support/spawn-server.js'
import { ClusterBench } from './cluster.js'

const root = resolve(import.meta.dirname, '..')
/** Both servers run with the bench's probe (bench/probe.mjs) answering over IPC. */
const PROBED = ['--expose-gc', '--import', join(root, 'bench/probe.mjs')]
/** `--quick`: every scenario, smaller (about 4 minutes on a busy 2-core machine instead of 12). */
const QUICK = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1'
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? (QUICK ? 2 : 3)))
const MODE = process.env.BENCH_SERVER === 'tsx' ? 'tsx' : 'compiled'
/** BENCH_ONLY=fanout,paced,first,dialog,startup,npm,heap,cold,big,stall,concurrent,cluster runs only those scenarios (all by default). */
const ONLY = process.env.BENCH_ONLY?.split(',')
/** Threads of the heap figure (BENCH_HEAP_THREADS; each is one pi session built and run once). */
const HEAP_THREADS = Math.max(1, Number(process.env.BENCH_HEAP_THREADS ?? (QUICK ? 40 : 100)))
/** Threads at rest for the cold-thread figure (BENCH_COLD_THREADS), and how many of them run a prompt and go back cold first. */
const COLD_THREADS = Math.max(100, Number(process.env.BENCH_COLD_THREADS ?? 10_000))
/** A second compiled threadhost the first-token scenario measures in the same rounds (BENCH_BEFORE). */
const BEFORE = process.env.BENCH_BEFORE ? resolve(process.env.BENCH_BEFORE) : undefined
const COLD_LIVED = Math.min(COLD_THREADS, Math.max(2, Number(process.env.BENCH_COLD_LIVED ?? 1200)))
const runs = (scenario: string) => !ONLY || ONLY.includes(scenario)
/** The fan-out scenario's follower counts and `slow` words per run (no pacing). */
const FANOUT: ReadonlyArray<readonly [number, number]> = QUICK
  ? [
      [1, 3000],
      [10, 3000],
      [100, 600],
    ]
  : [
      [1, 10_000],
      [10, 10_000],
      [100, 2000],
      [1000, 300],
    ]
/** Chunks of a paced run (PACE_MS apart). */
const PACED_CHUNKS = QUICK ? 300 : 600
/** Prompts timed per round for the first-token figure. */
const FIRST_TIMES = QUICK ? 15 : 30
const CONFIRM = 'call ui_dialog {"method":"confirm","title":"Deploy?","message":"to prod"}'
const BIG_PROMPT = 'x'.repeat(99_000 - 'You said: '.length) // the demo answers "You said: <prompt>": a 99,000-character reply
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const runEnd = (run: number) => `"busy":false,"run":${run},`
/**
 * The marker of a recorded run's last frame. Threadhost's run ends with its idle status frame, but a
 * server that dropped the recording follower mid-run recorded less: the baseline replays what was
 * recorded and waits for its last frame.
 */
function lastFrame(run: Buffer): string {
  const ids = [...run.toString('latin1').matchAll(/(?:^|\n)id: (\d+)\n/g)]
  return `\nid: ${ids.at(-1)?.[1] ?? 0}\n`
}

// ---------------------------------------------------------------------------------------------
// Processes

class Server {
  readonly url: string
  readonly port: number
  readonly #server: ServerProcess
  readonly #proc: ChildProcess
  readonly #dir?: string

  private constructor(server: ServerProcess, url: string, dir?: string) {
    this.#server = server
    this.#proc = server.child
    this.url = url.replace('localhost', '127.0.0.1')
    this.port = Number(new URL(url).port)
    this.#dir = dir
  }

  /** `demoDelayMs`: the demo model's pause before each streamed chunk (0: as fast as it can). */
  /** `extra`: more of threadhost's flags (the cold-thread figure's short `--idle-ms`). */
  /** `script`: another compiled server to run instead of this tree's (BENCH_BEFORE). */
  static async threadhost(demoDelayMs = 0, extra: string[] = [], script?: string): Promise<Server> {
    const dir = mkdtempSync(join(tmpdir(), 'threadhost-bench-'))
    const args = ['--port', '0', '--data-dir', dir, '--agent-dir', join(dir, 'agent'), '--workspace', dir, '--model', 'demo', '--demo-delay-ms', String(demoDelayMs), '--inspector', 'off', ...extra]
    const compiled = MODE === 'compiled' || script !== undefined
    return Server.#start(spawnServer({ args, entry: MODE, ...(script ? { script } : {}), node: [...PROBED, ...(compiled ? ['--enable-source-maps'] : [])], ipc: true }), dir)
  }

  /** The pi-host floor (bench/pi-floor.ts, bundled like the server), on the same demo pacing. */
  static async floor(demoDelayMs = 0): Promise<Server> {
    const dir = mkdtempSync(join(tmpdir(), 'threadhost-bench-floor-'))
    const script = await bundled('pi-floor')
    return Server.#start(spawnServer({ script, args: ['--port', '0', '--data-dir', dir, '--demo-delay-ms', String(demoDelayMs)], node: [...PROBED, '--enable-source-maps'], ipc: true }), dir)
  }

  static async baseline(): Promise<Server> {
    return Server.#start(spawnServer({ script: join(root, 'bench/baseline-server.mjs'), args: ['--port', '0'], node: PROBED, ipc: true }))
  }

  static async #start(server: ServerProcess, dir?: string): Promise<Server> {
    return new Server(server, await server.url, dir)
  }

  /**
   * CPU seconds the process has used, all its threads (GC and libuv's included). Read from each
   * thread's schedstat (nanoseconds); /proc/<pid>/stat counts in clock ticks, too coarse for a run.
   */
  cpu(): number {
    let ns = 0
    try {
      for (const task of readdirSync(`/proc/${this.#proc.pid}/task`)) {
        try {
          ns += Number(readFileSync(`/proc/${this.#proc.pid}/task/${task}/schedstat`, 'utf8').split(' ')[0])
        } catch {
          // a thread that just ended
        }
      }
      // (Node's threads live as long as the process, so no thread's time goes missing between two reads.)
      return ns / 1e9
    } catch {
      return 0
    }
  }

  probe(probe: 'heap' | 'lag-start' | 'lag-stop'): Promise<{ heap?: number; maxBlockMs?: number; maxWallMs?: number }> {
    return new Promise((resolve) => {
      const on = (m: any) => {
        if (m?.probe !== probe) return
        this.#proc.off('message', on)
        resolve(m)
      }
      this.#proc.on('message', on)
      this.#proc.send({ probe })
    })
  }

  async api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(this.url + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': typeof body === 'string' && method !== 'POST' ? 'text/plain' : 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    })
    const text = await res.text()
    let json: any = text
    try {
      json = text ? JSON.parse(text) : undefined
    } catch {}
    return { status: res.status, body: json }
  }

  async raw(method: string, path: string, body?: Buffer): Promise<number> {
    const res = await fetch(this.url + path, { method, body: body as unknown as BodyInit | undefined })
    await res.arrayBuffer()
    return res.status
  }

  async stop(): Promise<void> {
    await this.#server.stop()
    if (this.#dir) rmSync(this.#dir, { recursive: true, force: true })
  }
}

interface Done {
  first: bigint
  last: bigint
  frames: number
  bytes: number
  /** Socket reads the followers made (one per chunk a socket delivered). */
  reads: number
  /** The client processes' CPU (user + system) from arming to done, seconds. */
  readerCpu: number
  closed: number
  record?: string[]
  /** The last follower's arrival on each server port: where the last of them was. */
  byPort: Map<number, bigint>
}

/** The client processes' last arrival per server port, merged. */
function lastByPort(dones: Array<{ byPort?: Record<string, string> }>): Map<number, bigint> {
  const out = new Map<number, bigint>()
  for (const done of dones) {
    for (const [port, at] of Object.entries(done.byPort ?? {})) {
      const last = BigInt(at)
      if (last > (out.get(Number(port)) ?? 0n)) out.set(Number(port), last)
    }
  }
  return out
}

/** Inter-arrival gaps, as a histogram of 0.1 ms buckets (bucket → count). */
interface Gaps {
  hist: Map<number, number>
  /** Marked frames that arrived in the window, all follows together. */
  frames: number
  /** Follows that got none in the window. */
  silent: number
  follows: number
  closed: number
}

/** The p-th percentile of a 0.1 ms histogram, in ms (the bucket's upper edge). */
function histPercentile(hist: Map<number, number>, p: number): number {
  const buckets = [...hist].sort((x, y) => x[0] - y[0])
  const total = buckets.reduce((s, [, n]) => s + n, 0)
  let seen = 0
  for (const [bucket, n] of buckets) {
    seen += n
    if (seen >= (p / 100) * total) return (bucket + 1) / 10
  }
  return NaN
}

/** Followers spread over client processes. */
class Clients {
  readonly #procs: ChildProcess[]

  constructor(processes = 2) {
    this.#procs = Array.from({ length: processes }, () => fork(join(root, 'bench/clients.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }))
  }

  #ask(proc: ChildProcess, message: object, re: string): Promise<any> {
    return new Promise((resolve) => {
      const on = (m: any) => {
        if (m?.re !== re) return
        proc.off('message', on)
        resolve(m)
      }
      proc.on('message', on)
      proc.send(message)
    })
  }

  /** n follows of `path`, split over the processes (stalled ones never read). */
  async open(port: number, path: string, n: number, stall = false): Promise<void> {
    const share = (i: number) => Math.floor(n / this.#procs.length) + (i < n % this.#procs.length ? 1 : 0)
    await Promise.all(this.#procs.map((p, i) => (share(i) ? this.#ask(p, { cmd: 'open', port, path, n: share(i), stall }, 'open') : undefined)))
  }

  /** One follow of each path (the same port), split over the processes. */
  async openEach(port: number, paths: string[]): Promise<void> {
    const n = this.#procs.length
    await Promise.all(this.#procs.map((p, i) => this.#ask(p, { cmd: 'open', port, paths: paths.filter((_, j) => j % n === i) }, 'open')))
  }

  /** From now, every fast follow notes the arrival of each frame holding `marker`. */
  async times(marker: string): Promise<void> {
    await Promise.all(this.#procs.map((p) => this.#ask(p, { cmd: 'times', marker }, 'times')))
  }

  /** Stops noting: the gaps between consecutive noted frames of a follow, for frames that arrived in [from, to]. */
  async gaps(from: bigint, to: bigint): Promise<Gaps> {
    const r = await Promise.all(this.#procs.map((p) => this.#ask(p, { cmd: 'gaps', from: String(from), to: String(to) }, 'gaps')))
    const hist = new Map<number, number>()
    for (const x of r) for (const [bucket, count] of x.hist as Array<[number, number]>) hist.set(bucket, (hist.get(bucket) ?? 0) + count)
    const sum = (key: string) => r.reduce((s, x) => s + x[key], 0)
    return { hist, frames: sum('frames'), silent: sum('silent'), follows: sum('follows'), closed: sum('closed') }
  }

  /** Counts from now; resolves once every fast follow has seen `marker` (or was closed). */
  async arm(marker: string, record = false, timeoutMs = 90_000): Promise<() => Promise<Done>> {
    const dones = this.#procs.map(
      (p, i) =>
        new Promise<any>((resolve) => {
          const on = (m: any) => {
            if (m?.event !== 'done') return
            p.off('message', on)
            resolve(m)
          }
          p.on('message', on)
          void i
        }),
    )
    await Promise.all(this.#procs.map((p, i) => this.#ask(p, { cmd: 'arm', marker, record: record && i === 0 }, 'arm')))
    return async () => {
      const all = await Promise.race([Promise.all(dones), sleep(timeoutMs).then(() => undefined)])
      if (!all) throw new Error(`followers did not see ${marker} within ${timeoutMs} ms`)
      const withFollows = all.filter((d) => d.first !== '0')
      return {
        first: withFollows.map((d) => BigInt(d.first)).reduce((a, b) => (b < a ? b : a), BigInt(withFollows[0]?.first ?? 0)),
        last: withFollows.map((d) => BigInt(d.last)).reduce((a, b) => (b > a ? b : a), 0n),
        frames: all.reduce((s, d) => s + d.frames, 0),
        bytes: all.reduce((s, d) => s + d.bytes, 0),
        reads: all.reduce((s, d) => s + d.reads, 0),
        readerCpu: all.reduce((s, d) => s + d.cpu, 0) / 1e6,
        closed: all.reduce((s, d) => s + d.closed, 0),
        record: all[0].record,
        byPort: lastByPort(all),
      }
    }
  }

  async stalledEnded(ms: number): Promise<{ ended: number; of: number }> {
    const r = await Promise.all(this.#procs.map((p) => this.#ask(p, { cmd: 'stalled-ended', ms }, 'stalled-ended')))
    return { ended: r.reduce((s, x) => s + x.ended, 0), of: r.reduce((s, x) => s + x.of, 0) }
  }

  async close(): Promise<void> {
    await Promise.all(this.#procs.map((p) => this.#ask(p, { cmd: 'close' }, 'close')))
  }

  kill(): void {
    for (const p of this.#procs) p.kill()
  }
}

// ---------------------------------------------------------------------------------------------
// Scenarios. Each returns threadhost's figure (A) and the baseline's (B) for one round.

let threadCount = 0
async function newThread(th: Server, prefix: string): Promise<string> {
  const id = `${prefix}${++threadCount}`
  const r = await th.api('POST', '/api/threads', { id })
  if (r.status !== 201) throw new Error(`could not create ${id}: ${r.status} ${JSON.stringify(r.body)}`)
  return id
}
const prompt = (th: Server, id: string, message: string) => th.api('POST', `/api/threads/${id}/prompt`, { message })
async function idle(th: Server, id: string): Promise<void> {
  for (;;) {
    const r = await th.api('GET', `/api/threads/${id}`)
    if (r.body && r.body.busy === false && r.body.run > 0) return
    await sleep(5)
  }
}

/**
 * Frames recorded from threadhost runs, by scenario, to feed the baseline the same bytes in the same
 * bursts: each chunk a follower read is (about) what the server wrote in one turn of its event loop.
 * Bursts are separated by a `:burst` comment line, which the baseline takes as "next turn".
 */
const recorded = new Map<string, Buffer>()
function bursts(chunks: string[]): Buffer {
  const text = chunks.join('')
  const out: string[] = []
  let from = 0
  let end = 0
  for (const chunk of chunks) {
    end += chunk.length
    if (end <= from) continue
    // A chunk may end inside a frame: the burst runs to the end of that frame.
    const cut = text.indexOf('\n\n', Math.max(from, end - 2))
    const to = cut < 0 ? text.length : cut + 2
    out.push(text.slice(from, to), ':burst\n\n')
    from = to
  }
  if (from < text.length) out.push(text.slice(from))
  return Buffer.from(out.join(''), 'latin1')
}

/**
 * One thread on a server that runs pi (threadhost or the floor), N followers: a warm-up prompt, then
 * `message` timed. Server CPU for the timed run, and what the followers got.
 */
async function piRun(server: Server, clients: Clients, n: number, message: string, record: boolean, prefix: string) {
  const id = await newThread(server, prefix)
  await clients.open(server.port, `/api/threads/${id}/follow`, n)
  let wait = await clients.arm(runEnd(1))
  await prompt(server, id, 'warm up')
  await wait()
  wait = await clients.arm(runEnd(2), record)
  const cpu = server.cpu()
  await prompt(server, id, message)
  const done = await wait()
  const used = server.cpu() - cpu
  await clients.close()
  return { cpu: used, done }
}

/** The recorded run replayed by the raw broadcaster to N followers (`ms`: one burst every ms, else one per turn). */
async function rawRun(base: Server, clients: Clients, n: number, key: string, ms = 0) {
  const ch = `${key}-${n}`
  await base.raw('POST', `/load/${ch}`, recorded.get(key))
  await clients.open(base.port, `/follow/${ch}`, n)
  const wait = await clients.arm(lastFrame(recorded.get(key)!))
  const cpu = base.cpu()
  await base.raw('POST', `/play/${ch}${ms ? `?ms=${ms}` : ''}`)
  const done = await wait()
  const used = base.cpu() - cpu
  await clients.close()
  return { cpu: used, done }
}

/** One `slow <words>` run (demo model, no delay) to N followers on each server, A C B: server CPU per delivered frame. */
async function fanOutRun(th: Server, floor: Server | undefined, base: Server, clients: Clients, n: number, words: number) {
  const key = `slow-${words}`
  const a = await piRun(th, clients, n, `slow ${words}`, !recorded.has(key), `fan${n}-`)
  if (a.done.record && !recorded.has(key)) recorded.set(key, bursts(a.done.record))
  const c = floor ? await piRun(floor, clients, n, `slow ${words}`, false, `fan${n}-`) : undefined
  const b = await rawRun(base, clients, n, key)
  for (const [who, r] of [['threadhost', a], ['the pi floor', c], ['the raw broadcaster', b]] as const) {
    if (r?.done.closed) notes.push(`${who} closed ${r.done.closed} of ${n} fast followers during a slow ${words} run`)
  }
  const figures = (r: { cpu: number; done: Done }) => ({ cpuPerFrame: r.cpu / r.done.frames, perCpuSecond: r.done.frames / n / r.cpu, frames: r.done.frames })
  return { a: figures(a), b: figures(b), c: c && figures(c) }
}

/**
 * Paced streaming (the demo model's `--demo-delay-ms`, PACE_MS a chunk): one `slow <chunks>` run to
 * N followers. Server CPU per streamed chunk — what each chunk costs with all its followers — and per
 * delivered frame. The raw broadcaster replays threadhost's recording one burst every PACE_MS.
 */
const PACE_MS = 5
async function pacedRun(th: Server, floor: Server, base: Server, clients: Clients, n: number, chunks: number) {
  const key = `paced-${chunks}`
  const a = await piRun(th, clients, n, `slow ${chunks}`, !recorded.has(key), `paced${n}-`)
  if (a.done.record && !recorded.has(key)) recorded.set(key, bursts(a.done.record))
  const c = await piRun(floor, clients, n, `slow ${chunks}`, false, `paced${n}-`)
  const b = await rawRun(base, clients, n, key, PACE_MS)
  const figures = (r: { cpu: number; done: Done }) => ({
    perChunk: r.cpu / chunks,
    perFrame: r.cpu / r.done.frames,
    // The followers' side: what reading a frame costs a client (every browser tab pays it).
    readerPerFrame: r.done.readerCpu / r.done.frames,
    readsPerFrame: r.done.reads / r.done.frames,
    bytesPerFrame: r.done.bytes / r.done.frames,
  })
  return { a: figures(a), b: figures(b), c: figures(c) }
}

/**
 * Prompt on a live thread (one follower, its second and later prompts) → the follower reads the
 * reply's first `assistant-delta`, `times` times on each server. threadhost minus the floor is what
 * the host adds between `POST …/prompt` and the model's first token; the raw broadcaster has no
 * model, so it answers a POST by broadcasting one frame (the least a round trip costs).
 */
async function firstToken(th: Server, floor: Server, base: Server, clients: Clients, times: number, before?: Server) {
  const on = async (server: Server) => {
    const out: number[] = []
    const id = await newThread(server, 'first-')
    await clients.open(server.port, `/api/threads/${id}/follow`, 1)
    for (let k = 1; k <= times + 1; k++) {
      const ended = await clients.arm(runEnd(k))
      const first = await clients.arm('event: assistant-delta')
      const t0 = process.hrtime.bigint()
      const r = await prompt(server, id, 'hello there')
      if (r.status !== 202) throw new Error(`prompt: ${r.status} ${JSON.stringify(r.body)}`)
      const got = await first()
      // The first prompt builds the runtime: not a live thread's prompt.
      if (k > 1) out.push(Number(got.first - t0) / 1e6)
      await ended()
    }
    await clients.close()
    return out
  }
  const a = await on(th)
  const d = before ? await on(before) : undefined
  const c = await on(floor)
  const b: number[] = []
  await clients.open(base.port, '/follow/first', 1)
  for (let k = 1; k <= times; k++) {
    const got = await clients.arm('event: dialog-settled')
    const t0 = process.hrtime.bigint()
    await base.raw('POST', '/dialog/first')
    b.push(Number((await got()).first - t0) / 1e6)
  }
  await clients.close()
  return { a, b, c, d }
}

/** 100 followers; a dialog answered by POST: time until the last follower has the dialog-settled frame. */
async function dialogLatency(th: Server, base: Server, clients: Clients, times: number) {
  const a: number[] = []
  const b: number[] = []
  const id = await newThread(th, 'dlg-')
  await clients.open(th.port, `/api/threads/${id}/follow`, 100)
  for (let k = 1; k <= times; k++) {
    const asked = await clients.arm('event: extension-ui-request', true)
    await prompt(th, id, CONFIRM)
    const request = (await asked()).record!.join('')
    const dialogId = /event: extension-ui-request\ndata: (\{.*\})\n/.exec(request)![1]
    const settled = await clients.arm('event: dialog-settled')
    const t0 = process.hrtime.bigint()
    const answered = await th.api('POST', `/api/threads/${id}/dialog`, { id: JSON.parse(dialogId).id, confirmed: true })
    if (answered.status !== 204) throw new Error(`dialog answer: ${answered.status}`)
    a.push(Number((await settled()).last - t0) / 1e6)
    await idle(th, id)
  }
  await clients.close()
  await clients.open(base.port, '/follow/dlg', 100)
  for (let k = 1; k <= times; k++) {
    const settled = await clients.arm('event: dialog-settled')
    const t0 = process.hrtime.bigint()
    await base.raw('POST', '/dialog/dlg')
    b.push(Number((await settled()).last - t0) / 1e6)
  }
  await clients.close()
  return { a, b }
}

/** A port nothing listens on now (the OS picks it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })
}

async function timeToFirst200(args: string[], env: NodeJS.ProcessEnv = process.env, attempt = 1): Promise<number> {
  return (await timesToFirst200(args, ['/api/threads'], env, attempt))[0]
}

/** From spawning the server to the first 200 on each of `paths` (polled at once). */
async function timesToFirst200(args: string[], paths: string[], env: NodeJS.ProcessEnv = process.env, attempt = 1): Promise<number[]> {
  try {
    return await startOnce(args, env, paths)
  } catch (error) {
    // Another process may have taken the port between freePort() and the listen: try again.
    if (attempt >= 3) throw error
    return timesToFirst200(args, paths, env, attempt + 1)
  }
}

async function startOnce(args: string[], env: NodeJS.ProcessEnv, paths: string[]): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'threadhost-bench-start-'))
  const port = await freePort()
  const started = performance.now()
  const proc = spawn(process.execPath, [...args.map((a) => a.replace('$PORT', String(port)).replace('$DIR', dir))], { cwd: root, env, stdio: 'ignore' })
  let exited = false
  proc.once('exit', () => (exited = true))
  const first200 = async (path: string) => {
    for (;;) {
      if (exited) throw new Error(`${args.join(' ')} exited before answering`)
      try {
        const r = await fetch(`http://127.0.0.1:${port}${path}`)
        await r.arrayBuffer()
        if (r.status === 200) return performance.now() - started
      } catch {}
      await sleep(5)
    }
  }
  try {
    return await Promise.all(paths.map(first200))
  } finally {
    proc.kill('SIGTERM')
    await new Promise((r) => (exited ? r(undefined) : proc.once('exit', r)))
    rmSync(dir, { recursive: true, force: true })
  }
}

const serverFlags = ['--port', '$PORT', '--data-dir', '$DIR', '--agent-dir', '$DIR/agent', '--workspace', '$DIR', '--model', 'demo']
const startThreadhost = () => {
  // What is stale is built first, untimed (others editing src make the client stale often):
  // the figure is the start of a built tree, as after `npm install && npm start` once.
  if (MODE === 'compiled') spawnSync(process.execPath, ['scripts/start.mjs', '--help'], { cwd: root, stdio: 'ignore' })
  // The page answers once the server listens; the threads once pi has loaded and they are recovered.
  return timesToFirst200(MODE === 'tsx' ? ['--import', 'tsx', 'src/server/main.ts', ...serverFlags] : ['scripts/start.mjs', ...serverFlags], ['/api/threads', '/'])
}
/** The same start with node's compile cache empty (a fresh directory: a first start) or off. */
const startCompileCache = async (cache: 'cold' | 'off') => {
  const dir = mkdtempSync(join(tmpdir(), 'threadhost-bench-compile-cache-'))
  try {
    const env = cache === 'cold' ? { ...process.env, NODE_COMPILE_CACHE: dir } : { ...process.env, NODE_DISABLE_COMPILE_CACHE: '1' }
    return await timesToFirst200(['scripts/start.mjs', ...serverFlags], ['/api/threads', '/'], env)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
const startTsxCold = () => timeToFirst200(['--import', 'tsx', 'src/server/main.ts', ...serverFlags], { ...process.env, TSX_DISABLE_CACHE: '1' })
const startBaseline = () => timeToFirst200(['bench/baseline-server.mjs', '--port', '$PORT'])

/**
 * Heap per idle live thread: K threads that each ran one short prompt and stay live, in a server of
 * their own (started for this figure alone, so what earlier scenarios left behind — rings trimmed,
 * bytecode flushed, caches grown — cannot move the difference).
 */
async function heapPerThread(base: Server, clients: Clients, k: number) {
  const inOwnServer = async (start: () => Promise<Server>) => {
    const server = await start()
    try {
      return await heapIn(server, clients, k)
    } finally {
      await server.stop()
    }
  }
  const a = await inOwnServer(() => Server.threadhost())
  const d = BEFORE ? await inOwnServer(() => Server.threadhost(0, [], BEFORE)) : undefined
  const c = await inOwnServer(() => Server.floor())
  // The baseline's channel is small: many of them, so the GC's noise divides away.
  const bk = 1000
  const b0 = (await base.probe('heap')).heap!
  await base.raw('POST', `/channels?n=${bk}`, recorded.get('hello'))
  const b1 = (await base.probe('heap')).heap!
  return { a, b: (b1 - b0) / bk, c, d, pi: await piAlone(k) }
}

/** Heap per thread of k threads that each ran one `hello` prompt and stay live (threadhost or the floor). */
async function heapIn(th: Server, clients: Clients, k: number) {
  // Warm: the first live threads load what every later one shares.
  await newThread(th, 'heap-warm-').then((id) => prompt(th, id, 'hello').then(() => idle(th, id)))
  const warm = await newThread(th, 'heap-')
  await clients.open(th.port, `/api/threads/${warm}/follow`, 1)
  const wait = await clients.arm(runEnd(1), !recorded.has('hello'))
  await prompt(th, warm, 'hello')
  const hello = (await wait()).record
  if (hello) recorded.set('hello', bursts(hello))
  await clients.close()
  const before = (await th.probe('heap')).heap!
  for (let i = 0; i < k; i++) {
    const id = await newThread(th, 'heap-')
    await prompt(th, id, 'hello')
    await idle(th, id)
  }
  await sleep(200)
  const after = (await th.probe('heap')).heap!
  return (after - before) / k
}

/**
 * The heap of pi's sessions alone (bench/pi-heap.ts, compiled like the server, in its own process):
 * the same runtimes the server builds, one `hello` run each, measured the same way.
 */
async function piAlone(k: number): Promise<number> {
  const out = await bundled('pi-heap')
  const proc = fork(out, [], { execArgv: ['--expose-gc'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  try {
    return await new Promise<number>((resolve, reject) => {
      proc.on('message', (m: any) => {
        if (m?.ready) proc.send({ cmd: 'measure', n: k })
        else if (m?.perThread !== undefined) resolve(m.perThread)
      })
      proc.once('exit', (code) => reject(new Error(`bench/pi-heap.ts exited (${code}) before it measured`)))
    })
  } finally {
    proc.kill()
  }
}

/**
 * Heap per cold thread: a threadhost of its own holding COLD_THREADS threads at rest. First they are
 * created and never built (what a thread costs as its row: the slot, its record, its journal
 * writer); then COLD_LIVED of them each run one `hello` prompt and go back cold by the idle timeout
 * (`--idle-ms`), nobody following — what a thread keeps once its actor, runtime and feed are let go.
 * Both after a full GC, against the heap before the threads (a few warm-up threads made and cooled
 * first, so what every thread shares is loaded).
 */
async function coldHeap(n: number, lived: number) {
  const idleMs = 500
  const th = await Server.threadhost(0, ['--idle-ms', String(idleMs)])
  try {
    const cooled = async (ids: string[]) => {
      for (const id of ids) {
        for (;;) {
          const r = await th.api('GET', `/api/threads/${id}`)
          if (r.body && r.body.live === false && r.body.busy === false) break
          await sleep(50)
        }
      }
      // At rest, not in passing: a release races the runtime's abort against a 5 s timer
      // (src/host/live-thread.ts), which holds its promise until it fires.
      await sleep(5500)
    }
    const run = async (id: string) => {
      await prompt(th, id, 'hello')
      await idle(th, id)
    }
    const warm = [await newThread(th, 'cold-warm-'), await newThread(th, 'cold-warm-')]
    for (const id of warm) await run(id)
    await cooled(warm)
    const h0 = (await th.probe('heap')).heap!
    const ids: string[] = []
    await inBatches(
      Array.from({ length: n }, (_, i) => i),
      8,
      async () => ids.push(await newThread(th, 'cold-')),
    )
    await sleep(200)
    const h1 = (await th.probe('heap')).heap!
    const sample = ids.filter((_, i) => i % Math.floor(n / lived) === 0).slice(0, lived)
    // In two halves, measured between them: the first half's heap is mostly what running and cooling
    // threads loads once (compiled code, feedback, lazily loaded modules: by heap snapshot), the
    // second's what each thread keeps.
    const half = Math.ceil(sample.length / 2)
    await inBatches(sample.slice(0, half), 4, run)
    await cooled(sample.slice(0, half))
    const h2 = (await th.probe('heap')).heap!
    await inBatches(sample.slice(half), 4, run)
    await cooled(sample.slice(half))
    const h3 = (await th.probe('heap')).heap!
    return { row: (h1 - h0) / n, first: (h2 - h1) / half, lived: (h3 - h2) / (sample.length - half), count: sample.length - half }
  } finally {
    await th.stop()
  }
}

/**
 * `npm start` as a user runs it (a tree built beforehand, untimed): from spawning `npm start -- …`
 * to the first 200 on `GET /` (the app's page) and on `/api/health`, then, once idle, the resident
 * memory of every process of the command (npm, and the server its script exec's into) against the
 * server's own. npm stays resident as the server's parent for as long as it runs.
 */
async function npmStart() {
  if (MODE === 'compiled') spawnSync(process.execPath, ['scripts/start.mjs', '--help'], { cwd: root, stdio: 'ignore' })
  const dir = mkdtempSync(join(tmpdir(), 'threadhost-bench-npm-'))
  const port = await freePort()
  const flags = serverFlags.map((a) => a.replace('$PORT', String(port)).replace('$DIR', dir))
  const started = performance.now()
  // Its own process group: npm, its shell and the server all end together.
  const proc = spawn('npm', ['start', '--silent', '--', ...flags], { cwd: root, detached: true, stdio: 'ignore' })
  let exited = false
  proc.once('exit', () => (exited = true))
  const first200 = async (path: string) => {
    for (;;) {
      if (exited) throw new Error(`npm start exited before ${path} answered`)
      try {
        const r = await fetch(`http://127.0.0.1:${port}${path}`)
        await r.arrayBuffer()
        if (r.status === 200) return performance.now() - started
      } catch {}
      await sleep(5)
    }
  }
  try {
    const [page, health] = await Promise.all([first200('/'), first200('/api/health')])
    await sleep(2000)
    const tree = processTree(proc.pid!)
    // scripts/start.mjs imports the server in its own process (or, with no build, exec's tsx on src/server/main.ts).
    const server = tree.find((p) => /scripts\/start\.mjs|dist\/server\/main\.js|src\/server\/main\.ts/.test(p.cmdline))
    const total = tree.reduce((s, p) => s + p.rss, 0)
    const others = tree.filter((p) => p !== server)
    // Beside RSS, what each process allocated itself (heap, stacks: anonymous memory), without the file pages
    // of the node binary it runs, which RSS counts whether or not other processes map them too.
    const othersAnon = others.reduce((s, p) => s + anonKiB(p.pid), 0)
    // The command's resident memory with each page counted once: the server's RSS, and what the others
    // hold beside it — their anonymous memory and the pages of files the server does not map. The file
    // pages of the node binary both run are one set of pages in memory, which summed RSS counts twice.
    const serverFiles = server ? residentByFile(server.pid) : new Map<string, number>()
    const othersBeside = others.reduce((s, p) => {
      let kib = anonKiB(p.pid)
      for (const [file, rss] of residentByFile(p.pid)) if (!serverFiles.has(file)) kib += rss
      return s + kib
    }, 0)
    return {
      page,
      health,
      total,
      once: (server?.rss ?? NaN) + othersBeside,
      othersAnon,
      serverAnon: server ? anonKiB(server.pid) : NaN,
      server: server?.rss ?? NaN,
      others: others.map((p) => `${p.comm} ${(p.rss / 1024).toFixed(0)} MiB (${(anonKiB(p.pid) / 1024).toFixed(0)} MiB anonymous)`),
    }
  } finally {
    try {
      process.kill(-proc.pid!, 'SIGTERM')
    } catch {}
    await new Promise((r) => (exited ? r(undefined) : proc.once('exit', r)))
    // The server (npm's child, same group) may outlive npm by its shutdown: wait for the group to go.
    for (let i = 0; i < 200 && processTree(proc.pid!, true).length; i++) await sleep(25)
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A process's anonymous memory (what it allocated: heap, stacks; not file pages), in KiB. */
function anonKiB(pid: number): number {
  try {
    return Number(/^Anonymous:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? NaN)
  } catch {
    return NaN
  }
}

/** A process's resident file pages by the file they map (KiB): what `/proc/<pid>/smaps` says per mapping, summed per path. */
function residentByFile(pid: number): Map<string, number> {
  const out = new Map<string, number>()
  let file: string | undefined
  let text = ''
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8')
  } catch {}
  for (const line of text.split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ (\d+)\s+(.*)$/.exec(line)
    if (header) {
      // A mapping of a file (inode ≠ 0); anonymous ones, [heap] and [stack] are counted by anonKiB.
      file = header[1] !== '0' && header[2].startsWith('/') ? header[2] : undefined
      continue
    }
    const rss = /^Rss:\s+(\d+)/.exec(line)
    if (rss && file) out.set(file, (out.get(file) ?? 0) + Number(rss[1]))
  }
  return out
}

/** The processes of `pid`'s tree (its descendants, or with `group` its process group), with their resident set in KiB. */
function processTree(pid: number, group = false): Array<{ pid: number; comm: string; cmdline: string; rss: number }> {
  const all = new Map<number, { ppid: number; pgrp: number; comm: string }>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const close = stat.lastIndexOf(')')
      const fields = stat.slice(close + 2).split(' ')
      all.set(Number(entry), { comm: stat.slice(stat.indexOf('(') + 1, close), ppid: Number(fields[1]), pgrp: Number(fields[2]) })
    } catch {}
  }
  const inTree = (p: number): boolean => p === pid || (!group && all.has(p) && p > 1 && inTree(all.get(p)!.ppid))
  const out = []
  for (const [p, info] of all) {
    if (group ? info.pgrp !== pid : !inTree(p)) continue
    try {
      const status = readFileSync(`/proc/${p}/status`, 'utf8')
      const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
      out.push({ pid: p, comm: info.comm, cmdline: readFileSync(`/proc/${p}/cmdline`, 'utf8').replaceAll('\0', ' '), rss })
    } catch {}
  }
  return out
}

/** bench/<name>.ts bundled like the server (its packages external), once per bench run. */
const bundles = new Map<string, Promise<string>>()
function bundled(name: string): Promise<string> {
  let out = bundles.get(name)
  if (!out) {
    const file = join(root, `node_modules/.cache/threadhost-bench/${name}.mjs`)
    out = import('esbuild').then(async ({ build }) => {
      await build({ entryPoints: [join(root, `bench/${name}.ts`)], outfile: file, bundle: true, sourcemap: true, platform: 'node', format: 'esm', target: 'node22', packages: 'external', logLevel: 'warning' })
      return file
    })
    bundles.set(name, out)
  }
  return out
}

/**
 * The longest event-loop block while a 99,000-character reply streams (no delay) to 10 followers,
 * with `stalled` more followers that never read; whether any fast one was dropped; and how many of
 * the stalled ones the server had closed once their lag was judged.
 */
async function bigReply(th: Server, base: Server, clients: Clients, stalled: number) {
  const key = 'big'
  const id = await newThread(th, `big${stalled}-`)
  await clients.open(th.port, `/api/threads/${id}/follow`, 10)
  if (stalled) await clients.open(th.port, `/api/threads/${id}/follow`, stalled, true)
  let wait = await clients.arm(runEnd(1))
  await prompt(th, id, 'warm up')
  await wait()
  // A stalled socket's kernel buffers take a few MB before anything waits in the server: after the
  // big reply, four 10,000-chunk runs (more 99k replies would overflow the demo model's context
  // window, and pi's compaction of it would be what the figure measured).
  const messages = stalled ? [BIG_PROMPT, 'slow 10000', 'slow 10000', 'slow 10000', 'slow 10000'] : [BIG_PROMPT]
  await th.probe('lag-start')
  let a!: Done
  for (const [r, message] of messages.entries()) {
    wait = await clients.arm(runEnd(2 + r), r === 0 && !recorded.has(key))
    await prompt(th, id, message)
    const got = await wait()
    if (got.record && !recorded.has(key)) recorded.set(key, bursts(got.record))
    a = { ...got, closed: Math.max(got.closed, a?.closed ?? 0) }
  }
  // Stalled followers are judged by sustained lag (5 s): wait until that has passed.
  if (stalled) await sleep(6_500)
  const aLag = await th.probe('lag-stop')
  const aBlock = aLag.maxBlockMs!
  const aEnded = stalled ? await clients.stalledEnded(1500) : { ended: 0, of: 0 }
  await clients.close()

  const ch = `big${stalled}`
  await base.raw('POST', `/load/${ch}`, recorded.get(key))
  await clients.open(base.port, `/follow/${ch}`, 10)
  if (stalled) await clients.open(base.port, `/follow/${ch}`, stalled, true)
  await base.probe('lag-start')
  let b!: Done
  for (const [r] of messages.entries()) {
    const run = r === 0 ? key : 'slow-10000'
    await base.raw('POST', `/load/${ch}`, recorded.get(run))
    wait = await clients.arm(lastFrame(recorded.get(run)!))
    await base.raw('POST', `/play/${ch}`)
    const got = await wait()
    b = { ...got, closed: Math.max(got.closed, b?.closed ?? 0) }
  }
  if (stalled) await sleep(1_000)
  const bLag = await base.probe('lag-stop')
  const bBlock = bLag.maxBlockMs!
  const bEnded = stalled ? await clients.stalledEnded(1500) : { ended: 0, of: 0 }
  await clients.close()
  return {
    a: { block: aBlock, wall: aLag.maxWallMs!, fastDropped: a.closed, stalledDropped: aEnded.ended },
    b: { block: bBlock, wall: bLag.maxWallMs!, fastDropped: b.closed, stalledDropped: bEnded.ended },
  }
}

// ---------------------------------------------------------------------------------------------
// Concurrent streams

/** BENCH_CONCURRENT_MAX caps the threads of the concurrent scenario (default 1280). */
const CONCURRENT_MAX = Math.max(10, Number(process.env.BENCH_CONCURRENT_MAX ?? (QUICK ? 640 : 1280)))
/** Coarse where nothing happens, by doubling where the servers start to strain (on this 2-core VM). */
const CONCURRENT_KS = [10, 40, 160, 320, 640, 1280, 2560, 5120].filter((k) => k <= CONCURRENT_MAX)
/**
 * The reference p99 is the least at K ≤ 40: one 2-second window of 10 streams holds 400 gaps, so a
 * single stall of the machine (not of the server) can double its p99, and stalls only add.
 */
const REFERENCE_KS = 40
/** Where server CPU per delivered chunk is read, whether or not the p99 has doubled by then. */
const CPU_KS = [160, 640].filter((k) => k <= CONCURRENT_MAX)
/** The demo model's pause before each chunk: 20 chunks a second per thread. */
const CHUNK_MS = 50
const RAMP_MS = 1000
const WINDOW_MS = Math.max(500, Number(process.env.BENCH_CONCURRENT_WINDOW_MS ?? (QUICK ? 1000 : 2000)))
const DELTA = '\nevent: assistant-delta\n'

interface Step {
  k: number
  /** p99 of the time between two chunks of one stream at its follower (ms). */
  p99: number
  /** Server CPU in the window ÷ chunks delivered in it (s). */
  cpuPerChunk: number
  chunks: number
  silent: number
  closed: number
}

/** Chunks a second per stream in a step's window. */
const rate = (s: Step) => s.chunks / s.k / (WINDOW_MS / 1000)

/** The largest K that kept a limit, up the ladder until two steps in a row failed it. */
class Limit {
  largest = 0
  #failed = 0
  judge(k: number, kept: boolean): void {
    if (this.done) return
    if (kept) {
      this.largest = k
      this.#failed = 0
    } else this.#failed++
  }
  get done(): boolean {
    return this.#failed >= 2
  }
}

/** `f` over `xs`, `width` at a time. */
async function inBatches<T>(xs: T[], width: number, f: (x: T) => Promise<unknown>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(width, xs.length) }, async () => {
      while (next < xs.length) await f(xs[next++])
    }),
  )
}

/**
 * K threads each streaming a chunk every 50 ms to one follower, K ramped up: how the time between
 * two chunks at a follower grows with K, and server CPU per delivered chunk. threadhost runs a
 * server of its own with `--demo-delay-ms 50` (each thread prompted `slow 10000`, stopped by
 * `POST …/abort` after the window); the baseline streams K channels from timers, each frame a
 * recorded threadhost chunk frame with the channel's own seq.
 */
class Concurrent {
  /** The threads of each pi server (threadhost's and the floor's), built and run once. */
  readonly #ids = new Map<Server, string[]>()
  #frame?: Buffer

  private constructor(
    readonly th: Server,
    readonly floor: Server,
    readonly base: Server,
    readonly clients: Clients,
  ) {}

  /** The servers and all their threads, each run once (a runtime is built for a prompt): untimed, once for every round. */
  static async start(base: Server, clients: Clients): Promise<Concurrent> {
    const th = await Server.threadhost(CHUNK_MS)
    const floor = await Server.floor(CHUNK_MS).catch(async (error) => {
      await th.stop()
      throw error
    })
    const c = new Concurrent(th, floor, base, clients)
    try {
      const n = CONCURRENT_KS.at(-1)!
      for (const server of [th, floor]) {
        const ids: string[] = []
        c.#ids.set(server, ids)
        await inBatches(Array.from({ length: n }, (_, i) => i), 8, async () => ids.push(await newThread(server, 'conc-')))
        const [first, ...rest] = ids
        await clients.openEach(server.port, [`/api/threads/${first}/follow`])
        const wait = await clients.arm(runEnd(1), server === th)
        await prompt(server, first, 'slow 3')
        const run = (await wait()).record?.join('')
        await clients.close()
        if (run !== undefined) {
          const frame = /(?:^|\n)(id: \d+\nevent: assistant-delta\ndata: .*\n\n)/.exec(run)?.[1]
          if (!frame) throw new Error(`no chunk frame in a slow run:\n${run}`)
          c.#frame = Buffer.from(frame)
        }
        await inBatches(rest, 16, async (id) => {
          await prompt(server, id, 'slow 1')
          await idle(server, id)
        })
      }
      // One untimed step each, so the first round does not time the JIT warming up.
      await c.hosted(th, Math.min(80, n))
      await c.hosted(floor, Math.min(80, n))
      await c.baseline(Math.min(80, n))
      return c
    } catch (error) {
      await c.stop()
      throw error
    }
  }

  /** K threads of a pi server (threadhost or the floor) prompted `slow 10000`, stopped after the window. */
  async hosted(server: Server, k: number): Promise<Step> {
    const { clients } = this
    const ids = this.#ids.get(server)!.slice(0, k)
    await clients.openEach(server.port, ids.map((id) => `/api/threads/${id}/follow`))
    await clients.times(DELTA)
    await inBatches(ids, 32, async (id) => {
      const r = await prompt(server, id, 'slow 10000')
      if (r.status !== 202 || r.body?.queued) throw new Error(`prompt ${id}: ${r.status} ${JSON.stringify(r.body)}`)
    })
    const w = await this.#window(server)
    const ended = await clients.arm('"busy":false', false, 120_000)
    await inBatches(ids, 32, async (id) => {
      const r = await server.api('POST', `/api/threads/${id}/abort`, {})
      if (r.status !== 200) throw new Error(`abort ${id}: ${r.status} ${JSON.stringify(r.body)}`)
    })
    await ended()
    return this.#step(k, w)
  }

  async baseline(k: number): Promise<Step> {
    const { base, clients } = this
    await clients.openEach(base.port, Array.from({ length: k }, (_, i) => `/follow/tick${i}`))
    await clients.times(DELTA)
    await base.raw('POST', `/tick?k=${k}&ms=${CHUNK_MS}`, this.#frame)
    const w = await this.#window(base)
    await base.raw('POST', '/tick-stop')
    return this.#step(k, w)
  }

  /** Skips the ramp-up, then the window: its bounds and the server's CPU in it. */
  async #window(server: Server) {
    await sleep(RAMP_MS)
    const from = process.hrtime.bigint()
    const cpu = server.cpu()
    await sleep(WINDOW_MS)
    return { from, to: process.hrtime.bigint(), cpu: server.cpu() - cpu }
  }

  async #step(k: number, w: { from: bigint; to: bigint; cpu: number }): Promise<Step> {
    const g = await this.clients.gaps(w.from, w.to)
    await this.clients.close()
    return { k, p99: histPercentile(g.hist, 99), cpuPerChunk: w.cpu / g.frames, chunks: g.frames, silent: g.silent, closed: g.closed }
  }

  /**
   * One round: K up the ladder, threadhost then the baseline at each K. A server's ladder ends once
   * two steps in a row have failed both limits (a single step's p99 can double on a busy machine)
   * and it is past the K where CPU is read, or at the cap.
   */
  async round(round: number) {
    const ramp = () => ({ steps: [] as Step[], p99: new Limit(), rate: new Limit() })
    const a = ramp()
    const b = ramp()
    const c = ramp()
    const judge = (r: ReturnType<typeof ramp>, s: Step) => {
      r.steps.push(s)
      const p0 = Math.min(...r.steps.filter((x) => x.k <= REFERENCE_KS).map((x) => x.p99))
      r.p99.judge(s.k, s.p99 < 2 * p0)
      r.rate.judge(s.k, rate(s) >= 0.9 * (1000 / CHUNK_MS))
    }
    const needs = (r: ReturnType<typeof ramp>, k: number) => !r.p99.done || !r.rate.done || CPU_KS.some((c) => c >= k)
    for (const k of CONCURRENT_KS) {
      if (!needs(a, k) && !needs(b, k) && !needs(c, k)) break
      if (needs(a, k)) {
        progress(`round ${round}: ${k} concurrent threads`)
        judge(a, await this.hosted(this.th, k))
      }
      if (needs(c, k)) {
        progress(`round ${round}: ${k} concurrent threads (pi floor)`)
        judge(c, await this.hosted(this.floor, k))
      }
      if (needs(b, k)) {
        progress(`round ${round}: ${k} concurrent channels (raw)`)
        judge(b, await this.baseline(k))
      }
    }
    const at = (r: ReturnType<typeof ramp>, k: number) => r.steps.find((s) => s.k === k)!
    add(`concurrent threads streaming 20 chunks/s before p99 inter-arrival doubles (ladder ${CONCURRENT_KS.join(', ')})`, 'threads', a.p99.largest, b.p99.largest, {
      c: c.p99.largest,
      target: { of: 'floor', op: '≥', x: 0.9 },
    })
    add(`… before the chunks delivered fall below 90 % of 20/s per stream`, 'threads', a.rate.largest, b.rate.largest, { c: c.rate.largest })
    const reference = (r: ReturnType<typeof ramp>) => Math.min(...r.steps.filter((x) => x.k <= REFERENCE_KS).map((x) => x.p99))
    add(`… p99 chunk inter-arrival at ≤ ${REFERENCE_KS} threads (the reference: the least of the first steps)`, 'ms', reference(a), reference(b), { c: reference(c) })
    for (const k of CPU_KS) {
      add(`server CPU per delivered chunk, ${k} concurrent threads`, 'µs', at(a, k).cpuPerChunk * 1e6, at(b, k).cpuPerChunk * 1e6, {
        c: at(c, k).cpuPerChunk * 1e6,
        ...(k === 640 ? { target: { of: 'floor' as const, op: '≤' as const, x: 1.2 } } : {}),
      })
      add(`… p99 chunk inter-arrival at ${k} threads`, 'ms', at(a, k).p99, at(b, k).p99, { c: at(c, k).p99 })
      add(`… chunks delivered per stream at ${k} threads`, '/s', rate(at(a, k)), rate(at(b, k)), { c: rate(at(c, k)) })
    }
    const ladder = (r: ReturnType<typeof ramp>) =>
      `${r.steps.map((s) => `${s.k}: ${fmt(s.p99)} ms ${fmt(rate(s))}/s`).join(', ')}${r.p99.largest === CONCURRENT_KS.at(-1) ? ' (p99 kept under 2× to the cap: the figure is a lower bound)' : ''}`
    notes.push(`round ${round}: p99 chunk inter-arrival and chunks/s per stream by K — threadhost ${ladder(a)}; pi floor ${ladder(c)}; raw ${ladder(b)}`)
    for (const [who, r] of [
      ['threadhost', a],
      ['the pi floor', c],
      ['the raw broadcaster', b],
    ] as const) {
      for (const s of r.steps) {
        if (s.silent || s.closed) notes.push(`round ${round}: ${who} at ${s.k} threads: ${s.silent} followers got no chunk in the window, ${s.closed} were closed`)
      }
    }
  }

  async stop(): Promise<void> {
    await Promise.all([this.th.stop(), this.floor.stop()])
  }
}

// ---------------------------------------------------------------------------------------------

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((x, y) => x - y)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]
}

/** The issue's target for a row: a ratio to one of the floors, or a bound on threadhost's own figure. */
interface Target {
  of: 'floor' | 'raw' | 'value'
  op: '≤' | '≥'
  x: number
}

interface Row {
  figure: string
  unit: string
  /** threadhost, the raw broadcaster, the pi-host floor: one value per round (or all samples). */
  a: number[]
  b: number[]
  c: number[]
  /** How the rounds combine: the median of per-round values, or a percentile of all samples. */
  combine?: (xs: number[]) => number
  target?: Target
}
const rows = new Map<string, Row>()
type Values = number | number[] | undefined
function add(figure: string, unit: string, a: Values, b: Values, options: { c?: Values; combine?: Row['combine']; target?: Target } = {}) {
  const row = rows.get(figure) ?? { figure, unit, a: [], b: [], c: [], combine: options.combine, target: options.target }
  const push = (xs: number[], v: Values) => v !== undefined && xs.push(...[v].flat())
  push(row.a, a)
  push(row.b, b)
  push(row.c, options.c)
  rows.set(figure, row)
}
const notes: string[] = []
const progress = (what: string) => process.stderr.write(`  … ${what}\n`)

function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x)
  const abs = Math.abs(x)
  return abs >= 100 ? x.toFixed(0) : abs >= 10 ? x.toFixed(1) : abs >= 1 ? x.toFixed(2) : x.toPrecision(2)
}

/** The target as the issue states it, and whether this run met it. */
function judge(t: Target | undefined, a: number, b: number, c: number): string {
  if (!t) return ''
  const value = t.of === 'value' ? a : a / (t.of === 'floor' ? c : b)
  const met = t.op === '≤' ? value <= t.x : value >= t.x
  const what = t.of === 'value' ? `${t.op} ${fmt(t.x)}` : `${t.op} ${fmt(t.x)}× ${t.of}`
  return Number.isFinite(value) ? `${what}: ${met ? 'met' : 'not met'}` : what
}

async function main() {
  if (MODE === 'compiled') {
    const { buildServer, serverStale } = (await import(join(root, 'scripts/build-server.mjs'))) as { buildServer(): Promise<void>; serverStale(): boolean }
    if (serverStale()) await buildServer()
  }
  const load0 = loadavg()
  const began = performance.now()
  console.log(`threadhost (${MODE}) vs the pi-host floor and a raw node:http SSE broadcaster — ${ROUNDS} rounds, A C B interleaved${QUICK ? ' (--quick)' : ''}`)
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, node ${process.version}, load average ${load0.map((l) => l.toFixed(2)).join(' ')}`)
  const th = await Server.threadhost()
  const base = await Server.baseline()
  const floor = runs('fanout') || runs('first') ? await Server.floor() : undefined
  const before = BEFORE && runs('first') ? await Server.threadhost(0, [], BEFORE) : undefined
  const clients = new Clients(2)
  let concurrent: Concurrent | undefined
  let cluster: ClusterBench | undefined | null
  let paced: { th: Server; floor: Server } | undefined
  try {
    if (runs('fanout') || runs('first')) {
      // Untimed: one streaming run on each server first, so round 1 does not time the JIT warming up
      // (it was 1.5–2× the later rounds, for both servers).
      progress('warming up the servers')
      await fanOutRun(th, floor, base, clients, 1, FANOUT[0][1])
    }
    for (let round = 1; round <= ROUNDS; round++) {
      const t = performance.now()
      if (runs('fanout')) {
        for (const [n, words] of FANOUT) {
          progress(`round ${round}: fan-out to ${n}`)
          const r = await fanOutRun(th, floor, base, clients, n, words)
          if (n === 10) add('observations per CPU-second, one thread, 10 followers', 'obs/s', r.a.perCpuSecond, r.b.perCpuSecond, { c: r.c?.perCpuSecond, target: { of: 'floor', op: '≥', x: 1 / 1.15 } })
          add(`CPU per delivered frame, ${n} follower${n > 1 ? 's' : ''}, no pacing`, 'µs', r.a.cpuPerFrame * 1e6, r.b.cpuPerFrame * 1e6, {
            c: r.c && r.c.cpuPerFrame * 1e6,
            target: { of: 'floor', op: '≤', x: n >= 100 ? 1 : 1.15 },
          })
        }
      }
      if (runs('paced')) {
        paced ??= { th: await Server.threadhost(PACE_MS), floor: await Server.floor(PACE_MS) }
        const perChunk: Record<number, { a: number; b: number; c: number }> = {}
        for (const n of [1, 10, 100]) {
          progress(`round ${round}: paced (${PACE_MS} ms a chunk) to ${n}`)
          const r = await pacedRun(paced.th, paced.floor, base, clients, n, PACED_CHUNKS)
          perChunk[n] = { a: r.a.perChunk, b: r.b.perChunk, c: r.c.perChunk }
          add(`CPU per delivered frame, ${n} follower${n > 1 ? 's' : ''}, a chunk every ${PACE_MS} ms`, 'µs', r.a.perFrame * 1e6, r.b.perFrame * 1e6, {
            c: r.c.perFrame * 1e6,
            target: { of: 'floor', op: '≤', x: n >= 100 ? 1 : 1.15 },
          })
          add(`… CPU per streamed chunk (all its followers), ${n} follower${n > 1 ? 's' : ''}`, 'µs', r.a.perChunk * 1e6, r.b.perChunk * 1e6, { c: r.c.perChunk * 1e6 })
          add(`… the followers' CPU per frame they read, ${n} follower${n > 1 ? 's' : ''}`, 'µs', r.a.readerPerFrame * 1e6, r.b.readerPerFrame * 1e6, { c: r.c.readerPerFrame * 1e6 })
          add(`… socket reads per frame, ${n} follower${n > 1 ? 's' : ''}`, 'reads', r.a.readsPerFrame, r.b.readsPerFrame, { c: r.c.readsPerFrame })
          add(`… bytes per frame, ${n} follower${n > 1 ? 's' : ''}`, 'B', r.a.bytesPerFrame, r.b.bytesPerFrame, { c: r.c.bytesPerFrame })
        }
        const slope = (k: 'a' | 'b' | 'c') => ((perChunk[100][k] - perChunk[10][k]) / 90) * 1e6
        add(`CPU per extra follower per paced chunk (slope 10 → 100 followers)`, 'µs', slope('a'), slope('b'), { c: slope('c'), target: { of: 'value', op: '≤', x: 3 } })
      }
      if (runs('first')) {
        progress(`round ${round}: prompt → first token`)
        if (round === 1 && before) await firstToken(before, floor!, base, clients, 2) // its JIT warms up as this tree's did
        const f = await firstToken(th, floor!, base, clients, FIRST_TIMES, before)
        for (const p of [50, 99]) {
          add(`prompt on a live thread → first assistant-delta at its follower, p${p}`, 'ms', f.a, f.b, { c: f.c, combine: (xs) => percentile(xs, p) })
        }
        // Host-added: per round, threadhost's percentile minus the floor's.
        for (const [p, x] of [
          [50, 5],
          [99, 25],
        ] as const) {
          add(`… host-added (threadhost minus the floor), p${p}`, 'ms', percentile(f.a, p) - percentile(f.c, p), undefined, { target: { of: 'value', op: '≤', x } })
        }
        if (f.d) {
          for (const p of [50, 99]) add(`… host-added by the tree at BENCH_BEFORE, p${p}`, 'ms', percentile(f.d, p) - percentile(f.c, p), undefined)
        }
      }
      if (runs('dialog')) {
        progress(`round ${round}: dialog latency`)
        const d = await dialogLatency(th, base, clients, 30)
        add('dialog answer → last of 100 followers settled, p99', 'ms', d.a, d.b, { combine: (xs) => percentile(xs, 99) })
        add('dialog answer → last of 100 followers settled, p50', 'ms', d.a, d.b, { combine: (xs) => percentile(xs, 50) })
      }
      if (runs('startup')) {
        progress(`round ${round}: start-up`)
        const [threads, page] = await startThreadhost()
        add('start-up to first 200 on /api/threads', 'ms', threads, await startBaseline())
        add('start-up to first 200 on GET / (the server listening)', 'ms', page, undefined)
        if (MODE === 'compiled' && round === 1) notes.push(`start-up through tsx with a cold cache (the old npm start): ${fmt(await startTsxCold())} ms`)
        if (MODE === 'compiled') {
          // Beside the warm start above (the cache filled by the starts before): a first start, and none.
          const [cold, off] = [await startCompileCache('cold'), await startCompileCache('off')]
          notes.push(`round ${round}: start-up to / and /api/threads with node's compile cache warm ${fmt(page)} / ${fmt(threads)} ms, cold ${fmt(cold[1])} / ${fmt(cold[0])}, off ${fmt(off[1])} / ${fmt(off[0])}`)
        }
      }
      if (runs('npm')) {
        progress(`round ${round}: npm start`)
        const n = await npmStart()
        add('`npm start` → first 200 on GET / (built)', 'ms', n.page, undefined, { target: { of: 'value', op: '≤', x: 1000 } })
        add('`npm start` → first 200 on /api/health (built)', 'ms', n.health, undefined, { target: { of: 'value', op: '≤', x: 1000 } })
        add('`npm start` RSS idle, every process of the command', 'MiB', n.total / 1024, undefined)
        add('… the server process alone', 'MiB', n.server / 1024, undefined)
        add('… the sum of its processes\' RSS ÷ the server alone (the node binary\'s pages counted in each)', '×', n.total / n.server, undefined)
        add('`npm start` resident memory idle, each page counted once', 'MiB', n.once / 1024, undefined)
        add('… ÷ the server alone', '×', n.once / n.server, undefined, { target: { of: 'value', op: '≤', x: 1.1 } })
        add('… npm beside the server: its anonymous memory (heap, stacks)', 'MiB', n.othersAnon / 1024, undefined)
        add('… anonymous memory of the command ÷ the server alone', '×', (n.serverAnon + n.othersAnon) / n.serverAnon, undefined)
        notes.push(`round ${round}: npm start's processes beside the server: ${n.others.join(', ') || 'none'}`)
      }
      if (runs('cold')) {
        progress(`round ${round}: ${COLD_THREADS} cold threads`)
        const cold = await coldHeap(COLD_THREADS, COLD_LIVED)
        add(`heap per cold thread, ${COLD_THREADS} threads created and never built`, 'KiB', cold.row / 1024, undefined, { target: { of: 'value', op: '≤', x: 2 } })
        add(`… more per thread that ran a prompt and went back cold (the second ${cold.count} of them, idle timeout)`, 'KiB', cold.lived / 1024, undefined)
        add(`… the same for the first ${cold.count} (what cooling loads once included)`, 'KiB', cold.first / 1024, undefined)
        add(`… the two together: a thread that was live, now cold`, 'KiB', (cold.row + cold.lived) / 1024, undefined, { target: { of: 'value', op: '≤', x: 2 } })
      }
      if (runs('heap')) {
        progress(`round ${round}: heap`)
        const heap = await heapPerThread(base, clients, HEAP_THREADS)
        add(`heap per idle live thread (${HEAP_THREADS} threads)`, 'KiB', heap.a / 1024, heap.b / 1024, { c: heap.c / 1024 })
        add('… the host\'s share (threadhost minus the floor)', 'KiB', (heap.a - heap.c) / 1024, undefined)
        // The split by runtime: threadhost's own pi sessions (its extensions and tools included) measured alone, the same way.
        add('… threadhost\'s pi sessions alone (same runtimes as the server, measured alone)', 'KiB', heap.pi / 1024, undefined)
        // Issue 24's "host heap per idle live thread" (≤ 16 KiB): what the host keeps beside the pi sessions it builds.
        add('… the host beside its own pi sessions (threadhost minus the above)', 'KiB', (heap.a - heap.pi) / 1024, undefined, { target: { of: 'value', op: '≤', x: 16 } })
        if (heap.d !== undefined) {
          add('heap per idle live thread, the tree at BENCH_BEFORE', 'KiB', heap.d / 1024, undefined)
          add('… the host beside its own pi sessions, the tree at BENCH_BEFORE (its pi sessions taken as this tree\'s)', 'KiB', (heap.d - heap.pi) / 1024, undefined)
        }
      }
      if (runs('big') || runs('stall')) {
        progress(`round ${round}: 99k reply`)
        const big = await bigReply(th, base, clients, 0)
        add('event-loop block (main-thread CPU between two turns), 99k-character reply to 10 followers', 'ms', big.a.block, big.b.block)
        add('event-loop block (wall clock, includes waiting for a core), 99k reply', 'ms', big.a.wall, big.b.wall)
        if (big.a.fastDropped) notes.push(`round ${round}: threadhost dropped ${big.a.fastDropped} fast followers during the 99k reply`)
        if (big.b.fastDropped) notes.push(`round ${round}: the baseline dropped ${big.b.fastDropped} fast followers during the 99k reply`)
      }
      if (runs('stall')) {
        progress(`round ${round}: 40 stalled followers`)
        const stall = await bigReply(th, base, clients, 40)
        add('event-loop block (main-thread CPU), 99k reply + 4 × 10,000 chunks + dropping 40 stalled followers', 'ms', stall.a.block, stall.b.block)
        add('event-loop block (wall clock), the same', 'ms', stall.a.wall, stall.b.wall)
        notes.push(
          `round ${round}: stalled followers closed — threadhost ${stall.a.stalledDropped}/40, baseline ${stall.b.stalledDropped}/40; fast followers dropped — threadhost ${stall.a.fastDropped}/10, baseline ${stall.b.fastDropped}/10`,
        )
      }
      if (runs('concurrent')) {
        if (!concurrent) {
          // Here rather than up front: its idle threads would otherwise sit through the other scenarios.
          progress(`concurrent: ${CONCURRENT_KS.at(-1)} threads built and run once (untimed)`)
          concurrent = await Concurrent.start(base, clients)
        }
        await concurrent.round(round)
      }
      if (runs('cluster')) {
        if (cluster === undefined) cluster = (await ClusterBench.start({ mode: MODE, quick: QUICK, progress })) ?? null
        await cluster?.round(round, clients)
      }
      console.log(`round ${round} done in ${((performance.now() - t) / 1000).toFixed(0)} s`)
    }
    // After every round: each sample kills a node and starts it again, and a node just started runs its first requests on cold code.
    await cluster?.idle()
    await cluster?.failovers(ROUNDS)
  } finally {
    clients.kill()
    await Promise.all([th.stop(), base.stop(), floor?.stop(), before?.stop(), paced?.th.stop(), paced?.floor.stop(), concurrent?.stop(), cluster?.stop()])
  }
  const load1 = loadavg()
  console.log('')
  console.log('| figure | threadhost | pi floor | raw | ÷ floor | ÷ raw | target |')
  console.log('|---|---|---|---|---|---|---|')
  for (const row of rows.values()) {
    const combine = row.combine ?? median
    const get = (xs: number[]) => (xs.length ? combine(xs) : NaN)
    const [a, b, c] = [get(row.a), get(row.b), get(row.c)]
    const ratio = (x: number) => (Number.isFinite(x) && Number.isFinite(a) && x !== 0 ? fmt(a / x) : '')
    console.log(`| ${row.figure} (${row.unit}) | ${fmt(a)} | ${Number.isNaN(c) ? '' : fmt(c)} | ${Number.isNaN(b) ? '' : fmt(b)} | ${ratio(c)} | ${ratio(b)} | ${judge(row.target, a, b, c)} |`)
  }
  console.log('')
  console.log('per round (threadhost / pi floor / raw):')
  for (const row of rows.values()) {
    if (row.combine) continue
    console.log(`  ${row.figure}: ${row.a.map((x, i) => [x, row.c[i], row.b[i]].filter((v) => v !== undefined).map(fmt).join(' / ')).join(', ')}`)
  }
  for (const note of notes) console.log(`  ${note}`)
  cluster?.report(percentile, fmt)
  console.log(`\nload average at the end ${load1.map((l) => l.toFixed(2)).join(' ')}; took ${((performance.now() - began) / 1000).toFixed(0)} s`)
}

await main()
process.exit(0)
