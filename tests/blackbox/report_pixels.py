"""Checks a screenshot of an aml-launch report: the timeline has ROWS rows of bars (bands of
the phases' colours down the plot's columns), a failure's red and a spare's blue.

usage: report_pixels.py SCREENSHOT.png ROWS
"""
import sys

from PIL import Image

RED, BLUE = (0xD6, 0x27, 0x28), (0x1F, 0x77, 0xB4)
# The bars: running, rendezvous, recovery, spare, stopping (report_html.cpp).
BARS = [(0x2C, 0xA0, 0x2C), (0x9E, 0x9E, 0x9E), (0xFF, 0x7F, 0x0E), (0x9E, 0xCA, 0xE1),
        (0x8C, 0x56, 0x4B)]


def near(pixel, colour, slack=24):
    return all(abs(a - b) <= slack for a, b in zip(pixel[:3], colour))


def main():
    image = Image.open(sys.argv[1]).convert("RGB")
    wanted = int(sys.argv[2])
    width, height = image.size
    pixels = image.load()
    # Rows: bands of a bar's colour down each column of the plot; the most bands seen.
    legend_bottom = 240  # the figures and the legend above the plot hold the same colours
    most = 0
    for x in range(260, width - 40, 10):
        # A band as tall as a bar (16 px): a mark's text on a bar splits it into short ones.
        bands, run = 0, 0
        for y in range(legend_bottom, height + 1):
            bar = y < height and any(near(pixels[x, y], colour, 6) for colour in BARS)
            if bar:
                run += 1
                continue
            bands += run >= 12
            run = 0
        most = max(most, bands)
    red = sum(1 for x in range(width) for y in range(height) if near(pixels[x, y], RED, 12))
    blue = sum(1 for x in range(width) for y in range(height) if near(pixels[x, y], BLUE, 12))
    print("rows of bars: %d, red pixels: %d, blue pixels: %d" % (most, red, blue))
    if most != wanted or red < 30 or blue < 20:
        print("wanted %d rows, a failure's red and a spare's blue" % wanted)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
