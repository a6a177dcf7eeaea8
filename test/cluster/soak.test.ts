/**
 * The cluster soak (issue 23): three nodes on a real nats-server, prompts (each with an
 * Idempotency-Key, retried with the same key on any error) and dialog answers sent to random nodes,
 * tabs spread over the nodes (reconnecting to another when theirs is gone), and every
 * THREADHOST_SOAK_KILL_MS (default 30 s) a random node killed with -9 and started again, for
 * THREADHOST_SOAK_MS (default 120 s). Checked throughout and at the end: every 202's messageId is
 * in the transcript or reported `prompt-rejected` (accepted-and-lost = 0), no prompt runs twice,
 * each tab's seq strictly increasing, the same bytes for each seq on every tab. Counts are printed.
 * Skipped, saying why, where nats-server is not installed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { natsMissing, startNats, type NatsServer } from '../support/nats-server.js'
import { spawnedServers } from '../support/spawn-server.js'
import { api, Follower, startCluster, type Frame } from './harness.js'

const DURATION_MS = Number(process.env.THREADHOST_SOAK_MS ?? 120_000)
const KILL_EVERY_MS = Number(process.env.THREADHOST_SOAK_KILL_MS ?? 30_000)
const THREADS = 6
const TABS_PER_THREAD = 3
const NAMES = ['s1', 's2', 's3']
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)]

/** What the tabs of one thread saw, checked as it comes: seq order per tab, bytes per seq across tabs. */
class Checks {
  outOfOrder = 0
  bytesDiffer = 0
  readonly #checked = new Map<Follower, number>()
  readonly #bytes = new Map<string, Map<number, string>>()

  /** Looks at what each tab got since the last look. */
  look(tabs: Map<string, Follower[]>): void {
    for (const [threadId, followers] of tabs) {
      const bytes = this.#bytes.get(threadId) ?? new Map<number, string>()
      this.#bytes.set(threadId, bytes)
      for (const f of followers) {
        const from = this.#checked.get(f) ?? 0
        for (let i = from; i < f.frames.length; i++) {
          const frame = f.frames[i]
          if (i > 0 && frame.id <= f.frames[i - 1].id) this.outOfOrder++
          const seen = bytes.get(frame.id)
          if (seen === undefined) bytes.set(frame.id, frame.bytes)
          else if (seen !== frame.bytes) this.bytesDiffer++
        }
        this.#checked.set(f, f.frames.length)
      }
    }
  }
}

describe.skipIf(natsMissing !== undefined)(`the cluster soak${natsMissing ? ` (${natsMissing})` : ''}`, () => {
  const servers = spawnedServers('soak')
  let nats: NatsServer
  beforeAll(async () => {
    nats = await startNats()
  })
  afterAll(() => nats?.stop())

  it(
    'soak: prompts, follows and dialog answers over 3 nodes while a random node is killed with -9 and restarted every 30 s; accepted-and-lost 0, no prompt run twice, each tab in seq order, the same bytes per seq on every tab',
    async () => {
      const cluster = await startCluster(servers, nats, NAMES)
      const urls = cluster.urls
      const live = () => urls()
      for (;;) {
        const health = await api(live()[0], 'GET', '/api/health')
        if ((health.body?.cluster as { nodes?: string[] } | undefined)?.nodes?.length === 3) break
        await sleep(100)
      }
      const threadIds = Array.from({ length: THREADS }, (_, i) => `soak-${i}`)
      for (const id of threadIds) expect((await api(live()[0], 'POST', '/api/threads', { id })).status).toBe(201)
      const tabs = new Map<string, Follower[]>()
      for (const [t, id] of threadIds.entries()) tabs.set(id, Array.from({ length: TABS_PER_THREAD }, (_, k) => new Follower(urls, id, t + k)))

      // ——— the clients ———
      const counts = { sent: 0, accepted: 0, retries: 0, gaveUp: 0, answers: 0, kills: 0 }
      /** Each key's 202 answers: the messageIds (one per key if the key holds across nodes) and its thread. */
      const accepted = new Map<string, { threadId: string; messageIds: Set<string> }>()
      const end = Date.now() + DURATION_MS
      let stopping = false
      let keys = 0

      const send = async (threadId: string, text: string, key: string): Promise<void> => {
        counts.sent++
        const deadline = Date.now() + 60_000
        for (let attempt = 0; Date.now() < deadline; attempt++) {
          if (attempt > 0) {
            counts.retries++
            await sleep(250)
          }
          const base = pick(live())
          const r = await api(base, 'POST', `/api/threads/${threadId}/prompt`, { message: text }, { 'idempotency-key': key }).catch(() => undefined)
          if (r?.status !== 202) continue
          const entry = accepted.get(key) ?? { threadId, messageIds: new Set<string>() }
          entry.messageIds.add(r.body?.messageId as string)
          accepted.set(key, entry)
          counts.accepted++
          return
        }
        counts.gaveUp++
      }
      const prompter = async () => {
        while (Date.now() < end) {
          const key = `k${++keys}`
          const threadId = pick(threadIds)
          const text = Math.random() < 0.15 ? `call ui_dialog {"method":"confirm","title":"soak ${key}","message":"ok?"}` : `soak ${key} ${'word '.repeat(1 + Math.floor(Math.random() * 8))}`
          await send(threadId, text, key)
          await sleep(300 + Math.random() * 400)
        }
      }
      /** Answers every open question a tab of its thread shows, through a random node. */
      const answerer = async () => {
        while (!stopping) {
          for (const [threadId, followers] of tabs) {
            const settled = new Set(followers.flatMap((f) => f.frames.filter((x) => x.event === 'dialog-settled').map((x) => x.data.id as string)))
            const open = new Set(followers.flatMap((f) => f.frames.filter((x) => x.event === 'extension-ui-request').map((x) => x.data.id as string)))
            for (const id of open) {
              if (settled.has(id)) continue
              const r = await api(pick(live()), 'POST', `/api/threads/${threadId}/dialog`, { id, confirmed: true }).catch(() => undefined)
              if (r?.status === 204) counts.answers++
            }
          }
          await sleep(200)
        }
      }
      const killer = async () => {
        for (let at = Date.now() + KILL_EVERY_MS; at < end; at += KILL_EVERY_MS) {
          await sleep(at - Date.now())
          const name = pick([...cluster.nodes.keys()])
          const node = cluster.nodes.get(name)!
          node.server.child.kill('SIGKILL')
          await node.server.exit
          cluster.nodes.delete(name)
          counts.kills++
          console.log(`[soak] ${new Date().toISOString()} killed ${name} (-9); starting it again`)
          await cluster.start(name)
        }
      }

      const checks = new Checks()
      const checker = setInterval(() => checks.look(tabs), 2000)
      const answering = answerer()
      try {
        await Promise.all([prompter(), prompter(), killer()])
        // ——— the dust settles: every thread idle, its queue empty, every open question answered ———
        const quiet = async (threadId: string) => {
          // Idle twice, half a second apart: a queued prompt starts its run in between.
          let idleBefore = false
          for (const until = Date.now() + 90_000; Date.now() < until; await sleep(500)) {
            const r = await api(pick(live()), 'GET', `/api/threads/${threadId}`).catch(() => undefined)
            const idle = r?.status === 200 && r.body?.busy === false
            if (idle && idleBefore) return true
            idleBefore = idle
          }
          return false
        }
        const idle = await Promise.all(threadIds.map(quiet))
        expect(idle.every(Boolean), 'every thread idle within 90 s of the end').toBe(true)
      } finally {
        stopping = true
        clearInterval(checker)
        await answering
      }

      // Each thread's frames as a fresh tab sees them now (its snapshot holds the transcript), and every tab caught up to it.
      const final = new Map<string, Frame[]>()
      for (const threadId of threadIds) {
        const fresh = new Follower(urls, threadId, 0)
        for (let i = 0; i < 200 && fresh.snapshots.length === 0; i++) await sleep(50)
        fresh.close()
        expect(fresh.snapshots.length, `a fresh tab of ${threadId} got its snapshot`).toBeGreaterThan(0)
        final.set(threadId, [...fresh.snapshots, ...fresh.frames])
        const seq = fresh.lastId!
        for (let i = 0; i < 200 && !tabs.get(threadId)!.every((f) => (f.lastId ?? 0) >= seq); i++) await sleep(50)
      }
      checks.look(tabs)
      for (const followers of tabs.values()) for (const f of followers) f.close()

      // ——— accepted-and-lost, run twice ———
      let lost = 0
      let runTwice = 0
      let keyAnsweredTwice = 0
      const fate = { ran: 0, rejected: 0, inSnapshotOnly: 0 }
      const lostIds: string[] = []
      for (const [key, { threadId, messageIds }] of accepted) {
        const frames = [...tabs.get(threadId)!.flatMap((f) => f.frames)]
        const snapshotText = final.get(threadId)!.map((f) => f.bytes).join('')
        if (messageIds.size > 1) keyAnsweredTwice++
        for (const messageId of messageIds) {
          const ran = new Set(frames.filter((x) => x.event === 'user-message' && x.data.messageId === messageId).map((x) => x.id))
          const rejected = frames.some((x) => x.event === 'prompt-rejected' && x.data.messageId === messageId)
          if (ran.size > 1) runTwice++
          if (ran.size > 0) fate.ran++
          else if (rejected) fate.rejected++
          else if (snapshotText.includes(`"${messageId}"`)) fate.inSnapshotOnly++
          else {
            lost++
            lostIds.push(`${key} ${threadId} ${messageId}`)
          }
        }
        // The same prompt text run under two messageIds (a retry admitted again).
        const runs = new Set(frames.filter((x) => x.event === 'user-message' && typeof x.data.text === 'string' && new RegExp(`\\b${key}\\b`).test(x.data.text)).map((x) => x.data.messageId))
        if (runs.size > 1) runTwice++
      }
      /** Each thread's frames once (by seq, over its tabs) that match. */
      const distinct = (match: (x: Frame) => boolean) =>
        [...tabs.values()].reduce((s, fs) => s + new Set(fs.flatMap((f) => f.frames.filter(match).map((x) => x.id))).size, 0)
      const rejectedOwnerLost = distinct((x) => x.event === 'prompt-rejected')
      const abortedRuns = distinct((x) => x.event === 'settled' && x.data.aborted === true)
      const abortedDialogs = distinct((x) => x.event === 'dialog-settled' && x.data.outcome === 'aborted')
      const tabFrames = [...tabs.values()].flat().reduce((s, f) => s + f.frames.length, 0)
      console.log(
        `[soak] ${DURATION_MS / 1000} s, ${counts.kills} kills: prompts sent ${counts.sent}, accepted ${counts.accepted} (${accepted.size} keys), retried ${counts.retries} times, given up ${counts.gaveUp}; dialog answers ${counts.answers}; prompt-rejected ${rejectedOwnerLost}, runs ended aborted ${abortedRuns}, questions settled aborted ${abortedDialogs}; tab frames ${tabFrames}`,
      )
      console.log(`[soak] accepted prompts: ran ${fate.ran}, reported prompt-rejected ${fate.rejected}, in the transcript (not seen by a tab) ${fate.inSnapshotOnly}`)
      console.log(`[soak] accepted-and-lost ${lost}, run twice ${runTwice}, one key answered with two messageIds ${keyAnsweredTwice}, out of seq order ${checks.outOfOrder}, bytes differing for one seq ${checks.bytesDiffer}`)
      if (lostIds.length) console.log(`[soak] lost: ${lostIds.slice(0, 20).join('; ')}`)
      // Each node's own figures (since its last start), as its /metrics names them.
      for (const [name, { url }] of cluster.nodes) {
        const text = await (await fetch(`${url}/metrics`)).text()
        const figures = [...text.matchAll(/^threadhost_cluster_(\w+)(?:\{([^}]*)\})? (\S+)$/gm)].map((m) => `${m[1]}${/way="(\w+)"/.exec(m[2] ?? '')?.[1] ? `(${/way="(\w+)"/.exec(m[2])![1]})` : ''} ${m[3]}`)
        console.log(`[soak] ${name} /metrics: ${figures.join(', ')}`)
        expect(text).toContain(`threadhost_cluster_threads_owned{node="${name}"}`)
      }
      expect(counts.kills).toBeGreaterThan(0)
      expect(counts.accepted).toBeGreaterThan(0)
      expect({ lost, runTwice, keyAnsweredTwice, outOfOrder: checks.outOfOrder, bytesDiffer: checks.bytesDiffer, gaveUp: counts.gaveUp }).toEqual({
        lost: 0,
        runTwice: 0,
        keyAnsweredTwice: 0,
        outOfOrder: 0,
        bytesDiffer: 0,
        gaveUp: 0,
      })
    },
    DURATION_MS + 240_000,
  )
})
