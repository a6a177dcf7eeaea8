#!/usr/bin/env node
// `npm start` (through scripts/with-node24.sh): build the web client and the server when they are
// missing or older than their sources, then run the server, as compiled JavaScript (tsx stays for
// development and tests: it compiles at run time, which cost seconds at every start).
import './require-node.mjs'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { newest, root, serverEntry, serverStale } from './build-server.mjs'

const built = join(root, 'dist/client/index.html')
// One walk of src serves both checks.
const sources = newest(join(root, 'src'))

if ((!existsSync(built) || sources > statSync(built).mtimeMs) && existsSync(join(root, 'vite.config.ts'))) {
  console.log('building the web client …')
  const result = spawnSync(process.execPath, [join(root, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], {
    cwd: root,
    stdio: 'inherit',
  })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

let fallback = false
if (serverStale(sources)) {
  // In a process of its own, as the client's build: esbuild's service is a child process, and one
  // left behind here would stay beside the server as its child.
  const result = spawnSync(process.execPath, [join(root, 'scripts/build-server.mjs')], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] })
  if (result.status !== 0) {
    // Never worse than before: without a build, run the sources through tsx.
    console.warn('could not build the server; running it through tsx')
    fallback = true
  }
}

if (!fallback) {
  // This process becomes the server (it reads the same flags, process.argv.slice(2)): one process
  // stays, not this launcher beside it, signals from the terminal or a supervisor reach the server
  // itself, and node starts once, not twice. node's compile cache and source maps are the server's own
  // (src/server/main.ts).
  await import(pathToFileURL(serverEntry).href)
} else {
  const args = ['--import', 'tsx', join(root, 'src/server/main.ts'), ...process.argv.slice(2)]
  if (typeof process.execve === 'function') process.execve(process.execPath, [process.execPath, ...args], process.env)
  // Where node cannot exec (Windows), wait on the server and pass signals on.
  const child = spawn(process.execPath, args, { cwd: process.cwd(), stdio: 'inherit' })
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal))
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
}
