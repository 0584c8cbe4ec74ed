"""The variant registry and the reference rules (Docs/Decoding.md) for cases where Pillow is not the reference."""
import hashlib, io, json, os, shutil, struct, subprocess, sys, tempfile, zlib

from .writers import *


# MARK: - Reference rules (Docs/Decoding.md) for the cases where Pillow is not the reference


def to8(v, bits, fmt="uint"):
    """One sample to 8 bits: below 8 bits scaled (v * 255 / max, rounded), 8 and more the top 8 bits; signed
    samples read as their unsigned bits (libtiff's RGBA interface and Pillow); floats clamp 0...1 and round
    (Pillow's F -> L)."""
    if fmt == "float":
        if v != v or v <= 0:
            return 0
        return 255 if v >= 1 else int(v * 255 + 0.5)
    if fmt == "int":
        v &= (1 << bits) - 1
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
