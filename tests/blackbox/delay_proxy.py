#!/usr/bin/env python3
"""A TCP proxy that holds every chunk it forwards, each way, for DELAY seconds before passing it
on (the order kept): a slow link to a service, where the kernel has no netem.
usage: delay_proxy.py LISTEN_ADDR LISTEN_PORT TARGET_ADDR TARGET_PORT DELAY"""
import asyncio
import sys


async def pipe(reader, writer, delay):
    queue = asyncio.Queue()

    async def send():
        while True:
            due, data = await queue.get()
            wait = due - asyncio.get_running_loop().time()
            if wait > 0:
                await asyncio.sleep(wait)
            if data is None:
                break
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.create_task(send())
    try:
        while data := await reader.read(65536):
            queue.put_nowait((asyncio.get_running_loop().time() + delay, data))
    except ConnectionError:
        pass
    queue.put_nowait((asyncio.get_running_loop().time() + delay, None))
    try:
        await sender
    except ConnectionError:
        pass


async def main(listen_addr, listen_port, target_addr, target_port, delay):
    async def serve(client_reader, client_writer):
        try:
            target_reader, target_writer = await asyncio.open_connection(target_addr, target_port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, target_writer, delay),
                             pipe(target_reader, client_writer, delay))

    server = await asyncio.start_server(serve, listen_addr, listen_port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])))
