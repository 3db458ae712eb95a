/**
 * Which build this is. crustcore-nano carries only the trusted core; the
 * commands that need a pack say so instead of loading a second copy of the
 * core next to the bundled one.
 */
import { UsageError } from './command.js';

// The nano build defines this as `true`, so the bundler drops the pack commands; unbundled runs see undefined.
export const IS_NANO: boolean = (globalThis as { CRUSTCORE_NANO?: boolean }).CRUSTCORE_NANO === true;

export function requireFullBuild(what: string): void {
  if (IS_NANO) {
    throw new UsageError(
      `${what} needs the full crustcore (packages/crustcore/dist/crustcore.js); crustcore-nano carries only the verifier core`,
    );
  }
}
