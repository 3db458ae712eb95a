/**
 * Redaction throughput (issue #6): 1 MiB of realistic tool output (test logs,
 * stack traces, JSON bodies, base64 and hex blobs, URLs, env lines) with 50
 * registered secrets and every detector, against a plain scan of the same
 * text with `String.prototype.includes` for the same 50 secrets (raw form
 * only — the baseline finds far less). Target: ≥ 50 MB/s for the full redactor.
 * Also: the original thirteen detectors against the full catalog in the same
 * run, and both detector sets' recall and precision on the independent
 * credential corpus (packages/secrets/test/fixtures/credential-corpus.ts).
 */
import { DETECTOR_IDS, Redactor, SecretHandle, SecretMaterial } from '@crustcore/secrets';
import { scoreCorpus } from '../packages/secrets/test/fixtures/corpus-metrics.js';
import { generateCredentialCorpus } from '../packages/secrets/test/fixtures/credential-corpus.js';
import { type BenchRow, ratio, report, runCases } from './harness.js';

const MIB = 1024 * 1024;

let seed = 0x5eed;
const random = (): number => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const chars = (alphabet: string, length: number): string =>
  Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
const bytes = (length: number): Buffer => Buffer.from(Array.from({ length }, () => Math.floor(random() * 256)));

const secrets = Array.from(
  { length: 50 },
  (_, i) => `${pick(['key', 'tok', 'pw'])}-${chars(ALNUM + '_-', 24 + (i % 40))}`,
);

const lines = [
  () =>
    `  ✓ src/${pick(['parser', 'lexer', 'cache', 'router'])}.test.ts > handles case ${Math.floor(random() * 500)} (${Math.floor(random() * 40)} ms)`,
  () =>
    `    at ${pick(['Object.run', 'async Promise.all', 'Module._compile', 'processTicksAndRejections'])} (/app/node_modules/${pick(['vitest', 'tsx', 'pg'])}/dist/index.js:${Math.floor(random() * 9000)}:${Math.floor(random() * 80)})`,
  () =>
    JSON.stringify({
      id: Math.floor(random() * 1e9),
      status: pick(['ok', 'queued', 'failed']),
      items: [chars(ALNUM, 12), chars(ALNUM, 8)],
      url: `https://api.example.com/v1/items/${chars(ALNUM, 10)}?page=${Math.floor(random() * 9)}`,
    }),
  () => `data: ${bytes(90).toString('base64')}`,
  () =>
    `commit ${bytes(20).toString('hex')}  ${pick(['fix', 'feat', 'chore'])}: update ${pick(['deps', 'docs', 'tests'])}`,
  () =>
    `${pick(['HOME', 'PATH', 'NODE_ENV', 'CI', 'LANG'])}=${pick(['/home/user', '/usr/bin:/bin', 'production', 'true', 'C.UTF-8'])}`,
  () => `GET /api/v1/${chars(ALNUM, 6)} 200 ${Math.floor(random() * 900)}ms - ${Math.floor(random() * 1e5)} bytes`,
  () =>
    `warning: ${pick(['deprecated', 'unused', 'shadowed'])} variable "${chars('abcdefghij', 7)}" at line ${Math.floor(random() * 400)}`,
];

function buildText(): string {
  const out: string[] = [];
  let size = 0;
  let n = 0;
  while (size < MIB) {
    let line = pick(lines)();
    n++;
    // Now and then a leak: a registered secret (raw or base64) or a detector-format token.
    if (n % 997 === 0) line += ` key=${pick(secrets)}`;
    if (n % 1499 === 0) line += ` b64=${Buffer.from(pick(secrets)).toString('base64')}`;
    if (n % 2003 === 0) line += ` token=g${'h'}p_${chars(ALNUM, 36)}`;
    out.push(line);
    size += line.length + 1;
  }
  return out.join('\n').slice(0, MIB);
}

function redactorFor(values: readonly string[], options: ConstructorParameters<typeof Redactor>[0] = {}): Redactor {
  const redactor = new Redactor(options);
  values.forEach((value, i) => {
    const handle = SecretHandle.create(`SECRET_${i}`);
    const material = SecretMaterial.fromText(value);
    if (handle._tag === 'Left' || material._tag === 'Left') throw new Error('setup');
    const registered = redactor.register(handle.right, material.right);
    if (registered._tag === 'Left') throw new Error(registered.left._tag);
  });
  return redactor;
}

const text = buildText();
const compileStarted = performance.now();
const full = redactorFor(secrets);
full.redactText('warm-up');
const compileMs = performance.now() - compileStarted;
const exactOnly = redactorFor(secrets, { detectors: [] });
const detectorsOnly = new Redactor();
const ORIGINAL_IDS = DETECTOR_IDS.slice(0, 9).concat(DETECTOR_IDS.slice(-4));
const originalDetectorsOnly = new Redactor({ detectors: ORIGINAL_IDS });
const findings = full.report(text).findings.length;

const CHUNK = 64 * 1024;
const streamed = (): string => {
  const incremental = full.createIncremental();
  let out = '';
  for (let at = 0; at < text.length; at += CHUNK) out += incremental.push(text.slice(at, at + CHUNK));
  return out + incremental.end();
};
if (streamed() !== full.redactText(text)) throw new Error('streamed output differs from one-shot');

let sink = 0;
const rows = await runCases(
  `redaction of 1 MiB of tool output (${findings} findings), 50 registered secrets`,
  [
    {
      name: 'includes × 50 secrets (baseline)',
      fn: () => {
        for (const secret of secrets) if (text.includes(secret)) sink++;
      },
    },
    { name: 'redactText: 50 secrets + all detectors', fn: () => (sink += full.redactText(text).length) },
    { name: 'redactText: 50 secrets, no detectors', fn: () => (sink += exactOnly.redactText(text).length) },
    { name: 'redactText: detectors only', fn: () => (sink += detectorsOnly.redactText(text).length) },
    {
      name: 'redactText: original 13 detectors only',
      fn: () => (sink += originalDetectorsOnly.redactText(text).length),
    },
    { name: 'IncrementalRedactor, 64 KiB chunks', fn: () => (sink += streamed().length) },
  ],
  2_000,
);

const megabytesPerSecond = (row: BenchRow): number => text.length / MIB / (row.meanMs / 1000);

/**
 * The same cases timed by CPU time (process.cpuUsage) instead of wall time:
 * on a shared machine a descheduled process inflates wall time, not CPU time.
 */
function cpuMegabytesPerSecond(fn: () => unknown, iterations = 20): number {
  fn();
  const before = process.cpuUsage();
  for (let i = 0; i < iterations; i++) fn();
  const used = process.cpuUsage(before);
  return ((text.length / MIB) * iterations) / ((used.user + used.system) / 1e6);
}
const [baseline, redactAll, exact, detectors, original, stream] = rows as [
  BenchRow,
  BenchRow,
  BenchRow,
  BenchRow,
  BenchRow,
  BenchRow,
];
for (const row of rows) report(`throughput ${row.name}`, `${megabytesPerSecond(row).toFixed(1)} MiB/s`);
report('full redactor (wall time)', `${megabytesPerSecond(redactAll).toFixed(1)} MiB/s`, '≥ 50 MB/s');
const cpuBaseline = cpuMegabytesPerSecond(() => {
  for (const secret of secrets) if (text.includes(secret)) sink++;
});
const cpuFull = cpuMegabytesPerSecond(() => (sink += full.redactText(text).length));
const cpuExact = cpuMegabytesPerSecond(() => (sink += exactOnly.redactText(text).length));
const cpuDetectors = cpuMegabytesPerSecond(() => (sink += detectorsOnly.redactText(text).length));
const cpuStream = cpuMegabytesPerSecond(streamed);
const cpuOriginal = cpuMegabytesPerSecond(() => (sink += originalDetectorsOnly.redactText(text).length));
report('CPU-time throughput includes × 50 (baseline)', `${cpuBaseline.toFixed(1)} MiB/s`);
report('CPU-time throughput full redactor', `${cpuFull.toFixed(1)} MiB/s`, '≥ 50 MB/s');
report('CPU-time throughput exact only', `${cpuExact.toFixed(1)} MiB/s`);
report('CPU-time throughput detectors only', `${cpuDetectors.toFixed(1)} MiB/s`);
report('CPU-time throughput IncrementalRedactor', `${cpuStream.toFixed(1)} MiB/s`);
report('CPU-time throughput original 13 detectors', `${cpuOriginal.toFixed(1)} MiB/s`);
report('CPU-time ratio all detectors vs original 13', `${(cpuOriginal / cpuDetectors).toFixed(2)}× the time`);
report('CPU-time ratio full redactor vs includes × 50', `${(cpuBaseline / cpuFull).toFixed(2)}× the time`);
report('compile 50 secrets (forms, fragments, matcher)', `${compileMs.toFixed(1)} ms`);
ratio('redactText (all) vs includes × 50', redactAll, baseline);
ratio('redactText (exact only) vs includes × 50', exact, baseline);
ratio('redactText (detectors only) vs includes × 50', detectors, baseline);
ratio('IncrementalRedactor vs one-shot redactText', stream, redactAll);
ratio(`all ${new Set(DETECTOR_IDS).size} detectors vs the original 13`, detectors, original);

const corpus = generateCredentialCorpus();
for (const [name, redactor] of [
  ['all detectors', detectorsOnly],
  ['original 13 detectors', originalDetectorsOnly],
] as const) {
  const score = scoreCorpus(redactor, corpus);
  const bare = scoreCorpus(
    redactor,
    corpus.filter((s) => s.bare),
  );
  report(
    `credential corpus, ${name}`,
    `recall ${score.recall.toFixed(3)}, precision ${score.precision.toFixed(3)} (${score.positives} positives, ${score.negatives} negatives); bare samples recall ${bare.recall.toFixed(3)}`,
    'recall ≥ 0.95, precision ≥ 0.95',
  );
}
if (sink < 0) console.log(sink);
