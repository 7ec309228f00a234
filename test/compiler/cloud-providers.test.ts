/** Compiling bedrock, vertex-ai and cohere Providers: auth methods, sealed secrets, endpoints, defaults. */
import { describe, expect, it } from 'vitest';
import { unseal } from '#contract';
import { baseFixture, compile, NS, SEAL_KEY } from './fixtures.ts';

const provider = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'switchyard.dev/v1alpha1' as const,
  kind: 'Provider' as const,
  metadata: { name, namespace: NS },
  spec: { models: [{ name: 'm', streaming: false }], ...spec },
});

function compiled(spec: Record<string, unknown>, secrets: Record<string, Record<string, string>> = {}) {
  const f = baseFixture();
  for (const [name, data] of Object.entries(secrets)) f.secrets.push({ namespace: NS, name, data });
  f.objects.push(provider('p', spec) as never);
  const out = compile(f);
  return {
    provider: out.snapshot.projects['acme.shop']?.providers['p'],
    verdict: out.verdicts.find((v) => v.ref.kind === 'Provider' && v.ref.name === 'p'),
  };
}

describe('cloud providers in the snapshot', () => {
  it('bedrock with an access key pair: the pair (and session token) sealed as JSON, the regional base URL', () => {
    const { provider: p } = compiled(
      { type: 'bedrock', region: 'eu-west-3', credentials: { awsAccessKeys: { name: 'aws' } } },
      { aws: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret', sessionToken: 'tok' } },
    );
    expect(p).toMatchObject({
      type: 'bedrock',
      region: 'eu-west-3',
      baseURL: 'https://bedrock-runtime.eu-west-3.amazonaws.com',
      auth: { method: 'aws-access-keys' },
      models: { m: { requestTypes: ['chat'], streaming: false } },
    });
    expect(JSON.parse(unseal(SEAL_KEY, `provider:${NS}/p`, p!.credential!))).toEqual({
      accessKeyId: 'AKIAEXAMPLE',
      secretAccessKey: 'secret',
      sessionToken: 'tok',
    });
  });

  it('bedrock web identity: no secret, the regional STS endpoint unless overridden', () => {
    const { provider: p } = compiled({
      type: 'bedrock',
      region: 'us-west-2',
      credentials: { webIdentity: {} },
    });
    expect(p?.credential).toBeNull();
    expect(p?.auth).toEqual({
      method: 'aws-web-identity',
      sessionName: 'switchyard',
      stsEndpoint: 'https://sts.us-west-2.amazonaws.com',
    });
    const { provider: q } = compiled({
      type: 'bedrock',
      region: 'us-west-2',
      credentials: { webIdentity: { roleArn: 'arn:aws:iam::123456789012:role/r', tokenFile: '/t' } },
      endpoints: { sts: 'http://sts.internal:4566' },
    });
    expect(q?.auth).toMatchObject({
      roleArn: 'arn:aws:iam::123456789012:role/r',
      tokenFile: '/t',
      stsEndpoint: 'http://sts.internal:4566',
    });
  });

  it('a missing access key Secret keeps the provider out with SecretMissing', () => {
    const { provider: p, verdict } = compiled({
      type: 'bedrock',
      region: 'us-east-1',
      credentials: { awsAccessKeys: { name: 'nope' } },
    });
    expect(p).toBeUndefined();
    expect(verdict).toMatchObject({ ok: false, reason: 'SecretMissing' });
  });

  it('vertex-ai with a service-account key: sealed, checked for its shape, the location base URL (global too)', () => {
    const key = JSON.stringify({
      type: 'service_account',
      client_email: 'a@b',
      private_key: '-----BEGIN PRIVATE KEY-----',
    });
    const { provider: p } = compiled(
      {
        type: 'vertex-ai',
        region: 'europe-west4',
        project: 'proj-1',
        credentials: { secretRef: { name: 'sa', key: 'key.json' } },
      },
      { sa: { 'key.json': key } },
    );
    expect(p).toMatchObject({
      baseURL: 'https://europe-west4-aiplatform.googleapis.com',
      project: 'proj-1',
      auth: { method: 'gcp-service-account' },
    });
    expect(unseal(SEAL_KEY, `provider:${NS}/p`, p!.credential!)).toBe(key);
    const bad = compiled(
      { type: 'vertex-ai', region: 'global', project: 'proj-1', credentials: { secretRef: { name: 'sa' } } },
      { sa: { apiKey: 'AIza-not-a-service-account' } },
    );
    expect(bad.provider).toBeUndefined();
    expect(bad.verdict).toMatchObject({ ok: false, reason: 'SecretInvalid' });
    expect(bad.verdict?.message).toContain('is not a JSON service-account key');
  });

  it('vertex-ai workload identity at location global', () => {
    const { provider: p } = compiled({
      type: 'vertex-ai',
      region: 'global',
      project: 'proj-1',
      credentials: { workloadIdentity: {} },
    });
    expect(p).toMatchObject({
      baseURL: 'https://aiplatform.googleapis.com',
      credential: null,
      auth: {
        method: 'gcp-workload-identity',
        metadataEndpoint: 'http://metadata.google.internal',
        serviceAccount: 'default',
      },
    });
  });

  it('cohere: an API key and the public base URL', () => {
    const { provider: p } = compiled(
      { type: 'cohere', credentials: { secretRef: { name: 'co' } } },
      { co: { apiKey: 'co-key' } },
    );
    expect(p).toMatchObject({ baseURL: 'https://api.cohere.com', auth: { method: 'api-key' } });
  });
});
