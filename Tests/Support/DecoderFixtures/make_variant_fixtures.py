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
sys.path.insert(0, HERE)
from variant_generator import VARIANTS  # noqa: E402  (registers every case)
from variant_generator.writers import W, H  # noqa: E402


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
        if "managed" in info:  # the colour-managed decode's reference (ImageDecodingOptions.convertToSRGB)
            entry["managed_sha256_rgba"] = hashlib.sha256(info["managed"]).hexdigest()
        for flag in ("lab",):
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
