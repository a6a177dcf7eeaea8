/**
 * Where a thread is in its life, as the registry holds it, and the only ways it moves. The
 * registry changes a phase in one place (`ThreadRegistry.#enter`), along these edges; every
 * question it asks ("is it live?", "may a runtime be built?") reads the phase.
 */
import type { LiveThread } from './live-thread.js'

/**
 * - `cold`: no runtime; its transcript is on disk.
 * - `building`: a runtime is being built for it (a prompt or a command asked for one).
 * - `live`: its LiveThread runs the thread machine over a runtime.
 * - `releasing`: that LiveThread retired (idle timeout, shutdown); its runtime is being let go.
 * - `deleting`: from the first moment of a delete until its files are gone; the id is not
 *   reusable meanwhile. Terminal: the entry is then removed.
 * - `unavailable`: its session file is damaged; nothing builds a runtime or writes the file until
 *   it is repaired (and threadhost restarted) or the thread deleted.
 */
export type Phase =
  | { kind: 'cold' }
  | { kind: 'building'; built: Promise<LiveThread> }
  | { kind: 'live'; thread: LiveThread }
  | { kind: 'releasing'; thread: LiveThread }
  | { kind: 'deleting'; done: Promise<void> }
  | { kind: 'unavailable'; reason: string }

export type PhaseKind = Phase['kind']

/** Every edge, with what takes it (the label of docs/machines.md's diagram). */
export const PHASE_EDGES: readonly { from: PhaseKind; to: PhaseKind; on: string }[] = [
  { from: 'cold', to: 'building', on: 'prompt / command' },
  { from: 'releasing', to: 'building', on: 'prompt, once released' },
  { from: 'building', to: 'live', on: 'runtime built' },
  { from: 'building', to: 'cold', on: 'build failed / shutting down' },
  { from: 'building', to: 'unavailable', on: 'session damaged' },
  { from: 'cold', to: 'unavailable', on: 'session damaged' },
  { from: 'live', to: 'releasing', on: 'retired (idle, shutdown)' },
  { from: 'releasing', to: 'cold', on: 'runtime released' },
  { from: 'cold', to: 'deleting', on: 'delete' },
  { from: 'building', to: 'deleting', on: 'delete' },
  { from: 'live', to: 'deleting', on: 'delete' },
  { from: 'releasing', to: 'deleting', on: 'delete' },
  { from: 'unavailable', to: 'deleting', on: 'delete' },
]

export function canEnter(from: PhaseKind, to: PhaseKind): boolean {
  return PHASE_EDGES.some((e) => e.from === from && e.to === to)
}

/** The LiveThread of a live or releasing thread (its machine still answers while it releases). */
export function threadIn(phase: Phase): LiveThread | undefined {
  return phase.kind === 'live' || phase.kind === 'releasing' ? phase.thread : undefined
}

/** The edges as a mermaid state diagram, for docs/machines.md (a test keeps the doc in step). */
export function phaseDiagram(): string {
  return [
    'stateDiagram-v2',
    '  [*] --> cold',
    ...PHASE_EDGES.map((e) => `  ${e.from} --> ${e.to}: ${e.on}`),
    '  deleting --> [*]',
  ].join('\n')
}
