/**
 * An event stream on a real socket: a frame is handed to the kernel when it is sent, not on the
 * next tick. Node's response corks itself until then, and the next tick waits for every microtask
 * — a settled dialog resumes its extension's whole run there, with the frame still held back.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { defaultStreamOptions, openEventStream } from '../../src/server/event-stream.js'

let server: Server | undefined
afterEach(() => {
  server?.closeAllConnections()
  server?.close()
  server = undefined
})

/** One follow over loopback; resolves with the server's response once the client has its headers. */
async function follow(): Promise<{ req: IncomingMessage; res: ServerResponse; received: () => string; ended: Promise<void> }> {
  const opened = new Promise<{ req: IncomingMessage; res: ServerResponse }>((resolve) => {
    server = createServer((req, res) => resolve({ req, res }))
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  const { port } = server!.address() as AddressInfo
  const socket = connect(port, '127.0.0.1')
  let text = ''
  socket.on('data', (chunk) => (text += chunk.toString('latin1')))
  const ended = new Promise<void>((resolve) => socket.on('end', resolve))
  socket.write('GET /follow HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n')
  return { ...(await opened), received: () => text, ended }
}

describe('event stream on a socket', () => {
  it('a frame sent from a microtask is in the kernel at once, before the microtasks after it run', async () => {
    const { req, res, received } = await follow()
    const request = { raw: req, url: req.url, log: { warn() {} } } as unknown as FastifyRequest
    const reply = { hijack() {}, raw: res } as unknown as FastifyReply
    const stream = openEventStream(request, reply, defaultStreamOptions, () => {})
    await new Promise((resolve) => setImmediate(resolve))
    const heldBack = await Promise.resolve().then(() => {
      stream.send(Buffer.from('event: dialog-settled\ndata: {}\n\n'))
      return { response: res.writableLength, socket: res.socket!.writableLength, corked: res.writableCorked }
    })
    expect(heldBack).toEqual({ response: 0, socket: 0, corked: 0 })
    await expect.poll(received).toContain('event: dialog-settled\ndata: {}\n\n')
    stream.close()
  })

  it('the body is the frames as sent, ended by closing the connection: no chunk framing for a reader to decode', async () => {
    const { req, res, received, ended } = await follow()
    const request = { raw: req, url: req.url, log: { warn() {} } } as unknown as FastifyRequest
    const reply = { hijack() {}, raw: res } as unknown as FastifyReply
    const stream = openEventStream(request, reply, { ...defaultStreamOptions, retryMs: 1000 }, () => {})
    stream.send(Buffer.from('id: 1\nevent: a\ndata: {}\n\n'))
    stream.send('id: 2\nevent: b\ndata: {}\n\n')
    stream.close()
    await ended
    const [head, body] = received().split('\r\n\r\n')
    expect(head.toLowerCase()).not.toContain('transfer-encoding')
    expect(head.toLowerCase()).toContain('connection: close')
    expect(body).toBe('retry: 1000\n\nevent: heartbeat\ndata: 15000\n\nid: 1\nevent: a\ndata: {}\n\nid: 2\nevent: b\ndata: {}\n\n')
  })

  it('names its heartbeat interval as the stream opens and beats at it, with no id (a resume point never moves), so a tab can tell silence from a dead connection', async () => {
    const { req, res, received, ended } = await follow()
    const request = { raw: req, url: req.url, log: { warn() {} } } as unknown as FastifyRequest
    const reply = { hijack() {}, raw: res } as unknown as FastifyReply
    const stream = openEventStream(request, reply, { ...defaultStreamOptions, heartbeatMs: 30 }, () => {})
    const beat = 'event: heartbeat\ndata: 30\n\n'
    await expect.poll(() => received().split(beat).length - 1).toBeGreaterThanOrEqual(3)
    stream.close()
    await ended
    expect(received()).not.toMatch(/^id: /m)
  })
})
