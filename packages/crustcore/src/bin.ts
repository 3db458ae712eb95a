/**
 * The executable: runs main() with the process's streams and turns an
 * unexpected throw into a short, redacted report and exit code 70. Errors
 * may carry text from tools, workers or models, so nothing reaches the
 * terminal before the secrets pack's redactor has seen it.
 */

import { exitQuietlyOnClosedPipe, isClosedPipe } from './cli/closed-pipe.js';
import { loadCrashRedactor } from './cli/crash-redactor.js';
import { ExitCode } from './cli/exit-codes.js';
import { processIo, writeLine } from './cli/output.js';
import { main } from './main.js';

const io = processIo();

exitQuietlyOnClosedPipe();

let reporting = false;

async function report(error: unknown): Promise<void> {
  if (isClosedPipe(error)) process.exit(ExitCode.ok);
  // One report: an error raised while reporting ends the process instead of looping.
  if (reporting) process.exit(ExitCode.internal);
  reporting = true;
  let text: string;
  try {
    const secrets = await import('@crustcore/secrets');
    // Token detectors first; then the runtime's redactor, which also knows this process's
    // credential variables and (with a key file) the vault's secrets.
    text = secrets.formatRedactedError(error, new secrets.Redactor({}));
    try {
      text = (await loadCrashRedactor(io.env))(text);
    } catch {
      // Detector redaction already applied; keep it.
    }
  } catch {
    // Without the redactor, print only the error's class: never unredacted text.
    text = `${error instanceof Error ? error.name : typeof error} (details withheld: the redactor could not load)`;
  }
  writeLine(io.stderr, `${io.err.red('internal error:')} ${text}`);
  writeLine(io.stderr, 'This is a bug in crustcore. Re-run with the same arguments and report the output above.');
  process.exitCode = ExitCode.internal;
}

process.on('uncaughtException', (error) => void report(error));
process.on('unhandledRejection', (error) => void report(error));

main(process.argv.slice(2), io).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => report(error),
);
