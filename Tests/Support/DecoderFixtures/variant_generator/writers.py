"""Test patterns and the small file writers (PNG, BMP/DIB, ICO/CUR, TIFF) the variants are made with."""
import hashlib, io, json, os, shutil, struct, subprocess, sys, tempfile, zlib

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
        elif bits in (8, 16, 32, 64) and fmt in ("uint", "int"):
            code = {8: "B", 16: "H", 32: "I", 64: "Q"}[bits]
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
