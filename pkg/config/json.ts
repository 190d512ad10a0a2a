// A ConfigMap key's JSON value read, its failure a ConfigError naming the key (every JSON key's).

import { ConfigError } from './errors.ts';

export function parseJson(key: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ConfigError('CONFIG_JSON', key, '', `${key}: invalid JSON: ${(err as Error).message}`);
  }
}

export function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'string');
}
