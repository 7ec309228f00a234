import type { RequestType } from '#contract';
import { GatewayError } from '../errors/index.ts';
import type {
  CanonicalRequest,
  ChatMessage,
  ChatRequest,
  ContentPart,
  NativeRequest,
  SamplingControls,
  ToolDefinition,
} from '../providers/types.ts';
import { withBreakpoints } from './cache-control.ts';
import { LIMITS } from './limits.ts';
import type { NativeBody } from './native-schema.ts';
import { unsupported } from './param-rules.ts';
import type { StructuredChoice } from './structured.ts';

export interface CanonicalContext {
  /** What the route is called in messages: `Workflow "x"` or `Model "y"`. */
  subject: string;
  requestType: RequestType;
  systemInstructions?: string | undefined;
  structured: StructuredChoice;
  /** The client's body in a provider's own API: carried on a chat request as it is. */
  native?: NativeRequest | undefined;
}

const mismatch = (ctx: CanonicalContext, needs: string, hint: string): GatewayError =>
  new GatewayError(
    'request_type_mismatch',
    `${ctx.subject} has request type ${ctx.requestType}, which requires ${needs}.`,
    {
      hint,
    },
  );

const hasImage = (messages: NativeBody['messages']): boolean =>
  (messages ?? []).some((m) => Array.isArray(m.content) && m.content.some((p) => p.type === 'image_url'));

function withSystem(messages: ChatMessage[], system: string | undefined): ChatMessage[] {
  return system ? [{ role: 'system', content: system }, ...messages] : messages;
}

/**
 * A tool's prompt-cache breakpoint: only the Messages surface sets one (the body schemas of the
 * other surfaces have no such field, so a client cannot).
 */
const cacheOf = (tool: object): Pick<ToolDefinition, 'cache'> => {
  const { cache } = tool as Pick<ToolDefinition, 'cache'>;
  return cache ? { cache } : {};
};

function decodeAudio(file: string): Uint8Array {
  const comma = file.startsWith('data:') ? file.indexOf(',') : -1;
  const b64 = comma >= 0 ? file.slice(comma + 1) : file;
  if (!/^[A-Za-z0-9+/\r\n]*={0,2}\s*$/.test(b64))
    throw new GatewayError('invalid_request', 'file must be base64-encoded audio.', { param: 'file' });
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.length === 0) throw new GatewayError('invalid_request', 'file is empty.', { param: 'file' });
  if (bytes.length > LIMITS.audioFileBytes)
    throw new GatewayError('payload_too_large', `file exceeds ${LIMITS.audioFileBytes / 1024 / 1024} MB.`, {
      param: 'file',
    });
  return bytes;
}

const AUDIO_MIME: Record<string, string> = {
  mp3: 'audio/mpeg',
  mp4: 'audio/mp4',
  m4a: 'audio/mp4',
  wav: 'audio/wav',
  webm: 'audio/webm',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
};

/** The sampling controls that are set (null is "not set"). */
function samplingControls(body: NativeBody): SamplingControls {
  return {
    ...(body.seed != null ? { seed: body.seed } : {}),
    ...(body.presence_penalty != null ? { presence_penalty: body.presence_penalty } : {}),
    ...(body.frequency_penalty != null ? { frequency_penalty: body.frequency_penalty } : {}),
    ...(body.logit_bias != null ? { logit_bias: body.logit_bias } : {}),
  };
}

const CHAT_ONLY = ['parallel_tool_calls', 'reasoning_effort', 'service_tier', 'store', 'top_k'] as const;

type ChatOnly = Pick<
  ChatRequest,
  'parallel_tool_calls' | 'reasoning_effort' | 'service_tier' | 'store' | 'metadata'
>;

/**
 * parallel_tool_calls only travels with tools (OpenAI refuses it alone, and without tools it asks for
 * nothing); metadata only with store: true, since upstream it labels a stored completion (OpenAI
 * refuses it otherwise). Without store the gateway still reads metadata for its cache fields.
 */
function chatOnlyControls(body: NativeBody): ChatOnly {
  return {
    ...(body.parallel_tool_calls != null && body.tools?.length
      ? { parallel_tool_calls: body.parallel_tool_calls }
      : {}),
    ...(body.reasoning_effort != null ? { reasoning_effort: body.reasoning_effort } : {}),
    ...(body.service_tier != null ? { service_tier: body.service_tier } : {}),
    ...(body.store != null ? { store: body.store } : {}),
    ...(body.store === true && body.metadata ? { metadata: body.metadata } : {}),
  };
}

/** Infers the request type of a request that names a provider and model instead of a workflow. */
export function inferRequestType(body: NativeBody, supported: readonly RequestType[]): RequestType {
  const pick = (...candidates: RequestType[]): RequestType =>
    candidates.find((c) => supported.includes(c)) ?? candidates[0]!;
  if (body.file || body.voice) return 'audio';
  if (body.input !== undefined) return pick('embedding', 'audio');
  if (body.messages) return hasImage(body.messages) ? 'vision' : pick('chat', 'vision');
  if (body.prompt !== undefined) return pick('completion', 'image');
  return pick('chat');
}

/** Checks that the body fits the request type and builds the provider-neutral request. */
export function toCanonical(body: NativeBody, ctx: CanonicalContext): CanonicalRequest {
  const t = ctx.requestType;
  switch (t) {
    case 'chat':
    case 'vision': {
      if (!body.messages) {
        const sent =
          body.prompt !== undefined ? '`prompt`' : body.input !== undefined ? '`input`' : 'nothing';
        throw mismatch(
          ctx,
          '`messages`',
          `Send messages: [{role: "user", content: "..."}] instead of ${sent}.`,
        );
      }
      if (t === 'chat' && hasImage(body.messages))
        throw mismatch(ctx, 'text-only messages', 'Image parts need a workflow with request type vision.');
      if (t === 'vision' && !hasImage(body.messages))
        throw mismatch(
          ctx,
          'messages whose content is an array of parts with at least one image_url part',
          'Send content: [{type: "text", text}, {type: "image_url", image_url: {url}}].',
        );
      const messages = withSystem(withBreakpoints(body.messages), ctx.systemInstructions);
      return {
        kind: 'chat',
        messages,
        ...(body.temperature !== undefined ? { temperature: body.temperature } : {}),
        ...(body.max_tokens !== undefined ? { max_tokens: body.max_tokens } : {}),
        ...(body.top_p !== undefined ? { top_p: body.top_p } : {}),
        ...(body.top_k !== undefined ? { top_k: body.top_k } : {}),
        ...(body.stop !== undefined ? { stop: typeof body.stop === 'string' ? [body.stop] : body.stop } : {}),
        ...(body.tools
          ? {
              tools: body.tools.map((tl) => ({
                type: 'function' as const,
                function: stripNullStrict(tl.function),
                ...cacheOf(tl),
              })),
            }
          : {}),
        ...(body.tool_choice !== undefined ? { tool_choice: body.tool_choice } : {}),
        ...(ctx.structured.kind === 'schema' ? { structured: ctx.structured.output } : {}),
        ...(ctx.structured.kind === 'json' ? { json: true } : {}),
        ...(body.user ? { user: body.user } : {}),
        ...samplingControls(body),
        ...chatOnlyControls(body),
        ...(ctx.native ? { native: ctx.native } : {}),
      };
    }
    case 'completion': {
      if (body.prompt === undefined)
        throw mismatch(
          ctx,
          '`prompt`',
          body.messages ? 'Send prompt: "..." instead of messages.' : 'Send prompt: "...".',
        );
      const chatOnly = CHAT_ONLY.find((name) => body[name] != null);
      if (chatOnly)
        throw unsupported(
          chatOnly,
          `${chatOnly} applies to chat requests; ${ctx.subject} has request type completion.`,
        );
      const prompt = ctx.systemInstructions ? `${ctx.systemInstructions}\n\n${body.prompt}` : body.prompt;
      return {
        kind: 'completion',
        prompt,
        ...(body.temperature !== undefined ? { temperature: body.temperature } : {}),
        ...(body.max_tokens !== undefined ? { max_tokens: body.max_tokens } : {}),
        ...(body.top_p !== undefined ? { top_p: body.top_p } : {}),
        ...(body.stop !== undefined ? { stop: typeof body.stop === 'string' ? [body.stop] : body.stop } : {}),
        ...(body.user ? { user: body.user } : {}),
        ...samplingControls(body),
      };
    }
    case 'image': {
      if (body.prompt === undefined)
        throw mismatch(ctx, '`prompt`', 'Send prompt (and optionally size, quality, n) instead of messages.');
      return {
        kind: 'image',
        prompt: body.prompt,
        ...(body.n !== undefined ? { n: body.n } : {}),
        ...(body.size ? { size: body.size } : {}),
        ...(body.quality ? { quality: body.quality } : {}),
        ...(body.style ? { style: body.style } : {}),
        ...(body.response_format === 'url' || body.response_format === 'b64_json'
          ? { response_format: body.response_format }
          : {}),
        ...(body.user ? { user: body.user } : {}),
      };
    }
    case 'embedding': {
      if (body.input === undefined)
        throw mismatch(
          ctx,
          '`input`',
          'Send input: "text" or input: ["text", ...] instead of messages or prompt.',
        );
      return {
        kind: 'embedding',
        input: body.input,
        ...(body.encoding_format ? { encoding_format: body.encoding_format } : {}),
        ...(body.dimensions ? { dimensions: body.dimensions } : {}),
        ...(body.user ? { user: body.user } : {}),
      };
    }
    case 'audio': {
      if (body.file !== undefined) {
        const format = body.response_format;
        if (format !== undefined && format !== 'json' && format !== 'text' && format !== 'verbose_json')
          throw new GatewayError(
            'invalid_request',
            'response_format for transcription must be json, text or verbose_json.',
            {
              param: 'response_format',
            },
          );
        const filename = body.filename ?? 'audio.mp3';
        const ext = filename.split('.').pop()?.toLowerCase() ?? 'mp3';
        return {
          kind: 'transcription',
          file: decodeAudio(body.file),
          filename,
          mimeType:
            (Object.hasOwn(AUDIO_MIME, ext) ? AUDIO_MIME[ext] : undefined) ?? 'application/octet-stream',
          ...(body.language ? { language: body.language } : {}),
          ...(typeof body.prompt === 'string' ? { prompt: body.prompt } : {}),
          ...(format ? { response_format: format } : {}),
        };
      }
      if (typeof body.input === 'string') {
        const format = body.response_format;
        const formats = ['mp3', 'wav', 'opus', 'aac', 'flac', 'pcm'] as const;
        if (format !== undefined && !formats.includes(format as (typeof formats)[number]))
          throw new GatewayError(
            'invalid_request',
            `response_format for speech must be one of ${formats.join(', ')}.`,
            {
              param: 'response_format',
            },
          );
        return {
          kind: 'speech',
          input: body.input,
          voice: body.voice ?? 'alloy',
          ...(format ? { response_format: format as (typeof formats)[number] } : {}),
          ...(body.speed !== undefined ? { speed: body.speed } : {}),
        };
      }
      throw mismatch(
        ctx,
        '`file` (base64 audio, for transcription) or `input` text (for speech)',
        'Send file: "<base64>" to transcribe, or input: "text" and voice to synthesise speech.',
      );
    }
    default:
      throw new GatewayError('service_unavailable', `unknown request type ${String(t satisfies never)}`);
  }
}

function stripNullStrict<T extends { strict?: boolean | null | undefined }>(
  fn: T,
): Omit<T, 'strict'> & { strict?: boolean } {
  const { strict, ...rest } = fn;
  return strict === null || strict === undefined ? rest : { ...rest, strict };
}

export type { ContentPart };
