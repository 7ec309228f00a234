/**
 * Minimal multipart/form-data parser (RFC 7578) for the audio transcription endpoints.
 * Works on Buffers end to end so binary file content survives byte for byte: a part's body ends at the
 * CRLF that precedes the next `--boundary`, never at any byte pattern inside the data.
 */

export interface MultipartPart {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

/** The boundary parameter of a multipart Content-Type, or undefined. */
export function boundaryOf(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data/i.test(contentType)) return undefined;
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m ? (m[1] ?? m[2]) : undefined;
}

function headerParam(header: string, name: string): string | undefined {
  const m = new RegExp(`;\\s*${name}=(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]+))`, 'i').exec(header);
  if (!m) return undefined;
  return m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2];
}

/** Parses the body; throws an Error with a readable message when it is not well-formed. */
export function parseMultipart(body: Buffer, boundary: string): MultipartPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const nextDelimiter = Buffer.from(`\r\n--${boundary}`);
  const parts: MultipartPart[] = [];

  let pos = body.indexOf(delimiter);
  if (pos < 0) throw new Error('multipart body has no opening boundary');
  pos += delimiter.length;

  for (;;) {
    // "--" right after a delimiter closes the body.
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return parts;
    // Transport padding (spaces/tabs) may follow a delimiter before its CRLF.
    while (body[pos] === 0x20 || body[pos] === 0x09) pos++;
    if (body[pos] !== 0x0d || body[pos + 1] !== 0x0a) throw new Error('malformed multipart delimiter line');
    pos += 2;

    const headerEnd = body.indexOf('\r\n\r\n', pos);
    if (headerEnd < 0) throw new Error('multipart part without header terminator');
    const headers = new Map<string, string>();
    for (const line of body.toString('utf8', pos, headerEnd).split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const dataStart = headerEnd + 4;
    const dataEnd = body.indexOf(nextDelimiter, dataStart);
    if (dataEnd < 0) throw new Error('multipart body is not terminated by a closing boundary');

    const disposition = headers.get('content-disposition') ?? '';
    const name = headerParam(disposition, 'name');
    if (!/^form-data/i.test(disposition) || name === undefined) {
      throw new Error('multipart part without Content-Disposition: form-data; name=...');
    }
    const part: MultipartPart = { name, data: body.subarray(dataStart, dataEnd) };
    const filename = headerParam(disposition, 'filename');
    if (filename !== undefined) part.filename = filename;
    const type = headers.get('content-type');
    if (type !== undefined) part.contentType = type;
    parts.push(part);

    pos = dataEnd + nextDelimiter.length;
  }
}
