/**
 * ELK (elkjs, EPL-2.0 OR GPL-3.0-or-later), loaded on first use: 1.6 MB that the thread pages never
 * pay for. The bundle is CommonJS; depending on the loader its constructor is the default export or
 * that export's own `default`.
 */
import type { Elk } from './layout.js'

let loading: Promise<Elk> | undefined

export function loadElk(): Promise<Elk> {
  loading ??= import('elkjs/lib/elk.bundled.js').then((mod) => {
    const exported = (mod as { default: unknown }).default as { default?: unknown }
    const Ctor = (exported.default ?? exported) as new () => Elk
    return new Ctor()
  })
  return loading
}
