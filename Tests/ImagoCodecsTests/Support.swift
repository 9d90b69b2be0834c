import Foundation
import Imago

/// Fixture files committed under `Resources/`.
enum Fixtures {
    static let root = Bundle.module.url(forResource: "Resources", withExtension: nil)!

    static func url(_ path: String) -> URL { root.appendingPathComponent(path) }

    static func data(_ path: String) throws -> Data { try Data(contentsOf: url(path)) }

    /// The PngSuite files, by name.
    static func pngSuite() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url("pngsuite").path)
            .filter { $0.hasSuffix(".png") }
            .sorted()
    }
}
