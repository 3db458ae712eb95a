import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  isModelVisibleText,
  ModelVisibleText,
  Redactor,
  SecretHandle,
  SecretMaterial,
  TaintedText,
  taint,
} from '../src/index.js';

const SECRET = 'tok-9f8e7d6c5b4a39281706f5e4';

function setup(): Redactor {
  const redactor = new Redactor();
  const handle = SecretHandle.create('SERVICE_TOKEN', 'service');
  const material = SecretMaterial.fromText(SECRET);
  if (handle._tag === 'Left' || material._tag === 'Left') throw new Error('setup');
  expect(redactor.register(handle.right, material.right)._tag).toBe('Right');
  return redactor;
}

/** Stands for every boundary that feeds a model: only ModelVisibleText goes in. */
const sendToModel = (text: ModelVisibleText): string => text.text;

describe('ModelVisibleText', () => {
  it('is only produced by the redactor, already redacted', () => {
    const redactor = setup();
    const visible = redactor.redact(taint(`output: ${SECRET}`));
    expect(isModelVisibleText(visible)).toBe(true);
    expect(sendToModel(visible)).toBe('output: [REDACTED:service]');
    expect(sendToModel(visible.concat(redactor.redact(' more')))).toBe('output: [REDACTED:service] more');
    expect(JSON.stringify({ visible })).toBe('{"visible":"output: [REDACTED:service]"}');
  });

  it('cannot be constructed at run time, even through a cast', () => {
    const Ctor = ModelVisibleText as unknown as new (token: symbol, text: string) => ModelVisibleText;
    expect(() => new Ctor(Symbol('guess'), SECRET)).toThrow(/only be made by the redactor/);
    expect(isModelVisibleText({ text: SECRET })).toBe(false);
  });

  it('rejects raw strings, tainted text, secrets and look-alike objects at compile time', () => {
    const redactor = setup();
    const tainted = taint(SECRET);
    const material = SecretMaterial.fromText(SECRET);
    if (material._tag === 'Left') throw new Error('setup');
    const typeChecks = (): void => {
      // @ts-expect-error — a raw string is not model-visible.
      sendToModel(SECRET);
      // @ts-expect-error — tainted text must go through the redactor first.
      sendToModel(tainted);
      // @ts-expect-error — secret material never becomes model-visible text.
      sendToModel(material.right);
      // @ts-expect-error — a structurally similar object lacks the private field.
      sendToModel({ text: SECRET, length: SECRET.length, concat: (o: ModelVisibleText) => o });
      // @ts-expect-error — the constructor is private.
      new ModelVisibleText(Symbol('x'), SECRET);
      // @ts-expect-error — redactText returns a string, which is for logs, not models.
      sendToModel(redactor.redactText(SECRET));
    };
    expect(typeof typeChecks).toBe('function');
    expect(sendToModel(redactor.redact(tainted))).toBe('[REDACTED:service]');
  });

  it('the minting function is imported only by the redactor', () => {
    const root = join(import.meta.dirname, '..', 'src');
    const importers: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (name.endsWith('.ts') && readFileSync(path, 'utf8').includes('mintModelVisibleText')) {
          importers.push(path.slice(root.length + 1));
        }
      }
    };
    walk(root);
    expect(importers.sort()).toEqual(['model-visible.ts', 'redact/redactor.ts']);
    expect(readFileSync(join(root, 'index.ts'), 'utf8')).not.toContain('mintModelVisibleText');
  });
});

describe('TaintedText', () => {
  it('prints as [tainted] and refuses JSON', () => {
    const tainted = new TaintedText(SECRET);
    expect(String(tainted)).toBe('[tainted]');
    expect(`${tainted}`).toBe('[tainted]');
    expect(inspect(tainted)).toBe('[tainted]');
    expect(() => JSON.stringify({ tainted })).toThrow(TypeError);
    expect(tainted.unredacted()).toBe(SECRET);
  });
});
