// node:http and node:https without Node's undici. An ESM import of node:http (named or default)
// builds the module's namespace by reading every export, and http.WebSocket's lazy getter then loads
// undici, Node's fetch and WebSocket: ~13 MiB of RSS and 2.3 MB of heap in every program that serves
// or asks over HTTP, for code none of them runs. process.getBuiltinModule hands the exports over
// unread. node:https (and TLS under it, ~5 MiB) only for who asks: kube-dns's API client.
// (Types come from `import type`, which loads nothing.)

export const http = process.getBuiltinModule('node:http') as typeof import('node:http');

export function https(): typeof import('node:https') {
  return process.getBuiltinModule('node:https') as typeof import('node:https');
}
