import { createCipheriv, createDecipheriv, createHmac } from 'node:crypto';
import type { Sealed } from './snapshot.ts';

/**
 * AES-256-GCM sealing of provider credentials and webhook secrets in the snapshot.
 * The IV is derived from HMAC(key, context + plaintext) instead of random bytes, so sealing is a
 * pure function and the snapshot's content hash only changes when a secret really changes. The
 * context (e.g. "provider:ns/name") keeps equal secrets in different places from sealing alike.
 */

export class SealError extends Error {
  readonly code = 'SEAL_ERROR';
}

export function parseSealKey(material: string): Buffer {
  const key = /^[0-9a-f]{64}$/i.test(material)
    ? Buffer.from(material, 'hex')
    : Buffer.from(material, 'base64');
  if (key.length !== 32) throw new SealError('seal key must be 32 bytes, hex or base64 encoded');
  return key;
}

export function seal(key: Buffer, context: string, plaintext: string): Sealed {
  const iv = createHmac('sha256', key)
    .update(context)
    .update('\0')
    .update(plaintext)
    .digest()
    .subarray(0, 12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return {
    alg: 'A256GCM',
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
  };
}

export function unseal(key: Buffer, context: string, box: Sealed): string {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(box.iv, 'base64'));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(Buffer.from(box.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(box.data, 'base64')), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    throw new SealError(`cannot unseal ${context}: wrong seal key or tampered snapshot`);
  }
}
