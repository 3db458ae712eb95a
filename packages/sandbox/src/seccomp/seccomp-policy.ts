/**
 * What the seccomp filter refuses inside bubblewrap, and with which errno.
 * The list is about attack surface, not about what a sandboxed process
 * lacks permission for anyway: it shuts the doors a process could use to
 * gain privileges again (a nested user namespace hands back every
 * capability bubblewrap dropped), to see or change other processes, or to
 * reach rarely used kernel code that keeps turning up in exploits.
 * docs/sandbox.md has the table; keep the two in step.
 */
import type { FilteredSyscall } from './syscall-numbers.js';

/** Linux errno values (the same on x86_64 and aarch64). */
export const ERRNO = { EPERM: 1, ENOSYS: 38 } as const;

/** A condition on one argument, always on its low 32 bits (see `SeccompRule`). */
export type ArgCondition =
  /** Refused when any bit of `mask` is set. */
  | { readonly kind: 'anyBitSet'; readonly arg: number; readonly mask: number }
  /** Refused when the argument equals one of `values`. */
  | { readonly kind: 'equalsOneOf'; readonly arg: number; readonly values: readonly number[] }
  /** Refused unless the argument equals one of `values`. */
  | { readonly kind: 'notOneOf'; readonly arg: number; readonly values: readonly number[] };

/**
 * One refused call. With `when`, only calls meeting the condition are
 * refused. Conditions look at the low 32 bits only, which is exact for
 * every argument used here: the kernel reads ioctl's request and
 * personality's persona as `unsigned int`, and legacy clone's flags through
 * `lower_32_bits()`; unshare's namespace bits all sit in the low word. A
 * filter that compared all 64 bits could be bypassed by setting high bits
 * the kernel then throws away (the old TIOCSTI escape of CVE-2019-10063).
 */
export interface SeccompRule {
  readonly syscall: FilteredSyscall;
  readonly errno: number;
  readonly when?: ArgCondition;
  /** Why it is refused (docs and test names). */
  readonly why: string;
}

/** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET. */
const NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;
/** CLONE_NEWTIME: only meaningful to unshare (in clone's flags 0x80 is part of the exit signal). */
const CLONE_NEWTIME = 0x00000080;
const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;
/** PER_LINUX, PER_LINUX32, UNAME26, PER_LINUX32|UNAME26, and 0xffffffff (query only). */
const ORDINARY_PERSONAS = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff];

const { EPERM, ENOSYS } = ERRNO;

export const SECCOMP_RULES: readonly SeccompRule[] = [
  {
    syscall: 'clone',
    errno: EPERM,
    when: { kind: 'anyBitSet', arg: 0, mask: NAMESPACE_FLAGS },
    why: 'new namespaces (a user namespace returns all capabilities)',
  },
  {
    syscall: 'unshare',
    errno: EPERM,
    when: { kind: 'anyBitSet', arg: 0, mask: NAMESPACE_FLAGS | CLONE_NEWTIME },
    why: 'new namespaces',
  },
  {
    syscall: 'clone3',
    errno: ENOSYS,
    why: 'its flags sit in memory a filter cannot read; ENOSYS makes libc fall back to clone',
  },
  { syscall: 'setns', errno: EPERM, why: 'joining other namespaces' },
  { syscall: 'mount', errno: EPERM, why: 'changing the filesystem view' },
  { syscall: 'umount2', errno: EPERM, why: 'uncovering what a mount hides' },
  { syscall: 'pivot_root', errno: EPERM, why: 'changing the filesystem view' },
  { syscall: 'chroot', errno: EPERM, why: 'changing the filesystem view' },
  { syscall: 'open_tree', errno: EPERM, why: 'new mount API' },
  { syscall: 'move_mount', errno: EPERM, why: 'new mount API' },
  { syscall: 'fsopen', errno: EPERM, why: 'new mount API' },
  { syscall: 'fsconfig', errno: EPERM, why: 'new mount API' },
  { syscall: 'fsmount', errno: EPERM, why: 'new mount API' },
  { syscall: 'fspick', errno: EPERM, why: 'new mount API' },
  { syscall: 'mount_setattr', errno: EPERM, why: 'new mount API (e.g. clearing read-only)' },
  { syscall: 'ptrace', errno: EPERM, why: 'reading and steering other processes' },
  { syscall: 'process_vm_readv', errno: EPERM, why: 'reading another process memory' },
  { syscall: 'process_vm_writev', errno: EPERM, why: 'writing another process memory' },
  { syscall: 'pidfd_getfd', errno: EPERM, why: 'taking descriptors out of another process' },
  { syscall: 'kcmp', errno: EPERM, why: 'probing other processes (kernel pointer ordering)' },
  { syscall: 'process_madvise', errno: EPERM, why: 'acting on another process memory' },
  { syscall: 'keyctl', errno: EPERM, why: 'kernel keyrings are not namespaced: keys of the host user' },
  { syscall: 'add_key', errno: EPERM, why: 'kernel keyrings' },
  { syscall: 'request_key', errno: EPERM, why: 'kernel keyrings (can call out to host helpers)' },
  { syscall: 'bpf', errno: EPERM, why: 'eBPF: large kernel attack surface' },
  { syscall: 'perf_event_open', errno: EPERM, why: 'perf: kernel attack surface and side channels' },
  { syscall: 'userfaultfd', errno: EPERM, why: 'used to win kernel races in exploits' },
  { syscall: 'io_uring_setup', errno: ENOSYS, why: 'io_uring: frequent exploit target; ENOSYS makes libuv fall back' },
  { syscall: 'io_uring_enter', errno: ENOSYS, why: 'io_uring' },
  { syscall: 'io_uring_register', errno: ENOSYS, why: 'io_uring' },
  {
    syscall: 'ioctl',
    errno: EPERM,
    when: { kind: 'equalsOneOf', arg: 1, values: [TIOCSTI, TIOCLINUX] },
    why: 'TIOCSTI/TIOCLINUX push keystrokes into a terminal',
  },
  {
    syscall: 'personality',
    errno: EPERM,
    when: { kind: 'notOneOf', arg: 0, values: ORDINARY_PERSONAS },
    why: 'odd personas (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE) weaken memory protections',
  },
  { syscall: 'kexec_load', errno: EPERM, why: 'loading a new kernel' },
  { syscall: 'kexec_file_load', errno: EPERM, why: 'loading a new kernel' },
  { syscall: 'init_module', errno: EPERM, why: 'loading kernel modules' },
  { syscall: 'finit_module', errno: EPERM, why: 'loading kernel modules' },
  { syscall: 'delete_module', errno: EPERM, why: 'unloading kernel modules' },
  { syscall: 'reboot', errno: EPERM, why: 'rebooting (or killing the pid namespace)' },
  { syscall: 'swapon', errno: EPERM, why: 'host swap configuration' },
  { syscall: 'swapoff', errno: EPERM, why: 'host swap configuration' },
  { syscall: 'acct', errno: EPERM, why: 'host process accounting' },
  { syscall: 'syslog', errno: EPERM, why: 'the kernel log (leaks kernel addresses)' },
  { syscall: 'open_by_handle_at', errno: EPERM, why: 'opens files by handle, past the mount view' },
  { syscall: 'iopl', errno: EPERM, why: 'raw I/O port access (x86_64)' },
  { syscall: 'ioperm', errno: EPERM, why: 'raw I/O port access (x86_64)' },
  { syscall: 'modify_ldt', errno: EPERM, why: 'x86 segment tables: old exploit surface' },
];
