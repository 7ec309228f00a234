import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';

export interface Delivery {
  id: string;
  event: string;
  body: string;
  json: Record<string, unknown>;
  headers: IncomingHttpHeaders;
  /** Verified by the standardwebhooks library and by recomputing service-signature. */
  verified: boolean;
  /** The status the receiver answered with. */
  answered: number;
}

/** Checks `service-signature: t=<unix>,v1=<hex>` the way a receiver without the library would. */
export function verifyServiceSignature(
  secret: string,
  header: string,
  body: string,
  nowSec: number,
  toleranceSec = 300,
): boolean {
  const parts = header.split(',');
  const t = parts.find((p) => p.startsWith('t='))?.slice(2);
  if (!t || Math.abs(nowSec - Number(t)) > toleranceSec) return false;
  const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret);
  const want = createHmac('sha256', key).update(`${t}.${body}`).digest();
  return parts
    .filter((p) => p.startsWith('v1='))
    .some((p) => {
      const got = Buffer.from(p.slice(3), 'hex');
      return got.length === want.length && timingSafeEqual(got, want);
    });
}

export type Responder = (d: Delivery, n: number) => { status: number; headers?: Record<string, string> };

/** A webhook receiver that verifies every delivery with `standardwebhooks` and service-signature. */
export async function startReceiver(
  secret: string,
  respond: Responder = () => ({ status: 200 }),
  host = '127.0.0.1',
) {
  const deliveries: Delivery[] = [];
  const wh = new Webhook(secret);
  let responder = respond;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const h = req.headers;
      let verified = false;
      try {
        wh.verify(body, {
          'webhook-id': String(h['webhook-id']),
          'webhook-timestamp': String(h['webhook-timestamp']),
          'webhook-signature': String(h['webhook-signature']),
        });
        verified = verifyServiceSignature(
          secret,
          String(h['service-signature']),
          body,
          Math.floor(Date.now() / 1000),
        );
      } catch {
        verified = false;
      }
      const json = JSON.parse(body) as Record<string, unknown>;
      const d: Delivery = {
        id: String(h['webhook-id']),
        event: String(json.type),
        body,
        json,
        headers: h,
        verified,
        answered: 0,
      };
      deliveries.push(d);
      const r = responder(d, deliveries.length);
      d.answered = r.status;
      res.writeHead(r.status, r.headers ?? {}).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, host, () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://${host}:${port}/hooks`,
    deliveries,
    of: (event: string) => deliveries.filter((d) => d.event === event),
    respond(r: Responder) {
      responder = r;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
