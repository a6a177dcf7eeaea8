// A bench client process: holds many SSE follows over raw sockets, so clients cost the server's
// process nothing and parse little (they count frames and look for one marker). Driven over IPC:
//   {cmd:'open', port, path, n, stall}  n follows; stalled ones never read a byte after connecting
//   {cmd:'open', port, paths}           one follow of each path
//   {cmd:'arm', marker, record}         counts from now; reports {event:'done'} once every fast
//                                       follow has seen `marker` (first/last arrival, hrtime ns, and the last per server port; the
//                                       frames, bytes and socket reads since, and this process's CPU)
//   {cmd:'times', marker}               from now every fast follow notes when each frame holding
//                                       `marker` arrives (performance.now, in a typed array)
//   {cmd:'gaps', from, to}              stops noting; per follow, the time between consecutive such
//                                       frames for those that arrived in [from, to] (hrtime ns), as
//                                       a histogram of 0.1 ms buckets; how many arrived then; how
//                                       many follows had none
//   {cmd:'stalled-ended', ms}           lets the stalled follows read: how many had been closed
//   {cmd:'close'}
// Times are process.hrtime (CLOCK_MONOTONIC), comparable across processes on one machine.
import { connect } from 'node:net'

const fast = []
const stalled = []
let armed

const reply = (body) => process.send(body)

/** Counts `needle` in a stream of chunks, carrying the tail of each so a split needle still counts. */
function counter(needle) {
  const n = Buffer.from(needle)
  let carry = Buffer.alloc(0)
  return (chunk) => {
    const buf = carry.length ? Buffer.concat([carry, chunk]) : chunk
    let count = 0
    let at = 0
    for (;;) {
      const i = buf.indexOf(n, at)
      if (i < 0) break
      count++
      at = i + n.length
    }
    carry = buf.subarray(Math.max(at, buf.length - (n.length - 1)))
    return count
  }
}

function open(port, path, stall) {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1')
    const conn = { port, sock, seen: false, at: 0n, frames: 0, bytes: 0, reads: 0, countFrames: counter('\nevent: '), findMarker: undefined, record: undefined, findTimed: undefined, times: undefined, nTimes: 0 }
    sock.setNoDelay(true)
    sock.on('error', () => {})
    sock.once('connect', () => {
      sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`)
      if (stall) {
        sock.pause()
        conn.ended = false
        sock.on('end', () => (conn.ended = true))
        sock.on('close', () => (conn.ended = true))
        resolve(conn)
      }
    })
    if (stall) return
    sock.once('data', () => resolve(conn))
    sock.once('close', () => reject(new Error('closed before it started')))
    sock.on('data', (chunk) => {
      conn.bytes += chunk.length
      conn.reads++
      conn.frames += conn.countFrames(chunk)
      if (conn.record) conn.record.push(chunk)
      if (conn.findTimed) {
        const n = conn.findTimed(chunk)
        if (n) note(conn, performance.now(), n)
      }
      if (!conn.seen && conn.findMarker && conn.findMarker(chunk) > 0) {
        conn.seen = true
        conn.at = process.hrtime.bigint()
        settle()
      }
    })
    sock.on('close', () => {
      conn.closed = true
      settle()
    })
  })
}

/** Notes n arrivals at `t` (frames that came in one read arrived together). */
function note(conn, t, n) {
  for (let k = 0; k < n; k++) {
    if (conn.nTimes === conn.times.length) {
      const grown = new Float64Array(conn.times.length * 2)
      grown.set(conn.times)
      conn.times = grown
    }
    conn.times[conn.nTimes++] = t
  }
}

/** performance.now() runs on the same monotonic clock as hrtime: an hrtime (ns) in its terms. */
function local(ns) {
  return performance.now() - Number(process.hrtime.bigint() - BigInt(ns)) / 1e6
}

function gaps(fromNs, toNs) {
  const from = local(fromNs)
  const to = local(toNs)
  const hist = new Map()
  let frames = 0
  let silent = 0
  for (const c of fast) {
    c.findTimed = undefined
    let any = false
    for (let i = 0; i < c.nTimes; i++) {
      const t = c.times[i]
      if (t < from || t > to) continue
      frames++
      any = true
      // The gap before a frame in the window counts even when the frame before it came earlier.
      if (i > 0) {
        const bucket = Math.floor((t - c.times[i - 1]) * 10)
        hist.set(bucket, (hist.get(bucket) ?? 0) + 1)
      }
    }
    if (!any) silent++
    c.times = undefined
  }
  return { hist: [...hist], frames, silent, follows: fast.length, closed: fast.filter((c) => c.closed).length }
}

function settle() {
  if (!armed || armed.reported) return
  if (!fast.every((c) => c.seen || c.closed)) return
  armed.reported = true
  const times = fast.filter((c) => c.seen).map((c) => c.at)
  reply({
    event: 'done',
    first: String(times.reduce((a, b) => (b < a ? b : a), times[0] ?? 0n)),
    last: String(times.reduce((a, b) => (b > a ? b : a), times[0] ?? 0n)),
    frames: fast.reduce((s, c) => s + c.frames, 0),
    bytes: fast.reduce((s, c) => s + c.bytes, 0),
    reads: fast.reduce((s, c) => s + c.reads, 0),
    // What reading cost this process (µs, user + system): one read per chunk the socket delivers, and the count.
    cpu: (({ user, system }) => user + system)(process.cpuUsage(armed.cpu)),
    closed: fast.filter((c) => c.closed).length,
    // The last arrival on each server port: which server's followers were the last.
    byPort: Object.fromEntries([...new Set(fast.map((c) => c.port))].map((port) => [port, String(fast.filter((c) => c.port === port && c.seen).reduce((a, c) => (c.at > a ? c.at : a), 0n))])),
    record: fast[0]?.record ? fast[0].record.map((c) => c.toString('latin1')) : undefined,
  })
}

process.on('message', async (m) => {
  switch (m.cmd) {
    case 'open': {
      const paths = m.paths ?? Array.from({ length: m.n }, () => m.path)
      const conns = await Promise.all(paths.map((path) => open(m.port, path, m.stall)))
      ;(m.stall ? stalled : fast).push(...conns)
      return reply({ re: 'open' })
    }
    case 'arm':
      armed = { reported: false, cpu: process.cpuUsage() }
      for (const c of fast) {
        c.seen = false
        c.frames = 0
        c.bytes = 0
        c.reads = 0
        c.findMarker = counter(m.marker)
        c.record = undefined
      }
      if (m.record && fast[0]) fast[0].record = []
      reply({ re: 'arm' })
      // A process holding no fast follows has nothing to wait for.
      return setImmediate(settle)
    case 'times':
      for (const c of fast) {
        c.times = new Float64Array(256)
        c.nTimes = 0
        c.findTimed = counter(m.marker)
      }
      return reply({ re: 'times' })
    case 'gaps':
      return reply({ re: 'gaps', ...gaps(m.from, m.to) })
    case 'stalled-ended': {
      for (const c of stalled) {
        c.sock.on('data', () => {})
        c.sock.resume()
      }
      await new Promise((r) => setTimeout(r, m.ms))
      return reply({ re: 'stalled-ended', ended: stalled.filter((c) => c.ended).length, of: stalled.length })
    }
    case 'close':
      for (const c of [...fast, ...stalled]) c.sock.destroy()
      fast.length = 0
      stalled.length = 0
      armed = undefined
      return reply({ re: 'close' })
  }
})
process.on('disconnect', () => process.exit(0))
