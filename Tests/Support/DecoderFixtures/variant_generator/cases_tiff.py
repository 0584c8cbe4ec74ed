"""TIFF variants: depths 2-64 bits, signed/float/CMYK/Lab/palette, alpha kinds, tiffcp re-encodings."""
import hashlib, io, json, os, shutil, struct, subprocess, sys, tempfile, zlib

from .writers import *
from .registry import *

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
                   (24, True), (32, False), (64, True)):
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

for _bits, _fmt, _be in ((8, "int", False), (16, "int", False), (32, "int", True), (64, "int", False), (16, "float", False),
                         (32, "float", False), (32, "float", True), (64, "float", False)):
    def _make(path, bits=_bits, fmt=_fmt, be=_be):
        rows = _gray_tiff(path, bits, fmt, big_endian=be)
        return {"reference": _gray_ref(rows, bits, fmt),
                "why": "signed samples read as their unsigned bits, top 8 bits (libtiff's RGBA interface, and Pillow at "
                       "8 bits; Pillow clips wider ones in its I mode)" if fmt == "int" else
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


def _base_int16(path):
    rows = _gray_tiff(path, 16, "int", big_endian=True)
    return {"reference": _gray_ref(rows, 16, "int"), "why": "signed samples (see tiff-gray-int16.tif)"}


def _base_half_rgb(path):
    rows = _rgb_tiff(path, 16, "float", planar=2)  # tiffcp re-plans only 8-bit samples: planar from the start
    return {"reference": _rgb_ref(rows, 16, "float"), "why": "half-float samples clamped to 0...1"}


def _base_cmyk_alpha16(path):
    rows = _rgb_tiff(path, 16, channels=5, extra=[2], photometric=PHOTO_SEPARATED, planar=2)
    return {"reference": _cmyk_ref(rows, 16, 5, alpha=True), "why": "16-bit CMYK + unassociated alpha, straight"}


def _base_rgb12(path):
    rows = _rgb_tiff(path, 12)
    return {"reference": _rgb_ref(rows, 12), "why": "12-bit samples: the top 8 bits"}


# Layouts the sample reader must get right whatever libtiff decoded them from: tiles, planes, predictors on
# signed and half-float samples, big-endian sources, alpha after four inks.
_tiffcp_variant("tiff-gray-int16-be-deflate-predictor2-tiled.tif", _base_int16, ["-c", "zip:2", "-t", "-w", "16", "-l", "16"])
_tiffcp_variant("tiff-rgb-float16-lzw-predictor3-planar.tif", _base_half_rgb, ["-c", "lzw:3"])
_tiffcp_variant("tiff-cmyk16-alpha-planar-deflate.tif", _base_cmyk_alpha16, ["-c", "zip"])
# tiffcp re-tiles planar data correctly only at 8 bits (it garbles 16-bit planar tiles): tiled planar CMYK at 8 bits.
_tiffcp_variant("tiff-cmyk8-planar-tiled-lzw.tif", _base_cmyk8, ["-p", "separate", "-t", "-w", "16", "-l", "16", "-c", "lzw:2"])
_tiffcp_variant("tiff-rgb-uint12-packbits-tiled.tif", _base_rgb12, ["-c", "packbits", "-t", "-w", "16", "-l", "16"])


@variant("tiff-cmyk8-icc.tif")
def _cmyk_icc(path):
    # CMYK with the colour fixtures' CMYK profile ("Test press CMYK", a CLUT profile): unmanaged, the naive formula
    # (Pillow's); managed, lcms2 through the profile, which `managed` records as Pillow's ImageCms gives it.
    from PIL import Image, ImageCms
    profile = Image.open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                      "color_cmyk.jpg")).info["icc_profile"]
    rows = samples(4, 8)
    write_tiff(path, W, H, 8, 4, PHOTO_SEPARATED, tiff_pack(rows, 8), extra_tags=[(34675, UNDEFINED, profile)])
    cmyk = Image.frombytes("CMYK", (W, H), bytes(v for row in rows for v in row))
    srgb = ImageCms.profileToProfile(cmyk, ImageCms.ImageCmsProfile(io.BytesIO(profile)),
                                     ImageCms.createProfile("sRGB"), renderingIntent=0, outputMode="RGB")
    return {"managed": srgb.convert("RGBA").tobytes()}


# Extra samples: the alpha is the first one marked as alpha, wherever it is (issue 41, point 6).
def _extra_alpha_tiff(path, planar, spp, extra, bits=8, photometric=PHOTO_RGB):
    colors = 1 if photometric == PHOTO_BLACK else 3
    rows = samples(spp, bits)
    tags = [(338, SHORT, extra)]
    if planar == 2:
        planes = [[[row[x * spp + c] for x in range(W)] for row in rows] for c in range(spp)]
        data = b"".join(tiff_pack(p, bits) for p in planes)
    else:
        data = tiff_pack(rows, bits)
    write_tiff(path, W, H, bits, spp, photometric, data, extra_tags=tags, rows_per_strip=4, planar=planar)
    alpha_sample = colors + next(i for i, e in enumerate(extra) if e in (1, 2))
    out = bytearray()
    for row in rows:
        for x in range(W):
            px = row[x * spp:(x + 1) * spp]
            rgb = [to8(v, bits) for v in px[:colors]] * (3 if colors == 1 else 1)
            out += bytes(rgb + [to8(px[alpha_sample], bits)])
    return out


for _planar, _spp, _extra, _bits, _photo, _name in (
        (2, 5, [0, 2], 8, PHOTO_RGB, "rgb8-planar-extra-then-alpha"),
        (1, 5, [0, 2], 8, PHOTO_RGB, "rgb8-extra-then-alpha"),
        (2, 5, [0, 2], 16, PHOTO_RGB, "rgb16-planar-extra-then-alpha"),
        (2, 3, [0, 2], 8, PHOTO_BLACK, "gray8-planar-extra-then-alpha")):
    def _make(path, planar=_planar, spp=_spp, extra=_extra, bits=_bits, photo=_photo):
        return {"reference": bytes(_extra_alpha_tiff(path, planar, spp, extra, bits, photo)),
                "why": "the alpha is the first extra sample marked as alpha (TIFF 6.0, ExtraSamples), here the second; "
                       "libtiff's RGBA interface reads only the first extra sample (and takes an unspecified one as "
                       "associated alpha), Pillow cannot open the file"}
    variant(f"tiff-{_name}.tif")(_make)


@variant("tiff-gray-alpha8-planar.tif")
def _gray_alpha_planar(path):
    rows = samples(2, 8)
    planes = [[[row[x * 2 + c] for x in range(W)] for row in rows] for c in range(2)]
    write_tiff(path, W, H, 8, 2, PHOTO_BLACK, b"".join(tiff_pack(p, 8) for p in planes),
               extra_tags=[(338, SHORT, [2])], rows_per_strip=4, planar=2)
    return {"reference": bytes(c for row in rows for x in range(W) for c in [row[2 * x]] * 3 + [row[2 * x + 1]]),
            "why": "planar gray + unassociated alpha, kept straight (Pillow cannot open it; libtiff premultiplies, "
                   "one level off after un-premultiplying)"}
