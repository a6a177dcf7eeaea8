#!/usr/bin/env node
// `npm start`: build the web client and the server when they are missing or older than their
// sources, then run the server as compiled JavaScript (tsx stays for development and tests: it
// compiles at run time, which cost seconds at every start).
import './require-node.mjs'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { buildServer, newest, root, serverEntry, serverStale } from './build-server.mjs'

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
  try {
    await buildServer()
  } catch (error) {
    // Never worse than before: without a build, run the sources through tsx.
    console.warn(`could not build the server (${error?.message ?? error}); running it through tsx`)
    server = ['--import', 'tsx', join(root, 'src/server/main.ts')]
  }
}

const child = spawn(process.execPath, [...server, ...process.argv.slice(2)], {
  cwd: process.cwd(),
  stdio: 'inherit',
  // Most of what is left of start-up is compiling node_modules: node keeps the compiled code here.
  env: { NODE_COMPILE_CACHE: join(root, 'node_modules/.cache/threadhost-compile'), ...process.env },
})
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal))
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
