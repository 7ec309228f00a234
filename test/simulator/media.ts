/** Tiny but well-formed media payloads for the image and speech endpoints. */
import { crc32, deflateSync } from 'node:zlib';
import { fnv1a } from './generate.ts';

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([len, typed, crc]);
}

/** A valid 1x1 grey PNG, built (not pasted) so its CRCs are right; small enough to inline as b64_json. */
export const PNG_1X1: Buffer = (() => {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(1, 0); // width
  ihdr.writeUInt32BE(1, 4); // height
  ihdr.set([8, 0, 0, 0, 0], 8); // 8-bit greyscale, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(Buffer.from([0, 0x80]))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
})();

export const AUDIO_CONTENT_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/** Silent audio whose length grows with the input text (about 60 ms a character, 24 kHz mono 16 bit). */
export function audioBytes(format: string, input: string): Buffer {
  const samples = Math.max(2400, input.length * 1440);
  const seed = fnv1a(input) & 0xff;
  switch (format) {
    case 'wav': {
      const data = samples * 2;
      const b = Buffer.alloc(44 + data);
      b.write('RIFF', 0, 'ascii');
      b.writeUInt32LE(36 + data, 4);
      b.write('WAVEfmt ', 8, 'ascii');
      b.writeUInt32LE(16, 16);
      b.writeUInt16LE(1, 20); // PCM
      b.writeUInt16LE(1, 22); // mono
      b.writeUInt32LE(24_000, 24);
      b.writeUInt32LE(48_000, 28);
      b.writeUInt16LE(2, 32);
      b.writeUInt16LE(16, 34);
      b.write('data', 36, 'ascii');
      b.writeUInt32LE(data, 40);
      return b;
    }
    case 'pcm':
      return Buffer.alloc(samples * 2);
    case 'mp3': {
      // Repeated MPEG-1 Layer III frame headers (128 kbps, 24 kHz is not MPEG-1; 44.1 kHz frames of 417 bytes).
      const frames = Math.max(1, Math.ceil(samples / 1152));
      const b = Buffer.alloc(frames * 417);
      for (let i = 0; i < frames; i++) b.set([0xff, 0xfb, 0x90, 0x64], i * 417);
      return b;
    }
    case 'flac':
      return Buffer.concat([Buffer.from('fLaC'), Buffer.alloc(Math.ceil(samples / 8), seed)]);
    case 'opus':
      return Buffer.concat([Buffer.from('OggS'), Buffer.alloc(Math.ceil(samples / 16), seed)]);
    default: {
      // aac: ADTS frame headers
      const frames = Math.max(1, Math.ceil(samples / 1024));
      const b = Buffer.alloc(frames * 128);
      for (let i = 0; i < frames; i++) b.set([0xff, 0xf1, 0x60, 0x40, 0x10, 0x1f, 0xfc], i * 128);
      return b;
    }
  }
}
