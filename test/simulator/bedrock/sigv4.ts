/**
 * SigV4 verification of Bedrock requests, written from the AWS specification with node:crypto
 * (not with the library the gateway signs with): the canonical request is rebuilt from what arrived
 * on the wire (method, the path as sent, encoded once more, the query, the signed headers, the
 * payload hash), and the signature recomputed with the secret of the access key it names.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AuthState } from '../auth-state.ts';

const AUTH =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;

/** RFC 3986 unreserved characters stay; everything else is %XX (upper case). */
function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

export type SigV4Result =
  | { ok: true; accessKeyId: string }
  | { ok: false; status: number; type: string; message: string };

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

export function verifySigV4(
  req: IncomingMessage,
  raw: Buffer,
  auth: AuthState,
  service: string,
): SigV4Result {
  const fail = (status: number, type: string, message: string): SigV4Result => ({
    ok: false,
    status,
    type,
    message,
  });
  const authorization = header(req, 'authorization');
  if (!authorization) return fail(403, 'MissingAuthenticationTokenException', 'Missing Authentication Token');
  const m = AUTH.exec(authorization);
  if (!m)
    return fail(
      403,
      'IncompleteSignatureException',
      'Authorization header requires Credential, SignedHeaders and Signature.',
    );
  const [, accessKeyId, date, region, svc, signedList, signature] = m as unknown as string[];
  if (svc !== service)
    return fail(
      403,
      'InvalidSignatureException',
      `Credential should be scoped to correct service: '${service}'.`,
    );
  const key = auth.aws.get(accessKeyId!);
  if (!key)
    return fail(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
  if (key.sessionToken !== undefined && header(req, 'x-amz-security-token') !== key.sessionToken)
    return fail(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
  if (Date.now() >= key.expiresAt)
    return fail(403, 'ExpiredTokenException', 'The security token included in the request is expired');
  const amzDate = header(req, 'x-amz-date') ?? '';
  const when = Date.parse(
    amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'),
  );
  if (Number.isNaN(when) || !amzDate.startsWith(date!))
    return fail(
      403,
      'IncompleteSignatureException',
      'Date must be in ISO-8601 basic format and match the credential scope.',
    );
  if (Math.abs(Date.now() - when) > 15 * 60_000)
    return fail(403, 'InvalidSignatureException', 'Signature expired');
  const signed = signedList!.split(';');
  if (!signed.includes('host'))
    return fail(403, 'InvalidSignatureException', "'Host' must be a signed header.");
  const payloadHash = sha256Hex(raw);
  const declared = header(req, 'x-amz-content-sha256');
  if (declared !== undefined && declared !== payloadHash)
    return fail(
      400,
      'XAmzContentSHA256Mismatch',
      'The provided x-amz-content-sha256 header does not match what was computed.',
    );

  const target = req.url ?? '/';
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  const canonicalPath = `/${path
    .split('/')
    .filter((s) => s.length > 0)
    .map(uriEncode)
    .join('/')}${path.length > 1 && path.endsWith('/') ? '/' : ''}`;
  const query = q === -1 ? '' : target.slice(q + 1);
  const canonicalQuery = [...new URLSearchParams(query)]
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const canonicalHeaders = signed
    .map((name) => `${name}:${(header(req, name) ?? '').trim().replace(/\s+/g, ' ')}\n`)
    .join('');
  const canonicalRequest = [
    req.method ?? 'POST',
    canonicalPath,
    canonicalQuery,
    canonicalHeaders,
    signedList,
    payloadHash,
  ].join('\n');
  const scope = `${date}/${region}/${svc}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const kDate = hmac(`AWS4${key.secretAccessKey}`, date!);
  const kSigning = hmac(hmac(hmac(kDate, region!), svc!), 'aws4_request');
  const expected = createHmac('sha256', kSigning).update(toSign).digest();
  const given = Buffer.from(signature!, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return fail(
      403,
      'InvalidSignatureException',
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    );
  return { ok: true, accessKeyId: accessKeyId! };
}
