import Foundation
import Imago

/// Checks that a decoder survives damaged input: every outcome must be an
/// image or an ``ImageDecodingError``, never a crash, a hang or another error.
///
/// Modelled on swift-nio's `ByteToMessageDecoderVerifier`: give it a decoder
/// and a valid file, and it feeds the decoder
/// - the whole file (which must decode),
/// - the file truncated at every 1/16 of its length,
/// - the file with each of its first `headerLength` bytes corrupted in turn
///   (inverted, zeroed and set to 0xFF).
///
/// ```swift
/// let report = DecoderVerifier.verify(myDecoder, on: validFile)
/// #expect(report.failures.isEmpty, "\(report.failures)")
/// ```
public enum DecoderVerifier {
    /// What happened to one damaged input.
    public enum Outcome: Sendable, Equatable {
        /// The decoder returned an image.
        case image
        /// The decoder threw an ``ImageDecodingError`` with this code.
        case decodingError(ImageDecodingError.Code)
        /// The decoder threw an error of another type (a failure of the check).
        case untypedError(String)
    }

    /// One input and its outcome.
    public struct Case: Sendable {
        /// What was done to the file, such as `"truncated to 512 bytes"`.
        public let name: String
        /// What the decoder did.
        public let outcome: Outcome
    }

    /// The outcomes of a verification.
    public struct Report: Sendable {
        /// Every case, in the order run.
        public let cases: [Case]
        /// The cases that broke the contract: the intact file did not decode,
        /// or some input produced an error that is not an ``ImageDecodingError``.
        public let failures: [Case]
    }

    /// Runs the checks.
    ///
    /// - Parameters:
    ///   - decoder: The decoder under test.
    ///   - data: A valid encoded image.
    ///   - headerLength: How many leading bytes to corrupt one at a time.
    ///   - options: The options passed on every call.
    public static func verify(
        _ decoder: some ImageDecoding,
        on data: Data,
        headerLength: Int = 64,
        options: ImageDecodingOptions = ImageDecodingOptions()
    ) -> Report {
        var cases: [Case] = []
        var failures: [Case] = []
        func run(_ name: String, _ input: Data, mustDecode: Bool = false) {
            let outcome: Outcome
            do {
                _ = try decoder.decode(input, options: options)
                outcome = .image
            } catch let error as ImageDecodingError {
                outcome = .decodingError(error.code)
            } catch {
                outcome = .untypedError("\(type(of: error)): \(error)")
            }
            let result = Case(name: name, outcome: outcome)
            cases.append(result)
            if case .untypedError = outcome { failures.append(result) }
            else if mustDecode && outcome != .image { failures.append(result) }
        }

        run("intact", data, mustDecode: true)
        for sixteenth in 0..<16 {
            let length = data.count * sixteenth / 16
            run("truncated to \(length) bytes", data.prefix(length))
        }
        let bytes = [UInt8](data)
        for index in 0..<min(headerLength, bytes.count) {
            for (label, transform) in [("inverted", { (byte: UInt8) in ~byte }), ("zeroed", { _ in 0 }), ("set to 0xFF", { _ in 0xFF })] {
                var corrupted = bytes
                corrupted[index] = transform(bytes[index])
                if corrupted[index] == bytes[index] { continue }
                run("byte \(index) \(label)", Data(corrupted))
            }
        }
        return Report(cases: cases, failures: failures)
    }
}
