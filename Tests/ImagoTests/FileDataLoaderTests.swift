import Foundation
import Imago
import ImagoTesting
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension FileDataLoader {
    /// The whole file behind an open descriptor.
    fileprivate func data(for descriptor: Int32, url: URL) async throws -> (Data, URLResponse?) {
        let loaded = try await load(descriptor: descriptor, for: url)
        var data = Data()
        for try await chunk in loaded.body { data.append(chunk) }
        return (data, loaded.response)
    }
}

/// The file loader against a real temporary directory.
@Suite final class FileDataLoaderTests {
    let directory: URL

    /// Each test's folder goes with it.
    deinit { try? FileManager.default.removeItem(at: directory) }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-file-loader-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    private func write(_ data: Data, named name: String) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try data.write(to: url)
        return url
    }

    @Test func readsTheWholeFileInChunksWithProgress() async throws {
        let body = Data((0..<10_000).map { UInt8($0 % 251) })
        let url = try write(body, named: "photo.bin")
        let reports = Recorder<LoadingProgress>()
        let (data, response) = try await FileDataLoader(chunkSize: 4096).data(for: URLRequest(url: url)) { reports.record($0) }
        #expect(data == body)
        #expect(response.expectedContentLength == 10_000)
        #expect(response.mimeType == nil)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 200)
        #expect(http.value(forHTTPHeaderField: "Content-Length") == "10000")
        #expect(http.value(forHTTPHeaderField: "Accept-Ranges") == "bytes")
        #expect(reports.values.map(\.completed) == [4096, 8192, 10_000])
    }

    /// As a static file server: an `ETag` that changes when the file does,
    /// and its modification time as `Last-Modified`.
    @Test func aFileHasValidatorsThatChangeWithIt() async throws {
        let url = try write(Data(repeating: 1, count: 100), named: "tagged.bin")
        func validators() async throws -> (etag: String?, lastModified: String?) {
            let http = try await FileDataLoader().data(for: URLRequest(url: url)).1 as? HTTPURLResponse
            return (http?.value(forHTTPHeaderField: "ETag"), http?.value(forHTTPHeaderField: "Last-Modified"))
        }
        let first = try await validators()
        #expect(first.etag?.range(of: #"^"[A-Za-z0-9_-]{43}"$"#, options: .regularExpression) != nil, "\(first.etag ?? "none")")
        #expect(try await validators().etag == first.etag, "the same file, the same tag")
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_445_412_480)], ofItemAtPath: url.path)
        let touched = try await validators()
        #expect(touched.lastModified == "Wed, 21 Oct 2015 07:28:00 GMT")
        #expect(touched.etag != first.etag)
    }

    /// One `Range` is read alone (206, `Content-Range`); several, other
    /// units or one outside the file get the whole file.
    @Test(arguments: [("bytes=10-19", 10..<20), ("bytes=95-", 95..<100), ("bytes=-5", 95..<100), ("bytes=90-500", 90..<100),
                      ("bytes=0-0", 0..<1), ("bytes=100-", 0..<100), ("bytes=5-1", 0..<100), ("bytes=0-1,4-5", 0..<100),
                      ("items=0-1", 0..<100), ("bytes=-0", 0..<100), ("bytes=x-y", 0..<100)])
    func aRangeIsReadAlone(header: String, expected: Range<Int>) async throws {
        let body = Data((0..<100).map { UInt8($0) })
        let url = try write(body, named: "ranged-\(UUID().uuidString.prefix(6)).bin")
        var request = URLRequest(url: url)
        request.setValue(header, forHTTPHeaderField: "Range")
        let (data, response) = try await FileDataLoader(chunkSize: 7).data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        #expect(data == body[expected])
        #expect(http.value(forHTTPHeaderField: "Content-Length") == String(expected.count))
        if expected.count < 100 {
            #expect(http.statusCode == 206)
            #expect(http.value(forHTTPHeaderField: "Content-Range") == "bytes \(expected.lowerBound)-\(expected.upperBound - 1)/100")
        } else {
            #expect(http.statusCode == 200)
            #expect(http.value(forHTTPHeaderField: "Content-Range") == nil)
        }
    }

    @Test func emptyFileLoadsAsEmptyData() async throws {
        let url = try write(Data(), named: "empty.png")
        let (data, _) = try await FileDataLoader().data(for: URLRequest(url: url))
        #expect(data.isEmpty)
    }

    @Test func missingFileFailsAsUnreadableWithTheSystemError() async throws {
        let url = directory.appendingPathComponent("missing.png")
        let error = try await #require(throws: DataLoadingError.self) { try await FileDataLoader().data(for: URLRequest(url: url)) }
        #expect(error.code == .fileUnreadable)
        #expect(error.url == url)
        #expect(error.underlying != nil)
    }

    @Test func directoryFailsAsUnreadable() async throws {
        let error = try await #require(throws: DataLoadingError.self) { try await FileDataLoader().data(for: URLRequest(url: directory)) }
        #expect(error.code == .fileUnreadable)
    }

    @Test func fileOverTheLimitFailsBeforeReading() async throws {
        let url = try write(Data(count: 101), named: "big.bin")
        let error = try await #require(throws: DataLoadingError.self) {
            try await FileDataLoader(maximumResponseSize: 100).data(for: URLRequest(url: url))
        }
        #expect(error.code == .responseTooLarge)
    }

    /// A FIFO would block `open` until a writer came, and a device would
    /// be read without end (its size says 0): neither is a source.
    @Test func onlyRegularFilesAreReadAndAFIFODoesNotBlock() async throws {
        let fifo = directory.appendingPathComponent("pipe")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        var specials = [fifo]
        #if os(Linux)
        specials.append(URL(fileURLWithPath: "/dev/zero"))
        #endif
        for url in specials {
            let error = try await #require(throws: DataLoadingError.self) { try await FileDataLoader().data(for: URLRequest(url: url)) }
            #expect(error.code == .fileUnreadable, "\(url.path)")
            #expect(error.message.contains("not a regular file"), "\(error.message)")
        }
    }

    /// The limit counts the bytes read, not the size `fstat` gave at open.
    @Test func aFileThatGrowsPastTheLimitWhileReadFails() async throws {
        let url = try write(Data(count: 50), named: "growing.bin")
        let loaded = try await FileDataLoader(maximumResponseSize: 100, chunkSize: 40).load(URLRequest(url: url))
        let error = try await #require(throws: DataLoadingError.self) {
            var received = 0
            for try await chunk in loaded.body {
                if received == 0 {
                    let handle = try FileHandle(forWritingTo: url)
                    try handle.seekToEnd()
                    try handle.write(contentsOf: Data(count: 500))
                    try handle.close()
                }
                received += chunk.count
            }
        }
        #expect(error.code == .responseTooLarge)
    }

    @Test func anOpenDescriptorIsCheckedAndReadTheSameWay() async throws {
        let url = try write(Data([1, 2, 3]), named: "open.bin")
        let descriptor = open(url.path, O_RDONLY)
        #expect(descriptor >= 0)
        let (data, _) = try await FileDataLoader().data(for: descriptor, url: url)
        #expect(data == Data([1, 2, 3]))
        let folder = open(directory.path, O_RDONLY)
        let error = try await #require(throws: DataLoadingError.self) {
            try await FileDataLoader().load(descriptor: folder, for: self.directory)
        }
        #expect(error.code == .fileUnreadable)
    }

    @Test func nonFileURLFailsAsUnsupportedScheme() async throws {
        let error = try await #require(throws: DataLoadingError.self) { try await FileDataLoader().data(for: URLRequest(url: exampleURL)) }
        #expect(error.code == .unsupportedScheme)
    }

    @Test func aCancelledReaderStopsBetweenChunks() async throws {
        let url = try write(Data(count: 10), named: "a.bin")
        let read = Task {
            let loaded = try await FileDataLoader(chunkSize: 4).load(URLRequest(url: url))
            var received = 0
            for try await chunk in loaded.body {
                received += chunk.count
                withUnsafeCurrentTask { $0?.cancel() }
            }
            return received
        }
        #expect(try await read.value == 4)
    }

    @Test func networkClientDecodesFileURLsWithoutAStatus() async throws {
        let url = try write(TestImages.pngSignature, named: "cat.png")
        let decoder = MockImageDecoder()
        let client = NetworkClient(loader: DataLoader(network: MockDataLoader()), imageDecoder: decoder)
        _ = try await client.image(for: URLRequest(url: url))
        #expect(decoder.calls.map(\.data) == [TestImages.pngSignature])
    }
}

@Suite struct DataLoaderTests {
    @Test func routesHTTPAndHTTPSToTheNetworkLoader() async throws {
        let network = MockDataLoader()
        let loader = DataLoader(network: network, file: MockDataLoader())
        for string in ["http://a.example/x.png", "HTTPS://a.example/y.png"] {
            network.stub(string, .image(TestImages.pngSignature))
            _ = try await loader.data(for: URLRequest(url: URL(string: string)!))
        }
        #expect(network.requests.count == 2)
    }

    @Test func routesFileURLsToTheFileLoader() async throws {
        let file = MockDataLoader()
        let url = URL(fileURLWithPath: "/images/cat.png")
        file.stub(url, .image(TestImages.pngSignature))
        _ = try await DataLoader(network: MockDataLoader(), file: file).data(for: URLRequest(url: url))
        #expect(file.requests.map(\.url) == [url])
    }

    @Test(arguments: ["ftp://a.example/x.png", "data:image/png;base64,AAAA", "mailto:a@example.com"])
    func otherSchemesFailAsUnsupported(string: String) async throws {
        let error = try await #require(throws: DataLoadingError.self) {
            try await DataLoader(network: MockDataLoader(), file: MockDataLoader()).data(for: URLRequest(url: URL(string: string)!))
        }
        #expect(error.code == .unsupportedScheme)
    }
}
