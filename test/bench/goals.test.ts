/**
 * The goals table of `make bench`: rendered from a run into the report, and carried from the latest
 * report into docs/benchmarks.md between its markers (scripts/bench-goals.ts, which make bench runs).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GOALS_BEGIN, GOALS_END, goalsBlock, goalsOfReport, withGoals } from '../../bench/goals.ts';
import type { InterleavedResult } from '../../bench/interleaved.ts';
import type { LatencyPoint } from '../../bench/load.ts';
import type { BenchResult, SurfaceResult } from '../../bench/orchestrator.ts';
import { markdown } from '../../bench/report.ts';

const root = join(import.meta.dirname, '../..');

const point = (p50: number, p99: number): LatencyPoint => ({
  p50,
  p90: p99,
  p99,
  max: p99,
  concurrency: 1,
  requests: 1000,
  errors: 0,
  rps: 1000 / p50,
});
const streams = (ttft: number) => ({
  streams: 10,
  errors: 0,
  ttft: { p50: ttft, p90: ttft, p99: ttft, max: ttft },
  gap: { p50: 20, p90: 20, p99: 21, max: 22 },
  eventsPerStream: 64,
});

/** One row: its c1 latency at delay 0, saturated req/s, CPU per request and first token. */
function surface(name: string, c1: [number, number], rps: number, cpu: number, ttft: number): SurfaceResult {
  return {
    name,
    target: name,
    delays: [{ delayMs: 0, c1: point(...c1), cHigh: point(5, 20) }],
    throughput: { maxRps: rps, p99AtMax: 20, connectionsAtMax: 50, limitMs: 50, points: [] },
    cpuPerRequestUs: cpu,
    stream: streams(ttft),
    streamConcurrent: streams(ttft),
  };
}

const target = (name: string, surfaces: SurfaceResult[]) => ({
  name,
  startupMs: 400,
  rssMb: { idle: 82, peak: 148, after: 120 },
  loadavgBefore: 0.5,
  surfaces,
});

/** Two rounds of the stretch; the second is slower all round, the ratios are the same. */
function stretch(): InterleavedResult {
  const w = (
    target: InterleavedResult['windows'][number]['target'],
    round: number,
    rps: number,
    cpu: number,
  ) => ({
    target,
    round,
    rps,
    p99: 20,
    errors: 0,
    cpuPerRequestUs: cpu,
    mainThreadUsPerRequest: cpu,
    mainThreadBusy: 0.97,
  });
  const l = (
    target: NonNullable<InterleavedResult['latency']>[number]['target'],
    round: number,
    p50: number,
  ) => ({
    target,
    round,
    p50,
    p99: p50 * 2,
    requests: 2000,
    errors: 0,
  });
  return {
    rounds: 2,
    windowS: 4,
    rewarmS: 1,
    warmUpS: 10,
    connections: 50,
    c1WindowS: 2,
    windows: [0, 1].flatMap((r) => {
      const k = r + 1;
      return [
        w('passthrough', r, 12000 / k, 80 * k),
        w('gateway stateless compat', r, 6600 / k, 150 * k),
        w('gateway compat', r, 6000 / k, 165 * k),
        w('gateway responses', r, 5400 / k, 198 * k),
        w('gateway messages', r, 5800 / k, 173.25 * k),
        w('portkey', r, 1600 / k, 560 * k),
      ];
    }),
    latency: [0, 1].flatMap((r) => {
      const d = r * 0.5;
      return [
        l('direct', r, 0.2 + d),
        l('gateway compat', r, 0.6 + d),
        l('gateway cache hit', r, 0.25 + d),
        l('gateway responses', r, 0.7 + d),
        l('gateway messages', r, 0.62 + d),
      ];
    }),
    streamsPerRound: 1,
    streams: [0, 1].flatMap((round) => [
      { target: 'direct' as const, round, ttftMs: [1.0], errors: 0 },
      { target: 'passthrough' as const, round, ttftMs: [1.6], errors: 0 },
      { target: 'gateway compat' as const, round, ttftMs: [2.0], errors: 0 },
    ]),
  };
}

function run(): BenchResult {
  return {
    startedAt: '2026-11-29T06:00:00.000Z',
    durationS: 1100,
    machine: {
      cpus: 2,
      model: 'test',
      node: 'v24',
      platform: 'linux x64',
      loadavgStart: [0.42, 0.3, 0.2],
      loadavgEnd: [1, 1, 1],
      busy: false,
      note: 'The machine was quiet when the run started.',
    },
    options: {
      delays: [0],
      targets: ['direct', 'passthrough', 'stateless', 'gateway', 'portkey'],
      durationS: 5,
      throughputSteps: 3,
      p99LimitMs: 50,
      highConcurrency: 50,
      streamChunks: 64,
      chunkIntervalMs: 20,
      streams: 10,
      streamConcurrency: 5,
      warmUp: { targetHighS: 2, surfaceHighS: 5, c1S: 3 },
      pause: { idleS: 15, burstS: 3 },
    },
    simulatorStartupMs: 100,
    targets: [
      target('direct', [surface('direct', [0.2, 0.4], 28000, 36, 1.0)]),
      target('passthrough', [surface('passthrough', [0.45, 0.9], 12000, 84, 1.3)]),
      target('gateway stateless', [surface('gateway stateless compat', [0.55, 1.1], 6600, 150, 1.9)]),
      target('gateway', [
        surface('gateway compat', [0.6, 1.2], 6000, 165, 2.0),
        surface('gateway responses', [0.8, 1.6], 5000, 198, 2.1),
        surface('gateway messages', [0.62, 1.3], 5800, 173.25, 2.0),
        surface('gateway cache hit', [0.3, 0.6], 9000, 100, 1.2),
      ]),
      target('portkey', [surface('portkey', [2, 4], 1600, 560, 3)]),
    ],
    interleaved: stretch(),
  };
}

/** The report's goal rows as cells: goal → [target, the rows, the stretch]. */
function goalCells(md: string): Map<string, string[]> {
  const [table] = goalsOfReport(md).tables;
  const cells = new Map<string, string[]>();
  for (const line of table!.slice(2)) {
    const [name, ...rest] = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    cells.set(name!, rest);
  }
  return cells;
}

describe('the goals of make bench', () => {
  it("checks each goal from the rows and from the stretch's rounds", () => {
    const g = goalCells(markdown(run()));
    expect(g.get('CPU per request / stateless (the price of state)')).toEqual([
      '≤ 1.15×',
      '1.10 ✅',
      '1.10 ✅',
    ]);
    expect(g.get('throughput / pass-through')).toEqual(['≥ 0.6×', '0.50 ❌', '0.50 ❌']);
    expect(g.get('throughput / Portkey')).toEqual(['≥ 3.5×', '3.75 ✅', '3.75 ✅']);
    expect(g.get('added p50, concurrency 1 (ms)')).toEqual(['≤ 0.5', '0.40 ✅', '0.40 ✅']);
    // The first token: the gateway's overhead over the bare hop's, in the same rows or stretch.
    expect(g.get("stream TTFT overhead over the pass-through's (ms)")).toEqual([
      '≤ 0.3',
      '0.70 ❌',
      '0.40 ❌',
    ]);
    // Responses: CPU 198 / 165 = 1.2; added p50 (0.8 - 0.2) / (0.6 - 0.2) = 1.5 in the rows, 1.25 in the stretch.
    expect(g.get('responses / chat completions: CPU per request')).toEqual(['≤ 1.1×', '1.20 ❌', '1.20 ❌']);
    expect(g.get('responses / chat completions: added p50, concurrency 1')).toEqual([
      '≤ 1.2×',
      '1.50 ❌',
      '1.25 ❌',
    ]);
    expect(g.get('messages / chat completions: CPU per request')).toEqual(['≤ 1.1×', '1.05 ✅', '1.05 ✅']);
    expect(g.get('messages / chat completions: added p50, concurrency 1')).toEqual([
      '≤ 1.1×',
      '1.05 ✅',
      '1.05 ✅',
    ]);
    expect(g.get('RSS peak (MB)')).toEqual(['≤ 200', '148.00 ✅', '']);
  });

  it('reads the run and its goal tables from a report, and refuses what is not one', () => {
    const { run: described, tables } = goalsOfReport(markdown(run()));
    expect(described).toBe(
      'The run of 2026-11-29T06:00:00.000Z (1-minute load average 0.42 at its start, 5 s per load point).',
    );
    // The goals, and the Responses and Messages rows against chat completions.
    expect(tables).toHaveLength(2);
    expect(tables[1]![0]).toMatch(/^\| surface \|/);
    expect(() => goalsOfReport('# Something else\n')).toThrow(/not a make bench report/);
    expect(() => goalsOfReport('# Switchyard benchmark — x\n\nno table\n')).toThrow(/no goals table/);
  });

  it('replaces what stands between the markers and nothing else, the same on a second pass', () => {
    const doc = `# Benchmarks\n\nbefore\n\n${GOALS_BEGIN}\nold table\n${GOALS_END}\n\nafter\n`;
    const block = goalsBlock(markdown(run()), 'bench/results/latest.md');
    const once = withGoals(doc, block);
    expect(once.startsWith('# Benchmarks\n\nbefore\n\n<!-- goals:begin -->\n')).toBe(true);
    expect(once.endsWith('<!-- goals:end -->\n\nafter\n')).toBe(true);
    expect(once).not.toContain('old table');
    expect(once).toContain('| throughput / Portkey | ≥ 3.5× |');
    expect(withGoals(once, block)).toBe(once);
    expect(() => withGoals('# no markers\n', block)).toThrow(/no <!-- goals:begin -->/);
  });

  it('rewrites a document from a report, and --check tells whether it is current', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-goals-'));
    const results = join(dir, 'latest');
    writeFileSync(`${results}.md`, markdown(run()));
    const doc = join(dir, 'benchmarks.md');
    writeFileSync(doc, `# Benchmarks\n\n${GOALS_BEGIN}\n${GOALS_END}\n`);
    const script = (...args: string[]) =>
      execFileSync(
        process.execPath,
        [join(root, 'scripts/bench-goals.ts'), '--results', results, '--doc', doc, ...args],
        {
          stdio: 'pipe',
        },
      );
    expect(() => script('--check')).toThrow();
    script();
    expect(readFileSync(doc, 'utf8')).toContain('The run of 2026-11-29T06:00:00.000Z');
    script('--check');
  });

  it("docs/benchmarks.md carries the goals table of the repository's latest run", () => {
    // make bench rewrites it after every run; a table edited by hand, or a run not carried over, fails here.
    execFileSync(process.execPath, [join(root, 'scripts/bench-goals.ts'), '--check'], { stdio: 'pipe' });
  });
});
