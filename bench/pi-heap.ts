/**
 * "pi alone" for the heap figure of `npm run bench`: the runtime adapter's sessions without the host.
 * Run by bench/compare.ts as its own process (compiled like the server, `--expose-gc`, an IPC
 * channel): it builds pi runtimes exactly as the server does (createPiRuntimeFactory, the demo model
 * with no delay, a fresh data and agent dir) with a UI bridge that does nothing, runs one `hello`
 * prompt on each and keeps it, and measures the heap the same way the bench's probe does (after a
 * full GC): warm with two, then `n` more.
 *
 *   {cmd: 'measure', n} → {perThread: bytes}
 *
 * The server's heap per idle live thread minus this is the host's share (feed, view, machines,
 * bridges, logger), so the split the bench prints compares like with like.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPiRuntimeFactory, PiModels, type AgentRuntime, type UiBridge } from '../src/runtime/index.js'

const dir = mkdtempSync(join(tmpdir(), 'threadhost-bench-pi-'))
const agentDir = join(dir, 'agent')
const silent = { info: () => {}, warn: () => {}, error: () => {} }
const models = await PiModels.create({ agentDir, demoDelayMs: 0 })
const factory = createPiRuntimeFactory({ dataDir: dir, agentDir, models, log: silent })
const ui: UiBridge = {
  ask: async () => ({ outcome: 'cancelled' }),
  askUser: async () => ({ status: 'unavailable' }),
  notify: () => {},
  setStatus: () => {},
  setWidget: () => {},
  setWorking: () => {},
  setTitle: () => {},
  setEditorText: () => {},
  editorText: () => '',
}
const kept: AgentRuntime[] = []
let count = 0

/** One runtime, as the registry builds it for a thread's first prompt, after that prompt's run. */
async function oneThread(): Promise<void> {
  const runtime = await factory.create({ threadId: `pi-${++count}`, model: 'demo', cwd: dir, ui })
  const settled = new Promise<void>((resolve) => runtime.subscribe((e) => e.type === 'settled' && resolve()))
  runtime.prompt({ messageId: `m-${count}`, text: 'hello' }, runtime.lastRun() + 1)
  await settled
  kept.push(runtime)
}

function heap(): number {
  globalThis.gc?.()
  globalThis.gc?.()
  return process.memoryUsage().heapUsed
}

process.on('message', async (message: { cmd?: string; n?: number }) => {
  if (message?.cmd !== 'measure') return
  await oneThread()
  await oneThread()
  await new Promise((r) => setTimeout(r, 200))
  const before = heap()
  for (let i = 0; i < (message.n ?? 10); i++) await oneThread()
  await new Promise((r) => setTimeout(r, 200))
  const after = heap()
  process.send!({ perThread: (after - before) / (message.n ?? 10) })
  for (const r of kept) await r.dispose()
  rmSync(dir, { recursive: true, force: true })
  process.exit(0)
})
process.send!({ ready: true })
