/**
 * Ledger benchmarks (issue #3), each with a baseline measured in the same run:
 * - append (encode + hash, no fsync), 256-byte payload: p50 per event
 *   (roadmap < 50 µs, aim < 5 µs), against the same events as JSON lines;
 * - `inspect` chain verification throughput against raw SHA-256 of the same
 *   bytes with the same hash implementation (target ≥ 0.5×), for node:crypto
 *   and @noble/hashes, at 256-byte and 64 KiB payloads;
 * - durable append with group commit: events/s at batch sizes 1, 16, 256.
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson } from '@crustcore/kernel';
import {
  checkChainBytes,
  decodeFrame,
  encodeHead,
  type FrameInput,
  GENESIS_HASH,
  inspectLog,
  LedgerWriter,
  nobleSha256,
  nodeSha256,
  prepareFrame,
  type Sha256,
  sealFrame,
  stateDirLayout,
  TRAILER_BYTES,
} from '@crustcore/ledger';
import { ratio, report, runCases } from './harness.js';

const scratch = mkdtempSync(join(tmpdir(), 'ledger-bench-'));
const encoder = new TextEncoder();

/** An event whose canonical JSON payload is exactly `payloadBytes` long. */
function event(seq: number, payloadBytes: number): FrameInput {
  const base = { kind: 'CommandCompleted', seq, at: 1_700_000_000_000 + seq, text: '' };
  const fill = payloadBytes - canonicalJson(base).length;
  return {
    kind: 'CommandCompleted',
    actor: 'tool',
    visibility: 'internal',
    timestampMs: 1_700_000_000_000 + seq,
    payload: { ...base, text: 'x'.repeat(Math.max(0, fill)) },
  };
}

/** Encodes and links events in memory, as the writer does before its write. */
class FrameChain {
  #seq = 0;
  #prev: Uint8Array = GENESIS_HASH;
  constructor(readonly sha256: Sha256) {}
  next(input: FrameInput): Uint8Array {
    const prepared = prepareFrame(input, 1 << 24, this.sha256);
    if (prepared._tag === 'Left') throw new Error(prepared.left.reason);
    const sealed = sealFrame(prepared.right, { seq: ++this.#seq, prevHash: this.#prev, commit: true }, this.sha256);
    this.#prev = sealed.hash;
    return sealed.bytes;
  }
}

function buildLog(count: number, payloadBytes: number): Uint8Array {
  const chain = new FrameChain(nodeSha256);
  const frames = Array.from({ length: count }, (_, i) => chain.next(event(i + 1, payloadBytes)));
  const out = new Uint8Array(frames.reduce((n, f) => n + f.length, 0));
  let at = 0;
  for (const frame of frames) {
    out.set(frame, at);
    at += frame.length;
  }
  return out;
}

async function appendBench(): Promise<void> {
  const events = Array.from({ length: 1024 }, (_, i) => event(i + 1, 256));
  const payloadLength = encoder.encode(canonicalJson(events[0]!.payload)).length;
  const frameChain = new FrameChain(nodeSha256);
  const nobleChain = new FrameChain(nobleSha256);
  const fd = openSync(join(scratch, 'append.bin'), 'w');
  const jsonFd = openSync(join(scratch, 'append.jsonl'), 'w');
  let i = 0;
  const nextEvent = () => events[i++ & 1023]!;
  const rows = await runCases(`append without fsync, ${payloadLength}-byte payload (per event)`, [
    { name: 'JSON line (stringify + UTF-8)', fn: () => encoder.encode(`${JSON.stringify(nextEvent())}\n`) },
    { name: 'frame (canonical JSON + 2× SHA-256 node:crypto + link)', fn: () => frameChain.next(nextEvent()) },
    { name: 'frame, @noble/hashes', fn: () => nobleChain.next(nextEvent()) },
    { name: 'JSON line + write(2)', fn: () => writeSync(jsonFd, encoder.encode(`${JSON.stringify(nextEvent())}\n`)) },
    { name: 'frame + write(2)', fn: () => writeSync(fd, frameChain.next(nextEvent())) },
  ]);
  closeSync(fd);
  closeSync(jsonFd);
  const [json, frame, noble, jsonWrite, frameWrite] = rows as [
    (typeof rows)[0],
    (typeof rows)[0],
    (typeof rows)[0],
    (typeof rows)[0],
    (typeof rows)[0],
  ];
  report('append p50, node:crypto', `${frame.perItemP50Us.toFixed(2)} µs`, 'roadmap < 50 µs, aim < 5 µs');
  ratio('frame vs JSON line (encode only)', frame, json);
  ratio('frame vs JSON line (with write(2))', frameWrite, jsonWrite);
  ratio('frame with noble vs node:crypto', noble, frame);
}

async function verifyBench(payloadBytes: number, count: number): Promise<void> {
  const log = buildLog(count, payloadBytes);
  // The head file the writer would have left: naming the last frame.
  const probe = checkChainBytes(log, { _tag: 'Absent' });
  const head = {
    _tag: 'Present',
    head: { seq: probe.lastSeq, hash: probe.lastHash, end: probe.goodEnd, mac: undefined },
  } as const;
  const dir = join(scratch, `verify-${payloadBytes}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(stateDirLayout(dir).logPath, log);
  writeFileSync(stateDirLayout(dir).headPath, encodeHead(head.head, undefined));
  const bytes = log.length;
  const mb = bytes / (1024 * 1024);
  // The frame format needs two digests per frame (header, payload). Hashing exactly those two
  // regions and nothing else is the floor any verifier of this format pays; for small frames
  // the hash call's fixed cost, not the bytes, sets it.
  const regions: Array<readonly [number, number, number]> = [];
  for (let at = 0; at < log.length; ) {
    const decoded = decodeFrame(log, at, nodeSha256);
    if (decoded._tag !== 'Frame') throw new Error('bench log does not decode');
    const { offset, headerLength, length } = decoded.frame;
    regions.push([offset, offset + headerLength, offset + length - TRAILER_BYTES]);
    at = decoded.end;
  }
  const twoDigests = (sha256: Sha256) => () => {
    for (const [start, payloadStart, hashAt] of regions) {
      sha256(log.subarray(payloadStart, hashAt));
      sha256(log.subarray(start, payloadStart));
    }
  };
  const check = (sha256: Sha256) => () => {
    const r = checkChainBytes(log, head, { sha256 });
    if (r.failure !== undefined || r.frames !== count) throw new Error(`verify failed: ${JSON.stringify(r.failure)}`);
  };
  const rows = await runCases(
    `verification, ${count} frames × ${payloadBytes}-byte payload (${mb.toFixed(1)} MiB); items = bytes`,
    [
      { name: 'raw SHA-256, node:crypto', fn: () => nodeSha256(log), itemsPerCall: bytes },
      { name: 'chain check, node:crypto', fn: check(nodeSha256), itemsPerCall: bytes },
      { name: 'raw SHA-256, @noble/hashes', fn: () => nobleSha256(log), itemsPerCall: bytes },
      { name: 'chain check, @noble/hashes', fn: check(nobleSha256), itemsPerCall: bytes },
      { name: 'two bare digests per frame, node:crypto', fn: twoDigests(nodeSha256), itemsPerCall: bytes },
      { name: 'two bare digests per frame, @noble/hashes', fn: twoDigests(nobleSha256), itemsPerCall: bytes },
      {
        name: 'full inspect from file (payload JSON, story), node:crypto',
        fn: () => {
          if (!inspectLog({ ...stateDirLayout(dir) }).ok) throw new Error('inspect failed');
        },
        itemsPerCall: bytes,
      },
    ],
    1_500,
  );
  type Row = (typeof rows)[0];
  const [rawNode, chainNode, rawNoble, chainNoble, floorNode, floorNoble, full] = rows as [
    Row,
    Row,
    Row,
    Row,
    Row,
    Row,
    Row,
  ];
  const mbs = (row: (typeof rows)[0]) => `${(row.itemsPerSecond / (1024 * 1024)).toFixed(0)} MiB/s`;
  report(
    `raw SHA-256 MiB/s (${payloadBytes} B payloads)`,
    `node:crypto ${mbs(rawNode)}, @noble/hashes ${mbs(rawNoble)}`,
  );
  report(
    `chain check MiB/s (${payloadBytes} B payloads)`,
    `node:crypto ${mbs(chainNode)}, @noble/hashes ${mbs(chainNoble)}, full inspect ${mbs(full)}`,
  );
  report(
    `verify/raw throughput ratio, node:crypto (${payloadBytes} B)`,
    `${(chainNode.itemsPerSecond / rawNode.itemsPerSecond).toFixed(2)}×`,
    '≥ 0.5×',
  );
  report(
    `verify/raw throughput ratio, @noble/hashes (${payloadBytes} B)`,
    `${(chainNoble.itemsPerSecond / rawNoble.itemsPerSecond).toFixed(2)}×`,
    '≥ 0.5×',
  );
  report(
    `format floor: two bare digests per frame / raw (${payloadBytes} B)`,
    `node:crypto ${(floorNode.itemsPerSecond / rawNode.itemsPerSecond).toFixed(2)}×, ` +
      `@noble/hashes ${(floorNoble.itemsPerSecond / rawNoble.itemsPerSecond).toFixed(2)}×`,
    'the best any checker of this format can reach',
  );
  report(
    `chain check / format floor (${payloadBytes} B)`,
    `node:crypto ${(chainNode.itemsPerSecond / floorNode.itemsPerSecond).toFixed(2)}×, ` +
      `@noble/hashes ${(chainNoble.itemsPerSecond / floorNoble.itemsPerSecond).toFixed(2)}×`,
  );
}

async function groupCommitBench(): Promise<void> {
  const rows: Array<{ batch: number; events: number; ms: number; perSecond: number }> = [];
  for (const [batch, events] of [
    [1, 300],
    [16, 3_000],
    [256, 20_000],
  ] as const) {
    const dir = mkdtempSync(join(scratch, `commit-${batch}-`));
    const opened = await LedgerWriter.open({
      ...stateDirLayout(dir),
      mode: batch === 1 ? 'durable' : 'batched',
      maxBatchFrames: batch,
      maxQueuedFrames: events,
    });
    if (opened._tag === 'Left') throw new Error(JSON.stringify(opened.left));
    const writer = opened.right;
    const input = event(1, 256);
    const started = performance.now();
    const acks = await Promise.all(Array.from({ length: events }, () => writer.append(input)));
    const ms = performance.now() - started;
    await writer.close();
    if (acks.some((a) => a._tag === 'Left')) throw new Error('append failed');
    rows.push({ batch, events, ms, perSecond: (events / ms) * 1000 });
    rmSync(dir, { recursive: true, force: true });
  }
  console.log('\n## durable append with group commit (fsync + atomic head update per commit), 256-byte payload');
  console.table(
    rows.map((r) => ({
      'batch size': r.batch,
      events: r.events,
      'events/s': Math.round(r.perSecond).toLocaleString('en-US'),
      'ms per commit': ((r.ms / r.events) * r.batch).toFixed(2),
    })),
  );
  const one = rows[0]!.perSecond;
  for (const row of rows.slice(1))
    report(`group commit ${row.batch} vs 1`, `${(row.perSecond / one).toFixed(1)}× events/s`);
}

try {
  await appendBench();
  await verifyBench(256, 20_000);
  await verifyBench(64 * 1024, 128);
  await groupCommitBench();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
