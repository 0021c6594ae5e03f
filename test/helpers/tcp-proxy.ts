/**
 * A TCP forwarder on 127.0.0.1 in front of a real service, so a test can take "the database" or
 * "Redis" away from one gateway (and give it back) without stopping the machine's shared server.
 *
 * @example
 *   const proxy = await startTcpProxy(5432)
 *   proxy.cut()       // every connection dropped, new ones refused
 *   proxy.stall()     // connections stay open but nothing gets through (a host gone, a partition)
 *   proxy.restore()   // accepting and forwarding again (stalled connections are dropped)
 */
import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  port: number;
  cut(): void;
  stall(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let open = true;
  let stalled = false;
  const server = createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    if (stalled) {
      // Accepted, never answered: what a client sees of a host that vanished mid-connection.
      sockets.add(client);
      client.on('close', () => sockets.delete(client));
      client.on('error', () => {});
      client.resume();
      return;
    }
    const upstream = connect(targetPort, targetHost);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      open = false;
      for (const socket of sockets) socket.destroy();
    },
    stall() {
      stalled = true;
      for (const socket of sockets) {
        socket.unpipe();
        socket.resume(); // read and drop
      }
    },
    restore() {
      open = true;
      if (stalled) {
        stalled = false;
        for (const socket of sockets) socket.destroy();
      }
    },
    async close() {
      open = false;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
