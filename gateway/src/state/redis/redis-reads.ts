import type { Logger } from 'pino';
import type { StateClient } from '../connect.ts';
import { LOG_FIELD, STATE_KEYS } from '../keys.ts';
import { type LogRow, pageLogs } from '../log-pager.ts';
import {
  type LogPage,
  type LogQuery,
  StateUnavailableError,
  type UsageQuery,
  type UsageRow,
} from '../types.ts';
import { foldUsage, usageHours } from '../usage-fields.ts';

/**
 * Stream ids are Redis's clock at insertion, entry times the gateway's at completion; an entry is
 * never inserted before it finished, so ids older than `from` minus this skew allowance cannot hold
 * an entry from `from` on, and a time-bounded page stops there instead of scanning further back.
 */
const CLOCK_SKEW_MS = 10 * 60_000;

const STREAM_ID = /^[0-9]{1,20}-[0-9]{1,20}$/;

async function read<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw new StateUnavailableError(`runtime state unavailable (${what}): ${String(err)}`, { cause: err });
  }
}

/** One page of a project's request log, newest first, from its stream (log-pager.ts pages it). */
export function readLogs(
  client: StateClient,
  projectId: string,
  q: LogQuery,
  opts: { scanLimit: number; logger: Logger },
): Promise<LogPage> {
  const key = STATE_KEYS.logs(projectId);
  const oldest = q.from === undefined ? '-' : String(Math.max(0, Math.floor(q.from) - CLOCK_SKEW_MS));
  const fetch = async (before: string | null, count: number): Promise<LogRow[]> => {
    const reply = await read('request logs', () =>
      client.xrevrange(key, before === null ? '+' : `(${before}`, oldest, 'COUNT', count),
    );
    return reply.map(([id, fields]): LogRow => {
      const at = fields.indexOf(LOG_FIELD);
      return [id, at >= 0 && at % 2 === 0 ? (fields[at + 1] ?? '') : ''];
    });
  };
  return pageLogs(fetch, q, {
    backend: 'r',
    projectId,
    isId: (id) => STREAM_ID.test(id),
    scanLimit: opts.scanLimit,
    onInvalid: (id, problem) =>
      opts.logger.warn({ msg: 'state: skipped an invalid log entry', projectId, id, problem }),
  });
}

/** A project's usage over `q`, from one hash per hour read in one pipeline. */
export async function readUsage(client: StateClient, projectId: string, q: UsageQuery): Promise<UsageRow[]> {
  const hours = usageHours(q);
  const results = await read('usage', () => {
    const p = client.pipeline();
    for (const h of hours) p.hgetall(STATE_KEYS.usage(projectId, h));
    return p.exec();
  });
  const found: [number, [string, string][]][] = [];
  for (const [i, h] of hours.entries()) {
    const [err, fields] = results?.[i] ?? [new Error('no reply'), null];
    if (err)
      throw new StateUnavailableError(`runtime state unavailable (usage): ${String(err)}`, { cause: err });
    if (fields && typeof fields === 'object') {
      const entries = Object.entries(fields as Record<string, string>);
      if (entries.length > 0) found.push([h, entries]);
    }
  }
  return foldUsage(found, q);
}
