/**
 * A tiny classic-BPF assembler for seccomp: the handful of instructions a
 * syscall filter needs, symbolic jump targets, and the 8-byte
 * `struct sock_filter` encoding bubblewrap reads (`--seccomp FD`).
 */

/** `struct seccomp_data` offsets: nr (int), arch (u32), ip (u64), args[6] (u64). */
export const SECCOMP_DATA = { nr: 0, arch: 4, argLow: (index: number) => 16 + 8 * index } as const;

/** seccomp return actions. */
export const SECCOMP_RET = {
  killProcess: 0x80000000,
  allow: 0x7fff0000,
  errno: (errno: number) => (0x00050000 | (errno & 0xffff)) >>> 0,
} as const;

const BPF_LD_W_ABS = 0x20;
const BPF_JMP_JEQ_K = 0x15;
const BPF_JMP_JSET_K = 0x45;
const BPF_RET_K = 0x06;
/** The kernel refuses longer programs (BPF_MAXINSNS). */
const MAX_INSTRUCTIONS = 4096;

/** A jump target: the next instruction, or a label placed later in the program. */
export type Target = 'next' | { readonly label: string };

export type Instruction =
  | { readonly op: 'load'; readonly offset: number }
  | {
      readonly op: 'jumpIfEqual' | 'jumpIfAnyBit';
      readonly k: number;
      readonly ifTrue: Target;
      readonly ifFalse: Target;
    }
  | { readonly op: 'return'; readonly action: number }
  | { readonly op: 'label'; readonly name: string };

export const load = (offset: number): Instruction => ({ op: 'load', offset });
export const ret = (action: number): Instruction => ({ op: 'return', action });
export const label = (name: string): Instruction => ({ op: 'label', name });
export const jumpIfEqual = (k: number, ifTrue: Target, ifFalse: Target): Instruction => ({
  op: 'jumpIfEqual',
  k,
  ifTrue,
  ifFalse,
});
export const jumpIfAnyBit = (k: number, ifTrue: Target, ifFalse: Target): Instruction => ({
  op: 'jumpIfAnyBit',
  k,
  ifTrue,
  ifFalse,
});
export const to = (name: string): Target => ({ label: name });

/** Encodes a program; throws on a missing label, a backward or too-long jump, or an oversized program. */
export function assemble(program: readonly Instruction[]): Uint8Array {
  const positions = new Map<string, number>();
  const real: Exclude<Instruction, { op: 'label' }>[] = [];
  for (const instruction of program) {
    if (instruction.op === 'label') {
      if (positions.has(instruction.name)) throw new Error(`duplicate label ${instruction.name}`);
      positions.set(instruction.name, real.length);
    } else {
      real.push(instruction);
    }
  }
  if (real.length === 0 || real.length > MAX_INSTRUCTIONS) throw new Error(`program length ${real.length}`);
  const bytes = new Uint8Array(real.length * 8);
  const view = new DataView(bytes.buffer);
  const offsetTo = (target: Target, at: number): number => {
    if (target === 'next') return 0;
    const position = positions.get(target.label);
    if (position === undefined) throw new Error(`unknown label ${target.label}`);
    const offset = position - at - 1;
    // Classic BPF only jumps forward, by at most 255 instructions.
    if (offset < 0 || offset > 255) throw new Error(`jump to ${target.label} out of range (${offset})`);
    return offset;
  };
  real.forEach((instruction, at) => {
    let code: number;
    let jt = 0;
    let jf = 0;
    let k: number;
    if (instruction.op === 'load') {
      code = BPF_LD_W_ABS;
      k = instruction.offset;
    } else if (instruction.op === 'return') {
      code = BPF_RET_K;
      k = instruction.action;
    } else {
      code = instruction.op === 'jumpIfEqual' ? BPF_JMP_JEQ_K : BPF_JMP_JSET_K;
      jt = offsetTo(instruction.ifTrue, at);
      jf = offsetTo(instruction.ifFalse, at);
      k = instruction.k;
    }
    // struct sock_filter { __u16 code; __u8 jt; __u8 jf; __u32 k; } in host (little-endian) order.
    view.setUint16(at * 8, code, true);
    view.setUint8(at * 8 + 2, jt);
    view.setUint8(at * 8 + 3, jf);
    view.setUint32(at * 8 + 4, k >>> 0, true);
  });
  return bytes;
}
