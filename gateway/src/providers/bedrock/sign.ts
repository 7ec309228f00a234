/**
 * SigV4 signing of Bedrock requests with @smithy/signature-v4 (the AWS SDK's own signer), loaded on
 * first use so a gateway without a Bedrock provider never loads it. SHA-256 comes from node:crypto.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { UpstreamError } from '../../upstream/errors.ts';
import type { AwsCredentials, UpstreamTarget } from '../types.ts';

type SignerModule = typeof import('@smithy/signature-v4');
type Signer = InstanceType<SignerModule['SignatureV4']>;
type SourceData = string | ArrayBuffer | ArrayBufferView;

const bytes = (data: SourceData): Buffer =>
  typeof data === 'string'
    ? Buffer.from(data, 'utf8')
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

/** The hash constructor the signer asks for: SHA-256, or HMAC-SHA256 when given a key. */
class NodeSha256 {
  #secret: Buffer | undefined;
  #hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.#secret = secret === undefined ? undefined : bytes(secret);
    this.#hash = this.#fresh();
  }
  #fresh(): Hash | Hmac {
    return this.#secret ? createHmac('sha256', this.#secret) : createHash('sha256');
  }
  update(data: SourceData): void {
    this.#hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.#hash.digest()));
  }
  reset(): void {
    this.#hash = this.#fresh();
  }
}

let loading: Promise<SignerModule> | undefined;

export function loadSigner(): Promise<SignerModule> {
  loading ??= import('@smithy/signature-v4').catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

/** One signer per credential set (it caches its derived signing keys). */
const signers = new WeakMap<AwsCredentials, Map<string, Signer>>();

async function signerFor(creds: AwsCredentials, region: string): Promise<Signer> {
  let byRegion = signers.get(creds);
  if (!byRegion) {
    byRegion = new Map();
    signers.set(creds, byRegion);
  }
  let signer = byRegion.get(region);
  if (!signer) {
    const { SignatureV4 } = await loadSigner();
    signer = new SignatureV4({
      service: 'bedrock',
      region,
      credentials: {
        accessKeyId: creds.accessKeyId,
        secretAccessKey: creds.secretAccessKey,
        ...(creds.sessionToken ? { sessionToken: creds.sessionToken } : {}),
      },
      sha256: NodeSha256,
    });
    byRegion.set(region, signer);
  }
  return signer;
}

function aborted(): UpstreamError {
  return new UpstreamError('client aborted the request', {
    code: 'UPSTREAM_ABORTED',
    providerMessage: 'client aborted the request',
  });
}

/** The request's headers with the SigV4 ones added (authorization, x-amz-date, x-amz-security-token, ...). */
export async function signedHeaders(
  target: UpstreamTarget,
  url: string,
  body: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<Record<string, string>> {
  const auth = target.auth;
  if (auth?.kind !== 'aws')
    throw new UpstreamError('bedrock provider has no AWS credentials', {
      code: 'UPSTREAM_STATUS',
      status: 401,
      providerMessage: 'bedrock provider has no AWS credentials',
    });
  let creds: AwsCredentials;
  try {
    creds = await auth.credentials(signal);
  } catch (err) {
    if (signal.aborted) throw aborted();
    throw err;
  }
  const u = new URL(url);
  const signer = await signerFor(creds, target.options?.region ?? 'us-east-1');
  const signed = await signer.sign({
    method: 'POST',
    protocol: u.protocol,
    hostname: u.hostname,
    ...(u.port ? { port: Number(u.port) } : {}),
    path: u.pathname,
    query: Object.fromEntries(u.searchParams),
    headers: { ...headers, host: u.host },
    body,
  });
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) if (name !== 'host') out[name] = value;
  return out;
}
