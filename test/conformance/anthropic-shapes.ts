/**
 * One exemplar of every Messages object and stream event the gateway answers with, each typed with
 * the official SDK's own type (`@anthropic-ai/sdk`), so tsc holds each exemplar to the SDK: every
 * field the type requires is present, no field it lacks. At run time `compareShape` holds the
 * gateway's real answers to the exemplars.
 *
 * An exemplar's null marks a field the SDK types as nullable; ANY marks one it types `unknown`.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { ErrorObject, ErrorResponse } from '@anthropic-ai/sdk/resources/shared';

export const ANY: unknown = Symbol('any');

const usage: Anthropic.Usage = {
  cache_creation: null,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  inference_geo: null,
  input_tokens: 1,
  output_tokens: 1,
  output_tokens_details: null,
  server_tool_use: null,
  service_tier: null,
  speed: null,
};

const textBlock: Anthropic.TextBlock = { type: 'text', text: 'hi', citations: null };
const toolUseBlock: Anthropic.ToolUseBlock = {
  type: 'tool_use',
  id: 'toolu_1',
  name: 'get_weather',
  input: ANY,
  caller: { type: 'direct' },
  toolset_name: null,
};

export const MESSAGE: Anthropic.Message = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude',
  content: [textBlock, toolUseBlock],
  container: null,
  diagnostics: null,
  stop_details: null,
  stop_reason: null,
  stop_sequence: null,
  usage,
};

const messageStart: Anthropic.RawMessageStartEvent = { type: 'message_start', message: MESSAGE };
const blockStart: Anthropic.RawContentBlockStartEvent = {
  type: 'content_block_start',
  index: 0,
  // Both block kinds the gateway opens; compareShape picks the one whose `type` matches.
  content_block: [textBlock, toolUseBlock] as unknown as Anthropic.TextBlock,
};
const textDelta: Anthropic.TextDelta = { type: 'text_delta', text: 'h' };
const jsonDelta: Anthropic.InputJSONDelta = { type: 'input_json_delta', partial_json: '{' };
const blockDelta: Anthropic.RawContentBlockDeltaEvent = {
  type: 'content_block_delta',
  index: 0,
  delta: [textDelta, jsonDelta] as unknown as Anthropic.TextDelta,
};
const blockStop: Anthropic.RawContentBlockStopEvent = { type: 'content_block_stop', index: 0 };
const messageDelta: Anthropic.RawMessageDeltaEvent = {
  type: 'message_delta',
  delta: { container: null, stop_details: null, stop_reason: null, stop_sequence: null },
  usage: {
    cache_creation_input_tokens: null,
    cache_read_input_tokens: null,
    input_tokens: null,
    output_tokens: 1,
    output_tokens_details: null,
    server_tool_use: null,
  },
};
const messageStop: Anthropic.RawMessageStopEvent = { type: 'message_stop' };

const errorObjects: ErrorObject[] = [
  { type: 'invalid_request_error', message: 'bad' },
  { type: 'authentication_error', message: 'bad' },
  { type: 'permission_error', message: 'bad' },
  { type: 'not_found_error', message: 'bad' },
  { type: 'rate_limit_error', message: 'bad' },
  { type: 'timeout_error', message: 'bad' },
  { type: 'api_error', message: 'bad' },
  { type: 'overloaded_error', message: 'bad' },
];

export const ERROR: ErrorResponse = {
  type: 'error',
  error: errorObjects as unknown as ErrorObject,
  request_id: null,
};

/**
 * Every stream event by its `type`. `ping` has no SDK type (the SDK's stream skips it); its shape
 * is the documented `{type: "ping"}`. A stream's `error` event carries the error body.
 */
export const STREAM_EVENTS: Readonly<Record<string, unknown>> = {
  message_start: messageStart,
  content_block_start: blockStart,
  content_block_delta: blockDelta,
  content_block_stop: blockStop,
  message_delta: messageDelta,
  message_stop: messageStop,
  ping: { type: 'ping' },
  error: ERROR,
};

export interface ShapeReport {
  /** A field the SDK requires (non-nullable) is missing, or a value is of another kind. */
  mismatches: string[];
  /** Fields the SDK types as nullable that the answer leaves out (the SDK then reads undefined). */
  absentNullable: string[];
  /** Fields the SDK's type does not declare (typed clients ignore them). */
  extras: string[];
}

const kind = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** Holds `actual` to `exemplar`, recursively; an array exemplar lists the variants by `type`. */
export function compareShape(
  actual: unknown,
  exemplar: unknown,
  path = '',
  report: ShapeReport = { mismatches: [], absentNullable: [], extras: [] },
): ShapeReport {
  if (exemplar === ANY || exemplar === null) return report;
  if (Array.isArray(exemplar)) {
    if (!Array.isArray(actual)) {
      // A variant list standing for one object (a content block, a delta).
      const type = (actual as { type?: unknown } | null)?.type;
      const variant = exemplar.find((e) => (e as { type?: unknown }).type === type);
      if (variant === undefined) report.mismatches.push(`${path || '/'}: variant ${String(type)} not known`);
      else compareShape(actual, variant, path, report);
      return report;
    }
    actual.forEach((item, i) => {
      compareShape(item, exemplar, `${path}/${i}`, report);
    });
    return report;
  }
  if (kind(actual) !== kind(exemplar)) {
    report.mismatches.push(`${path || '/'}: ${kind(actual)} where the SDK has ${kind(exemplar)}`);
    return report;
  }
  if (kind(exemplar) !== 'object') {
    if (path.endsWith('/type') && actual !== exemplar) report.mismatches.push(`${path}: ${String(actual)}`);
    return report;
  }
  const a = actual as Record<string, unknown>;
  const e = exemplar as Record<string, unknown>;
  for (const [key, value] of Object.entries(e)) {
    if (key in a) compareShape(a[key], value, `${path}/${key}`, report);
    else if (value === null) report.absentNullable.push(`${path}/${key}`);
    else report.mismatches.push(`${path}/${key}: missing`);
  }
  for (const key of Object.keys(a)) if (!(key in e)) report.extras.push(`${path}/${key}`);
  return report;
}
