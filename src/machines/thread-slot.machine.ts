/**
 * A thread's slot in the registry: cold → building → live → releasing → cold …, or → unavailable, or
 * → deleting → gone. The one owner of "is this thread live?" and of which LiveThread that is.
 *
 * - `cold`: no runtime; the transcript is on disk.
 * - `building`: the invoked `build` makes the runtime (a prompt or a command needs one). A delete
 *   meanwhile marks the build doomed (for callers the thread is gone from that moment): what it built
 *   goes straight to `deleting`, which disposes it, so the thread's files are removed only after the
 *   runtime that writes them has stopped.
 * - `live`: the LiveThread runs the thread machine over its runtime.
 * - `releasing`: that LiveThread retired (idle, shutdown); the invoked `release` lets the runtime go.
 *   A build asked for meanwhile starts once it is released: never two runtimes for one thread.
 * - `unavailable`: the session file is damaged; nothing builds a runtime or writes the file.
 * - `deleting`: from the first moment of a delete until the files are gone (the id is not reusable);
 *   `gone` is final and the registry forgets the slot.
 *
 * Pure: what building, releasing and removing do is provided by the host as invoked actors; the
 * slot's LiveThread is opaque here (`SlotThread`).
 */
import { assign, fromPromise, setup, type ActorRefFrom, type SnapshotFrom } from 'xstate'

/** What the slot knows of the live thread it holds: nothing but that it is one. */
export type SlotThread = object

export interface SlotContext {
  threadId: string
  /** The LiveThread while building finished it (live, releasing; a doomed build's, in deleting). */
  thread?: SlotThread
  /** Why the last build failed: what the callers waiting on it are told. */
  buildError?: unknown
  /** Why the thread is unavailable (its session file is damaged). */
  damage?: string
  /** A build was asked for while releasing: it starts once the runtime is released. */
  rebuild: boolean
  /** A delete arrived while building: the build's result is disposed by the delete. */
  doomed: boolean
  /** Why removing the thread failed (its caller is told; the slot is gone all the same). */
  removeError?: unknown
}

export type SlotEvent =
  /** Something needs the runtime (a prompt, a command, a list of commands). */
  | { type: 'BUILD' }
  /** The live thread's machine went cold or was disposed. */
  | { type: 'RETIRED' }
  /** The session file was found damaged (when read, or by the survey after the start). */
  | { type: 'DAMAGED'; reason: string }
  | { type: 'DELETE' }

const releaseFeed = { type: 'releaseFeed', params: ({ context }: { context: SlotContext }) => ({ threadId: context.threadId }) } as const

export const threadSlotMachine = setup({
  types: {
    input: {} as { threadId: string; damage?: string },
    context: {} as SlotContext,
    events: {} as SlotEvent,
  },
  actors: {
    /** Builds the runtime and attaches it to a new LiveThread; rejects with why it could not. */
    build: fromPromise<SlotThread, { threadId: string }>(async () => ({})),
    /** Lets the retired thread's runtime go; resolves once it is released. */
    release: fromPromise<void, { threadId: string; thread: SlotThread }>(async () => {}),
    /** Disposes the thread (if any) and removes its files and its row. */
    remove: fromPromise<void, { threadId: string; thread?: SlotThread }>(async () => {}),
  },
  actions: {
    /** The thread went cold or unavailable: a feed nobody follows is let go. */
    releaseFeed: (_, _params: { threadId: string }) => {},
    /** The retiring thread's run, seq and facts are written to its row. */
    keepRetired: (_, _params: { threadId: string }) => {},
  },
  guards: {
    /** The build failed because the session file is damaged (the host knows that error). */
    damaged: (_, _params: { error: unknown }) => false,
    doomed: ({ context }) => context.doomed,
    rebuild: ({ context }) => context.rebuild,
  },
}).createMachine({
  id: 'slot',
  context: ({ input }) => ({ threadId: input.threadId, rebuild: false, doomed: false, ...(input.damage ? { damage: input.damage } : {}) }),
  initial: 'cold',
  states: {
    cold: {
      on: {
        BUILD: 'building',
        DAMAGED: { target: 'unavailable', actions: assign({ damage: ({ event }) => event.reason }) },
        DELETE: 'deleting',
      },
    },
    building: {
      entry: assign({ buildError: undefined, thread: undefined, rebuild: false }),
      invoke: {
        id: 'build',
        src: 'build',
        input: ({ context }) => ({ threadId: context.threadId }),
        onDone: [
          { guard: 'doomed', target: 'deleting', actions: assign({ thread: ({ event }) => event.output }) },
          { target: 'live', actions: assign({ thread: ({ event }) => event.output }) },
        ],
        onError: [
          { guard: 'doomed', target: 'deleting' },
          {
            guard: { type: 'damaged', params: ({ event }) => ({ error: event.error }) },
            target: 'unavailable',
            actions: assign({ damage: ({ event }) => String((event.error as { reason?: unknown }).reason ?? event.error) }),
          },
          { target: 'cold', actions: [assign({ buildError: ({ event }) => event.error }), releaseFeed] },
        ],
      },
      on: {
        DELETE: { actions: assign({ doomed: true }) },
      },
    },
    live: {
      on: {
        RETIRED: { target: 'releasing', actions: { type: 'keepRetired', params: ({ context }) => ({ threadId: context.threadId }) } },
        DELETE: 'deleting',
      },
    },
    releasing: {
      invoke: {
        id: 'release',
        src: 'release',
        input: ({ context }) => ({ threadId: context.threadId, thread: context.thread! }),
        onDone: [
          { guard: 'rebuild', target: 'building' },
          { target: 'cold', actions: [assign({ thread: undefined }), releaseFeed] },
        ],
        // A release that failed still let the thread go: nothing will use that runtime again.
        onError: [
          { guard: 'rebuild', target: 'building' },
          { target: 'cold', actions: [assign({ thread: undefined }), releaseFeed] },
        ],
      },
      on: {
        BUILD: { actions: assign({ rebuild: true }) },
        DELETE: 'deleting',
      },
    },
    unavailable: {
      entry: releaseFeed,
      on: { DELETE: 'deleting' },
    },
    deleting: {
      invoke: {
        id: 'remove',
        src: 'remove',
        input: ({ context }) => ({ threadId: context.threadId, thread: context.thread }),
        onDone: 'gone',
        onError: { target: 'gone', actions: assign({ removeError: ({ event }) => event.error }) },
      },
    },
    gone: { type: 'final' },
  },
})

export type ThreadSlotMachine = typeof threadSlotMachine
export type ThreadSlotActor = ActorRefFrom<ThreadSlotMachine>
export type SlotSnapshot = SnapshotFrom<ThreadSlotMachine>
