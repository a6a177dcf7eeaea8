#!/usr/bin/env node
// `npm start` (through scripts/with-node24.sh): build the web client and the server when they are
// missing or older than their sources, then become the server, run as compiled JavaScript (tsx stays
// for development and tests: it compiles at run time, which cost seconds at every start).
import './require-node.mjs'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { newest, root, serverEntry, serverStale } from './build-server.mjs'

const built = join(root, 'dist/client/index.html')

const stale = !existsSync(built) || newest(join(root, 'src')) > statSync(built).mtimeMs
if (stale && existsSync(join(root, 'vite.config.ts'))) {
  console.log('building the web client …')
  const result = spawnSync(process.execPath, [join(root, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], {
    cwd: root,
    stdio: 'inherit',
  })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

let server = ['--enable-source-maps', serverEntry]
if (serverStale()) {
  // In a process of its own, as the client's build: esbuild's service is a child process, and one
  // left behind here would outlive the exec below as a zombie child of the server.
  const result = spawnSync(process.execPath, [join(root, 'scripts/build-server.mjs')], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] })
  if (result.status !== 0) {
    // Never worse than before: without a build, run the sources through tsx.
    console.warn('could not build the server; running it through tsx')
    server = ['--import', 'tsx', join(root, 'src/server/main.ts')]
  }
}

// node's compile cache (most of a start is compiling the packages' code) is the server's own: src/server/main.ts.
const env = process.env
const args = [...server, ...process.argv.slice(2)]
if (typeof process.execve === 'function') {
  // The server takes this process's place: one process stays, not this launcher beside it, and
  // signals from the terminal or a supervisor reach the server itself.
  process.execve(process.execPath, [process.execPath, ...args], env)
}
// Where node cannot exec (Windows), wait on the server and pass signals on.
const child = spawn(process.execPath, args, { cwd: process.cwd(), stdio: 'inherit', env })
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal))
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
