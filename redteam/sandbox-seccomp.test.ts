/**
 * The seccomp filter of the bubblewrap profiles. For every refused call a
 * python3 probe (ctypes `syscall()`) makes the call with arguments the
 * kernel would reject for its own reasons (a bad pointer, bad flags, a bad
 * descriptor), so each outcome says who refused: inside every bubblewrap
 * profile the call must fail with the filter's errno; on the host — the
 * CONTROL — the same call succeeds or fails with a different errno. A second
 * control runs the probe under the same bubblewrap options without the
 * filter: there a nested user namespace, ptrace and a high-bits TIOCSTI all
 * get past, so it is the filter, not the namespaces, that stops them.
 * Then ordinary programs (node with threads and child processes, git,
 * python3, npm) must still work under the filter.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  bubblewrapArgv,
  ERRNO,
  type FilteredSyscall,
  mintSandboxExecCap,
  runSandboxed,
  runTrustedHostCommand,
  type SandboxProfileName,
  SECCOMP_RULES,
  syscallNumber,
} from '@crustcore/sandbox';
import { afterAll, describe, expect, it } from 'vitest';

const worktree = mkdtempSync(join(tmpdir(), 'crustcore-redteam-seccomp-'));
afterAll(() => rmSync(worktree, { recursive: true, force: true }));

const arch = process.arch === 'arm64' ? 'aarch64' : 'x86_64';
const isRoot = process.getuid?.() === 0;
const EINVAL_FLAGS = 0xffffffff;
const BAD_POINTER = 1;
const NO_SUCH_PID = 999_999_999;

/** An argument: a number, or a C string. */
type Arg = number | { readonly str: string };

interface Probe {
  readonly name: string;
  readonly syscall: FilteredSyscall;
  readonly args: readonly Arg[];
  /** The host control differs only with real capabilities (the kernel checks them first). */
  readonly controlNeedsRoot?: boolean;
}

const emptyPath = { str: '' };
const PROBES: readonly Probe[] = [
  { name: 'unshare(CLONE_NEWUSER)', syscall: 'unshare', args: [0x10000000] },
  { name: 'unshare(CLONE_NEWUSER|CLONE_NEWNS)', syscall: 'unshare', args: [0x10020000] },
  { name: 'unshare(CLONE_NEWNET + high bits)', syscall: 'unshare', args: [2 ** 40 + 0x40000000] },
  { name: 'clone(CLONE_NEWUSER|CLONE_FS)', syscall: 'clone', args: [0x10000200, 0, 0, 0, 0] },
  { name: 'clone3(NULL, 0)', syscall: 'clone3', args: [0, 0] },
  { name: 'setns(-1, 0)', syscall: 'setns', args: [-1, 0] },
  { name: 'mount(bad target)', syscall: 'mount', args: [0, BAD_POINTER, 0, 0, 0] },
  { name: 'umount2(/, bad flags)', syscall: 'umount2', args: [{ str: '/' }, 0x100] },
  { name: 'pivot_root(bad, bad)', syscall: 'pivot_root', args: [BAD_POINTER, BAD_POINTER], controlNeedsRoot: true },
  { name: 'chroot(bad)', syscall: 'chroot', args: [BAD_POINTER] },
  { name: 'open_tree(bad flags)', syscall: 'open_tree', args: [-1, emptyPath, EINVAL_FLAGS] },
  {
    name: 'move_mount(bad flags)',
    syscall: 'move_mount',
    args: [-1, emptyPath, -1, emptyPath, EINVAL_FLAGS],
    controlNeedsRoot: true,
  },
  { name: 'fsopen(bad name)', syscall: 'fsopen', args: [BAD_POINTER, 0], controlNeedsRoot: true },
  { name: 'fsconfig(-1)', syscall: 'fsconfig', args: [-1, 0xffff, 0, 0, 0] },
  { name: 'fsmount(bad flags)', syscall: 'fsmount', args: [-1, 0xffff, 0], controlNeedsRoot: true },
  { name: 'fspick(bad flags)', syscall: 'fspick', args: [-1, emptyPath, EINVAL_FLAGS], controlNeedsRoot: true },
  { name: 'mount_setattr(bad flags)', syscall: 'mount_setattr', args: [-1, emptyPath, EINVAL_FLAGS, 0, 0] },
  { name: 'ptrace(PEEKDATA, no such pid)', syscall: 'ptrace', args: [2, NO_SUCH_PID, 0, 0] },
  { name: 'process_vm_readv(no such pid)', syscall: 'process_vm_readv', args: [NO_SUCH_PID, 0, 0, 0, 0, 0] },
  { name: 'process_vm_writev(no such pid)', syscall: 'process_vm_writev', args: [NO_SUCH_PID, 0, 0, 0, 0, 0] },
  { name: 'pidfd_getfd(-1)', syscall: 'pidfd_getfd', args: [-1, 0, 0] },
  { name: 'kcmp(no such pid)', syscall: 'kcmp', args: [NO_SUCH_PID, NO_SUCH_PID, 0, 0, 0] },
  { name: 'process_madvise(-1)', syscall: 'process_madvise', args: [-1, 0, 0, 0, 0] },
  { name: 'keyctl(bad op)', syscall: 'keyctl', args: [0xffff, 0, 0, 0, 0] },
  { name: 'add_key(NULL type)', syscall: 'add_key', args: [0, 0, 0, 0, 0] },
  { name: 'request_key(NULL type)', syscall: 'request_key', args: [0, 0, 0, 0] },
  { name: 'bpf(bad cmd)', syscall: 'bpf', args: [0xffff, 0, 0], controlNeedsRoot: true },
  { name: 'perf_event_open(NULL attr)', syscall: 'perf_event_open', args: [0, 0, -1, -1, 0] },
  { name: 'userfaultfd(bad flags)', syscall: 'userfaultfd', args: [EINVAL_FLAGS], controlNeedsRoot: true },
  { name: 'io_uring_setup(0, NULL)', syscall: 'io_uring_setup', args: [0, 0] },
  { name: 'io_uring_enter(-1)', syscall: 'io_uring_enter', args: [-1, 0, 0, 0, 0, 0] },
  { name: 'io_uring_register(-1)', syscall: 'io_uring_register', args: [-1, 0, 0, 0] },
  { name: 'ioctl(0, TIOCSTI)', syscall: 'ioctl', args: [0, 0x5412, 0] },
  { name: 'ioctl(0, TIOCSTI + high bits)', syscall: 'ioctl', args: [0, 2 ** 32 + 0x5412, 0] },
  { name: 'ioctl(0, TIOCLINUX)', syscall: 'ioctl', args: [0, 0x541c, 0] },
  { name: 'personality(ADDR_NO_RANDOMIZE)', syscall: 'personality', args: [0x0040000] },
  { name: 'personality(READ_IMPLIES_EXEC)', syscall: 'personality', args: [0x0400000] },
  { name: 'kexec_load(bad flags)', syscall: 'kexec_load', args: [0, 0, 0, EINVAL_FLAGS], controlNeedsRoot: true },
  {
    name: 'kexec_file_load(bad flags)',
    syscall: 'kexec_file_load',
    args: [-1, -1, 0, 0, EINVAL_FLAGS],
    controlNeedsRoot: true,
  },
  { name: 'init_module(NULL, 0)', syscall: 'init_module', args: [0, 0, 0], controlNeedsRoot: true },
  { name: 'finit_module(-1)', syscall: 'finit_module', args: [-1, 0, 0], controlNeedsRoot: true },
  { name: 'delete_module(NULL)', syscall: 'delete_module', args: [0, 0], controlNeedsRoot: true },
  { name: 'reboot(bad magic)', syscall: 'reboot', args: [0, 0, 0, 0], controlNeedsRoot: true },
  { name: 'swapon(NULL)', syscall: 'swapon', args: [0, 0], controlNeedsRoot: true },
  { name: 'swapoff(NULL)', syscall: 'swapoff', args: [0], controlNeedsRoot: true },
  { name: 'acct(bad)', syscall: 'acct', args: [BAD_POINTER], controlNeedsRoot: true },
  { name: 'syslog(bad type)', syscall: 'syslog', args: [0xffff, 0, 0], controlNeedsRoot: true },
  { name: 'open_by_handle_at(-1)', syscall: 'open_by_handle_at', args: [-1, 0, 0], controlNeedsRoot: true },
  { name: 'iopl(4)', syscall: 'iopl', args: [4] },
  { name: 'ioperm(0, 0)', syscall: 'ioperm', args: [0, 0, 1] },
  { name: 'modify_ldt(bad func)', syscall: 'modify_ldt', args: [0xff, 0, 0] },
];

/** Calls the filter must let through (argument filters must be exact, not broad). */
const ALLOWED_PROBES: readonly Probe[] = [
  { name: 'ioctl(0, TCGETS)', syscall: 'ioctl', args: [0, 0x5401, 0] },
  { name: 'personality(query)', syscall: 'personality', args: [0xffffffff] },
  { name: 'personality(PER_LINUX)', syscall: 'personality', args: [0] },
  { name: 'unshare(CLONE_FILES)', syscall: 'unshare', args: [0x400] },
];

/** Each call runs in a fresh forked child, so one that succeeds (a new user namespace) cannot change the next. */
const PROBE_SCRIPT = `
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def arg(a):
    return ctypes.c_char_p(a['str'].encode()) if isinstance(a, dict) else ctypes.c_long(a if a < 2**63 else a - 2**64)
out = {}
for p in json.loads(sys.argv[1]):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        ctypes.set_errno(0)
        ret = libc.syscall(ctypes.c_long(p['nr']), *[arg(a) for a in p['args']])
        os.write(w, ('ok' if ret >= 0 else 'errno%d' % ctypes.get_errno()).encode())
        os._exit(0)
    os.close(w)
    got = os.read(r, 64).decode()
    os.close(r)
    _, status = os.waitpid(pid, 0)
    out[p['name']] = got if got else 'died%d' % status
print('PROBE ' + json.dumps(out))
`;

const present = (probes: readonly Probe[]) => probes.filter((probe) => syscallNumber(probe.syscall, arch) !== null);
const payload = (probes: readonly Probe[]) =>
  JSON.stringify(present(probes).map((p) => ({ name: p.name, nr: syscallNumber(p.syscall, arch), args: p.args })));

function expectedErrno(probe: Probe): string {
  const rule = SECCOMP_RULES.find((candidate) => candidate.syscall === probe.syscall);
  if (rule === undefined) throw new Error(`no rule for ${probe.syscall}`);
  return `errno${rule.errno}`;
}

function parse(text: string): Record<string, string> {
  const line = text.split('\n').find((entry) => entry.startsWith('PROBE '));
  if (line === undefined) throw new Error(`no probe output: ${text.slice(0, 2000)}`);
  return JSON.parse(line.slice('PROBE '.length)) as Record<string, string>;
}

const probeFile = join(worktree, 'probe.py');
writeFileSync(probeFile, PROBE_SCRIPT);
const probeArgv = (probes: readonly Probe[]) => ['/usr/bin/python3', probeFile, payload(probes)] as const;
const hostBounds = { cwd: worktree, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 60_000, maxOutputBytes: 1 << 20 };

async function inSandbox(profile: SandboxProfileName, argv: readonly string[]) {
  const cap = mintSandboxExecCap(profile);
  if (cap._tag === 'Left') throw new Error(cap.left.message);
  const run = await runSandboxed(cap.right, {
    argv: argv as [string, ...string[]],
    worktreeRoot: worktree,
    cwd: worktree,
    timeoutMs: 60_000,
  });
  if (run._tag === 'Left') throw new Error(`refused: ${run.left.message}`);
  expect(run.right.syscallFilter).toBe('seccomp');
  return run.right;
}

function bareBubblewrap(command: readonly string[]): [string, ...string[]] {
  return bubblewrapArgv({
    bwrapPath: '/usr/bin/bwrap',
    worktreeRoot: worktree,
    cwd: worktree,
    network: 'none',
    extraBinds: [],
    command,
  }) as [string, ...string[]];
}

describe('redteam: seccomp filter', () => {
  for (const profile of ['verify', 'build', 'worker', 'hostile'] as const) {
    it(`refuses every filtered call with its errno in the ${profile} profile, and lets ordinary ones through`, async () => {
      const run = await inSandbox(profile, probeArgv([...PROBES, ...ALLOWED_PROBES]));
      const seen = parse(run.stdout.text);
      for (const probe of present(PROBES)) expect(seen[probe.name], probe.name).toBe(expectedErrno(probe));
      for (const probe of present(ALLOWED_PROBES)) {
        expect(seen[probe.name], probe.name).not.toBe(`errno${ERRNO.EPERM}`);
      }
      expect(seen['personality(query)']).toBe('ok');
      expect(seen['unshare(CLONE_FILES)']).toBe('ok');
    });
  }

  it('CONTROL: on the host every probe succeeds or fails with a different errno', async () => {
    const run = await runTrustedHostCommand({ ...hostBounds, argv: [...probeArgv(PROBES)] });
    const seen = parse(run.stdout.text);
    for (const probe of present(PROBES)) {
      if (probe.controlNeedsRoot === true && !isRoot) continue;
      expect(seen[probe.name], probe.name).toBeDefined();
      expect(seen[probe.name], probe.name).not.toBe(expectedErrno(probe));
    }
  });

  it('CONTROL: the same bubblewrap options without the filter let nested namespaces, ptrace and TIOCSTI through', async () => {
    const run = await runTrustedHostCommand({ ...hostBounds, argv: bareBubblewrap(probeArgv(PROBES)) });
    const seen = parse(run.stdout.text);
    expect(seen['unshare(CLONE_NEWUSER)']).toBe('ok');
    expect(seen['unshare(CLONE_NEWUSER|CLONE_NEWNS)']).toBe('ok');
    expect(seen['clone(CLONE_NEWUSER|CLONE_FS)']).toBe('errno22');
    expect(seen['clone3(NULL, 0)']).toBe('errno22');
    expect(seen['ptrace(PEEKDATA, no such pid)']).toBe('errno3');
    expect(seen['ioctl(0, TIOCSTI + high bits)']).toBe('errno25');
    expect(seen['personality(ADDR_NO_RANDOMIZE)']).toBe('ok');
    expect(seen['mount(bad target)']).toBe('errno14');
  });

  it('kills a call made through the x32 ABI (other syscall numbering), which the host merely refuses', async () => {
    if (arch !== 'x86_64') return;
    const x32: [string, ...string[]] = [
      '/usr/bin/python3',
      '-c',
      'import ctypes; l = ctypes.CDLL(None, use_errno=True); r = l.syscall(0x40000000 | 39); print("ALIVE", r, ctypes.get_errno())',
    ];
    const inside = await inSandbox('build', x32);
    expect(inside.stdout.text).not.toContain('ALIVE');
    // bwrap reports a child killed by SIGSYS (31) as 128 + 31.
    expect(inside.exitCode).toBe(128 + 31);
    const host = await runTrustedHostCommand({ ...hostBounds, argv: x32 });
    expect(host.stdout.text).toContain('ALIVE');
  });

  it('still runs node (threads, child processes), git, python3 and npm', async () => {
    const nodeScript = [
      "const { Worker } = require('node:worker_threads');",
      "const { execFileSync } = require('node:child_process');",
      'const w = new Worker(\'require("node:worker_threads").parentPort.postMessage(6 * 7)\', { eval: true });',
      "w.on('message', (n) => { console.log('worker', n, execFileSync('/bin/echo', ['child']).toString().trim()); w.terminate(); });",
    ].join('\n');
    const node = await inSandbox('build', ['node', '-e', nodeScript]);
    expect(node.stdout.text, node.stderr.text).toBe('worker 42 child\n');
    const git = await inSandbox('build', [
      'sh',
      '-c',
      'git init -q repo && cd repo && echo hi > f && git add f && git -c user.email=a@b -c user.name=a commit -qm one && git log --format=%s',
    ]);
    expect(git.stdout.text, git.stderr.text).toBe('one\n');
    const python = await inSandbox('hostile', [
      '/usr/bin/python3',
      '-c',
      'import subprocess, threading; print(sum(range(10)))',
    ]);
    expect(python.stdout.text, python.stderr.text).toBe('45\n');
    const npm = await inSandbox('build', ['npm', '--version']);
    expect(npm.exitCode, npm.stderr.text).toBe(0);
    expect(npm.stdout.text).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});
