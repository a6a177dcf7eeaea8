/** A real registry on the scripted runtime, with an Inspection over it, for the inspector's node tests. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Inspection, type InspectionOptions, type InspectionRecord } from '../../src/host/inspection.js'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import { FakeRuntimeFactory, hostOptions } from '../host/fake-runtime.js'

export const confirm = {
  spec: { method: 'confirm' as const, title: 'Deploy?', message: 'to prod' },
  origin: { kind: 'extension' as const },
}

export interface World {
  registry: ThreadRegistry
  runtimes: FakeRuntimeFactory
  inspection: Inspection
  prompt(threadId: string, message: string): ReturnType<ThreadRegistry['prompt']>
  close(): Promise<void>
}

export async function world(options: InspectionOptions = {}): Promise<World> {
  const dir = await mkdtemp(join(tmpdir(), 'threadhost-inspector-'))
  const runtimes = new FakeRuntimeFactory()
  const registry = await ThreadRegistry.open(hostOptions(dir, runtimes))
  const inspection = new Inspection(registry, options)
  return {
    registry,
    runtimes,
    inspection,
    prompt: (threadId, message) => registry.prompt(threadId, { message, admission: 'enqueue', deliverAs: 'steer' }),
    async close() {
      inspection.dispose()
      for (const fake of runtimes.runtimes.values()) fake.settle()
      await registry.shutdown()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/** The id of the one open dialog of a thread. */
export function openDialogId(w: World, threadId: string): string {
  const live = w.registry.liveThreads().find((t) => t.threadId === threadId)!
  return live.actor.getSnapshot().context.dialogs[0]
}

export const tick = () => new Promise((r) => setTimeout(r, 0))

export const of = (records: InspectionRecord[], actorId: string) => records.filter((r) => r.actorId === actorId)
