#if Server && os(Linux)
import Foundation
@testable import ImagoAsyncHTTPClient
import NIOCore
import Testing

/// The AsyncHTTPClient loader hands each body chunk on as `Data` that
/// shares the client's buffer instead of copying it.
@Suite struct SharedBodyChunkTests {
    @Test func aChunkKeepsItsBytesWhateverHappensToTheBufferAfter() {
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 ^ $0 >> 5) }
        var chunk: Data
        do {
            var buffer = ByteBufferAllocator().buffer(capacity: bytes.count)
            buffer.writeBytes(bytes)
            buffer.moveReaderIndex(forwardBy: 10)   // only the readable bytes
            chunk = AsyncHTTPClientDataLoader.data(sharing: buffer)
            #expect(chunk == Data(bytes[10...]))
            // Written to after: the buffer copies its storage, the chunk keeps the old bytes.
            buffer.setBytes([UInt8](repeating: 0, count: 1_000), at: buffer.readerIndex)
            buffer.clear()
        }
        // The buffer is gone; the chunk still holds its storage.
        #expect(chunk == Data(bytes[10...]))
        chunk.append(1)   // and is a Data like any other
        #expect(chunk.count == bytes.count - 9 && chunk.last == 1)
        #expect(AsyncHTTPClientDataLoader.data(sharing: ByteBuffer()).isEmpty)
    }
}
#endif
