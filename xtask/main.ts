/**
 * Repository tasks that are code, not shell: `npm run xtask -- <task>`.
 *   size   what takes the bytes in crustcore-nano and the kernel (esbuild metafile)
 */
import { size } from './size.js';

const tasks: Record<string, (args: string[]) => Promise<number>> = { size };

const [name, ...args] = process.argv.slice(2);
const task = name === undefined ? undefined : tasks[name];
if (task === undefined) {
  console.error(`usage: npm run xtask -- <${Object.keys(tasks).join('|')}>`);
  process.exitCode = 2;
} else {
  process.exitCode = await task(args);
}
