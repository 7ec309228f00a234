import { generateKeyPairSync } from 'node:crypto';
/**
 * Builders for test configs: one namespace, one project, providers pointing at the provider
 * simulator, and a key. Tests add the workflows they need.
 */
export const NS = 'team';
export const PROJECT = 'app';
export const PROJECT_ID = `${NS}.${PROJECT}`;
export const API_KEY = 'sy_live_TestKeyForTheGatewaySuite0123456789';
export const OTHER_KEY = 'sy_live_OtherProjectKey0123456789abcdefgh';
export const NO_AI_SCOPE_KEY = 'sy_live_ConsoleOnlyKey0123456789abcdefghij';

const meta = (name: string, namespace = NS) => ({ name, namespace });
const v1 = 'switchyard.dev/v1alpha1';

export function secret(name: string, data: Record<string, string>, namespace = NS) {
  return { apiVersion: 'v1', kind: 'Secret', metadata: meta(name, namespace), stringData: data };
}

export function project(name = PROJECT, spec: Record<string, unknown> = {}, namespace = NS) {
  return { apiVersion: v1, kind: 'Project', metadata: meta(name, namespace), spec };
}

export function apiKey(
  name: string,
  key: string,
  opts: { project?: string; scopes?: string[]; namespace?: string; toolGrants?: string[] } = {},
) {
  const namespace = opts.namespace ?? NS;
  return [
    secret(`${name}-key`, { apiKey: key }, namespace),
    {
      apiVersion: v1,
      kind: 'ApiKey',
      metadata: meta(name, namespace),
      spec: {
        projectRef: { name: opts.project ?? PROJECT },
        scopes: opts.scopes ?? ['ai'],
        secretRef: { name: `${name}-key`, key: 'apiKey' },
        ...(opts.toolGrants ? { toolGrants: opts.toolGrants } : {}),
      },
    },
  ];
}

export interface McpServerOptions {
  project?: string;
  namespace?: string;
  /** A bearer token the gateway sends upstream (put in a Secret `<name>-mcp`, key `token`). */
  bearer?: string;
  /** A static header instead: `{ name: 'X-Api-Key', value: '...' }` (Secret `<name>-mcp`, key `value`). */
  header?: { name: string; value: string };
  /** Everything else of the spec (toolPrefix, allowTools, denyTools, tools, timeoutMs, callsPerMinute). */
  spec?: Record<string, unknown>;
}

/** An MCPServer at `url` (its credential Secret first, when it has one). */
export function mcpServer(name: string, url: string, opts: McpServerOptions = {}) {
  const namespace = opts.namespace ?? NS;
  const secretName = `${name}-mcp`;
  const credentials = opts.bearer
    ? { bearer: { secretRef: { name: secretName, key: 'token' } } }
    : opts.header
      ? { header: { headerName: opts.header.name, secretRef: { name: secretName, key: 'value' } } }
      : undefined;
  const data: Record<string, string> | undefined = opts.bearer
    ? { token: opts.bearer }
    : opts.header
      ? { value: opts.header.value }
      : undefined;
  return [
    ...(data ? [secret(secretName, data, namespace)] : []),
    {
      apiVersion: v1,
      kind: 'MCPServer',
      metadata: meta(name, namespace),
      spec: {
        projectRef: { name: opts.project ?? PROJECT },
        url,
        ...(credentials ? { credentials } : {}),
        ...opts.spec,
      },
    },
  ];
}

const ALL_TYPES = ['chat', 'completion', 'vision', 'embedding', 'image', 'audio'];

/** A provider of the given wire type at the simulator; every model name serves every request type. */
export function provider(
  name: string,
  type: string,
  simUrl: string,
  models: string[],
  extra: Record<string, unknown> = {},
) {
  const baseURL = type === 'openai' || type === 'openai-compatible' ? `${simUrl}/v1` : simUrl;
  return [
    secret(`${name}-cred`, { apiKey: 'sk-sim-test' }),
    {
      apiVersion: v1,
      kind: 'Provider',
      metadata: meta(name),
      spec: {
        type,
        baseURL,
        ...(type === 'azure-openai' ? { apiVersion: '2024-10-21' } : {}),
        credentials: { secretRef: { name: `${name}-cred`, key: 'apiKey' } },
        timeouts: { connectMs: 1000, firstByteMs: 2000, totalMs: 5000 },
        models: models.map((m) => ({
          name: m,
          requestTypes: ALL_TYPES,
          pricing: { inputUsdPerMTok: '1', outputUsdPerMTok: '2' },
        })),
        ...extra,
      },
    },
  ];
}

export function workflow(name: string, spec: Record<string, unknown>) {
  return {
    apiVersion: v1,
    kind: 'Workflow',
    metadata: meta(name),
    spec: { projectRef: { name: PROJECT }, ...spec },
  };
}

/** The usual base: project, key, a console-only key, a second project with its own key, and four providers. */
export function baseConfig(
  simUrl: string,
  models = ['gpt-4o-mini', 'fail-503', 'fail-400', 'fail-429', 'hang', 'cut-2', 'malformed', 'slow-300'],
) {
  return [
    project(),
    ...apiKey('main', API_KEY),
    ...apiKey('console-only', NO_AI_SCOPE_KEY, { scopes: ['console'] }),
    project('other'),
    ...apiKey('other', OTHER_KEY, { project: 'other' }),
    ...provider('oai', 'openai', simUrl, models),
    ...provider('claude', 'anthropic', simUrl, ['claude-haiku-4-5', ...models]),
    ...provider('gem', 'gemini', simUrl, ['gemini-2.5-flash', ...models]),
    ...provider('azure', 'azure-openai', simUrl, ['gpt4o-deploy', ...models]),
  ];
}

/** The AWS key pair a Bedrock provider signs with; start the simulator with `{ aws: SIM_AWS_KEYS }`. */
export const SIM_AWS_KEYS = {
  accessKeyId: 'AKIASIMULATOR000001',
  secretAccessKey: 'sim/secret+key/for/tests/0123456789abcdef',
};

/** A Bedrock provider at the simulator, signing with SIM_AWS_KEYS from a Secret. */
export function bedrockProvider(
  name: string,
  simUrl: string,
  models: string[],
  extra: Record<string, unknown> = {},
) {
  return [
    secret(`${name}-aws`, {
      accessKeyId: SIM_AWS_KEYS.accessKeyId,
      secretAccessKey: SIM_AWS_KEYS.secretAccessKey,
    }),
    {
      apiVersion: v1,
      kind: 'Provider',
      metadata: meta(name),
      spec: {
        type: 'bedrock',
        region: 'us-east-1',
        baseURL: simUrl,
        credentials: { awsAccessKeys: { name: `${name}-aws` } },
        timeouts: { connectMs: 1000, firstByteMs: 2000, totalMs: 5000 },
        models: models.map((m) => ({
          name: m,
          requestTypes: ALL_TYPES,
          pricing: { inputUsdPerMTok: '1', outputUsdPerMTok: '2' },
        })),
        ...extra,
      },
    },
  ];
}

/**
 * A Google service account for Vertex AI tests: start the simulator with `{ google: account.sim }`,
 * then give vertexProvider `account.key(sim.url)` (its token_uri is the simulator's token endpoint).
 */
export function simGoogleAccount() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const clientEmail = 'gateway@sim-project.iam.gserviceaccount.com';
  return {
    sim: { clientEmail, publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString() },
    key: (simUrl: string) =>
      JSON.stringify({
        type: 'service_account',
        project_id: 'sim-project',
        client_email: clientEmail,
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        token_uri: `${simUrl}/token`,
      }),
  };
}

/** A Vertex AI provider at the simulator, authenticated with a service-account key from a Secret. */
export function vertexProvider(
  name: string,
  simUrl: string,
  models: string[],
  serviceAccountKey: string,
  extra: Record<string, unknown> = {},
) {
  return [
    secret(`${name}-sa`, { serviceAccountKey }),
    {
      apiVersion: v1,
      kind: 'Provider',
      metadata: meta(name),
      spec: {
        type: 'vertex-ai',
        region: 'us-central1',
        project: 'sim-project',
        baseURL: simUrl,
        credentials: { secretRef: { name: `${name}-sa`, key: 'serviceAccountKey' } },
        timeouts: { connectMs: 1000, firstByteMs: 2000, totalMs: 5000 },
        models: models.map((m) => ({
          name: m,
          requestTypes: ALL_TYPES,
          pricing: { inputUsdPerMTok: '1', outputUsdPerMTok: '2' },
        })),
        ...extra,
      },
    },
  ];
}

/** A Guardrail of the test project; `spec` holds at least `rules` (scope defaults to project). */
export function guardrail(name: string, spec: Record<string, unknown>, namespace = NS) {
  return {
    apiVersion: v1,
    kind: 'Guardrail',
    metadata: meta(name, namespace),
    spec: { projectRef: { name: PROJECT }, ...spec },
  };
}
