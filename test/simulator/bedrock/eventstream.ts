/**
 * AWS event-stream frames, written independently of the gateway's decoder (node:zlib's CRC32, no
 * AWS library) so a framing bug cannot hide on both sides:
 *   [total length u32][headers length u32][prelude CRC32][headers][payload][message CRC32]
 * Headers here are strings only (type 7): [name length u8][name][7][value length u16][value].
 */
import { crc32 } from 'node:zlib';

export function encodeFrame(
  headers: Record<string, string>,
  payload: Buffer | string,
  corruptCrc = false,
): Buffer {
  const head: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const n = Buffer.from(name, 'utf8');
    const v = Buffer.from(value, 'utf8');
    const h = Buffer.alloc(1 + n.length + 1 + 2 + v.length);
    h.writeUInt8(n.length, 0);
    n.copy(h, 1);
    h.writeUInt8(7, 1 + n.length);
    h.writeUInt16BE(v.length, 2 + n.length);
    v.copy(h, 4 + n.length);
    head.push(h);
  }
  const headerBytes = Buffer.concat(head);
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'utf8');
  const total = 12 + headerBytes.length + body.length + 4;
  const out = Buffer.alloc(total);
  out.writeUInt32BE(total, 0);
  out.writeUInt32BE(headerBytes.length, 4);
  out.writeUInt32BE(crc32(out.subarray(0, 8)), 8);
  headerBytes.copy(out, 12);
  body.copy(out, 12 + headerBytes.length);
  const crc = crc32(out.subarray(0, total - 4));
  out.writeUInt32BE(corruptCrc ? (crc ^ 0xdeadbeef) >>> 0 : crc, total - 4);
  return out;
}

export const eventFrame = (eventType: string, payload: string, corruptCrc = false): Buffer =>
  encodeFrame(
    { ':event-type': eventType, ':content-type': 'application/json', ':message-type': 'event' },
    payload,
    corruptCrc,
  );

export const exceptionFrame = (exceptionType: string, payload: string): Buffer =>
  encodeFrame(
    { ':exception-type': exceptionType, ':content-type': 'application/json', ':message-type': 'exception' },
    payload,
  );
