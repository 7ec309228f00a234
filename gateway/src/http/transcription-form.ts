import type {} from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/index.ts';
import { LIMITS } from '../requests/limits.ts';
import type { NativeBody } from '../requests/native-schema.ts';

const TEXT_FIELDS = ['model', 'language', 'prompt', 'response_format', 'temperature'] as const;

/** Reads the OpenAI transcription upload (multipart/form-data) into the native body shape. */
export async function readTranscriptionForm(req: FastifyRequest): Promise<{ body: NativeBody }> {
  if (!req.isMultipart())
    throw new GatewayError('unsupported_media_type', 'Transcriptions are uploaded as multipart/form-data.', {
      hint: 'Send the audio in a "file" part and the workflow name in "model".',
    });
  const fields: Record<string, string> = {};
  let file: { data: Buffer; filename: string } | undefined;
  try {
    for await (const part of req.parts({
      limits: { fileSize: LIMITS.audioFileBytes, files: 1, fields: 16 },
    })) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') {
          part.file.resume();
          continue;
        }
        const data = await part.toBuffer();
        file = { data, filename: part.filename || 'audio.mp3' };
      } else if (
        (TEXT_FIELDS as readonly string[]).includes(part.fieldname) &&
        typeof part.value === 'string'
      ) {
        fields[part.fieldname] = part.value;
      }
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE')
      throw new GatewayError('payload_too_large', `file exceeds ${LIMITS.audioFileBytes / 1024 / 1024} MB.`, {
        param: 'file',
      });
    throw new GatewayError('invalid_request', `Malformed multipart body: ${(err as Error).message}`);
  }
  if (!fields.model)
    throw new GatewayError('invalid_request', 'model is required: send the workflow name.', {
      param: 'model',
    });
  if (!file || file.data.length === 0)
    throw new GatewayError('invalid_request', 'file is required.', { param: 'file' });
  const format = fields.response_format;
  if (format !== undefined && !['json', 'text', 'verbose_json'].includes(format))
    throw new GatewayError('invalid_request', 'response_format must be json, text or verbose_json.', {
      param: 'response_format',
    });
  return {
    body: {
      model: fields.model,
      file: file.data.toString('base64'),
      filename: file.filename,
      ...(fields.language ? { language: fields.language } : {}),
      ...(fields.prompt ? { prompt: fields.prompt } : {}),
      ...(format ? { response_format: format } : {}),
    },
  };
}
