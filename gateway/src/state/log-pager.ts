import {
  InvalidCursorError,
  type LogPage,
  type LogQuery,
  type RequestLogEntry,
  requestLogEntry,
} from './types.ts';

/**
 * Newest-first paging over a project's request log, shared by both adapters so they filter, bound
 * and paginate alike. The store hands out rows `[id, json]` older than a position; ids grow with
 * insertion. A page examines at most `scanLimit` rows, so a filter that matches little cannot make
 * one query walk the whole log: it returns what it found and a cursor to continue from.
 */

export type LogRow = readonly [id: string, json: string];

/** Rows strictly older than `before` (the newest when null), newest first, at most `count`. */
export type FetchOlder = (before: string | null, count: number) => Promise<readonly LogRow[]>;

export interface PagerOptions {
  /** Cursor tag of the backend ('m' memory, 'r' redis): a cursor from the other one is foreign. */
  backend: 'm' | 'r';
  projectId: string;
  /** Whether a decoded position is an id this backend could have issued. */
  isId: (id: string) => boolean;
  /** Rows examined per page at most. */
  scanLimit: number;
  /** Called for rows that do not parse or validate as an entry (skipped, never returned). */
  onInvalid?: (id: string, problem: string) => void;
}

const CURSOR_VERSION = '1';

/** FNV-1a, so a truncated or edited cursor is told apart from one that merely points elsewhere. */
function check(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(36);
}

export function encodeCursor(backend: string, projectId: string, id: string): string {
  const body = `${backend}${CURSOR_VERSION}\n${projectId}\n${id}`;
  return Buffer.from(`${body}\n${check(body)}`).toString('base64url');
}

/** The position inside a cursor; InvalidCursorError when it was not issued for this backend and project. */
export function decodeCursor(
  cursor: string,
  opts: Pick<PagerOptions, 'backend' | 'projectId' | 'isId'>,
): string {
  const bytes = Buffer.from(cursor, 'base64url');
  // Node's decoder skips characters outside the alphabet; a cursor must round-trip exactly.
  if (cursor.length === 0 || bytes.toString('base64url') !== cursor)
    throw new InvalidCursorError('cursor is not one this API issued');
  const text = bytes.toString('utf8');
  const cut = text.lastIndexOf('\n');
  const parts = text.slice(0, cut).split('\n');
  if (cut < 0 || text.slice(cut + 1) !== check(text.slice(0, cut)))
    throw new InvalidCursorError('cursor is damaged');
  if (parts.length !== 3 || parts[0] !== `${opts.backend}${CURSOR_VERSION}`)
    throw new InvalidCursorError('cursor is not one this API issued');
  if (parts[1] !== opts.projectId) throw new InvalidCursorError('cursor belongs to another project');
  const id = parts[2] ?? '';
  if (!opts.isId(id)) throw new InvalidCursorError('cursor is not one this API issued');
  return id;
}

function hasFilters(q: LogQuery): boolean {
  return (
    q.workflow !== undefined ||
    q.status !== undefined ||
    q.session_id !== undefined ||
    q.channel_id !== undefined ||
    q.type !== undefined ||
    q.from !== undefined ||
    q.to !== undefined
  );
}

export function matchesLogQuery(e: RequestLogEntry, q: LogQuery): boolean {
  if (q.workflow !== undefined && e.workflow !== q.workflow) return false;
  if (q.status !== undefined && e.status !== q.status) return false;
  if (q.session_id !== undefined && e.session_id !== q.session_id) return false;
  if (q.channel_id !== undefined && e.channel_id !== q.channel_id) return false;
  if (q.type !== undefined && e.type !== q.type) return false;
  if (q.from !== undefined || q.to !== undefined) {
    const t = Date.parse(e.time);
    if (q.from !== undefined && !(t >= q.from)) return false;
    if (q.to !== undefined && !(t <= q.to)) return false;
  }
  return true;
}

function parseEntry(json: string): RequestLogEntry | string {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return 'not JSON';
  }
  const parsed = requestLogEntry.safeParse(raw);
  return parsed.success
    ? parsed.data
    : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
}

export async function pageLogs(fetch: FetchOlder, q: LogQuery, opts: PagerOptions): Promise<LogPage> {
  const limit = Math.max(1, Math.floor(q.limit));
  let before = q.cursor === undefined ? null : decodeCursor(q.cursor, opts);
  const filtered = hasFilters(q);
  // One row past a full page tells whether an older page exists, so the last page says so.
  let budget = Math.max(opts.scanLimit, limit + 1);
  const entries: RequestLogEntry[] = [];
  let lastReturned: string | null = null;
  const cursor = (id: string) => encodeCursor(opts.backend, opts.projectId, id);
  while (budget > 0) {
    const missing = limit - entries.length;
    const want = Math.min(budget, filtered ? Math.max(100, missing * 4) : missing + 1);
    const rows = await fetch(before, want);
    for (const [id, json] of rows) {
      budget--;
      before = id;
      const e = parseEntry(json);
      if (typeof e === 'string') {
        opts.onInvalid?.(id, e);
        continue;
      }
      if (!matchesLogQuery(e, q)) continue;
      if (entries.length === limit && lastReturned !== null)
        return { entries, next_cursor: cursor(lastReturned) };
      entries.push(e);
      lastReturned = id;
    }
    if (rows.length < want) return { entries, next_cursor: null };
  }
  return { entries, next_cursor: before === null ? null : cursor(before) };
}
