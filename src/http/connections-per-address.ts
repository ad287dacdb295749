import { Logger } from '@nestjs/common';
import { BlockList, isIPv4 } from 'node:net';
import type { Server, Socket } from 'node:net';
import { clientKey } from '../common/client-address';
import type { AppConfig } from '../config/app-config';

const log = new Logger('Connections');

/**
 * Caps the connections one peer address (an IPv6 one by its network: clientKey) has open at
 * once. It counts the address the TCP
 * connection comes from, the only one known before a byte is read: behind a proxy every
 * connection is the proxy's, so the addresses in TRUSTED_PROXIES are not capped (the proxy
 * limits its own clients). One past the cap is closed as it is accepted, with no answer:
 * answering would mean reading its request, which is the holding the cap exists to prevent
 * (docs/decisions/connection-limits.md).
 */
export function capConnectionsPerAddress(
  server: Server,
  config: Pick<AppConfig, 'httpConnectionsPerAddress' | 'trustedProxies' | 'clientIpv6Prefix'>,
): void {
  const cap = config.httpConnectionsPerAddress;
  if (cap === 0) return;
  const proxies = addressList(config.trustedProxies);
  const open = new Map<string, number>();
  // Addresses refused since they last had no connection: one warning for each such stretch.
  const refusing = new Set<string>();
  server.on('connection', (socket: Socket) => {
    const peer = peerAddress(socket);
    if (peer === undefined || proxies.check(peer, family(peer))) return;
    const address = clientKey(peer, config.clientIpv6Prefix);
    const count = open.get(address) ?? 0;
    if (count >= cap) {
      socket.destroy();
      if (!refusing.has(address)) {
        refusing.add(address);
        log.warn(`Refusing connections from ${address}: it has ${cap} open (HTTP_CONNECTIONS_PER_ADDRESS)`);
      }
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) return void open.set(address, left);
      open.delete(address);
      refusing.delete(address);
    });
  });
}

/** An IPv4 client of a dual-stack listener is `::ffff:a.b.c.d` there: counted as `a.b.c.d`. */
function peerAddress(socket: Socket): string | undefined {
  const address = socket.remoteAddress;
  if (address === undefined) return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1] : address;
}

const family = (address: string) => (isIPv4(address) ? 'ipv4' : 'ipv6');

/** TRUSTED_PROXIES' addresses and ranges (validated at boot). */
function addressList(entries: string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix] = entry.split('/');
    if (prefix === undefined) list.addAddress(address, family(address));
    else list.addSubnet(address, Number(prefix), family(address));
  }
  return list;
}
