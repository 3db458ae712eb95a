/**
 * The executable: runs main() with the process's streams and turns an
 * unexpected throw into a short, redacted report and exit code 70.
 */
import { ExitCode } from './cli/exit-codes.js';
import { processIo, writeLine } from './cli/output.js';
import { main } from './main.js';

const io = processIo();
main(process.argv.slice(2), io).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    writeLine(io.stderr, `${io.err.red('internal error:')} ${message}`);
    writeLine(io.stderr, 'This is a bug in crustcore. Re-run with the same arguments and report the output above.');
    process.exitCode = ExitCode.internal;
  },
);
