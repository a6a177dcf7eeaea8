/**
 * The cluster scenario's floor for a command passed on (bench/cluster.ts): a plain node:http proxy,
 * in its own process, that sends each request to one server on a kept-alive connection and its answer
 * back — what any extra process on a command's way costs on this machine, with none of threadhost's
 * work. `node bench/hop-proxy.mjs <target URL>`; prints `hop-proxy listening on <url>`.
 */
import http from 'node:http'

const target = new URL(process.argv[2])
const agent = new http.Agent({ keepAlive: true })

const server = http.createServer((request, response) => {
  const chunks = []
  request.on('data', (chunk) => chunks.push(chunk))
  request.on('end', () => {
    const body = Buffer.concat(chunks)
    const headers = { ...request.headers, host: target.host, 'content-length': body.length }
    const out = http.request({ host: target.hostname, port: target.port, method: request.method, path: request.url, headers, agent }, (answer) => {
      const parts = []
      answer.on('data', (chunk) => parts.push(chunk))
      answer.on('end', () => {
        const payload = Buffer.concat(parts)
        response.writeHead(answer.statusCode ?? 502, { 'content-type': answer.headers['content-type'] ?? 'application/octet-stream', 'content-length': payload.length })
        response.end(payload)
      })
    })
    out.on('error', (error) => {
      response.writeHead(502, { 'content-type': 'text/plain' })
      response.end(String(error))
    })
    out.end(body)
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => console.log(`hop-proxy listening on http://127.0.0.1:${server.address().port}`))
process.on('SIGTERM', () => process.exit(0))
