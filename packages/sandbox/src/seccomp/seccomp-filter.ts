/**
 * The seccomp program bubblewrap installs right before it executes the
 * sandboxed command (`--seccomp 3`). Layout:
 *
 *   load arch; x86_64 → x86 section; aarch64 → arm section; else kill
 *   x86 section: load nr; x32 bit set → kill; rules…; ALLOW
 *   kill: KILL_PROCESS
 *   arm section: load nr; rules…; ALLOW
 *
 * A rule is `nr == N → action` or, with a condition, `nr == N → load the
 * argument's low word → test → action or ALLOW`. Every branch that loads an
 * argument ends in a return, so no later rule ever sees a clobbered `nr`.
 * Unknown architectures (i386 via `int 0x80`, arm32 compat) are killed: their
 * syscall numbers mean different calls, which is how filters get bypassed.
 */
import {
  assemble,
  type Instruction,
  jumpIfAnyBit,
  jumpIfEqual,
  label,
  load,
  ret,
  SECCOMP_DATA,
  SECCOMP_RET,
  to,
} from './bpf-assembler.js';
import { SECCOMP_RULES, type SeccompRule } from './seccomp-policy.js';
import { AUDIT_ARCH, type FilterArch, syscallNumber, X32_SYSCALL_BIT } from './syscall-numbers.js';

function ruleInstructions(rule: SeccompRule, nr: number, id: string): Instruction[] {
  const action = SECCOMP_RET.errno(rule.errno);
  const skip = `${id}-skip`;
  const condition = rule.when;
  if (condition === undefined) return [jumpIfEqual(nr, 'next', to(skip)), ret(action), label(skip)];
  const refuse = `${id}-refuse`;
  const allow = `${id}-allow`;
  const body: Instruction[] = [jumpIfEqual(nr, 'next', to(skip)), load(SECCOMP_DATA.argLow(condition.arg))];
  if (condition.kind === 'anyBitSet') {
    body.push(jumpIfAnyBit(condition.mask, to(refuse), to(allow)));
  } else {
    const onMatch = condition.kind === 'equalsOneOf' ? to(refuse) : to(allow);
    for (const value of condition.values) body.push(jumpIfEqual(value >>> 0, onMatch, 'next'));
    body.push(ret(condition.kind === 'equalsOneOf' ? SECCOMP_RET.allow : action));
  }
  body.push(label(refuse), ret(action), label(allow), ret(SECCOMP_RET.allow), label(skip));
  return body;
}

function archSection(arch: FilterArch, rules: readonly SeccompRule[]): Instruction[] {
  const section: Instruction[] = [label(arch), load(SECCOMP_DATA.nr)];
  if (arch === 'x86_64') section.push(jumpIfAnyBit(X32_SYSCALL_BIT, to('kill'), 'next'));
  rules.forEach((rule, index) => {
    const nr = syscallNumber(rule.syscall, arch);
    if (nr !== null) section.push(...ruleInstructions(rule, nr, `${arch}-${index}`));
  });
  section.push(ret(SECCOMP_RET.allow));
  return section;
}

/** The whole filter as instructions (exported for tests that read its structure). */
export function seccompInstructions(rules: readonly SeccompRule[] = SECCOMP_RULES): Instruction[] {
  return [
    load(SECCOMP_DATA.arch),
    jumpIfEqual(AUDIT_ARCH.x86_64, to('x86_64'), 'next'),
    jumpIfEqual(AUDIT_ARCH.aarch64, to('aarch64'), to('kill')),
    ...archSection('x86_64', rules),
    // Between the sections, so every jump to it is short and forward.
    label('kill'),
    ret(SECCOMP_RET.killProcess),
    ...archSection('aarch64', rules),
  ];
}

let cached: Uint8Array | undefined;

/** The encoded filter bubblewrap reads from a descriptor (built once per process). */
export function seccompProgram(): Uint8Array {
  cached ??= assemble(seccompInstructions());
  return cached;
}
