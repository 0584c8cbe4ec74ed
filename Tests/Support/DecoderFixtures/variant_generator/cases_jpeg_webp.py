"""JPEG variants (subsampling, Adobe RGB/CMYK/YCCK, arithmetic, restart, lossless) and WebP variants."""
import hashlib, io, json, os, shutil, struct, subprocess, sys, tempfile, zlib

from .writers import *
from .registry import *

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
    return {"reference": rgba_bytes([[px + (255,) for px in row] for row in rows]),
            "why": "lossless: the written samples (libjpeg-turbo 3.0+ decodes SOF3, and the package's own decoder "
                   "where the linked libjpeg is older)"}


# Lossless JPEG of every kind libjpeg-turbo 3.0 writes or reads (issue 41, point 6: Debian's libjpeg-turbo 2.1.5
# refuses them all; the package decodes SOF3 itself).
_LL_BITS = [0, 1, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0]  # 17 symbols (SSSS 0...16), no all-ones code


def lossless_jpeg_general(planes, w, h, precision=8, predictor=1, pt=0, restart=0, interleaved=True, app=b""):
    """A lossless JPEG (SOF3) of `planes` (one list of w*h samples per component, already < 2^precision and
    with their low `pt` bits zero), any predictor 1-7, point transform, restart interval (in MCUs) and
    interleaved or one scan per component; `app` goes after SOI (a JFIF or Adobe segment)."""
    vals = list(range(17))
    codes, code, k = {}, 0, 0
    for length in range(1, 17):
        for _ in range(_LL_BITS[length - 1]):
            codes[vals[k]] = (code, length)
            code += 1
            k += 1
        code <<= 1
    n_comp = len(planes)
    out = bytearray(b"\xFF\xD8") + app
    out += b"\xFF\xC3" + struct.pack(">HBHHB", 8 + 3 * n_comp, precision, h, w, n_comp)
    for c in range(n_comp):
        out += bytes([c + 1, 0x11, 0])
    out += b"\xFF\xC4" + struct.pack(">H", 2 + 1 + 16 + len(vals)) + b"\x00" + bytes(_LL_BITS) + bytes(vals)
    if restart:
        out += b"\xFF\xDD" + struct.pack(">HH", 4, restart)
    scans = [list(range(n_comp))] if interleaved else [[c] for c in range(n_comp)]
    shifted = [[v >> pt for v in plane] for plane in planes]
    for comps in scans:
        out += b"\xFF\xDA" + struct.pack(">HB", 6 + 2 * len(comps), len(comps))
        for c in comps:
            out += bytes([c + 1, 0x00])
        out += bytes([predictor, 0, pt])
        state = {"acc": 0, "n": 0}
        data = bytearray()

        def put(value, length):
            state["acc"] = (state["acc"] << length) | value
            state["n"] += length
            while state["n"] >= 8:
                byte = (state["acc"] >> (state["n"] - 8)) & 0xFF
                data.append(byte)
                if byte == 0xFF:
                    data.append(0)
                state["n"] -= 8
            state["acc"] &= (1 << state["n"]) - 1

        def flush():
            if state["n"]:
                put((1 << (8 - state["n"])) - 1, 8 - state["n"])

        mcus, rst, start = 0, 0, (0, 0)
        for y in range(h):
            for x in range(w):
                if restart and mcus and mcus % restart == 0:
                    flush()
                    data += bytes([0xFF, 0xD0 + rst % 8])
                    rst += 1
                    start = (x, y)
                for c in comps:
                    p = shifted[c]
                    if y == start[1]:
                        pred = (1 << (precision - pt - 1)) if x == start[0] else p[y * w + x - 1]
                    elif x == 0:
                        pred = p[(y - 1) * w]
                    else:
                        a, b, cc = p[y * w + x - 1], p[(y - 1) * w + x], p[(y - 1) * w + x - 1]
                        pred = [None, a, b, cc, a + b - cc, a + ((b - cc) >> 1), b + ((a - cc) >> 1), (a + b) >> 1][predictor]
                    diff = ((p[y * w + x] - pred + 32768) % 65536) - 32768
                    size = 0 if diff == 0 else (16 if diff == -32768 else abs(diff).bit_length())
                    code_, length = codes[size]
                    put(code_, length)
                    if size and size < 16:
                        put(diff if diff > 0 else diff + (1 << size) - 1, size)
                mcus += 1
        flush()
        out += data
    return bytes(out + b"\xFF\xD9")


def _ll_plane(w, h, precision, pt, salt):
    top = (1 << precision) - 1
    plane = []
    for y in range(h):
        for x in range(w):
            v = ((x * (37 + salt) + y * (23 + 3 * salt) + salt * 50) % 256) * top // 255
            v ^= (x * 7 + y * 13 + salt) % max(1, (top + 1) // 256)  # low bits that differ from the high ones
            plane.append((v >> pt) << pt)
    return plane


def _ll_reference(planes, precision, ycbcr=False):
    def to8(v):
        if precision == 8:
            return v
        if precision > 8:
            return v >> (precision - 8)
        m = (1 << precision) - 1
        return (v * 255 + m // 2) // m
    out = bytearray()
    for i in range(len(planes[0])):
        if len(planes) == 1:
            g = to8(planes[0][i])
            out += bytes([g, g, g, 255])
        else:
            out += bytes([to8(p[i]) for p in planes] + [255])
    return bytes(out)


for _name, _comps, _prec, _pred, _pt, _restart, _inter in (
        ("gray8-predictor2", 1, 8, 2, 0, 0, True), ("gray8-predictor3", 1, 8, 3, 0, 0, True),
        ("gray8-predictor4", 1, 8, 4, 0, 0, True), ("gray8-predictor5", 1, 8, 5, 0, 0, True),
        ("gray8-predictor6", 1, 8, 6, 0, 0, True), ("rgb8-predictor7-restart", 3, 8, 7, 0, 2 * W, True),
        ("rgb8-predictor4-scan-per-component", 3, 8, 4, 0, 0, False), ("gray8-point-transform2", 1, 8, 1, 2, 0, True),
        ("gray12", 1, 12, 6, 0, 0, True), ("rgb16-predictor5", 3, 16, 5, 0, W, True), ("gray4", 1, 4, 1, 0, 0, True)):
    def _make(path, comps=_comps, prec=_prec, pred=_pred, pt=_pt, restart=_restart, inter=_inter):
        planes = [_ll_plane(W, H, prec, pt, c) for c in range(comps)]
        open(path, "wb").write(lossless_jpeg_general(planes, W, H, prec, pred, pt, restart, inter))
        return {"reference": _ll_reference(planes, prec),
                "why": "lossless: the written samples" + (" (8-bit: Pillow's libjpeg-turbo 3 gives the same)" if prec == 8 else
                       f", {prec}-bit samples to 8 bits as every format here ({'top 8 bits' if prec > 8 else 'scaled'}); "
                       "Pillow decodes 8-bit lossless only")}
    variant(f"jpeg-lossless-{_name}.jpg")(_make)


@variant("jpeg-lossless-ycbcr-jfif.jpg")
def _jpeg_lossless_jfif(path):
    # A JFIF marker makes three components YCbCr for libjpeg, even lossless: Pillow (libjpeg-turbo 3) converts them.
    planes = [_ll_plane(W, H, 8, 0, c) for c in range(3)]
    jfif = b"\xFF\xE0" + struct.pack(">H", 16) + b"JFIF\0" + bytes([1, 1, 0, 0, 1, 0, 1, 0, 0])
    open(path, "wb").write(lossless_jpeg_general(planes, W, H, app=jfif))

    def fix(x):
        return int(x * 65536 + 0.5)

    def clamp(v):
        return min(max(v, 0), 255)
    out = bytearray()
    for y, cb, cr in zip(*planes):
        r = y + ((fix(1.40200) * (cr - 128) + 32768) >> 16)
        g = y + ((-fix(0.34414) * (cb - 128) + 32768 - fix(0.71414) * (cr - 128)) >> 16)
        b = y + ((fix(1.77200) * (cb - 128) + 32768) >> 16)
        out += bytes([clamp(r), clamp(g), clamp(b), 255])
    return {"reference": bytes(out),
            "why": "YCbCr (the JFIF marker says so) converted to RGB with libjpeg's integer formula; libjpeg-turbo 3.0, "
                   "and so Pillow, refuses colour conversion in lossless mode"}


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
