// Preloaded into a benchmarked server process (`node --expose-gc --import ./bench/probe.mjs …`,
// spawned with an IPC channel): answers the bench's questions from inside the process.
//   {probe: 'heap'}       → { heap: bytes used after a full GC }
//   {probe: 'lag-start'}  → starts watching the event loop
//   {probe: 'lag-stop'}   → { maxBlockMs: the most CPU the main thread spent between two turns of
//                             the loop (a 1 ms timer), maxWallMs: the longest wall-clock gap, which
//                             on a loaded machine also counts time the process waited for a core }
//   {probe: 'prof-start'} → starts V8's CPU profiler (node:inspector, this process only)
//   {probe: 'prof-stop'}  → { profile: the .cpuprofile JSON text since prof-start }
//   {probe: 'alloc-start'} / {probe: 'alloc-stop'} → the same for V8's sampling heap profiler
//                             ({ profile: what was allocated in between, by stack; sampled every 4 KiB })
//   {probe: 'snapshot', path} → { path: a heap snapshot written there (after a full GC) }
// Nothing here runs unless the bench asks; the process is otherwise the ordinary server.
import { Session } from 'node:inspector'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { writeHeapSnapshot } from 'node:v8'

if (process.send) {
  let histogram
  let timer
  let last = 0
  let maxGap = 0
  let maxCpu = 0
  let lastCpu = 0
  let profiler
  /** CPU time of the main thread alone, in ms: what the loop spent running, not waiting for a core. */
  const threadCpu = () => {
    const u = process.threadCpuUsage?.() ?? process.cpuUsage()
    return (u.user + u.system) / 1000
  }
  process.on('message', (message) => {
    if (!message || typeof message !== 'object' || !('probe' in message)) return
    const reply = (body) => process.send({ probe: message.probe, ...body })
    switch (message.probe) {
      case 'heap':
        globalThis.gc?.()
        globalThis.gc?.()
        reply({ heap: process.memoryUsage().heapUsed })
        break
      case 'lag-start':
        histogram?.disable()
        histogram = monitorEventLoopDelay({ resolution: 1 })
        histogram.enable()
        clearInterval(timer)
        maxGap = 0
        maxCpu = 0
        last = performance.now()
        lastCpu = threadCpu()
        timer = setInterval(() => {
          const now = performance.now()
          const cpu = threadCpu()
          maxGap = Math.max(maxGap, now - last)
          maxCpu = Math.max(maxCpu, cpu - lastCpu)
          last = now
          lastCpu = cpu
        }, 1)
        reply({})
        break
      case 'prof-start':
        profiler ??= new Session()
        profiler.connect()
        profiler.post('Profiler.enable', () =>
          profiler.post('Profiler.setSamplingInterval', { interval: message.intervalUs ?? 100 }, () => profiler.post('Profiler.start', () => reply({}))),
        )
        break
      case 'prof-stop':
        profiler.post('Profiler.stop', (error, result) => {
          profiler.disconnect()
          reply(error ? { error: String(error) } : { profile: JSON.stringify(result.profile) })
        })
        break
      case 'alloc-start':
        profiler ??= new Session()
        profiler.connect()
        profiler.post('HeapProfiler.enable', () =>
          profiler.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }, () => reply({})),
        )
        break
      case 'alloc-stop':
        profiler.post('HeapProfiler.stopSampling', (error, result) => {
          profiler.disconnect()
          reply(error ? { error: String(error) } : { profile: JSON.stringify(result.profile) })
        })
        break
      case 'snapshot':
        globalThis.gc?.()
        globalThis.gc?.()
        reply({ path: writeHeapSnapshot(message.path) })
        break
      case 'lag-stop': {
        clearInterval(timer)
        histogram?.disable()
        const delay = histogram ? histogram.max / 1e6 : 0
        histogram = undefined
        reply({ maxBlockMs: maxCpu, maxWallMs: Math.max(maxGap, delay) })
        break
      }
    }
  })
  // The IPC channel must not keep the server alive on its own.
  process.channel?.unref()
}
