import { createServer, connect as netConnect, type Server } from 'node:net';
import { Socket } from 'phoenix';
import { WebSocket } from 'ws';

/** The official phoenix client on the `ws` transport, recording what it sees. */
export function phoenixClient(socketUrl: string, token: string) {
  const socket = new Socket(socketUrl, {
    transport: WebSocket,
    params: { token },
    reconnectAfterMs: () => 50,
    rejoinAfterMs: () => 50,
    heartbeatIntervalMs: 30_000,
  });
  const closes: { code: number; reason: string }[] = [];
  let opens = 0;
  socket.onOpen(() => {
    opens++;
  });
  socket.onClose((e: CloseEvent) => {
    closes.push({ code: e.code, reason: e.reason });
  });
  socket.connect();
  return {
    socket,
    closes,
    opens: () => opens,
    join(topic: string) {
      const channel = socket.channel(topic, {});
      const responses: unknown[] = [];
      const joinReplies: string[] = [];
      channel.on('response', (p: unknown) => {
        responses.push(p);
      });
      channel
        .join()
        .receive('ok', () => joinReplies.push('ok'))
        .receive('error', (e: { reason?: string }) => joinReplies.push(`error:${e.reason}`));
      return { channel, responses, joinReplies };
    },
    disconnect() {
      socket.disconnect();
    },
  };
}

/** A Service in front of pods: each new connection goes to the first backend that accepts it. */
export async function startProxy(
  backends: () => number[],
): Promise<{ port: number; server: Server; close(): Promise<void> }> {
  const server = createServer((client) => {
    const ports = backends();
    let i = 0;
    const attempt = () => {
      const port = ports[i];
      if (port === undefined) return client.destroy();
      const up = netConnect(port, '127.0.0.1');
      up.once('connect', () => {
        client.pipe(up);
        up.pipe(client);
        up.on('close', () => client.destroy());
        client.on('close', () => up.destroy());
      });
      up.on('error', () => {
        if (up.connecting || !up.readyState || up.readyState === 'closed') {
          i++;
          attempt();
        } else client.destroy();
      });
    };
    client.on('error', () => {});
    attempt();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return { port, server, close: () => new Promise((r) => server.close(() => r())) };
}
