/**
 * Repository tasks that are code, not shell: `npm run xtask -- <task>`.
 *   size   what takes the bytes in crustcore-nano and the kernel (esbuild metafile)
 *   tidy   house rules: functions ≤ 70 lines (with a shrinking ratchet), no `export *`,
 *          docs' size claims equal to the size gates (`tidy --print-long` lists long functions)
 *   release         pack every package into release/, write SHA256SUMS, sign it with --key (xtask/release.ts)
 *   release-keygen  a new Ed25519 release key (minisign-compatible public key)
 */
import { release, releaseKeygen } from './release.js';
import { size } from './size.js';
import { tidy } from './tidy.js';

const tasks: Record<string, (args: string[]) => Promise<number>> = {
  size,
  tidy,
  release,
  'release-keygen': releaseKeygen,
};

const [name, ...args] = process.argv.slice(2);
const task = name === undefined ? undefined : tasks[name];
if (task === undefined) {
  console.error(`usage: npm run xtask -- <${Object.keys(tasks).join('|')}>`);
  process.exitCode = 2;
} else {
  process.exitCode = await task(args);
}
