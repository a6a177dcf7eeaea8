/**
 * The records a prompt leaves in its thread's log on the owner (cluster-node.ts): `accepted` at its
 * admission, before its 202 (what a takeover hands back if it never ran), a keyed prompt's receipt
 * when it is not the one `accepted` expected, and `settled`. And what the prompt's 202 waits for:
 * its records in the log, on the writer they went to.
 */
import type { Feed } from '../feed.js'
import type { LogWriter } from './log-writer.js'

/** Prompts' accepted marks kept for their answers at most. */
const MAX_ACCEPTED = 1000

/** The receipt a keyed prompt's accepted record holds (see `accepted`). */
type Receipt = { run: number; queued: boolean }

/** The thread as this node owns it now: the writer of its log, and the feed it writes the frames from. */
export type OwnedThread = { writer: LogWriter; feed?: Feed }

export class PromptRecords {
  /**
   * Prompts accepted here and not settled yet: how many records their writer had made with their
   * `accepted` record, and the receipt that record holds for a keyed one.
   */
  readonly #accepted = new Map<string, { writer: LogWriter | undefined; upTo: number; receipt?: Receipt }>()

  constructor(private readonly owned: (threadId: string) => OwnedThread | undefined) {}

  /**
   * The record at the prompt's admission (the 202 waits for it). A keyed prompt's key is claimed in it
   * (ClusterNode.keyedAdmission), with the receipt the machine will give it as the thread stands now —
   * idle: the next run; running: queued into this one — so that in the usual case its 202 needs no
   * record after the machine's answer: that one would wait behind the frames of the run the prompt
   * starts, and the start's own work.
   */
  accepted(threadId: string, messageId: string, text: string, key?: { key: string; fingerprint: string; run: number }): void {
    const owned = this.owned(threadId)
    const writer = owned?.writer
    const status = owned?.feed?.view.status
    const receipt: Receipt | undefined = key && (status ? (status.busy ? { run: status.run, queued: true } : { run: status.run + 1, queued: false }) : { run: key.run, queued: false })
    writer?.push({ kind: 'prompt', op: 'accepted', messageId, text, ...(key ? { key: { ...key, ...receipt } } : {}) })
    // Kept until the prompt settles (withdrawn, rejected or run); bounded all the same. With no writer
    // (the thread left this node before the admission) the prompt is in no log: `flushed` says so.
    if (this.#accepted.size >= MAX_ACCEPTED) this.#accepted.delete(this.#accepted.keys().next().value!)
    this.#accepted.set(messageId, { writer, upTo: writer?.made ?? 0, ...(receipt ? { receipt } : {}) })
  }

  /**
   * A keyed prompt's receipt (its run, whether it was queued): what its 202 said, for a retry answered
   * from the log. Written only when it is not the one its accepted record already holds.
   */
  admitted(threadId: string, messageId: string, run: number, queued: boolean): void {
    const accepted = this.#accepted.get(messageId)
    const expected = accepted?.receipt
    if (expected && expected.run === run && expected.queued === queued) return
    const writer = this.owned(threadId)?.writer
    // A receipt that cannot follow its accepted record into the same log (the thread left this node
    // meanwhile): no 202 goes out for it, as the next owner would answer a retry with the expected one.
    if (!writer || (accepted && accepted.writer !== writer)) {
      if (accepted) accepted.writer = undefined
      return
    }
    writer.push({ kind: 'prompt', op: 'admitted', messageId, run, queued })
    // A keyed prompt's 202 waits for its receipt too: a retry answered from the log gets what the 202 said.
    if (accepted) accepted.upTo = writer.made
  }

  settled(threadId: string, messageId: string, withdrawn: boolean): void {
    this.#accepted.delete(messageId)
    this.owned(threadId)?.writer.push({ kind: 'prompt', op: 'settled', messageId, ...(withdrawn ? { withdrawn: true as const } : {}) })
  }

  /**
   * For a prompt accepted here: resolves true once its `accepted` record (a keyed one's receipt,
   * `admitted`) and what was written before it are in the log — asked of the writer its record went
   * to, also once the thread left this node: one fenced or closed before the record was in says false,
   * so no 202 goes out for it. Undefined for any other message.
   */
  flushed(messageId: string): Promise<boolean> | undefined {
    const accepted = this.#accepted.get(messageId)
    if (!accepted) return undefined
    return accepted.writer ? accepted.writer.flushed(accepted.upTo) : Promise.resolve(false)
  }
}
