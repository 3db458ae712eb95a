/**
 * Shared bench helpers: run tinybench tasks, print a table, and print each
 * result as a ratio against a baseline measured in the same run. Benchmarks
 * report; they never assert wall-clock limits (the machine is shared).
 */
import { Bench } from 'tinybench';

export interface BenchCase {
  readonly name: string;
  readonly fn: () => unknown;
  /** Work items done per call, to report per-item latency. */
  readonly itemsPerCall?: number;
}

export interface BenchRow {
  readonly name: string;
  readonly p50Ms: number;
  readonly meanMs: number;
  readonly perItemP50Us: number;
  readonly itemsPerSecond: number;
  readonly samples: number;
}

export async function runCases(title: string, cases: readonly BenchCase[], timeMs = 1_000): Promise<BenchRow[]> {
  const bench = new Bench({ time: timeMs, warmupTime: 200 });
  for (const c of cases) bench.add(c.name, c.fn);
  await bench.run();
  const rows: BenchRow[] = [];
  for (const c of cases) {
    const task = bench.getTask(c.name);
    const result = task?.result;
    if (result === undefined || !('latency' in result)) throw new Error(`bench ${c.name} produced no result`);
    const items = c.itemsPerCall ?? 1;
    const p50Ms = result.latency.p50 ?? result.latency.mean;
    rows.push({
      name: c.name,
      p50Ms,
      meanMs: result.latency.mean,
      perItemP50Us: (p50Ms * 1000) / items,
      itemsPerSecond: items / (result.latency.mean / 1000),
      samples: result.latency.samplesCount ?? 0,
    });
  }
  console.log(`\n## ${title}`);
  console.table(
    rows.map((r) => ({
      case: r.name,
      'p50/item (µs)': r.perItemP50Us.toFixed(3),
      'items/s': Math.round(r.itemsPerSecond).toLocaleString('en-US'),
    })),
  );
  return rows;
}

export function ratio(label: string, subject: BenchRow, baseline: BenchRow, target?: string): void {
  const r = subject.perItemP50Us / baseline.perItemP50Us;
  console.log(
    `ratio ${label}: ${r.toFixed(2)}× (${subject.perItemP50Us.toFixed(3)} µs vs ${baseline.perItemP50Us.toFixed(3)} µs)${target ? ` — target: ${target}` : ''}`,
  );
}

export function report(label: string, value: string, target?: string): void {
  console.log(`${label}: ${value}${target ? ` — target: ${target}` : ''}`);
}
