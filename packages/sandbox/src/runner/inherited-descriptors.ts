/**
 * Which of this process's descriptors a child would inherit: those from 3 up
 * without close-on-exec. Node and libuv open every descriptor of their own
 * with O_CLOEXEC, so in a CrustCore process this list holds only what the
 * process was started with (a shell's `exec 200</`, a CI runner's pipe) or
 * what native code opened without the flag.
 *
 * The runner asks before each spawn: an empty list means exec alone already
 * closes everything but the child's stdio, and the descriptor-closing
 * launcher (descriptor-launcher.ts) would close nothing; anything else, or a
 * /proc it cannot read, and the launcher runs. The check and the spawn
 * happen in one synchronous step on the main thread, and no other thread of
 * ours opens descriptors without O_CLOEXEC, so nothing appears in between.
 */
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';

/** O_CLOEXEC as /proc/<pid>/fdinfo's octal `flags` field shows it (Linux, x86-64 and arm64). */
const O_CLOEXEC = 0o2000000;
const FIRST_INHERITABLE = 3;
const FLAGS_LINE = /^flags:[ \t]+([0-7]+)\n/m; // the newline: a head cut inside the line must not match
/**
 * `flags` is fdinfo's second line (after `pos`), so the head of the file carries it; an epoll's
 * fdinfo goes on for a line per watched descriptor. Reading only the head into one buffer, instead
 * of the whole file into a new one, halves the check's cost — and the runner checks before every
 * spawn (a task spawns ~50 processes, with ~40 descriptors open).
 */
const head = Buffer.allocUnsafe(1024);

/** The head of /proc/self/fdinfo/<fd>; undefined when the descriptor closed meanwhile (the listing's own directory). */
function fdinfoHead(fd: number): string | undefined {
  let handle: number;
  try {
    handle = openSync(`/proc/self/fdinfo/${fd}`, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return head.toString('latin1', 0, readSync(handle, head, 0, head.length, 0));
  } finally {
    closeSync(handle);
  }
}

/** The descriptor's open flags; undefined when it closed meanwhile. */
function openFlags(fd: number): number | undefined {
  const start = fdinfoHead(fd);
  if (start === undefined) return undefined;
  // Not in the head (no kernel puts it later, but the check must not guess): read the whole file.
  const flags = (FLAGS_LINE.exec(start) ?? FLAGS_LINE.exec(wholeFdinfo(fd) ?? ''))?.[1];
  if (flags === undefined) throw new Error(`no flags in fdinfo of descriptor ${fd}`);
  return Number.parseInt(flags, 8);
}

function wholeFdinfo(fd: number): string | undefined {
  try {
    return readFileSync(`/proc/self/fdinfo/${fd}`, 'latin1');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Descriptors from 3 up that an exec would hand on, in ascending order; null
 * when /proc cannot say (then every descriptor must be assumed inherited).
 */
export function inheritableDescriptors(): readonly number[] | null {
  try {
    const open = readdirSync('/proc/self/fd')
      .map(Number)
      .filter((fd) => Number.isInteger(fd) && fd >= FIRST_INHERITABLE)
      .sort((a, b) => a - b);
    return open.filter((fd) => {
      const flags = openFlags(fd);
      return flags !== undefined && (flags & O_CLOEXEC) === 0;
    });
  } catch {
    return null;
  }
}

/**
 * Closes, in this process, every descriptor an exec would hand on (but Node's
 * IPC channel, when a parent forked us with one). For a program's entry point
 * only: a library must not close what its host may be using. After it, each
 * spawn starts the program directly instead of through the launcher.
 * Returns the numbers it closed.
 */
export function closeInheritedDescriptors(env: NodeJS.ProcessEnv = process.env): readonly number[] {
  const channel = Number(env.NODE_CHANNEL_FD ?? Number.NaN);
  const closed: number[] = [];
  for (const fd of inheritableDescriptors() ?? []) {
    if (fd === channel) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // Already gone: nothing to hand on.
    }
  }
  return closed;
}
