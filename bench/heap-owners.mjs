// `node --import tsx bench/heap-owners.mjs [threads] [--cold] [--detail] [--script=path/to/main.js]`: who holds the heap of an idle live thread, by heap snapshot.
// With `--cold` the server runs with `--idle-ms 500` and each thread is snapshotted after it went back
// cold (what a thread keeps once its actor, runtime and feed are let go).
// Starts the compiled server (dist/server/main.js; `npm run build:server` first) with bench/probe.mjs
// as `npm run bench` does, runs one `hello` prompt on each of `threads` new threads (default 200)
// and keeps them live and idle, takes a heap snapshot before and after (both after a full GC), and
// attributes every object that is new in the second to the nearest owner on its retainer chain: pi's
// classes (AgentSession, ExtensionRunner, SessionManager, …) or the host's (Actor, Feed, LiveThread,
// …). The chain is followed through the first retainers only (no dominator tree), so the split is an
// estimate; the total per thread is exact. Not a test and not part of `npm run bench`.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { spawnServer } from '../test/support/spawn-server.ts'

const root = resolve(import.meta.dirname, '..')
const COLD = process.argv.includes('--cold')
const N = Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 200)
/** `--script=dist/server-before/main.js`: another compiled tree (as `BENCH_BEFORE` of `npm run bench`). */
const SCRIPT = process.argv.find((a) => a.startsWith('--script='))?.slice('--script='.length)
// EventEmitter: pi's event bus, one per session (core/event-bus.js).
const PI = ['AgentSession', 'ExtensionRunner', 'SessionManager', 'SettingsManager', 'DefaultResourceLoader', 'Agent', 'PiRuntime', 'EventMapper', 'EventEmitter']
const HOST = ['LiveThread', 'ThreadSlot', 'Feed', 'IncrementalView', 'Actor', 'StateMachine', 'FanOut', 'ThreadJournal', 'DialogBridge', 'AskBridge', 'TerminalBridge', 'Pino']

const dir = mkdtempSync(join(tmpdir(), 'threadhost-heap-'))
const server = spawnServer({
  entry: 'compiled',
  ...(SCRIPT ? { script: resolve(SCRIPT) } : {}),
  node: ['--expose-gc', '--import', join(root, 'bench/probe.mjs')],
  args: ['--port', '0', '--data-dir', dir, '--agent-dir', join(dir, 'agent'), '--workspace', dir, '--model', 'demo', '--demo-delay-ms', '0', '--inspector', 'off', ...(COLD ? ['--idle-ms', '500'] : [])],
  ipc: true,
})
const proc = server.child
const url = (await server.url).replace('localhost', '127.0.0.1')
const probe = (m) =>
  new Promise((ok) => {
    const on = (r) => r.probe === m.probe && (proc.off('message', on), ok(r))
    proc.on('message', on)
    proc.send(m)
  })
const api = async (method, path, body) => {
  const r = await fetch(url + path, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined })
  return r.json().catch(() => undefined)
}
async function thread(id) {
  await api('POST', '/api/threads', { id })
  await api('POST', `/api/threads/${id}/prompt`, { message: 'hello' })
  for (;;) {
    const r = await api('GET', `/api/threads/${id}`)
    if (r?.busy === false && r.run > 0) return
    await new Promise((r) => setTimeout(r, 5))
  }
}
/** With --cold: every thread made so far is back cold (its idle timeout passed, the slot at rest). */
async function cooled(ids) {
  if (!COLD) return
  for (const id of ids) {
    while ((await api('GET', `/api/threads/${id}`))?.live !== false) await new Promise((r) => setTimeout(r, 50))
  }
}
// Cooling loads more once (code, lazily loaded modules) than a thread keeps: warm it with more threads.
const warm = Array.from({ length: COLD ? 60 : 2 }, (_, i) => `warm-${i}`)
for (const id of warm) await thread(id)
await cooled(warm)
await new Promise((r) => setTimeout(r, 300))
const a = (await probe({ probe: 'snapshot', path: join(dir, 'a.heapsnapshot') })).path
for (let i = 0; i < N; i++) await thread(`t${i}`)
await cooled(Array.from({ length: N }, (_, i) => `t${i}`))
await new Promise((r) => setTimeout(r, 300))
const b = (await probe({ probe: 'snapshot', path: join(dir, 'b.heapsnapshot') })).path
await server.stop()

const A = JSON.parse(readFileSync(a, 'utf8'))
const B = JSON.parse(readFileSync(b, 'utf8'))
rmSync(dir, { recursive: true, force: true })
const meta = B.snapshot.meta
const nf = meta.node_fields.length
const ef = meta.edge_fields.length
const types = meta.node_types[0]
const etypes = meta.edge_types[0]
const [iT, iN, iId, iS, iE] = ['type', 'name', 'id', 'self_size', 'edge_count'].map((k) => meta.node_fields.indexOf(k))
const [eT, eN, eTo] = ['type', 'name_or_index', 'to_node'].map((k) => meta.edge_fields.indexOf(k))
// Node ids are stable across snapshots of one process: what is not in the first is new.
const old = new Set()
for (let i = 0; i < A.nodes.length; i += nf) old.add(A.nodes[i + iId])
const { nodes, edges, strings } = B
const count = nodes.length / nf
const retainers = Array.from({ length: count }, () => [])
for (let i = 0, e = 0; i < count; i++) {
  for (let k = 0; k < nodes[i * nf + iE]; k++, e += ef) {
    const t = etypes[edges[e + eT]]
    if (t === 'weak' || t === 'shortcut') continue
    const to = edges[e + eTo] / nf
    if (retainers[to].length < 4) retainers[to].push(i)
  }
}
// esbuild renames a class with static private members (`_LiveThread`): the owner is the class.
const nameOf = (i) => strings[nodes[i * nf + iN]].replace(/^_(?=[A-Z])/, '')
const firstEdge = new Uint32Array(count + 1)
for (let i = 0; i < count; i++) firstEdge[i + 1] = firstEdge[i] + nodes[i * nf + iE] * ef
/** An actor's owner name says which machine's actor it is, by the id it was given (`thread:t1` → `Actor thread`, a child's `askQueue`). */
function actorLabel(i) {
  for (let e = firstEdge[i]; e < firstEdge[i + 1]; e += ef) {
    if (etypes[edges[e + eT]] !== 'property' || strings[edges[e + eN]] !== 'id') continue
    const id = strings[nodes[edges[e + eTo] + iN]]
    return `Actor ${/^x:\d+$/.test(id) ? 'slot' : id.split(':')[0]}`
  }
  return 'Actor'
}
const label = (i) => (nameOf(i) === 'Actor' ? actorLabel(i) : nameOf(i))
const isPi = (o) => PI.includes(o)
const isHost = (o) => HOST.includes(o) || o.startsWith('Actor')
const isNew = (i) => !old.has(nodes[i * nf + iId])
const cache = new Map()
function ownerOf(i, depth, seen) {
  if (cache.has(i)) return cache.get(i)
  const t = types[nodes[i * nf + iT]]
  if (t === 'object' && (PI.includes(nameOf(i)) || HOST.includes(nameOf(i)))) return label(i)
  if (depth > 14 || seen.has(i)) return undefined
  seen.add(i)
  // New retainers first: a new object usually belongs to the thread that made it.
  for (const r of [...retainers[i].filter(isNew), ...retainers[i].filter((r) => !isNew(r))]) {
    const found = ownerOf(r, depth + 1, seen)
    if (found) return found
  }
  return undefined
}
const byOwner = new Map()
let total = 0
for (let i = 0; i < count; i++) {
  if (!isNew(i)) continue
  const owner = ownerOf(i, 0, new Set()) ?? '(no owner found)'
  cache.set(i, owner)
  byOwner.set(owner, (byOwner.get(owner) ?? 0) + nodes[i * nf + iS])
  total += nodes[i * nf + iS]
}
const kib = (bytes) => (bytes / N / 1024).toFixed(1)
const side = (is) => [...byOwner].filter(([o]) => is(o)).reduce((s, [, v]) => s + v, 0)
console.log(`${N} ${COLD ? 'threads back cold' : 'idle live threads'}: ${kib(total)} KiB of new objects per thread (self sizes, native backing stores included)`)
console.log(`  pi: ${kib(side(isPi))} KiB   host: ${kib(side(isHost))} KiB   no owner found: ${kib(byOwner.get('(no owner found)') ?? 0)} KiB`)
console.log('\n| owner | side | KiB per thread |\n|---|---|---|')
for (const [o, v] of [...byOwner].sort((x, y) => y[1] - x[1])) console.log(`| ${o} | ${isPi(o) ? 'pi' : isHost(o) ? 'host' : '—'} | ${kib(v)} |`)
if (process.argv.includes('--detail')) {
  // What the objects no owner was found for are, by type and name, with one retainer chain each.
  const groups = new Map()
  for (let i = 0; i < count; i++) {
    if (!isNew(i) || isPi(cache.get(i))) continue
    const key = `${cache.get(i) === '(no owner found)' ? '' : `[${cache.get(i)}] `}${types[nodes[i * nf + iT]]} ${nameOf(i).slice(0, 60)}`
    const g = groups.get(key) ?? { size: 0, n: 0, sample: i }
    g.size += nodes[i * nf + iS]
    g.n++
    groups.set(key, g)
  }
  const chain = (i) => {
    const out = []
    const seen = new Set()
    for (let d = 0; d < 16 && i !== undefined && !seen.has(i); d++) {
      seen.add(i)
      out.push(`${types[nodes[i * nf + iT]]}:${nameOf(i).slice(0, 40)}${isNew(i) ? '' : '(old)'}`)
      i = [...retainers[i].filter(isNew), ...retainers[i]][0]
    }
    return out.join(' <- ')
  }
  console.log('\n| [host owner] or no owner: type name | count per thread | KiB per thread | a retainer chain |\n|---|---|---|---|')
  for (const [k, g] of [...groups].sort((x, y) => y[1].size - x[1].size).slice(0, 40)) console.log(`| ${k} | ${(g.n / N).toFixed(1)} | ${kib(g.size)} | ${chain(g.sample)} |`)
}
process.exit(0)
