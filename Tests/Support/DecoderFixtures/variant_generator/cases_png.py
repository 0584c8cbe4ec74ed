"""PNG variants: low bit depths with tRNS, 16-bit keys, palettes, sBIT, gAMA/cHRM, Adam7."""
import hashlib, io, json, os, shutil, struct, subprocess, sys, tempfile, zlib

from .writers import *
from .registry import *

# PNG -------------------------------------------------------------------------------------------------------

for _bits, _key in ((1, 1), (2, 2), (4, 5)):
    def _make(path, bits=_bits, key=_key):
        rows = gray_levels(bits)
        write_png(path, W, H, bits, 0, rows, chunks=[(b"tRNS", struct.pack(">H", key))])
        ref = bytes(c for row in rows for v in row
                    for c in (to8(v, bits),) * 3 + (0 if v == key else 255,))
        return {"reference": ref, "why": "libpng and the PNG spec compare the tRNS key with the unscaled sample; "
                                         "Pillow compares it with the 8-bit-scaled one and shows no transparency"}
    variant(f"png-gray{_bits}-trns.png")(_make)


@variant("png-gray8-trns.png")
def _png_gray8_trns(path):
    write_png(path, W, H, 8, 0, gray_levels(8), chunks=[(b"tRNS", struct.pack(">H", 77))])


def _near_key_rows16(channels):
    """16-bit samples where some pixels equal the key exactly and others share its high byte only."""
    key = [0x1234, 0x5678, 0x9ABC][:channels]
    rows = []
    for y in range(H):
        row = []
        for x in range(W):
            if (x + y) % 5 == 0:
                px = key
            elif (x + y) % 5 == 1:
                px = [k + 1 for k in key]  # same high byte, not the key
            else:
                px = [((x * 3000 + y * 1700 + c * 9000) % 65536) for c in range(channels)]
            row += px
        rows.append(row)
    return rows, key


@variant("png-gray16-trns.png")
def _png_gray16_trns(path):
    rows, key = _near_key_rows16(1)
    write_png(path, W, H, 16, 0, rows, chunks=[(b"tRNS", struct.pack(">H", key[0]))])
    ref = bytes(c for row in rows for v in row for c in (v >> 8,) * 3 + (0 if v == key[0] else 255,))
    return {"reference": ref, "why": "16-bit gray: the key matches the 16-bit sample exactly, samples keep their high "
                                     "byte (Pillow clips I;16 to 255)"}


@variant("png-rgb16-trns.png")
def _png_rgb16_trns(path):
    rows, key = _near_key_rows16(3)
    write_png(path, W, H, 16, 2, rows, chunks=[(b"tRNS", struct.pack(">HHH", *key))])
    ref = bytearray()
    for row in rows:
        for x in range(W):
            px = row[3 * x:3 * x + 3]
            ref += bytes([v >> 8 for v in px] + [0 if px == key else 255])
    return {"reference": bytes(ref), "why": "16-bit RGB: the key matches the 16-bit samples exactly; Pillow compares "
                                            "the 16-bit key with 8-bit samples and finds no match"}


@variant("png-rgb8-trns.png")
def _png_rgb8_trns(path):
    rows = [[c for px in row for c in px] for row in rgb_pattern()]
    rows[2][0:3] = rows[5][6:9] = [12, 34, 56]
    write_png(path, W, H, 8, 2, rows, chunks=[(b"tRNS", struct.pack(">HHH", 12, 34, 56))])


for _bits in (1, 2, 4, 8):
    def _make(path, bits=_bits):
        n = 1 << bits
        pal = [((i * 67) % 256, (i * 151) % 256, (255 - i * 29) % 256) for i in range(n)]
        trns = bytes((i * 97) % 256 for i in range(max(1, n // 2)))  # shorter than the palette: the rest opaque
        rows = index_rows(W, H, n)
        write_png(path, W, H, bits, 3, rows,
                  chunks=[(b"PLTE", bytes(c for p in pal for c in p)), (b"tRNS", trns)], interlace=bits == 2)
    variant(f"png-palette{_bits}-trns{'-adam7' if _bits == 2 else ''}.png")(_make)


@variant("png-gray16.png")
def _png_gray16(path):
    rows = [[(x * 3449 + y * 5003) % 65536 for x in range(W)] for y in range(H)]
    write_png(path, W, H, 16, 0, rows)
    return {"reference": bytes(c for row in rows for v in row for c in (v >> 8,) * 3 + (255,)),
            "why": "16-bit gray keeps the high byte (Pillow opens it as I;16 and clips to 255)"}


@variant("png-gray-alpha16-adam7.png")
def _png_ga16(path):
    rows = [[v for x in range(W) for v in ((x * 3449 + y * 5003) % 65536, (x * 911 + y * 7919) % 65536)]
            for y in range(H)]
    write_png(path, W, H, 16, 4, rows, interlace=True)


@variant("png-rgba16.png")
def _png_rgba16(path):
    rows = [[v for x in range(W) for v in ((x * 3449) % 65536, (y * 5003) % 65536, (x * y * 97) % 65536,
                                           (x * 911 + y * 7919) % 65536)] for y in range(H)]
    write_png(path, W, H, 16, 6, rows)


@variant("png-rgb8-sbit5.png")
def _png_sbit(path):
    rows = [[(c >> 3) << 3 for px in row for c in px] for row in rgb_pattern()]
    write_png(path, W, H, 8, 2, rows, chunks=[(b"sBIT", bytes([5, 5, 5]))])


@variant("png-gray4-adam7.png")
def _png_gray4_adam7(path):
    write_png(path, W, H, 4, 0, gray_levels(4), interlace=True)


@variant("png-gray8-alpha.png")
def _png_gray_alpha8(path):
    rows = [[v for x in range(W) for v in ((x * 13 + y * 7) % 256, alpha_pattern()[y][x])] for y in range(H)]
    write_png(path, W, H, 8, 4, rows)


@variant("png-rgb8-gama-chrm.png")
def _png_gama(path):
    rows = [[c for px in row for c in px] for row in rgb_pattern()]
    chrm = struct.pack(">8I", 31270, 32900, 64000, 33000, 30000, 60000, 15000, 6000)
    write_png(path, W, H, 8, 2, rows, chunks=[(b"gAMA", struct.pack(">I", 45455)), (b"cHRM", chrm)])
