#!/usr/bin/env python3
"""The benchmarks' 12-megapixel test picture: a gradient with shapes and noise, so encoders see
photo-like entropy. Writes DIR/photo.png, DIR/photo.jpg (quality 90) and DIR/photo.webp (85).
Usage: make-photo.py DIR"""
import sys, random
from PIL import Image, ImageDraw, ImageFilter
random.seed(1)
w, h = 4000, 3000
im = Image.linear_gradient("L").resize((w, h)).convert("RGB")
draw = ImageDraw.Draw(im)
for _ in range(400):  # shapes and noise so the JPEG has photo-like entropy
    x, y, r = random.randrange(w), random.randrange(h), random.randrange(20, 300)
    draw.ellipse((x - r, y - r, x + r, y + r), fill=tuple(random.randrange(256) for _ in range(3)))
im = im.filter(ImageFilter.GaussianBlur(2))
noise = Image.effect_noise((w, h), 24).convert("RGB")
im = Image.blend(im, noise, 0.15)
im.save(sys.argv[1] + "/photo.png")
im.save(sys.argv[1] + "/photo.jpg", quality=90)
im.save(sys.argv[1] + "/photo.webp", quality=85)
