import { z } from 'zod';
import { GatewayError } from '../errors/index.ts';

/*
 * The name rule of tools, on every surface: OpenAI's (1-64 letters, digits, _ or -), the strictest
 * of the providers a tool may be sent to, so a name the gateway takes is one each of them takes.
 * Structured-output schema names sent upstream follow it too.
 */
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const NOT_NAME = /[^a-zA-Z0-9_-]/g;
const RULE = 'names are 1-64 letters, digits, _ or -';

export const isToolName = (v: unknown): v is string => typeof v === 'string' && NAME.test(v);

/** A tool's `name` in a request schema. */
export const toolName = z.string().regex(NAME, `tool ${RULE}`);

/** The name of a tool a translation reads from an unchecked list, or invalid_request at `param`. */
export function checkedToolName(v: unknown, param: string): string {
  if (!isToolName(v)) throw new GatewayError('invalid_request', `Invalid tool: ${RULE}.`, { param });
  return v;
}

/** `text` made to follow the rule (other characters as `_`, cut at 64); `fallback` if nothing is left. */
export const asRuleName = (text: string, fallback: string): string =>
  text.replace(NOT_NAME, '_').slice(0, 64) || fallback;
