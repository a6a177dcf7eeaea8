// Preloaded into the cluster bench's servers (`node --import ./bench/cluster-stamp.mjs …`, spawned
// with an IPC channel): notes when each `assistant-delta` frame is first encoded in this process —
// the moment its thread's feed appends it (src/host/frame.ts encodes every frame with Buffer.from,
// once at the append; a cluster node's mirror encodes it again later, which the first-seen rule
// leaves out). Times are process.hrtime (CLOCK_MONOTONIC), comparable with the bench's own.
//   {stamp: 'start'} → from now, notes each delta's seq and time
//   {stamp: 'stop'}  → { stamp: 'stop', seqs: [[seq, ns as a string], …] } and stops noting
// Nothing is noted unless the bench asks; the process is otherwise the ordinary server.
if (process.send) {
  const from = Buffer.from
  const DELTA = 'event: assistant-delta\n'
  let noted
  Buffer.from = function (value, ...rest) {
    if (noted && typeof value === 'string' && value.startsWith('id: ')) {
      const nl = value.indexOf('\n')
      if (value.startsWith(DELTA, nl + 1)) {
        const seq = Number(value.slice(4, nl))
        if (!noted.has(seq)) noted.set(seq, process.hrtime.bigint())
      }
    }
    return from.call(this, value, ...rest)
  }
  process.on('message', (m) => {
    if (m?.stamp === 'start') {
      noted = new Map()
      process.send({ stamp: 'start' })
    } else if (m?.stamp === 'stop') {
      const seqs = noted ? [...noted].map(([seq, ns]) => [seq, String(ns)]) : []
      noted = undefined
      process.send({ stamp: 'stop', seqs })
    }
  })
  // The bench's other probe (bench/probe.mjs) may hold the channel too; this one must not keep the process alive.
  process.channel?.unref()
}
