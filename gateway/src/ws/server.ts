import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import { WebSocket, WebSocketServer } from 'ws';
import type { ResultBus } from '../async/bus.ts';
import { type ChannelStore, type ResultBody, TERMINAL_STATES, topicOf } from '../async/channels.ts';
import type { TokenGrant, TokenStore } from '../async/tokens.ts';
import { AUTH_TOKEN_PREFIX, CLOSE, parseFrame, push, reply } from './phoenix.ts';

export const SOCKET_PATH = '/socket/websocket';
/** No frame (the client heartbeats every 30 s) for this long: the socket is dead. */
const IDLE_MS = 75_000;

interface Conn {
  ws: WebSocket;
  token: string;
  grant: TokenGrant;
  topic: string;
  key: string;
  joinRef: string | null;
  joined: boolean;
  delivered: boolean;
  /** The token was given back already (drain): closing must not give it back again. */
  released: boolean;
  lastSeen: number;
}

export interface SocketServerDeps {
  tokens: TokenStore;
  channels: ChannelStore;
  bus: ResultBus;
  logger: Logger;
  registry: Registry;
}

function tokenOf(req: IncomingMessage, url: URL): string | undefined {
  const q = url.searchParams.get('token');
  if (q) return q;
  const proto = req.headers['sec-websocket-protocol'];
  const auth = proto
    ?.split(',')
    .map((s) => s.trim())
    .find((s) => s.startsWith(AUTH_TOKEN_PREFIX));
  if (!auth) return undefined;
  return Buffer.from(auth.slice(AUTH_TOKEN_PREFIX.length), 'base64').toString('utf8');
}

/**
 * WebSocket delivery on the API port (docs/api.md, "Async requests, WebSocket and webhooks"): Phoenix Channels v2 over `ws`, on the raw HTTP
 * server's `upgrade` event. One socket holds one ws_token and may join only that token's channel;
 * results arrive through the ResultBus from whichever pod finished the job, or from the stored
 * result when the client joins after it finished.
 */
export class SocketServer {
  readonly #d: SocketServerDeps;
  readonly #wss: WebSocketServer;
  readonly #conns = new Set<Conn>();
  readonly #byChannel = new Map<string, Set<Conn>>();
  #draining = false;
  readonly #sweep: NodeJS.Timeout;

  constructor(deps: SocketServerDeps) {
    this.#d = deps;
    this.#wss = new WebSocketServer({
      noServer: true,
      maxPayload: 64 * 1024,
      perMessageDeflate: false,
      // The phoenix client sends its authToken as a second subprotocol and expects `phoenix` back.
      handleProtocols: (protocols) => (protocols.has('phoenix') ? 'phoenix' : false),
    });
    deps.bus.listen((m) => {
      const set = this.#byChannel.get(`${m.projectId}\n${m.channelId}`);
      if (set) for (const c of set) this.#deliver(c, m.result);
    });
    const conns = this.#conns;
    new Gauge({
      name: 'switchyard_websocket_connections',
      help: 'Open WebSocket connections on this gateway.',
      registers: [deps.registry],
      collect() {
        this.set(conns.size);
      },
    });
    this.#sweep = setInterval(() => {
      const cutoff = performance.now() - IDLE_MS;
      for (const c of this.#conns) if (c.lastSeen < cutoff) c.ws.terminate();
    }, 15_000);
    this.#sweep.unref();
  }

  attach(server: Server): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.pathname !== SOCKET_PATH || this.#draining) {
        socket.end(
          `HTTP/1.1 ${this.#draining ? '503 Service Unavailable' : '404 Not Found'}\r\nConnection: close\r\n\r\n`,
        );
        return;
      }
      this.#wss.handleUpgrade(req, socket, head, (ws) => this.#open(ws, tokenOf(req, url)));
    });
  }

  #open(ws: WebSocket, token: string | undefined): void {
    const early: string[] = [];
    let conn: Conn | undefined;
    let closed = false;
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        ws.close(CLOSE.badFrame, 'binary frames are not supported');
        return;
      }
      const text = data.toString();
      if (conn) this.#frame(conn, text);
      else early.push(text);
    });
    ws.on('close', () => {
      closed = true;
      if (conn) this.#closed(conn);
    });
    ws.on('error', () => {});
    if (!token) {
      ws.close(CLOSE.invalidToken, 'invalid_token');
      return;
    }
    this.#d.tokens.claim(token).then(
      (claim) => {
        if (!claim.ok)
          return ws.close(
            claim.reason === 'token_already_used' ? CLOSE.tokenUsed : CLOSE.invalidToken,
            claim.reason,
          );
        const { grant } = claim;
        conn = {
          ws,
          token,
          grant,
          topic: topicOf(grant.projectId, grant.channelId),
          key: `${grant.projectId}\n${grant.channelId}`,
          joinRef: null,
          joined: false,
          delivered: false,
          released: false,
          lastSeen: performance.now(),
        };
        this.#conns.add(conn);
        if (closed) return this.#closed(conn);
        for (const t of early.splice(0)) this.#frame(conn, t);
      },
      (err: Error) => {
        this.#d.logger.warn({ msg: 'ws: token check failed', err: err.message });
        ws.close(1011, 'unavailable');
      },
    );
  }

  #frame(c: Conn, text: string): void {
    c.lastSeen = performance.now();
    const f = parseFrame(text);
    if (!f) {
      c.ws.close(CLOSE.badFrame, 'malformed frame');
      return;
    }
    const [joinRef, ref, topic, event] = f;
    if (topic === 'phoenix' && event === 'heartbeat') {
      c.ws.send(reply(null, ref, 'phoenix', 'ok'));
      return;
    }
    if (event === 'phx_join') {
      if (topic !== c.topic) {
        c.ws.send(reply(joinRef, ref, topic, 'error', { reason: 'unauthorized' }));
        // A refused join is retried forever by the client: close instead.
        c.ws.close(CLOSE.forbiddenChannel, 'forbidden_channel');
        return;
      }
      c.joinRef = joinRef;
      c.ws.send(reply(joinRef, ref, topic, 'ok'));
      if (!c.joined) {
        c.joined = true;
        let set = this.#byChannel.get(c.key);
        if (!set) {
          set = new Set();
          this.#byChannel.set(c.key, set);
        }
        set.add(c);
      }
      // Listening already: a result published from now on arrives through the bus; one that
      // finished before is read here. Both paths go through #deliver, which sends once.
      this.#d.channels.get(c.grant.projectId, c.grant.channelId).then(
        (rec) => {
          if (rec?.doc.result && TERMINAL_STATES.includes(rec.state)) this.#deliver(c, rec.doc.result);
        },
        (err: Error) => this.#d.logger.warn({ msg: 'ws: cannot read channel', err: err.message }),
      );
      return;
    }
    if (event === 'phx_leave' && topic === c.topic) {
      c.ws.send(reply(joinRef, ref, topic, 'ok'));
      this.#unjoin(c);
      c.ws.send(JSON.stringify([c.joinRef, c.joinRef, topic, 'phx_close', {}]));
      return;
    }
    c.ws.send(reply(joinRef, ref, topic, 'error', { reason: 'unmatched topic' }));
  }

  #deliver(c: Conn, result: ResultBody): void {
    if (c.delivered || !c.joined || c.ws.readyState !== WebSocket.OPEN) return;
    c.delivered = true;
    c.ws.send(push(c.joinRef, c.topic, 'response', result));
    this.#d.tokens.spend(c.token).catch(() => {});
  }

  #unjoin(c: Conn): void {
    c.joined = false;
    const set = this.#byChannel.get(c.key);
    set?.delete(c);
    if (set?.size === 0) this.#byChannel.delete(c.key);
  }

  #closed(c: Conn): void {
    if (!this.#conns.delete(c)) return;
    this.#unjoin(c);
    // Gone before its result: the token goes back, so the client's reconnect is let in.
    if (!c.delivered && !c.released) this.#d.tokens.release(c.token).catch(() => {});
  }

  get size(): number {
    return this.#conns.size;
  }

  /** SIGTERM: give back the tokens of undelivered sockets, then close every socket with 1012. */
  async drain(): Promise<void> {
    this.#draining = true;
    const open = [...this.#conns];
    await Promise.allSettled(
      open.map(async (c) => {
        if (!c.delivered) {
          c.released = true;
          await this.#d.tokens.release(c.token);
        }
      }),
    );
    for (const c of open) c.ws.close(CLOSE.draining, 'server draining');
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    for (const c of this.#conns) c.ws.terminate();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }
}
