// The ceiling for a Node DNS server on this machine: a bare dgram socket answering each question
// with a reply encoded at start-up (copy, patch the ID, send). No parsing beyond the question bytes,
// no metrics, no cache policy. kube-dns is measured against it to see what our server costs.
//
//   node bench/bare-udp.ts <port> <hosts file>

import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import { encodeMessage } from '../pkg/dns/codec.ts';
import { emptyMessage } from '../pkg/dns/message.ts';

const [port, hostsFile] = [Number(process.argv[2]), process.argv[3]];
const replies = new Map<string, Buffer>();
for (const line of readFileSync(hostsFile, 'utf8').split('\n')) {
  const [ip, name] = line.split(' ');
  if (!name) continue;
  const m = emptyMessage();
  m.qr = m.aa = m.rd = m.ra = true;
  m.questions.push({ name, type: 1, class: 1 });
  m.answers.push({ name, type: 1, class: 1, ttl: 30, data: { address: ip } });
  const bytes = encodeMessage(m).bytes;
  replies.set(bytes.toString('latin1', 12, 12 + name.length + 2 + 4), bytes);
}
const socket = dgram.createSocket('udp4');
socket.on('message', (msg, rinfo) => {
  // dnsperf sends no EDNS: everything after the header is the question.
  const reply = replies.get(msg.toString('latin1', 12));
  if (!reply) return;
  const out = Buffer.allocUnsafe(reply.length);
  reply.copy(out);
  out[0] = msg[0];
  out[1] = msg[1];
  socket.send(out, rinfo.port, rinfo.address);
});
socket.bind(port, '127.0.0.1', () => process.stderr.write(`bare UDP server on 127.0.0.1:${port} (${replies.size} names)\n`));
