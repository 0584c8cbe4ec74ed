"""BMP variants: palettes, OS/2 headers, RLE, bitfields of every width, V3/V4/V5 headers, profiles."""
import hashlib, io, json, os, shutil, struct, subprocess, sys, tempfile, zlib

from .writers import *
from .registry import *

# BMP -------------------------------------------------------------------------------------------------------

def _bmp_palette(n):
    return [((i * 67 + 20) % 256, (i * 151) % 256, (255 - i * 29) % 256) for i in range(n)]


def _paletted_bmp(path, bits, colors_used=0, top_down=False, header=40):
    n = colors_used or (1 << bits)
    pal = _bmp_palette(n)
    idx = index_rows(W, H, n)
    pixels = bmp_rows([pack_indices(r, bits) for r in idx], top_down)
    dib = dib_header(header, W, -H if top_down else H, bits, 0, colors_used)
    dib += palette_bytes(pal)
    open(path, "wb").write(bmp_file(dib + pixels, len(dib)))
    return bytes(c for row in idx for i in row for c in pal[i] + (255,))


variant("bmp-1bit-colored-palette.bmp")(lambda p: (_paletted_bmp(p, 1), None)[1])
variant("bmp-4bit-5colors.bmp")(lambda p: (_paletted_bmp(p, 4, colors_used=5), None)[1])
variant("bmp-8bit-topdown.bmp")(lambda p: (_paletted_bmp(p, 8, colors_used=40, top_down=True), None)[1])
variant("bmp-8bit-v4.bmp")(lambda p: (_paletted_bmp(p, 8, colors_used=256, header=108), None)[1])


@variant("bmp-2bit.bmp")
def _bmp_2bit(path):
    return {"reference": _paletted_bmp(path, 2), "why": "2-bit palette BMP (Windows CE; Firefox and Chromium decode "
                                                        "it, Pillow refuses the depth)"}


@variant("bmp-os2-core-8bit.bmp")
def _bmp_core(path):
    pal = _bmp_palette(256)
    idx = index_rows(W, H, 256)
    pixels = bmp_rows([bytes(r) for r in idx])
    dib = struct.pack("<IHHHH", 12, W, H, 1, 8) + b"".join(bytes([b, g, r]) for r, g, b in pal)
    open(path, "wb").write(bmp_file(dib + pixels, len(dib)))


def _os2v2_bmp(path, header_size):
    """OS/2 2.x header (64 bytes, or its 16-byte short form) with an 8-bit palette of 4-byte entries."""
    pal = _bmp_palette(256)
    idx = index_rows(W, H, 256)
    pixels = bmp_rows([bytes(r) for r in idx])
    dib = struct.pack("<IIIHH", header_size, W, H, 1, 8)
    if header_size == 64:
        dib += struct.pack("<IIiiII", 0, 0, 2835, 2835, 0, 0) + b"\0" * 24
    dib += palette_bytes(pal)
    open(path, "wb").write(bmp_file(dib + pixels, len(dib)))
    return bytes(c for row in idx for i in row for c in pal[i] + (255,))


variant("bmp-os2v2-64-8bit.bmp")(lambda p: (_os2v2_bmp(p, 64), None)[1])


@variant("bmp-os2v2-16-header.bmp")
def _bmp_os2_16(path):
    return {"reference": _os2v2_bmp(path, 16),
            "why": "OS/2 2.x's 16-byte short header (bmpsuite's pal8os2v2-16): browsers decode it, Pillow refuses the size"}


def _rle8_stream(idx):
    """Bottom-up RLE8: encoded runs, an absolute run, a delta and end-of-line markers."""
    out = bytearray()
    for y in reversed(range(H)):
        row = idx[y]
        x = 0
        if y == 3:  # a delta skipping 2 pixels right (they stay index 0)
            out += bytes([0, 2, 2, 0])
            x = 2
        while x < W:
            if x + 4 <= W and len(set(row[x:x + 4])) > 1:  # absolute run of 4
                out += bytes([0, 4]) + bytes(row[x:x + 4])
                x += 4
                continue
            run = 1
            while x + run < W and row[x + run] == row[x] and run < 255:
                run += 1
            out += bytes([run, row[x]])
            x += run
        out += b"\0\0"
    out += b"\0\1"
    return bytes(out)


@variant("bmp-rle8-delta.bmp")
def _bmp_rle8(path):
    pal = _bmp_palette(16)
    idx = [[(x // 3 + y // 2) % 16 for x in range(W)] for y in range(H)]
    stream = _rle8_stream(idx)
    dib = dib_header(40, W, H, 8, 1, 16, len(stream)) + palette_bytes(pal)
    open(path, "wb").write(bmp_file(dib + stream, len(dib)))


@variant("bmp-rle4.bmp")
def _bmp_rle4(path):
    pal = _bmp_palette(16)
    out = bytearray()
    for y in reversed(range(H)):
        x = 0
        while x < W:
            run = min(W - x, 6)
            a, b = (x + y) % 16, (x + 2 * y + 1) % 16
            out += bytes([run, (a << 4) | b])  # alternating a, b
            x += run
        out += b"\0\0"
    out += b"\0\1"
    dib = dib_header(40, W, H, 4, 2, 16, len(out)) + palette_bytes(pal)
    open(path, "wb").write(bmp_file(dib + bytes(out), len(dib)))


def _masked16(path, masks, header, compression=3, bits=16):
    r_m, g_m, b_m, a_m = masks

    def put(v, m):
        if not m:
            return 0
        shift = (m & -m).bit_length() - 1
        return ((v * (m >> shift)) // 255) << shift
    rows = []
    for y, row in enumerate(rgb_pattern()):
        vals = [put(r, r_m) | put(g, g_m) | put(b, b_m) | put(alpha_pattern()[y][x], a_m)
                for x, (r, g, b) in enumerate(row)]
        rows.append(struct.pack("<%d%s" % (W, "H" if bits == 16 else "I"), *vals))
    pixels = bmp_rows(rows)
    if header == 40:
        extra = (r_m, g_m, b_m, a_m) if compression == 6 else (r_m, g_m, b_m)
        dib = dib_header(40, W, H, bits, compression) + struct.pack("<%dI" % len(extra), *extra)
    else:
        dib = dib_header(header, W, H, bits, compression, masks=masks)
    open(path, "wb").write(bmp_file(dib + pixels, len(dib)))

    def widen(v, m):  # the stored field back to 8 bits: narrow fields scaled (4-bit: q * 17), wide ones' top 8 bits
        if not m:
            return 255
        top = m >> ((m & -m).bit_length() - 1)
        width = top.bit_length()
        field = v * top // 255
        return field >> (width - 8) if width > 8 else field * 255 // top
    return bytes(c for y, row in enumerate(rgb_pattern()) for x, (r, g, b) in enumerate(row)
                 for c in (widen(r, r_m), widen(g, g_m), widen(b, b_m), widen(alpha_pattern()[y][x], a_m)))


variant("bmp-16bit-565.bmp")(lambda p: (_masked16(p, (0xF800, 0x07E0, 0x001F, 0), 40), None)[1])
variant("bmp-16bit-555-default.bmp")(lambda p: (_masked16(p, (0x7C00, 0x03E0, 0x001F, 0), 40, compression=0), None)[1])


@variant("bmp-16bit-3-10-3.bmp")
def _bmp_3103(path):
    return {"reference": _masked16(path, (0xE000, 0x1FF8, 0x0007, 0), 40),
            "why": "16-bit bitfields with a 10-bit green field (bmpsuite's rgb16-3103): its top 8 bits; Pillow refuses it"}


@variant("bmp-32bit-a2r10g10b10-v5.bmp")
def _bmp_1010102(path):
    return {"reference": _masked16(path, (0x3FF00000, 0x000FFC00, 0x000003FF, 0xC0000000), 124, bits=32),
            "why": "32-bit 10-10-10 with 2-bit alpha (bmpsuite's rgba32-1010102): top 8 bits; Pillow refuses it"}


@variant("bmp-32bit-unaligned-masks.bmp")
def _bmp_rgb32bf(path):
    return {"reference": _masked16(path, (0xFF000000, 0x00000FF0, 0x00FF0000, 0), 40, bits=32),
            "why": "8-bit masks off byte boundaries (bmpsuite's valid rgb32bf): browsers decode it, Pillow refuses it"}


@variant("bmp-16bit-4444-v5.bmp")
def _bmp_4444(path):
    return {"reference": _masked16(path, (0x0F00, 0x00F0, 0x000F, 0xF000), 124),
            "why": "16-bit bitfields with a 4-bit alpha mask (V5 header); Pillow refuses the mask layout"}


def _bmp32(path, header, compression, masks, order, alpha=True, top_down=False, profile=None):
    rows = []
    ap = alpha_pattern()
    for y, row in enumerate(rgb_pattern()):
        out = bytearray()
        for x, (r, g, b) in enumerate(row):
            ch = {"r": r, "g": g, "b": b, "a": ap[y][x] if alpha else 0}
            out += bytes(ch[c] for c in order)
        rows.append(bytes(out))
    pixels = bmp_rows(rows, top_down)
    if profile is not None:
        dib_len = header
        dib = dib_header(header, W, -H if top_down else H, 32, compression, masks=masks,
                         v5_profile=(header + len(pixels), len(profile)))
        data = dib + pixels + profile
    else:
        dib = dib_header(header, W, -H if top_down else H, 32, compression, masks=masks)
        data = dib + pixels
    open(path, "wb").write(bmp_file(data, len(dib)))


# BGRA with an alpha mask in a V4 header; RGBA byte order (masks say so) in a V5 header.
variant("bmp-32bit-v4-alpha.bmp")(lambda p: _bmp32(p, 108, 3, (0xFF0000, 0xFF00, 0xFF, 0xFF000000), "bgra"))
variant("bmp-32bit-v5-rgba-order.bmp")(lambda p: _bmp32(p, 124, 3, (0xFF, 0xFF00, 0xFF0000, 0xFF000000), "rgba"))
variant("bmp-32bit-bi-rgb-v5-topdown.bmp")(lambda p: _bmp32(p, 124, 0, None, "bgra", top_down=True))


def _srgb_like_profile():
    """A small valid ICC profile (lcms2's sRGB, via Pillow ImageCms) for embedding."""
    from PIL import ImageCms
    profile = bytearray(ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes())
    profile[24:36] = bytes(12)  # the creation date: zeroed, so that every run writes the same bytes
    return bytes(profile)


@variant("bmp-24bit-v5-icc.bmp")
def _bmp24_icc(path):
    rows = [bytes(c for r, g, b in row for c in (b, g, r)) for row in rgb_pattern()]
    pixels = bmp_rows(rows)
    profile = _srgb_like_profile()
    dib = dib_header(124, W, H, 24, 0, v5_profile=(124 + len(pixels), len(profile)))
    open(path, "wb").write(bmp_file(dib + pixels + profile, len(dib)))


@variant("bmp-24bit-gap-before-pixels.bmp")
def _bmp_gap(path):
    rows = [bytes(c for r, g, b in row for c in (b, g, r)) for row in rgb_pattern()]
    dib = dib_header(40, W, H, 24)
    data = dib + b"\xAA" * 30 + bmp_rows(rows)
    open(path, "wb").write(bmp_file(data, len(dib) + 30))


@variant("bmp-16bit-565-v4.bmp")
def _bmp_565_v4(path):
    _masked16(path, (0xF800, 0x07E0, 0x001F, 0), 108)


@variant("bmp-32bit-v3-alpha.bmp")
def _bmp_v3(path):
    # BITMAPV3INFOHEADER (56 bytes): the alpha mask inside the header, BI_BITFIELDS.
    ap = alpha_pattern()
    rows = [bytes(c for x, (r, g, b) in enumerate(row) for c in (b, g, r, ap[y][x])) for y, row in enumerate(rgb_pattern())]
    dib = struct.pack("<IiiHHIIiiII", 56, W, H, 1, 32, 3, 0, 2835, 2835, 0, 0)
    dib += struct.pack("<IIII", 0xFF0000, 0xFF00, 0xFF, 0xFF000000)
    open(path, "wb").write(bmp_file(dib + bmp_rows(rows), len(dib)))
    return {"reference": bytes(c for y, row in enumerate(rgb_pattern()) for x, px in enumerate(row)
                               for c in px + (ap[y][x],)),
            "why": "V3 header (56 bytes) with an alpha mask; Pillow reads the alpha mask only from V4/V5 headers"}


@variant("bmp-24bit-with-palette.bmp")
def _bmp24_palette(path):
    # A 24-bit file that still carries a (useless) 16-entry colour table: pixels start at bfOffBits, after it.
    rows = [bytes(c for r, g, b in row for c in (b, g, r)) for row in rgb_pattern()]
    dib = dib_header(40, W, H, 24, 0, 16) + palette_bytes(_bmp_palette(16))
    open(path, "wb").write(bmp_file(dib + bmp_rows(rows), len(dib)))
