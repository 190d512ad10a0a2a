// What crosses between the owner (threads.ts) and a thread (worker.ts).

import type { AnswerCache } from '../dns/answer-cache.ts';
import type { ServerStats } from '../dns/server.ts';
import type { Transport } from '../dns/responder.ts';

/**
 * Misses a thread may have waiting on the owner at once; past it, a miss is dropped where it was read
 * (counted under OWNER_BACKLOG). An owner that falls behind (a flood its fair shares see only once
 * each miss reaches it) would otherwise have every thread's misses queued as messages, without bound.
 */
export const MAX_WAITING = 4096;
/**
 * Misses waiting from which the owner is taken to be behind (a quarter, as a UDP queue a quarter full
 * is pressure): its fair shares bind then, even a lone flooder's, and steer its flow off the thread
 * before the thread drops everyone's misses alike at MAX_WAITING.
 */
export const BEHIND_AT = MAX_WAITING / 4;
/** The dropped counts' reason for a miss past MAX_WAITING. */
export const OWNER_BACKLOG = 'owner-backlog';

/** A miss as it crosses to the owner: the request's bytes and who asked. */
export interface RemoteQuery {
  wire: Uint8Array;
  transport: Transport;
  address: string;
  port: number;
  /** The index in DnsThreadsOptions.listen of the address it came to. */
  listen: number;
  /** Query.prefetch. */
  prefetch: boolean;
  /** The thread had BEHIND_AT misses or more waiting on the owner as it sent this one: the owner is behind (Fairness.behind). */
  behind: boolean;
}

/** The owner's reply to a miss: the answer, and under a partitioned cache the asker's partition as of the owner's change `epoch` (AskerPartitions). */
export interface RemoteAnswer {
  answer: import('../dns/server.ts').Answer | null;
  /** Dropped over its asker's share (Fairness): the thread counts it as LIMITED, not as the handler's drop. */
  limited?: true;
  /**
   * Its asker is the TCP connection's own and over its share until the owner's window ends, this many
   * ms on: the connection is held that long (Query.holdMs), as the owner holds its own (FlowSteering.hold).
   */
  holdMs?: number;
  partition?: number;
  epoch: number;
}

/** The owner's change `epoch`: `address`'s cache partition may have changed (null: any asker's). */
export interface AskerChanged {
  address: string | null;
  epoch: number;
}

/** One thread's counts: its DnsServers' (one per listen address) and its answer cache's. */
export interface ThreadStats {
  servers: ServerStats[];
  /** The thread's observer's counts (ThreadObserver.snapshot), when it has one. */
  observed?: unknown;
  cache: { entries: number; bytes: number; maxBytes: number; hits: number; insertions: number; evictions: number; expired: number; timed: AnswerCache['timed'] };
}

export interface ThreadStart {
  listen: { address: string; port: number }[];
  answerCacheBytes: number;
  answerCacheEntries?: number;
  roundRobin: boolean;
  /** DnsServerOptions.maxUdpSize. */
  maxUdpSize?: number;
  /** This thread's share of the process's TCP connections (tcpConnectionsShare). */
  maxTcpConnections: number;
  index: number;
  /** Tell the owner of every cache hit (DnsThreadsOptions.onCacheHit). */
  reportHits: boolean;
  /** DnsThreadsOptions.observerModule, and what its threadObserver() is given. */
  observerModule?: string;
  observerArgs?: unknown;
  /** The cache split as the owner's (DnsThreads.partitionCache), as of the owner's change `epoch`. */
  partitioned: boolean;
  epoch: number;
}

/**
 * What an observer module (DnsThreadsOptions.observerModule) exports: `threadObserver(args)` (DnsThreadsOptions.observerArgs), made once in
 * each thread; its observer watches the thread's DnsServers, its snapshot goes to the owner with the
 * thread's stats (kube-dns's metrics: pkg/kubedns/thread-observer.ts).
 */
export interface ThreadObserver {
  observer: import('../dns/server.ts').ServerObserver;
  /** The thread's DnsServers' onReply (a query log). */
  onReply?: import('../dns/server.ts').ReplyHook;
  snapshot(): unknown;
}
