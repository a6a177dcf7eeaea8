/**
 * The projection is one pure fold, so "the snapshot equals the fold of the frames" must hold for
 * any observation sequence: the feed's view at seq N equals `projectAll(initialView, frames 1..N)`,
 * and equals the fold of the frames as a follower receives them (encoded, sent, JSON-parsed).
 */
import { fc, test } from '@fast-check/vitest'
import { describe, expect, it } from 'vitest'
import { Feed } from '../../src/host/feed.js'
import { IncrementalView, initialView, project, projectAll } from '../../src/shared/projection.js'
import type { Observation, ObservationInput, Snapshot, ToolResult, TranscriptEntry } from '../../src/schemas/index.js'

const id = fc.constantFrom('a', 'b', 'c')
const str = fc.string({ maxLength: 6 })
const json = fc.jsonValue({ maxDepth: 2 })
/** Tool results as the schema types them, every optional field sometimes present. */
const toolResult: fc.Arbitrary<ToolResult> = fc.record(
  {
    text: str,
    truncated: fc.integer({ min: 1, max: 100 }),
    images: fc.array(fc.record({ mimeType: fc.constantFrom('image/png', 'image/jpeg') }), { maxLength: 2 }),
    details: json,
  },
  { requiredKeys: ['text'] },
)
const spec = fc.constantFrom(
  { method: 'confirm' as const, title: 'Sure?', message: 'm' },
  { method: 'select' as const, title: 'Where?', options: ['x', 'y'] },
)

/** Every observation type, with ids from small pools so deltas, updates and settles find their entries. */
const observationInput: fc.Arbitrary<ObservationInput> = fc.oneof(
  fc.record({ type: fc.constant('status' as const), live: fc.boolean(), busy: fc.boolean(), run: fc.nat(5) }),
  fc.record({ type: fc.constant('user-message' as const), messageId: id, text: str, run: fc.nat(5) }),
  fc.record({ type: fc.constant('assistant-start' as const), messageId: id }),
  fc.record({ type: fc.constant('assistant-delta' as const), messageId: id, text: str }),
  fc.record({ type: fc.constant('assistant-end' as const), messageId: id, text: str, stopReason: fc.constantFrom('stop', 'aborted') }),
  fc.record({ type: fc.constant('tool-start' as const), toolCallId: id, name: str, args: json }),
  fc.record({ type: fc.constant('tool-update' as const), toolCallId: id, partial: toolResult }),
  fc.record({ type: fc.constant('tool-end' as const), toolCallId: id, result: toolResult, isError: fc.boolean() }),
  fc.record({ type: fc.constant('queue' as const), steering: fc.array(str, { maxLength: 3 }), followUp: fc.array(str, { maxLength: 3 }) }),
  fc.record({ type: fc.constant('prompt-rejected' as const), messageId: id, reason: str }),
  fc.record(
    {
      type: fc.constant('extension-ui-request' as const),
      id,
      blocking: fc.constant(true as const),
      dialog: spec,
      origin: fc.constant({ kind: 'extension' as const }),
      expiresAt: fc.nat(),
    },
    { requiredKeys: ['type', 'id', 'blocking', 'dialog', 'origin'] },
  ),
  fc.record({ type: fc.constant('dialog-settled' as const), id, outcome: fc.constantFrom('answered' as const, 'cancelled' as const, 'timeout' as const, 'aborted' as const) }),
  fc.record(
    { type: fc.constant('notify' as const), message: str, level: fc.constantFrom('info' as const, 'warning' as const, 'error' as const), persist: fc.constant(true as const) },
    { requiredKeys: ['type', 'message', 'level'] },
  ),
  fc.record({ type: fc.constant('status-item' as const), key: id, text: str }, { requiredKeys: ['type', 'key'] }),
  fc.record({ type: fc.constant('widget' as const), key: id, lines: fc.array(str, { maxLength: 3 }) }, { requiredKeys: ['type', 'key'] }),
  fc.record({ type: fc.constant('working' as const), message: str, visible: fc.boolean() }, { requiredKeys: ['type', 'visible'] }),
  fc.record({ type: fc.constant('title' as const), title: str }),
  fc.record({ type: fc.constant('editor-text' as const), text: str }),
  fc.record({ type: fc.constant('settled' as const), run: fc.nat(5), aborted: fc.boolean() }),
  fc.record({ type: fc.constant('failure' as const), message: str }),
) as fc.Arbitrary<ObservationInput>

/**
 * An independent reference for the fold: written from the documented meaning of each observation,
 * imperatively over a deep copy, sharing no code with src/shared/projection.ts. Comparing the
 * feed's snapshots with it (and not only with `projectAll`, the same fold) catches a fold that is
 * consistently wrong in both places.
 */
function reference(threadId: string, observations: Observation[]): Snapshot {
  const v: Snapshot = structuredClone(initialView(threadId))
  const lastIndex = (pred: (e: TranscriptEntry) => boolean) => {
    for (let i = v.transcript.length - 1; i >= 0; i--) if (pred(v.transcript[i])) return i
    return -1
  }
  for (const o of observations) {
    v.seq = o.seq
    switch (o.type) {
      case 'status':
        if (v.status.live && !o.live) {
          v.statusItems = {}
          v.widgets = {}
          v.working = { visible: true }
          delete v.liveTitle
        }
        v.status = { live: o.live, busy: o.busy, run: o.run }
        break
      case 'title':
        v.liveTitle = o.title
        break
      case 'user-message':
        v.transcript.push({ kind: 'user', messageId: o.messageId, text: o.text, run: o.run })
        break
      case 'assistant-start':
        v.transcript.push({ kind: 'assistant', messageId: o.messageId, text: '', streaming: true })
        break
      case 'assistant-delta': {
        const i = lastIndex((e) => e.kind === 'assistant' && e.messageId === o.messageId)
        if (i >= 0) (v.transcript[i] as { text: string }).text += o.text
        break
      }
      case 'assistant-end': {
        const ended: TranscriptEntry = { kind: 'assistant', messageId: o.messageId, text: o.text, streaming: false, stopReason: o.stopReason }
        const i = lastIndex((e) => e.kind === 'assistant' && e.messageId === o.messageId)
        if (i >= 0) v.transcript[i] = ended
        else v.transcript.push(ended)
        break
      }
      case 'tool-start':
        v.transcript.push({ kind: 'tool', toolCallId: o.toolCallId, name: o.name, args: structuredClone(o.args), state: 'running' })
        break
      case 'tool-update': {
        const i = lastIndex((e) => e.kind === 'tool' && e.toolCallId === o.toolCallId)
        if (i >= 0) (v.transcript[i] as { partial?: unknown }).partial = structuredClone(o.partial)
        break
      }
      case 'tool-end': {
        const i = lastIndex((e) => e.kind === 'tool' && e.toolCallId === o.toolCallId)
        if (i >= 0) {
          const e = v.transcript[i] as Record<string, unknown>
          delete e.partial
          e.state = o.isError ? 'error' : 'done'
          e.result = structuredClone(o.result)
        }
        break
      }
      case 'queue':
        v.queue = { steering: [...o.steering], followUp: [...o.followUp] }
        break
      case 'prompt-rejected':
        v.transcript.push({ kind: 'rejected', messageId: o.messageId, reason: o.reason })
        break
      case 'prompt-handled':
        v.transcript.push({ kind: 'handled', messageId: o.messageId, text: o.text })
        break
      case 'extension-ui-request':
        v.openDialogs = v.openDialogs.filter((d) => d.id !== o.id)
        v.openDialogs.push({ id: o.id, dialog: structuredClone(o.dialog), origin: structuredClone(o.origin), ...(o.expiresAt !== undefined ? { expiresAt: o.expiresAt } : {}) })
        break
      case 'dialog-settled':
        v.openDialogs = v.openDialogs.filter((d) => d.id !== o.id)
        break
      case 'notify':
        if (o.persist) v.transcript.push({ kind: 'notify', message: o.message, level: o.level })
        break
      case 'status-item':
        if (o.text === undefined) delete v.statusItems[o.key]
        else v.statusItems[o.key] = o.text
        break
      case 'widget':
        if (o.lines === undefined) delete v.widgets[o.key]
        else v.widgets[o.key] = [...o.lines]
        break
      case 'working':
        v.working = o.message === undefined ? { visible: o.visible } : { message: o.message, visible: o.visible }
        break
      case 'settled':
        if (o.aborted) v.transcript.push({ kind: 'stopped', run: o.run })
        break
      case 'failure':
        v.transcript.push({ kind: 'error', message: o.message })
        break
      default:
        // title, editor-text: not part of the view
        break
    }
  }
  return v
}

/** What a follower does with a frame: read its `data:` line back into an observation. */
function decodeFrame(frame: Buffer): Observation {
  const data = frame
    .toString('utf8')
    .split('\n')
    .find((l) => l.startsWith('data: '))!
  return JSON.parse(data.slice('data: '.length)) as Observation
}

describe('projection: the snapshot is the fold of the frames', () => {
  test.prop([fc.array(observationInput, { maxLength: 40 })], { numRuns: 200 })(
    'for any observation sequence the snapshot at seq N equals an independent reference fold of frames 1..N, equals projectAll(initialView, frames 1..N), and equals the fold of the decoded frames',
    (inputs) => {
      const initial = initialView('t1')
      const feed = new Feed(initial)
      const frames: Buffer[] = []
      feed.follow({ send: (frame) => void frames.push(frame), close: () => {} })
      const observations: Observation[] = []
      inputs.forEach((input, i) => {
        observations.push(feed.append(input))
        const n = i + 1
        const snapshot = feed.snapshot()
        expect(snapshot.seq).toBe(n)
        expect(snapshot).toEqual(reference('t1', observations))
        expect(projectAll(initial, observations)).toEqual(snapshot)
        const decoded = frames.map(decodeFrame)
        expect(decoded.map((o) => o.seq)).toEqual(observations.map((o) => o.seq))
        // the snapshot sent as JSON and the fold of the JSON frames are the same view
        expect(JSON.parse(JSON.stringify(snapshot))).toEqual(projectAll(initial, decoded))
      })
    },
  )

  test.prop([fc.array(observationInput, { maxLength: 30 }), fc.nat(30)], { numRuns: 150 })(
    'a follower that joins at seq K and folds the following frames into that snapshot reaches the same view',
    (inputs, k) => {
      const feed = new Feed(initialView('t1'))
      const cut = Math.min(k, inputs.length)
      inputs.slice(0, cut).forEach((i) => feed.append(i))
      const joined = JSON.parse(JSON.stringify(feed.snapshot()))
      const frames: Buffer[] = []
      feed.follow({ send: (f) => void frames.push(f), close: () => {} })
      inputs.slice(cut).forEach((i) => feed.append(i))
      expect(projectAll(joined, frames.map(decodeFrame))).toEqual(JSON.parse(JSON.stringify(feed.snapshot())))
    },
  )

  test.prop([fc.array(observationInput, { maxLength: 40 }), fc.array(fc.boolean(), { maxLength: 40 })], { numRuns: 200 })(
    'the incremental fold (written in place, O(1) per delta) hands out snapshots that later observations never change, each equal to the pure fold',
    (inputs, takeAt) => {
      const incremental = new IncrementalView(initialView('t1'))
      let pure = initialView('t1')
      const taken: { snapshot: Snapshot; json: string }[] = []
      inputs.forEach((input, i) => {
        const o = { ...input, seq: i + 1 } as Observation
        incremental.apply(o)
        pure = project(pure, o)
        if (takeAt[i]) {
          const snapshot = incremental.snapshot()
          expect(snapshot).toEqual(pure)
          expect(incremental.snapshot()).toBe(snapshot)
          taken.push({ snapshot, json: JSON.stringify(snapshot) })
        }
      })
      expect(incremental.snapshot()).toEqual(pure)
      for (const t of taken) expect(JSON.stringify(t.snapshot)).toBe(t.json)
    },
  )

  it('a long streamed reply does not copy the transcript per delta: the entries before it are the same objects throughout', () => {
    const incremental = new IncrementalView(initialView('t1'))
    let seq = 0
    const o = (input: ObservationInput) => ({ ...input, seq: ++seq }) as Observation
    for (let i = 0; i < 50; i++) incremental.apply(o({ type: 'user-message', messageId: `u${i}`, text: 'q', run: 1 }))
    incremental.apply(o({ type: 'assistant-start', messageId: 'a' }))
    const before = incremental.snapshot()
    for (let i = 0; i < 10_000; i++) incremental.apply(o({ type: 'assistant-delta', messageId: 'a', text: 'w ' }))
    const after = incremental.snapshot()
    expect(after.transcript).toHaveLength(51)
    expect(after.transcript.at(-1)).toMatchObject({ kind: 'assistant', text: 'w '.repeat(10_000), streaming: true })
    expect(after.transcript.slice(0, 50).every((e, i) => e === before.transcript[i])).toBe(true)
    expect(before.transcript.at(-1)).toMatchObject({ text: '' })
  })

  test.prop([fc.array(observationInput, { maxLength: 30 })], { numRuns: 100 })(
    'project never mutates the view it is given',
    (inputs) => {
      let view = initialView('t1')
      inputs.forEach((input, i) => {
        const frozen = JSON.stringify(view)
        const next = project(view, { ...input, seq: i + 1 } as Observation)
        expect(JSON.stringify(view)).toBe(frozen)
        view = next
      })
    },
  )
})

describe('projection: what each observation does to the view', () => {
  const o = (input: ObservationInput, seq = 1) => ({ ...input, seq }) as Observation
  it('a streamed assistant message is the concatenation of its deltas, then the end replaces it whole', () => {
    const v = projectAll(initialView('t1'), [
      o({ type: 'assistant-start', messageId: 'a' }, 1),
      o({ type: 'assistant-delta', messageId: 'a', text: 'Hel' }, 2),
      o({ type: 'assistant-delta', messageId: 'a', text: 'lo' }, 3),
    ])
    expect(v.transcript).toEqual([{ kind: 'assistant', messageId: 'a', text: 'Hello', streaming: true }])
    const end = project(v, o({ type: 'assistant-end', messageId: 'a', text: 'Hello.', stopReason: 'stop' }, 4))
    expect(end.transcript).toEqual([{ kind: 'assistant', messageId: 'a', text: 'Hello.', streaming: false, stopReason: 'stop' }])
  })
  it('an open dialog is listed once, oldest first, and leaves the list when its settle names it', () => {
    const dialog = { method: 'confirm' as const, title: 'ok?', message: 'm' }
    const req = (id: string, seq: number) => o({ type: 'extension-ui-request', id, blocking: true, dialog, origin: { kind: 'extension' } }, seq)
    const v = projectAll(initialView('t1'), [req('d1', 1), req('d2', 2), o({ type: 'dialog-settled', id: 'd1', outcome: 'aborted' }, 3)])
    expect(v.openDialogs.map((d) => d.id)).toEqual(['d2'])
  })
  it('an aborted settle leaves a stopped entry in the transcript; a natural one leaves nothing', () => {
    const v = projectAll(initialView('t1'), [o({ type: 'settled', run: 1, aborted: false }, 1), o({ type: 'settled', run: 2, aborted: true }, 2)])
    expect(v.transcript).toEqual([{ kind: 'stopped', run: 2 }])
  })
  it('an extension notify is a toast, not a transcript entry; a persisted runtime note (auto-retry) is', () => {
    const v = projectAll(initialView('t1'), [
      o({ type: 'notify', message: 'hello', level: 'info' }, 1),
      o({ type: 'notify', message: 'retrying, attempt 1 of 3', level: 'warning', persist: true }, 2),
    ])
    expect(v.transcript).toEqual([{ kind: 'notify', message: 'retrying, attempt 1 of 3', level: 'warning' }])
    expect(v.seq).toBe(2)
  })
  it("pi's retries of a failed call are one line: the failure becomes 'retrying n/m', later failures update it, and it ends recovered or failed", () => {
    const attempt = (seq: number, id: string) => [
      o({ type: 'assistant-start', messageId: id }, seq),
      o({ type: 'assistant-end', messageId: id, text: '', stopReason: 'error' }, seq + 1),
      o({ type: 'failure', message: `500 #${id}` }, seq + 2),
    ]
    const retried = projectAll(initialView('t1'), [
      o({ type: 'user-message', messageId: 'u', text: 'hi', run: 1 }, 1),
      ...attempt(2, 'a1'),
      o({ type: 'retry', attempt: 1, maxAttempts: 2, message: '500 #a1' }, 5),
      ...attempt(6, 'a2'),
      o({ type: 'retry', attempt: 2, maxAttempts: 2, message: '500 #a2' }, 9),
    ])
    const lines = (v: typeof retried) => v.transcript.filter((e) => e.kind === 'error' || e.kind === 'retry')
    expect(lines(retried)).toEqual([{ kind: 'retry', attempt: 2, maxAttempts: 2, message: '500 #a2', state: 'retrying' }])
    const gaveUp = projectAll(retried, [...attempt(10, 'a3'), o({ type: 'retry-end', success: false, attempt: 2, message: '500 #a3' }, 13)])
    expect(lines(gaveUp)).toEqual([{ kind: 'retry', attempt: 2, maxAttempts: 2, message: '500 #a3', state: 'failed' }])
    const recovered = project(retried, o({ type: 'retry-end', success: true, attempt: 2 }, 10))
    expect(lines(recovered)).toEqual([{ kind: 'retry', attempt: 2, maxAttempts: 2, message: '500 #a2', state: 'recovered' }])
    // The next prompt's failure is a failure of its own.
    const next = projectAll(gaveUp, [o({ type: 'user-message', messageId: 'u2', text: 'again', run: 2 }, 14), o({ type: 'failure', message: 'bad key' }, 15)])
    expect(lines(next).at(-1)).toEqual({ kind: 'error', message: 'bad key' })
  })
  it('status items are a keyed map: a text sets its key in place, no text removes it', () => {
    const v = projectAll(initialView('t1'), [
      o({ type: 'status-item', key: 'git', text: 'main' }, 1),
      o({ type: 'status-item', key: 'tokens', text: '1k' }, 2),
      o({ type: 'status-item', key: 'git', text: 'dev' }, 3),
    ])
    expect(v.statusItems).toEqual({ git: 'dev', tokens: '1k' })
    expect(Object.keys(v.statusItems)).toEqual(['git', 'tokens'])
    expect(project(v, o({ type: 'status-item', key: 'git' }, 4)).statusItems).toEqual({ tokens: '1k' })
    expect(v.transcript).toEqual([])
  })
  it('widgets are a keyed map of line blocks; no lines removes the widget', () => {
    const v = projectAll(initialView('t1'), [
      o({ type: 'widget', key: 'todo', lines: ['- a', '- b'] }, 1),
      o({ type: 'widget', key: 'plan', lines: ['step 1'] }, 2),
      o({ type: 'widget', key: 'todo' }, 3),
    ])
    expect(v.widgets).toEqual({ plan: ['step 1'] })
  })
  it('working replaces the busy indicator state; a title is the live title, and editor-text leaves the view as it was', () => {
    const v = projectAll(initialView('t1'), [o({ type: 'working', message: 'Indexing…', visible: true }, 1)])
    expect(v.working).toEqual({ message: 'Indexing…', visible: true })
    expect(project(v, o({ type: 'working', visible: false }, 2)).working).toEqual({ visible: false })
    const after = projectAll(v, [o({ type: 'title', title: 'Renamed' }, 2), o({ type: 'editor-text', text: 'draft' }, 3)])
    expect(after).toEqual({ ...v, seq: 3, liveTitle: 'Renamed' })
  })
  it('going cold clears status items, widgets and the working state; staying live keeps them', () => {
    const v = projectAll(initialView('t1'), [
      o({ type: 'status', live: true, busy: false, run: 0 }, 1),
      o({ type: 'status-item', key: 'git', text: 'main' }, 2),
      o({ type: 'widget', key: 'todo', lines: ['- a'] }, 3),
      o({ type: 'working', message: 'Indexing…', visible: false }, 4),
      o({ type: 'status', live: true, busy: true, run: 1 }, 5),
    ])
    expect(v.statusItems).toEqual({ git: 'main' })
    expect(v.widgets).toEqual({ todo: ['- a'] })
    const cold = project(v, o({ type: 'status', live: false, busy: false, run: 1 }, 6))
    expect(cold).toMatchObject({ statusItems: {}, widgets: {}, working: { visible: true } })
    const titled = project(v, o({ type: 'title', title: 'π ⠋ indexing' }, 6))
    expect(titled.liveTitle).toBe('π ⠋ indexing')
    expect(project(titled, o({ type: 'status', live: false, busy: false, run: 1 }, 7)).liveTitle).toBeUndefined()
  })
  it('a tool end drops the partial result and records done or error', () => {
    const v = projectAll(initialView('t1'), [
      o({ type: 'tool-start', toolCallId: 'c', name: 'bash', args: { cmd: 'ls' } }, 1),
      o({ type: 'tool-update', toolCallId: 'c', partial: { text: 'half' } }, 2),
      o({ type: 'tool-end', toolCallId: 'c', result: { text: 'all' }, isError: true }, 3),
    ])
    expect(v.transcript).toEqual([
      { kind: 'tool', toolCallId: 'c', name: 'bash', args: { cmd: 'ls' }, state: 'error', result: { text: 'all' } },
    ])
  })
})
