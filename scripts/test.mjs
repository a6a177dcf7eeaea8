#!/usr/bin/env node
// Runs the whole suite once and ends with the plain line CI reads: `N passed, N failed`.
// Vitest's own summary is not in that form, so its JSON report is counted here.
import './require-node.mjs'
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const dir = mkdtempSync(join(tmpdir(), 'threadhost-test-'))
const report = join(dir, 'report.json')
// Every temp dir the tests make goes under this run's own folder, removed when the run ends. pi writes
// to its agent dir from a refresh no one awaits, so a test's own cleanup can run before pi's last write
// and leave the dir behind; the run's folder takes those along.
const temp = join(dir, 't')
mkdirSync(temp)
// vitest under this very node (not `npx`, whose node is whichever comes first on PATH).
const args = [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)]
const child = spawn(process.execPath, args, { stdio: 'inherit', env: { ...process.env, TMPDIR: temp } })
// Stopped (Ctrl-C, or a TERM): vitest is told, and this waits for it to exit, so the run's folder is still removed.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal))
child.on('exit', (code, signal) => {
  let passed = 0
  let failed = 0
  try {
    const json = JSON.parse(readFileSync(report, 'utf8'))
    passed = json.numPassedTests
    failed = json.numFailedTests + (json.numRuntimeErrorTestSuites ?? 0)
    if (!json.success && failed === 0) failed = 1
  } catch {
    failed = Math.max(failed, 1)
  }
  rmSync(dir, { recursive: true, force: true })
  console.log(`${passed} passed, ${failed} failed`)
  process.exit(code ?? (signal ? 1 : 0))
})
