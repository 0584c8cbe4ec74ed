#!/usr/bin/env python3
"""Odd-but-valid variants of every still-image format the package decodes (issue 20, point 6), written into
Tests/Support/DecoderFixtures/variants/ with their references in variants/expected.json.

    python3 make_variant_fixtures.py            # write the files and expected.json
    python3 make_variant_fixtures.py compare    # decode each with `swift run imagedl decode --rgba` and count
                                                # how many match Pillow and how many match the reference

Needs Pillow (pip install Pillow); the TIFF compression/tiling variants need libtiff's tiffcp and the JPEG
ones cjpeg (apt-get install libtiff-tools libjpeg-turbo-progs; or set TIFFCP / CJPEG to the binaries).

Every file is generated here from synthetic pixels (CC0), by this script's own small writers (PNG, BMP, ICO,
TIFF, lossless JPEG) where the layout matters, or by Pillow/cjpeg/tiffcp. The reference of a file is Pillow's
`Image.open(...).convert("RGBA")` unless the entry says why not: where Pillow is wrong or cannot open the file,
the reference is computed from the samples the script wrote (`reference: "generator"`), following the rule
Docs/Decoding.md names for that case.
"""
import hashlib, io, json, os, shutil, struct, subprocess, sys, tempfile, zlib

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "variants")
W, H = 19, 13  # odd sizes: row padding and partial tiles/blocks everywhere


def tool(env, name):
    path = os.environ.get(env) or shutil.which(name)
    if not path:
        sys.exit(f"{name} not found: apt-get install libtiff-tools libjpeg-turbo-progs, or set {env}")
    return path


# MARK: - Test pattern


def rgb_pattern(w=W, h=H):
    """Smooth ramps plus a hue term: every channel changes along both axes."""
    return [[((x * 255) // (w - 1), (y * 255) // (h - 1), (x * 37 + y * 91 + 40) % 256) for x in range(w)]
            for y in range(h)]


def alpha_pattern(w=W, h=H):
    return [[0 if (x + y) % 7 == 0 else (x * 13 + y * 29) % 256 for x in range(w)] for y in range(h)]


def rgba_bytes(rows):
    return bytes(c for row in rows for px in row for c in px)


# MARK: - PNG writer


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def pack_row(samples, bits):
    if bits == 8:
        return bytes(samples)
    if bits == 16:
        return struct.pack(">%dH" % len(samples), *samples)
    out, acc, n = bytearray(), 0, 0
    for s in samples:
        acc = (acc << bits) | s
        n += bits
        if n == 8:
            out.append(acc)
            acc, n = 0, 0
    if n:
        out.append(acc << (8 - n))
    return bytes(out)


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def write_png(path, w, h, bits, color_type, sample_rows, chunks=(), interlace=False):
    """sample_rows: rows of flat sample lists (channels interleaved). chunks: (type, data) before IDAT."""
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color_type]
    raw = bytearray()
    if interlace:
        for x0, y0, dx, dy in ADAM7:
            for y in range(y0, h, dy):
                xs = list(range(x0, w, dx))
                if not xs:
                    continue
                row = [s for x in xs for s in sample_rows[y][x * channels:(x + 1) * channels]]
                raw += b"\0" + pack_row(row, bits)
    else:
        for row in sample_rows:
            raw += b"\0" + pack_row(row, bits)
    ihdr = struct.pack(">IIBBBBB", w, h, bits, color_type, 0, 0, 1 if interlace else 0)
    body = png_chunk(b"IHDR", ihdr) + b"".join(png_chunk(k, d) for k, d in chunks)
    body += png_chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + png_chunk(b"IEND", b"")
    open(path, "wb").write(b"\x89PNG\r\n\x1a\n" + body)


# MARK: - BMP / ICO writers


def dib_header(size, w, h, bits, compression=0, colors=0, image_size=0, masks=None, v5_profile=None):
    """BITMAPINFOHEADER (40), V4 (108) or V5 (124); masks (r, g, b, a) are written inside V4/V5 headers.
    v5_profile: (offset from the header start, length) of an embedded ICC profile (CSType PROFILE_EMBEDDED)."""
    hdr = struct.pack("<IiiHHIIiiII", size, w, h, 1, bits, compression, image_size, 2835, 2835, colors, 0)
    if size >= 108:
        r, g, b, a = masks or (0, 0, 0, 0)
        cs = 0x4D424544 if v5_profile else 0x73524742  # 'MBED' / 'sRGB'
        hdr += struct.pack("<IIIII", r, g, b, a, cs) + b"\0" * 36 + struct.pack("<III", 0, 0, 0)
    if size == 124:
        offset, length = v5_profile or (0, 0)
        hdr += struct.pack("<IIII", 4, offset, length, 0)  # intent LCS_GM_IMAGES
    assert len(hdr) == size, (len(hdr), size)
    return hdr


def bmp_rows(rows_bytes, top_down=False):
    """Pads each row to 4 bytes and orders them bottom-up unless top_down."""
    padded = [r + b"\0" * ((-len(r)) % 4) for r in rows_bytes]
    return b"".join(padded if top_down else reversed(padded))


def bmp_file(dib_and_pixels, pixel_offset_in_dib):
    return b"BM" + struct.pack("<IHHI", 14 + len(dib_and_pixels), 0, 0, 14 + pixel_offset_in_dib) + dib_and_pixels


def palette_bytes(colors):
    return b"".join(bytes([b, g, r, 0]) for r, g, b in colors)


def index_rows(w, h, levels):
    return [[(x * 3 + y * 5 + (x * y) // 4) % levels for x in range(w)] for y in range(h)]


def pack_indices(row, bits):
    return pack_row(row, bits)


def and_mask_rows(w, h, transparent):
    """1-bit AND mask rows (1 = transparent), each padded to 32 bits, bottom-up."""
    rows = []
    for y in range(h):
        rows.append(pack_row([1 if transparent(x, y) else 0 for x in range(w)], 1))
    return bmp_rows(rows)


def ico_file(entries, kind=1):
    """entries: (width, height, planes_or_hotspot_x, bitcount_or_hotspot_y, payload)."""
    out = struct.pack("<HHH", 0, kind, len(entries))
    offset = 6 + 16 * len(entries)
    blobs = b""
    for w, h, planes, bits, payload in entries:
        out += struct.pack("<BBBBHHII", w % 256, h % 256, 0, 0, planes, bits, len(payload), offset)
        offset += len(payload)
        blobs += payload
    return out + blobs


# MARK: - TIFF writer

BYTE, ASCII, SHORT, LONG, RATIONAL, SBYTE, UNDEFINED, SSHORT, SLONG, SRATIONAL, FLOAT, DOUBLE = range(1, 13)
TYPE_FMT = {BYTE: "B", SHORT: "H", LONG: "I", UNDEFINED: "B", FLOAT: "f", DOUBLE: "d", SSHORT: "h"}


def write_tiff(path, w, h, bits, spp, photometric, data, *, big_endian=False, extra_tags=(), rows_per_strip=None,
               planar=1):
    """One IFD, uncompressed. data: the packed sample bytes, contig (or plane after plane when planar=2),
    already in the file's byte order. Strips of rows_per_strip rows (all rows by default)."""
    e = ">" if big_endian else "<"
    rps = rows_per_strip or h
    row_bytes = (w * (spp if planar == 1 else 1) * bits + 7) // 8
    planes = 1 if planar == 1 else spp
    strips = []
    for p in range(planes):
        plane = data[p * row_bytes * h:(p + 1) * row_bytes * h]
        for y in range(0, h, rps):
            strips.append(plane[y * row_bytes:min(h, y + rps) * row_bytes])
    tags = {256: (LONG, [w]), 257: (LONG, [h]), 258: (SHORT, [bits] * spp), 259: (SHORT, [1]),
            262: (SHORT, [photometric]), 273: (LONG, [0] * len(strips)), 277: (SHORT, [spp]),
            278: (LONG, [rps]), 279: (LONG, [len(s) for s in strips]), 284: (SHORT, [planar])}
    for tag, typ, values in extra_tags:
        tags[tag] = (typ, values)
    entries = sorted(tags.items())
    ifd_size = 2 + 12 * len(entries) + 4
    cursor = 8 + ifd_size
    blobs = bytearray()
    fields = []
    payloads = {}
    for tag, (typ, values) in entries:
        payloads[tag] = values if typ in (ASCII,) else None
    # Out-of-line values first, then the strips.
    out_of_line = {}
    for tag, (typ, values) in entries:
        if tag == 273:
            continue
        raw = values if typ == ASCII else (bytes(values) if typ == UNDEFINED and isinstance(values, bytes)
                                          else struct.pack(e + TYPE_FMT[typ] * len(values), *values))
        if len(raw) > 4:
            out_of_line[tag] = cursor + len(blobs)
            blobs += raw + (b"\0" if len(raw) & 1 else b"")
    strip_offsets_at = None
    if len(strips) > 1:
        strip_offsets_at = cursor + len(blobs)
        blobs += b"\0" * (4 * len(strips))
    data_start = cursor + len(blobs)
    offsets, pos = [], data_start
    for s in strips:
        offsets.append(pos)
        pos += len(s)
    if strip_offsets_at is not None:
        at = strip_offsets_at - cursor
        blobs[at:at + 4 * len(strips)] = struct.pack(e + "I" * len(strips), *offsets)
    out = (b"MM" if big_endian else b"II") + struct.pack(e + "HI", 42, 8) + struct.pack(e + "H", len(entries))
    for tag, (typ, values) in entries:
        count = len(values)
        if tag == 273:
            field = struct.pack(e + "I", strip_offsets_at if strip_offsets_at is not None else offsets[0])
        elif tag in out_of_line:
            field = struct.pack(e + "I", out_of_line[tag])
        else:
            raw = values if typ == ASCII else (bytes(values) if typ == UNDEFINED and isinstance(values, bytes)
                                              else struct.pack(e + TYPE_FMT[typ] * count, *values))
            field = raw + b"\0" * (4 - len(raw))
        out += struct.pack(e + "HHI", tag, typ, count) + field
    out += b"\0\0\0\0" + bytes(blobs)
    assert len(out) == data_start
    out += b"".join(strips)
    open(path, "wb").write(out)


def tiff_pack(sample_rows, bits, big_endian=False, fmt="uint"):
    """Packs rows of samples: bit-packed MSB first for bits not a multiple of 8, each row padded to a byte."""
    e = ">" if big_endian else "<"
    out = bytearray()
    for row in sample_rows:
        if fmt == "float":
            out += struct.pack(e + ("f" if bits == 32 else "d" if bits == 64 else "e") * len(row), *row)
        elif bits == 24 and fmt == "uint":
            for s in row:
                out += s.to_bytes(3, "big" if big_endian else "little")
        elif bits in (8, 16, 32) and fmt in ("uint", "int"):
            code = {8: "B", 16: "H", 32: "I"}[bits]
            if fmt == "int":
                code = code.lower()
            out += struct.pack(e + code * len(row), *row)
        else:
            acc, n = 0, 0
            for s in row:
                acc = (acc << bits) | (s & ((1 << bits) - 1))
                n += bits
                while n >= 8:
                    out.append((acc >> (n - 8)) & 0xFF)
                    n -= 8
            if n:
                out.append((acc << (8 - n)) & 0xFF)
                acc, n = 0, 0
            acc = 0
    return bytes(out)


# MARK: - Reference rules (Docs/Decoding.md) for the cases where Pillow is not the reference


def to8(v, bits, fmt="uint"):
    """One sample to 8 bits: below 8 bits scaled (v * 255 / max, rounded), 8 and more the top 8 bits; signed
    samples clamp below 0 and scale their positive range; floats clamp 0...1 and round (Pillow's F -> L)."""
    if fmt == "float":
        if v != v or v <= 0:
            return 0
        return 255 if v >= 1 else int(v * 255 + 0.5)
    if fmt == "int":
        if v <= 0:
            return 0
        return (v * 255 + ((1 << (bits - 1)) - 1) // 2) // ((1 << (bits - 1)) - 1) if bits <= 8 else v >> (bits - 9)
    if bits < 8:
        m = (1 << bits) - 1
        return (v * 255 + m // 2) // m
    return v >> (bits - 8)


def muldiv255(a, b):
    t = a * b + 128
    return ((t >> 8) + t) >> 8


def cmyk_to_rgb(c, m, y, k):
    """Pillow's CMYK -> RGB (and the package's when there is no CMYK profile)."""
    nk = 255 - k
    return tuple(max(0, min(255, nk - muldiv255(v, nk))) for v in (c, m, y))


def unpremultiply(c, a):
    """Pillow's RGBa -> RGBA: 255 * c / a truncated; alpha 0 keeps the colour."""
    return c if a in (0, 255) else min(255, c * 255 // a)


# MARK: - The variants

VARIANTS = []  # (name, maker(path) -> optional dict with "reference": bytes and "why")


def variant(name):
    def register(fn):
        VARIANTS.append((name, fn))
        return fn
    return register


def gray_levels(bits, w=W, h=H):
    m = (1 << bits) - 1
    return [[((x * 7 + y * 3) * m // (7 * (w - 1) + 3 * (h - 1))) for x in range(w)] for y in range(h)]


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
    return ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()


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


# ICO / CUR -------------------------------------------------------------------------------------------------

def _mask_shape(x, y, w=W, h=H):
    return (x - w // 2) ** 2 + (y - h // 2) ** 2 > (min(w, h) // 2) ** 2


def _icon_dib(bits, header=40, alpha="pattern", profile=None, compression=0, masks=None, w=W, h=H):
    """An icon DIB: header (height doubled), palette, XOR rows, AND mask rows, then an optional ICC profile
    (V5 headers point at it). Returns (payload, reference RGBA as the package decodes it)."""
    ref = bytearray()
    ap = alpha_pattern(w, h)
    pattern = rgb_pattern(w, h)
    pal = []
    if bits <= 8:
        n = 1 << bits
        pal = [(0, 0, 0), (255, 255, 255)] if bits == 1 else _bmp_palette(n)
        idx = index_rows(w, h, n)
        xor = bmp_rows([pack_indices(r, bits) for r in idx])
    elif bits == 24:
        xor = bmp_rows([bytes(c for r, g, b in row for c in (b, g, r)) for row in pattern])
    else:
        xor = bmp_rows([bytes(c for x, (r, g, b) in enumerate(row)
                              for c in (b, g, r, ap[y][x] if alpha == "pattern" else 0))
                        for y, row in enumerate(pattern)])
    and_mask = and_mask_rows(w, h, lambda x, y: _mask_shape(x, y, w, h))
    body = palette_bytes(pal) + xor + and_mask
    size_fields = {}
    if profile is not None:
        size_fields["v5_profile"] = (header + len(body), len(profile))
    dib = dib_header(header, w, 2 * h, bits, compression, masks=masks, **size_fields)
    payload = dib + body + (profile or b"")
    for y in range(h):
        for x in range(w):
            if bits <= 8:
                rgb = pal[idx[y][x]]
            else:
                rgb = pattern[y][x]
            if bits == 32 and alpha == "pattern":
                a = ap[y][x]
            else:
                a = 0 if _mask_shape(x, y, w, h) else 255
            ref += bytes(rgb) + bytes([a])
    return payload, bytes(ref)


for _bits in (1, 4, 8, 24, 32):
    def _make(path, bits=_bits):
        payload, ref = _icon_dib(bits)
        open(path, "wb").write(ico_file([(W, H, 1, bits, payload)]))
        if bits == 4 or bits == 8:
            return {"reference": ref, "why": "AND mask as alpha (Windows and browsers); Pillow applies it too"}
    variant(f"ico-dib{_bits}-andmask.ico")(_make)


@variant("ico-dib32-zero-alpha.ico")
def _ico_zero_alpha(path):
    payload, ref = _icon_dib(32, alpha="zero")
    open(path, "wb").write(ico_file([(W, H, 1, 32, payload)]))
    return {"reference": ref, "why": "a 32-bit entry whose alpha bytes are all zero shows its AND mask (browsers); "
                                     "Pillow makes every pixel transparent"}


@variant("ico-png-and-dib-entries.ico")
def _ico_png(path):
    from PIL import Image
    small, _ = _icon_dib(8, w=8, h=8)
    im = Image.frombytes("RGBA", (W, H), bytes(c for y, row in enumerate(rgb_pattern())
                                                for x, px in enumerate(row) for c in px + (alpha_pattern()[y][x],)))
    buf = io.BytesIO()
    im.save(buf, "PNG")
    open(path, "wb").write(ico_file([(8, 8, 1, 8, small), (W, H, 1, 32, buf.getvalue())]))


@variant("ico-v5-icc-alpha.ico")
def _ico_v5_icc(path):
    payload, ref = _icon_dib(32, header=124, profile=_srgb_like_profile())
    open(path, "wb").write(ico_file([(W, H, 1, 32, payload)]))


@variant("ico-v5-bitfields-icc-alpha.ico")
def _ico_v5_bitfields(path):
    payload, ref = _icon_dib(32, header=124, profile=_srgb_like_profile(), compression=3,
                             masks=(0xFF0000, 0xFF00, 0xFF, 0xFF000000))
    open(path, "wb").write(ico_file([(W, H, 1, 32, payload)]))
    return {"reference": ref, "why": "BI_BITFIELDS with an alpha mask: Pillow's DIB reader takes the fourth byte as alpha too"}


@variant("ico-256-png-entry.ico")
def _ico_256(path):
    from PIL import Image
    small, _ = _icon_dib(32, w=16, h=16)
    im = Image.frombytes("RGBA", (256, 256), bytes(c for y in range(256) for x in range(256)
                                                   for c in (x, y, (x ^ y) & 255, 255 if (x // 32 + y // 32) % 2 else 128)))
    buf = io.BytesIO()
    im.save(buf, "PNG", optimize=True)
    open(path, "wb").write(ico_file([(16, 16, 1, 32, small), (256, 256, 1, 32, buf.getvalue())]))  # 0 in the directory


@variant("cur-png-entry.cur")
def _cur_png(path):
    from PIL import Image
    im = Image.frombytes("RGBA", (W, H), bytes(c for y, row in enumerate(rgb_pattern()) for x, px in enumerate(row)
                                                for c in px + (alpha_pattern()[y][x],)))
    buf = io.BytesIO()
    im.save(buf, "PNG")
    open(path, "wb").write(ico_file([(W, H, 2, 2, buf.getvalue())], kind=2))
    return {"reference": im.tobytes(), "why": "a PNG cursor entry decodes as the PNG (Pillow's CUR reader only reads DIBs)"}


@variant("ico-v5-bitfields-no-alpha-mask-icc.ico")
def _ico_v5_no_alpha_mask(path):
    # BI_BITFIELDS with RGB masks only (alpha mask 0), as some writers emit V5 icon entries: the fourth byte is
    # still the icon's alpha (Windows and Pillow read it from every 32-bit entry).
    payload, ref = _icon_dib(32, header=124, profile=_srgb_like_profile(), compression=3,
                             masks=(0xFF0000, 0xFF00, 0xFF, 0))
    open(path, "wb").write(ico_file([(W, H, 1, 32, payload)]))


for _bits in (1, 4, 32):
    def _make(path, bits=_bits):
        payload, ref = _icon_dib(bits)
        open(path, "wb").write(ico_file([(W, H, 3, 4, payload)], kind=2))  # hotspot (3, 4)
        if bits == 4:
            return {"reference": ref, "why": "AND mask as alpha, as for icons (Windows); Pillow's CUR reader masks "
                                             "only 1-bit and gray cursors"}
        if bits == 32:
            return {"reference": ref, "why": "a 32-bit cursor's fourth byte is alpha, as in icons (Windows, browsers); "
                                             "Pillow's CUR reader shows it opaque"}
    variant(f"cur-dib{_bits}-andmask.cur")(_make)


# TIFF ------------------------------------------------------------------------------------------------------

PHOTO_WHITE, PHOTO_BLACK, PHOTO_RGB, PHOTO_PALETTE, PHOTO_SEPARATED, PHOTO_CIELAB, PHOTO_ICCLAB = 0, 1, 2, 3, 5, 8, 9


def samples(channels, bits, fmt="uint", w=W, h=H):
    """Rows of interleaved samples covering the range, with low bits that differ from the high ones (so that
    truncation, rounding and scaling give different 8-bit results)."""
    rows = []
    for y in range(h):
        row = []
        for x in range(w):
            for c in range(channels):
                base = (x * (37 + 11 * c) + y * (23 + 7 * c) + c * 50) % 256
                if fmt == "float":
                    v = base / 255.0 * 1.2 - 0.1  # some below 0, some above 1
                    code = {16: "e", 32: "f", 64: "d"}[bits]
                    row.append(struct.unpack(code, struct.pack(code, v))[0])  # the value as stored
                elif fmt == "int":
                    top = (1 << (bits - 1)) - 1
                    row.append((base - 60) * top // 195 if bits > 8 else base - 128)
                elif bits <= 8:
                    row.append(base * ((1 << bits) - 1) // 255)
                else:
                    row.append((base << (bits - 8)) | ((x * 7 + y * 13 + c) % (1 << (bits - 8))))
        rows.append(row)
    return rows


def _gray_ref(rows, bits, fmt="uint", invert=False):
    out = bytearray()
    for row in rows:
        for v in row:
            g = to8(v, bits, fmt)
            out += bytes([255 - g if invert else g] * 3 + [255])
    return bytes(out)


def _gray_tiff(path, bits, fmt="uint", photometric=PHOTO_BLACK, big_endian=False):
    rows = samples(1, bits, fmt)
    tags = [(339, SHORT, [{"uint": 1, "int": 2, "float": 3}[fmt]])] if fmt != "uint" else []
    write_tiff(path, W, H, bits, 1, photometric, tiff_pack(rows, bits, big_endian, fmt), big_endian=big_endian,
               extra_tags=tags, rows_per_strip=5)
    return rows


for _bits, _be in ((2, False), (4, False), (6, False), (10, False), (12, False), (14, False), (24, False),
                   (24, True), (32, False)):
    def _make(path, bits=_bits, be=_be):
        rows = _gray_tiff(path, bits, big_endian=be)
        if bits in (2, 4):
            return None
        return {"reference": _gray_ref(rows, bits),
                "why": f"{bits}-bit samples: {'scaled to 8 bits' if bits < 8 else 'the top 8 bits'} (libtiff's RGBA "
                       "interface refuses the depth; Pillow cannot open it or clips its I mode)"}
    variant(f"tiff-gray{_bits}{'-be' if _be else ''}.tif")(_make)

for _bits in (4, 8, 16):
    def _make(path, bits=_bits):
        rows = _gray_tiff(path, bits, photometric=PHOTO_WHITE)
        if bits == 16:
            return {"reference": _gray_ref(rows, 16, invert=True),
                    "why": "16-bit min-is-white: inverted, high byte (Pillow ignores min-is-white at 16 bits)"}
    variant(f"tiff-miniswhite{_bits}.tif")(_make)

for _bits, _fmt, _be in ((8, "int", False), (16, "int", False), (32, "int", True), (16, "float", False),
                         (32, "float", False), (32, "float", True), (64, "float", False)):
    def _make(path, bits=_bits, fmt=_fmt, be=_be):
        rows = _gray_tiff(path, bits, fmt, big_endian=be)
        return {"reference": _gray_ref(rows, bits, fmt),
                "why": "signed samples: below 0 is black, the positive range scaled" if fmt == "int" else
                       "float samples clamped to 0...1 and rounded to 8 bits (Pillow's F -> L rounding, on 0...1)"}
    variant(f"tiff-gray-{_fmt}{_bits}{'-be' if _be else ''}.tif")(_make)


def _rgb_tiff(path, bits, fmt="uint", big_endian=False, planar=1, channels=3, extra=None, photometric=PHOTO_RGB,
              rows=None):
    rows = rows or samples(channels, bits, fmt)
    tags = []
    if fmt != "uint":
        tags.append((339, SHORT, [{"int": 2, "float": 3}[fmt]] * channels))
    if extra is not None:
        tags.append((338, SHORT, extra))
    if planar == 2:
        planes = [[[row[x * channels + c] for x in range(W)] for row in rows] for c in range(channels)]
        data = b"".join(tiff_pack(p, bits, big_endian, fmt) for p in planes)
    else:
        data = tiff_pack(rows, bits, big_endian, fmt)
    write_tiff(path, W, H, bits, channels, photometric, data, big_endian=big_endian, extra_tags=tags,
               rows_per_strip=4, planar=planar)
    return rows


def _rgb_ref(rows, bits, fmt="uint", channels=3):
    out = bytearray()
    for row in rows:
        for x in range(W):
            px = [to8(v, bits, fmt) for v in row[x * channels:x * channels + 3]]
            out += bytes(px + [255])
    return bytes(out)


for _bits, _fmt, _be, _planar in ((10, "uint", False, 1), (12, "uint", True, 1), (12, "uint", False, 2),
                                  (32, "uint", False, 1), (16, "uint", True, 1), (32, "float", False, 1),
                                  (32, "float", False, 2)):
    def _make(path, bits=_bits, fmt=_fmt, be=_be, planar=_planar):
        rows = _rgb_tiff(path, bits, fmt, be, planar)
        if bits == 16:
            return None
        return {"reference": _rgb_ref(rows, bits, fmt), "why": "see the gray cases: top 8 bits, floats clamped 0...1"}
    variant(f"tiff-rgb-{_fmt}{_bits}{'-be' if _be else ''}{'-planar' if _planar == 2 else ''}.tif")(_make)


@variant("tiff-rgb8-planar.tif")
def _rgb8_planar(path):
    _rgb_tiff(path, 8, planar=2)


def _palette_tiff(path, bits):
    n = 1 << bits
    cmap = [[(i * 4099 + c * 20011) % 65536 for i in range(n)] for c in range(3)]
    idx = index_rows(W, H, min(n, 1000))
    write_tiff(path, W, H, bits, 1, PHOTO_PALETTE, tiff_pack(idx, bits),
               extra_tags=[(320, SHORT, cmap[0] + cmap[1] + cmap[2])], rows_per_strip=6)
    return bytes(c for row in idx for i in row for c in (cmap[0][i] >> 8, cmap[1][i] >> 8, cmap[2][i] >> 8, 255))


variant("tiff-palette4.tif")(lambda p: (_palette_tiff(p, 4), None)[1])
variant("tiff-palette8.tif")(lambda p: (_palette_tiff(p, 8), None)[1])


def _cmyk_ref(rows, bits, channels=4, alpha=False):
    out = bytearray()
    for row in rows:
        for x in range(W):
            c, m, y, k = [to8(v, bits) for v in row[x * channels:x * channels + 4]]
            a = to8(row[x * channels + 4], bits) if alpha else 255
            out += bytes(cmyk_to_rgb(c, m, y, k) + (a,))
    return bytes(out)


for _bits, _planar, _alpha in ((8, 1, False), (8, 2, False), (8, 1, True), (16, 1, False), (12, 1, False),
                               (16, 2, False)):
    def _make(path, bits=_bits, planar=_planar, alpha=_alpha):
        channels = 5 if alpha else 4
        rows = _rgb_tiff(path, bits, planar=planar, channels=channels, extra=[2] if alpha else None,
                         photometric=PHOTO_SEPARATED)
        return {"reference": _cmyk_ref(rows, bits, channels, alpha),
                "why": "CMYK samples to 8 bits (top bits), then Pillow's CMYK -> RGB formula (rounded); libtiff's "
                       "RGBA interface truncates, and refuses 12 and 16 bits"}
    variant(f"tiff-cmyk{_bits}{'-planar' if _planar == 2 else ''}{'-alpha' if _alpha else ''}.tif")(_make)


def _lab_samples(bits, signed_ab=True):
    rows = []
    for y in range(H):
        row = []
        for x in range(W):
            L = (x * 255) // (W - 1)
            a = (y * 20 - 120)
            b = (x * 13 - 120)
            if bits == 8:
                row += [L, a & 0xFF if signed_ab else a + 128, b & 0xFF if signed_ab else b + 128]
            else:
                row += [L * 257, (a * 256) & 0xFFFF if signed_ab else (a + 128) * 256,
                        (b * 256) & 0xFFFF if signed_ab else (b + 128) * 256]
        rows.append(row)
    return rows


def _lab_reference(rows, bits, signed_ab):
    """Lab -> sRGB through lcms2 (Pillow's ImageCms: a D50 Lab profile, perceptual intent). Pillow's LAB mode
    holds a and b as signed bytes (TIFF's CIELab encoding)."""
    from PIL import Image, ImageCms
    lab = bytearray()
    for row in rows:
        for x in range(W):
            L, a, b = row[3 * x:3 * x + 3]
            if bits == 16:
                L, a, b = L >> 8, a >> 8, b >> 8
            if not signed_ab:
                a, b = a ^ 0x80, b ^ 0x80
            lab += bytes([L, a, b])
    im = Image.frombytes("LAB", (W, H), bytes(lab))
    transform = ImageCms.buildTransform(ImageCms.createProfile("LAB"), ImageCms.createProfile("sRGB"), "LAB", "RGB")
    return ImageCms.applyTransform(im, transform).convert("RGBA").tobytes()


for _bits, _photo in ((8, PHOTO_CIELAB), (8, PHOTO_ICCLAB), (16, PHOTO_CIELAB)):
    def _make(path, bits=_bits, photo=_photo):
        signed = photo == PHOTO_CIELAB
        rows = _lab_samples(bits, signed)
        write_tiff(path, W, H, bits, 3, photo, tiff_pack(rows, bits), rows_per_strip=7)
        return {"reference": _lab_reference(rows, bits, signed), "lab": True,
                "why": "Lab converted to sRGB by lcms2 as Pillow's ImageCms does (D50 Lab profile, perceptual); "
                       "libtiff's RGBA interface uses its own approximate display model"}
    variant(f"tiff-{'cielab' if _photo == PHOTO_CIELAB else 'icclab'}{_bits}.tif")(_make)


def _alpha_rows(channels, bits, premultiplied):
    rows = samples(channels, bits)
    m = (1 << bits) - 1
    if premultiplied:
        for row in rows:
            for x in range(W):
                a = row[x * channels + channels - 1]
                for c in range(channels - 1):
                    row[x * channels + c] = (row[x * channels + c] * a + m // 2) // m
    return rows


def _alpha_ref(rows, bits, channels, premultiplied, gray=False):
    out = bytearray()
    for row in rows:
        for x in range(W):
            px = [to8(v, bits) for v in row[x * channels:(x + 1) * channels]]
            a = px[-1]
            colors = px[:1] * 3 if gray else px[:3]
            if premultiplied:
                colors = [unpremultiply(c, a) for c in colors]
            out += bytes(colors + [a])
    return bytes(out)


for _name, _channels, _bits, _pre, _photo in (("rgba8-associated", 4, 8, True, PHOTO_RGB),
                                              ("rgba8-unassociated", 4, 8, False, PHOTO_RGB),
                                              ("gray-alpha8-associated", 2, 8, True, PHOTO_BLACK),
                                              ("rgba16-associated", 4, 16, True, PHOTO_RGB)):
    def _make(path, channels=_channels, bits=_bits, pre=_pre, photo=_photo, name=_name):
        rows = _alpha_rows(channels, bits, pre)
        write_tiff(path, W, H, bits, channels, photo, tiff_pack(rows, bits),
                   extra_tags=[(338, SHORT, [1 if pre else 2])], rows_per_strip=5)
        if pre and channels == 2:
            return {"reference": _alpha_ref(rows, bits, channels, pre, gray=True),
                    "why": "gray + associated alpha, un-premultiplied as Pillow does for RGBa (Pillow's La mode "
                           "converts without un-premultiplying)"}
    variant(f"tiff-{_name}.tif")(_make)


@variant("tiff-gray-alpha8-unassociated.tif")
def _gray_alpha_unassoc(path):
    rows = samples(2, 8)
    write_tiff(path, W, H, 8, 2, PHOTO_BLACK, tiff_pack(rows, 8), extra_tags=[(338, SHORT, [2])])


@variant("tiff-rgb16-unspecified-extra.tif")
def _rgbx16(path):
    rows = samples(4, 16)
    write_tiff(path, W, H, 16, 4, PHOTO_RGB, tiff_pack(rows, 16), extra_tags=[(338, SHORT, [0])], rows_per_strip=3)


@variant("tiff-palette2.tif")
def _palette2(path):
    _palette_tiff(path, 2)


@variant("tiff-rgb-alpha-unspecified.tif")
def _rgb_two_extra(path):
    rows = samples(5, 8)
    write_tiff(path, W, H, 8, 5, PHOTO_RGB, tiff_pack(rows, 8), extra_tags=[(338, SHORT, [2, 0])])


def _tiffcp_variant(name, base, options):
    """A variant re-encoded by libtiff's tiffcp from an uncompressed base file made by `base(path)`; the
    reference is the base's (the same pixels, whatever the compression, predictor or layout)."""
    def make(path):
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "base.tif")
            ref = base(src)
            subprocess.run([tool("TIFFCP", "tiffcp")] + options + [src, path], check=True)
            return ref
    variant(name)(make)


def _base_rgb8(path):
    _rgb_tiff(path, 8)


def _base_gray16(path):
    rows = _gray_tiff(path, 16)
    return {"reference": _gray_ref(rows, 16), "why": "16-bit gray keeps the high byte (Pillow clips I;16)"}


def _base_float_rgb(path):
    rows = _rgb_tiff(path, 32, "float")
    return {"reference": _rgb_ref(rows, 32, "float"), "why": "float samples clamped to 0...1"}


def _base_bilevel(path):
    rows = [[1 if ((x // 3) + (y // 2)) % 3 == 0 else 0 for x in range(W)] for y in range(H)]
    write_tiff(path, W, H, 1, 1, PHOTO_WHITE, tiff_pack(rows, 1))


def _base_cmyk16(path):
    rows = _rgb_tiff(path, 16, channels=4, photometric=PHOTO_SEPARATED)
    return {"reference": _cmyk_ref(rows, 16), "why": "16-bit CMYK (see tiff-cmyk16.tif)"}


_tiffcp_variant("tiff-rgb8-lzw-predictor2.tif", _base_rgb8, ["-c", "lzw:2"])
_tiffcp_variant("tiff-rgb8-deflate-tiled.tif", _base_rgb8, ["-c", "zip", "-t", "-w", "16", "-l", "16"])
_tiffcp_variant("tiff-rgb8-packbits-planar.tif", _base_rgb8, ["-c", "packbits", "-p", "separate"])
_tiffcp_variant("tiff-rgb8-jpeg-ycbcr.tif", _base_rgb8, ["-c", "jpeg:90", "-r", "16"])
_tiffcp_variant("tiff-gray16-deflate-predictor2.tif", _base_gray16, ["-c", "zip:2"])
_tiffcp_variant("tiff-rgb-float32-predictor3-tiled.tif", _base_float_rgb, ["-c", "zip:3", "-t", "-w", "16", "-l", "16"])
_tiffcp_variant("tiff-bilevel-g4.tif", _base_bilevel, ["-c", "g4"])
_tiffcp_variant("tiff-bilevel-fillorder2.tif", _base_bilevel, ["-f", "lsb2msb"])
_tiffcp_variant("tiff-cmyk16-lzw-tiled.tif", _base_cmyk16, ["-c", "lzw:2", "-t", "-w", "16", "-l", "16"])


def _base_cmyk8(path):
    _rgb_tiff(path, 8, channels=4, photometric=PHOTO_SEPARATED)


_tiffcp_variant("tiff-cmyk8-jpeg-tiled.tif", _base_cmyk8, ["-c", "jpeg:95", "-t", "-w", "16", "-l", "16"])


# JPEG ------------------------------------------------------------------------------------------------------

def _pattern_image(mode="RGB"):
    from PIL import Image
    im = Image.frombytes("RGB", (W * 2, H * 2), bytes(c for row in rgb_pattern(W * 2, H * 2) for px in row for c in px))
    return im.convert(mode)


def _cjpeg_variant(name, options, mode="RGB"):
    def make(path):
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "src.ppm" if mode == "RGB" else "src.pgm")
            _pattern_image(mode).save(src)
            with open(path, "wb") as out:
                subprocess.run([tool("CJPEG", "cjpeg")] + options + [src], check=True, stdout=out)
    variant(name)(make)


_cjpeg_variant("jpeg-411.jpg", ["-sample", "4x1", "-quality", "90"])
_cjpeg_variant("jpeg-440.jpg", ["-sample", "1x2", "-quality", "90"])
_cjpeg_variant("jpeg-rgb-adobe.jpg", ["-rgb", "-quality", "90"])
_cjpeg_variant("jpeg-restart-progressive.jpg", ["-restart", "1B", "-progressive", "-sample", "2x1"])
_cjpeg_variant("jpeg-arithmetic-gray.jpg", ["-arithmetic", "-grayscale"])


@variant("jpeg-cmyk-adobe.jpg")
def _jpeg_cmyk(path):
    _pattern_image("CMYK").save(path, "JPEG", quality=90)


YCCK_WRITER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <jpeglib.h>
/* ycck WIDTH HEIGHT < cmyk-bytes > out.jpg: an Adobe YCCK JPEG (transform 2) from inverted CMYK samples. */
int main(int argc, char **argv) {
    struct jpeg_compress_struct c; struct jpeg_error_mgr e;
    int w = atoi(argv[1]), h = atoi(argv[2]);
    unsigned char *px = malloc((size_t)w * h * 4);
    if (fread(px, 4, (size_t)w * h, stdin) != (size_t)w * h) return 1;
    c.err = jpeg_std_error(&e); jpeg_create_compress(&c); jpeg_stdio_dest(&c, stdout);
    c.image_width = w; c.image_height = h; c.input_components = 4; c.in_color_space = JCS_CMYK;
    jpeg_set_defaults(&c); jpeg_set_colorspace(&c, JCS_YCCK); jpeg_set_quality(&c, 92, TRUE);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) { JSAMPROW row = px + (size_t)c.next_scanline * w * 4; jpeg_write_scanlines(&c, &row, 1); }
    jpeg_finish_compress(&c); return 0;
}
"""


CMYK_PLAIN_WRITER = YCCK_WRITER.replace("jpeg_set_colorspace(&c, JCS_YCCK);",
                                         "jpeg_set_colorspace(&c, JCS_CMYK); c.write_Adobe_marker = FALSE;")


@variant("jpeg-cmyk-no-adobe-marker.jpg")
def _jpeg_cmyk_plain(path):
    # CMYK without an Adobe APP14 marker: samples as stored (0 = no ink), not Adobe-inverted.
    im = _pattern_image("CMYK")
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "cmyk.c"), os.path.join(tmp, "cmyk")
        open(src, "w").write(CMYK_PLAIN_WRITER)
        subprocess.run([os.environ.get("CC", "cc"), "-O1", "-o", exe, src, "-ljpeg"], check=True)
        with open(path, "wb") as out:
            subprocess.run([exe, str(im.width), str(im.height)], input=im.tobytes(), stdout=out, check=True)


@variant("jpeg-ycck-adobe.jpg")
def _jpeg_ycck(path):
    im = _pattern_image("CMYK")
    inverted = bytes(255 - b for b in im.tobytes())  # Adobe's convention: 255 = no ink
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "ycck.c"), os.path.join(tmp, "ycck")
        open(src, "w").write(YCCK_WRITER)
        subprocess.run([os.environ.get("CC", "cc"), "-O1", "-o", exe, src, "-ljpeg"], check=True)
        with open(path, "wb") as out:
            subprocess.run([exe, str(im.width), str(im.height)], input=inverted, stdout=out, check=True)


def lossless_jpeg(pixels, w, h, components):
    """A lossless JPEG (SOF3), predictor 1 (left), point transform 0, 8-bit, one Huffman table (the standard
    luminance DC table, which covers difference categories 0...11)."""
    bits = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
    vals = list(range(12))
    codes, code, k = {}, 0, 0
    for length in range(1, 17):
        for _ in range(bits[length - 1]):
            codes[vals[k]] = (code, length)
            code += 1
            k += 1
        code <<= 1
    out = bytearray(b"\xFF\xD8")
    out += b"\xFF\xC3" + struct.pack(">HBHHB", 8 + 3 * components, 8, h, w, components)
    for c in range(components):
        out += bytes([c + 1, 0x11, 0])
    out += b"\xFF\xC4" + struct.pack(">H", 2 + 1 + 16 + len(vals)) + b"\x00" + bytes(bits) + bytes(vals)
    out += b"\xFF\xDA" + struct.pack(">HB", 6 + 2 * components, components)
    for c in range(components):
        out += bytes([c + 1, 0x00])
    out += bytes([1, 0, 0])  # Ss = predictor 1, Se = 0, Ah/Al = 0
    acc, n, data = 0, 0, bytearray()

    def put(value, length):
        nonlocal acc, n
        acc = (acc << length) | value
        n += length
        while n >= 8:
            byte = (acc >> (n - 8)) & 0xFF
            data.append(byte)
            if byte == 0xFF:
                data.append(0)
            n -= 8
    for y in range(h):
        for x in range(w):
            for c in range(components):
                v = pixels[(y * w + x) * components + c]
                if x == 0 and y == 0:
                    pred = 128
                elif y == 0:
                    pred = pixels[(y * w + x - 1) * components + c]
                elif x == 0:
                    pred = pixels[((y - 1) * w + x) * components + c]
                else:
                    pred = pixels[(y * w + x - 1) * components + c]
                diff = ((v - pred + 32768) % 65536) - 32768
                size = 0 if diff == 0 else abs(diff).bit_length()
                code_, length = codes[size]
                put(code_, length)
                if size:
                    put(diff if diff > 0 else diff + (1 << size) - 1, size)
    if n:
        put((1 << (8 - n)) - 1, 8 - n)
    return bytes(out + data + b"\xFF\xD9")


@variant("jpeg-lossless-sof3.jpg")
def _jpeg_lossless(path):
    rows = rgb_pattern()
    flat = [c for row in rows for px in row for c in px]
    open(path, "wb").write(lossless_jpeg(flat, W, H, 3))
    return {"reference": rgba_bytes([[px + (255,) for px in row] for row in rows]), "lossless_jpeg": True,
            "why": "lossless: the written samples (libjpeg-turbo 3.0+ decodes SOF3; before 3.0 it is a typed "
                   "unsupported-feature error)"}


# WebP ------------------------------------------------------------------------------------------------------

def _webp_variant(name, **options):
    def make(path):
        from PIL import Image
        rgba = bytes(c for y, row in enumerate(rgb_pattern()) for x, px in enumerate(row)
                     for c in px + (alpha_pattern()[y][x],))
        im = Image.frombytes("RGBA", (W, H), rgba)
        settings = dict(options)
        if not settings.pop("alpha", True):
            im = im.convert("RGB")
        im.save(path, "WEBP", **settings)
    variant(name)(make)


_webp_variant("webp-lossy.webp", alpha=False, quality=80)
_webp_variant("webp-lossy-alpha.webp", quality=80, alpha_quality=100)
_webp_variant("webp-lossless-alpha-exact.webp", lossless=True, exact=True)
_webp_variant("webp-lossless.webp", alpha=False, lossless=True)


# MARK: - Main


def pillow_rgba(path):
    """(width, height, SHA-256 of Pillow's RGBA8 decode) or None when Pillow cannot decode the file."""
    from PIL import Image
    try:
        with Image.open(path) as im:
            im.load()
            rgba = im.convert("RGBA")
            return rgba.width, rgba.height, hashlib.sha256(rgba.tobytes()).hexdigest()
    except Exception as error:  # Pillow refusing a file is a result, not a failure of the script
        return None


def make():
    import PIL
    os.makedirs(OUT, exist_ok=True)
    for old in os.listdir(OUT):
        if old != "expected.json":
            os.remove(os.path.join(OUT, old))
    files = {}
    for name, maker in VARIANTS:
        path = os.path.join(OUT, name)
        info = maker(path) or {}
        pillow = pillow_rgba(path)
        entry = {"bytes": os.path.getsize(path)}
        entry["pillow_sha256_rgba"] = pillow[2] if pillow else None
        if "reference" in info:
            entry["reference"] = "generator"
            entry["why"] = info["why"]
            entry["sha256_rgba"] = hashlib.sha256(info["reference"]).hexdigest()
            entry["width"], entry["height"] = W, H
            assert len(info["reference"]) == W * H * 4, name
        else:
            assert pillow, f"{name}: Pillow cannot decode it and the generator gave no reference"
            entry["reference"] = "pillow"
            entry["width"], entry["height"], entry["sha256_rgba"] = pillow
        for flag in ("lab", "lossless_jpeg"):
            if info.get(flag):
                entry[flag] = True
        files[name] = entry
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump({"oracle": f"Pillow {PIL.__version__} (Image.open(...).convert('RGBA')) unless reference is "
                             "'generator' (see why)", "files": files}, f, indent=1, sort_keys=True)
        f.write("\n")
    total = sum(e["bytes"] for e in files.values())
    print(f"{len(files)} files, {total} bytes in {OUT}")


def compare():
    """Decodes every variant with imagedl (swift build first) and counts matches against Pillow and against
    the reference."""
    expected = json.load(open(os.path.join(OUT, "expected.json")))["files"]
    package = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
    imagedl = os.environ.get("IMAGEDL") or os.path.join(package, ".build", "debug", "imagedl")
    names = sorted(expected)
    with tempfile.TemporaryDirectory() as tmp:
        result = subprocess.run([imagedl, "decode", "--json", "--keep-color-profile", "--rgba", tmp]
                                + [os.path.join(OUT, n) for n in names], capture_output=True, text=True)
        reports = {}
        for line in result.stdout.splitlines():
            try:
                report = json.loads(line)
            except ValueError:
                continue
            reports[os.path.basename(report.get("file", ""))] = report
        pillow_ok = reference_ok = 0
        for name in names:
            e = expected[name]
            rgba_path = os.path.join(tmp, os.path.splitext(name)[0] + ".rgba")
            ours = None
            if os.path.exists(rgba_path):
                ours = hashlib.sha256(open(rgba_path, "rb").read()).hexdigest()
            report = reports.get(name, {})
            same_pillow = ours is not None and ours == e["pillow_sha256_rgba"]
            same_ref = ours is not None and ours == e["sha256_rgba"]
            pillow_ok += same_pillow
            reference_ok += same_ref
            if not same_ref:
                print(f"DIFF {name}: {report.get('error') or 'pixels differ'}"
                      f"{' (matches Pillow)' if same_pillow else ''}")
        print(f"{len(names)} files: {pillow_ok} match Pillow, {reference_ok} match the reference")


if __name__ == "__main__":
    compare() if sys.argv[1:] == ["compare"] else make()
