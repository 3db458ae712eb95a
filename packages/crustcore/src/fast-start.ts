/**
 * The `crustcore` bin (dist/crustcore.cjs). Node starts a CommonJS file
 * without its ES module loader, which alone costs more than the rest of
 * `crustcore --help` (measured in benches/startup.bench.ts), so this entry is
 * CommonJS and carries only what answers from the specs: the help, a
 * command's help, the version and a mistyped name. Any other command hands
 * over to the ES module CLI (dist/crustcore.js, bin.ts), which answers the
 * same arguments itself and loads the command and its packages.
 */
import { exitQuietlyOnClosedPipe } from './cli/closed-pipe.js';
import { syncAnswerIo } from './cli/sync-answer.js';
import { PACK_SPECS } from './commands/pack-specs.js';
import { CORE_SPECS } from './commands/specs.js';
import { answerFromSpecs } from './help.js';

// Next to this file in dist/; a computed specifier, so the bundler leaves the import to run time.
const ES_MODULE_CLI = './crustcore.js';

// Answers write synchronously to the descriptors and never create process.stdout or stdin (sync-answer.ts).
const answer = answerFromSpecs(process.argv.slice(2), syncAnswerIo(process.env), [...CORE_SPECS, ...PACK_SPECS]);
if (typeof answer === 'number') {
  process.exitCode = answer;
} else {
  exitQuietlyOnClosedPipe();
  void import(ES_MODULE_CLI);
}
