/** What a provider module gets to see and implement; server.ts drives the common request pipeline. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { ClaudeState } from './anthropic/claude-state.ts';
import type { AuthState } from './auth-state.ts';
import type { ResolvedFault } from './faults.ts';
import type { ProviderName } from './types.ts';

export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  provider: ProviderName;
  url: URL;
  /** Parsed JSON, or { fields, files } for multipart. */
  body: unknown;
  /** Model from the body or from the URL (Azure deployment, Gemini path). */
  model: string;
  fault: ResolvedFault;
  streamChunks: number;
  chunkIntervalMs: number;
  /** Where the simulator is reachable, e.g. for image URLs. */
  baseUrl: string;
  /** Provider module, for error replies from within a handler. */
  api: ProviderApi;
  /** Timer registry, so close() can cancel pending delays. */
  sleep(ms: number): Promise<void>;
  /** Credentials the simulator accepts and has issued (STS keys, Google access tokens). */
  auth: AuthState;
  /** Claude's memory across requests: its thinking signatures and prompt cache. */
  claude: ClaudeState;
}

export interface ErrorReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Sent verbatim instead of `body` as JSON (STS answers XML). */
  text?: { contentType: string; content: string };
}

export interface Route {
  /** Model fixed by the URL (Azure deployment, Gemini path); otherwise read from the body `model`. */
  model?: string;
  body: 'json' | 'multipart' | 'form' | 'none';
  /** zod schema of the documented request shape; skipped when validation is off. */
  schema?: z.ZodType;
  handle(ex: Exchange): Promise<void>;
}

export interface ValidationIssue {
  /** Dotted/bracketed path, e.g. messages[0].content. */
  path: (string | number)[];
  message: string;
  /** True when the field is absent rather than wrong. */
  missing: boolean;
}

export interface ProviderApi {
  name: ProviderName;
  /** The route for this request, or undefined (answered with the provider's 404). */
  route(method: string, url: URL): Route | undefined;
  /**
   * Credentials and mandatory headers/params; an error reply when the request must be refused.
   * `raw` is the body as received (SigV4 signs its hash).
   */
  precheck(
    req: IncomingMessage,
    url: URL,
    apiKey: string | undefined,
    ctx: { raw: Buffer; auth: AuthState },
  ): ErrorReply | undefined;
  /** The provider's error body for a status (fault injection, generic failures). */
  error(status: number, message?: string): ErrorReply;
  invalidJson(detail: string): ErrorReply;
  invalidRequest(issues: ValidationIssue[], url: URL): ErrorReply;
  notFound(method: string, pathname: string): ErrorReply;
  /** Headers every answer of this provider carries (request ids and the like). */
  headers(): Record<string, string>;
}
