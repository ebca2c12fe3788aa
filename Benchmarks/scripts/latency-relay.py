#!/usr/bin/env python3
"""A loopback TCP relay that delays each direction's bytes by a fixed time, without limiting
throughput: the latency injector of compare-h2.sh (this machine's kernel has no netem).

Every chunk read from one side is written to the other side DELAY ms after it was read; reading
never waits for writing, so a window's worth of bytes is in flight each way, as on a long link.
The relay prints "ready PORT" on stdout once it listens.

Usage: latency-relay.py --listen PORT --to HOST:PORT --delay-ms 25   (PORT 0 picks a free one)
"""
import argparse
import asyncio
import sys


async def pump(reader, writer, delay):
    """Copies reader to writer, each chunk delay seconds after it arrived, in order."""
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def deliver():
        while True:
            due, chunk = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if chunk is None:
                try:
                    writer.write_eof()
                except (OSError, RuntimeError):
                    pass
                return
            writer.write(chunk)
            await writer.drain()

    task = asyncio.create_task(deliver())
    try:
        while True:
            chunk = await reader.read(256 * 1024)
            queue.put_nowait((loop.time() + delay, chunk or None))
            if not chunk:
                break
        await task
    except (ConnectionError, OSError):
        task.cancel()


async def serve(args):
    host, port = args.to.rsplit(":", 1)
    delay = args.delay_ms / 1000.0

    async def relay(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pump(client_reader, server_writer, delay), pump(server_reader, client_writer, delay),
                             return_exceptions=True)
        for writer in (client_writer, server_writer):
            writer.close()

    server = await asyncio.start_server(relay, "127.0.0.1", args.listen, backlog=512)
    print("ready", server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", type=int, required=True)
    parser.add_argument("--to", required=True)
    parser.add_argument("--delay-ms", type=float, default=25)
    try:
        asyncio.run(serve(parser.parse_args()))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
