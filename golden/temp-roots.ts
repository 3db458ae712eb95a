/**
 * Temporary directories a test file made through the golden harnesses
 * (`makeRepo`), removed when the file ends (scripts/remove-temp-roots.ts is a
 * vitest setup file). Without it every full run left a few hundred
 * repositories, homes and PGlite clusters in /tmp.
 */
import { rmSync } from 'node:fs';

const roots = new Set<string>();

/** Removes `root` (recursively) when the current test file ends. */
export function trackTempRoot(root: string): void {
  roots.add(root);
}

/** Removes every tracked root; one that cannot go (a process still writing) is left to the temp cleaner. */
export function removeTrackedTempRoots(): void {
  for (const root of roots) {
    try {
      rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Left behind: never a reason to fail the file whose tests already ran.
    }
  }
  roots.clear();
}
