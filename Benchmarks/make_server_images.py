"""Photo-like test images for Benchmarks/compare-server, always the same ones.

    python make_server_images.py OUTPUT_DIR [COUNT]

Writes COUNT (default 240) images of 0.3 to 1.5 megapixels in several aspect
ratios, landscape and portrait, into OUTPUT_DIR/server/: three quarters JPEG
(quality 85 to 92), one quarter PNG (RGB). Also writes one 4000x3000 JPEG,
OUTPUT_DIR/server-12mp/photo-00.jpg, and 63 symbolic links to it under other
names (distinct URLs for the memory test); 24 animated GIFs of 320x240 to
480x360 with 12 to 24 frames (shapes moving over a photo-like background),
OUTPUT_DIR/server-animated/; and a 160x48 half-transparent watermark,
OUTPUT_DIR/watermark.png. The content compresses like a
photograph: smooth colour fields (small random images upscaled bicubically)
at two scales, some sharp shapes and edges, a few of them softened, and mild
per-pixel noise. Pillow only; a fixed seed per image. Skips the work when
OUTPUT_DIR already holds this version's images.
"""
import math
import os
import random
import sys

from PIL import Image, ImageChops, ImageDraw, ImageFilter

VERSION = "3"
ASPECTS = [4 / 3, 3 / 2, 16 / 9, 1.0, 5 / 4, 3 / 4, 2 / 3, 9 / 16, 4 / 5, 2.0]


def field(rng, size, cells):
    """A smooth colour field: a random image of `cells` pixels, upscaled."""
    small = Image.frombytes("RGB", cells, rng.randbytes(cells[0] * cells[1] * 3))
    return small.resize(size, Image.BICUBIC)


def photo(rng, width, height):
    aspect = width / height
    coarse = rng.randint(3, 7)
    base = field(rng, (width, height), (max(2, round(coarse * math.sqrt(aspect))), max(2, round(coarse / math.sqrt(aspect)))))
    fine = rng.randint(12, 28)
    detail = field(rng, (width, height), (max(2, round(fine * math.sqrt(aspect))), max(2, round(fine / math.sqrt(aspect)))))
    image = Image.blend(base, detail, rng.uniform(0.15, 0.35))
    # Texture (foliage, fabric, gravel): a field at a few pixels' scale.
    grain = rng.uniform(3, 8)
    texture = field(rng, (width, height), (max(2, round(width / grain)), max(2, round(height / grain))))
    image = Image.blend(image, texture, rng.uniform(0.06, 0.16))

    # Objects: sharp-edged shapes, some softened afterwards (out of focus).
    shapes = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    draw = ImageDraw.Draw(shapes)
    for _ in range(rng.randint(4, 14)):
        colour = (rng.randrange(256), rng.randrange(256), rng.randrange(256), rng.randint(120, 255))
        x0, y0 = rng.randrange(width), rng.randrange(height)
        w, h = rng.randint(width // 20, width // 3), rng.randint(height // 20, height // 3)
        kind = rng.randrange(4)
        if kind == 0:
            draw.ellipse((x0, y0, x0 + w, y0 + h), fill=colour)
        elif kind == 1:
            draw.rectangle((x0, y0, x0 + w, y0 + h), fill=colour)
        elif kind == 2:
            points = [(x0 + rng.randint(-w, w), y0 + rng.randint(-h, h)) for _ in range(rng.randint(3, 6))]
            draw.polygon(points, fill=colour)
        else:
            draw.line((x0, y0, x0 + rng.randint(-w, w) * 2, y0 + rng.randint(-h, h) * 2), fill=colour, width=rng.randint(2, 12))
    if rng.random() < 0.5:
        shapes = shapes.filter(ImageFilter.GaussianBlur(rng.uniform(0.8, 3)))
    image.paste(shapes, (0, 0), shapes)

    # Mild sensor noise, per channel, about +-amplitude levels.
    amplitude = rng.randint(4, 10)
    table = [128 + (v - 128) * amplitude // 128 for v in range(256)] * 3
    noise = Image.frombytes("RGB", (width, height), rng.randbytes(width * height * 3)).point(table)
    return ImageChops.add(image, noise, 1.0, -128)


def animation(rng, width, height, frames):
    """Frames of shapes moving over one photo-like background."""
    background = photo(rng, width, height)
    shapes = [((rng.randrange(256), rng.randrange(256), rng.randrange(256)), rng.randint(20, 60),
               rng.randrange(width), rng.randrange(height), rng.randint(-12, 12), rng.randint(-12, 12)) for _ in range(5)]
    result = []
    for index in range(frames):
        frame = background.copy()
        draw = ImageDraw.Draw(frame)
        for colour, radius, x, y, dx, dy in shapes:
            cx, cy = (x + dx * index) % width, (y + dy * index) % height
            draw.ellipse((cx - radius, cy - radius, cx + radius, cy + radius), fill=colour)
        result.append(frame)
    return result


def watermark():
    """A 160x48 logo: a rounded white plate, half transparent, with dark bars."""
    image = Image.new("RGBA", (160, 48), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((0, 0, 159, 47), radius=12, fill=(255, 255, 255, 140))
    for index in range(6):
        draw.rectangle((14 + index * 23, 12, 28 + index * 23, 36), fill=(20, 30, 60, 220))
    return image


def size_for(rng, megapixels_range):
    megapixels = rng.uniform(*megapixels_range)
    aspect = rng.choice(ASPECTS)
    width = round(math.sqrt(megapixels * 1e6 * aspect))
    return width, round(megapixels * 1e6 / width)


def main():
    root = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 240
    stamp = os.path.join(root, "server-images.stamp")
    expected = f"{VERSION} {count}\n"
    if os.path.exists(stamp) and open(stamp).read() == expected:
        return
    folder = os.path.join(root, "server")
    large = os.path.join(root, "server-12mp")
    animated = os.path.join(root, "server-animated")
    for directory in (folder, large, animated):
        os.makedirs(directory, exist_ok=True)
        for name in os.listdir(directory):
            os.remove(os.path.join(directory, name))
    for index in range(count):
        rng = random.Random(1000 + index)
        width, height = size_for(rng, (0.3, 1.5))
        image = photo(rng, width, height)
        if index % 4 == 3:
            image.save(os.path.join(folder, f"photo-{index:03d}.png"), compress_level=6)
        else:
            image.save(os.path.join(folder, f"photo-{index:03d}.jpg"), quality=rng.randint(85, 92))
    rng = random.Random(99)
    photo(rng, 4000, 3000).save(os.path.join(large, "photo-00.jpg"), quality=88)
    for index in range(1, 64):
        os.symlink("photo-00.jpg", os.path.join(large, f"photo-{index:02d}.jpg"))
    for index in range(24):
        rng = random.Random(5000 + index)
        width = rng.randint(320, 480)
        frames = animation(rng, width, width * 3 // 4, rng.randint(12, 24))
        frames[0].save(os.path.join(animated, f"anim-{index:02d}.gif"), save_all=True, append_images=frames[1:],
                       duration=rng.choice([40, 60, 80, 100]), loop=0)
    watermark().save(os.path.join(root, "watermark.png"))
    open(stamp, "w").write(expected)


if __name__ == "__main__":
    main()
