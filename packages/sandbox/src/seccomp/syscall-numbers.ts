/**
 * Syscall numbers for the two architectures the seccomp filter knows:
 * x86_64 (its own table) and aarch64 (the asm-generic table). `null` means
 * the call does not exist there. packages/sandbox/test/seccomp-filter.test.ts
 * checks every number against the kernel headers of the machine it runs on.
 */

/** The calls the filter names. */
export type FilteredSyscall =
  | 'clone'
  | 'clone3'
  | 'unshare'
  | 'setns'
  | 'mount'
  | 'umount2'
  | 'pivot_root'
  | 'chroot'
  | 'open_tree'
  | 'move_mount'
  | 'fsopen'
  | 'fsconfig'
  | 'fsmount'
  | 'fspick'
  | 'mount_setattr'
  | 'ptrace'
  | 'process_vm_readv'
  | 'process_vm_writev'
  | 'pidfd_getfd'
  | 'kcmp'
  | 'process_madvise'
  | 'keyctl'
  | 'add_key'
  | 'request_key'
  | 'bpf'
  | 'perf_event_open'
  | 'userfaultfd'
  | 'io_uring_setup'
  | 'io_uring_enter'
  | 'io_uring_register'
  | 'ioctl'
  | 'personality'
  | 'kexec_load'
  | 'kexec_file_load'
  | 'init_module'
  | 'finit_module'
  | 'delete_module'
  | 'reboot'
  | 'swapon'
  | 'swapoff'
  | 'acct'
  | 'syslog'
  | 'open_by_handle_at'
  | 'iopl'
  | 'ioperm'
  | 'modify_ldt';

/** The filter's architectures, by the audit architecture the kernel reports in `seccomp_data.arch`. */
export type FilterArch = 'x86_64' | 'aarch64';

/** AUDIT_ARCH_X86_64 and AUDIT_ARCH_AARCH64 (EM_* | 64-bit | little-endian). */
export const AUDIT_ARCH: Readonly<Record<FilterArch, number>> = { x86_64: 0xc000003e, aarch64: 0xc00000b7 };

/** Set in `nr` for x32 system calls on x86_64 (a second ABI with its own numbering). */
export const X32_SYSCALL_BIT = 0x40000000;

/** [x86_64, aarch64] */
export const SYSCALL_NUMBERS: Readonly<Record<FilteredSyscall, readonly [number | null, number | null]>> = {
  clone: [56, 220],
  clone3: [435, 435],
  unshare: [272, 97],
  setns: [308, 268],
  mount: [165, 40],
  umount2: [166, 39],
  pivot_root: [155, 41],
  chroot: [161, 51],
  open_tree: [428, 428],
  move_mount: [429, 429],
  fsopen: [430, 430],
  fsconfig: [431, 431],
  fsmount: [432, 432],
  fspick: [433, 433],
  mount_setattr: [442, 442],
  ptrace: [101, 117],
  process_vm_readv: [310, 270],
  process_vm_writev: [311, 271],
  pidfd_getfd: [438, 438],
  kcmp: [312, 272],
  process_madvise: [440, 440],
  keyctl: [250, 219],
  add_key: [248, 217],
  request_key: [249, 218],
  bpf: [321, 280],
  perf_event_open: [298, 241],
  userfaultfd: [323, 282],
  io_uring_setup: [425, 425],
  io_uring_enter: [426, 426],
  io_uring_register: [427, 427],
  ioctl: [16, 29],
  personality: [135, 92],
  kexec_load: [246, 104],
  kexec_file_load: [320, 294],
  init_module: [175, 105],
  finit_module: [313, 273],
  delete_module: [176, 106],
  reboot: [169, 142],
  swapon: [167, 224],
  swapoff: [168, 225],
  acct: [163, 89],
  syslog: [103, 116],
  open_by_handle_at: [304, 265],
  iopl: [172, null],
  ioperm: [173, null],
  modify_ldt: [154, null],
};

/** The number of `name` on `arch`, or null when the call does not exist there. */
export function syscallNumber(name: FilteredSyscall, arch: FilterArch): number | null {
  const [x86, arm] = SYSCALL_NUMBERS[name];
  return arch === 'x86_64' ? x86 : arm;
}
