// A size in bytes as Kubernetes writes memory quantities: a whole number, optionally with a binary
// (Ki, Mi, Gi) or decimal (k, M, G) suffix. "16Mi" = 16,777,216; "0" is allowed.

const scale: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 };

const form = /^(\d+)(|k|M|G|Ki|Mi|Gi)$/;

/** Bytes, or undefined when `text` is not a size. */
export function parseByteSize(text: string): number | undefined {
  const m = form.exec(text);
  if (m === null) return undefined;
  const n = Number(m[1]) * scale[m[2]];
  return Number.isSafeInteger(n) ? n : undefined;
}
