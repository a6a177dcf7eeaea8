// Preloaded into the cluster bench's servers (`node --import ./bench/cluster-stamp.mjs …`, spawned
// with an IPC channel): notes when each `assistant-delta` frame is first encoded in this process —
// the moment its thread's feed appends it (src/host/frame.ts encodes every frame with Buffer.from,
// once at the append; a cluster node's mirror encodes it again later, which the first-seen rule
// leaves out). Times are process.hrtime (CLOCK_MONOTONIC), comparable with the bench's own.
//   {stamp: 'start'} → from now, notes each delta's seq and time
//   {stamp: 'stop'}  → { stamp: 'stop', seqs: [[seq, ns as a string], …] } and stops noting
//   {stamp: 'stalls'} → { stamp: 'stalls', stalls: [[from ns, ms, CPU ms], …], gcs: [[from ns, ms], …] }:
//                      with BENCH_CLUSTER_TRACE=1 only, every gap of more than 5 ms between two ticks of a
//                      2 ms timer (the loop got no turn for that long), with the CPU the process used
//                      meanwhile (little CPU in a long gap: it waited on a syscall, an fsync, or for a
//                      core), and every GC pause
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
  const stalls = []
  const gcs = []
  if (process.env.BENCH_CLUSTER_TRACE === '1') {
    const { PerformanceObserver, performance } = await import('node:perf_hooks')
    // A performance entry's time (ms on performance.now's clock) as an hrtime.
    const hr = (t) => process.hrtime.bigint() - BigInt(Math.round((performance.now() - t) * 1e6))
    const keep = (list, entry) => list.push(entry) > 5000 && list.splice(0, 1000)
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) keep(gcs, [String(hr(e.startTime)), e.duration])
    }).observe({ entryTypes: ['gc'] })
    let last = process.hrtime.bigint()
    let lastCpu = process.cpuUsage()
    setInterval(() => {
      const now = process.hrtime.bigint()
      const cpu = process.cpuUsage()
      if (now - last > 5_000_000n) keep(stalls, [String(last), Number(now - last) / 1e6, (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000])
      last = now
      lastCpu = cpu
    }, 2).unref()
  }
  process.on('message', (m) => {
    if (m?.stamp === 'stalls') process.send({ stamp: 'stalls', stalls, gcs })
    else if (m?.stamp === 'start') {
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
