import Foundation
import Imago
import ImagoCodecs
import Testing

/// The other half of `CodecDecoderTests` (which drive spy tables): the production tables reach the real C
/// libraries. Each `open` reads the real header; each `makeImage` returns
/// the real pixels; each failure carries the library's own name and code.
@Suite struct ProductionTableTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let format: ImageFormat
        let fixture: String
        let width: Int
        let height: Int
        let frames: Int
        let library: String
        /// The table's `open`, with the state left out (each table has its own type).
        let open: @Sendable (Data) throws -> OpenedImage<Void>
        /// Both steps of the table, the state passed from one to the other.
        let openAndMakeImage: @Sendable (Data) throws -> (opened: OpenedImage<Void>, image: Image)
        var testDescription: String { format.rawValue }

        init<State>(
            format: ImageFormat, table: CodecFunctions<State>, fixture: String,
            width: Int, height: Int, frames: Int, library: String
        ) {
            self.format = format
            self.fixture = fixture
            self.width = width
            self.height = height
            self.frames = frames
            self.library = library
            open = { data in Self.withoutState(try table.open(data, ImageDecodingOptions())) }
            openAndMakeImage = { data in
                let opened = try table.open(data, ImageDecodingOptions())
                return (Self.withoutState(opened), try table.makeImage(opened, nil, ImageDecodingOptions()))
            }
        }

        static func withoutState(_ opened: OpenedImage<some Sendable>) -> OpenedImage<Void> {
            OpenedImage(width: opened.width, height: opened.height, frameCount: opened.frameCount)
        }
    }

    static let cases: [Case] = [
        Case(format: .png, table: .png, fixture: "pngsuite/basn6a08.png", width: 32, height: 32, frames: 1, library: "libspng"),
        Case(format: .jpeg, table: .jpeg, fixture: "jpeg/large.jpg", width: 640, height: 480, frames: 1, library: "libjpeg-turbo"),
        Case(format: .gif, table: .gif, fixture: "gif/pillow-animation.gif", width: 0, height: 0, frames: 0, library: "giflib"),
        Case(format: .webp, table: .webp, fixture: "webp/animated.webp", width: 8, height: 8, frames: 3, library: "libwebp"),
    ]

    @Test(arguments: cases)
    func openReadsTheRealHeaderAndMakeImageTheRealPixels(_ test: Case) throws {
        let data = try Fixtures.data(test.fixture)
        let (opened, image) = try test.openAndMakeImage(data)
        // The registry's header reader (another path into the same library) agrees.
        let info = try ImageDecoders.info(for: data)
        #expect(opened.width == info.width && opened.height == info.height && opened.frameCount == info.frameCount)
        if test.width > 0 {
            #expect(opened.width == test.width && opened.height == test.height && opened.frameCount == test.frames)
        }
        #expect(image.width == opened.width && image.height == opened.height)
        #expect(image.frames.count == opened.frameCount)
        #expect(image.pixels.contains { $0 != 0 })
    }

    @Test(arguments: cases)
    func openFailureIsTheLibrarysOwnError(_ test: Case) throws {
        var data = try [UInt8](Fixtures.data(test.fixture).prefix(16))
        // Keep the signature, break what follows.
        for index in 8..<data.count { data[index] = 0xA5 }
        let codec = try #require(throws: CodecError.self) { try test.open(Data(data)) }
        #expect(codec.library == test.library)
        #expect(!codec.message.isEmpty)
    }

    @Test(arguments: cases)
    func registryPicksTheTableForTheFormat(_ test: Case) throws {
        #expect(ImageDecoders.decoder(for: test.format).format == test.format)
        #expect(ImageDecoders.all.supportedFormats.contains(test.format))
    }
}
