/**
 * Debian's Chromium for the browser and e2e tests (never a downloaded browser). CHROMIUM_PATH
 * overrides `command -v chromium`. Shared by vitest.config.ts and the e2e harness.
 */
import { execSync } from 'node:child_process'
import { existsSync } from 'node:fs'

export function findChromium(): string | undefined {
  const fromEnv = process.env.CHROMIUM_PATH
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : undefined
  try {
    return (
      execSync('command -v chromium || command -v chromium-browser', { shell: '/bin/sh', stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim() || undefined
    )
  } catch {
    return undefined
  }
}

/** As root on a closed network: no sandbox, and nothing that phones home (refused connections pile up otherwise). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
]
