/**
 * The `crustcore` bin (dist/crustcore.cjs). Node starts a CommonJS file
 * without its ES module loader, which alone costs more than the rest of
 * `crustcore --help` (measured in benches/startup.bench.ts), so this entry is
 * CommonJS and carries only what answers from the specs: the help, a
 * command's help, the version and a mistyped name. Any other command hands
 * over to the whole CLI (bin.ts): the CommonJS bundle dist/crustcore-cli.cjs
 * compiled from a V8 code cache (cli/code-cache.ts), or, with
 * CRUSTCORE_CODE_CACHE=0 or when that bundle cannot start, the ES module CLI
 * (dist/crustcore.js). Both answer the same arguments and load the command.
 */
import { exitQuietlyOnClosedPipe } from './cli/closed-pipe.js';
import { syncAnswerIo } from './cli/sync-answer.js';
import { PACK_SPECS } from './commands/pack-specs.js';
import { CORE_SPECS } from './commands/specs.js';
import { answerFromSpecs } from './help.js';

// Next to this file in dist/; a computed specifier, so the bundler leaves the import to run time.
const ES_MODULE_CLI = './crustcore.js';
// The same CLI as one CommonJS file (build.mjs), and its content hash, which names its code cache.
const CLI_BUNDLE = './crustcore-cli.cjs';
declare const CRUSTCORE_CLI_BUNDLE_ID: string;

// Answers write synchronously to the descriptors and never create process.stdout or stdin (sync-answer.ts).
const answer = answerFromSpecs(process.argv.slice(2), syncAnswerIo(process.env), [...CORE_SPECS, ...PACK_SPECS]);
if (typeof answer === 'number') {
  process.exitCode = answer;
} else {
  exitQuietlyOnClosedPipe();
  void startWholeCli();
}

/**
 * Loaded only here: the code cache's modules (node:vm, node:os) are no part of answering help or
 * the version.
 */
async function startWholeCli(): Promise<void> {
  if (process.env.CRUSTCORE_CODE_CACHE !== '0') {
    const { startWithCodeCache } = await import('./cli/code-cache.js');
    const started = startWithCodeCache({
      from: __filename,
      bundle: CLI_BUNDLE,
      bundleId: CRUSTCORE_CLI_BUNDLE_ID,
      env: process.env,
      importModule: (specifier) => import(specifier),
    });
    if (started) return;
  }
  await import(ES_MODULE_CLI);
}
