/**
 * The commands a walk sends, as data: fast-check generates them, xstate/graph finds paths of them,
 * and a failing sequence is printed as a JSON array of them that `replay` runs again.
 *
 * A command is an intent; what it becomes depends on the state the walk is in (an `answer` with no
 * open question names a spent or never-asked id; a `prompt` while a run is in flight is queued into
 * it as plain text), so every generated sequence is valid and shrinking keeps it valid.
 */
import { fc } from '@fast-check/vitest'

/**
 * `stubborn`: the walk extension's tool, which works until stopped and then holds the stop pending;
 * `cut`: its tool that works until the walk cuts the run short from inside (levers only, both).
 */
export type RunKind = 'plain' | 'confirm' | 'select' | 'ask' | 'slow' | 'stubborn' | 'cut'

export type Command =
  /**
   * idle: starts a run of `kind`; busy: queued as `deliverAs`, or refused when `admission` is reject.
   * `run`: the body names the current run (idle: the run that just ended, so it starts the next; `{run: 0}`
   * before any run is a 400) or a stale one (an older run, or one not yet begun): `409 stale-run`.
   */
  | { t: 'prompt'; kind: RunKind; deliverAs: 'steer' | 'followUp'; admission: 'enqueue' | 'reject'; run?: 'current' | 'stale' }
  /** `run`: none (no body), the current run, or a stale one. */
  | { t: 'abort'; run: 'none' | 'current' | 'stale' }
  /** Take the queued prompts back (pi's Alt+Up), the run going on; `run`: none, or a stale one. */
  | { t: 'take'; run: 'none' | 'stale' }
  /** Twice at once, while the first stop is pending: the second is the repeat. */
  | { t: 'abort-twice' }
  /** A stop and a prompt at the same instant: the prompt lands before, during, or after the stop. */
  | { t: 'abort-and-prompt'; deliverAs: 'steer' | 'followUp' }
  /** The oldest open question: right, wrong (422), Skip, Cancel, a spent/unknown id, or two tabs at once. */
  | { t: 'answer'; how: 'right' | 'wrong' | 'skip' | 'cancel' | 'spent' | 'two-tabs' }
  /** idle: a run whose question has a short timeoutMs, waited out. */
  | { t: 'timeout' }
  | { t: 'delete' }
  /** The second tab drops its connection and resumes with its Last-Event-ID. */
  | { t: 'resume' }
  /** A tab joins late: its snapshot must equal the first tab's fold. */
  | { t: 'join' }
  /** A graceful restart of the server (SIGTERM's path, in process); the tabs resume with their Last-Event-ID. */
  | { t: 'restart' }
  // ——— levers: the walk extension (test/fixtures/walk-agent) and a short idle timeout; graph paths only ———
  /** A stop held pending by the stubborn tool is let go: the run settles, prompts that waited start. */
  | { t: 'release' }
  /** The cut tool ends its own run (an extension's `ctx.abort()`): the follow-ups it left queued start the next run. */
  | { t: 'cut' }
  /** idle: the extension asks a question of its own accord, between runs. */
  | { t: 'ext-ask' }
  /** idle: the extension starts a run of its own (`pi.sendUserMessage`): the thread's next run, busy like a prompted one. */
  | { t: 'ext-run' }
  /** The extension takes its question back (its own abort signal). */
  | { t: 'withdraw' }
  /** cold: the next runtime's extension asks while it is being built; then a plain prompt builds it. */
  | { t: 'cold-ask' }
  /** idle: wait for the idle timeout to retire the thread (the walk's server has a short one). */
  | { t: 'retire' }

export function describeCommand(c: Command): string {
  switch (c.t) {
    case 'prompt':
      return `prompt(${c.kind}${c.deliverAs === 'followUp' ? ', followUp' : ''}${c.admission === 'reject' ? ', reject' : ''}${c.run ? `, ${c.run} run` : ''})`
    case 'abort':
      return c.run === 'none' ? 'abort' : `abort(${c.run} run)`
    case 'abort-and-prompt':
      return `abort+prompt(${c.deliverAs})`
    case 'take':
      return c.run === 'none' ? 'take' : `take(${c.run} run)`
    case 'answer':
      return `answer(${c.how})`
    default:
      return c.t
  }
}

export const commandArb = (opts: { restarts?: boolean } = {}): fc.Arbitrary<Command> =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        t: fc.constant('prompt' as const),
        kind: fc.constantFrom<RunKind>('plain', 'confirm', 'select', 'ask', 'slow'),
        deliverAs: fc.constantFrom('steer' as const, 'followUp' as const),
        admission: fc.constantFrom('enqueue' as const, 'enqueue' as const, 'reject' as const),
        // most prompts name no run, as a plain composer send does
        run: fc.constantFrom(undefined, undefined, undefined, undefined, 'current' as const, 'stale' as const),
      }).map(({ run, ...c }) => (run ? { ...c, run } : c)),
    },
    { weight: 3, arbitrary: fc.record({ t: fc.constant('abort' as const), run: fc.constantFrom('none' as const, 'current' as const, 'stale' as const) }) },
    { weight: 1, arbitrary: fc.constant({ t: 'abort-twice' as const }) },
    { weight: 2, arbitrary: fc.record({ t: fc.constant('abort-and-prompt' as const), deliverAs: fc.constantFrom('steer' as const, 'followUp' as const) }) },
    {
      weight: 6,
      arbitrary: fc.record({
        t: fc.constant('answer' as const),
        how: fc.constantFrom('right' as const, 'right' as const, 'wrong' as const, 'skip' as const, 'cancel' as const, 'spent' as const, 'two-tabs' as const),
      }),
    },
    { weight: 1, arbitrary: fc.constant({ t: 'timeout' as const }) },
    { weight: 1, arbitrary: fc.constant({ t: 'delete' as const }) },
    { weight: 1, arbitrary: fc.constant({ t: 'resume' as const }) },
    { weight: 1, arbitrary: fc.constant({ t: 'join' as const }) },
    ...(opts.restarts ? [{ weight: 1, arbitrary: fc.constant({ t: 'restart' as const }) }] : []),
  )

/** A small deterministic PRNG for the long walk (fast-check's generators are for the shrinking suite). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
