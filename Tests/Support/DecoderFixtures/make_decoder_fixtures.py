#!/usr/bin/env python3
"""Writes the TIFF and CUR fixtures of Tests/Support/DecoderFixtures (issue 12 point 11) and their Pillow
reference hashes (SHA-256 of Pillow's RGBA8 decode) into expected.json.

The TIFFs are written by the small writer below, not by a library, so that each carries exactly the
layout that tripped the decoder (tile byte counts larger than the tile, BigTIFF, an unspecified extra
sample, 16-bit planar RGBA, tiled 1-bit gray). Pillow (pip install Pillow) is the oracle.

    python3 Tests/Support/DecoderFixtures/make_decoder_fixtures.py
"""
import hashlib, json, os, struct, sys, zlib

HERE = os.path.dirname(os.path.abspath(__file__))

# TIFF field types
SHORT, LONG, LONG8 = 3, 4, 16


def write_tiff(path, width, height, bits, spp, photometric, *, planes, tile=None, rows_per_strip=None,
               extra=None, bigtiff=False, pad=0, big_endian=False, deflate=False):
    """planes: list (one per plane: 1 for contig, spp for separate) of lists of segment payloads
    (one per strip/tile, already packed). pad: extra zero bytes after each segment, counted in its byte count."""
    e = ">" if big_endian else "<"
    segments = [zlib.compress(seg) if deflate else seg for plane in planes for seg in plane]
    entries = []  # (tag, type, values)
    entries.append((256, LONG, [width]))
    entries.append((257, LONG, [height]))
    entries.append((258, SHORT, [bits] * spp))
    entries.append((259, SHORT, [8 if deflate else 1]))
    entries.append((262, SHORT, [photometric]))
    entries.append((277, SHORT, [spp]))
    entries.append((284, SHORT, [1 if len(planes) == 1 else 2]))
    if extra is not None:
        entries.append((338, SHORT, extra))
    off_type = LONG8 if bigtiff else LONG
    if tile:
        entries.append((322, LONG, [tile[0]]))
        entries.append((323, LONG, [tile[1]]))
        entries.append((324, off_type, [0] * len(segments)))
        entries.append((325, off_type, [len(s) + pad for s in segments]))
    else:
        entries.append((273, off_type, [0] * len(segments)))
        entries.append((278, LONG, [rows_per_strip or height]))
        entries.append((279, off_type, [len(s) + pad for s in segments]))
    entries.sort()
    size_of = {SHORT: 2, LONG: 4, LONG8: 8}
    fmt_of = {SHORT: "H", LONG: "I", LONG8: "Q"}
    inline = 8 if bigtiff else 4
    entry_size = 20 if bigtiff else 12
    header_size = 16 if bigtiff else 8
    count_size = 8 if bigtiff else 2
    ifd_size = count_size + len(entries) * entry_size + (8 if bigtiff else 4)
    # Layout: header, IFD, out-of-line values, pixel data.
    cursor = header_size + ifd_size
    outside = {}
    for tag, typ, values in entries:
        n = len(values) * size_of[typ]
        if n > inline:
            outside[tag] = cursor
            cursor += n + (n & 1)
    data_start = cursor
    offsets = []
    for s in segments:
        offsets.append(cursor)
        cursor += len(s) + pad
    entries = [(t, ty, offsets if t in (273, 324) else v) for t, ty, v in entries]
    out = bytearray()
    if bigtiff:
        out += (b"MM" if big_endian else b"II") + struct.pack(e + "HHHQ", 43, 8, 0, header_size)
        out += struct.pack(e + "Q", len(entries))
    else:
        out += (b"MM" if big_endian else b"II") + struct.pack(e + "HI", 42, header_size)
        out += struct.pack(e + "H", len(entries))
    blobs = bytearray()
    for tag, typ, values in entries:
        payload = struct.pack(e + fmt_of[typ] * len(values), *values)
        if tag in outside:
            field = struct.pack(e + ("Q" if bigtiff else "I"), outside[tag])
            blobs += payload + (b"\0" if len(payload) & 1 else b"")
        else:
            field = payload + b"\0" * (inline - len(payload))
        out += struct.pack(e + ("HHQ" if bigtiff else "HHI"), tag, typ, len(values)) + field
    out += b"\0" * (8 if bigtiff else 4)
    out += blobs
    assert len(out) == data_start, (len(out), data_start)
    for s in segments:
        out += s + b"\0" * pad
    with open(path, "wb") as f:
        f.write(out)


def pattern(width, height, channels, maximum=255, seed=0):
    """A smooth, non-symmetric test pattern: rows of per-channel samples."""
    rows = []
    for y in range(height):
        row = []
        for x in range(width):
            for c in range(channels):
                v = (x * (37 + 11 * c) + y * (23 + 7 * c) + seed * 91 + c * 50) % 256
                row.append(v * maximum // 255)
        rows.append(row)
    return rows


def tiles_of(rows, width, height, channels, tile, pack):
    tw, th = tile
    out = []
    for ty in range(0, height, th):
        for tx in range(0, width, tw):
            seg = bytearray()
            for y in range(ty, ty + th):
                samples = []
                for x in range(tx, tx + tw):
                    if y < height and x < width:
                        samples += rows[y][x * channels:(x + 1) * channels]
                    else:
                        samples += [0] * channels
                seg += pack(samples)
            out.append(bytes(seg))
    return out


def u8(samples):
    return bytes(samples)


def u16le(samples):
    return struct.pack("<%dH" % len(samples), *samples)


def bits1(samples):
    out = bytearray((len(samples) + 7) // 8)
    for i, s in enumerate(samples):
        if s:
            out[i // 8] |= 0x80 >> (i % 8)
    return bytes(out)


truth = {}


def make():
    made = {}
    w, h = 37, 23
    # 1. Tiled, uncompressed RGB with tiles under 1 KB: libtiff's unmapped reader ("rm") loads more bytes
    #    than the tile holds into its rounded-up read buffer and then rejects the tile ("Invalid tile byte count").
    rgb = pattern(w, h, 3)
    write_tiff(os.path.join(HERE, "tiled_rgb8.tif"), w, h, 8, 3, 2,
               planes=[tiles_of(rgb, w, h, 3, (16, 16), u8)], tile=(16, 16))
    made["tiled_rgb8.tif"] = "tiled 16x16 uncompressed RGB8 (768-byte tiles)"
    # 2. BigTIFF (magic 43), strips, RGB8.
    write_tiff(os.path.join(HERE, "bigtiff_rgb8.tif"), w, h, 8, 3, 2,
               planes=[[u8([v for row in rgb for v in row])]], bigtiff=True)
    made["bigtiff_rgb8.tif"] = "BigTIFF (version 43), one strip, RGB8"
    # 3. RGB with an unspecified extra sample (ExtraSamples = 0), values near zero: opaque, not alpha.
    rgbx = [[v if (i % 4) != 3 else 1 for i, v in enumerate(row)] for row in pattern(w, h, 4)]
    write_tiff(os.path.join(HERE, "rgb_unspecified_extra.tif"), w, h, 8, 4, 2,
               planes=[[u8([v for row in rgbx for v in row])]], extra=[0])
    made["rgb_unspecified_extra.tif"] = "RGB8 + one extra sample of kind 0 (unspecified), every extra value 1"
    # 4. 16-bit planar RGBA (unassociated alpha), one Deflate strip per plane. Low bytes vary independently
    #    of the high bytes, so rounding (libtiff's RGBA interface) and truncation (Pillow) differ. Deflate,
    #    because Pillow 12 misreads UNCOMPRESSED 16-bit planar files (raw mode "R", one byte per sample).
    rgba16 = [[v * 256 + (i * 7 + y * 13) % 256 for i, v in enumerate(row)] for y, row in enumerate(pattern(w, h, 4, seed=3))]
    planes = []
    for c in range(4):
        planes.append([u16le([row[x * 4 + c] for row in rgba16 for x in range(w)])])
    write_tiff(os.path.join(HERE, "planar_rgba16.tif"), w, h, 16, 4, 2, planes=planes, extra=[2], deflate=True)
    made["planar_rgba16.tif"] = "16-bit RGBA, PlanarConfiguration 2 (separate), unassociated alpha, Deflate"
    # 4b. Tiled 16-bit gray + associated alpha, Deflate.
    ga16 = [[v * 256 + (i * 5 + y) % 256 for i, v in enumerate(row)] for y, row in enumerate(pattern(w, h, 2, seed=5))]
    write_tiff(os.path.join(HERE, "tiled_gray16_alpha.tif"), w, h, 16, 2, 1,
               planes=[tiles_of(ga16, w, h, 2, (16, 16), u16le)], tile=(16, 16), extra=[2], deflate=True)
    made["tiled_gray16_alpha.tif"] = "tiled 16x16 16-bit gray + unassociated alpha, Deflate"
    # Pillow cannot open 16-bit gray + alpha: the reference is the written samples' high bytes.
    truth["tiled_gray16_alpha.tif"] = bytes(b for row in ga16 for x in range(w)
                                            for b in (row[2 * x] >> 8,) * 3 + (row[2 * x + 1] >> 8,))
    # 5. Tiled 1-bit gray (min-is-black).
    gray1 = [[1 if ((x // 3) + (y // 2)) % 3 == 0 or x == y else 0 for x in range(w)] for y in range(h)]
    tiles = []
    for ty in range(0, h, 16):
        for tx in range(0, w, 16):
            seg = bytearray()
            for y in range(ty, ty + 16):
                seg += bits1([gray1[y][x] if y < h and x < w else 0 for x in range(tx, tx + 16)])
            tiles.append(bytes(seg))
    write_tiff(os.path.join(HERE, "tiled_gray1.tif"), w, h, 1, 1, 1, planes=[tiles], tile=(16, 16))
    made["tiled_gray1.tif"] = "tiled 16x16 1-bit gray, min-is-black, uncompressed"
    # 6. A Windows cursor (ICO type 2): 32x32 32-bit DIB with hotspot (5, 7) in the planes/bitcount fields.
    cw = ch = 32
    dib = bytearray(struct.pack("<IiiHHIIiiII", 40, cw, ch * 2, 1, 32, 0, 0, 0, 0, 0, 0))
    for y in reversed(range(ch)):  # bottom-up BGRA
        for x in range(cw):
            a = 255 if (x - 16) ** 2 + (y - 16) ** 2 < 150 else 0
            dib += bytes([(x * 8) & 255, (y * 8) & 255, 200, a])
    dib += b"\0" * (ch * 4)  # AND mask, 32 bits per row
    cur = struct.pack("<HHH", 0, 2, 1) + struct.pack("<BBBBHHII", cw, ch, 0, 0, 5, 7, len(dib), 22) + dib
    open(os.path.join(HERE, "cursor.cur"), "wb").write(cur)
    made["cursor.cur"] = "CUR (ICONDIR type 2), one 32x32 32-bit BGRA DIB entry, hotspot (5, 7)"
    return made


def main():
    from PIL import Image
    made = make()
    expected = {}
    for name, what in sorted(made.items()):
        if name in truth:
            expected[name] = {"what": what, "width": 37, "height": 23, "reference": "generator (16-bit high bytes)",
                              "sha256_rgba": hashlib.sha256(truth[name]).hexdigest()}
            continue
        im = Image.open(os.path.join(HERE, name))
        im.load()
        rgba = im.convert("RGBA")
        expected[name] = {"what": what, "width": rgba.width, "height": rgba.height, "pillow_mode": im.mode,
                          "reference": "pillow", "sha256_rgba": hashlib.sha256(rgba.tobytes()).hexdigest()}
    import PIL
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump({"oracle": "Pillow %s, Image.open(...).convert('RGBA')" % PIL.__version__, "files": expected}, f,
                  indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps(expected, indent=1))


if __name__ == "__main__":
    main()
