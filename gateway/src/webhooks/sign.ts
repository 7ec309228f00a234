import { createHmac } from 'node:crypto';

/**
 * The key bytes of a secret. Standard Webhooks secrets are `whsec_<base64>` and sign with the
 * decoded bytes; any other secret signs with its UTF-8 bytes (what receivers of the plain
 * `service-signature` scheme expect).
 */
export function secretBytes(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8');
}

/**
 * Headers of one delivery, signed with every current secret (two while a secret rotates):
 * `service-signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>` and the Standard
 * Webhooks `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC(secret, "<id>.<t>.<body>")>`.
 */
export function signatureHeaders(
  secrets: readonly string[],
  id: string,
  unixSeconds: number,
  body: string,
): Record<string, string> {
  const t = String(unixSeconds);
  const service: string[] = [`t=${t}`];
  const standard: string[] = [];
  for (const s of secrets) {
    const key = secretBytes(s);
    service.push(`v1=${createHmac('sha256', key).update(`${t}.${body}`).digest('hex')}`);
    standard.push(`v1,${createHmac('sha256', key).update(`${id}.${t}.${body}`).digest('base64')}`);
  }
  return {
    'content-type': 'application/json',
    'service-signature': service.join(','),
    'webhook-id': id,
    'webhook-timestamp': t,
    'webhook-signature': standard.join(' '),
  };
}
