import type { ProviderType, RequestType } from '#contract';
import type { TraceContext } from '../tracing/types.ts';

export type { ProviderType };
/**
 * What an adapter is asked to do. Not the workflow vocabulary (RequestType) itself but derived from
 * it: a vision request is a chat call, and audio splits into transcription and speech.
 */
export type RequestKind = Exclude<RequestType, 'vision' | 'audio'> | 'transcription' | 'speech';
export interface TextPart {
  type: 'text';
  text: string;
}
export interface ImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}
export type ContentPart = TextPart | ImagePart;
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}
/**
 * A prompt-cache breakpoint the client set (a `cache_control` on a Messages block or tool, or on a
 * chat content part): the prompt up to the end of what carries it is worth caching, for five
 * minutes or, with `ttl: '1h'`, an hour. Translators for providers with explicit breakpoints read
 * it (Claude's `cache_control`, Bedrock's `cachePoint`); OpenAI's drops it.
 */
export interface CacheBreakpoint {
  ttl?: '5m' | '1h';
}
export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  cache?: CacheBreakpoint;
}
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
  cache?: CacheBreakpoint;
}
export type ToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };
export interface StructuredOutput {
  name: string;
  schema: Record<string, unknown>;
  strict?: boolean;
}
/**
 * Optional sampling controls in OpenAI's spelling, shared by chat and completion requests. Each
 * provider's request translator passes, renames or refuses (UPSTREAM_UNSUPPORTED) every one of them.
 */
export interface SamplingControls {
  seed?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  /** Token id (as a string) → bias in [-100, 100]. */
  logit_bias?: Record<string, number>;
}
/** The provider APIs a client may speak natively through the gateway (see NativeRequest). */
export type NativeDialect = 'anthropic-messages';

/**
 * A chat request as its client wrote it in a provider's own API, carried beside the canonical form.
 * Only the adapter that speaks `dialect` reads it: it sends `body` with what the gateway added
 * merged in, and every other adapter translates the canonical form (failover included).
 */
export interface NativeRequest {
  dialect: NativeDialect;
  /** The client's body without `model` and `stream` (the adapter sets both). */
  body: Record<string, unknown>;
  /** Headers the client sent that travel upstream with the body (e.g. `anthropic-beta`). */
  headers: Record<string, string>;
  /** How many of the canonical `messages`, counted from the end, stand for the body's own turns. */
  turns: number;
  /**
   * The text of the canonical system message that stands for the body's own system prompt; the
   * other system messages (workflow instructions, a session summary) are the gateway's.
   */
  system?: string;
}

/** A provider's answer as it sent it, for the encoder of the same dialect (a NativeRequest's answer). */
export interface NativeResult {
  dialect: NativeDialect;
  body: Record<string, unknown>;
}

export interface ChatRequest extends SamplingControls {
  kind: 'chat';
  messages: ChatMessage[];
  temperature?: number;
  max_tokens?: number;
  top_p?: number;
  /** Sample from the k most likely tokens (Anthropic, Gemini); refused by OpenAI-shaped servers. */
  top_k?: number;
  stop?: string[];
  tools?: ToolDefinition[];
  tool_choice?: ToolChoice;
  structured?: StructuredOutput;
  json?: boolean;
  user?: string;
  /** Only carried when tools are given (OpenAI refuses it without tools). */
  parallel_tool_calls?: boolean;
  /** OpenAI's level names (`none`, `minimal`, `low`, `medium`, `high`, …); open-ended on purpose. */
  reasoning_effort?: string;
  /** OpenAI's tier names (`auto`, `default`, `flex`, `priority`, …). */
  service_tier?: string;
  store?: boolean;
  /** Metadata for a stored completion: only carried when `store` is true (OpenAI refuses it otherwise). */
  metadata?: Record<string, unknown>;
  native?: NativeRequest;
}
export interface CompletionRequest extends SamplingControls {
  kind: 'completion';
  prompt: string;
  temperature?: number;
  max_tokens?: number;
  top_p?: number;
  stop?: string[];
  /** The end user, as on chat: passed where the provider has a field for it. */
  user?: string;
}
export interface EmbeddingRequest {
  kind: 'embedding';
  input: string | string[];
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
  /** The caller's end-user id: OpenAI's embeddings API takes it; other providers have no place for it. */
  user?: string;
}
export interface ImageRequest {
  kind: 'image';
  prompt: string;
  n?: number;
  size?: string;
  quality?: string;
  style?: string;
  response_format?: 'url' | 'b64_json';
  /** The caller's end-user id: OpenAI's images API takes it; other providers have no place for it. */
  user?: string;
}
export interface TranscriptionRequest {
  kind: 'transcription';
  file: Uint8Array;
  filename: string;
  mimeType: string;
  language?: string;
  prompt?: string;
  response_format?: 'json' | 'text' | 'verbose_json';
}
export interface SpeechRequest {
  kind: 'speech';
  input: string;
  /** A voice's name, or a custom voice's id (OpenAI). */
  voice: string | { id: string };
  response_format?: 'mp3' | 'wav' | 'opus' | 'aac' | 'flac' | 'pcm';
  speed?: number;
}
export type CanonicalRequest =
  | ChatRequest
  | CompletionRequest
  | EmbeddingRequest
  | ImageRequest
  | TranscriptionRequest
  | SpeechRequest;
export interface Usage {
  /** Every input token, prompt-cache reads and writes included. */
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Of prompt_tokens, those read from the provider's prompt cache, when the provider says. */
  cache_read_tokens?: number;
  /** Of prompt_tokens, those written to the provider's prompt cache, when the provider says. */
  cache_write_tokens?: number;
  /** Of cache_write_tokens, those written for one hour (Claude prices them above five-minute writes). */
  cache_write_1h_tokens?: number;
}
/**
 * A stop on one of the request's stop sequences: the sequence when the provider names it, null
 * when it only says that one fired. Absent when the answer stopped otherwise (or the provider
 * cannot tell: OpenAI's and Gemini's `stop` covers both).
 */
export interface StopSequence {
  stop_sequence?: string | null;
}
export interface ChatResult extends StopSequence {
  kind: 'chat';
  id: string;
  content: string | null;
  tool_calls?: ToolCall[];
  finish_reason: string;
  usage: Usage;
  model: string;
  /** The answer as the provider sent it, when the request was native in the provider's dialect. */
  native?: NativeResult;
}
export interface CompletionResult {
  kind: 'completion';
  id: string;
  text: string;
  finish_reason: string;
  usage: Usage;
  model: string;
}
export interface EmbeddingResult {
  kind: 'embedding';
  embeddings: (number[] | string)[];
  usage: Usage;
  model: string;
}
export interface ImageResult {
  kind: 'image';
  created: number;
  images: { url?: string; b64_json?: string; revised_prompt?: string }[];
  usage?: Usage;
}
export interface TranscriptionResult {
  kind: 'transcription';
  text: string;
  durationSeconds?: number;
  language?: string;
  usage?: Usage;
}
export interface SpeechResult {
  kind: 'speech';
  audio: Uint8Array;
  format: string;
  contentType: string;
}
export type CanonicalResult =
  | ChatResult
  | CompletionResult
  | EmbeddingResult
  | ImageResult
  | TranscriptionResult
  | SpeechResult;
export type StreamEvent =
  | {
      type: 'delta';
      content?: string;
      tool_calls?: { index: number; id?: string; name?: string; arguments?: string }[];
    }
  | ({ type: 'finish'; finish_reason: string } & StopSequence)
  | { type: 'usage'; usage: Usage }
  /**
   * One event of a native request's stream as the provider sent it, beside the canonical events
   * it maps to (which the pipeline tallies); only the encoder of the same dialect writes it.
   */
  | { type: 'native'; dialect: NativeDialect; event: string; data: Record<string, unknown> };
/** Temporary or long-lived AWS keys; `expiresAt` (ms) is set for temporary ones. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
  expiresAt?: number | undefined;
}

/**
 * Credentials that are not a fixed API key: AWS keys to sign each request with, or a bearer token
 * obtained (and renewed) from a token endpoint. One instance per provider credential, shared by
 * every target of that provider and kept across snapshots while the credential is unchanged.
 */
export type UpstreamAuth =
  | { kind: 'aws'; credentials(signal: AbortSignal): Promise<AwsCredentials> }
  | { kind: 'bearer'; token(signal: AbortSignal): Promise<string> };

export interface UpstreamTarget {
  providerName: string;
  type: ProviderType;
  baseURL: string;
  apiKey: string;
  model: string;
  /** false for a provider (or one model of it) that cannot stream: streamed requests get one chunk. */
  streaming: boolean;
  /** Set for providers authenticated otherwise than by `apiKey` (bedrock, vertex-ai). */
  auth?: UpstreamAuth | undefined;
  timeouts: { connectMs: number; firstByteMs: number; totalMs: number };
  options?: {
    apiVersion?: string;
    /**
     * openai-compatible only: override the dialect detected from the base URL.
     * `streamUsage`: send `stream_options: {include_usage: true}`.
     * `jsonSchema`: the server accepts `response_format: {type: 'json_schema'}`
     * (otherwise structured output falls back to `json_object` plus a schema instruction).
     */
    streamUsage?: boolean;
    jsonSchema?: boolean;
    /** anthropic only: value of the `anthropic-version` header (default 2023-06-01). */
    anthropicVersion?: string;
    /** anthropic only: default `max_tokens` when the request has none (default 4096). */
    defaultMaxTokens?: number;
    /** bedrock: the AWS region (signing scope); vertex-ai: the Google Cloud location. */
    region?: string;
    /** vertex-ai: the Google Cloud project id. */
    project?: string;
  };
}
export interface CallContext {
  signal: AbortSignal;
  /** The attempt's trace context, sent on as `traceparent`/`tracestate` (tracing on only). */
  trace?: TraceContext | undefined;
}
export interface ProviderAdapter {
  readonly type: ProviderType;
  /**
   * Loads what the adapter needs beyond the gateway's own code (e.g. the AWS signing libraries),
   * when a snapshot first has a provider of this type, so pods without one never load it.
   */
  warm?(): Promise<void>;
  supports(kind: RequestKind): boolean; // what this provider can serve at all
  supportsNativeStructuredOutput: boolean;
  /** Whether this adapter sends a NativeRequest of `dialect` to `target` as written (else it translates). */
  speaks?(dialect: NativeDialect, target: UpstreamTarget): boolean;
  call(target: UpstreamTarget, req: CanonicalRequest, ctx: CallContext): Promise<CanonicalResult>;
  stream(
    target: UpstreamTarget,
    req: ChatRequest | CompletionRequest,
    ctx: CallContext,
  ): AsyncIterable<StreamEvent>; // throws UpstreamError before the first event if the upstream fails
}
