/**
 * A reader that went away (`crustcore … | head -1`) is not an error: stop
 * quietly with exit 0. Writing a report to the closed pipe would fail again,
 * and a handler that keeps writing spins. Both entries (bin.ts and
 * fast-start.ts) install it before their first write.
 */
import { ExitCode } from './exit-codes.js';

export const isClosedPipe = (error: unknown): boolean => (error as { code?: unknown } | null)?.code === 'EPIPE';

export function exitQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error) => {
      if (isClosedPipe(error)) process.exit(ExitCode.ok);
    });
  }
}
