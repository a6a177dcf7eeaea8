/**
 * Fork: a new thread holding a thread's history before one of its prompts, linked to it and named
 * as its fork. (Edit and Regenerate without a new thread are versions in place: thread-versions.ts.)
 *
 * The cut is always before a user message: forking at a user message hands its text back for the
 * composer to edit; forking at a reply cuts before the prompt that produced it, so sending that
 * prompt again regenerates the reply. The runtime copies the history (pi's own branching) and keeps
 * the link; the source is only read, so a thread may be forked mid-run — the history before a
 * message already shown is complete on disk, and a reply still streaming is not yet forkable.
 */
import { randomUUID } from 'node:crypto'
import type { ThreadSummary, TranscriptEntry } from '../schemas/index.js'
import type { ForkOutcome } from '../schemas/outcomes.js'
import { SessionDamaged, type ForkCut, type RuntimeFactory } from '../runtime/port.js'
import type { ThreadRow } from './store/port.js'

/** What a fork came to: src/schemas/outcomes.ts holds the vocabulary and what each is on the wire. */
export type { ForkOutcome } from '../schemas/outcomes.js'

/** The prompt a fork at `messageId` cuts before: the user message itself, or the one that produced a reply. */
export function forkPrompt(transcript: TranscriptEntry[], messageId: string): { messageId: string; text: string } | undefined {
  const at = transcript.findIndex((e) => 'messageId' in e && e.messageId === messageId && (e.kind === 'user' || e.kind === 'assistant'))
  if (at === -1) return undefined
  for (let i = at; i >= 0; i--) {
    const e = transcript[i]
    if (e.kind === 'user') return { messageId: e.messageId, text: e.text }
  }
  return undefined
}

export interface ForkDeps {
  runtimes: RuntimeFactory
  /** Registers the new thread (the registry's `create`), its files already written. */
  /** `run`: the highest run the copied history holds, so the new thread counts on from it. */
  create: (request: { id: string; title?: string; model: string; thinkingLevel?: ThreadRow['thinkingLevel']; cwd?: string }, run: number) => Promise<
    { kind: 'created'; threadId: string } | { kind: 'taken' } | { kind: 'invalid'; reason: string }
  >
  summary: (threadId: string) => ThreadSummary | undefined
  /** Asks the source thread's extensions (pi's `session_before_fork`) before anything is written. */
  ask?: (messageId: string) => Promise<{ cancelled: boolean }>
  newId?: () => string
}

export async function forkThread(deps: ForkDeps, source: ThreadRow, fromMessageId: string): Promise<ForkOutcome> {
  const { runtimes } = deps
  if (!runtimes.fork) return { kind: 'invalid', reason: 'this runtime cannot fork a thread' }
  let transcript: TranscriptEntry[]
  try {
    transcript = await runtimes.readTranscript(source.threadId)
  } catch (error) {
    if (error instanceof SessionDamaged) return { kind: 'unavailable', reason: error.reason }
    throw error
  }
  const prompt = forkPrompt(transcript, fromMessageId)
  if (!prompt) return { kind: 'unknown-message' }
  if ((await deps.ask?.(prompt.messageId))?.cancelled) return { kind: 'fork-cancelled', reason: 'one of them said no; nothing was forked' }
  const forked = await forkAt(deps, source, { beforeMessageId: prompt.messageId })
  return forked.kind === 'forked' ? { kind: 'forked', summary: forked.summary, prompt: prompt.text } : forked
}

/** A fork is a thread of its own, named so: the source's title and "(fork)", never a second thread of the same name. */
export function forkTitle(sourceTitle: string): string {
  return `${sourceTitle} (fork)`
}

/** The new thread, its history cut where `cut` says (the source's extensions already asked). */
export async function forkAt(
  deps: ForkDeps,
  source: ThreadRow,
  cut: ForkCut,
): Promise<{ kind: 'forked'; summary: ThreadSummary } | Exclude<ForkOutcome, { kind: 'forked' | 'fork-cancelled' }>> {
  const { runtimes } = deps
  if (!runtimes.fork) return { kind: 'invalid', reason: 'this runtime cannot fork a thread' }
  const threadId = (deps.newId ?? (() => randomUUID().slice(0, 8)))()
  const forked = await runtimes.fork({ sourceThreadId: source.threadId, threadId, ...cut })
  if (forked.kind === 'unknown-message') return forked
  const sourceTitle = deps.summary(source.threadId)?.title
  const created = await deps.create({
    id: threadId,
    ...(sourceTitle ? { title: forkTitle(sourceTitle) } : {}),
    model: source.model,
    ...(source.thinkingLevel ? { thinkingLevel: source.thinkingLevel } : {}),
    ...(source.cwd ? { cwd: source.cwd } : {}),
  }, forked.lastRun)
  if (created.kind !== 'created') {
    await runtimes.remove(threadId)
    return { kind: 'invalid', reason: created.kind === 'invalid' ? created.reason : 'no new thread id was free' }
  }
  const summary = deps.summary(threadId)
  return summary ? { kind: 'forked', summary } : { kind: 'unknown' }
}
