/**
 * The bench runs a gateway pod as the chart does: the chart's Node flags and allocator, and its
 * container memory limit as a real memory cgroup, so that Node sizes V8's heap from the limit as it does in a pod.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryCgroup } from '../../bench/lib/cgroup.ts';
import {
  chartPodRuntime,
  describeRuntime,
  gatewayRuntime,
  JEMALLOC,
  quantityMb,
} from '../../bench/lib/pod-runtime.ts';

const ROOT = join(import.meta.dirname, '../..');

describe('the gateway pod runtime the bench uses', () => {
  it('reads Kubernetes memory quantities', () => {
    expect(quantityMb('512Mi')).toBe(512);
    expect(quantityMb('1Gi')).toBe(1024);
    expect(quantityMb(536870912)).toBe(512);
    expect(quantityMb('1000M')).toBeCloseTo(953.67, 2);
    expect(() => quantityMb('lots')).toThrow(/not a memory quantity/);
  });

  it("takes the chart's nodeFlags, allocator and memory limit; the command line replaces them", () => {
    const chart = chartPodRuntime(ROOT);
    expect(chart.nodeFlags).toEqual(['--max-semi-space-size=16', '--no-memory-reducer-favors-memory']);
    const jemalloc = [
      '/usr/lib/x86_64-linux-gnu',
      '/usr/lib/aarch64-linux-gnu',
      '/usr/lib64',
      '/usr/lib',
      '/usr/local/lib',
    ].some((d) => existsSync(join(d, JEMALLOC)));
    // The chart preloads jemalloc; a machine without it runs glibc's defaults and the report says so.
    expect(chart.mallocEnv).toEqual(
      jemalloc
        ? { LD_PRELOAD: JEMALLOC, MALLOC_CONF: 'narenas:1,tcache:false,dirty_decay_ms:250,muzzy_decay_ms:0' }
        : {},
    );
    expect(chart.allocatorNote).toEqual(jemalloc ? undefined : expect.stringMatching(/libjemalloc2/));
    expect(chart.memoryLimitMb).toBe(512);
    const asChart = gatewayRuntime(ROOT, { memoryLimit: 'none' });
    expect(asChart.process).toEqual({ nodeFlags: chart.nodeFlags, env: chart.mallocEnv });
    expect(describeRuntime(asChart.runtime)).toBe(
      jemalloc
        ? '--max-semi-space-size=16 --no-memory-reducer-favors-memory; LD_PRELOAD=libjemalloc.so.2 MALLOC_CONF=narenas:1,tcache:false,dirty_decay_ms:250,muzzy_decay_ms:0; no memory limit'
        : `--max-semi-space-size=16 --no-memory-reducer-favors-memory; glibc malloc defaults; no memory limit; ${chart.allocatorNote}`,
    );
    // A chart on glibc (a base commit's, or allocator: glibc): its malloc settings.
    const glibcRoot = mkdtempSync(join(tmpdir(), 'switchyard-chart-'));
    mkdirSync(join(glibcRoot, 'charts/switchyard'), { recursive: true });
    writeFileSync(
      join(glibcRoot, 'charts/switchyard/values.yaml'),
      'gateway:\n  allocator: glibc\n  mallocEnv: { MALLOC_ARENA_MAX: "2" }\n',
    );
    expect(chartPodRuntime(glibcRoot)).toEqual({
      nodeFlags: [],
      mallocEnv: { MALLOC_ARENA_MAX: '2' },
      memoryLimitMb: undefined,
    });
    rmSync(glibcRoot, { recursive: true });
    const none = gatewayRuntime(ROOT, { flags: '', malloc: 'none', memoryLimit: 'none' });
    expect(none).toMatchObject({
      process: { nodeFlags: [], env: {} },
      runtime: { memoryLimitMb: undefined },
    });
    expect(none.process.cgroup).toBeUndefined();
    const other = gatewayRuntime(ROOT, { flags: '--max-semi-space-size=4 --jitless', memoryLimit: 'none' });
    expect(other.process.nodeFlags).toEqual(['--max-semi-space-size=4', '--jitless']);
    expect(() => gatewayRuntime(ROOT, { malloc: 'jemalloc', memoryLimit: 'none' })).toThrow(/chart or none/);
    expect(chartPodRuntime('/nonexistent')).toEqual({
      nodeFlags: [],
      mallocEnv: {},
      memoryLimitMb: undefined,
    });
  });

  it('starts a process that Node sees as limited to the memory limit, or says why it cannot', () => {
    const cg = memoryCgroup(384, `switchyard-test-${process.pid}`);
    if (typeof cg === 'string') {
      // A machine without root or a memory controller: the report states this reason.
      expect(cg).toMatch(/cgroup/);
      return;
    }
    try {
      const { cmd, args } = cg.wrap(process.execPath, [
        '-e',
        'const v8 = require("node:v8"); console.log(JSON.stringify({ limit: process.constrainedMemory(), heap: v8.getHeapStatistics().heap_size_limit }))',
      ]);
      const seen = JSON.parse(execFileSync(cmd, args, { encoding: 'utf8' })) as {
        limit: number;
        heap: number;
      };
      process.stdout.write(
        `cgroup v${cg.version}: constrainedMemory ${seen.limit / 2 ** 20} MiB, V8 heap limit ${Math.round(seen.heap / 2 ** 20)} MiB\n`,
      );
      expect(seen.limit).toBe(384 * 2 ** 20);
      // V8 sized from the limit, not from the machine's memory.
      expect(seen.heap).toBeLessThan(384 * 2 ** 20);
    } finally {
      cg.remove();
    }
  });
});
