import { describe, expect, it } from 'vitest';
import { formatRedactedError, installCrashRedaction, RedactedError, redactError } from '../src/index.js';
import { redactorWith } from './helpers.js';

const SECRET = 'crash-secret-value-31415926';
const redactor = redactorWith({ api: SECRET });

describe('redactError', () => {
  it('redacts message, stack, cause chain, aggregated errors and extra fields', () => {
    const root = new Error(`socket closed while sending ${SECRET}`);
    const middle = new Error('request failed', { cause: root });
    Object.assign(middle, { code: 'E_HTTP', config: { headers: { authorization: `Bearer ${SECRET}` } } });
    const top = new AggregateError([new Error(`first ${SECRET}`), 'plain string ' + SECRET], `tool failed: ${SECRET}`, {
      cause: middle,
    });
    const redacted = redactError(top, redactor);
    expect(redacted).toBeInstanceOf(RedactedError);
    expect(redacted.name).toBe('AggregateError');
    expect(redacted.message).toBe('tool failed: [REDACTED:api]');
    const printed = formatRedactedError(top, redactor);
    expect(printed).not.toContain(SECRET);
    expect(printed).toContain('tool failed: [REDACTED:api]');
    expect(printed).toContain('Caused by: Error: request failed');
    expect(printed).toContain('E_HTTP');
    expect(printed).toContain('socket closed while sending [REDACTED:api]');
    expect(JSON.stringify(redacted.details)).not.toContain(SECRET);
  });

  it('handles non-errors and cycles', () => {
    expect(redactError(`thrown string ${SECRET}`, redactor).message).toBe('thrown string [REDACTED:api]');
    const a = new Error(`a ${SECRET}`);
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(formatRedactedError(b, redactor)).not.toContain(SECRET);
    expect(formatRedactedError({ message: `error-like ${SECRET}`, status: 500 }, redactor)).not.toContain(SECRET);
  });
});

describe('installCrashRedaction', () => {
  it('prints a redacted report for uncaught exceptions and rejections, then exits 70', () => {
    const writes: string[] = [];
    const exits: number[] = [];
    const uninstall = installCrashRedaction(redactor, { write: (t) => writes.push(t), exit: (c) => exits.push(c) });
    try {
      process.emit('uncaughtException', new Error(`boom ${SECRET}`));
      process.emit('unhandledRejection', new Error(`rejected ${SECRET}`), Promise.resolve());
    } finally {
      uninstall();
    }
    expect(exits).toEqual([70, 70]);
    expect(writes.join('')).toContain('boom [REDACTED:api]');
    expect(writes.join('')).toContain('unhandled rejection');
    expect(writes.join('')).not.toContain(SECRET);
  });
});
