"""The variant cases of make_variant_fixtures.py, one module per format; importing them registers them in order."""
from . import cases_png, cases_bmp, cases_ico, cases_tiff, cases_jpeg_webp  # noqa: F401
from .registry import VARIANTS  # noqa: F401
