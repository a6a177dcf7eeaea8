// `node bench/write-path.mjs MODE N`: what one follower costs a node:http server per paced frame, by
// the way a frame is written — the hypotheses of issue 24's per-follower slope, measured apart from
// threadhost. A server process writes one 150-byte assistant-delta frame every 5 ms (400 frames) to N
// followers held by a client process over loopback, and prints its CPU per frame (user + system, µs).
//   chunked  res.write(frame): Node's response, chunked transfer-encoding (what the raw broadcaster does)
//   nochunk  the same with `res.useChunkedEncodingByDefault = false` (the body ends when the connection closes)
//   socket   close-delimited as above, each frame written to `res.socket` itself (what event-stream.ts does)
// The slope per extra follower is (CPU at N=100 − CPU at N=10) ÷ 90:
//   for m in chunked nochunk socket; do for n in 10 100; do node bench/write-path.mjs $m $n; done; done
// Not part of `npm run bench`; docs/benchmarks.md gives a run.
import { createServer } from 'node:http'
import { connect } from 'node:net'
import { fork } from 'node:child_process'
const [mode, nStr, role, portStr] = process.argv.slice(2)
const N = Number(nStr)
const frame = Buffer.from(`id: 123\nevent: assistant-delta\ndata: {"type":"assistant-delta","messageId":"e14dcf16-1bd0-4440-9e7e-2f5c066c6d2e","text":"one ","seq":123}\n\n`)
if (role === 'client') {
  let open = 0, bytes = 0
  for (let i = 0; i < N; i++) {
    const s = connect(Number(portStr), '127.0.0.1')
    s.setNoDelay(true)
    s.on('connect', () => s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'))
    s.once('data', () => { if (++open === N) process.send('ready') })
    s.on('data', (d) => { bytes += d.length })
  }
  process.on('message', () => { process.send(bytes); process.exit(0) })
} else if (role === 'server') {
  const follows = []
  const server = createServer((req, res) => {
    if (mode === 'nochunk' || mode === 'socket') res.useChunkedEncodingByDefault = false
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    res.write('retry: 1000\n\n')
    res.socket.setNoDelay(true)
    follows.push(res)
  })
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
  process.on('message', async (m) => {
    if (m === 'go') {
      const c0 = process.cpuUsage()
      const t0 = performance.now()
      let k = 0
      await new Promise((done) => {
        const tick = () => {
          if (mode === 'socket') for (const r of follows) r.socket.write(frame)
          else for (const r of follows) r.write(frame)
          if (++k < 400) setTimeout(tick, 5)
          else done()
        }
        setTimeout(tick, 5)
      })
      const c = process.cpuUsage(c0)
      process.send({ cpuPerChunkUs: (c.user + c.system) / k, sys: c.system / k, wall: performance.now() - t0 })
    }
  })
} else {
  const srv = fork(new URL(import.meta.url).pathname, [mode, nStr, 'server'])
  const { port } = await new Promise((r) => srv.once('message', r))
  const cl = fork(new URL(import.meta.url).pathname, [mode, nStr, 'client', String(port)])
  await new Promise((r) => cl.once('message', r))
  await new Promise((r) => setTimeout(r, 200))
  srv.send('go')
  const res = await new Promise((r) => srv.once('message', r))
  cl.send('x'); const bytes = await new Promise((r) => cl.once('message', r))
  console.log(`${mode} ${N} followers: ${res.cpuPerChunkUs.toFixed(1)} µs CPU per frame (${res.sys.toFixed(1)} of it system), ${bytes} bytes read`)
  srv.kill()
}
