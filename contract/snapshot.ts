import { z } from 'zod';
import { snapshotGuardrail } from './guardrails.ts';
import { snapshotMcpServer } from './mcp.ts';
import {
  API_KEY_SCOPES,
  PROVIDER_TYPES,
  REQUEST_TYPES,
  SPEND_CAP_SCOPES,
  SPEND_PERIODS,
  WEBHOOK_EVENT_TYPES,
} from './vocabulary.ts';

/**
 * The snapshot is the only contract between the operator (or embedded mode) and the gateway pods.
 * It holds no Kubernetes types: names are plain strings, credentials are sealed, API keys are
 * SHA-256 hashes. Gateways validate it with this schema before swapping it in.
 */

export const SNAPSHOT_SCHEMA_VERSION = 1;

export const sealed = z.object({
  alg: z.literal('A256GCM'),
  iv: z.string(),
  tag: z.string(),
  data: z.string(),
});
export type Sealed = z.infer<typeof sealed>;

const decimal = z.string().regex(/^\d+(\.\d+)?$/);

export const modelPricing = z.object({
  inputUsdPerMTok: decimal.optional(),
  outputUsdPerMTok: decimal.optional(),
  /** Input tokens read from the provider's prompt cache; unset: inputUsdPerMTok. */
  cachedInputUsdPerMTok: decimal.optional(),
  /** Input tokens written to the provider's prompt cache; unset: inputUsdPerMTok. */
  cacheWriteUsdPerMTok: decimal.optional(),
  /** Input tokens written to the prompt cache for one hour (Claude); unset: cacheWriteUsdPerMTok. */
  cacheWrite1hUsdPerMTok: decimal.optional(),
  usdPerImage: decimal.optional(),
  usdPerAudioSecond: decimal.optional(),
});
export type ModelPricing = z.infer<typeof modelPricing>;

/**
 * How a provider is authenticated, with the non-secret parts of it; the secret parts are in the
 * provider's sealed `credential` (the API key, the access key pair as JSON, the service-account key
 * JSON). Endpoints are written out by the compiler (cloud defaults or the Provider's overrides).
 */
export const providerAuth = z.discriminatedUnion('method', [
  z.object({ method: z.literal('api-key') }),
  z.object({ method: z.literal('aws-access-keys') }),
  z.object({
    method: z.literal('aws-web-identity'),
    /** Unset: the pod's AWS_ROLE_ARN (set by EKS for IRSA). */
    roleArn: z.string().optional(),
    /** Unset: the pod's AWS_WEB_IDENTITY_TOKEN_FILE, else the EKS default path. */
    tokenFile: z.string().optional(),
    sessionName: z.string(),
    stsEndpoint: z.string(),
  }),
  z.object({
    method: z.literal('gcp-service-account'),
    /** Unset: the key's own token_uri. */
    tokenEndpoint: z.string().optional(),
  }),
  z.object({
    method: z.literal('gcp-workload-identity'),
    metadataEndpoint: z.string(),
    serviceAccount: z.string(),
  }),
]);
export type ProviderAuth = z.infer<typeof providerAuth>;

export const snapshotProvider = z.object({
  name: z.string(),
  type: z.enum(PROVIDER_TYPES),
  baseURL: z.string(),
  apiVersion: z.string().optional(),
  /** bedrock: the AWS region; vertex-ai: the Google Cloud location. */
  region: z.string().optional(),
  /** vertex-ai: the Google Cloud project id. */
  project: z.string().optional(),
  /** Absent in snapshots of operators that only knew API keys. */
  auth: providerAuth.default({ method: 'api-key' }),
  credential: sealed.nullable(),
  streaming: z.boolean(),
  timeouts: z.object({
    connectMs: z.number().int(),
    firstByteMs: z.number().int(),
    totalMs: z.number().int(),
  }),
  models: z.record(
    z.string(),
    z.object({
      requestTypes: z.array(z.enum(REQUEST_TYPES)),
      pricing: modelPricing.optional(),
      /** The most tokens one answer may have: what a spend reservation assumes without max_tokens. */
      maxOutputTokens: z.number().int().positive().optional(),
      /** false: the model cannot stream, so streamed requests get its whole answer as one chunk. */
      streaming: z.boolean().optional(),
    }),
  ),
});
export type SnapshotProvider = z.infer<typeof snapshotProvider>;

export const slotTarget = z.object({ provider: z.string(), model: z.string() });

/** Session memory bounds and defaults, shared by the Workflow CRD and the compiler. */
export const SESSION_MEMORY = {
  defaultSummarizeAtTokens: 2000,
  /** A day idle: a conversation picked up the next morning still has its memory. */
  defaultTtlSeconds: 86_400,
  minTtlSeconds: 60,
  maxTtlSeconds: 2_592_000,
} as const;

/** What the Responses surface does with a hosted tool (web_search, mcp, ...) the workflow cannot run. */
export const HOSTED_TOOL_ACTIONS = ['refuse', 'omit'] as const;
export const hostedToolPolicy = z.object({
  default: z.enum(HOSTED_TOOL_ACTIONS),
  tools: z.record(z.string(), z.enum(HOSTED_TOOL_ACTIONS)).optional(),
});

export const snapshotWorkflow = z.object({
  name: z.string(),
  /** `<namespace>/<metadata.name>` of the source object, for logs and status. */
  source: z.string(),
  description: z.string().optional(),
  requestType: z.enum(REQUEST_TYPES),
  primary: slotTarget,
  backups: z.array(slotTarget),
  systemInstructions: z.string().optional(),
  structuredOutputSchema: z.record(z.string(), z.unknown()).optional(),
  cacheFields: z.array(z.string()),
  sessionMemory: z.object({
    enabled: z.boolean(),
    summarizeAtTokens: z.number().int(),
    /** Idle seconds after which a session expires; the default covers snapshots of older operators. */
    ttlSeconds: z.number().int().default(SESSION_MEMORY.defaultTtlSeconds),
  }),
  eventName: z.string().optional(),
  responseCacheTtlSeconds: z.number().int().optional(),
  /** Absent: every hosted tool is refused. */
  hostedTools: hostedToolPolicy.optional(),
  testMode: z.boolean(),
  /** Unix seconds; the compatible model object's `created`. */
  createdAt: z.number().int(),
});
export type SnapshotWorkflow = z.infer<typeof snapshotWorkflow>;

export const rateLimitConfig = z.object({
  requestsPerMinute: z.number().int().optional(),
  tokensPerMinute: z.number().int().optional(),
});

export const spendCapConfig = z.object({
  id: z.string(),
  scope: z.enum(SPEND_CAP_SCOPES),
  workflow: z.string().optional(),
  slot: z.string().optional(),
  period: z.enum(SPEND_PERIODS),
  limitUsd: decimal,
});
export type SpendCapConfig = z.infer<typeof spendCapConfig>;

/**
 * Request-log settings of a project. Bounds and defaults are shared with the Project CRD. The
 * schema default covers snapshots published by an operator that predates the field, so a rolling
 * upgrade never leaves a gateway without a valid snapshot.
 */
export const REQUEST_LOGS = {
  defaultBodies: false,
  defaultMaxEntries: 100_000,
  minMaxEntries: 1_000,
  maxMaxEntries: 10_000_000,
} as const;

export const requestLogsConfig = z.object({
  /** Store request and response bodies in request-log entries. */
  bodies: z.boolean(),
  /** Most entries the project's request-log stream keeps; older entries are trimmed. */
  maxEntries: z.number().int().min(REQUEST_LOGS.minMaxEntries).max(REQUEST_LOGS.maxMaxEntries),
});
export type RequestLogsConfig = z.infer<typeof requestLogsConfig>;

/** Stored responses (POST /v1/responses with store): how long they are kept, in days. */
export const STORED_RESPONSES = {
  defaultRetentionDays: 30,
  minRetentionDays: 1,
  maxRetentionDays: 400,
} as const;

export const storedResponsesConfig = z.object({
  retentionDays: z
    .number()
    .int()
    .min(STORED_RESPONSES.minRetentionDays)
    .max(STORED_RESPONSES.maxRetentionDays),
});
export type StoredResponsesConfig = z.infer<typeof storedResponsesConfig>;

export const snapshotProject = z.object({
  id: z.string(),
  displayName: z.string(),
  compatibleApiEnabled: z.boolean(),
  rateLimit: rateLimitConfig.optional(),
  allowPrivateNetworks: z.boolean(),
  webhooks: z.array(
    z.object({ url: z.string(), secret: sealed, events: z.array(z.enum(WEBHOOK_EVENT_TYPES)) }),
  ),
  providers: z.record(z.string(), snapshotProvider),
  workflows: z.record(z.string(), snapshotWorkflow),
  spendCaps: z.array(spendCapConfig),
  requestLogs: requestLogsConfig.default({
    bodies: REQUEST_LOGS.defaultBodies,
    maxEntries: REQUEST_LOGS.defaultMaxEntries,
  }),
  storedResponses: storedResponsesConfig.default({ retentionDays: STORED_RESPONSES.defaultRetentionDays }),
  /** Keyed by the MCPServer's name; the project's servers aggregated at `/v1/mcp`. */
  mcpServers: z.record(z.string(), snapshotMcpServer).default({}),
  /** Keyed by the Guardrail's name. */
  guardrails: z.record(z.string(), snapshotGuardrail).default({}),
});
export type SnapshotProject = z.infer<typeof snapshotProject>;

export const snapshotApiKey = z.object({
  projectId: z.string(),
  /** `<namespace>/<name>` of the ApiKey; never the key itself. */
  keyId: z.string(),
  scopes: z.array(z.enum(API_KEY_SCOPES)),
  /** RFC 3339; the key is refused from this instant on (expiry or end of a rotation grace period). */
  notAfter: z.string().optional(),
  rateLimit: rateLimitConfig.optional(),
  /** Glob patterns (`*` only) over prefixed MCP tool names this key may list and call; absent = none. */
  toolGrants: z.array(z.string()).optional(),
});
export type SnapshotApiKey = z.infer<typeof snapshotApiKey>;

export const snapshotBody = z.object({
  schemaVersion: z.literal(SNAPSHOT_SCHEMA_VERSION),
  projects: z.record(z.string(), snapshotProject),
  /** Keyed by lowercase hex SHA-256 of the API key. */
  apiKeys: z.record(z.string(), snapshotApiKey),
});
export type SnapshotBody = z.infer<typeof snapshotBody>;

export const snapshot = snapshotBody.extend({
  /** Content hash of the body: equal bodies give equal versions, so unchanged config is not republished. */
  version: z.string().regex(/^[0-9a-f]{16,64}$/),
  generatedAt: z.string(),
});
export type Snapshot = z.infer<typeof snapshot>;
