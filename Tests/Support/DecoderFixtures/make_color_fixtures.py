#!/usr/bin/env python3
"""Writes the colour-management fixtures of Tests/Support/DecoderFixtures and their lcms2 references.

Each fixture is a 64x48 image of saturated colours and ramps stored in a non-sRGB colour space with its profile
embedded; its reference (`<name>.srgb.png`) is Pillow's decode of the same file converted to sRGB by Pillow's
ImageCms (lcms2), perceptual intent. Profiles: Adobe RGB (icc-profiles-free's compatibleWithAdobeRGB1998.icc,
zlib licence), Display P3 and ProPhoto built with lcms2 itself (through ctypes), a CMYK press profile built with
lcms2 as a 9-point CLUT (a naive CMYK model with dot gain), and PNG gAMA 1.0 (reference profile built from the
same chunk values). Needs Pillow and liblcms2-2:

    python3 Tests/Support/DecoderFixtures/make_color_fixtures.py [path to compatibleWithAdobeRGB1998.icc]
"""
import ctypes, io, os, struct, sys, zlib
from PIL import Image, ImageCms

HERE = os.path.dirname(os.path.abspath(__file__))
lcms = ctypes.CDLL("liblcms2.so.2")
W, H = 64, 48


class xyY(ctypes.Structure):
    _fields_ = [("x", ctypes.c_double), ("y", ctypes.c_double), ("Y", ctypes.c_double)]


def sig(s):
    return struct.unpack(">I", s.encode())[0]


lcms.cmsBuildGamma.restype = ctypes.c_void_p
lcms.cmsBuildParametricToneCurve.restype = ctypes.c_void_p
lcms.cmsCreateRGBProfile.restype = ctypes.c_void_p
lcms.cmsCreateProfilePlaceholder.restype = ctypes.c_void_p
lcms.cmsPipelineAlloc.restype = ctypes.c_void_p
lcms.cmsStageAllocCLut16bit.restype = ctypes.c_void_p
lcms.cmsMLUalloc.restype = ctypes.c_void_p
lcms.cmsD50_XYZ.restype = ctypes.c_void_p


def save(profile):
    size = ctypes.c_uint32(0)
    lcms.cmsSaveProfileToMem(ctypes.c_void_p(profile), None, ctypes.byref(size))
    buf = ctypes.create_string_buffer(size.value)
    lcms.cmsSaveProfileToMem(ctypes.c_void_p(profile), buf, ctypes.byref(size))
    return buf.raw


def describe(profile, text):
    mlu = lcms.cmsMLUalloc(None, 1)
    lcms.cmsMLUsetASCII(ctypes.c_void_p(mlu), b"en", b"US", text.encode())
    lcms.cmsWriteTag(ctypes.c_void_p(profile), sig("desc"), ctypes.c_void_p(mlu))


def rgb_profile(white, primaries, gamma, name):
    """gamma > 0: power law; 0: the sRGB curve."""
    if gamma > 0:
        curve = lcms.cmsBuildGamma(None, ctypes.c_double(gamma))
    else:
        params = (ctypes.c_double * 5)(2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045)
        curve = lcms.cmsBuildParametricToneCurve(None, 4, params)
    curves = (ctypes.c_void_p * 3)(curve, curve, curve)
    wp = xyY(white[0], white[1], 1.0)
    prim = (xyY * 3)(*(xyY(x, y, 1.0) for x, y in primaries))
    p = lcms.cmsCreateRGBProfile(ctypes.byref(wp), prim, curves)
    describe(p, name)
    return save(p)


CLUT_SAMPLER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_uint16), ctypes.POINTER(ctypes.c_uint16), ctypes.c_void_p)


def cmyk_profile():
    """An output-class CMYK profile whose AToB0 is a 9-point CLUT to Lab: ink with 20% dot gain, imperfect inks."""
    srgb = ImageCms.createProfile("sRGB")
    lab = ImageCms.createProfile("LAB")
    to_lab = ImageCms.buildTransform(srgb, lab, "RGB", "LAB")

    def sampler(inp, out, cargo):
        c, m, y, k = (inp[i] / 65535.0 for i in range(4))
        c, m, y, k = (v ** 0.8 for v in (c, m, y, k))  # dot gain
        r = (1 - c) * (1 - 0.1 * m) * (1 - k)
        g = (1 - m) * (1 - 0.15 * c) * (1 - 0.05 * y) * (1 - k)
        b = (1 - y) * (1 - 0.2 * c) * (1 - 0.1 * m) * (1 - k)
        px = Image.new("RGB", (1, 1), tuple(int(round(255 * v)) for v in (r, g, b)))
        L, A, B = ImageCms.applyTransform(px, to_lab).getpixel((0, 0))  # ints
        out[0], out[1], out[2] = L * 257, A * 257, B * 257  # Pillow LAB bytes (a, b offset by 128) to lcms2's 16-bit Lab
        return 1

    callback = CLUT_SAMPLER(sampler)
    p = lcms.cmsCreateProfilePlaceholder(None)
    lcms.cmsSetDeviceClass(ctypes.c_void_p(p), sig("prtr"))
    lcms.cmsSetColorSpace(ctypes.c_void_p(p), sig("CMYK"))
    lcms.cmsSetPCS(ctypes.c_void_p(p), sig("Lab "))
    pipe = lcms.cmsPipelineAlloc(None, 4, 3)
    clut = lcms.cmsStageAllocCLut16bit(None, 9, 4, 3, None)
    lcms.cmsStageSampleCLut16bit(ctypes.c_void_p(clut), callback, None, 0)
    lcms.cmsPipelineInsertStage(ctypes.c_void_p(pipe), 0, ctypes.c_void_p(clut))
    lcms.cmsWriteTag(ctypes.c_void_p(p), sig("A2B0"), ctypes.c_void_p(pipe))
    lcms.cmsWriteTag(ctypes.c_void_p(p), sig("wtpt"), ctypes.c_void_p(lcms.cmsD50_XYZ()))
    describe(p, "Test press CMYK (lcms2 CLUT)")
    return save(p)


def test_image():
    """Saturated hue bands on top, gray and colour ramps below, some dark tones."""
    im = Image.new("RGB", (W, H))
    px = im.load()
    import colorsys
    for y in range(H):
        for x in range(W):
            if y < 24:
                r, g, b = colorsys.hsv_to_rgb(x / W, 1.0 if y < 12 else 0.55, 1.0 - (y % 12) / 24)
            elif y < 36:
                v = x / (W - 1)
                r, g, b = (v, v, v) if y < 30 else (v, v * 0.6, 1 - v)
            else:
                r, g, b = ((x * 7 + y * 3) % 64 / 255.0, (x * 3) % 40 / 255.0, (y * 5) % 50 / 255.0)
            px[x, y] = tuple(int(round(255 * c)) for c in (r, g, b))
    return im


def reference(path, profile_bytes, mode="RGB"):
    decoded = Image.open(path)
    decoded.load()
    src = ImageCms.ImageCmsProfile(io.BytesIO(profile_bytes))
    out = ImageCms.profileToProfile(decoded.convert(mode) if decoded.mode != mode else decoded, src,
                                    ImageCms.createProfile("sRGB"), renderingIntent=ImageCms.Intent.PERCEPTUAL,
                                    outputMode="RGB")
    out.save(path.rsplit(".", 1)[0] + ".srgb.png")


def main():
    adobe_path = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/color/icc/compatibleWithAdobeRGB1998.icc"
    srgb = ImageCms.createProfile("sRGB")
    source = test_image()
    profiles = {
        "adobergb": open(adobe_path, "rb").read(),
        "displayp3": rgb_profile((0.3127, 0.3290), [(0.680, 0.320), (0.265, 0.690), (0.150, 0.060)], 0, "Display P3 (lcms2)"),
        "prophoto": rgb_profile((0.3457, 0.3585), [(0.7347, 0.2653), (0.1596, 0.8404), (0.0366, 0.0001)], 1.8,
                                "ProPhoto RGB (lcms2)"),
    }
    for name, icc in profiles.items():
        # The sRGB test image re-encoded into the profile's space, so that a correct decoder shows it again.
        encoded = ImageCms.profileToProfile(source, srgb, ImageCms.ImageCmsProfile(io.BytesIO(icc)),
                                            renderingIntent=ImageCms.Intent.RELATIVE_COLORIMETRIC, outputMode="RGB")
        if name == "adobergb":
            path = os.path.join(HERE, "color_adobergb.jpg")
            encoded.save(path, quality=95, icc_profile=icc)
        elif name == "displayp3":
            path = os.path.join(HERE, "color_displayp3.png")
            encoded.save(path, icc_profile=icc)
        else:
            path = os.path.join(HERE, "color_prophoto.webp")
            encoded.save(path, lossless=True, icc_profile=icc)
        reference(path, icc)
    # CMYK JPEG (Pillow writes Adobe-inverted CMYK) with the press profile.
    cmyk = cmyk_profile()
    cmyk_image = source.convert("CMYK")  # any CMYK samples do: the reference converts these very samples
    path = os.path.join(HERE, "color_cmyk.jpg")
    cmyk_image.save(path, quality=95, icc_profile=cmyk)
    reference(path, cmyk, mode="CMYK")
    # PNG gAMA 1.0 (linear samples), no cHRM: sRGB primaries with a gamma-1.0 curve, as the decoder builds it.
    linear = source.point(lambda v: int(round(255 * ((v / 255) / 12.92 if v / 255 <= 0.04045 else (((v / 255) + 0.055) / 1.055) ** 2.4))))
    raw = b"".join(b"\0" + linear.tobytes()[y * W * 3:(y + 1) * W * 3] for y in range(H))
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, 8, 2, 0, 0, 0))
    png += chunk(b"gAMA", struct.pack(">I", 100000)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    path = os.path.join(HERE, "color_gama10.png")
    open(path, "wb").write(png)
    reference(path, rgb_profile((0.3127, 0.3290), [(0.64, 0.33), (0.30, 0.60), (0.15, 0.06)], 1.0, "gAMA 1.0"))
    for f in sorted(os.listdir(HERE)):
        if f.startswith("color_"):
            print(f, os.path.getsize(os.path.join(HERE, f)))


if __name__ == "__main__":
    main()
