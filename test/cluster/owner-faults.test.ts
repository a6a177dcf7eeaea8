/**
 * The owner rows of the cluster's failure matrix (docs/flows/cluster.md), with real processes: three
 * threadhost nodes on one nats-server, each in its own PID namespace, running real pi tools (bash)
 * through the demo model. An owner killed with -9 mid-run, a non-owner killed with -9 under its
 * tabs, and an owner frozen (SIGSTOP) past its lease then woken. Needs nats-server and root (the
 * namespaces); skipped, saying why, otherwise.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { natsMissing, startNats, type NatsServer } from '../support/nats-server.js'
import { spawnedServers } from '../support/spawn-server.js'
import { api, bashAllowedPolicy, Follower, namespaces, nodePid, processesMatching, settledRun, startCluster as startClusterOf, type Frame } from './harness.js'

const skip = natsMissing ?? (namespaces ? undefined : 'PID namespaces unavailable (the test must run as root with unshare): a killed node would leave its tools running; skipped')

/** A marker no other process on the machine has in its command line: `sleep 300.<digits>`. */
const marker = () => `300.${String(process.hrtime.bigint() % 1_000_000n).padStart(6, '0')}`
const call = (tool: string, args: object) => `call ${tool} ${JSON.stringify(args)}`

/** Each seq once, increasing: nothing reused, nothing doubled. */
function expectStrictlyIncreasing(frames: Frame[]): void {
  const ids = frames.map((f) => f.id)
  for (let i = 1; i < ids.length; i++) expect(ids[i], `frame ${i} after ${ids[i - 1]}`).toBeGreaterThan(ids[i - 1])
}

/** The same seq is the same bytes for every follower that has it. */
function expectSameBytes(followers: Follower[]): void {
  const first = new Map<number, string>()
  for (const f of followers) {
    for (const frame of f.frames) {
      const seen = first.get(frame.id)
      if (seen === undefined) first.set(frame.id, frame.bytes)
      else expect(frame.bytes).toBe(seen)
    }
  }
}

const count = (f: Follower, predicate: (x: Frame) => boolean) => f.frames.filter(predicate).length

describe.skipIf(skip !== undefined)(`owner faults in a cluster of threadhost nodes${skip ? ` (${skip})` : ''}`, () => {
  const servers = spawnedServers('cluster-owner-faults')
  let nats: NatsServer
  beforeAll(async () => {
    nats = await startNats()
  })
  afterAll(() => nats?.stop())

  const startCluster = async (names: string[]) => startClusterOf(servers, nats, names, ['--tools-policy', bashAllowedPolicy(await servers.tempDataDir())])

  it('an owner killed with -9 holding an open question, queued prompts and a running tool: survivors report each once (dialog aborted, prompts owner-lost, run aborted) within 5 s, and no tool process is left', async () => {
    const cluster = await startCluster(['k1', 'k2', 'k3'])
    const [a] = cluster.urls()
    expect((await api(a, 'POST', '/api/threads', { id: 'busy' })).status).toBe(201)
    const tool = marker()
    const run = [call('bash', { command: `sleep ${tool}` }), call('ui_dialog', { method: 'confirm', title: 'Deploy?' })].join('\n')
    expect((await api(a, 'POST', '/api/threads/busy/prompt', { message: run })).status).toBe(202)
    const ownerName = (await api(a, 'GET', '/api/threads/busy')).body?.node as string
    const owner = cluster.nodes.get(ownerName)!
    const survivors = [...cluster.nodes].filter(([name]) => name !== ownerName).map(([, n]) => n.url)
    const followers = [0, 1, 2, 3].map((i) => new Follower(() => survivors, 'busy', i))
    const question = (f: Follower) => f.frames.find((x) => x.event === 'extension-ui-request')
    // How long the run takes to get there (a runtime built, two tool calls) is not what this test bounds: on a loaded 2-core machine it took over 15 s.
    await expect.poll(() => followers.every((f) => question(f) && f.has((x) => x.event === 'tool-start' && x.data.name === 'bash')), { timeout: 30_000 }).toBe(true)
    await expect.poll(() => processesMatching(`sleep ${tool}`).length, { timeout: 5000 }).toBeGreaterThan(0)
    const queued = []
    for (const text of ['first queued', 'second queued']) {
      const accepted = await api(survivors[0], 'POST', '/api/threads/busy/prompt', { message: text, deliverAs: 'followUp' })
      expect(accepted.status).toBe(202)
      queued.push(accepted.body?.messageId as string)
    }
    await expect.poll(() => followers.every((f) => f.has((x) => x.event === 'queue' && (x.data.followUp as string[]).length === 2)), { timeout: 5000 }).toBe(true)
    const dialogId = question(followers[0])!.data.id as string

    const killedAt = Date.now()
    owner.server.child.kill('SIGKILL')
    await owner.server.exit
    cluster.nodes.delete(ownerName)
    await expect.poll(() => followers.every((f) => f.has(settledRun(1, true))), { timeout: 10_000, interval: 50 }).toBe(true)
    const takeoverMs = Date.now() - killedAt
    console.log(`[cluster] owner kill -9 with a question, 2 queued prompts and a running bash: settled {aborted} at ${followers.length} followers on survivors in ${takeoverMs} ms`)
    expect(takeoverMs).toBeLessThanOrEqual(5000)

    await expect.poll(() => followers.every((f) => f.has((x) => x.event === 'status' && x.data.busy === false && x.data.live === false)), { timeout: 5000 }).toBe(true)
    for (const f of followers) {
      expect(count(f, (x) => x.event === 'dialog-settled' && x.data.id === dialogId && x.data.outcome === 'aborted')).toBe(1)
      expect(count(f, (x) => x.event === 'dialog-settled' && x.data.id === dialogId)).toBe(1)
      for (const messageId of queued) {
        expect(count(f, (x) => x.event === 'prompt-rejected' && x.data.messageId === messageId && x.data.reason === 'owner-lost')).toBe(1)
        expect(count(f, (x) => x.event === 'user-message' && x.data.messageId === messageId)).toBe(0)
      }
      expect(count(f, (x) => x.event === 'settled' && x.data.run === 1)).toBe(1)
      expectStrictlyIncreasing(f.frames)
    }
    expectSameBytes(followers)
    // The node's namespace went with it, and the detached bash with the namespace.
    expect(processesMatching(`sleep ${tool}`)).toEqual([])

    // The thread goes on from a survivor.
    expect((await api(survivors[1], 'POST', '/api/threads/busy/prompt', { message: 'after the owner died' })).status).toBe(202)
    await expect.poll(() => followers.every((f) => f.has(settledRun(2, false))), { timeout: 15_000 }).toBe(true)
    for (const f of followers) f.close()
  })

  it('a non-owner killed with -9 under its tabs: they reconnect to another node and resume exactly, no frame lost or doubled', async () => {
    const cluster = await startCluster(['m1', 'm2', 'm3'])
    const [a] = cluster.urls()
    expect((await api(a, 'POST', '/api/threads', { id: 'watched' })).status).toBe(201)
    // m1 takes the thread with the prompt sent to it; m2 serves only tabs.
    const victimName = 'm2'
    const victim = cluster.nodes.get(victimName)!
    const reference = new Follower(() => [a], 'watched', 0)
    // Each tab starts on the victim and, when its stream closes, goes on to the next live node.
    const tabs = [0, 1, 2].map(() => new Follower(() => [victim.url, ...[...cluster.nodes].filter(([n]) => n !== victimName).map(([, n]) => n.url)], 'watched', 0))
    await expect.poll(() => [reference, ...tabs].every((f) => f.snapshots.length === 1), { timeout: 10_000 }).toBe(true)
    expect((await api(a, 'POST', '/api/threads/watched/prompt', { message: 'slow 150' })).status).toBe(202)
    expect((await api(a, 'GET', '/api/threads/watched')).body?.node).toBe('m1')
    await expect.poll(() => tabs.every((f) => count(f, (x) => x.event === 'assistant-delta') >= 5), { timeout: 15_000 }).toBe(true)

    const before = tabs.map((f) => f.frames.length)
    const killedAt = Date.now()
    victim.server.child.kill('SIGKILL')
    await victim.server.exit
    cluster.nodes.delete(victimName)
    await expect.poll(() => tabs.every((f, i) => f.frames.length > before[i]), { timeout: 10_000, interval: 20 }).toBe(true)
    console.log(`[cluster] non-owner kill -9: its ${tabs.length} tabs had frames again from another node ${Date.now() - killedAt} ms after the kill`)
    await expect.poll(() => [reference, ...tabs].every((f) => f.has(settledRun(1, false))), { timeout: 15_000 }).toBe(true)

    // Up to the run's end, which every follower has: frames after it may still be on their way.
    const end = reference.frames.find(settledRun(1, false))!.id
    const upToEnd = (f: Follower) => f.frames.filter((x) => x.id <= end).map((x) => [x.id, x.bytes])
    for (const f of tabs) {
      // One snapshot when it first attached; the reconnect resumed from the ring, so none after.
      expect(f.snapshots).toHaveLength(1)
      expectStrictlyIncreasing(f.frames)
      const ids = f.frames.map((x) => x.id)
      for (let i = 1; i < ids.length; i++) expect(ids[i]).toBe(ids[i - 1] + 1)
      expect(upToEnd(f)).toEqual(upToEnd(reference))
    }
    for (const f of [reference, ...tabs]) f.close()
  })

  it('an owner frozen 6 s then woken: a survivor takes over, the old owner writes nothing more (log, session, workspace), kills the tools it started and closes its follows', async () => {
    const cluster = await startCluster(['s1', 's2', 's3'])
    const [a] = cluster.urls()
    const tool = marker()
    const late = join(cluster.workspace, `written-after-wake-${tool}.txt`)
    for (const id of ['sleeper', 'writer']) expect((await api(a, 'POST', '/api/threads', { id })).status).toBe(201)
    // `sleeper` runs a tool for 5 minutes; `writer` a short one whose run would then go on to its
    // queued follow-up, a tool that writes a file in the shared workspace — after the freeze.
    expect((await api(a, 'POST', '/api/threads/sleeper/prompt', { message: call('bash', { command: `sleep ${tool}` }) })).status).toBe(202)
    expect((await api(a, 'POST', '/api/threads/writer/prompt', { message: call('bash', { command: 'sleep 2' }) })).status).toBe(202)
    const ownerName = (await api(a, 'GET', '/api/threads/writer')).body?.node as string
    expect((await api(a, 'GET', '/api/threads/sleeper')).body?.node).toBe(ownerName)
    const owner = cluster.nodes.get(ownerName)!
    const followUp = await api(a, 'POST', '/api/threads/writer/prompt', { message: call('bash', { command: `echo old-owner >> ${late}` }), deliverAs: 'followUp' })
    expect(followUp.status).toBe(202)
    const survivors = [...cluster.nodes].filter(([name]) => name !== ownerName).map(([, n]) => n.url)
    const watch = (id: string) => [0, 1].map((i) => new Follower(() => survivors, id, i))
    const followers = { sleeper: watch('sleeper'), writer: watch('writer') }
    // A tab on the owner itself: once the owner wakes and lets the thread go, its stream ends and it goes on elsewhere.
    const frozenTab = new Follower(() => [owner.url, ...survivors], 'writer', 0)
    const all = [...followers.sleeper, ...followers.writer]
    // A tab that attached after the tool started has it in its snapshot's transcript, not as a frame.
    const sawTool = (f: Follower) =>
      f.has((x) => x.event === 'tool-start') || f.snapshots.some((s) => (s.data.transcript as { kind: string }[]).some((e) => e.kind === 'tool'))
    await expect.poll(() => all.every(sawTool) && sawTool(frozenTab), { timeout: 15_000 }).toBe(true)
    await expect.poll(() => processesMatching(`sleep ${tool}`).length, { timeout: 5000 }).toBeGreaterThan(0)

    const pid = nodePid(owner.server)
    const frozenAt = Date.now()
    process.kill(pid, 'SIGSTOP')
    try {
      await expect.poll(() => all.every((f) => f.has(settledRun(1, true))), { timeout: 5500, interval: 50 }).toBe(true)
      console.log(`[cluster] owner frozen: a survivor took both threads over ${Date.now() - frozenAt} ms after SIGSTOP`)
      // Its detached tool was not frozen with it (a residual the design names): it is still there.
      expect(processesMatching(`sleep ${tool}`).length).toBeGreaterThan(0)
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, frozenAt + 6000 - Date.now())))
    } finally {
      process.kill(pid, 'SIGCONT')
    }
    const wokeAt = Date.now()
    const seen = all.map((f) => f.frames.length)
    // Nobody writes the threads' session files until a new prompt: the new owner builds no runtime at takeover.
    const session = (id: string) => readFileSync(join(cluster.dataDir, 'sessions', id, 'session.jsonl'), 'utf8')
    const sessions = { sleeper: session('sleeper'), writer: session('writer') }

    // On waking it finds itself replaced: the tool process group it started is killed.
    await expect.poll(() => processesMatching(`sleep ${tool}`).length, { timeout: 5000, interval: 50 }).toBe(0)
    console.log(`[cluster] owner woken: its tool process group was gone ${Date.now() - wokeAt} ms after SIGCONT`)
    // Its tab's stream was closed; the tab went on elsewhere, with its last seq.
    await expect.poll(() => frozenTab.has(settledRun(1, true)), { timeout: 10_000, interval: 50 }).toBe(true)
    console.log(`[cluster] owner woken: its own tab had the takeover's frames ${Date.now() - frozenAt} ms after SIGSTOP (${Date.now() - wokeAt} ms after SIGCONT)`)
    // …from another node: the woken owner holds no follow stream open.
    const openOnOwner = async () => Number(/^threadhost_followers(?:\{[^}]*\})? (\d+)$/m.exec(await (await fetch(`${owner.url}/metrics`)).text())?.[1])
    await expect.poll(openOnOwner, { timeout: 5000 }).toBe(0)
    // Time enough for what the woken owner would have done: its run ending, the follow-up's tool.
    await new Promise((resolve) => setTimeout(resolve, 2500))

    expect(existsSync(late)).toBe(false)
    // The woken owner's aborted run appended nothing to the session files the new owner reads.
    expect(session('sleeper')).toBe(sessions.sleeper)
    expect(session('writer')).toBe(sessions.writer)
    for (const f of [...all, frozenTab]) {
      expectStrictlyIncreasing(f.frames)
      expect(count(f, (x) => x.event === 'settled' && x.data.run === 1)).toBe(1)
    }
    for (const [i, f] of all.entries()) {
      // Nothing the old owner did after the new epoch is in the log: no frame at all since it woke.
      expect(f.frames.slice(seen[i]).map((x) => x.event)).toEqual([])
    }
    expectSameBytes([...followers.writer, frozenTab])
    for (const f of followers.writer) {
      expect(count(f, (x) => x.event === 'prompt-rejected' && x.data.messageId === followUp.body?.messageId && x.data.reason === 'owner-lost')).toBe(1)
    }
    // The thread goes on from a survivor, its session intact.
    expect((await api(survivors[0], 'POST', '/api/threads/writer/prompt', { message: 'still here?' })).status).toBe(202)
    await expect.poll(() => followers.writer.every((f) => f.has(settledRun(2, false))), { timeout: 15_000 }).toBe(true)
    const transcript = (await api(survivors[1], 'GET', '/api/threads/writer')).status
    expect(transcript).toBe(200)
    for (const f of [...all, frozenTab]) f.close()
  })
})
