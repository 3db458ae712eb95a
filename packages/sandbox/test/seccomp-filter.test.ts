/**
 * The seccomp program's pieces: syscall numbers against this machine's
 * kernel headers, the encoding, and the assembler's refusals. Whether the
 * filter really refuses each call inside bubblewrap is
 * redteam/sandbox-seccomp.test.ts.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SECCOMP_RULES, SYSCALL_NUMBERS, seccompProgram } from '../src/index.js';
import { assemble, jumpIfEqual, label, ret, to } from '../src/seccomp/bpf-assembler.js';

function headerNumbers(path: string): Map<string, number> {
  const numbers = new Map<string, number>();
  for (const match of readFileSync(path, 'utf8').matchAll(/#define __NR(?:3264)?_(\w+)\s+(\d+)/g)) {
    numbers.set(match[1] ?? '', Number(match[2]));
  }
  return numbers;
}

describe('seccomp filter', () => {
  it('uses the syscall numbers of the kernel headers (x86_64 and asm-generic for aarch64)', () => {
    const x86 = headerNumbers('/usr/include/x86_64-linux-gnu/asm/unistd_64.h');
    const generic = headerNumbers('/usr/include/asm-generic/unistd.h');
    for (const [name, [onX86, onArm]] of Object.entries(SYSCALL_NUMBERS)) {
      expect(onX86, `${name} on x86_64`).toBe(x86.get(name) ?? null);
      expect(onArm, `${name} on aarch64`).toBe(generic.get(name) ?? null);
    }
  });

  it('names every rule once and encodes whole 8-byte instructions, starting with the arch check', () => {
    const names = SECCOMP_RULES.map((rule) => rule.syscall);
    expect(new Set(names).size).toBe(names.length);
    const program = seccompProgram();
    expect(program.length % 8).toBe(0);
    const view = new DataView(program.buffer, program.byteOffset, program.byteLength);
    // ld [4] (seccomp_data.arch): code 0x20, k 4.
    expect([view.getUint16(0, true), view.getUint32(4, true)]).toEqual([0x20, 4]);
    // Last of the x86 section: the kill return lies between the sections, and the program ends with ALLOW.
    expect(view.getUint32(program.length - 4, true)).toBe(0x7fff0000);
  });

  it('is documented row by row in docs/sandbox.md (call, errno, numbers)', () => {
    const docs = readFileSync(resolve(import.meta.dirname, '../../../docs/sandbox.md'), 'utf8');
    for (const rule of SECCOMP_RULES) {
      const [onX86, onArm] = SYSCALL_NUMBERS[rule.syscall];
      const errno = rule.errno === 1 ? 'EPERM' : 'ENOSYS';
      const row = docs.split('\n').find((line) => line.startsWith(`| \`${rule.syscall}\` |`));
      expect(row, rule.syscall).toBeDefined();
      expect(row).toContain(`| ${errno} | ${onX86 ?? '—'} / ${onArm ?? '—'} |`);
    }
  });

  it('refuses unknown labels, backward jumps and jumps longer than 255', () => {
    expect(() => assemble([jumpIfEqual(1, to('nowhere'), 'next'), ret(0)])).toThrow(/unknown label/);
    expect(() => assemble([label('back'), ret(0), jumpIfEqual(1, to('back'), 'next'), ret(0)])).toThrow(/out of range/);
    const far = [jumpIfEqual(1, to('end'), 'next'), ...Array.from({ length: 256 }, () => ret(0)), label('end'), ret(0)];
    expect(() => assemble(far)).toThrow(/out of range/);
  });
});
