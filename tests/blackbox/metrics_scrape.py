"""Scrapes an aml-launch --metrics-port page for metrics_test.sh.

  metrics_scrape.py wait URL SECONDS REGEX... the first page on which every REGEX matches a line
                                              (exit 1: none within SECONDS)
  metrics_scrape.py flood URL N               N idle or half-sent connections held, then the page
  metrics_scrape.py closed URL                exit 0 when nothing listens there any more
"""
import re
import socket
import sys
import time
import urllib.parse
import urllib.request


def page(url, timeout=5.0):
    # Straight to the launcher: a proxy in the environment is not on the way to a test's host.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=timeout) as answer:
        return answer.read().decode()


def host_port(url):
    parts = urllib.parse.urlsplit(url)
    return parts.hostname, parts.port


def main():
    what, url = sys.argv[1], sys.argv[2]
    if what == "wait":
        # Every pattern on one page: a page is one moment, and the moment matters (a new round
        # is counted before its workers are started).
        deadline = time.time() + float(sys.argv[3])
        patterns = [re.compile(p, re.M) for p in sys.argv[4:]]
        text = ""
        while time.time() < deadline:
            try:
                text = page(url)
            except OSError:
                text = ""
            if all(p.search(text) for p in patterns):
                sys.stdout.write(text)
                return 0
            time.sleep(0.1)
        sys.stderr.write("no page matched all of %s; the last page:\n%s" % (sys.argv[4:], text))
        return 1
    if what == "flood":
        held = []
        for i in range(int(sys.argv[3])):
            s = socket.create_connection(host_port(url), timeout=5)
            if i % 2:
                s.sendall(b"GET /metr")
            held.append(s)
        started = time.time()
        text = page(url)
        sys.stderr.write("answered in %.3f s beside %d held connections\n"
                         % (time.time() - started, len(held)))
        sys.stdout.write(text)
        return 0
    if what == "closed":
        try:
            socket.create_connection(host_port(url), timeout=2).close()
        except ConnectionRefusedError:
            return 0
        return 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
