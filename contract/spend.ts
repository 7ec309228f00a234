/**
 * Spend accounting shared by gateways (which record spend) and the operator (which reports it in
 * SpendCap status). Money is counted in integer micro-dollars so INCRBY stays exact; periods are
 * aligned to UTC (weeks start Monday 00:00 UTC).
 */
import type { SpendPeriod } from './vocabulary.ts';

export interface PeriodWindow {
  start: Date;
  end: Date;
}

export function periodWindow(period: SpendPeriod, now: Date): PeriodWindow {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  switch (period) {
    case 'hourly': {
      const start = new Date(Date.UTC(y, m, d, now.getUTCHours()));
      return { start, end: new Date(start.getTime() + 3_600_000) };
    }
    case 'daily': {
      const start = new Date(Date.UTC(y, m, d));
      return { start, end: new Date(Date.UTC(y, m, d + 1)) };
    }
    case 'weekly': {
      const sinceMonday = (now.getUTCDay() + 6) % 7;
      const start = new Date(Date.UTC(y, m, d - sinceMonday));
      return { start, end: new Date(Date.UTC(y, m, d - sinceMonday + 7)) };
    }
    case 'monthly':
      return { start: new Date(Date.UTC(y, m, 1)), end: new Date(Date.UTC(y, m + 1, 1)) };
  }
}

/** All spend keys of a project share its hash tag, so a reservation script touches one Redis Cluster slot. */
const tag = (projectId: string): string => `switchyard:{p:${projectId}}`;

export const SPEND_KEYS = {
  project: (projectId: string, period: SpendPeriod, start: Date): string =>
    `${tag(projectId)}:spend:project:${period}:${Math.floor(start.getTime() / 1000)}`,
  slot: (projectId: string, workflow: string, slot: string, period: SpendPeriod, start: Date): string =>
    `${tag(projectId)}:spend:slot:${encodeURIComponent(workflow)}:${slot}:${period}:${Math.floor(start.getTime() / 1000)}`,
} as const;

export const MICRO_USD = 1_000_000;

/** "12.345678" → 12345678 micro-dollars (truncating below a micro-dollar). */
export function usdToMicros(usd: string): number {
  const [whole = '0', frac = ''] = usd.split('.');
  return Number(whole) * MICRO_USD + Number(`${frac}000000`.slice(0, 6));
}

/** 12345678 → "12.345678"; trailing zeros trimmed to at least two decimals. */
export function microsToUsd(micros: number): string {
  const whole = Math.floor(micros / MICRO_USD);
  const frac = String(micros % MICRO_USD)
    .padStart(6, '0')
    .replace(/0{1,4}$/, '');
  return `${whole}.${frac.length < 2 ? frac.padEnd(2, '0') : frac}`;
}

export type SpendState = 'ok' | 'warning' | 'critical' | 'exceeded';

export function spendState(spentMicros: number, limitMicros: number): SpendState {
  if (spentMicros >= limitMicros) return 'exceeded';
  if (spentMicros >= limitMicros * 0.9) return 'critical';
  if (spentMicros >= limitMicros * 0.8) return 'warning';
  return 'ok';
}
