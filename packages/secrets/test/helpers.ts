/** Shared test setup: handles, materials and a redactor with registered secrets. */
import { Redactor, type RedactorOptions, SecretHandle, SecretMaterial } from '../src/index.js';

export function handleOf(name: string, label?: string): SecretHandle {
  const made = SecretHandle.create(name, label);
  if (made._tag === 'Left') throw new Error(`bad handle ${name}: ${made.left.reason}`);
  return made.right;
}

export function materialOf(value: string): SecretMaterial {
  const made = SecretMaterial.fromText(value);
  if (made._tag === 'Left') throw new Error(`bad material: ${made.left._tag}`);
  return made.right;
}

/** A redactor with `secrets` registered as label → value. */
export function redactorWith(secrets: Readonly<Record<string, string>>, options: RedactorOptions = {}): Redactor {
  const redactor = new Redactor(options);
  for (const [label, value] of Object.entries(secrets)) {
    const registered = redactor.register(handleOf(label.replace(/[^A-Za-z0-9_.-]/g, '_'), label), materialOf(value));
    if (registered._tag === 'Left') throw new Error(`register ${label}: ${registered.left._tag}`);
  }
  return redactor;
}
