/**
 * e2e global setup: build the client the server serves from dist/client. Always rebuilt (about a
 * second) so a stale bundle never tests yesterday's client; THREADHOST_E2E_SKIP_BUILD=1 skips it
 * when dist/client exists.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'

export default function setup() {
  if (process.env.THREADHOST_E2E_SKIP_BUILD === '1' && existsSync('dist/client/index.html')) return
  // The suite runs under NODE_ENV=test; the bundle npm start serves must be a production one.
  execFileSync('npx', ['vite', 'build', '--logLevel', 'warn'], { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'production' } })
}
