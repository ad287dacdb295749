import { connect, type Socket } from 'node:net';

/** A TCP connection to the server, driven byte by byte: for clients that stall. */
export interface RawConnection {
  socket: Socket;
  /** What the server has sent so far. */
  received(): string;
  /** Resolves, with all the server sent, once the connection is closed (ended or reset). */
  closed: Promise<string>;
  isClosed(): boolean;
}

/**
 * Opens a connection to 127.0.0.1:<port>, from `localAddress` (another loopback address is
 * another client to the server), and writes `send` once connected. Resolves when connected.
 */
export function openRawConnection(
  port: number,
  options: { localAddress?: string; send?: string } = {},
): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress: options.localAddress });
    const chunks: Buffer[] = [];
    let closed = false;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const received = () => Buffer.concat(chunks).toString('utf8');
    // A reset is one way the server closes: 'close' follows and says it.
    socket.on('error', () => undefined);
    const closedPromise = new Promise<string>((resolveClosed) =>
      socket.once('close', () => {
        closed = true;
        resolveClosed(received());
      }),
    );
    socket.once('connect', () => {
      if (options.send !== undefined) socket.write(options.send);
      resolve({ socket, received, closed: closedPromise, isClosed: () => closed });
    });
    socket.once('error', reject);
  });
}

/** The connection's close, or a failure naming `what` once `ms` have passed without it. */
export function closedWithin(connection: RawConnection, ms: number, what: string): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still open after ${ms} ms`)), ms);
  });
  return Promise.race([connection.closed, late]).finally(() => clearTimeout(timer));
}

/** A complete request the server answers at once, keeping the connection alive. */
export const LIVENESS_REQUEST = 'GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
