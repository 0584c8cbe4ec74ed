#!/usr/bin/env python3
"""Regenerates Tests/Support/Fixtures/ (the files the fixture server serves).

Not run by the tests: the generated files are committed. Kept so that anyone can see and redo how each
fixture was made. Needs python3 (standard library), and djpeg/jpegtran (libjpeg-turbo-progs) and cwebp
(webp) on PATH.

    python3 Tests/Support/make_fixtures.py --source-jpeg <a 640x480 baseline JPEG> --out Tests/Support/Fixtures

The committed baseline.jpg is the project's CC0 corpus file generated/photo_optimized.jpg.
PNG and GIF files are encoded here in pure Python (zlib for PNG, a minimal LZW for GIF).
"""

import argparse
import os
import shutil
import struct
import subprocess
import zlib


# ----- PPM input (djpeg output) -----

def read_ppm(data):
    """(width, height, rgb bytes) from a binary P6 PPM with maxval 255."""
    fields = []
    index = 0
    while len(fields) < 4:
        while data[index:index + 1].isspace():
            index += 1
        if data[index:index + 1] == b"#":
            while data[index:index + 1] not in (b"\n", b""):
                index += 1
            continue
        start = index
        while not data[index:index + 1].isspace():
            index += 1
        fields.append(data[start:index])
    index += 1  # the single whitespace after maxval
    if fields[0] != b"P6" or int(fields[3]) != 255:
        raise ValueError("expected an 8-bit P6 PPM")
    width, height = int(fields[1]), int(fields[2])
    return width, height, data[index:index + width * height * 3]


def downscale(width, height, rgb, factor):
    """Box filter by an integer factor: smaller, smoother fixtures."""
    out_w, out_h = width // factor, height // factor
    out = bytearray()
    for y in range(out_h):
        for x in range(out_w):
            for c in range(3):
                total = 0
                for dy in range(factor):
                    row = (y * factor + dy) * width
                    for dx in range(factor):
                        total += rgb[(row + x * factor + dx) * 3 + c]
                out.append(total // (factor * factor))
    return out_w, out_h, bytes(out)


# ----- PNG -----

def png_chunk(kind, payload):
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF)


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def encode_png(width, height, rgba, interlaced=False):
    """RGBA8 PNG, filter type 0 on every row (simple, still valid)."""
    stride = width * 4
    raw = bytearray()
    if not interlaced:
        for y in range(height):
            raw.append(0)
            raw += rgba[y * stride:(y + 1) * stride]
    else:
        for x0, y0, dx, dy in ADAM7:
            cols = range(x0, width, dx)
            if not cols:
                continue
            for y in range(y0, height, dy):
                raw.append(0)
                for x in cols:
                    raw += rgba[y * stride + x * 4:y * stride + x * 4 + 4]
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 1 if interlaced else 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header)
            + png_chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + png_chunk(b"IEND", b""))


def rgb_to_rgba(rgb, alpha=255):
    out = bytearray()
    for i in range(0, len(rgb), 3):
        out += rgb[i:i + 3]
        out.append(alpha)
    return bytes(out)


# ----- GIF -----

def lzw_encode_uncompressed(indices, min_code_size=8):
    """GIF LZW data that never grows its dictionary: a clear code every 254 symbols keeps codes at
    9 bits. Larger than real LZW but valid for every decoder, and trivially correct."""
    clear, end = 1 << min_code_size, (1 << min_code_size) + 1
    width = min_code_size + 1
    codes = []
    for i, value in enumerate(indices):
        if i % 254 == 0:
            codes.append(clear)
        codes.append(value)
    codes.append(end)
    out = bytearray()
    bits = 0
    nbits = 0
    for code in codes:
        bits |= code << nbits
        nbits += width
        while nbits >= 8:
            out.append(bits & 0xFF)
            bits >>= 8
            nbits -= 8
    if nbits:
        out.append(bits & 0xFF)
    return bytes(out)


def sub_blocks(data):
    out = bytearray()
    for i in range(0, len(data), 255):
        piece = data[i:i + 255]
        out.append(len(piece))
        out += piece
    out.append(0)
    return bytes(out)


def encode_gif(width, height, palette, frames, delay_cs=10, loops=0):
    """Animated GIF89a: `frames` are lists of palette indices (width*height each), full-canvas."""
    table = bytearray()
    for r, g, b in palette:
        table += bytes((r, g, b))
    table += b"\x00" * (256 * 3 - len(table))
    out = bytearray(b"GIF89a")
    out += struct.pack("<HHBBB", width, height, 0xF7, 0, 0)  # global table of 256 colours
    out += table
    out += b"\x21\xFF\x0BNETSCAPE2.0\x03\x01" + struct.pack("<H", loops) + b"\x00"
    for indices in frames:
        out += b"\x21\xF9\x04" + bytes((0x04,)) + struct.pack("<H", delay_cs) + b"\x00\x00"  # dispose: none
        out += b"\x2C" + struct.pack("<HHHHB", 0, 0, width, height, 0)
        out.append(8)
        out += sub_blocks(lzw_encode_uncompressed(indices))
    out += b"\x3B"
    return bytes(out)


def animated_frames(width, height):
    palette = [(220, 40, 40), (40, 180, 60), (40, 80, 220), (250, 250, 250)]
    frames = []
    for n in range(3):
        indices = []
        for y in range(height):
            for x in range(width):
                # A coloured band moving right on a white background: each frame differs.
                band = (x // (width // 3)) == n
                indices.append(n if band else 3)
        frames.append(indices)
    return palette, frames


# ----- main -----

def run(command, stdout=None):
    return subprocess.run(command, check=True, stdout=stdout or subprocess.PIPE).stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source-jpeg", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    out = args.out
    os.makedirs(out, exist_ok=True)

    def write(name, data):
        with open(os.path.join(out, name), "wb") as handle:
            handle.write(data)

    shutil.copyfile(args.source_jpeg, os.path.join(out, "baseline.jpg"))
    os.chmod(os.path.join(out, "baseline.jpg"), 0o644)
    # Lossless transcode: the same image, progressive with jpegtran's default script (10 scans).
    write("progressive.jpg", run(["jpegtran", "-progressive", "-copy", "none", args.source_jpeg]))

    width, height, rgb = read_ppm(run(["djpeg", "-ppm", args.source_jpeg]))
    small_w, small_h, small = downscale(width, height, rgb, 4)       # 160x120
    double_w, double_h, double = downscale(width, height, rgb, 2)    # 320x240, "@2x" of image.png
    write("image.png", encode_png(small_w, small_h, rgb_to_rgba(small)))
    write("image@2x.png", encode_png(double_w, double_h, rgb_to_rgba(double)))
    write("adam7.png", encode_png(small_w, small_h, rgb_to_rgba(small), interlaced=True))
    write("tiny.png", encode_png(1, 1, bytes((255, 0, 0, 255))))

    palette, frames = animated_frames(48, 32)
    write("animated.gif", encode_gif(48, 32, palette, frames))

    ppm_path = os.path.join(out, ".image.ppm")
    with open(ppm_path, "wb") as handle:
        handle.write(b"P6\n%d %d\n255\n" % (small_w, small_h) + small)
    try:
        run(["cwebp", "-quiet", "-q", "80", ppm_path, "-o", os.path.join(out, "image.webp")])
    finally:
        os.remove(ppm_path)

    # corrupt.jpg: the first 2 KB of baseline.jpg (headers and the start of the scan) with the SOF0
    # length field set to 2, so every decoder must reject it instead of padding a partial image.
    with open(args.source_jpeg, "rb") as handle:
        jpeg = bytearray(handle.read()[:2048])
    sof = jpeg.find(b"\xff\xc0")
    if sof < 0:
        raise SystemExit("source JPEG is not baseline (no SOF0)")
    jpeg[sof + 2:sof + 4] = b"\x00\x02"
    write("corrupt.jpg", bytes(jpeg))


if __name__ == "__main__":
    main()
