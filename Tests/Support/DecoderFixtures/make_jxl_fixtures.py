#!/usr/bin/env python3
"""Writes the committed JPEG XL fixtures of jxl/ (see README.md there):

- layer-larger-than-canvas.jxl: an 8x8 image whose one frame is a 100x100 layer at (-46, -46): libjxl crops it to
  the canvas when compositing, but allocates it whole first (the shape of a "frame bomb"). Written through
  libjxl's own encoder API (ctypes), since cjxl never writes a layer larger than its canvas.
- flat-1024.jxl: 1024x1024 of one colour, a few bytes: large enough to exceed a small decode budget.
- animation-3-loops.jxl: 48x32, three frames of 100, 40 and 10 ms, 3 loops (cjxl 0.7 drops loop counts).
- still-lossy.jxl, animation.jxl, progressive.jxl, recompressed-jpeg.jxl: small files made by cjxl, seeds of the
  fuzz target `jxl` and inputs of the tests that run without libjxl-tools.

Needs libjxl (libjxl.so.0.7 or later) and cjxl. Run from anywhere: python3 make_jxl_fixtures.py
"""
import ctypes
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "jxl")


class PixelFormat(ctypes.Structure):
    _fields_ = [("num_channels", ctypes.c_uint32), ("data_type", ctypes.c_int), ("endianness", ctypes.c_int),
                ("align", ctypes.c_size_t)]


class BasicInfo(ctypes.Structure):
    _fields_ = [("have_container", ctypes.c_int), ("xsize", ctypes.c_uint32), ("ysize", ctypes.c_uint32),
                ("bits_per_sample", ctypes.c_uint32), ("exponent_bits_per_sample", ctypes.c_uint32),
                ("intensity_target", ctypes.c_float), ("min_nits", ctypes.c_float),
                ("relative_to_max_display", ctypes.c_int), ("linear_below", ctypes.c_float),
                ("uses_original_profile", ctypes.c_int), ("have_preview", ctypes.c_int),
                ("have_animation", ctypes.c_int), ("orientation", ctypes.c_int),
                ("num_color_channels", ctypes.c_uint32), ("num_extra_channels", ctypes.c_uint32),
                ("alpha_bits", ctypes.c_uint32), ("alpha_exponent_bits", ctypes.c_uint32),
                ("alpha_premultiplied", ctypes.c_int), ("preview", ctypes.c_uint32 * 2),
                ("animation", ctypes.c_uint32 * 4), ("intrinsic_xsize", ctypes.c_uint32),
                ("intrinsic_ysize", ctypes.c_uint32), ("padding", ctypes.c_uint8 * 100)]


class BlendInfo(ctypes.Structure):
    _fields_ = [("blendmode", ctypes.c_int), ("source", ctypes.c_uint32), ("alpha", ctypes.c_uint32),
                ("clamp", ctypes.c_int)]


class LayerInfo(ctypes.Structure):
    _fields_ = [("have_crop", ctypes.c_int), ("crop_x0", ctypes.c_int32), ("crop_y0", ctypes.c_int32),
                ("xsize", ctypes.c_uint32), ("ysize", ctypes.c_uint32), ("blend_info", BlendInfo),
                ("save_as_reference", ctypes.c_uint32)]


class FrameHeader(ctypes.Structure):
    _fields_ = [("duration", ctypes.c_uint32), ("timecode", ctypes.c_uint32), ("name_length", ctypes.c_uint32),
                ("is_last", ctypes.c_int), ("layer_info", LayerInfo)]


class ColorEncoding(ctypes.Structure):
    _fields_ = [("color_space", ctypes.c_int), ("white_point", ctypes.c_int), ("white_point_xy", ctypes.c_double * 2),
                ("primaries", ctypes.c_int), ("primaries_red_xy", ctypes.c_double * 2),
                ("primaries_green_xy", ctypes.c_double * 2), ("primaries_blue_xy", ctypes.c_double * 2),
                ("transfer_function", ctypes.c_int), ("gamma", ctypes.c_double), ("rendering_intent", ctypes.c_int)]


def load_libjxl():
    for name in ("libjxl.so.0.11", "libjxl.so.0.10", "libjxl.so.0.9", "libjxl.so.0.8", "libjxl.so.0.7"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    sys.exit("libjxl not found (apt-get install libjxl0.7)")


def encode(lib, width, height, frames, animation=None):
    """A lossless RGB8 codestream: `frames` is a list of (FrameHeader setter, RGB bytes); `animation` is
    (ticks per second, loops) or None for a still image."""
    lib.JxlEncoderCreate.restype = ctypes.c_void_p
    lib.JxlEncoderFrameSettingsCreate.restype = ctypes.c_void_p
    lib.JxlEncoderFrameSettingsCreate.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    for name in ("JxlEncoderSetBasicInfo", "JxlEncoderSetColorEncoding", "JxlEncoderSetFrameHeader",
                 "JxlEncoderSetFrameLossless", "JxlEncoderAddImageFrame", "JxlEncoderProcessOutput",
                 "JxlEncoderCloseInput", "JxlEncoderDestroy"):
        getattr(lib, name).argtypes = None
    enc = ctypes.c_void_p(lib.JxlEncoderCreate(None))
    info = BasicInfo()
    lib.JxlEncoderInitBasicInfo(ctypes.byref(info))
    info.xsize, info.ysize, info.bits_per_sample, info.num_color_channels = width, height, 8, 3
    info.uses_original_profile = 1
    if animation:
        info.have_animation = 1
        info.animation[0], info.animation[1], info.animation[2] = animation[0], 1, animation[1]
    assert lib.JxlEncoderSetBasicInfo(enc, ctypes.byref(info)) == 0
    color = ColorEncoding()
    lib.JxlColorEncodingSetToSRGB(ctypes.byref(color), 0)
    assert lib.JxlEncoderSetColorEncoding(enc, ctypes.byref(color)) == 0
    settings = ctypes.c_void_p(lib.JxlEncoderFrameSettingsCreate(enc, None))
    assert lib.JxlEncoderSetFrameLossless(settings, 1) == 0
    fmt = PixelFormat(3, 2, 0, 0)  # RGB, uint8, native endian
    for configure, pixels in frames:
        header = FrameHeader()
        lib.JxlEncoderInitFrameHeader(ctypes.byref(header))
        configure(header)
        assert lib.JxlEncoderSetFrameHeader(settings, ctypes.byref(header)) == 0
        assert lib.JxlEncoderAddImageFrame(settings, ctypes.byref(fmt), pixels, len(pixels)) == 0
    lib.JxlEncoderCloseInput(enc)
    out = b""
    while True:
        chunk = ctypes.create_string_buffer(4096)
        next_out = ctypes.c_void_p(ctypes.addressof(chunk))
        avail = ctypes.c_size_t(len(chunk))
        status = lib.JxlEncoderProcessOutput(enc, ctypes.byref(next_out), ctypes.byref(avail))
        out += chunk.raw[:len(chunk) - avail.value]
        if status == 0:
            break
        assert status == 2, "encoder error"  # JXL_ENC_NEED_MORE_OUTPUT
    lib.JxlEncoderDestroy(enc)
    return out


def layer_larger_than_canvas(lib):
    def crop(header):
        header.layer_info.have_crop = 1
        header.layer_info.crop_x0, header.layer_info.crop_y0 = -46, -46
        header.layer_info.xsize, header.layer_info.ysize = 100, 100
    pixels = bytes((x * 2 + y) & 0xFF for y in range(100) for x in range(100) for _ in range(3))
    return encode(lib, 8, 8, [(crop, pixels)])


def animation_with_loops(lib):
    """48x32, three frames of 100, 40 and 10 ms (the last under 20 ms: browsers show it for 100 ms), 3 loops."""
    frames = []
    for duration, shift in ((100, 0), (40, 80), (10, 160)):
        def timed(header, duration=duration):
            header.duration = duration
        frames.append((timed, bytes(v for y in range(32) for x in range(48) for v in ((x * 5 + shift) & 255, y * 8, 128))))
    return encode(lib, 48, 32, frames, animation=(1000, 3))


def cjxl(source, target, *flags):
    subprocess.run(["cjxl", source, os.path.join(OUT, target), "--quiet", *flags], check=True,
                   stderr=subprocess.DEVNULL)


def main():
    os.makedirs(OUT, exist_ok=True)
    lib = load_libjxl()
    with open(os.path.join(OUT, "layer-larger-than-canvas.jxl"), "wb") as f:
        f.write(layer_larger_than_canvas(lib))
    with open(os.path.join(OUT, "animation-3-loops.jxl"), "wb") as f:
        f.write(animation_with_loops(lib))
    with open(os.path.join(OUT, "flat-1024.jxl"), "wb") as f:
        f.write(encode(lib, 1024, 1024, [(lambda header: None, bytes([40, 90, 200]) * (1024 * 1024))]))
    with tempfile.TemporaryDirectory() as tmp:
        # A 48x32 RGBA gradient, stored (uncompressed) PNG, and a 3-frame APNG made of it.
        import struct
        import zlib

        def png(path, frames):
            def chunk(t, d):
                return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
            w, h = 48, 32
            body = chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
            if len(frames) > 1:
                body += chunk(b"acTL", struct.pack(">II", len(frames), 0))
            seq = 0
            for i, shift in enumerate(frames):
                raw = b"".join(b"\0" + bytes(v for x in range(w) for v in ((x * 5 + shift) & 255, y * 8, 128, 255 - x * 2))
                               for y in range(h))
                data = zlib.compress(raw)
                if len(frames) > 1:
                    body += chunk(b"fcTL", struct.pack(">IIIIIHHBB", seq, w, h, 0, 0, 1, 10, 0, 0))
                    seq += 1
                if i == 0:
                    body += chunk(b"IDAT", data)
                else:
                    body += chunk(b"fdAT", struct.pack(">I", seq) + data)
                    seq += 1
            open(path, "wb").write(b"\x89PNG\r\n\x1a\n" + body + chunk(b"IEND", b""))

        still = os.path.join(tmp, "still.png")
        png(still, [0])
        anim = os.path.join(tmp, "anim.png")
        png(anim, [0, 60, 120])
        cjxl(still, "still-lossy.jxl", "-d", "1.5")
        cjxl(anim, "animation.jxl", "-d", "0")
        cjxl(still, "progressive.jxl", "-d", "0", "-p")
        cjxl(os.path.join(HERE, "color_adobergb.jpg"), "recompressed-jpeg.jxl", "--lossless_jpeg=1")


if __name__ == "__main__":
    main()
