/**
 * Starts the CLI with the process's streams and turns an unexpected throw into a short, redacted
 * report and exit code 70. Errors may carry text from tools, workers or models, so nothing reaches
 * the terminal before the secrets pack's redactor has seen it. A function, not module code: the
 * single executable's start-up snapshot evaluates every module at build time and must read the
 * streams, the environment and the arguments only when it runs (see src/sea-main.ts).
 */

import { main } from '../main.js';
import { exitQuietlyOnClosedPipe, isClosedPipe } from './closed-pipe.js';
import { loadCrashRedactor } from './crash-redactor.js';
import { ExitCode } from './exit-codes.js';
import { type Io, processIo, writeLine } from './output.js';

export function startCli(): void {
  const io = processIo();
  exitQuietlyOnClosedPipe();
  const report = crashReporter(io);
  process.on('uncaughtException', (error) => void report(error));
  process.on('unhandledRejection', (error) => void report(error));
  main(process.argv.slice(2), io).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => report(error),
  );
}

function crashReporter(io: Io): (error: unknown) => Promise<void> {
  let reporting = false;
  return async (error) => {
    if (isClosedPipe(error)) process.exit(ExitCode.ok);
    // One report: an error raised while reporting ends the process instead of looping.
    if (reporting) process.exit(ExitCode.internal);
    reporting = true;
    writeLine(io.stderr, `${io.err.red('internal error:')} ${await redactedReport(error, io)}`);
    writeLine(io.stderr, 'This is a bug in crustcore. Re-run with the same arguments and report the output above.');
    process.exitCode = ExitCode.internal;
  };
}

async function redactedReport(error: unknown, io: Io): Promise<string> {
  try {
    const secrets = await import('@crustcore/secrets');
    // Token detectors first; then the runtime's redactor, which also knows this process's
    // credential variables and (with a key file) the vault's secrets.
    const text = secrets.formatRedactedError(error, new secrets.Redactor({}));
    try {
      return (await loadCrashRedactor(io.env))(text);
    } catch {
      return text; // Detector redaction already applied; keep it.
    }
  } catch {
    // Without the redactor, print only the error's class: never unredacted text.
    return `${error instanceof Error ? error.name : typeof error} (details withheld: the redactor could not load)`;
  }
}
