// The baseline: a raw node:http SSE broadcaster with no framework, no projection and no agent —
// what fanning the same bytes out costs at the least. The bench feeds it the frames threadhost
// produced for the same run. Plain JavaScript, so its start-up is node's alone.
//
//   GET  /api/threads              200 [] (the start-up probe)
//   GET  /follow/:ch               an SSE stream of the channel
//   POST /load/:ch                 the body (encoded SSE frames) becomes the channel's run
//   POST /play/:ch[?ms=M]          replays the run to every follower, one write per frame per
//                                  socket, in the bursts threadhost wrote them (one burst a turn,
//                                  or one every M ms from a timer re-armed after each); answers when done
//   POST /dialog/:ch               writes one dialog-settled frame to every follower, then 204
//   POST /channels?n=K             K idle channels, each holding its run's frames in a ring (heap)
//   POST /tick?k=K&ms=M            the body (one recorded chunk frame) becomes the template of K
//                                  streams: channel tickI writes a chunk every M ms to its followers
//   POST /tick-stop                stops them
// A follower with more than 1 MiB buffered is closed at once (the naive drop rule).
import { createServer } from 'node:http'

const port = Number(process.argv[process.argv.indexOf('--port') + 1] || 0)
const HWM = 1 << 20
const channels = new Map()
const idle = []
const ticking = []

function channel(name) {
  let c = channels.get(name)
  if (!c) channels.set(name, (c = { followers: new Set(), frames: [], seq: 0 }))
  return c
}

/** The frames of a loaded run, as bursts: a `:burst` comment line ends one turn's frames. */
function splitBursts(body) {
  const bursts = [[]]
  let at = 0
  for (;;) {
    const cut = body.indexOf('\n\n', at)
    if (cut < 0) break
    const frame = body.subarray(at, cut + 2)
    if (frame.toString('latin1') === ':burst\n\n') bursts.push([])
    else bursts.at(-1).push(frame)
    at = cut + 2
  }
  return bursts.filter((b) => b.length)
}
const splitFrames = (body) => splitBursts(body).flat()

function broadcast(c, frame) {
  for (const res of c.followers) {
    res.write(frame)
    if (res.writableLength > HWM) {
      c.followers.delete(res)
      res.destroy()
    }
  }
}

const readBody = (req) =>
  new Promise((resolve) => {
    const parts = []
    req.on('data', (d) => parts.push(d))
    req.on('end', () => resolve(Buffer.concat(parts)))
  })

const server = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x')
  const [, route, name] = url.pathname.split('/')
  if (req.method === 'GET' && url.pathname === '/api/threads') return res.end('[]')
  if (req.method === 'GET' && route === 'follow') {
    const c = channel(name)
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    res.write('retry: 1000\n\n')
    res.socket.setNoDelay(true)
    c.followers.add(res)
    req.on('close', () => c.followers.delete(res))
    return
  }
  if (req.method === 'POST' && route === 'load') {
    channel(name).bursts = splitBursts(await readBody(req))
    return res.end()
  }
  if (req.method === 'POST' && route === 'play') {
    // Each burst in one turn of the event loop, as the frames reached threadhost's sockets.
    const c = channel(name)
    const ms = Number(url.searchParams.get('ms') ?? 0)
    let i = 0
    const next = () => {
      if (i < c.bursts.length) {
        for (const frame of c.bursts[i++]) broadcast(c, frame)
        if (ms > 0) setTimeout(next, ms)
        else setImmediate(next)
      } else res.end()
    }
    return next()
  }
  if (req.method === 'POST' && route === 'dialog') {
    const c = channel(name)
    const seq = ++c.seq
    broadcast(c, Buffer.from(`id: ${seq}\nevent: dialog-settled\ndata: ${JSON.stringify({ type: 'dialog-settled', id: `d${seq}`, outcome: 'answered', seq })}\n\n`))
    res.statusCode = 204
    return res.end()
  }
  if (req.method === 'POST' && route === 'channels') {
    const n = Number(url.searchParams.get('n') ?? 1)
    const frames = splitFrames(await readBody(req))
    // Each holds its own copy, as each thread's feed holds its own frames.
    for (let i = 0; i < n; i++) idle.push({ followers: new Set(), frames: frames.map((f) => Buffer.from(f)), seq: frames.length })
    return res.end()
  }
  if (req.method === 'POST' && route === 'tick') {
    const k = Number(url.searchParams.get('k'))
    const ms = Number(url.searchParams.get('ms'))
    // A minimal relay of K upstream token streams: each numbers and encodes its frame as a chunk
    // comes (the recorded frame with this channel's seq), writes it to the channel's followers and
    // waits for the next one. One timer per channel, re-armed after each write: the schedule the
    // demo model's faux provider keeps in threadhost (a setTimeout per chunk, after the last one).
    const frame = (await readBody(req)).toString('utf8')
    const event = frame.slice(frame.indexOf('\n') + 1).replace(/,"seq":\d+\}\n\n$/, '')
    for (let i = 0; i < k; i++) {
      const c = channel(`tick${i}`)
      const next = () => {
        const seq = ++c.seq
        broadcast(c, `id: ${seq}\n${event},"seq":${seq}}\n\n`)
        c.timer = setTimeout(next, ms)
      }
      // Independent streams start at independent moments (threadhost's start as their prompts come).
      c.timer = setTimeout(next, Math.random() * ms)
      ticking.push(c)
    }
    return res.end()
  }
  if (req.method === 'POST' && route === 'tick-stop') {
    for (const c of ticking.splice(0)) clearTimeout(c.timer)
    return res.end()
  }
  res.statusCode = 404
  res.end()
})
server.listen(port, '127.0.0.1', () => console.log(`baseline listening on http://127.0.0.1:${server.address().port}`))
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0))
