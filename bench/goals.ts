import { added, byName, f, interleavedFigures, surfaceOverChat, ttftOverDirect } from './figures.ts';
import type { BenchResult } from './orchestrator.ts';

/**
 * The goals of `make bench`, each checked twice: from the rows (each target measured alone, minutes
 * after the others) and from the interleaved stretch (the targets measured in turn, the median over
 * its rounds), which the goals are judged by. The report renders them (bench/report.ts), and
 * docs/benchmarks.md carries the latest run's table between two markers (scripts/bench-goals.ts).
 */

/**
 * A surface of the stateful gateway against chat completions, on the same workflow; `gateway
 * guarded` is chat completions on a twin workflow with a redacting guardrail (cards, phones,
 * e-mail, secrets), whose added latency is a reference only.
 */
export const SURFACE_GOALS: Record<
  'gateway responses' | 'gateway messages' | 'gateway guarded',
  { cpu: number; p50?: number }
> = {
  'gateway responses': { cpu: 1.1, p50: 1.2 },
  'gateway messages': { cpu: 1.1, p50: 1.1 },
  'gateway guarded': { cpu: 1.15 },
};
export type SurfaceName = keyof typeof SURFACE_GOALS;

interface Goal {
  name: string;
  target: string;
  rows: number;
  stretch: number;
  /** How a figure passes; none for a reference. */
  ok?: (v: number) => boolean;
}

function goalList(r: BenchResult): Goal[] {
  const gw = byName(r, 'gateway compat');
  if (!gw) return [];
  const d0 = r.options.delays[0] ?? 0;
  // Fall back to saturated throughput when no rate kept p99 under the limit (a busy machine).
  const rps = (n: string) => {
    const t = byName(r, n)?.s.throughput;
    return t?.maxRps ? t.maxRps : (t?.points[0]?.rps ?? Number.NaN);
  };
  const stateless = byName(r, 'gateway stateless compat');
  const hit = byName(r, 'gateway cache hit');
  const ttft = ttftOverDirect(r, 'gateway compat');
  const ptTtft = ttftOverDirect(r, 'passthrough');
  const x = interleavedFigures(r);
  const none = Number.NaN;
  const surfaces = (Object.keys(SURFACE_GOALS) as (keyof typeof SURFACE_GOALS)[]).flatMap((name) => {
    const rows = surfaceOverChat(r, name);
    const stretch = x.surfaces[name];
    const limit = SURFACE_GOALS[name];
    const label = name === 'gateway guarded' ? 'chat with guardrails' : name.replace('gateway ', '');
    const p50 = limit.p50;
    return [
      {
        name: `${label} / chat completions: CPU per request`,
        target: `≤ ${limit.cpu}×`,
        rows: rows.cpu,
        stretch: stretch.cpu,
        ok: (v: number) => v <= limit.cpu,
      },
      p50 === undefined
        ? {
            name: `${label} / chat completions: added p50, concurrency 1`,
            target: 'reference',
            rows: rows.p50,
            stretch: stretch.p50,
          }
        : {
            name: `${label} / chat completions: added p50, concurrency 1`,
            target: `≤ ${p50}×`,
            rows: rows.p50,
            stretch: stretch.p50,
            ok: (v: number) => v <= p50,
          },
    ];
  });
  return [
    {
      name: 'CPU per request / stateless (the price of state)',
      target: '≤ 1.15×',
      rows: stateless ? gw.s.cpuPerRequestUs / stateless.s.cpuPerRequestUs : none,
      stretch: x.cpu,
      ok: (v) => v <= 1.15,
    },
    {
      name: 'throughput / pass-through',
      target: '≥ 0.6×',
      rows: rps('gateway compat') / rps('passthrough'),
      stretch: x.byPass,
      ok: (v) => v >= 0.6,
    },
    {
      name: 'throughput / Portkey',
      target: '≥ 3.5×',
      rows: rps('gateway compat') / rps('portkey'),
      stretch: x.byPortkey,
      ok: (v) => v >= 3.5,
    },
    {
      name: 'added p50, concurrency 1 (ms)',
      target: '≤ 0.5',
      rows: added(r, gw.s, d0, 'c1', 'p50'),
      stretch: x.p50,
      ok: (v) => v <= 0.5,
    },
    {
      name: 'added p99, concurrency 1 (ms)',
      target: '≤ 2',
      rows: added(r, gw.s, d0, 'c1', 'p99'),
      stretch: x.p99,
      ok: (v) => v <= 2,
    },
    {
      name: 'cache hit, added p50, concurrency 1 (ms)',
      target: '≤ 0.3',
      rows: hit ? added(r, hit.s, d0, 'c1', 'p50') : none,
      stretch: x.hit,
      ok: (v) => v <= 0.3,
    },
    { name: 'stream TTFT overhead p50 (ms)', target: 'reference', rows: ttft, stretch: x.ttft },
    {
      name: "the pass-through's own TTFT overhead p50, the bare hop (ms)",
      target: 'reference',
      rows: ptTtft,
      stretch: x.ptTtft,
    },
    {
      name: "stream TTFT overhead over the pass-through's (ms)",
      target: '≤ 0.3',
      rows: ttft - ptTtft,
      stretch: x.ttft - x.ptTtft,
      ok: (v) => v <= 0.3,
    },
    ...surfaces,
    {
      name: 'chat with guardrails: stream TTFT over chat completions (ms)',
      target: '≤ 0.2',
      rows: ttftOverDirect(r, 'gateway guarded') - ttft,
      stretch: none,
      ok: (v) => v <= 0.2,
    },
    { name: 'RSS idle (MB)', target: '≤ 100', rows: gw.rss.idle, stretch: none, ok: (v) => v <= 100 },
    { name: 'RSS peak (MB)', target: '≤ 200', rows: gw.rss.peak, stretch: none, ok: (v) => v <= 200 },
    {
      name: 'start to first 200 (ms)',
      target: '≤ 1000',
      rows: gw.startupMs,
      stretch: none,
      ok: (v) => v <= 1000,
    },
  ];
}

/** The report's goals table (no lines without a gateway compat row). */
export function goalTable(r: BenchResult): string[] {
  const goals = goalList(r);
  if (!goals.length) return [];
  const cell = (v: number, ok: Goal['ok']) =>
    Number.isNaN(v) ? '' : ok ? `${f(v)} ${ok(v) ? '✅' : '❌'}` : f(v);
  return [
    '| goal (gateway compat unless named; throughput falls back to saturated req/s when no rate kept p99 under the limit) | target | the rows | interleaved (median of rounds) |',
    '|---|---|---|---|',
    ...goals.map(
      (g) => `| ${g.name} | ${g.target} | ${cell(g.rows, g.ok) || 'n/a'} | ${cell(g.stretch, g.ok)} |`,
    ),
  ];
}

export const GOALS_BEGIN = '<!-- goals:begin -->';
export const GOALS_END = '<!-- goals:end -->';

/** The report's sections whose tables the docs carry. */
const GOAL_SECTIONS = [
  '## Goals',
  '## Responses, Messages and guardrails against chat completions',
  // The same section in reports written before the guardrails row.
  '## Responses and Messages against chat completions',
];

/** The run a report describes and its goal tables, read from the report's markdown. */
export function goalsOfReport(md: string): { run: string; tables: string[][] } {
  const lines = md.split('\n');
  const startedAt = /^# Switchyard benchmark — (.+)$/.exec(lines[0] ?? '')?.[1];
  if (!startedAt) throw new Error('not a make bench report: its first line names no run');
  const load = /Load average at start ([\d.]+)/.exec(md)?.[1];
  const perPoint = /(\d+(?:\.\d+)?) s per load point/.exec(md)?.[1];
  const tables: string[][] = [];
  for (const heading of GOAL_SECTIONS) {
    const at = lines.indexOf(heading);
    if (at < 0) continue;
    const table: string[] = [];
    for (const line of lines.slice(at + 1)) {
      if (line.startsWith('|')) table.push(line);
      else if (table.length) break;
    }
    if (table.length) tables.push(table);
  }
  if (!tables.length) throw new Error('the report has no goals table');
  const facts = [
    load ? `1-minute load average ${load} at its start` : undefined,
    perPoint ? `${perPoint} s per load point` : undefined,
  ].filter((x) => x !== undefined);
  return { run: `The run of ${startedAt}${facts.length ? ` (${facts.join(', ')})` : ''}.`, tables };
}

/** What docs/benchmarks.md holds between the markers, for a report read from `source`. */
export function goalsBlock(md: string, source: string): string {
  const { run, tables } = goalsOfReport(md);
  return [
    GOALS_BEGIN,
    `<!-- Written by scripts/bench-goals.ts from ${source} (make bench runs it); the goals are in bench/goals.ts. -->`,
    '',
    run,
    '',
    ...tables.flatMap((t, i) => (i ? ['', ...t] : t)),
    GOALS_END,
  ].join('\n');
}

/** `doc` with what stands between its markers (the markers included) replaced by `block`. */
export function withGoals(doc: string, block: string): string {
  const begin = doc.indexOf(GOALS_BEGIN);
  const end = doc.indexOf(GOALS_END);
  if (begin < 0 || end < begin) throw new Error(`no ${GOALS_BEGIN} … ${GOALS_END} in the document`);
  return doc.slice(0, begin) + block + doc.slice(end + GOALS_END.length);
}
