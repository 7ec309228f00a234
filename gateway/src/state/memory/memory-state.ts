import type { Logger } from 'pino';
import { logEntryJson } from '../entry-json.ts';
import { USAGE_TTL_SEC } from '../keys.ts';
import { type LogRow, pageLogs } from '../log-pager.ts';
import type { LogPage, LogQuery, RuntimeState, StateWrite, UsageQuery, UsageRow } from '../types.ts';
import { foldUsage, forEachUsageField, usageHours } from '../usage-fields.ts';

/**
 * Runtime state inside the process, for embedded mode without REDIS_URL. Entries are kept as JSON,
 * as Redis keeps them, so neither the writer nor a reader can change a stored entry by mutating the
 * object it holds, and both adapters validate entries on the way out alike.
 */

/** A capped log: ids are a per-project sequence, oldest first; `head` skips trimmed rows cheaply. */
class ProjectLog {
  ids: number[] = [];
  jsons: string[] = [];
  head = 0;
  next = 1;

  add(json: string, cap: number): void {
    this.ids.push(this.next++);
    this.jsons.push(json);
    const keep = Math.max(1, cap);
    if (this.ids.length - this.head > keep) this.head = this.ids.length - keep;
    if (this.head > 1024 && this.head * 2 > this.ids.length) {
      this.ids = this.ids.slice(this.head);
      this.jsons = this.jsons.slice(this.head);
      this.head = 0;
    }
  }

  /** Rows older than `before`, newest first. */
  older(before: number | null, count: number): LogRow[] {
    let end = this.ids.length; // exclusive
    if (before !== null) {
      let lo = this.head;
      let hi = this.ids.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((this.ids[mid] ?? 0) < before) lo = mid + 1;
        else hi = mid;
      }
      end = lo;
    }
    const rows: LogRow[] = [];
    for (let i = end - 1; i >= this.head && rows.length < count; i--)
      rows.push([String(this.ids[i]), this.jsons[i] ?? '']);
    return rows;
  }
}

type Hours = Map<number, Map<string, number>>;

const addField = (fields: Map<string, number>, field: string, by: number) =>
  fields.set(field, (fields.get(field) ?? 0) + by);

export interface MemoryStateOptions {
  logger: Logger;
  /** Rows a log page examines at most (see log-pager.ts). */
  scanLimit?: number;
}

export class MemoryRuntimeState implements RuntimeState {
  readonly backend = 'memory' as const;
  readonly redis = undefined;
  readonly answerRedis = undefined;
  readonly #logs = new Map<string, ProjectLog>();
  readonly #usage = new Map<string, Hours>();
  readonly #logger: Logger;
  readonly #scanLimit: number;

  constructor(opts: MemoryStateOptions) {
    this.#logger = opts.logger;
    this.#scanLimit = opts.scanLimit ?? 1000;
  }

  write(s: StateWrite): void {
    try {
      if (s.log) {
        let log = this.#logs.get(s.projectId);
        if (!log) {
          log = new ProjectLog();
          this.#logs.set(s.projectId, log);
        }
        log.add(logEntryJson(s.log), s.logCap);
      }
      if (s.usage) {
        let hours = this.#usage.get(s.projectId);
        if (!hours) {
          hours = new Map();
          this.#usage.set(s.projectId, hours);
        }
        let fields = hours.get(s.usage.hourStartSec);
        if (!fields) {
          fields = new Map();
          hours.set(s.usage.hourStartSec, fields);
          // Expire like the Redis hashes do, measured from the newest hour seen.
          for (const h of hours.keys()) if (h < s.usage.hourStartSec - USAGE_TTL_SEC) hours.delete(h);
        }
        forEachUsageField(s.usage, addField, fields);
      }
    } catch (err) {
      // settle never throws into the request that already answered (a cyclic customer_data, say).
      this.#logger.error({ msg: 'state: settlement not recorded', project: s.projectId, err: String(err) });
    }
  }

  async queryLogs(projectId: string, q: LogQuery): Promise<LogPage> {
    const log = this.#logs.get(projectId);
    return pageLogs(
      async (before, count) => (log ? log.older(before === null ? null : Number(before), count) : []),
      q,
      {
        backend: 'm',
        projectId,
        isId: (id) => /^[1-9][0-9]{0,15}$/.test(id),
        scanLimit: this.#scanLimit,
        onInvalid: (id, problem) =>
          this.#logger.warn({ msg: 'state: skipped an invalid log entry', projectId, id, problem }),
      },
    );
  }

  async queryUsage(projectId: string, q: UsageQuery): Promise<UsageRow[]> {
    const wanted = usageHours(q);
    const hours = this.#usage.get(projectId);
    const found: [number, Map<string, number>][] = [];
    if (hours)
      for (const h of wanted) {
        const fields = hours.get(h);
        if (fields) found.push([h, fields]);
      }
    return foldUsage(found, q);
  }

  async flush(): Promise<void> {}

  async close(): Promise<void> {}
}
