// kube-dns --workers: each answering thread counts its replies as this thread does (DnsCounters);
// the owner adds them to its own before Prometheus reads them (metrics.ts setThreadCounts).

import type { ThreadObserver } from '../dnsthreads/messages.ts';
import { DnsCounters } from './dns-counters.ts';

export function threadObserver(): ThreadObserver {
  const counters = new DnsCounters();
  return { observer: counters.observer, snapshot: () => counters.snapshot() };
}
