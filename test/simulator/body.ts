/** Request body reading and decoding (JSON or multipart) shared by every provider. */
import type { IncomingMessage } from 'node:http';
import { boundaryOf, parseMultipart } from './multipart.ts';

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export type Decoded = { ok: true; body: unknown } | { ok: false; error: string };

export function decodeJson(raw: Buffer): Decoded {
  try {
    return { ok: true, body: JSON.parse(raw.toString('utf8')) };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

export interface MultipartBody {
  fields: Record<string, string>;
  files: { field: string; filename: string; contentType: string; size: number; data: Buffer }[];
}

export function decodeMultipart(raw: Buffer, contentType: string | undefined): Decoded {
  const boundary = boundaryOf(contentType);
  if (!boundary) return { ok: false, error: 'Content-Type must be multipart/form-data with a boundary' };
  try {
    const body: MultipartBody = { fields: {}, files: [] };
    for (const part of parseMultipart(raw, boundary)) {
      if (part.filename !== undefined) {
        body.files.push({
          field: part.name,
          filename: part.filename,
          contentType: part.contentType ?? 'application/octet-stream',
          size: part.data.length,
          data: part.data,
        });
      } else {
        body.fields[part.name] = part.data.toString('utf8');
      }
    }
    return { ok: true, body };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

/** The multipart body as recorded: file bytes replaced by their size. */
export function recordableMultipart(body: MultipartBody): unknown {
  return {
    fields: body.fields,
    files: body.files.map(({ field, filename, contentType, size }) => ({
      field,
      filename,
      contentType,
      size,
    })),
  };
}
