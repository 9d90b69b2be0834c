"""Makes the SSIMULACRA 2 test pairs (SSIMULACRA2Tests) from three of Pillow's test images (under Pillow's
MIT-CMU licence), Tests/images/flower.jpg, hopper.png and pil123rgba.png:
`python3 make_pairs.py PILLOW_TESTS_IMAGES OUT` (with Pillow 13.0). The reference scores in the test come from
Cloudinary's `ssimulacra2 reference.png distorted.png`."""
import io, random, sys
from PIL import Image, ImageFilter

src, out = sys.argv[1], sys.argv[2]

def save(image, name):
    image.save(f"{out}/{name}.png", optimize=True)  # no gAMA, cHRM or ICC: plain sRGB

def jpeg(image, quality):
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=quality)
    return Image.open(buffer).convert(image.mode)

def noisy(image, sigma, seed):
    rng = random.Random(seed)
    values = (max(0, min(255, round(v + rng.gauss(0, sigma)))) for v in image.tobytes())
    return Image.frombytes(image.mode, image.size, bytes(values))

flower = Image.open(f"{src}/flower.jpg").convert("RGB").resize((192, 144), Image.LANCZOS)
hopper = Image.open(f"{src}/hopper.png").convert("RGB")
fade = Image.linear_gradient("L")  # 256x256 alpha: transparent at the top, opaque at the bottom
save(flower, "flower")
save(hopper, "hopper")
for quality in (90, 50, 20):
    save(jpeg(flower, quality), f"flower-q{quality}")
save(hopper.filter(ImageFilter.GaussianBlur(1.2)), "hopper-blur")
save(noisy(hopper, 6, seed=1), "hopper-noise")
red, green, blue = hopper.split()  # warmer: red up 14, blue down 10
save(Image.merge("RGB", (red.point(lambda v: min(255, v + 14)), green, blue.point(lambda v: max(0, v - 10)))),
     "hopper-warmer")

# The same 160x120 window moved 3 px to the right.
big = Image.open(f"{src}/flower.jpg").convert("RGB")
save(big.crop((140, 90, 300, 210)), "window")
save(big.crop((143, 90, 303, 210)), "window-shift3")

pasted = hopper.copy()
pasted.paste((40, 160, 90), (70, 20, 110, 44))
save(pasted, "hopper-rect")

gray = hopper.convert("L")
save(gray, "hopper-gray")
save(jpeg(gray, 40), "hopper-gray-q40")
alpha = fade.resize(gray.size)
save(Image.merge("LA", (gray, alpha)), "hopper-gray-alpha")
save(Image.merge("LA", (jpeg(gray, 40), alpha.point(lambda v: min(255, v + 20)))), "hopper-gray-q40-alpha")

small = flower.crop((70, 40, 134, 104))
save(small, "small")
save(noisy(small, 10, seed=2), "small-noise")
fading = noisy(small, 10, seed=2).convert("RGBA")
fading.putalpha(fade.resize(small.size))
save(fading, "small-noise-fading")  # alpha in the distorted image only
tiny = flower.crop((30, 30, 43, 39))  # 13x9: two scales, the second 7x5
save(tiny, "tiny")
save(jpeg(tiny, 30), "tiny-q30")

logo = Image.open(f"{src}/pil123rgba.png").convert("RGBA")
save(logo, "logo-rgba")
colour, alpha = jpeg(logo.convert("RGB"), 60), logo.getchannel("A").filter(ImageFilter.BoxBlur(1))
save(Image.merge("RGBA", (*colour.split(), alpha)), "logo-rgba-q60")
