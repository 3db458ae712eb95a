/**
 * Reading a secret from the person at the keyboard: a prompt that does not
 * echo on a terminal, or all of stdin when it is a pipe. Never argv, which
 * every process on the machine can read in /proc.
 */
import { Buffer } from 'node:buffer';
import type { Writable } from 'node:stream';
import { err, type Result } from '@crustcore/kernel';
import { MAX_SECRET_BYTES, SecretMaterial } from './material.js';

export type SecretInputError =
  | { readonly _tag: 'SecretInputCancelled' }
  | { readonly _tag: 'SecretInputEmpty' }
  | { readonly _tag: 'SecretInputTooLong'; readonly maxBytes: number }
  | { readonly _tag: 'SecretInputNotText' };

export interface SecretInputStream extends NodeJS.ReadableStream {
  readonly isTTY?: boolean;
  setRawMode?: (mode: boolean) => unknown;
}

const toMaterial = (bytes: Buffer): Result<SecretInputError, SecretMaterial> => {
  const material = SecretMaterial.fromBytes(bytes);
  bytes.fill(0);
  if (material._tag === 'Right') return material;
  switch (material.left._tag) {
    case 'SecretEmpty':
      return err({ _tag: 'SecretInputEmpty' });
    case 'SecretTooLong':
      return err({ _tag: 'SecretInputTooLong', maxBytes: MAX_SECRET_BYTES });
    case 'SecretNotText':
      return err({ _tag: 'SecretInputNotText' });
  }
};

/** Reads all of a piped stdin; one trailing newline (LF or CRLF) is dropped, as `echo` adds one. */
export async function readSecretFromPipe(
  stdin: NodeJS.ReadableStream,
): Promise<Result<SecretInputError, SecretMaterial>> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLong = false;
  for await (const chunk of stdin) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk as Uint8Array);
    size += bytes.length;
    if (size > MAX_SECRET_BYTES + 2) {
      tooLong = true;
      bytes.fill(0);
      continue;
    }
    chunks.push(bytes);
  }
  const all = Buffer.concat(chunks);
  for (const chunk of chunks) chunk.fill(0);
  if (tooLong) {
    all.fill(0);
    return err({ _tag: 'SecretInputTooLong', maxBytes: MAX_SECRET_BYTES });
  }
  let end = all.length;
  if (end > 0 && all[end - 1] === 0x0a) end--;
  if (end > 0 && all[end - 1] === 0x0d) end--;
  const material = toMaterial(all.subarray(0, end));
  all.fill(0);
  return material;
}

/**
 * Prompts on `output` (stderr) and reads a line from a TTY in raw mode, so
 * nothing is echoed. Backspace edits; Ctrl-C and Ctrl-D on an empty line cancel.
 */
export function promptSecret(
  stdin: SecretInputStream,
  output: Writable,
  prompt: string,
): Promise<Result<SecretInputError, SecretMaterial>> {
  return new Promise((resolve) => {
    const typed: number[] = [];
    const wasRaw = (stdin as { isRaw?: boolean }).isRaw === true;
    stdin.setRawMode?.(true);
    output.write(prompt);
    const finish = (result: Result<SecretInputError, SecretMaterial>, rest?: Buffer): void => {
      stdin.removeListener('data', onData);
      // Bytes typed (or pasted) past the line end belong to the next prompt.
      if (rest !== undefined && rest.length > 0) (stdin as { unshift?: (chunk: Buffer) => void }).unshift?.(rest);
      stdin.setRawMode?.(wasRaw);
      stdin.pause();
      output.write('\n');
      typed.fill(0);
      resolve(result);
    };
    const onData = (chunk: Buffer | string): void => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      for (let at = 0; at < bytes.length; at++) {
        const byte = bytes[at]!;
        if (byte === 0x0d || byte === 0x0a) {
          // A CRLF pair ends one line, not two.
          const next = byte === 0x0d && bytes[at + 1] === 0x0a ? at + 2 : at + 1;
          finish(toMaterial(Buffer.from(typed)), Buffer.from(bytes.subarray(next)));
          return;
        }
        if (byte === 0x03 || (byte === 0x04 && typed.length === 0)) {
          finish(err({ _tag: 'SecretInputCancelled' }));
          return;
        }
        if (byte === 0x7f || byte === 0x08) {
          // Drop one UTF-8 character: continuation bytes first, then its lead byte.
          while (typed.length > 0 && ((typed[typed.length - 1] ?? 0) & 0xc0) === 0x80) typed.pop();
          typed.pop();
          continue;
        }
        if (byte < 0x20) continue;
        if (typed.length >= MAX_SECRET_BYTES) {
          finish(err({ _tag: 'SecretInputTooLong', maxBytes: MAX_SECRET_BYTES }));
          return;
        }
        typed.push(byte);
      }
      bytes.fill(0);
    };
    stdin.on('data', onData);
    stdin.resume();
  });
}
