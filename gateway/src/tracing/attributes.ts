import type { ProviderType } from '#contract';
import { compatServerOf } from '../providers/openai-compatible/servers.ts';
import type {
  AnswerFields,
  AttemptFailure,
  CallbackChannel,
  ChainRequest,
  ExchangeEnd,
  HttpRequestView,
  ProviderEndpoint,
  RequestKind,
  SlotRef,
  TokenUsage,
  ToolCallView,
  WebhookJob,
} from './types.ts';

/**
 * Span names and attributes, by the OpenTelemetry semantic conventions: HTTP server spans for
 * requests, GenAI client inference spans for provider calls (`gen_ai.*`), and `switchyard.*` for
 * what only the gateway knows (workflow, project, slot). Loaded only when tracing is on.
 */

export type Attributes = Record<string, string | number | boolean | string[]>;

/** `gen_ai.operation.name`: the conventions' well-known values, and our own for the rest. */
const OPERATIONS: Readonly<Record<RequestKind, string>> = {
  chat: 'chat',
  completion: 'text_completion',
  embedding: 'embeddings',
  image: 'image_generation',
  transcription: 'transcription',
  speech: 'speech',
};

/** `gen_ai.provider.name` by provider type (the conventions' well-known values). */
const PROVIDERS: Readonly<Record<Exclude<ProviderType, 'openai-compatible'>, string>> = {
  openai: 'openai',
  'azure-openai': 'azure.ai.openai',
  anthropic: 'anthropic',
  gemini: 'gcp.gemini',
  'vertex-ai': 'gcp.vertex_ai',
  bedrock: 'aws.bedrock',
  cohere: 'cohere',
};

/** OpenAI-compatible servers the conventions name; any other is `openai_compatible`. */
const COMPAT_SERVERS: Readonly<Record<string, string>> = {
  groq: 'groq',
  mistral: 'mistral_ai',
  deepseek: 'deepseek',
  xai: 'x_ai',
};

export const operationOf = (kind: RequestKind): string => OPERATIONS[kind];

// A compatible server is told by its URL: named once per target, as long as the snapshot holds it.
const compatNames = new WeakMap<ProviderEndpoint, string>();

export function providerNameOf(target: ProviderEndpoint): string {
  if (target.type !== 'openai-compatible') return PROVIDERS[target.type];
  let name = compatNames.get(target);
  if (name === undefined) {
    name = COMPAT_SERVERS[compatServerOf(target.baseURL)] ?? 'openai_compatible';
    compatNames.set(target, name);
  }
  return name;
}

const servers = new WeakMap<ProviderEndpoint, Attributes>();

/** `server.address` and `server.port` of a provider (parsed once per target). */
function serverOf(target: ProviderEndpoint): Attributes {
  let a = servers.get(target);
  if (a) return a;
  a = {};
  try {
    const u = new URL(target.baseURL);
    a['server.address'] = u.hostname;
    a['server.port'] = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  } catch {
    // A base URL that does not parse: the call itself fails with a connect error.
  }
  servers.set(target, a);
  return a;
}

/**
 * `error.type` of a failed provider call: the provider's HTTP status when it answered with one
 * (`503`), else the gateway's error code (`UPSTREAM_TIMEOUT`, `UPSTREAM_CONNECT`, ...).
 */
export const attemptErrorType = (e: AttemptFailure): string =>
  e.code === 'UPSTREAM_STATUS' && e.status !== undefined ? String(e.status) : e.code;

function samplingOf(req: ChainRequest['request'], a: Attributes): void {
  if (req.kind !== 'chat' && req.kind !== 'completion') return;
  if (req.max_tokens !== undefined) a['gen_ai.request.max_tokens'] = req.max_tokens;
  if (req.temperature !== undefined) a['gen_ai.request.temperature'] = req.temperature;
  if (req.top_p !== undefined) a['gen_ai.request.top_p'] = req.top_p;
  if (req.seed !== undefined) a['gen_ai.request.seed'] = req.seed;
  if (req.stop?.length) a['gen_ai.request.stop_sequences'] = req.stop;
}

/** Where a request was routed: the workflow's name, or none for a direct provider+model request. */
function routeOf(p: ChainRequest, projectId: string, a: Attributes): void {
  a['switchyard.project'] = projectId;
  if (p.workflowName) a['switchyard.workflow'] = p.workflowName;
  if (p.plan.testMode) a['switchyard.test_mode'] = true;
}

/** The client span of one provider call: its name and the attributes known before it is sent. */
export function attemptStart(
  slot: SlotRef,
  p: ChainRequest,
  projectId: string,
  stream: boolean,
): { name: string; attributes: Attributes } {
  const operation = operationOf(p.request.kind);
  const a: Attributes = {
    'gen_ai.operation.name': operation,
    'gen_ai.provider.name': providerNameOf(slot.target),
    'gen_ai.request.model': slot.model,
    ...serverOf(slot.target),
    'switchyard.provider': slot.provider,
    'switchyard.slot': slot.slot,
  };
  if (stream) a['gen_ai.request.stream'] = true;
  samplingOf(p.request, a);
  routeOf(p, projectId, a);
  return { name: `${operation} ${slot.model}`, attributes: a };
}

function usageOf(usage: TokenUsage | undefined, a: Attributes): void {
  if (!usage) return;
  if (usage.prompt_tokens !== undefined) a['gen_ai.usage.input_tokens'] = usage.prompt_tokens;
  if (usage.completion_tokens !== undefined) a['gen_ai.usage.output_tokens'] = usage.completion_tokens;
  // Parts of input_tokens, as the GenAI conventions count them.
  if (usage.cache_read_tokens !== undefined)
    a['gen_ai.usage.cache_read.input_tokens'] = usage.cache_read_tokens;
  if (usage.cache_write_tokens !== undefined)
    a['gen_ai.usage.cache_creation.input_tokens'] = usage.cache_write_tokens;
}

/** What a provider's answer adds to its attempt span. */
export function attemptAnswered(
  result: AnswerFields,
  usage: TokenUsage | undefined,
  ttfcMs?: number,
): Attributes {
  const a: Attributes = {};
  if (result.model) a['gen_ai.response.model'] = result.model;
  if (result.id) a['gen_ai.response.id'] = result.id;
  if (result.finish_reason) a['gen_ai.response.finish_reasons'] = [result.finish_reason];
  usageOf(usage, a);
  if (ttfcMs !== undefined) a['gen_ai.response.time_to_first_chunk'] = ttfcMs / 1000;
  return a;
}

/** What a failed provider call adds to its attempt span. */
export function attemptFailed(e: AttemptFailure): Attributes {
  const a: Attributes = { 'error.type': attemptErrorType(e), 'switchyard.error_code': e.code };
  if (e.status !== undefined) a['http.response.status_code'] = e.status;
  return a;
}

function hostOf(req: HttpRequestView): Attributes {
  const host = req.headers.host;
  if (!host) return {};
  // `host:port`, `[v6]:port` or a bare name.
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host);
  if (!m) return {};
  return { 'server.address': m[1]!, ...(m[2] ? { 'server.port': Number(m[2]) } : {}) };
}

/** The server span of an HTTP request: `{method} {route}` and the HTTP request's attributes. */
export function httpStart(req: HttpRequestView): { name: string; attributes: Attributes } {
  const route = req.routeOptions.url;
  const q = req.url.indexOf('?');
  const a: Attributes = {
    'http.request.method': req.method,
    'url.path': q === -1 ? req.url : req.url.slice(0, q),
    'url.scheme': req.protocol,
    'network.protocol.version': req.raw.httpVersion,
    'client.address': req.ip,
    ...hostOf(req),
  };
  if (route) a['http.route'] = route;
  const ua = req.headers['user-agent'];
  if (ua) a['user_agent.original'] = ua;
  return { name: route ? `${req.method} ${route}` : req.method, attributes: a };
}

const FAILED_OUTCOMES = new Set(['upstream_error', 'stream_error', 'unavailable']);

/**
 * What the settle adds to an exchange's span (server, job or summary): the HTTP status, the GenAI
 * figures of the exchange as a whole (the model asked for, the one that answered, the usage) and
 * how it went. A failed chain the native surface answers with 200 is an error all the same.
 */
export function exchangeEnd(end: ExchangeEnd): { attributes: Attributes; error?: string } {
  const a: Attributes = {};
  if (end.http) a['http.response.status_code'] = end.status;
  const q = end.request;
  if (q) {
    a['gen_ai.operation.name'] = operationOf(q.kind);
    a['gen_ai.request.model'] = q.model;
    if (q.stream) a['gen_ai.request.stream'] = true;
    if (q.endpoint) a['gen_ai.provider.name'] = providerNameOf(q.endpoint);
  }
  const r = end.figures;
  if (r.usedModel) a['gen_ai.response.model'] = r.usedModel;
  usageOf(r.usage, a);
  if (r.project) a['switchyard.project'] = r.project;
  if (r.workflow) a['switchyard.workflow'] = r.workflow;
  if (r.usedProvider) a['switchyard.provider'] = r.usedProvider;
  if (end.slot) a['switchyard.slot'] = end.slot;
  if (r.keyId) a['switchyard.api_key_id'] = r.keyId;
  if (r.sessionId) a['gen_ai.conversation.id'] = r.sessionId;
  if (r.channelId) a['switchyard.channel_id'] = r.channelId;
  if (r.cache) a['switchyard.cache'] = r.cache;
  if (r.testMode) a['switchyard.test_mode'] = true;
  if (r.outcome) a['switchyard.outcome'] = r.outcome;
  if (r.errorCode) a['switchyard.error_code'] = r.errorCode;
  a['switchyard.request_log_id'] = end.id;
  let error: string | undefined;
  if (end.status >= 500) error = r.errorCode ?? String(end.status);
  else if (r.outcome && FAILED_OUTCOMES.has(r.outcome)) error = r.errorCode ?? r.outcome;
  if (error) a['error.type'] = error;
  return error ? { attributes: a, error } : { attributes: a };
}

function addressOf(url: string, a: Attributes): void {
  try {
    const u = new URL(url);
    a['server.address'] = u.hostname;
    a['server.port'] = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  } catch {}
}

/** A webhook attempt's span: the receiver's address, never its path or query (they may hold a token). */
export function webhookStart(job: WebhookJob): { name: string; attributes: Attributes } {
  const a: Attributes = { 'http.request.method': 'POST' };
  addressOf(job.url, a);
  a['switchyard.project'] = job.projectId;
  a['switchyard.webhook.id'] = job.id;
  a['switchyard.webhook.event'] = job.event;
  a['switchyard.webhook.attempt'] = job.attempt;
  a['switchyard.webhook.replay'] = job.replay;
  return { name: `webhook ${job.event}`, attributes: a };
}

export function webhookEnd(outcome: string, status: number, error?: { type: string }): Attributes {
  const a: Attributes = {};
  if (status) a['http.response.status_code'] = status;
  a['switchyard.webhook.outcome'] = outcome;
  if (error) a['error.type'] = error.type;
  return a;
}

export const callbackAttributes = (channel: CallbackChannel): Attributes => ({
  'switchyard.project': channel.project_id,
  'switchyard.channel_id': channel.channel_id,
});

/** An MCP tool call's span, as the GenAI (`execute_tool`) and MCP semantic conventions name it. */
export function toolStart(call: ToolCallView): Attributes {
  const a: Attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': call.name,
    'gen_ai.tool.type': 'extension',
    'mcp.method.name': 'tools/call',
    'switchyard.mcp.server': call.server,
  };
  if (call.callId !== undefined) a['gen_ai.tool.call.id'] = String(call.callId);
  if (call.sessionId !== undefined) a['mcp.session.id'] = call.sessionId;
  return a;
}
