/**
 * The words operator, gateway and CRD generator must agree on, defined once. The CRD enums, the CEL
 * rules (see operator/src/resources), the snapshot schema and the gateway's checks are all built
 * from these lists, so adding a value here is the whole change, and forgetting a consumer is a type
 * error rather than a silent mismatch.
 */

/** Kinds of AI request a workflow serves and a provider model is listed for. */
export const REQUEST_TYPES = ['chat', 'completion', 'image', 'embedding', 'audio', 'vision'] as const;
export type RequestType = (typeof REQUEST_TYPES)[number];

/** Request types whose answer is text produced token by token, so `stream: true` is allowed. */
export const STREAMABLE_REQUEST_TYPES = [
  'chat',
  'completion',
  'vision',
] as const satisfies readonly RequestType[];
export type StreamableRequestType = (typeof STREAMABLE_REQUEST_TYPES)[number];

/** Request types whose answer is text a JSON schema can constrain (workflow structuredOutput). */
export const STRUCTURED_REQUEST_TYPES = [
  'chat',
  'completion',
  'vision',
] as const satisfies readonly RequestType[];
export type StructuredRequestType = (typeof STRUCTURED_REQUEST_TYPES)[number];

const member =
  <T extends string>(values: readonly T[]) =>
  (value: string): value is T =>
    (values as readonly string[]).includes(value);

export const isRequestType: (value: string) => value is RequestType = member(REQUEST_TYPES);
export const isStreamable: (value: string) => value is StreamableRequestType =
  member(STREAMABLE_REQUEST_TYPES);
export const takesStructuredOutput: (value: string) => value is StructuredRequestType =
  member(STRUCTURED_REQUEST_TYPES);

/** Wire protocols of upstream providers; one gateway adapter each. */
export const PROVIDER_TYPES = [
  'openai',
  'azure-openai',
  'anthropic',
  'gemini',
  'openai-compatible',
  'bedrock',
  'vertex-ai',
  'cohere',
] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

/**
 * How the gateway authenticates to a provider. `api-key`: one secret sent as the provider's key
 * header. `aws-access-keys`: an access key pair (and optional session token) from a Secret, every
 * request SigV4-signed. `aws-web-identity`: the pod's projected service-account token exchanged for
 * temporary keys (STS AssumeRoleWithWebIdentity, as EKS IRSA sets up). `gcp-service-account`: a
 * service-account key from a Secret, exchanged for access tokens (OAuth 2.0 JWT bearer grant).
 * `gcp-workload-identity`: access tokens from the metadata server of the pod's node.
 */
export const AUTH_METHODS = [
  'api-key',
  'aws-access-keys',
  'aws-web-identity',
  'gcp-service-account',
  'gcp-workload-identity',
] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

/** What an API key may call: `ai` the AI endpoints, `console` the console API. */
export const API_KEY_SCOPES = ['ai', 'console', 'mcp'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** Spend cap reset periods, aligned to UTC (weeks start Monday 00:00 UTC). */
export const SPEND_PERIODS = ['hourly', 'daily', 'weekly', 'monthly'] as const;
export type SpendPeriod = (typeof SPEND_PERIODS)[number];

/** What a spend cap covers: the whole project, or one model slot of one workflow. */
export const SPEND_CAP_SCOPES = ['project', 'workflow'] as const;
export type SpendCapScope = (typeof SPEND_CAP_SCOPES)[number];

/**
 * Webhook event types. `ai.response`: an async request without eventName finished; `ai.error`: an
 * async job failed; `task.ai_generated`: a pipeline workflow generated its answer and awaits the
 * callback; `task.completed`: that callback arrived; `callback.timeout`: it did not arrive in time;
 * `budget.threshold`: a spend cap crossed 80 %, 90 % or 100 %.
 */
export const WEBHOOK_EVENT_TYPES = [
  'ai.response',
  'ai.error',
  'task.ai_generated',
  'task.completed',
  'callback.timeout',
  'budget.threshold',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Events a webhook receives when its Project does not list any. */
export const DEFAULT_WEBHOOK_EVENT_TYPES = [
  'ai.response',
  'task.ai_generated',
] as const satisfies readonly WebhookEventType[];
