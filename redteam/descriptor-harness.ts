/**
 * The inherited-descriptor attack, shared by redteam/sandbox-descriptors*.test.ts.
 *
 * A python3 "holder" plays whatever starts CrustCore (a shell's `exec 200</`,
 * an editor, a CI runner): it opens descriptors of every kind without
 * O_CLOEXEC at many numbers, runs two CONTROLS (a plain fork+exec of the
 * probe, and the probe under bubblewrap started directly — both must see and
 * use the descriptors), then execs a driver with everything still open. The
 * probe, run wherever a test puts it, lists /proc/self/fd and tries to read,
 * write, fstat and openat through every planted number.
 *
 * The holder reports on stdout, or — when CRUSTCORE_HOLDER_REPORT names a
 * file — into that file (written whole, then renamed into place, before the
 * exec), so the exec'd program can own stdout (an MCP server speaks its
 * protocol there). With CRUSTCORE_HOLDER_DETACH naming a log file it starts
 * the driver the way `crustcore daemon … &` in a shell that then exits does:
 * forked, in a new session, stdio on /dev/null and the log, while the holder
 * itself exits 0.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { expect } from 'vitest';

/** Runs inside every sandbox: what is open above 2, and what each planted number lets it do. */
export const PROBE = `
import json, os, sys
planted = [int(n) for n in sys.argv[1].split(',')]
def listed():
    names = [int(n) for n in os.listdir('/proc/self/fd')]
    out = []
    for n in names:
        try:
            os.fstat(n)
            out.append(n)
        except OSError:
            pass  # the listing's own directory descriptor, closed again
    return sorted(n for n in out if n > 2)
def attempt(fn):
    try:
        got = fn()
        return 'OK:' + (got.decode(errors='replace')[:40] if isinstance(got, bytes) else str(got)[:80])
    except OSError as e:
        return 'errno%d' % e.errno
report = {'open': listed(), 'tries': {}}
for n in planted:
    report['tries'][n] = {
        'fstat': attempt(lambda: os.fstat(n).st_mode),
        'read': attempt(lambda: os.pread(n, 64, 0) if os.path.isfile('/proc/self/fd/%d' % n) else os.read(n, 0)),
        'write': attempt(lambda: os.write(n, b'')),
        'openat': attempt(lambda: os.open('etc/passwd', os.O_RDONLY, dir_fd=n)),
        'procfd': attempt(lambda: os.listdir('/proc/self/fd/%d' % n)),
        'procfd_reopen': attempt(lambda: os.open('/proc/self/fd/%d' % n, os.O_RDONLY)),
    }
print('PROBE ' + json.dumps(report))
`;

/** Plants the descriptors, runs the two controls, then execs the driver with everything still open. */
export const HOLDER = `
import json, os, resource, select, socket, subprocess, sys
probe, secret_file, victim_file, driver = sys.argv[1:5]
report_path = os.environ.pop('CRUSTCORE_HOLDER_REPORT', None)
detach_log = os.environ.pop('CRUSTCORE_HOLDER_DETACH', None)
said = []
def say(line):
    if report_path is None:
        print(line, flush=True)
    else:
        said.append(line)
limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
def place(fd, number):
    if fd != number:
        os.dup2(fd, number, inheritable=True)
        os.close(fd)
    os.set_inheritable(number, True)
    return number
planted = {}
planted['dir-root'] = place(os.open('/', os.O_RDONLY | os.O_DIRECTORY), 3)
planted['dir-etc-path'] = place(os.open('/etc', os.O_PATH | os.O_DIRECTORY), 4)
planted['file-secret'] = place(os.open(secret_file, os.O_RDONLY), 9)
planted['file-victim-write'] = place(os.open(victim_file, os.O_WRONLY | os.O_APPEND), 10)
r, w = os.pipe()
planted['pipe-read'] = place(r, 63)
planted['pipe-write'] = place(w, 200)
a, b = socket.socketpair()
planted['socketpair-a'] = place(a.detach(), 1000)
planted['socketpair-b'] = place(b.detach(), 1001)
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.bind(('127.0.0.1', 0)); listener.listen(1)
planted['tcp-listener'] = place(listener.detach(), 1777)
planted['eventfd'] = place(os.eventfd(0), 4242)
ep = select.epoll()
planted['epoll'] = place(ep.fileno(), 5000)
planted['memfd'] = place(os.memfd_create('crustcore-planted', 0), 9999)
planted['dir-root-near-limit'] = place(os.open('/', os.O_RDONLY | os.O_DIRECTORY), limit - 1)
numbers = ','.join(str(n) for n in planted.values())
targets = {name: os.readlink('/proc/self/fd/%d' % n) for name, n in planted.items()}
say('PLANTED ' + json.dumps({'planted': planted, 'limit': limit, 'targets': targets}))
py = '/usr/bin/python3'
direct = subprocess.run([py, probe, numbers], close_fds=False, capture_output=True, text=True)
say('CONTROL-DIRECT ' + direct.stdout.strip() + direct.stderr.strip())
bwrap = subprocess.run(['/usr/bin/bwrap', '--ro-bind', '/usr', '/usr', '--symlink', 'usr/lib', '/lib',
    '--symlink', 'usr/lib64', '/lib64', '--symlink', 'usr/bin', '/bin', '--ro-bind', os.path.dirname(probe), os.path.dirname(probe),
    '--proc', '/proc', '--dev', '/dev', '--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL',
    py, probe, numbers], close_fds=False, capture_output=True, text=True)
say('CONTROL-BWRAP ' + bwrap.stdout.strip() + bwrap.stderr.strip())
os.environ['CRUSTCORE_PLANTED'] = numbers
if report_path is not None:
    with open(report_path + '.part', 'w') as out:
        out.write(''.join(line + '\\n' for line in said))
    os.rename(report_path + '.part', report_path)
if detach_log is not None:
    if os.fork() != 0:
        os._exit(0)
    os.setsid()
    quiet = os.open('/dev/null', os.O_RDONLY)
    log = os.open(detach_log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(quiet, 0); os.dup2(log, 1); os.dup2(log, 2)
    os.close(quiet); os.close(log)
os.execv(driver, [driver] + sys.argv[5:])
`;

export interface ProbeReport {
  readonly open: readonly number[];
  readonly tries: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

export function parseProbe(text: string): ProbeReport {
  const line = text.split('\n').find((entry) => entry.includes('PROBE '));
  if (line === undefined) throw new Error(`no probe report in: ${text.slice(0, 2000)}`);
  return JSON.parse(line.slice(line.indexOf('PROBE ') + 'PROBE '.length)) as ProbeReport;
}

export const shellQuote = (text: string): string => `'${text.replaceAll("'", `'"'"'`)}'`;

/** The holder's lines tagged `tag`, without the tag. */
export const tagged = (lines: readonly string[], tag: string): string[] =>
  lines.filter((line) => line.startsWith(`${tag} `)).map((line) => line.slice(tag.length + 1));

/** Every planted number is closed for the probe: nothing listed, every use refused. */
export function expectNoneReached(report: ProbeReport, numbers: readonly number[], via: string): void {
  expect(report.open, via).toEqual([]);
  for (const n of numbers) {
    for (const [what, outcome] of Object.entries(report.tries[String(n)] ?? {})) {
      expect(outcome, `${via}: fd ${n} ${what}`).toMatch(/^errno(9|2)$/);
    }
  }
}

/** What the holder planted and what its two controls saw. */
export interface HolderReport {
  readonly planted: Readonly<Record<string, number>>;
  readonly numbers: readonly number[];
  /** Each planted descriptor's /proc/self/fd link in the holder (`pipe:[…]`, a path, …). */
  readonly targets: Readonly<Record<string, string>>;
  readonly direct: ProbeReport;
  readonly bare: ProbeReport;
}

export function holderReport(lines: readonly string[]): HolderReport {
  const head = JSON.parse(tagged(lines, 'PLANTED')[0] ?? 'null') as {
    planted: Record<string, number>;
    targets: Record<string, string>;
  } | null;
  if (head === null) throw new Error(`the holder planted nothing:\n${lines.join('\n').slice(0, 3000)}`);
  return {
    planted: head.planted,
    numbers: Object.values(head.planted),
    targets: head.targets,
    direct: parseProbe(tagged(lines, 'CONTROL-DIRECT')[0] ?? ''),
    bare: parseProbe(tagged(lines, 'CONTROL-BWRAP')[0] ?? ''),
  };
}

/**
 * The CONTROLS: from the same holder, a plain fork+exec inherits every planted descriptor and
 * reads the secret through it, and bubblewrap started directly hands them all into its sandbox,
 * where `openat` on the directory descriptor escapes the mounts.
 */
export function expectControlsLeak(report: HolderReport, secret: string): void {
  expect(report.numbers.length).toBe(13);
  const root = String(report.planted['dir-root']);
  for (const n of report.numbers) expect(report.direct.open).toContain(n);
  expect(report.direct.tries[root]?.openat).toMatch(/^OK:/);
  expect(report.direct.tries[String(report.planted['file-secret'])]?.read).toBe(`OK:${secret}`);
  for (const n of report.numbers) expect(report.bare.open).toContain(n);
  expect(report.bare.tries[root]?.openat).toMatch(/^OK:/);
  expect(report.bare.tries[String(report.planted['dir-root-near-limit'])]?.procfd).toMatch(/^OK:/);
}

/** O_CLOEXEC in /proc/<pid>/fdinfo's octal `flags` (Linux, x86-64 and arm64). */
const O_CLOEXEC = 0o2000000;

/** Descriptors ≥ 3 of `pid` an exec would hand on (no O_CLOEXEC), as `N -> link`. */
export function inheritableOf(pid: number): string[] {
  const found: string[] = [];
  for (const name of readdirSync(`/proc/${pid}/fd`)) {
    const fd = Number(name);
    if (fd < 3) continue;
    try {
      const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'latin1'))?.[1];
      if (flags !== undefined && (Number.parseInt(flags, 8) & O_CLOEXEC) === 0)
        found.push(`${fd} -> ${readlinkSync(`/proc/${pid}/fd/${fd}`)}`);
    } catch {
      // Closed while we looked.
    }
  }
  return found;
}

/** Every live process below `pid` (by the parent pid in /proc/N/stat). */
export function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const out: number[] = [];
  const walk = (parent: number): void => {
    for (const child of parents.get(parent) ?? []) {
      out.push(child);
      walk(child);
    }
  };
  walk(pid);
  return out;
}

/**
 * The planted descriptors that identify themselves from outside: the secret and victim files,
 * the pipe, the sockets and the memfd (directories and anonymous inodes look like anyone's).
 */
const TELLTALE = [
  'file-secret',
  'file-victim-write',
  'pipe-read',
  'pipe-write',
  'socketpair-a',
  'socketpair-b',
  'tcp-listener',
  'memfd',
];

/** The command line of `pid`, for messages. */
function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim().slice(0, 300);
  } catch {
    return 'gone';
  }
}

/** `pid (command): N -> link` for every descriptor of `pids` that is one of the planted ones. */
export function plantedHeldBy(pids: readonly number[], report: HolderReport): string[] {
  const links = new Set(TELLTALE.map((name) => report.targets[name]).filter((link) => link !== undefined));
  const held: string[] = [];
  for (const pid of pids) {
    let names: string[];
    try {
      names = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const name of names) {
      try {
        const link = readlinkSync(`/proc/${pid}/fd/${name}`);
        if (links.has(link)) held.push(`${pid} (${commandOf(pid)}): ${name} -> ${link}`);
      } catch {
        // Closed meanwhile.
      }
    }
  }
  return held;
}
