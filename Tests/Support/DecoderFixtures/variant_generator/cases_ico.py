"""ICO and CUR variants: DIB entries of every depth with AND masks, PNG entries, V5 entries with profiles."""
import hashlib, io, json, os, shutil, struct, subprocess, sys, tempfile, zlib

from .writers import *
from .registry import *
from .cases_bmp import _bmp_palette, _srgb_like_profile

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


@variant("ico-same-size-two-depths.ico")
def _ico_two_depths(path):
    # Two 19x13 entries, the 8-bit one listed first: the deeper (32-bit) entry is the one shown.
    low, _ = _icon_dib(8)
    high, ref = _icon_dib(32)
    open(path, "wb").write(ico_file([(W, H, 1, 8, low), (W, H, 1, 32, high)]))
    return {"reference": ref, "why": "of same-size entries the deepest is shown (Windows, Chromium, Firefox); Pillow "
                                     "shows the first one listed"}


@variant("cur-two-sizes.cur")
def _cur_two_sizes(path):
    # A 16x16 and a 19x13 (larger) 1-bit cursor: the larger one is shown.
    small, _ = _icon_dib(1, w=16, h=16)
    large, _ = _icon_dib(1)
    open(path, "wb").write(ico_file([(16, 16, 1, 1, small), (W, H, 2, 3, large)], kind=2))


# The directory's stated length is not used (issue 41, point 6): Pillow and Chromium read an entry from its offset,
# and writers get the length wrong (too small, zero, past the end of the file).
def _ico_stated_length(entry_payload, stated):
    return struct.pack("<HHH", 0, 1, 1) + struct.pack("<BBBBHHII", W, H, 0, 0, 1, 32, stated, 22) + entry_payload


@variant("ico-dib32-stated-length-too-small.ico")
def _ico_short_length(path):
    payload, ref = _icon_dib(32)
    open(path, "wb").write(_ico_stated_length(payload, 40))


@variant("ico-dib8-stated-length-past-end.ico")
def _ico_long_length(path):
    payload, ref = _icon_dib(8)
    open(path, "wb").write(_ico_stated_length(payload, len(payload) + 4096))
    return {"reference": ref, "why": "AND mask as alpha (Windows and browsers); Pillow applies it too"}


@variant("ico-png-stated-length-zero.ico")
def _ico_png_zero_length(path):
    from PIL import Image
    im = Image.frombytes("RGBA", (W, H), bytes(c for y, row in enumerate(rgb_pattern())
                                                for x, px in enumerate(row) for c in px + (alpha_pattern()[y][x],)))
    buf = io.BytesIO()
    im.save(buf, "PNG")
    open(path, "wb").write(_ico_stated_length(buf.getvalue(), 0))


# 1-bit cursors whose palette is not black and white (issue 41, point 6): the AND mask still makes the masked pixels
# transparent (Windows, browsers); Pillow masks only 1-bit cursors it reads as black and white ("1" mode) and shows
# these opaque, mask ignored.
for _palette, _name in (([(255, 255, 255), (0, 0, 0)], "white-black"), ([(0, 0, 255), (255, 255, 0)], "blue-yellow")):
    def _make(path, palette=_palette):
        payload, ref = _icon_dib(1)
        patched = bytearray(payload)
        patched[40:48] = bytes(c for r, g, b in palette for c in (b, g, r, 0))
        open(path, "wb").write(ico_file([(W, H, 3, 4, bytes(patched))], kind=2))
        black_white = [(0, 0, 0), (255, 255, 255)]
        out = bytearray()
        for i in range(0, len(ref), 4):
            r, g, b, a = ref[i:i + 4]
            colour = palette[black_white.index((r, g, b))] if a else (0, 0, 0)
            out += bytes(colour) + bytes([a])
        return {"reference": bytes(out),
                "why": "a 1-bit cursor's AND mask makes its masked pixels transparent black whatever its palette "
                       "(Windows, browsers); Pillow shows a cursor whose palette is not black and white opaque, "
                       "without its mask"}
    variant(f"cur-dib1-palette-{_name}.cur")(_make)
