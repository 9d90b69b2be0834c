import Foundation
import Imago

/// Pictures made in code from a seed: the same seed gives the same pixels
/// on every machine and run, a different seed a different picture of the
/// same kind, so tests need no binary files.
extension TestImages {
    /// A photo-like RGB picture: a sky with clouds graded to a hazy
    /// horizon, textured hills strewn with pebbles, bushes with crisp edges
    /// and a fine grain, so that it compresses, resamples and sharpens like
    /// a photograph (its detail spans every scale, and a shift of one pixel
    /// shows) rather than like a gradient.
    public static func photo(width: Int = 256, height: Int = 192, seed: UInt64 = 1) -> Image {
        var random = SeededRandom(seed)
        let scale = Double(max(width, height))
        let horizon = 0.35 + 0.15 * random.unit()
        let sun = (x: random.unit(), y: horizon * (0.2 + 0.5 * random.unit()), radius: 0.04 + 0.04 * random.unit())
        let ridgeNoise = NoiseField(width: width, height: 1, scale: scale, frequency: 3, octaves: 5, persistence: 0.5, seed: seed &+ 1)
        let clouds = NoiseField(width: width, height: height, scale: scale, frequency: 4, octaves: 6, persistence: 0.55, seed: seed &+ 2)
        let texture = NoiseField(width: width, height: height, scale: scale, frequency: 16, octaves: 6, persistence: 0.7, seed: seed &+ 3)
        let soil = NoiseField(width: width, height: height, scale: scale, frequency: 5, octaves: 3, persistence: 0.5, seed: seed &+ 4)
        var colors = [(Double, Double, Double)](repeating: (0, 0, 0), count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let index = y * width + x
                let u = Double(x) / scale, v = Double(y) / scale
                let ridge = horizon + 0.08 * (ridgeNoise[x] - 0.5)
                if v < ridge {
                    let t = v / ridge
                    var color = (0.35 + 0.45 * t, 0.55 + 0.33 * t, 0.85 + 0.08 * t)
                    color = mix(color, (0.95, 0.95, 0.97), min(1, max(0, clouds[index] - 0.5) * 3))
                    let distance = hypot(u - sun.x, v - sun.y)
                    colors[index] = mix(color, (1, 0.97, 0.85), smoothstep(sun.radius + 1.5 / scale, sun.radius, distance))
                } else {
                    let depth = (v - ridge) / max(0.01, 1 - ridge)
                    var color = mix((0.5, 0.58, 0.3), (0.16, 0.26, 0.07), smoothstep(0.25, 0.75, texture[index]))
                    color = mix(color, (0.55, 0.45, 0.3), min(1, max(0, soil[index] - 0.55) * 4))
                    colors[index] = mix((0.6, 0.68, 0.75), color, min(1, 0.35 + depth * 1.5))
                }
            }
        }
        // Bushes, then pebbles, each painted inside its own bounds with an edge about a pixel wide.
        let bushes = (0..<(4 + Int(random.unit() * 4))).map { _ in
            (x: random.unit(), y: horizon + (1 - horizon) * (0.2 + 0.8 * random.unit()), radius: 0.04 + 0.1 * random.unit(),
             color: (0.1 + 0.25 * random.unit(), 0.22 + 0.3 * random.unit(), 0.05 + 0.15 * random.unit()), squash: 1.3)
        }
        let pebbles = (0..<Int(Double(width * height) / 900)).map { _ in
            let gray = 0.35 + 0.45 * random.unit()
            return (x: random.unit() * Double(width) / scale, y: horizon + (1 - horizon) * random.unit() * Double(height) / scale,
                    radius: 0.004 + 0.01 * random.unit(), color: (gray * 1.05, gray, gray * 0.9), squash: 1.6)
        }
        for blob in bushes + pebbles {
            let radius = blob.radius * scale
            let (cx, cy) = (blob.x * scale, blob.y * scale)
            let top = max(0, Int(cy - radius / blob.squash) - 2), bottom = min(height - 1, Int(cy + radius / blob.squash) + 2)
            let left = max(0, Int(cx - radius) - 2), right = min(width - 1, Int(cx + radius) + 2)
            guard top <= bottom, left <= right else { continue }
            for y in top...bottom {
                for x in left...right {
                    let distance = hypot(Double(x) + 0.5 - cx, (Double(y) + 0.5 - cy) * blob.squash)
                    let cover = min(1, max(0, radius - distance + 0.5))
                    guard cover > 0 else { continue }
                    let index = y * width + x
                    let shade = 0.7 + 0.6 * texture[index] - 0.25 * (Double(y) + 0.5 - cy) / radius
                    colors[index] = mix(colors[index], (blob.color.0 * shade, blob.color.1 * shade, blob.color.2 * shade), cover)
                }
            }
        }
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for index in colors.indices {
            let grain = (ValueNoise.hash(index % width, index / width, seed: seed &+ 6) - 0.5) * 0.03
            pixels[index * 3] = byte(colors[index].0 + grain)
            pixels[index * 3 + 1] = byte(colors[index].1 + grain)
            pixels[index * 3 + 2] = byte(colors[index].2 + grain)
        }
        return Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
    }

    /// A graphic RGB picture, like a logo or a screenshot: flat colours,
    /// hard edges, one-pixel lines, a smooth-edged disc and rows of bars
    /// like text, so that a resampler's ringing and a codec's chroma
    /// subsampling show.
    public static func graphic(width: Int = 256, height: Int = 192, seed: UInt64 = 1) -> Image {
        var random = SeededRandom(seed)
        let palette: [(Double, Double, Double)] = [(0.95, 0.95, 0.93), (0.1, 0.2, 0.45), (0.9, 0.3, 0.2), (0.2, 0.65, 0.4),
                                                   (0.98, 0.8, 0.2), (0.15, 0.15, 0.18)]
        let background = palette[0]
        let boxes = (0..<4).map { _ in
            (x: random.unit() * 0.7, y: random.unit() * 0.7, width: 0.15 + random.unit() * 0.3, height: 0.1 + random.unit() * 0.25,
             color: palette[1 + Int(random.unit() * 4)])
        }
        let disc = (x: 0.3 + 0.4 * random.unit(), y: 0.3 + 0.4 * random.unit(), radius: 0.12 + 0.08 * random.unit(), color: palette[2])
        let lineSlope = 0.2 + random.unit()
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let u = (Double(x) + 0.5) / Double(width), v = (Double(y) + 0.5) / Double(height)
                var color = background
                for box in boxes where u >= box.x && u < box.x + box.width && v >= box.y && v < box.y + box.height {
                    let edge = u - box.x < 1.5 / Double(width) || box.x + box.width - u < 1.5 / Double(width)
                        || v - box.y < 1.5 / Double(height) || box.y + box.height - v < 1.5 / Double(height)
                    color = edge ? palette[5] : box.color
                }
                let pixelSize = 1 / Double(max(width, height))
                let distance = hypot((u - disc.x) * Double(width), (v - disc.y) * Double(height)) / Double(max(width, height))
                color = mix(color, disc.color, min(1, max(0, (disc.radius - distance) / pixelSize + 0.5)))
                if abs(v - (0.1 + lineSlope * u)) * Double(height) < 0.6 { color = palette[5] }
                let row = Int(v * 24), column = Int(u * 40)
                if row >= 18, row < 22, row % 2 == 0, column >= 2, column < 38,
                   ValueNoise.hash(column / 3, row, seed: seed) > 0.25, Int(v * 48) % 4 < 2 {
                    color = palette[5]
                }
                let index = (y * width + x) * 3
                pixels[index] = byte(color.0)
                pixels[index + 1] = byte(color.1)
                pixels[index + 2] = byte(color.2)
            }
        }
        return Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
    }

    /// An RGBA cut-out: ``photo(width:height:seed:)`` inside a soft-edged
    /// oval, fully transparent outside it (corners and edges), with a
    /// partly transparent rim a few pixels wide.
    public static func cutout(width: Int = 256, height: Int = 192, seed: UInt64 = 1) -> Image {
        let photo = photo(width: width, height: height, seed: seed).pixels
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        let rim = 4.0 / Double(min(width, height))
        for y in 0..<height {
            for x in 0..<width {
                let u = (Double(x) + 0.5) / Double(width) - 0.5, v = (Double(y) + 0.5) / Double(height) - 0.5
                let distance = hypot(u / 0.45, v / 0.45)
                let alpha = smoothstep(1, 1 - rim * 2, distance)
                let index = y * width + x
                for channel in 0..<3 { pixels[index * 4 + channel] = photo[index * 3 + channel] }
                pixels[index * 4 + 3] = byte(alpha)
            }
        }
        return Image(width: width, height: height, pixelFormat: .rgba8, pixels: pixels)
    }

    /// An RGBA animation of `frames` frames, `frameDuration` seconds each,
    /// looping forever: a disc crossing ``graphic(width:height:seed:)``
    /// from left to right, so that every frame differs from the last.
    public static func animation(width: Int = 128, height: Int = 96, frames: Int = 8, frameDuration: TimeInterval = 0.1,
                                 seed: UInt64 = 1) -> Image {
        precondition(frames > 0, "an animation needs a frame")
        let background = graphic(width: width, height: height, seed: seed).converted(to: .rgba8).pixels
        let radius = Double(min(width, height)) * 0.15
        let made = (0..<frames).map { frame in
            var pixels = background
            let centre = (x: radius + (Double(width) - 2 * radius) * Double(frame) / Double(max(1, frames - 1)), y: Double(height) / 2)
            for y in 0..<height {
                for x in 0..<width {
                    let cover = min(1, max(0, radius - hypot(Double(x) + 0.5 - centre.x, Double(y) + 0.5 - centre.y) + 0.5))
                    guard cover > 0 else { continue }
                    let index = (y * width + x) * 4
                    pixels[index] = byte(mix(Double(pixels[index]) / 255, 0.85, cover))
                    pixels[index + 1] = byte(mix(Double(pixels[index + 1]) / 255, 0.2, cover))
                    pixels[index + 2] = byte(mix(Double(pixels[index + 2]) / 255, 0.6, cover))
                }
            }
            return ImageFrame(pixels: pixels, duration: frameDuration)
        }
        return Image(width: width, height: height, pixelFormat: .rgba8, frames: made, loopCount: 0)
    }

    /// ``photo(width:height:seed:)``'s pixels tagged as Display P3 (a
    /// matrix-and-curves ICC profile made in code): a colour-managed
    /// decoder or encoder must convert them (more saturated once in sRGB),
    /// one that ignores the profile shows them duller.
    public static func displayP3Photo(width: Int = 256, height: Int = 192, seed: UInt64 = 1) -> Image {
        var image = photo(width: width, height: height, seed: seed)
        image.colorProfile = ColorProfile(data: ICCProfileBuilder.displayP3)
        return image
    }
}

/// A small, seedable pseudo-random sequence (SplitMix64): the same on every platform.
struct SeededRandom {
    private var state: UInt64

    init(_ seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 &+ 0x2545_F491_4F6C_DD1D }

    mutating func next() -> UInt64 {
        state = state &+ 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// A value in 0..<1.
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

/// Fractal value noise over a whole image at once: each octave's lattice
/// of seeded values is made once, then blended per pixel with a smooth step.
struct NoiseField {
    private let values: [Double]
    private let width: Int

    /// Noise for `width` x `height` pixels: `frequency` lattice cells across
    /// `scale` pixels at the first octave, each octave twice as fine and
    /// `persistence` times as strong as the last; values in 0..<1.
    init(width: Int, height: Int, scale: Double, frequency: Double, octaves: Int, persistence: Double, seed: UInt64) {
        var sum = [Double](repeating: 0, count: width * height)
        var (weight, total, cellsPerPixel) = (1.0, 0.0, frequency / scale)
        for octave in 0..<octaves {
            let columns = Int(Double(width) * cellsPerPixel) + 2, rows = Int(Double(height) * cellsPerPixel) + 2
            var lattice = [Double](repeating: 0, count: columns * rows)
            for row in 0..<rows {
                for column in 0..<columns { lattice[row * columns + column] = ValueNoise.hash(column, row, seed: seed &+ UInt64(octave)) }
            }
            let across = (0..<width).map { Self.cell(Double($0) * cellsPerPixel) }
            let down = (0..<height).map { Self.cell(Double($0) * cellsPerPixel) }
            for y in 0..<height {
                let (row, fy) = down[y]
                for x in 0..<width {
                    let (column, fx) = across[x]
                    let at = row * columns + column
                    let top = mix(lattice[at], lattice[at + 1], fx)
                    let bottom = mix(lattice[at + columns], lattice[at + columns + 1], fx)
                    sum[y * width + x] += weight * mix(top, bottom, fy)
                }
            }
            total += weight
            weight *= persistence
            cellsPerPixel *= 2
        }
        values = sum.map { $0 / total }
        self.width = width
    }

    /// The noise at the pixel with this row-major index.
    subscript(index: Int) -> Double { values[index] }

    /// The lattice cell of a coordinate and the smooth-stepped fraction within it.
    private static func cell(_ coordinate: Double) -> (Int, Double) {
        let cell = floor(coordinate), fraction = coordinate - cell
        return (Int(cell), fraction * fraction * (3 - 2 * fraction))
    }
}

/// Seeded values on a lattice: the same for the same point and seed on every platform.
enum ValueNoise {
    /// A value in 0..<1 for the lattice point `x`, `y`.
    static func hash(_ x: Int, _ y: Int, seed: UInt64) -> Double {
        var random = SeededRandom(seed ^ (UInt64(bitPattern: Int64(x)) &* 0x1F1F_1F1F) ^ (UInt64(bitPattern: Int64(y)) &* 0x7FFF_FFFF_0001))
        return random.unit()
    }
}

func mix(_ a: Double, _ b: Double, _ t: Double) -> Double { a + (b - a) * t }

func mix(_ a: (Double, Double, Double), _ b: (Double, Double, Double), _ t: Double) -> (Double, Double, Double) {
    (mix(a.0, b.0, t), mix(a.1, b.1, t), mix(a.2, b.2, t))
}

/// 0 at `edge0`, 1 at `edge1`, smooth between (either order).
func smoothstep(_ edge0: Double, _ edge1: Double, _ value: Double) -> Double {
    let t = min(1, max(0, (value - edge0) / (edge1 - edge0)))
    return t * t * (3 - 2 * t)
}

/// A fraction 0...1 as a byte, rounded and clamped.
func byte(_ value: Double) -> UInt8 { UInt8(min(255, max(0, (value * 255).rounded()))) }
