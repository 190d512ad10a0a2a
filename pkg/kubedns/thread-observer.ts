// kube-dns --workers: each answering thread counts its replies as this thread does (DnsCounters);
// the owner adds them to its own before Prometheus reads them (metrics.ts setThreadCounts). With a
// Corefile's `log`, each thread writes the query log lines of its own replies.

import type { ThreadObserver } from '../dnsthreads/messages.ts';
import { QueryLog } from '../querylog/querylog.ts';
import type { QueryLogBlock } from '../querylog/querylog.ts';
import { DnsCounters } from './dns-counters.ts';

export interface ThreadObserverArgs {
  queryLog?: QueryLogBlock[];
}

export function threadObserver(args: ThreadObserverArgs = {}): ThreadObserver {
  const counters = new DnsCounters();
  const onReply = args.queryLog === undefined ? undefined : new QueryLog(args.queryLog).onReply;
  return { observer: counters.observer, snapshot: () => counters.snapshot(), onReply };
}
