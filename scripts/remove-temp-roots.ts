/**
 * Vitest setup file: when a test file ends, the temporary directories its
 * golden harnesses made go too (golden/temp-roots.ts). Setup-file hooks run
 * after the file's own `afterAll` hooks, so a file's clean-up (closing
 * clients, stopping daemons) has run first.
 */
import { afterAll } from 'vitest';
import { removeTrackedTempRoots } from '../golden/temp-roots.js';

afterAll(() => removeTrackedTempRoots());
