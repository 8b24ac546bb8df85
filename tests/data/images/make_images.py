#!/usr/bin/python3
"""Writes the JPEG 2000 test images of tests/test_ops_new.c (the test encodes every other format itself):
the 19x13 RGB gradient value(x, y, c) = 40 + 3x + 2y + 30c, losslessly, as a JP2 file and a raw codestream."""
import numpy as np
from PIL import Image

w, h = 19, 13
a = np.array([[[40 + 3 * x + 2 * y + 30 * c for c in range(3)] for x in range(w)] for y in range(h)], np.uint8)
Image.fromarray(a, "RGB").save("smooth_19x13.jp2")
Image.fromarray(a, "RGB").save("smooth_19x13.j2k")
