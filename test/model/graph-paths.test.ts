/**
 * The machines' own graph, replayed against the real server: every path `graphPaths()` finds (a
 * shortest path to every state the HTTP commands reach, and one more for each machine transition
 * those miss) is its own test. Each runs on a fresh thread of one shared server; after every step
 * the walk checks the server against the thread machine (replies, machine frames) and the stream
 * invariants on every tab. The last test checks that the paths took every transition of the thread,
 * dialog and ask-queue machines against the server (the oracle's machine, stepped beside it), but
 * for the few that pi cannot be made to take, each pinned by named tests on the fake runtime.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { askQueueMachine } from '../../src/machines/ask-queue.machine.js'
import { dialogMachine } from '../../src/machines/dialog.machine.js'
import { threadMachine } from '../../src/machines/thread.machine.js'
import { transitionsOf } from '../../src/machines/diagram.js'
import { describeCommand } from './commands.js'
import { graphPaths, leverPaths, takenByPaths, type Node } from './graph.js'
import { taken } from './thread-model.js'
import { replayScript, runSequence, Walk } from './walk.js'

const paths = graphPaths()
/** The idle timeout of the walk that retires threads: long enough that no other step of its paths meets it. */
const IDLE_MS = 1500
let walk: Walk
let idleWalk: Walk | undefined

/**
 * Reached by the HTTP paths only when `abort+prompt` lands its prompt while the stop is pending
 * (the server's race to decide); the lever paths reach each deterministically, with a stop the
 * stubborn tool holds pending.
 */
export const RACY: Record<string, string> = {
  'thread.aborting|PROMPT|1': 'a prompt with admission reject while a stop is pending',
  'thread.aborting|PROMPT|2': 'a prompt that waits on a pending stop',
  'thread.aborting|SETTLED|0': 'the stopped run settles and starts the prompt that waited on it',
}

/**
 * Transitions the real runtime never takes, so no walk against the server can: each is pinned by
 * the tests named here (file, then exact title), which drive it with the fake runtime. The last
 * test checks that these are exactly the ones the paths missed, and that every named test exists.
 */
export const PINNED_ELSEWHERE: Record<string, { why: string; tests: [file: string, title: string][] }> = {
  'thread.running|TAKE_QUEUE|1': {
    why: "a take-back while another is carried out: pi's clearQueue answers as it starts, so no request can arrive in between",
    tests: [
      [
        'test/machines/thread.machine.test.ts',
        'a take-back whose clear throws restores nothing and says the loss, and the run goes on; one asked while it is carried out, or while a stop is pending, gets nothing',
      ],
    ],
  },
  'thread.running|QUEUE_CLEAR_FAILED|0': {
    why: "a take-back's clear that throws: pi's clearQueue does not throw; the run goes on and the loss is said",
    tests: [
      [
        'test/machines/thread.machine.test.ts',
        'a take-back whose clear throws restores nothing and says the loss, and the run goes on; one asked while it is carried out, or while a stop is pending, gets nothing',
      ],
      [
        'test/machines/thread.machine.test.ts',
        'a take-back during a run hands back the waiting prompts steering first, each with its id, and the run goes on untold; a failed clear restores nothing and says so',
      ],
    ],
  },
  'thread.aborting.clearing|QUEUE_CLEAR_FAILED|0': {
    why: "pi's clearQueue hands over two arrays and does not throw; another runtime's may, and a stop must still stop (seed 002)",
    tests: [
      [
        'test/machines/thread.machine.test.ts',
        'a stop must stop: when clearing the queue throws, the stop is answered with nothing restored, the loss is said, the runtime is still told and the open question settles aborted',
      ],
      [
        'test/machines/thread.machine.test.ts',
        'a stop hands back the waiting prompts steering first, then follow-ups, each in the order queued and with its id; a failed clear restores nothing and says so',
      ],
      [
        'test/host/live-thread.test.ts',
        '⚠ a stop must stop: if clearing the queue throws, the runtime is still told to abort, the open question settles aborted, nothing is restored and the loss is said',
      ],
    ],
  },
  'dialog.open|DONE|0': {
    why: "a terminal component's done (ctx.ui.custom()); the walk's extension opens no component, so pi's own question.ts and questionnaire.ts drive it over HTTP",
    tests: [
      ['test/server/terminal-components.test.ts', 'is a question every follower sees: one tab types (arrows, Enter), the other watches the same screen, and both see it settled answered once'],
      ['test/server/terminal-components.test.ts', 'two components asked in one tool batch are shown one at a time, in order (FIFO); Stop drains the waiting one unshown'],
    ],
  },
}

/** The lever paths: the walk extension on the main walk, the idle timeout on a walk of its own. */
const httpCovered = new Set([...takenByPaths(paths)].filter((k) => !(k in RACY)))
const extensionPaths = leverPaths({ extension: true }, httpCovered)
const idlePaths = leverPaths({ extension: true, idle: true }, new Set([...httpCovered, ...takenByPaths(extensionPaths)]))

beforeAll(async () => {
  walk = new Walk({ levers: true })
  await walk.start()
}, 30_000)
afterAll(async () => {
  await walk?.close()
  await idleWalk?.close()
})

async function replay(path: Node, on: () => Promise<Walk>) {
  const w = await on()
  await w.recover()
  try {
    await runSequence(path.commands, { tolerateKnown: true }, w)
  } catch (error) {
    throw new Error(`${(error as Error).message}\nreplay: ${replayScript(path.commands)}`)
  }
}

describe('graph paths of the thread and dialog machines, replayed against the real server', () => {
  for (const path of paths) {
    const title = `${path.commands.map(describeCommand).join(' → ')} ⇒ ${path.state}`
    it(title, () => replay(path, async () => walk), 30_000)
  }
  for (const path of extensionPaths) {
    const title = `levers: ${path.commands.map(describeCommand).join(' → ')} ⇒ ${path.state}`
    it(title, () => replay(path, async () => walk), 30_000)
  }
  for (const path of idlePaths) {
    const title = `levers, idle ${IDLE_MS} ms: ${path.commands.map(describeCommand).join(' → ')} ⇒ ${path.state}`
    it(
      title,
      () =>
        replay(path, async () => {
          if (!idleWalk) {
            idleWalk = new Walk({ levers: true, idleMs: IDLE_MS })
            await idleWalk.start()
          }
          return idleWalk
        }),
      30_000,
    )
  }

  it('the paths take every transition of the thread, dialog and ask-queue machines against the server, but those the real runtime cannot take, each pinned by named tests on the fake runtime', () => {
    const defined = [...transitionsOf(threadMachine), ...transitionsOf(dialogMachine), ...transitionsOf(askQueueMachine)].map((t) => t.key)
    const missed = defined.filter((k) => !taken.has(k))
    const all = [...paths, ...extensionPaths, ...idlePaths]
    console.log(
      `graph paths: ${paths.length} over HTTP + ${extensionPaths.length + idlePaths.length} with levers, ${all.reduce((n, p) => n + p.commands.length, 0)} steps; ` +
        `${defined.length - missed.length}/${defined.length} transitions taken against the server; pinned elsewhere:\n` +
        Object.entries(PINNED_ELSEWHERE)
          .map(([k, p]) => `  ${k}: ${p.why}\n${p.tests.map(([f, t]) => `    ${f}: ${t}`).join('\n')}`)
          .join('\n'),
    )
    expect(missed).toEqual(Object.keys(PINNED_ELSEWHERE).filter((k) => defined.includes(k)))
    expect(Object.keys(PINNED_ELSEWHERE).filter((k) => !defined.includes(k)), 'pinned transitions the machines no longer define').toEqual([])
    for (const [file, title] of Object.values(PINNED_ELSEWHERE).flatMap((p) => p.tests)) {
      const source = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')
      expect(source.includes(`'${title}'`), `${file} has no test titled '${title}'`).toBe(true)
    }
  })
})
