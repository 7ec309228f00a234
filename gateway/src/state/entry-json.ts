import type { RequestLogEntry } from './types.ts';

/**
 * The stored form of a request-log entry, as both adapters keep it. Its free-form parts
 * (customer_data, bodies, details) carry data the client sent; when they cannot be serialised, the
 * entry is still stored without them, saying so, rather than lost: every request keeps its entry.
 */
export function logEntryJson(entry: RequestLogEntry): string {
  try {
    return JSON.stringify(entry);
  } catch (err) {
    const { bodies: _bodies, details: _details, ...rest } = entry;
    return JSON.stringify({
      ...rest,
      customer_data: {},
      details: { not_recorded: `customer_data, bodies and details could not be serialised: ${String(err)}` },
    });
  }
}
