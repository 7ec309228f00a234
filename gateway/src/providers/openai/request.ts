/** Canonical request → OpenAI-style HTTP body. Shared by openai, azure-openai and openai-compatible. */
import type { FormData } from 'undici';
import { newFormData } from '../../upstream/undici-parts.ts';
import { structuredInstruction, unmarked } from '../common.ts';
import { inEffect, type OptionalParam, refuseParam, setParams } from '../optional-params.ts';
import type {
  CanonicalRequest,
  ChatMessage,
  ChatRequest,
  CompletionRequest,
  RequestKind,
  TranscriptionRequest,
} from '../types.ts';

const OPENAI_MAX_STOP = 4;

/** The ways OpenAI-shaped servers differ; see openai-compatible/index.ts for the per-server table. */
export interface OpenAIDialect {
  /** Send `model` in the body (Azure addresses the deployment in the URL instead). */
  modelInBody: boolean;
  /** Accepts `stream_options: {include_usage: true}`. */
  streamUsage: boolean;
  /** Accepts `response_format: {type: 'json_schema'}`; otherwise `json_object` + a schema instruction. */
  jsonSchema: boolean;
  /** Accepts the `developer` role; otherwise it is sent as `system`. */
  developerRole: boolean;
  /** Uses `max_completion_tokens` instead of `max_tokens` for this model (OpenAI reasoning models). */
  maxCompletionTokens: (model: string) => boolean;
  /**
   * Wire name of each optional parameter the server takes; one it lacks is refused when its value
   * asks for something (see optional-params.ts). Absent: every one, as OpenAI spells it.
   */
  params?: Readonly<Partial<Record<OptionalParam, string>>>;
  /** Who refuses, in refusal messages. */
  server?: string;
}

/** Path of each kind relative to the API root (`…/v1` or the Azure deployment). */
export const OPENAI_OPERATIONS: Record<RequestKind, string> = {
  chat: 'chat/completions',
  completion: 'completions',
  embedding: 'embeddings',
  image: 'images/generations',
  transcription: 'audio/transcriptions',
  speech: 'audio/speech',
};

const REASONING_MODEL = /^(o\d|gpt-5)/;
export const isReasoningModel = (model: string): boolean => REASONING_MODEL.test(model);

export function buildOpenAIBody(
  req: CanonicalRequest,
  model: string,
  dialect: OpenAIDialect,
  stream: boolean,
): string | FormData {
  const m = dialect.modelInBody ? model : undefined;
  switch (req.kind) {
    case 'chat':
      return JSON.stringify(chatBody(req, m, model, dialect, stream));
    case 'completion':
      return JSON.stringify(completionBody(req, m, model, dialect, stream));
    case 'embedding':
      return JSON.stringify({
        model: m,
        input: req.input,
        encoding_format: req.encoding_format,
        dimensions: req.dimensions,
        user: req.user,
      });
    case 'image':
      return JSON.stringify({
        model: m,
        prompt: req.prompt,
        n: req.n,
        size: req.size,
        quality: req.quality,
        style: req.style,
        response_format: req.response_format,
        user: req.user,
      });
    case 'speech':
      return JSON.stringify({
        model: m,
        input: req.input,
        voice: req.voice,
        response_format: req.response_format,
        speed: req.speed,
      });
    case 'transcription':
      return transcriptionForm(req, m);
  }
}

function chatBody(
  req: ChatRequest,
  m: string | undefined,
  model: string,
  dialect: OpenAIDialect,
  stream: boolean,
): Record<string, unknown> {
  let messages: ChatMessage[] = req.messages;
  let responseFormat: Record<string, unknown> | undefined;
  if (req.structured) {
    if (dialect.jsonSchema) {
      responseFormat = {
        type: 'json_schema',
        json_schema: {
          name: req.structured.name,
          schema: req.structured.schema,
          strict: req.structured.strict,
        },
      };
    } else {
      responseFormat = { type: 'json_object' };
      messages = withSystemInstruction(messages, structuredInstruction(req.structured));
    }
  } else if (req.json) {
    responseFormat = { type: 'json_object' };
  }
  if (!dialect.developerRole) messages = developerToSystem(messages);
  // Chat Completions has no cache breakpoints (OpenAI caches prefixes unasked) and refuses fields
  // it does not know.
  messages = unmarked(messages);
  // Chat Completions takes at most four; the Messages API lets a client send up to sixteen.
  if (req.stop !== undefined && req.stop.length > OPENAI_MAX_STOP)
    throw refuseParam(
      dialect.server ?? 'this server',
      'stop',
      `OpenAI-shaped chat completions take at most ${OPENAI_MAX_STOP} stop sequences`,
    );
  if (req.top_k !== undefined)
    throw refuseParam(
      dialect.server ?? 'this server',
      'top_k',
      'OpenAI-shaped chat completions have no top_k',
    );
  const body: Record<string, unknown> = {
    model: m,
    messages,
    temperature: req.temperature,
    top_p: req.top_p,
    stop: req.stop,
    tools: req.tools && unmarked(req.tools),
    tool_choice: req.tool_choice,
    response_format: responseFormat,
    user: req.user,
  };
  if (req.max_tokens !== undefined) {
    body[dialect.maxCompletionTokens(model) ? 'max_completion_tokens' : 'max_tokens'] = req.max_tokens;
  }
  putOptionalParams(body, req, dialect);
  if (stream) {
    body.stream = true;
    if (dialect.streamUsage) body.stream_options = { include_usage: true };
  }
  return body;
}

/** Copies the optional parameters under the server's names; refuses those it lacks (when in effect). */
function putOptionalParams(
  body: Record<string, unknown>,
  req: ChatRequest | CompletionRequest,
  dialect: OpenAIDialect,
): void {
  for (const [param, value] of setParams(req)) {
    const wire = dialect.params === undefined ? param : dialect.params[param];
    if (wire !== undefined) body[wire] = value;
    else if (inEffect(param, value))
      throw refuseParam(dialect.server ?? 'this server', param, 'the server does not take it');
  }
}

function completionBody(
  req: CompletionRequest,
  m: string | undefined,
  model: string,
  dialect: OpenAIDialect,
  stream: boolean,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: m,
    prompt: req.prompt,
    temperature: req.temperature,
    top_p: req.top_p,
    stop: req.stop,
    user: req.user,
  };
  if (req.max_tokens !== undefined) {
    body[dialect.maxCompletionTokens(model) ? 'max_completion_tokens' : 'max_tokens'] = req.max_tokens;
  }
  putOptionalParams(body, req, dialect);
  if (stream) {
    body.stream = true;
    if (dialect.streamUsage) body.stream_options = { include_usage: true };
  }
  return body;
}

/** Adds an instruction to the leading system message (or prepends one). Never mutates the input. */
export function withSystemInstruction(messages: ChatMessage[], instruction: string): ChatMessage[] {
  const first = messages[0];
  if (first && (first.role === 'system' || first.role === 'developer') && typeof first.content === 'string') {
    const out = messages.slice();
    out[0] = { ...first, content: `${first.content}\n\n${instruction}` };
    return out;
  }
  return [{ role: 'system', content: instruction }, ...messages];
}

function developerToSystem(messages: ChatMessage[]): ChatMessage[] {
  let out: ChatMessage[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const msg = messages[i] as ChatMessage;
    if (msg.role === 'developer') {
      out ??= messages.slice();
      out[i] = { ...msg, role: 'system' };
    }
  }
  return out ?? messages;
}

function transcriptionForm(req: TranscriptionRequest, m: string | undefined): FormData {
  const form = newFormData();
  form.append('file', new Blob([req.file], { type: req.mimeType }), req.filename);
  if (m !== undefined) form.append('model', m);
  if (req.language !== undefined) form.append('language', req.language);
  if (req.prompt !== undefined) form.append('prompt', req.prompt);
  if (req.response_format !== undefined) form.append('response_format', req.response_format);
  return form;
}
