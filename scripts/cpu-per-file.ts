/**
 * With CRUSTCORE_CPU_LOG=FILE, every test file appends one JSON line to FILE:
 * the CPU seconds its worker process and every child it waited for used
 * while the file ran (utime+stime+cutime+cstime from /proc/self/stat). Wall
 * time under four contending workers says little about what a file costs;
 * this says what the two cores spent on it. Off by default: nothing runs.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect } from 'vitest';

const log = process.env.CRUSTCORE_CPU_LOG;
const TICKS_PER_SECOND = 100;

function cpuTicks(): number {
  // Fields after the command name (which may hold spaces) start at field 3.
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0);
}

if (log !== undefined && log !== '') {
  let start = 0;
  beforeAll(() => {
    start = cpuTicks();
  });
  afterAll(() => {
    const file = expect.getState().testPath ?? 'unknown';
    appendFileSync(log, `${JSON.stringify({ file, cpuSeconds: (cpuTicks() - start) / TICKS_PER_SECOND })}\n`);
  });
}
