/** Small helpers for the simulator's own tests (not a test file itself). */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export interface SseEvent {
  event?: string;
  data: string;
}

/** Splits an SSE body into events; accepts LF and CRLF line ends. */
export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (!block.trim()) continue;
    const ev: SseEvent = { data: '' };
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event: ')) ev.event = line.slice(7);
      else if (line.startsWith('data: ')) ev.data += line.slice(6);
    }
    events.push(ev);
  }
  return events;
}

export function jsonEvents(text: string): unknown[] {
  return parseSse(text)
    .filter((e) => e.data !== '[DONE]')
    .map((e) => JSON.parse(e.data) as unknown);
}

export function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Reads a JSON body as the shape the test expects (the test's assertions check it). */
export async function json<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

/** Ajv's verdict on a simulated value: [] when it conforms, else the errors (readable in a failed expect). */
export function schemaErrors(schema: object | boolean, value: unknown): string[] {
  const validate = ajv.compile(schema);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`);
}
